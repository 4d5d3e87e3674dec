"""Runs loaded as columns go through the comparison, the task changes and the documents without being turned
into records, and give exactly what the same runs as records give."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

from leaderboard import EvalRun, analyse, load_runs
from leaderboard.pipeline import Options, run
from leaderboard.report.markdown import _visible, md_code, visible
from leaderboard.report.task_changes import _plain_cells
from leaderboard.run_columns import RunColumns
from leaderboard.stats.comparison import compare
from leaderboard.stats.resampling import EXACT_LIMIT
from leaderboard.stats.task_changes import task_changes

pytest.importorskip("duckdb")


def suite(path: Path, shift: float, models: int = 3, tasks: int = 60, only: str = "") -> RunColumns:
    def record(m: int, t: int) -> str:
        task = f"task-{t:03d}{only if t % 7 == 0 else ''}"
        score = round(((m * 7 + t * 3) % 10) / 10 * (1 - shift) + shift * (t % 2), 3)
        return json.dumps({"model_id": f"model-{m}", "task_id": task, "metric_name": "acc", "score": score,
                           "category": f"c{t % 4}"})  # fmt: skip

    lines = [record(m, t) for m in range(models) for t in range(tasks)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    runs = load_runs([str(path)])
    assert isinstance(runs, RunColumns)
    return runs


@pytest.fixture
def sides(tmp_path: Path) -> tuple[RunColumns, RunColumns]:
    # The baseline has one model fewer and some tasks of its own: rows and columns of both sides differ.
    return suite(tmp_path / "base.jsonl", 0.0, models=2, only="-old"), suite(tmp_path / "pr.jsonl", 0.2)


def test_the_task_changes_of_columns_are_those_of_the_same_records(sides: tuple[RunColumns, RunColumns]) -> None:
    base, pr = sides
    assert task_changes(base, pr) == task_changes(list(base), list(pr))


def test_the_comparison_of_columns_is_that_of_the_same_records(sides: tuple[RunColumns, RunColumns]) -> None:
    base, pr = sides
    as_columns = compare(base, pr, b=400, alpha=0.05, seed=3)
    assert repr(as_columns) == repr(compare(list(base), list(pr), b=400, alpha=0.05, seed=3))


def test_a_run_with_a_baseline_builds_no_record_from_columns(sides: tuple[RunColumns, RunColumns]) -> None:
    base, pr = sides
    outcome = run(Options(b=400), pr, baseline=base)
    assert outcome.comparison is not None and outcome.changes is not None and outcome.unit_scores
    assert "records" not in vars(base) and "records" not in vars(pr)  # the cached records were never asked for


@pytest.mark.parametrize("text", ["task-1", "a b", " x", "tab\there", "zw\u200bsp", "nbsp\u00a0", "é", "`tick`", "a|b"])
def test_visible_is_the_per_character_escape_whatever_the_text(text: str) -> None:
    assert visible(text) == "".join(map(_visible, text))


def test_a_code_span_without_backticks_is_fenced_by_one() -> None:
    assert md_code("task-1") == "`task-1`" and md_code("a`b") == "``a`b``"


@pytest.mark.parametrize(
    ("texts", "plain"),
    [
        (["task-1", "a b", "x/y.z"], True),
        (["task-1", ""], False),
        (["ok", " lead"], False),
        (["ok", "pi|pe"], False),
        (["ok", "back`tick"], False),
        (["ok", "é"], False),
        (["ok", "tab\there"], False),
    ],
)
def test_ids_are_found_plain_only_when_each_code_span_is_the_id_in_single_backticks(
    texts: list[str], plain: bool
) -> None:
    assert _plain_cells(texts) is plain
    if plain:
        assert all(md_code(t) == f"`{t}`" for t in texts)


def test_a_comparison_over_more_tasks_than_the_exact_limit_is_the_leaderboards_pair_interval() -> None:
    rng = np.random.default_rng(4)
    tasks = EXACT_LIMIT + 200
    base_scores, pr_scores = rng.random(tasks), np.clip(rng.random(tasks) + 0.02, 0, 1)
    base = [EvalRun("m", f"t{t:05d}", "acc", float(base_scores[t])) for t in range(tasks)]
    pr = [EvalRun("m", f"t{t:05d}", "acc", float(pr_scores[t])) for t in range(tasks)]
    (change,) = compare(base, pr, b=400, alpha=0.05, seed=9, correction="none").models
    as_pair = pr + [dataclasses.replace(r, model_id="base") for r in base]
    (pair,) = analyse(as_pair, b=400, alpha=0.05, seed=9, correction="none").pairs
    sign = 1.0 if pair.model_a == "m" else -1.0
    lo, hi = sorted((sign * pair.ci_lo, sign * pair.ci_hi))
    assert math.isclose(change.ci_lo, lo, abs_tol=1e-12) and math.isclose(change.ci_hi, hi, abs_tol=1e-12)
