"""Which tasks moved: each model's flips, drops and gains against its baseline, and how they are shown."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from leaderboard import EvalRun
from leaderboard.cli import main as cli_main
from leaderboard.report.document import COMMENT_LIMIT, comment_body, comment_length
from leaderboard.report.json_report import render_json
from leaderboard.report.task_changes import (
    COMMENT,
    COMMENT_SECTION_LIMIT,
    comment_section,
    counts_text,
    full_section,
    html_code,
    model_block,
    newly_failing,
    summary_section,
    task_changes_dict,
)
from leaderboard.stats.analysis import analyse
from leaderboard.stats.comparison import compare
from leaderboard.stats.task_changes import task_changes


def run(model: str, task: str, score: float | None, category: str = "general", **extra: object) -> EvalRun:
    return EvalRun(model, task, "acc", score, category=category, **extra)  # type: ignore[arg-type]


def binary(model: str, passing: set[int], n: int = 20, category: str = "general") -> list[EvalRun]:
    return [run(model, f"t{k:02d}", 1.0 if k in passing else 0.0, category) for k in range(n)]


def compared(base: list[EvalRun], pr: list[EvalRun]):  # type: ignore[no-untyped-def]
    return compare(base, pr, b=400, alpha=0.05, seed=0), task_changes(base, pr)


def test_a_model_sharing_no_task_with_its_baseline_is_said_not_compared_not_unchanged() -> None:
    base, pr = binary("m", {1}, n=4), [run("m", f"u{k}", 1.0) for k in range(4)]
    comparison, changes = compared(base, pr)
    block = model_block(changes.of("m"), comparison.models[0], COMMENT, "elsewhere")
    assert "➖ not compared: no shared task; 4 only in this run" in block and "no detectable change" not in block


# --- the computation ------------------------------------------------------------------------------------


def test_a_task_passing_on_the_base_and_failing_here_is_newly_failing() -> None:
    changes = task_changes(binary("m", {1, 2, 3}), binary("m", {1, 2}))
    m = changes.of("m")
    assert m.binary and m.drops.task_ids == ("t03",) and m.gains.task_ids == ()
    assert (m.drops.base, m.drops.pr) == ((1.0,), (0.0,))


def test_a_task_failing_on_the_base_and_passing_here_is_newly_passing() -> None:
    m = task_changes(binary("m", {1}), binary("m", {1, 7, 4})).of("m")
    assert m.gains.task_ids == ("t04", "t07") and m.drops.task_ids == ()


def test_counts_come_first_newly_failing_and_passing_of_the_shared_tasks() -> None:
    m = task_changes(binary("m", set(range(12)), n=500), binary("m", set(range(12, 17)), n=500)).of("m")
    assert counts_text(m) == "12 newly failing, 5 newly passing of 500 shared tasks"


def test_continuous_drops_and_gains_are_ordered_largest_first_with_base_and_pr_values() -> None:
    base = [run("m", f"t{k}", 0.5) for k in range(6)]
    pr = [run("m", "t0", 0.1), run("m", "t1", 0.4), run("m", "t2", 0.9), run("m", "t3", 0.6), *base[4:]]
    m = task_changes(base, pr).of("m")
    assert not m.binary
    assert m.drops.task_ids == ("t0", "t1") and m.drops.pr == (0.1, 0.4)
    assert m.gains.task_ids == ("t2", "t3") and m.gains.base == (0.5, 0.5)
    assert counts_text(m) == "2 lower, 2 higher of 6 shared tasks"


def test_a_change_within_the_tie_rule_is_not_a_move() -> None:
    base = [run("m", "a", 0.3), run("m", "b", 0.7)]
    pr = [run("m", "a", 0.1 + 0.2), run("m", "b", 0.7 * (1 + 1e-12))]  # 0.30000000000000004
    m = task_changes(base, pr).of("m")
    assert m.moved == 0 and not m.changed


def test_tasks_on_one_side_only_are_named_per_model() -> None:
    base = [run("m", "kept", 1.0), run("m", "old", 1.0), run("other", "old", 1.0)]
    pr = [run("m", "kept", 1.0), run("m", "new", 0.0), run("other", "old", 1.0)]
    changes = task_changes(base, pr)
    assert (changes.of("m").only_run, changes.of("m").only_baseline) == (("new",), ("old",))
    assert not changes.of("other").changed


def test_a_model_on_one_side_only_has_no_task_changes() -> None:
    changes = task_changes([run("gone", "t", 1.0), run("m", "t", 1.0)], [run("new", "t", 1.0), run("m", "t", 0.0)])
    assert [m.model_id for m in changes.models] == ["m"]


def test_without_trials_nothing_is_claimed_about_flakiness() -> None:
    m = task_changes(binary("m", {1, 2}), binary("m", {1})).of("m")
    assert not m.trials and m.flaky_count is None and m.drops.flaky is None
    assert "trials" not in counts_text(m)


def test_a_flip_whose_trials_disagree_on_either_side_is_flaky_and_counted_apart() -> None:
    base, pr = [], []
    for k in range(12):
        for trial in range(3):
            base.append(run("m", f"t{k:02d}", 1.0, trial=trial))
            # Tasks 0-2 fail in one trial of three on the PR (flaky); 3-11 fail in all three (a real flip).
            pr.append(run("m", f"t{k:02d}", 0.0 if k >= 3 or trial == 0 else 1.0, trial=trial))
    m = task_changes(base, pr).of("m")
    assert m.binary and m.trials and len(m.drops) == 12
    assert m.flaky_count == 3
    flaky = dict(zip(m.drops.task_ids, m.drops.flaky or (), strict=True))
    assert [t for t, f in flaky.items() if f] == ["t00", "t01", "t02"]
    assert counts_text(m) == "12 newly failing, 0 newly passing of 12 shared tasks; 3 of the 12 flip between trials"


def test_trials_that_disagree_on_the_base_only_also_make_the_flip_flaky() -> None:
    base = [run("m", "t", 1.0, trial=0), run("m", "t", 0.0, trial=1), run("m", "u", 1.0, trial=0)]
    pr = [run("m", "t", 0.0), run("m", "u", 0.0)]
    m = task_changes(base, pr).of("m")
    assert dict(zip(m.drops.task_ids, m.drops.flaky or (), strict=True)) == {"t": True, "u": False}


def test_failed_calls_are_left_out_like_the_leaderboard() -> None:
    base = [run("m", "t", 1.0), run("m", "u", 1.0)]
    pr = [run("m", "t", None, error="timeout"), run("m", "u", 1.0)]
    m = task_changes(base, pr).of("m")
    assert m.n_shared == 1 and m.only_baseline == ("t",) and m.moved == 0


def test_shared_counts_agree_with_the_comparison() -> None:
    rng = random.Random(3)
    base = [run(f"m{i}", f"t{k}", rng.choice([0.0, 1.0])) for i in range(4) for k in range(40) if rng.random() < 0.9]
    pr = [run(f"m{i}", f"t{k}", rng.choice([0.0, 1.0])) for i in range(4) for k in range(40) if rng.random() < 0.9]
    comparison, changes = compared(base, pr)
    assert [m.n_shared for m in changes.models] == [m.n_shared for m in comparison.models]


def test_the_result_does_not_depend_on_record_order() -> None:
    base = [run("m", f"t{k}", 1.0, trial=t) for k in range(10) for t in range(2)]
    pr = [run("m", f"t{k}", float((k + t) % 2), trial=t) for k in range(10) for t in range(2)]
    shuffled_base, shuffled_pr = base[:], pr[:]
    random.Random(1).shuffle(shuffled_base)
    random.Random(2).shuffle(shuffled_pr)
    assert task_changes(base, pr) == task_changes(shuffled_base, shuffled_pr)


def test_newly_failing_counts_every_model_compared() -> None:
    changes = task_changes([*binary("a", {1, 2}), *binary("b", {1})], [*binary("a", {1}), *binary("b", {1})])
    assert newly_failing(changes) == {"a": 1, "b": 0}


# --- the section ------------------------------------------------------------------------------------------


def test_the_section_has_a_collapsed_block_per_changed_model_regressed_first() -> None:
    base = [*binary("good", set(range(5)), n=40), *binary("bad", set(range(30)), n=40), *binary("same", {1}, n=40)]
    pr = [*binary("good", set(range(25)), n=40), *binary("bad", set(range(3)), n=40), *binary("same", {1}, n=40)]
    comparison, changes = compared(base, pr)
    text = comment_section(changes, comparison)
    assert text.startswith("#### Which tasks moved")
    assert text.count("<details><summary>") == 2 and "<code>same</code>" not in text
    assert text.index("<code>bad</code> ❌ regressed: 27 newly failing") < text.index("<code>good</code> ✅ improved")


def test_ids_are_grouped_by_category_most_flips_first() -> None:
    base = [run("m", f"{c}-{k}", 1.0, c) for c in ("django", "flask") for k in range(4)]
    pr = [run("m", f"django-{k}", 0.0, "django") for k in range(4)] + [
        run("m", "flask-0", 0.0, "flask"),
        *[run("m", f"flask-{k}", 1.0, "flask") for k in range(1, 4)],
    ]
    comparison, changes = compared(base, pr)
    block = full_section(changes, comparison)
    assert "- `django` (4): `django-0`, `django-1`, `django-2`, `django-3`\n- `flask` (1): `flask-0`" in block


def test_the_comment_shows_the_ten_largest_moves_each_way_and_says_where_the_rest_are() -> None:
    base = [run("m", f"t{k:03d}", 0.5) for k in range(60)]
    pr = [run("m", f"t{k:03d}", 0.5 - (k + 1) / 200 if k < 30 else 0.5 + (k - 29) / 200) for k in range(60)]
    comparison, changes = compared(base, pr)
    text = comment_section(changes, comparison)
    assert "**Largest drops** (the 10 largest of 30)" in text and "**Largest gains** (the 10 largest of 30)" in text
    assert "| `t029` | `general` | 0.500 → 0.350 | −0.150 |" in text and "`t019`" not in text
    assert "…and 20 more: the job summary and `leaderboard.md`" in text
    full = full_section(changes, comparison)
    assert full.count("| `t0") == 60 and "more:" not in full


def test_a_tiny_move_is_shown_with_the_decimals_it_takes() -> None:
    comparison, changes = compared([run("m", "t", 0.5)], [run("m", "t", 0.5001)])
    assert "| `t` | `general` | 0.5000 → 0.5001 | +0.0001 |" in full_section(changes, comparison)


def test_the_comment_section_stays_within_its_share_with_50_models_and_thousands_of_flips() -> None:
    n = 2_000
    base = [run(f"org/model-{i:02d}", f"task-{k:05d}", 1.0 if k % 2 else 0.0) for i in range(50) for k in range(n)]
    pr = [run(f"org/model-{i:02d}", f"task-{k:05d}", 0.0 if k % 2 else 1.0) for i in range(50) for k in range(n)]
    comparison, changes = compared(base, pr)
    text = comment_section(changes, comparison)
    assert comment_length(text) <= COMMENT_SECTION_LIMIT
    assert "more models with task changes: the job summary and `leaderboard.md`" in text
    summary = summary_section(changes, comparison)
    assert len(summary.encode()) <= 192 * 1024
    written = render_json(analyse(pr, b=400, seed=0), baseline={"task_changes": task_changes_dict(changes)})
    report = json.loads(written)
    models = report["baseline"]["task_changes"]["models"]
    # One move a line.
    assert len(re.findall(r'^ +\["task-\d+", "general", [01]\.0, [01]\.0, -?1\.0, null\],?$', written, re.M)) == 50 * n
    assert sum(len(m["dropped"]) + len(m["gained"]) for m in models) == 50 * n
    body = comment_body(
        analyse(pr, b=400, seed=0), key="k", title="t", run_url=None, sections=[text]
    ).text  # the whole comment still fits
    assert comment_length(body) <= COMMENT_LIMIT


def test_the_json_report_has_every_move_with_base_pr_delta_and_flaky() -> None:
    base = [run("m", "t", 1.0, trial=0), run("m", "t", 0.0, trial=1), run("m", "u", 0.2)]
    pr = [run("m", "t", 0.0), run("m", "u", 0.2)]
    _, changes = compared(base, pr)
    report = json.loads(render_json(analyse(pr, b=400, seed=0), baseline={"task_changes": task_changes_dict(changes)}))
    assert report["schema_version"] == 3
    (m,) = report["baseline"]["task_changes"]["models"]
    assert m["scores"] == "continuous" and m["trials"] is True and m["flaky"] == 1
    assert report["baseline"]["task_changes"]["columns"] == ["task_id", "category", "base", "pr", "delta", "flaky"]
    assert m["dropped"] == [["t", "general", 0.5, 0.0, -0.5, True]]


HOSTILE = [
    "a|b",
    "`tick`",
    "``",
    "<img src=x onerror=alert(1)>",
    "@octocat",
    "line\nbreak",
    "rtl\u202eevil",
    "zero\u200bwidth",
    "#123",
    "</details><details open>",
    "**bold** [link](https://x.y)",
]


def gfm(markdown: str) -> str:
    """HTML as GitHub renders it: cmark-gfm with its extensions and the tag filter."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


