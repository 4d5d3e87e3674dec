"""A category's Best: named only where the category's own comparisons support it, never from fewer than 5 tasks."""

from __future__ import annotations

import numpy as np

from leaderboard import EvalRun, analyse
from leaderboard.report.document import render_report
from leaderboard.stats.categories import NoBest


def suite(sizes: dict[str, int], gaps: dict[str, float], models: int = 3, seed: int = 0) -> list[EvalRun]:
    """``models`` models; in each category m00 leads by ``gaps[category]`` per task over the others."""
    rng = np.random.default_rng(seed)
    runs = []
    for category, n in sizes.items():
        base = rng.uniform(0.2, 0.7, n)
        for m in range(models):
            lead = gaps[category] if m == 0 else 0.0
            scores = np.clip(base + lead + rng.normal(0, 0.02, n), 0, 1)
            runs += [
                EvalRun(f"m{m:02d}", f"{category}-{t}", "acc", float(s), category=category)
                for t, s in enumerate(scores)
            ]
    return runs


def claims(board: object) -> dict[str, object]:
    return {c.category: c for c in board.category_best}  # type: ignore[attr-defined]


def test_a_leader_far_ahead_on_enough_tasks_is_named() -> None:
    board = analyse(suite({"code": 40, "math": 40}, {"code": 0.2, "math": 0.2}))
    for claim in claims(board).values():
        assert claim.named and claim.leader == "m00"


def test_fewer_than_five_tasks_name_no_winner_however_large_the_gap() -> None:
    board = analyse(suite({"code": 40, "tiny": 4}, {"code": 0.2, "tiny": 0.5}))
    assert claims(board)["tiny"].why is NoBest.FEW_TASKS
    assert "no winner named (< 5 tasks)" in render_report(board)


def test_a_leader_not_ahead_of_every_model_at_the_level_in_force_is_not_named() -> None:
    board = analyse(suite({"code": 40, "math": 40}, {"code": 0.2, "math": 0.005}))
    assert claims(board)["math"].why is NoBest.NOT_SEPARATED
    assert claims(board)["code"].named


def test_each_comparison_is_held_to_alpha_over_every_comparison_of_the_category_leaders() -> None:
    board = analyse(suite({"a": 20, "b": 20, "c": 3}, {"a": 0.2, "b": 0.2, "c": 0.2}, models=4))
    # Two categories with a candidate, three comparisons each; "c" has too few tasks to be one.
    assert claims(board)["a"].level == 0.05 / 6


def test_without_correction_each_comparison_is_held_to_alpha() -> None:
    board = analyse(suite({"a": 20, "b": 20}, {"a": 0.2, "b": 0.2}), correction="none")
    assert claims(board)["a"].level == 0.05


def test_the_document_says_how_a_best_is_named() -> None:
    text = render_report(analyse(suite({"code": 40, "math": 40}, {"code": 0.2, "math": 0.005})))
    assert "named only when it is ahead of every other model in the category" in text
    assert "no clear best" in text
