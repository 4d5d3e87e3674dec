"""Intervals of a mean over few tasks: a model's below 50 tasks, and every category mean's."""

from __future__ import annotations

import math
import re
from unittest import mock

import numpy as np
import pytest
import scipy.stats

from leaderboard import EvalRun, analyse
from leaderboard.report.document import render_report
from leaderboard.report.json_report import report_dict
from leaderboard.stats import mean_intervals, rows
from leaderboard.stats.design import Design
from leaderboard.stats.matrix import ScoreMatrix
from leaderboard.stats.resampling import encode_ids, keyed_rng


def model(scores: list[float], category: str | None = None) -> list[EvalRun]:
    """Model ``m``'s scores on tasks of ``category`` (by default two categories, alternating)."""
    prefix = category or "t"
    return [EvalRun("m", f"{prefix}{i:03d}", "acc", s, category=category or f"c{i % 2}") for i, s in enumerate(scores)]


def t_interval(scores: list[float]) -> tuple[float, float]:
    half = scipy.stats.t.ppf(0.975, len(scores) - 1) * np.std(scores, ddof=1) / math.sqrt(len(scores))
    return float(np.mean(scores) - half), float(np.mean(scores) + half)


CEILING = [1.0, 0.999, 0.998, 1.0, 0.997, 0.999]


def test_a_small_suite_interval_stays_within_zero_and_one() -> None:
    for scores in (CEILING, [1.0 - s for s in CEILING], [0.0, 1.0, 0.5, 0.02, 0.98, 0.4]):
        row = analyse(model(scores), b=1000).rows[0]
        assert 0.0 <= row.mean_ci_lo <= row.mean_score <= row.mean_ci_hi <= 1.0


def test_six_scores_crowding_the_ceiling_do_not_claim_the_mean_is_above_095() -> None:
    # Six draws often all miss a rare low tail: their own spread (t-interval [0.997, 1.0]) is not the model's.
    row = analyse(model(CEILING), b=1000).rows[0]
    assert row.mean_ci_lo < 0.95 and row.mean_ci_hi == 1.0


def test_scores_whose_spread_sits_inside_the_range_are_not_widened_by_the_cap() -> None:
    scores = [0.7 + 0.05 * math.sin(i) for i in range(12)]
    capped = analyse(model(scores), b=1000).rows[0]
    with mock.patch.object(mean_intervals, "EFFECTIVE_CAP", math.inf):
        uncapped = analyse(model(scores), b=1000).rows[0]
    assert (capped.mean_ci_lo, capped.mean_ci_hi) == (uncapped.mean_ci_lo, uncapped.mean_ci_hi)


def test_the_interval_narrows_as_the_same_scores_come_from_more_tasks() -> None:
    widths = []
    for repeats in (1, 2, 4):
        row = analyse(model([0.9, 0.95, 0.7, 1.0, 0.85] * repeats), b=1000, seed=3).rows[0]
        widths.append(row.mean_ci_hi - row.mean_ci_lo)
    assert widths[0] > widths[1] > widths[2]


def test_fifty_tasks_get_the_percentile_bootstrap_alone() -> None:
    scores = [0.97 + 0.03 * ((i * 7) % 11) / 10 for i in range(50)]
    row = analyse(model(scores), b=400, seed=9).rows[0]
    tasks = sorted(f"t{i:03d}" for i in range(50))
    draws = keyed_rng(9, encode_ids(tasks)).integers(0, 50, (400, 50))
    lo, hi = np.percentile(np.array(scores)[draws].mean(axis=1), [2.5, 97.5])
    assert row.ci_method == "percentile bootstrap"
    assert (row.mean_ci_lo, row.mean_ci_hi) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))


def test_a_weighted_small_suite_gets_the_same_widened_interval() -> None:
    runs = [EvalRun("m", f"t{i}", "acc", s, weight=1.0 + (i % 3)) for i, s in enumerate(CEILING)]
    row = analyse(runs, b=1000, weights="apply").rows[0]
    assert row.ci_method == rows.WIDENED and row.mean_ci_lo < 0.95


def test_a_category_of_one_task_has_no_interval_and_says_why() -> None:
    runs = [*model([0.4, 0.6, 0.5], category="many"), EvalRun("m", "alone", "acc", 0.7, category="one")]
    row = analyse(runs, b=1000).rows[0]
    assert "one" not in row.category_ci and row.category_ci_notes == {"one": "n=1"}


def test_a_category_of_equal_continuous_scores_has_no_interval_and_says_why() -> None:
    row = analyse(model([0.7, 0.7, 0.7], category="flat") + model([0.2, 0.4], category="x"), b=1000).rows[0]
    assert row.category_ci_notes == {"flat": "all equal"}


def test_a_category_interval_contains_the_t_interval_of_its_scores() -> None:
    scores = [0.42, 0.55, 0.61, 0.38, 0.7]
    row = analyse(model(scores, category="cat"), b=1000).rows[0]
    lo, hi = row.category_ci["cat"]
    t_lo, t_hi = t_interval(scores)
    assert lo <= t_lo + 1e-12 and hi >= t_hi - 1e-12 and lo >= 0.0 and hi <= 1.0


def test_a_category_of_zero_one_scores_gets_wilsons_interval_even_when_all_solved() -> None:
    row = analyse(model([1.0] * 10, category="solved") + model([0.5, 0.25], category="x"), b=1000).rows[0]
    lo, hi = row.category_ci["solved"]
    assert hi == 1.0 and lo == pytest.approx(0.66, abs=0.02)  # 10 of 10: [0.66, 1] as a model's


def test_the_documents_show_each_category_mean_with_its_interval_or_why_not() -> None:
    runs = [*model([0.4, 0.6, 0.5], category="many"), EvalRun("m", "alone", "acc", 0.7, category="one")]
    board = analyse(runs, b=1000)
    lo, hi = board.rows[0].category_ci["many"]
    text = render_report(board)
    assert re.search(r"\| `many` \| 3 ⚠ \| one model \| 0\.500 \[0\.\d{3},\s0\.\d{3}\] \|", text)
    assert "| `one` | 1 ⚠ | one model | 0.700 (n=1) |" in text
    (row,) = report_dict(board)["rows"]  # type: ignore[misc]
    assert row["category_ci"] == {"many": [lo, hi]} and row["category_ci_notes"] == {"one": "n=1"}


def test_category_intervals_of_six_scores_near_the_ceiling_cover_the_mean() -> None:
    # A seeded simulation: 400 categories of six Beta(9.7, 0.3) scores (mean 0.97), where the
    # t-interval alone covers about 78%.
    scores = np.random.default_rng(20261201).beta(9.7, 0.3, (400, 6))
    matrix = ScoreMatrix(
        model_ids=tuple(f"r{r}" for r in range(400)),
        task_ids=tuple(f"t{t}" for t in range(6)),
        scores=scores,
        present=np.ones(scores.shape, dtype=bool),
        category_index=np.zeros(scores.shape, dtype=np.int64),
        categories=("c",),
        weights_ignored=False,
    )
    lo, hi, _ = rows.category_intervals(matrix, Design(cluster=None, cluster_names=(), weight=None), 0.05)
    assert np.mean((lo[:, 0] <= 0.97) & (hi[:, 0] >= 0.97)) >= 0.93
