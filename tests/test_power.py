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
from leaderboard.stats.comparison import compare
from leaderboard.stats.power import (
    ClusterTest,
    _binary_power,
    _saddlepoint_p,
    minimum_detectable,
    typical,
    units_needed,
)
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


def _cluster_runs(clusters: int, seed: int) -> list[EvalRun]:
    """Five models of unequal spread on ``clusters`` clusters of 20 tasks, each model a little ahead on some."""
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(clusters), 20)
    base = 0.5 + rng.normal(0, 0.1, clusters)[g] + rng.uniform(-0.2, 0.2, g.size)
    runs = []
    for m in range(5):
        own = (0.02 + 0.02 * m) * rng.normal(0, 1, clusters)[g] + (0.05 + 0.05 * m) * rng.normal(0, 1, g.size)
        scores = np.clip(base + own, 0, 1)
        runs += [EvalRun(f"m{m}", f"t{t:04d}", "acc", float(s), cluster=f"k{g[t]:02d}") for t, s in enumerate(scores)]
    return runs


def test_a_clustered_pair_tested_by_the_cr2_t_test_gets_that_tests_figure_not_cannot_detect() -> None:
    sums = np.random.default_rng(9).normal(0.0, 1.0, 8)
    sizes = np.full(8, 20.0)
    # Ten pairs: 2 / 2^8 is above Holm's first level 0.005, so the statistics run the CR2 t-test here.
    test = ClusterTest(0.005, 6)
    assert test.t_test_at(8) and math.isnan(minimum_detectable(sums, 0.005, sizes=sizes)[0])
    x, exact = minimum_detectable(sums, 0.005, sizes=sizes, clusters=test)
    assert math.isfinite(x) and not exact


def test_the_clustered_figure_asks_for_the_student_quantile_at_the_bell_mccaffrey_df() -> None:
    sums = stats.norm.ppf((np.arange(6) + 0.5) / 6)  # six equal clusters: df 5, spread exactly as drawn
    sizes = np.full(6, 20.0)
    se = sums.std(ddof=1) / math.sqrt(6) / 20.0  # the CR2 SE of the mean per task, equal clusters
    x, _ = minimum_detectable(sums, 0.005, sizes=sizes, clusters=ClusterTest(0.005, 6))
    normal = (stats.norm.ppf(0.9975) + stats.norm.ppf(0.8)) * se
    # 80% power needs the shift past the t critical value at df 5 (4.77 SEs), well past the normal 3.65.
    assert x > stats.t.ppf(0.9975, 5) * se > 1.2 * normal


def test_the_clusters_needed_for_min_effect_are_counted_with_the_test_each_size_gets() -> None:
    sums = np.random.default_rng(10).normal(0.0, 1.0, 8)
    sizes = np.full(8, 20.0)
    test = ClusterTest(0.005, 6)
    x, _ = minimum_detectable(sums, 0.005, sizes=sizes, clusters=test)
    needed = units_needed(sums, x, 0.005, sizes=sizes, clusters=test)
    assert 6 <= needed <= 11  # about the eight there are (the sign-flip takes over from 9)
    assert units_needed(sums, 10 * x, 0.005, sizes=sizes, clusters=test) == 6  # never below a claim's fewest


def test_a_clustered_leaderboard_on_eight_clusters_prints_the_cr2_figure_for_its_typical_pair() -> None:
    board = analyse(_cluster_runs(8, 11), cluster_by="cluster", correction="holm")
    d = board.detectable()
    assert d is not None and d.unit == "cluster" and d.t_test and d.reachable and 0 < d.difference < 1
    sentence = detectable_sentence(d, name=str)
    assert "the power of the CR2 t-test at its Bell-McCaffrey df" in sentence
    assert f"With 8 shared clusters this suite detects a difference of about ±{d.difference:.3g}" in sentence


def test_the_clustered_gate_on_six_clusters_prints_the_cr2_figure_for_its_typical_model() -> None:
    base, pr = _cluster_runs(6, 12), _cluster_runs(6, 13)
    change = compare(base, pr, b=400, alpha=0.05, seed=0, cluster_by="cluster", correction="holm").detectable
    assert change is not None and change.t_test and not change.two_sided and math.isfinite(change.difference)
