"""Distinct tasks per category, over every model: a task two models put in different categories counts in each."""

from __future__ import annotations

from leaderboard import EvalRun
from leaderboard.stats.matrix import score_matrix
from leaderboard.stats.rows import category_tasks


def run(model: str, task: str, category: str, score: float | None = 0.5) -> EvalRun:
    return EvalRun(model, task, "acc", score, category=category)  # type: ignore[arg-type]


def test_a_task_in_one_category_for_every_model_counts_once() -> None:
    runs = [run(m, f"t{k}", "math" if k < 3 else "code") for m in ("a", "b") for k in range(5)]
    assert category_tasks(score_matrix(runs)) == {"code": 2, "math": 3}


def test_a_task_two_models_file_apart_counts_in_both_categories() -> None:
    runs = [run("a", "t0", "math"), run("b", "t0", "code"), run("a", "t1", "code"), run("b", "t1", "code")]
    assert category_tasks(score_matrix(runs)) == {"code": 2, "math": 1}