@pytest.mark.parametrize("task", HOSTILE)
def test_hostile_task_ids_are_escaped_like_model_ids(task: str) -> None:
    base = [run("m", task, 1.0, category=f"c{task}"), run("m", "plain", 0.5), run("b", task, 1.0)]
    pr = [run("m", task, 0.0, category=f"c{task}"), run("m", "plain", 0.7), run("b", task, 0.0)]
    comparison, changes = compared(base, pr)
    html = gfm(full_section(changes, comparison))
    # No element, link or hidden character comes from the data; the blocks stay two.
    assert "<img" not in html and "<a " not in html and "<strong>bold" not in html
    assert "\u202e" not in html and "\u200b" not in html
    assert html.count("<details>") == 2 and html.count("</details>") == 2 and "<details open" not in html
    # Every table row keeps its four cells.
    for row in re.findall(r"<tr>(.*?)</tr>", html, flags=re.DOTALL):
        assert row.count("<td") + row.count("<th") == 4, row
    # Mentions and references only ever inside code.
    text_outside_code = re.sub(r"<code>.*?</code>", "", html, flags=re.DOTALL)
    assert "@octocat" not in text_outside_code and "#123" not in text_outside_code


def test_hostile_model_ids_are_escaped_in_the_html_summary() -> None:
    hostile = '<b onmouseover="x">@octo\u202e</b>'
    assert html_code(hostile) == "<code>&lt;b onmouseover=&quot;x&quot;&gt;@octo\\u202e&lt;/b&gt;</code>"
    m = task_changes(binary(hostile, {1}), binary(hostile, set())).of(hostile)
    assert "<code>&lt;b onmouseover" in model_block(m, None, COMMENT, "elsewhere")


def test_the_cli_prints_the_section_and_writes_every_move_in_the_json_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def write(name: str, runs: list[EvalRun]) -> str:
        rows = [{"model_id": r.model_id, "task_id": r.task_id, "metric_name": "acc", "score": r.score} for r in runs]
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
        return str(tmp_path / name)

    base, pr = write("base.jsonl", binary("m", set(range(10)))), write("pr.jsonl", binary("m", {0, 1, 15}))
    report = tmp_path / "r.json"
    assert cli_main([pr, "--baseline", base, "--json", str(report), "--comment", str(tmp_path / "c.md")]) == 0
    out = capsys.readouterr().out
    assert "#### Which tasks moved" in out and "8 newly failing, 1 newly passing of 20 shared tasks" in out
    assert "#### Which tasks moved" in (tmp_path / "c.md").read_text()
    (m,) = json.loads(report.read_text())["baseline"]["task_changes"]["models"]
    assert [row[0] for row in m["dropped"]] == [f"t{k:02d}" for k in range(2, 10)]
