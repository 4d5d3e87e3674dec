"""Where family-wise claims (issue 14) meet clusters and weights (issue 15): the seams of the merge."""

from __future__ import annotations

import json
from statistics import NormalDist

import numpy as np
import pytest

from leaderboard import EvalRun, analyse
from leaderboard.report.comparison import verdict_text
from leaderboard.report.comparison_json import comparison_dict
from leaderboard.report.comparison_method import rule_text
from leaderboard.report.document import render_report
from leaderboard.report.json_report import render_json
from leaderboard.report.reasons import detectable_sentence, reason_text
from leaderboard.stats.clustering import cr2
from leaderboard.stats.comparison import compare


def _runs(model: str, scores: np.ndarray, clusters: np.ndarray) -> list[EvalRun]:
    return [
        EvalRun(model_id=model, task_id=f"t{t:04d}", metric_name="acc", score=float(s), category=f"c{clusters[t]:02d}")
        for t, s in enumerate(scores)
    ]


def _z(level: float, two_sided: bool = True) -> float:
    return NormalDist().inv_cdf(1 - (level / 2 if two_sided else level)) + NormalDist().inv_cdf(0.8)


def _cluster_effect_pair(n_clusters: int = 12, size: int = 10, seed: int = 3) -> tuple[np.ndarray, ...]:
    """Two models whose per-task difference is mostly a per-cluster shift (strongly clustered)."""
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(n_clusters), size)
    a = np.clip(0.5 + rng.normal(0, 0.02, g.size), 0, 1)
    b = np.clip(a - 0.02 + rng.normal(0, 0.15, n_clusters)[g] + rng.normal(0, 0.01, g.size), 0, 1)
    return a, b, g


def _expected_cluster_difference(diff: np.ndarray, g: np.ndarray, level: float, two_sided: bool = True) -> float:
    """(z(1 - level/2) + z(0.8)) * sqrt(V): V the CR2 variance of the mean difference over the clusters."""
    count = int(g.max()) + 1
    totals = np.bincount(g, weights=diff, minlength=count)[None, :]
    sizes = np.bincount(g, minlength=count).astype(float)[None, :]
    return _z(level, two_sided) * float(np.sqrt(cr2(totals, sizes).variance[0]))


def test_clustered_minimum_detectable_difference_is_sized_by_clusters_not_tasks() -> None:
    a, b, g = _cluster_effect_pair()
    runs = _runs("a", a, g) + _runs("b", b, g)
    tasks = analyse(runs).detectable()
    clusters = analyse(runs, cluster_by="category").detectable()
    assert tasks is not None and clusters is not None
    assert (tasks.unit, tasks.n_shared) == ("task", 120)
    assert (clusters.unit, clusters.n_shared) == ("cluster", 12)
    # One pair, not separated: the level in force is alpha itself.
    assert clusters.level == pytest.approx(0.05)
    # Simulated from the pair's 12 cluster sums with the test run on them: near the normal formula, not equal.
    assert 0.7 < clusters.difference / _expected_cluster_difference(a - b, g, 0.05) < 1.6
    # The per-task spread promises a resolution the clusters do not give.
    assert clusters.difference > 2 * tasks.difference
    assert "With 12 shared clusters this suite detects a difference of about" in detectable_sentence(clusters, name=str)


def test_clustered_comparison_minimum_detectable_change_is_sized_by_clusters_not_tasks() -> None:
    a, b, g = _cluster_effect_pair()
    base, pr = _runs("m", a, g), _runs("m", b, g)
    per_task = compare(base, pr, b=400, alpha=0.05, seed=0).detectable
    clustered = compare(base, pr, b=400, alpha=0.05, seed=0, cluster_by="category")
    d = clustered.detectable
    assert d is not None and per_task is not None
    assert (d.unit, d.n_shared, d.two_sided) == ("cluster", 12, False)
    assert 0.7 < d.difference / _expected_cluster_difference(b - a, g, d.level, two_sided=False) < 1.6
    assert d.difference > 2 * per_task.difference
    assert "With 12 shared clusters this suite detects a change" in rule_text(clustered)
    assert comparison_dict(clustered)["detectable"]["unit"] == "cluster"  # type: ignore[index]


def test_fewer_clusters_than_a_claim_needs_detect_no_difference_of_any_size() -> None:
    # 6 models, 5 clusters: below the 6 clusters any clustered claim at alpha 0.05 needs, whatever the test.
    rng = np.random.default_rng(5)
    g = np.repeat(np.arange(5), 6)
    runs = [r for m in range(6) for r in _runs(f"m{m}", rng.random(g.size), g)]
    board = analyse(runs, cluster_by="category")
    d = board.detectable()
    assert d is not None and not d.reachable
    assert (d.n_shared, d.fewest) == (5, 6)
    sentence = detectable_sentence(d, name=str)
    assert sentence.startswith("With 5 shared clusters this suite cannot detect a difference of any size")
    assert "a clustered claim needs at least 6 clusters" in sentence
    assert sentence.rstrip(".") in render_report(board)  # the document may point on to the warning below
    report = json.loads(render_json(board))
    assert report["detectable"]["difference"] is None
    assert report["detectable"]["fewest"] == 6


def test_clusters_the_sign_flip_cannot_bring_to_the_level_in_force_get_the_cr2_t_tests_figure() -> None:
    # 6 models, 7 clusters: Holm's first level 0.05 / 15 is below the sign-flip's smallest p (2 / 128), so
    # the pairs are tested by the CR2 t-test, and the figure is that test's power.
    rng = np.random.default_rng(5)
    g = np.repeat(np.arange(7), 6)
    runs = [r for m in range(6) for r in _runs(f"m{m}", rng.random(g.size), g)]
    d = analyse(runs, cluster_by="category").detectable()
    assert d is not None and d.reachable and d.t_test and (d.n_shared, d.fewest) == (7, 6)


