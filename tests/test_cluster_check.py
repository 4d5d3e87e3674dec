"""The clustering diagnostic: the claims recomputed with each category as one unit, said only when they differ."""

from __future__ import annotations

import numpy as np

from leaderboard import EvalRun, analyse
from leaderboard.report.document import render_report


def runs_of(scores: np.ndarray, groups: np.ndarray) -> list[EvalRun]:
    return [
        EvalRun(f"m{m}", f"t{t:03d}", "acc", float(scores[m, t]), category=f"c{int(groups[t]):02d}")
        for m in range(scores.shape[0])
        for t in range(scores.shape[1])
    ]


def test_differences_that_cluster_within_categories_are_read_from_the_differences_and_called_related() -> None:
    rng = np.random.default_rng(3)
    g = np.repeat(np.arange(8), 25)
    # m0 is much better in some categories and worse in others: its differences with m1 cluster.
    swing = np.array([0.3, -0.1, 0.25, -0.05, 0.2, -0.1, 0.3, -0.05])[g]
    scores = np.clip(np.vstack([0.45 + swing, np.full(g.size, 0.4)]) + rng.normal(0, 0.03, (2, g.size)), 0, 1)
    board = analyse(runs_of(scores, g))
    check = board.cluster_check
    assert check is not None and check.difference_icc_hi > 0.5 and check.difference_design_effect >= 2
    assert check.lost == (("m0", "m1"),)
    assert "related tasks make these claims look stronger than they are" in render_report(board)


def test_levels_shared_by_every_model_leave_the_differences_unclustered() -> None:
    rng = np.random.default_rng(4)
    g = np.repeat(np.arange(8), 25)
    level = rng.uniform(0.1, 0.9, 8)[g]
    scores = np.clip(level + np.array([[0.05], [0.0]]) + rng.normal(0, 0.05, (2, g.size)), 0, 1)
    board = analyse(runs_of(scores, g))
    assert board.design is not None and board.design.icc_lo > 0.5  # the scores correlate within categories
    check = board.cluster_check
    assert check is not None and check.difference_icc_hi < 0.2  # their differences do not
    assert check.interval_ratio > 1.5


def test_a_lost_claim_is_named_with_the_pair() -> None:
    rng = np.random.default_rng(4)
    g = np.repeat(np.arange(4), 45)
    level = rng.uniform(0.1, 0.9, 4)[g]
    scores = np.clip(level + np.array([[0.05], [0.0]]) + rng.normal(0, 0.05, (2, g.size)), 0, 1)
    board = analyse(runs_of(scores, g))
    check = board.cluster_check
    assert check is not None and check.lost == (("m0", "m1"),)  # 4 clusters: a cluster sign-flip p >= 1/8
    assert "1 significant pair would not be (`m0` v `m1`)" in render_report(board)


def test_nothing_is_said_when_nothing_would_change() -> None:
    rng = np.random.default_rng(4)
    g = np.repeat(np.arange(8), 25)
    scores = rng.random((2, g.size))
    board = analyse(runs_of(scores, g))
    assert board.cluster_check is not None and not board.cluster_check.claims_differ
    assert "Clustered by category" not in render_report(board)


def test_with_clustering_on_there_is_nothing_to_check() -> None:
    rng = np.random.default_rng(4)
    g = np.repeat(np.arange(8), 25)
    assert analyse(runs_of(rng.random((2, g.size)), g), cluster_by="category").cluster_check is None
