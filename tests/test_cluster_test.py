"""The clustered pair test where the cluster sign-flip cannot reach the family's level.

With C non-zero cluster sums the sign-flip's smallest p is 2 / 2^C: at 8 clusters and Holm over
10 pairs (alpha / 10 = 0.005 > 2 / 256 never holds) no pair could ever be significant. There the
CR2 t-test with Bell-McCaffrey df decides; elsewhere the exact sign-flip stays. scipy is the oracle
of the Student tail; benchmarks/bench_cluster_test.py measures level and power.
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from leaderboard import EvalRun, analyse
from leaderboard.report.json_report import render_json
from leaderboard.stats.clustering import t_two_sided_p
from leaderboard.stats.comparison import compare
from leaderboard.stats.paired import cluster_figures


def runs_of(model: str, scores: np.ndarray, clusters: np.ndarray) -> list[EvalRun]:
    return [
        EvalRun(model_id=model, task_id=f"t{t:04d}", metric_name="acc", score=float(s), cluster=f"k{clusters[t]:02d}")
        for t, s in enumerate(scores)
    ]


def five_models(clusters: int, lead: float, seed: int) -> list[EvalRun]:
    """Five models on 20 tasks a cluster; m0 ahead of four equal models by ``lead``."""
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(clusters), 20)
    base = 0.5 + rng.normal(0, 0.1, clusters)[g] + rng.uniform(-0.2, 0.2, g.size)
    out: list[EvalRun] = []
    for m in range(5):
        shift = lead if m == 0 else 0.0
        scores = np.clip(base + shift + rng.normal(0, 0.02, clusters)[g] + rng.normal(0, 0.05, g.size), 0, 1)
        out += runs_of(f"m{m}", scores, g)
    return out


def test_the_student_tail_matches_scipy_at_fractional_df_and_far_into_the_tail() -> None:
    t = np.array([0.0, 0.3, 1.5, 2.447, 4.0, 9.0, 30.0, -5.0])
    df = np.array([1.0, 2.5, 5.0, 6.0, 5.7, 7.0, 4.0, 29.3])
    assert t_two_sided_p(t, df) == pytest.approx(2 * stats.t.sf(np.abs(t), df), rel=1e-9)


def test_the_student_tail_is_nan_without_df_and_zero_at_an_infinite_t() -> None:
    p = t_two_sided_p(np.array([2.0, np.inf, np.nan]), np.array([np.nan, 5.0, 5.0]))
    assert np.isnan(p[0]) and p[1] == 0.0 and np.isnan(p[2])


def test_at_eight_clusters_and_ten_pairs_a_clear_lead_is_significant_by_the_cr2_t_test() -> None:
    board = analyse(five_models(8, 0.15, seed=1), cluster_by="cluster", correction="holm")
    led = [p for p in board.pairs if "m0" in (p.model_a, p.model_b)]
    assert len(board.pairs) == 10 and len(led) == 4
    assert all(p.significant and p.test == "CR2 t-test" and p.n_clusters == 8 for p in led)
    # The interval's own test: p <= alpha / 10 only if the interval already excludes 0.
    assert all(p.ci_lo > 0 or p.ci_hi < 0 for p in led)


def test_equal_models_at_eight_clusters_are_not_claimed_and_the_json_names_the_t_test() -> None:
    board = analyse(five_models(8, 0.0, seed=2), cluster_by="cluster", correction="holm")
    assert not any(p.significant for p in board.pairs)
    assert {p["test"] for p in json.loads(render_json(board))["pairs"]} == {"CR2 t-test"}


def test_where_the_sign_flip_can_reach_the_level_it_stays() -> None:
    # Two models, 8 clusters: 2 / 2^8 < 0.05, so the exact test decides.
    board = analyse([r for r in five_models(8, 0.15, seed=1) if r.model_id in ("m0", "m1")], cluster_by="cluster")
    assert board.pairs[0].test == "exact sign-flip" and board.pairs[0].significant


def test_the_gate_uses_the_one_sided_t_test_when_its_family_is_out_of_the_sign_flips_reach() -> None:
    # Five models re-run on 6 clusters, one-sided Holm over the five: 1 / 2^6 > 0.05 / 5. m2 drops 0.2.
    base = five_models(6, 0.0, seed=3)
    noise = np.random.default_rng(4).normal(0, 0.02, len(base))
    pr = [
        replace(r, score=float(np.clip(r.score + e - (0.2 if r.model_id == "m2" else 0.0), 0, 1)))
        for r, e in zip(base, noise, strict=True)
    ]
    result = compare(base, pr, b=400, alpha=0.05, seed=0, cluster_by="cluster", correction="holm")
    (dropped,) = result.regressions
    assert dropped.model_id == "m2" and dropped.test == "one-sided CR2 t-test"


def test_the_cr2_t_p_is_uniform_under_no_difference_at_six_unequal_clusters() -> None:
    # Cluster totals of a zero-mean difference with sizes 30 .. 3: the share of p at or below a level
    # stays within two binomial SEs of it (Bell-McCaffrey's df keep the level at unequal sizes).
    rng = np.random.default_rng(6)
    rows, sizes = 20_000, np.array([30.0, 20, 12, 8, 5, 3])
    totals = rng.normal(0, 1, (rows, sizes.size)) * np.sqrt(sizes)
    sized = np.broadcast_to(sizes, totals.shape).copy()
    p = cluster_figures(totals, totals, sized, 0.05).t_p
    for level in (0.05, 0.01, 0.005):
        assert np.mean(p <= level) <= level + 2 * np.sqrt(level * (1 - level) / rows)
    assert np.mean(p <= 0.05) >= 0.02  # not a test that never rejects
