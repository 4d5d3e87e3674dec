"""End to end: ``entrypoint.py`` with a baseline artifact that has flips (fake GitHub), and required tasks."""

from __future__ import annotations

import json
from pathlib import Path

from fakegithub import FakeGitHub
from test_action import assert_no_secret, run_action
from test_archive import make_zip
from test_baseline import BASE, HEAD, MERGE_BASE, ago, run_with_artifact, workspace  # noqa: F401

TASKS = 40
CATEGORIES = ("astropy", "django", "sympy")


def records(scores: dict[str, list[float]], trials: dict[tuple[str, int], list[float]] | None = None) -> str:
    lines = []
    for model, values in scores.items():
        for k, score in enumerate(values):
            base = {"model_id": model, "task_id": f"{CATEGORIES[k % 3]}__{k:03d}", "metric_name": "resolved",
                    "category": CATEGORIES[k % 3]}  # fmt: skip
            several = (trials or {}).get((model, k))
            if several:
                lines += [json.dumps({**base, "score": s, "trial": t}) for t, s in enumerate(several)]
            else:
                lines.append(json.dumps({**base, "score": score}))
    return "\n".join(lines) + "\n"


PASSING = [1.0 if k % 2 == 0 else 0.0 for k in range(TASKS)]
# "org/regressed" loses 12 tasks and gains 1; "org/improved" gains 10; "org/same" does not move.
REGRESSED = [0.0 if k % 2 == 0 and k < 24 else s for k, s in enumerate(PASSING)]
REGRESSED[1] = 1.0
IMPROVED = [1.0 if k % 2 == 1 and k < 20 else s for k, s in enumerate(PASSING)]
BASELINE = {"org/regressed": PASSING, "org/improved": PASSING, "org/same": PASSING}
THIS_RUN = {"org/regressed": REGRESSED, "org/improved": IMPROVED, "org/same": PASSING}


def with_flips(ws: Path, fake: FakeGitHub, **inputs: str):  # type: ignore[no-untyped-def]
    # Task 0 of the regressed model was run three times on the PR, passing once: a flaky flip.
    fake.merge_bases[(BASE, HEAD)] = MERGE_BASE
    zipped = make_zip({"results/swe.jsonl": records(BASELINE)})
    fake.add_run(MERGE_BASE, created_at=ago(1), artifacts={"eval-results": zipped})
    (ws / "results" / "mteb.jsonl").write_text(records(THIS_RUN, {("org/regressed", 0): [0.0, 1.0, 0.0]}))
    return run_with_artifact(ws, fake, **inputs)


def test_the_comment_shows_which_tasks_moved_per_model_regressed_first(
    workspace: Path,  # noqa: F811
    fake_github: FakeGitHub,
) -> None:
    result = with_flips(workspace, fake_github)
    assert result.code == 0, result.stdout + result.stderr
    (comment,) = fake_github.thread()
    body = comment["body"]
    section = body[body.index("#### Which tasks moved") : body.index("| Rank | Model |")]
    assert body.index("### Compared with the base branch") < body.index("#### Which tasks moved")
    regressed = section.index(
        "<details><summary><code>org/regressed</code> ❌ regressed: 12 newly failing, 1 newly passing of 40 shared "
        "tasks; 1 of the 13 flip between trials</summary>"
    )
    improved = section.index("<code>org/improved</code> ✅ improved: 0 newly failing, 10 newly passing of 40 shared")
    assert regressed < improved and "org/same" not in section
    assert (
        "- `astropy` (4): `astropy__000` ↻ (1.000 → 0.333), `astropy__006`, `astropy__012`, `astropy__018`" in section
    )
    out = result.outputs
    assert json.loads(out["newly-failing"]) == {"org/improved": 0, "org/regressed": 12, "org/same": 0}
    assert (out["required-failures"], out["required-failed"]) == ("0", "[]")
    report = json.loads((workspace / out["report"]).read_text())
    moved = {m["model_id"]: m for m in report["baseline"]["task_changes"]["models"]}
    # Largest drop first: the flaky task fell by 2/3 only, so it comes last.
    dropped = moved["org/regressed"]["dropped"]
    assert len(dropped) == 12 and dropped[0][4] == -1.0 and dropped[-1][:2] == ["astropy__000", "astropy"]
    assert dropped[-1][5] is True and dropped[0][5] is False
    assert moved["org/regressed"]["flaky"] == 1 and moved["org/same"]["dropped"] == []
    assert "#### Which tasks moved" in result.summary
    assert "`sympy__020`" in (workspace / out["markdown"]).read_text()
    assert "  tasks of org/regressed: 12 newly failing, 1 newly passing of 40 shared tasks" in result.stdout
    assert_no_secret(result)


