"""How a reviewer reads the comment: the answer first, the method one click away.

"Visible" is what GitHub shows before anything is expanded: the text outside ``<details>`` blocks
(a block's ``<summary>`` line is visible). "Caveats" are the visible paragraphs that qualify the
answer rather than give it: notes (``- `` bullets, ``> `` quotes, ``⚠`` lines) and small print
(``<sub>``), except the one line of context under the verdict.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLE, ROOT, SWEBENCH, run
from generators import DROPPING, swebench_with_a_drop

from leaderboard.cli import main as cli_main
from leaderboard.pipeline import Options
from leaderboard.pipeline import run as pipeline_run
from leaderboard.report.document import COMMENT_LIMIT, comment_body, comment_length
from leaderboard.report.plain import plain_text
from leaderboard.report.plan import Compared, plan

AGENT = ROOT / "examples" / "agent-suite"
METHOD_TERMS = (
    "Holm",
    "step-down",
    "sign flip",
    "sign-flip",
    "McNemar",
    "Wilson",
    "CR2",
    "Bell–McCaffrey",
    "Bell-McCaffrey",
    "effective df",
    "normal approximation",
    "normal-approximation",
    "median spread",
    "math.isclose",
    "bootstrap",
    "permutation",
)


def visible(body: str) -> str:
    """The body as first shown: every ``<details>`` block reduced to its summary line; no HTML comment."""
    body = re.sub(r"<!--.*?-->", "", body, flags=re.S)
    while "<details>" in body:
        body = re.sub(
            r"<details><summary>(.*?)</summary>(?:(?!<details>).)*?</details>", r"\1", body, count=1, flags=re.S
        )
    return body


def words(text: str) -> int:
    return len(re.findall(r"[^\s|:\-]+", re.sub(r"<[^>]+>", " ", text)))


def caveat_share(body: str) -> tuple[int, int]:
    """(caveat words, visible words) of a body."""
    shown = visible(body)
    paragraphs = [p for p in shown.split("\n\n") if p.strip()]
    context = next((p for p in paragraphs if p.startswith("<sub>") and " × " in p), None)
    caveats = [p for p in paragraphs if p is not context and (p.startswith(("- ", "> ", "⚠", "<sub>")) or "\n- " in p)]
    # A warning joined to the verdict's paragraph is a caveat too.
    joined = sum(words(p[p.index(" ⚠") :]) for p in paragraphs if " ⚠" in p and p not in caveats)
    return sum(words(p) for p in caveats) + joined, sum(words(p) for p in paragraphs)


def cases(tmp: Path) -> dict[str, list[str]]:
    return {
        "example": [str(EXAMPLE)],
        "swebench": [str(SWEBENCH)],
        "regression-gate": [
            str(swebench_with_a_drop(SWEBENCH, tmp / "head.jsonl")), "--baseline", str(SWEBENCH),
            "--fail-on-regression",
        ],
        "green-gate": [str(SWEBENCH), "--baseline", str(SWEBENCH), "--fail-on-regression"],
        "required": [str(EXAMPLE), "--required-tasks", "ArguAna,STS1*", "--required-score", "0.6"],
        "composite": [str(AGENT / "runs.jsonl"), "--config", str(AGENT / "leaderboard.yml")],
        "cluster-category": [str(EXAMPLE), "--cluster-by", "category"],
    }  # fmt: skip


@pytest.fixture(scope="module")
def comments(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, int]]:
    if not SWEBENCH.exists():
        pytest.skip("../shared is not beside the repository")
    tmp = tmp_path_factory.mktemp("reading")
    out: dict[str, tuple[str, int]] = {}
    for name, args in cases(tmp).items():
        path = tmp / f"{name}.md"
        done = subprocess.run(
            [sys.executable, "-m", "leaderboard", *args, "--comment", str(path)], capture_output=True, text=True,
            cwd=ROOT, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        assert done.returncode in (0, 1), done.stderr
        out[name] = (path.read_text(), done.returncode)
    return out


def first_line(body: str) -> str:
    return next(p for p in visible(body).split("\n\n") if p.strip() and not p.startswith("## "))


def test_a_failing_gate_says_so_first_naming_the_model_its_change_and_its_newly_failing_tasks(
    comments: dict[str, tuple[str, int]],
) -> None:
    body, code = comments["regression-gate"]
    assert code == 1
    assert first_line(body) == (
        f"❌ **1 regression** — this check fails: `{DROPPING}` −3.0 pts (15 newly failing of 500)."
    )


def test_a_passing_gate_says_so_first(comments: dict[str, tuple[str, int]]) -> None:
    body, code = comments["green-gate"]
    assert code == 0
    assert first_line(body) == "✅ **No regressions** across 12 models (every score the same) — this check passes."


def test_failing_required_tasks_come_first(comments: dict[str, tuple[str, int]]) -> None:
    body, code = comments["required"]
    assert code == 1 and first_line(body) == "❌ **4 required-task failures** in 4 models — this check fails."


def test_without_a_baseline_the_verdict_comes_first(comments: dict[str, tuple[str, int]]) -> None:
    assert first_line(comments["example"][0]).startswith("**`Qwen/Qwen3-Embedding-0.6B` is best**")


@pytest.mark.parametrize(
    "case", ["example", "swebench", "regression-gate", "green-gate", "required", "composite", "cluster-category"]
)
def test_caveats_are_at_most_a_quarter_of_the_visible_words(comments: dict[str, tuple[str, int]], case: str) -> None:
    caveats, total = caveat_share(comments[case][0])
    assert caveats * 4 <= total, (caveats, total)


@pytest.mark.parametrize(
    "case", ["example", "swebench", "regression-gate", "green-gate", "required", "composite", "cluster-category"]
)
def test_no_method_term_is_visible_and_the_method_is_one_collapsed_block(
    comments: dict[str, tuple[str, int]], case: str
) -> None:
    body = comments[case][0]
    shown = visible(body)
    assert [t for t in METHOD_TERMS if t.lower() in shown.lower()] == []
    assert body.count("<details><summary>How to read this</summary>") == 1


@pytest.mark.parametrize(
    "case", ["example", "swebench", "regression-gate", "green-gate", "required", "composite", "cluster-category"]
)
def test_no_document_says_how_many_tasks_would_tell(comments: dict[str, tuple[str, int]], case: str) -> None:
    body = comments[case][0]
    assert not re.search(r"would (tell|separate|detect)", body), case
    assert " over the 0 " not in body


def test_unchanged_models_are_counted_and_their_rows_collapsed(comments: dict[str, tuple[str, int]]) -> None:
    body = comments["regression-gate"][0]
    shown = visible(body)
    assert "= unchanged" not in shown and "11 models with no detectable change" in shown
    assert body.count("= unchanged") == 11  # in the collapsed block


def test_categories_are_rows_never_columns(comments: dict[str, tuple[str, int]]) -> None:
    body = comments["regression-gate"][0]
    block = body.split("<summary>Δ by category")[1].split("</details>")[0]
    header = next(line for line in block.splitlines() if line.startswith("| Model"))
    assert header == "| Model | Category | Δ (pts) | Shared tasks |"
    assert f"| `{DROPPING}` | `astropy/astropy` | −50.0 | 22 |" in block


def test_no_interval_contradicts_the_verdict_beside_it_and_none_is_marked(comments: dict[str, tuple[str, int]]) -> None:
    for body, _ in comments.values():
        assert "†" not in body and "the test did not confirm it" not in body
    swebench = comments["swebench"][0]
    # Pairs Holm did not separate whose interval alone excluded 0 now reach 0; a separated pair never shows an end of 0.
    unconfirmed = [line for line in swebench.splitlines() if "| no: Holm-adjusted p" in line]
    assert unconfirmed and all(re.search(r"\[0\.0,\u00a0\+\d+\.\d\]", line) for line in unconfirmed)
    separated = [line for line in swebench.splitlines() if "✓ yes" in line]
    assert separated and not any(re.search(r"\[0\.0,", line) for line in separated)


def test_the_green_case_is_at_most_five_visible_lines_above_the_leaderboard(
    comments: dict[str, tuple[str, int]],
) -> None:
    shown = visible(comments["green-gate"][0])
    above = shown[: shown.index("| Rank |")]
    lines = [line for line in above.splitlines() if line.strip()]
    assert len(lines) <= 5, lines


def test_the_verdict_gap_says_it_is_on_the_shared_tasks(comments: dict[str, tuple[str, int]]) -> None:
    assert "by +3.2 pts on the 40 tasks both ran (95% CI [+1.1," in comments["example"][0]


def test_related_tasks_that_would_change_the_claims_are_said_in_the_answer() -> None:
    # A's lead over B comes category by category: within a category the tasks move together, and two
    # of the eight categories go the other way.
    rng = np.random.default_rng(3)
    shifts = [0.10, 0.08, 0.12, 0.09, -0.08, 0.11, -0.06, 0.07]
    records = []
    for g, shift in enumerate(shifts):
        for t in range(8):
            base = float(np.clip(0.5 + 0.1 * rng.standard_normal(), 0.1, 0.8))
            a = base + shift + 0.005 * rng.standard_normal()
            records += [run("A", f"c{g}-t{t}", a, f"c{g}"), run("B", f"c{g}-t{t}", base, f"c{g}")]
    outcome = pipeline_run(Options(b=400), records)
    check = outcome.board.cluster_check
    assert check is not None and check.claims_differ and check.difference_design_effect >= 2.0
    sections = plan(outcome)
    body = comment_body(
        outcome.board, key="k", title="Evals", run_url=None, sections=sections.comment,
        framing=sections.framing,
    ).text  # fmt: skip
    assert "⚠ Tasks in a category move together" in first_line(body)


def test_categories_that_only_cost_resolution_raise_no_warning_in_the_answer(
    comments: dict[str, tuple[str, int]],
) -> None:
    # The example's per-task differences barely correlate within categories: the claims stand, and the
    # method block says what clustering would change and why it is not the honest reading here.
    body = comments["example"][0]
    assert first_line(body).startswith("**`Qwen/Qwen3-Embedding-0.6B` is best**")
    assert "⚠" not in first_line(body)
    assert "**Clustered by category**" in body.split("How to read this", 1)[1]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_cli_prints_plain_text_to_a_terminal_and_markdown_when_piped(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    assert cli_main([str(EXAMPLE)]) == 0
    text = terminal.getvalue()
    assert not re.search(r"</?[a-z]+[^>]*>", text) and "**" not in text and "`" not in text
    assert text.startswith("Qwen/Qwen3-Embedding-0.6B is best")
    assert "▸ How to read this" in text
    monkeypatch.undo()
    assert cli_main([str(EXAMPLE)]) == 0
    piped = capsys.readouterr().out
    assert piped.startswith("**`Qwen/Qwen3-Embedding-0.6B` is best**") and "<details>" in piped


def test_the_plain_view_lines_up_table_columns() -> None:
    text = plain_text("| A | Bb |\n|:--|--:|\n| `x` | 1 |\n| `long` | 22 |\n")
    assert text == "A     Bb\n----  --\nx     1\nlong  22\n"


def test_500_models_fit_one_comment_with_the_outcome_the_top_group_and_every_changed_model() -> None:
    rng = np.random.default_rng(3)
    scores = rng.uniform(0.2, 0.8, (500, 30))
    ids = [f"organisation-{m:03d}/" + "model-family-name-" * 2 + f"{m:03d}" for m in range(500)]
    base = [run(ids[m], f"task-{t:02d}", float(scores[m, t]), f"c{t % 6}") for m in range(500) for t in range(30)]
    moved = scores.copy()
    moved[:40] -= 0.05
    pr = [run(ids[m], f"task-{t:02d}", float(moved[m, t]), f"c{t % 6}") for m in range(500) for t in range(30)]
    outcome = pipeline_run(Options(b=400, fail_on_regression=True), pr, baseline=base)
    sections = plan(outcome, baseline=Compared("**Baseline:** `main`."))
    body = comment_body(
        outcome.board, key="k", title="Evals", run_url=None, sections=sections.comment,
        framing=sections.framing,
    ).text  # fmt: skip
    assert comment_length(body) <= COMMENT_LIMIT
    assert first_line(body).startswith("❌ **40 regressions** — this check fails: ")
    assert "statistically tied for first" in body or "is best" in body
    changed = body.split("<details>")[0]
    assert changed.count("| ❌ **regressed** |") == 40  # every regressed model, in the open
    assert "Not shown here" in body and "`leaderboard.md`" in body


def test_scores_in_0_1_read_as_percent_and_differences_as_points(comments: dict[str, tuple[str, int]]) -> None:
    body = comments["regression-gate"][0]
    assert f"| `{DROPPING}` | 74.4% | 71.4% | −3.0 [−4.4,\u00a0−1.8] | ❌ **regressed** | 500 |" in body
    assert "| 1–3 | `20251118_mini-v….0_gemini-3-pro-preview-20251118` | 74.2% | [70.0,\u00a078.0] |" in body


def test_score_format_fraction_keeps_fractions_and_the_json_report_is_fractions_either_way(tmp_path: Path) -> None:
    out = {}
    for fmt in ("percent", "fraction"):
        report = tmp_path / f"{fmt}.json"
        done = subprocess.run(
            [sys.executable, "-m", "leaderboard", str(EXAMPLE), "--score-format", fmt, "--json", str(report)],
            capture_output=True, text=True, cwd=ROOT, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        out[fmt] = (done.stdout, report.read_text())
    assert "| 1 | `Qwen/Qwen3-Embedding-0.6B` | 70.5% | [63.5,\u00a076.9] |" in out["percent"][0]
    assert "| 1 | `Qwen/Qwen3-Embedding-0.6B` | 0.705 | [0.635,\u00a00.769] |" in out["fraction"][0]
    assert out["percent"][1] == out["fraction"][1]
