"""A PR that renames its tasks: models in both runs that share no task with the baseline (issue 17)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run
from test_action import run_action

from leaderboard import EvalRun
from leaderboard.report.comparison import headline
from leaderboard.report.comparison_json import comparison_dict
from leaderboard.stats.comparison import compare


def suite(models: dict[str, float], prefix: str, tasks: int = 12) -> list[EvalRun]:
    return [run(m, f"{prefix}{t:02d}", min(1.0, s + 0.01 * t)) for m, s in models.items() for t in range(tasks)]


def test_when_every_task_is_renamed_the_headline_says_nothing_could_be_compared() -> None:
    c = compare(suite({"a": 0.4, "b": 0.6}, "old-"), suite({"a": 0.4, "b": 0.6}, "new-"), b=1000, alpha=0.05, seed=0)
    assert headline(c) == (
        "No task is in both the baseline and this run for any of the 2 models in both: nothing was compared."
    )
    counts = comparison_dict(c)["counts"]
    assert isinstance(counts, dict)
    assert (counts["compared"], counts["not_compared"], counts["no_detectable_change"]) == (0, 2, 0)


def test_a_model_sharing_no_task_is_counted_apart_from_those_compared() -> None:
    base = suite({"a": 0.5}, "t") + suite({"b": 0.5}, "old-")
    pr = suite({"a": 0.5}, "t") + suite({"b": 0.5}, "new-")
    c = compare(base, pr, b=1000, alpha=0.05, seed=0)
    assert headline(c) == "No detectable change in the one model (1 more not compared: no shared tasks)."
    counts = comparison_dict(c)["counts"]
    assert isinstance(counts, dict)
    assert (counts["compared"], counts["not_compared"], counts["unchanged"]) == (1, 1, 1)


def write(path: Path, runs: list[EvalRun]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(
            json.dumps({"model_id": r.model_id, "task_id": r.task_id, "metric_name": r.metric_name, "score": r.score})
            + "\n"
            for r in runs
        )
    )


def test_a_pr_renaming_every_task_says_so_in_the_comment_and_the_report(tmp_path: Path, fake_github) -> None:
    ws = tmp_path / "workspace"
    write(ws / "results" / "pr.jsonl", suite({"a": 0.4, "b": 0.6}, "renamed-"))
    write(ws / "baseline" / "main.jsonl", suite({"a": 0.4, "b": 0.6}, "task-"))

    result = run_action(ws, fake_github.url, runs="results/pr.jsonl", baseline="baseline/main.jsonl")

    assert result.code == 0, result.stdout
    body = fake_github.thread()[0]["body"]
    assert "nothing was compared" in body and "No detectable change in any of 2 models" not in body
    report = json.loads((ws / result.outputs["report"]).read_text())
    assert report["baseline"]["counts"]["compared"] == 0 and report["baseline"]["counts"]["not_compared"] == 2
