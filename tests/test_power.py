"""The minimum detectable difference: the test and level actually used, for a named pair, and min-effect."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats

from leaderboard import EvalRun, analyse
from leaderboard.report.json_report import render_json
from leaderboard.report.reasons import detectable_sentence
from leaderboard.stats.power import _binary_power, _saddlepoint_p, minimum_detectable, typical, units_needed
from leaderboard.stats.significance import sign_flip_test


def _records(scores: np.ndarray) -> list[EvalRun]:
    models, tasks = scores.shape
    return [EvalRun(f"m{m}", f"t{t:03d}", "acc", float(scores[m, t])) for m in range(models) for t in range(tasks)]


def test_the_exact_power_of_the_sign_test_is_the_sum_over_every_outcome() -> None:
    n, psi, shift, level = 7, 0.6, 0.3, 0.1
    up, down = (psi + shift) / 2, (psi - shift) / 2
    brute = 0.0
    for outcome in itertools.product((1, 0, -1), repeat=n):
        chance = math.prod(up if o == 1 else down if o == -1 else 1 - psi for o in outcome)
        k, wins = sum(o != 0 for o in outcome), sum(o == 1 for o in outcome)
        if k and stats.binomtest(wins, k).pvalue <= level + 1e-12:
            brute += chance
    assert _binary_power(n, psi, shift, level, two_sided=True) == pytest.approx(brute, abs=1e-9)


def test_the_saddlepoint_p_is_close_to_the_exact_sign_flip_p() -> None:
    rows = np.random.default_rng(2).normal(0.1, 0.2, (20, 18))
    exact, _ = sign_flip_test(rows, 0)
    assert np.allclose(_saddlepoint_p(rows), exact, rtol=0.1, atol=1e-4)


def test_a_smaller_level_asks_for_a_larger_difference_and_too_few_units_for_none() -> None:
    d = np.random.default_rng(3).normal(0.0, 0.2, 60)
    loose, strict = minimum_detectable(d, 0.05)[0], minimum_detectable(d, 0.001)[0]
    assert 0 < loose < strict
    assert math.isnan(minimum_detectable(d[:5], 0.05)[0])  # 5 differences: smallest p 1/16 > 0.05


def test_the_figure_is_the_power_of_the_exact_test_at_a_dozen_tasks_not_the_normal_formula() -> None:
    d = np.random.default_rng(4).normal(0.0, 0.2, 12)
    formula = (stats.norm.ppf(0.9975) + stats.norm.ppf(0.8)) * d.std(ddof=1) / math.sqrt(12)
    assert minimum_detectable(d, 0.005)[0] > 1.1 * formula


def test_the_same_units_and_seed_give_the_same_figure() -> None:
    d = np.random.default_rng(5).normal(0.0, 0.2, 40)
    assert minimum_detectable(d, 0.01, seed=3) == minimum_detectable(d, 0.01, seed=3)


def test_the_typical_pair_is_the_one_with_the_median_spread() -> None:
    n = np.array([40, 40, 1, 40, 40])
    sd = np.array([0.3, 0.1, 0.2, 0.2, np.nan])
    assert typical(n, sd) == 3  # spreads 0.1, 0.2, 0.3 among pairs with two units: 0.2
    assert typical(np.array([1, 0]), np.array([0.1, 0.2])) is None


def test_units_needed_for_the_detectable_difference_are_about_the_units_there_are() -> None:
    d = np.random.default_rng(6).normal(0.0, 0.2, 200)
    x, _ = minimum_detectable(d, 0.01)
    assert 170 <= units_needed(d, x, 0.01) <= 230
    assert units_needed(d, x / 2, 0.01) > 600
    assert units_needed(d, 1e-7, 0.01) == -1  # beyond the largest suite sized


def test_the_leaderboard_names_the_pair_its_figure_is_for_and_sizes_min_effect() -> None:
    rng = np.random.default_rng(7)
    scores = np.clip(
        0.5 + 0.02 * np.arange(4)[:, None] + rng.normal(0, 0.1 * (1 + np.arange(4))[:, None], (4, 50)), 0, 1
    )
    board = analyse(_records(scores), min_effect=0.05)
    d = board.detectable()
    assert d is not None and len(d.pair) == 2 and d.units_for_effect is not None and d.units_for_effect > 50
    sentence = detectable_sentence(d, name=lambda m: f"<{m}>")
    assert f"for the typical pair, <{d.pair[0]}> vs <{d.pair[1]}>" in sentence
    assert f"would need about {d.units_for_effect:,} tasks like these" in sentence
    report = json.loads(render_json(board))["detectable"]
    assert (report["pair"], report["min_effect"], report["units_for_min_effect"]) == (
        list(d.pair),
        0.05,
        d.units_for_effect,
    )
    assert report["method"] == "simulation"


def test_zero_one_scores_get_the_exact_power_of_the_mcnemar_test() -> None:
    rng = np.random.default_rng(8)
    scores = (rng.random((3, 80)) < np.array([[0.5], [0.6], [0.7]])).astype(float)
    d = analyse(_records(scores)).detectable()
    assert d is not None and d.exact and 0 < d.difference < 1