def test_required_task_failures_are_listed_first_and_fail_the_step_after_the_comment(
    workspace: Path,  # noqa: F811
    fake_github: FakeGitHub,
) -> None:
    result = with_flips(workspace, fake_github, required_tasks="astropy__000,\ndjango__004", required_score="1")
    assert result.code == 1, result.stdout
    body = fake_github.thread()[0]["body"]
    # The outcome first: the failures, then the regression; the rule and the table before the comparison.
    first = body.split("\n\n")[2]
    assert first.startswith("❌ **2 required-task failures** in 1 model — this check fails.<br>❌ **1 regression**")
    assert body.index("**Required tasks**: every model") < body.index("### Compared with the base branch")
    assert "| `org/regressed` | `astropy__000` | 0.333 |" in body and "| `org/regressed` | `django__004` | 0 |" in body
    errors = [a for a in result.annotations if a.startswith("::error")]
    assert errors == [
        "::error title=Required task failed::org/regressed on required task astropy__000: score 0.333333, below "
        "the required 1",
        "::error title=Required task failed::org/regressed on required task django__004: score 0, below the required 1",
    ]
    assert result.stdout.index("Created leaderboard comment") < result.stdout.index("::error title=Required task")
    assert result.outputs["required-failures"] == "2"
    assert json.loads(result.outputs["required-failed"]) == [
        {"model": "org/regressed", "task": "astropy__000", "score": 1 / 3},
        {"model": "org/regressed", "task": "django__004", "score": 0.0},
    ]
    report = json.loads((workspace / result.outputs["report"]).read_text())
    assert report["required"]["tasks"] == ["astropy__000", "django__004"] and report["required"]["failures"] == 2


def test_required_tasks_work_without_a_baseline(workspace: Path, fake_github: FakeGitHub) -> None:  # noqa: F811
    (workspace / "results" / "mteb.jsonl").write_text(records({"a": [1.0] * 6, "b": [1.0] * 5 + [0.0]}))
    result = run_action(workspace, fake_github.url, required_tasks="*__005")
    assert result.code == 1, result.stdout
    assert "| `b` | `sympy__005` | 0 |" in fake_github.thread()[0]["body"]
    assert result.outputs["newly-failing"] == "{}"
    passing = run_action(workspace, fake_github.url, required_tasks="*__004")
    assert passing.code == 0, passing.stdout
    assert "✅ **Required tasks**: all 2 models pass" in fake_github.thread()[0]["body"]


def test_thousands_of_required_patterns_leave_the_failures_and_the_leaderboard_in_the_comment(
    workspace: Path,  # noqa: F811
    fake_github: FakeGitHub,
) -> None:
    n = 4_000
    (workspace / "results" / "mteb.jsonl").write_text(records({"a": [1.0] * n, "b": [0.0] + [1.0] * (n - 1)}))
    patterns = ",".join(f"{CATEGORIES[k % 3]}__{k:03d}" for k in range(n))
    result = run_action(workspace, fake_github.url, required_tasks=patterns)
    assert result.code == 1, result.stdout
    body = fake_github.thread()[0]["body"]
    assert "**1 required-task failure** in 1 model" in body and "| `b` | `astropy__000` | 0 |" in body
    assert f"and {n - 10:,} more patterns" in body and "| Rank | Model | Mean |" in body


def test_a_required_task_a_model_did_not_run_fails_it(workspace: Path, fake_github: FakeGitHub) -> None:  # noqa: F811
    (workspace / "results" / "mteb.jsonl").write_text(records({"a": [1.0] * 6, "b": [1.0] * 4}))
    result = run_action(workspace, fake_github.url, required_tasks="django__004")
    assert result.code == 1
    assert json.loads(result.outputs["required-failed"]) == [{"model": "b", "task": "django__004", "score": None}]
    assert "not run" in fake_github.thread()[0]["body"]


def test_a_required_pattern_matching_no_task_is_an_error_naming_it(
    workspace: Path,  # noqa: F811
    fake_github: FakeGitHub,
) -> None:
    (workspace / "results" / "mteb.jsonl").write_text(records({"a": [1.0] * 6}))
    result = run_action(workspace, fake_github.url, required_tasks="astropy__*, safety/*")
    assert result.code == 1
    assert "input 'required-tasks': the pattern 'safety/*' matches no task in the runs" in result.stdout
    assert "::error" in result.stdout and "Traceback" not in result.stderr
    assert "1 problem(s) in the input 'required-tasks':" in result.stdout
    assert fake_github.thread() == []  # a rejected run posts no new leaderboard


def test_an_invalid_required_score_names_the_input(workspace: Path, fake_github: FakeGitHub) -> None:  # noqa: F811
    result = run_action(workspace, fake_github.url, required_tasks="x", required_score="1.5")
    assert result.code == 1
    assert "input 'required-score' must be a number from 0 to 1" in result.stdout