def test_models_unchanged_against_the_baseline_promise_no_detectable_change() -> None:
    a, _, g = _cluster_effect_pair()
    runs = _runs("m", a, g) + _runs("n", a[::-1].copy(), g)
    for by in ("none", "category"):
        comparison = compare(runs, runs, b=400, alpha=0.05, seed=0, cluster_by=by)  # type: ignore[arg-type]
        assert comparison.detectable is None
        assert "±0 " not in rule_text(comparison)


def test_a_clustered_comparisons_reason_names_the_cluster_test_as_the_leaderboards_does() -> None:
    # Five clusters up 0.1, one down 0.01: the CR2 interval excludes 0, the exact test gives p = 4 / 64.
    g = np.repeat(np.arange(6), 5)
    a = np.full(g.size, 0.5)
    b = a + np.array([0.1, 0.1, 0.1, 0.1, 0.1, -0.01])[g]
    base, pr = _runs("m", a, g), _runs("m", b, g)
    per_model = compare(base, pr, b=400, alpha=0.05, seed=0, correction="none", cluster_by="category").models[0]
    board = analyse(_runs("a", a, g) + _runs("b", b, g), cluster_by="category", correction="none")
    assert per_model.reason is not None and reason_text(per_model.reason) == "cluster exact test p = 0.062"
    assert board.pairs[0].reason is not None and reason_text(board.pairs[0].reason) == "cluster exact test p = 0.062"


def test_a_clustered_comparison_gives_no_post_hoc_clusters_needed() -> None:
    a, b, g = _cluster_effect_pair()
    comparison = compare(_runs("m", a, g), _runs("m", b, g), b=400, alpha=0.05, seed=0, cluster_by="category")
    change = comparison.models[0]
    assert change.verdict == "no detectable change" and change.n_clusters == 12
    assert change.clusters_needed is None and change.tasks_needed is None
    assert "would detect a change this size" not in verdict_text(change, 0.0)
    entry = comparison_dict(comparison)["models"][0]  # type: ignore[index]
    assert (entry["n_clusters"], entry["clusters_needed"]) == (12, None)
    unclustered = comparison_dict(compare(_runs("m", a, g), _runs("m", b, g), b=400, alpha=0.05, seed=0))
    assert "n_clusters" not in unclustered["models"][0]  # type: ignore[index]


def _two_models(categories: list[str], clusters: list[str | None], weights: list[float]) -> list[EvalRun]:
    rng = np.random.default_rng(len(categories))
    return [
        EvalRun(model_id=m, task_id=f"t{t:02d}", metric_name="acc", score=float(rng.random()),
                category=categories[t], cluster=clusters[t], weight=weights[t])
        for m in ("a", "b") for t in range(len(categories))
    ]  # fmt: skip


def test_a_pr_that_regroups_tasks_is_compared_on_its_own_clusters_and_says_how_many_moved() -> None:
    n = 40
    base = _two_models([f"c{t % 8}" for t in range(n)], [None] * n, [1.0] * n)  # no clusters recorded on the base
    pr = _two_models([f"d{t % 10}" for t in range(n)], [f"k{t % 8}" for t in range(n)], [1.0] * n)
    for by, moved, count in (("category", n, 10), ("cluster", n, 8)):
        comparison = compare(base, pr, b=400, alpha=0.05, seed=0, cluster_by=by)  # type: ignore[arg-type]
        assert comparison.clusters == count and comparison.relabelled == moved
        assert {m.n_clusters for m in comparison.models} == {count}
        noun = "category" if by == "category" else "cluster"
        assert f"40 shared tasks are in another {noun} in the baseline: this run's clusters are used." in (
            rule_text(comparison)
        )
        assert comparison_dict(comparison)["clustering"]["relabelled"] == moved  # type: ignore[index]
    # The same clusters on both sides: nothing said.
    same = compare(pr, pr, b=400, alpha=0.05, seed=0, cluster_by="cluster")
    assert same.relabelled == 0 and "another cluster" not in rule_text(same)


def test_a_pr_that_reweighs_tasks_is_compared_on_its_own_weights_and_says_how_many_changed() -> None:
    n = 30
    base = _two_models(["c"] * n, [None] * n, [1.0] * n)
    pr = _two_models(["c"] * n, [None] * n, [2.0 if t < 5 else 1.0 for t in range(n)])
    comparison = compare(base, pr, b=400, alpha=0.05, seed=0, weights="apply")
    assert comparison.reweighted == 5
    assert "5 shared tasks have another weight in the baseline: this run's weights are used." in rule_text(comparison)
    change = next(m for m in comparison.models if m.model_id == "a")
    a_base = [r.score for r in base if r.model_id == "a"]
    a_pr = [r.score for r in pr if r.model_id == "a"]
    w = np.array([2.0 if t < 5 else 1.0 for t in range(n)])
    assert change.delta == pytest.approx(float((w * (np.array(a_pr) - np.array(a_base))).sum() / w.sum()))


def test_a_table_whose_pairs_can_never_reach_alpha_says_so_under_the_leaderboard() -> None:
    # Three tasks: no sign-flip test of 3 differences (smallest p 2 / 8) can reach 0.05, so the
    # family is empty; "Holm's step-down over 0 pairs" would describe a correction that never ran.
    runs = [EvalRun(f"m{m}", f"t{t}", "acc", (m + t) % 3 / 2) for m in range(3) for t in range(3)]
    text = render_report(analyse(runs))
    assert "over 0 pairs" not in text
    assert "No pair's test can reach 0.05 at this size" in text
