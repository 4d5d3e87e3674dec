"""Issue 15: tasks that come in families (clustered inference), applied task weights, 0/1 intervals.

Short versions of the targets in benchmarks/bench_clusters.py; the oracles are closed-form
formulas, brute-force matrices, scipy and exact binomial sums.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLE, realdata, run
from scipy import stats

from leaderboard import EvalRun, analyse
from leaderboard.action.settings import SettingsError, parse_settings
from leaderboard.config import parse_config
from leaderboard.loading import load_runs
from leaderboard.pipeline import evaluate
from leaderboard.report.comparison_json import comparison_dict
from leaderboard.report.comparison_method import rule_text
from leaderboard.report.document import render_report
from leaderboard.report.json_report import render_json
from leaderboard.report.reasons import reason_text
from leaderboard.stats.clustering import cr2, design_effect, t_quantile, wilson
from leaderboard.stats.comparison import compare
from leaderboard.validation import InvalidEvalRuns

SWE_SIZES = [231, 75, 44, 34, 32, 22, 22, 19, 10, 8, 2, 1]


def clustered_runs(
    model: str, scores: np.ndarray, clusters: np.ndarray, weights: np.ndarray | None = None
) -> list[EvalRun]:
    return [
        EvalRun(
            model_id=model,
            task_id=f"t{t:04d}",
            metric_name="acc",
            score=float(s),
            category=f"c{clusters[t]:02d}",
            weight=1.0 if weights is None else float(weights[t]),
            cluster=f"k{clusters[t]:02d}",
        )
        for t, s in enumerate(scores)
    ]


# --- the formulas ----------------------------------------------------------------------------


def test_t_quantile_matches_scipy_at_fractional_degrees_of_freedom() -> None:
    df = np.array([0.7, 1.0, 1.5, 2.0, 3.3, 7.5, 30.0, 1000.0])
    assert t_quantile(0.975, df) == pytest.approx(stats.t.ppf(0.975, df), rel=1e-9)


def test_cr2_variance_and_bell_mccaffrey_df_match_the_matrix_formulas() -> None:
    rng = np.random.default_rng(1)
    sizes = np.array(SWE_SIZES)
    g = np.repeat(np.arange(sizes.size), sizes)
    n = g.size
    y = rng.random(n)
    hat = np.full((n, n), 1.0 / n)
    resid = y - y.mean()
    meat, columns = 0.0, []
    for c in range(sizes.size):
        idx = g == c
        values, vectors = np.linalg.eigh(np.eye(idx.sum()) - hat[np.ix_(idx, idx)])
        adjust = vectors @ np.diag(values**-0.5) @ vectors.T
        meat += (np.ones(idx.sum()) @ adjust @ resid[idx]) ** 2
        columns.append((np.eye(n) - hat)[:, idx] @ adjust @ np.ones(idx.sum()) / n)
    gram = np.linalg.eigvalsh(np.column_stack(columns).T @ np.column_stack(columns))
    moments = cr2(np.bincount(g, y)[None, :], sizes[None, :].astype(float))
    assert moments.variance[0] == pytest.approx(meat / n**2, rel=1e-9)
    assert moments.df[0] == pytest.approx(gram.sum() ** 2 / (gram**2).sum(), rel=1e-9)


def test_bell_mccaffrey_df_is_c_minus_1_for_equal_clusters() -> None:
    moments = cr2(np.ones((1, 8)), np.full((1, 8), 5.0))
    assert moments.df[0] == pytest.approx(7.0)


def test_wilson_is_the_continuity_corrected_score_interval() -> None:
    # Newcombe (1998), method 4: 0 of 10 -> [0, 0.3445]; 10 of 10 -> [0.6555, 1].
    lo, hi = wilson(np.array([0.0, 1.0]), np.array([10.0, 10.0]), np.array([1.959964, 1.959964]))
    assert lo.tolist() == pytest.approx([0.0, 0.65546], abs=1e-4)
    assert hi.tolist() == pytest.approx([0.34454, 1.0], abs=1e-4)


# --- clusters in the input -------------------------------------------------------------------


def test_a_record_cluster_is_read_from_jsonl_and_csv(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(
        '{"model_id": "m", "task_id": "t1", "metric_name": "acc", "score": 1, "cluster": "passage-1"}\n'
    )
    (tmp_path / "b.csv").write_text("model_id,task_id,metric_name,score,cluster\nm,t2,acc,0,passage-2\nm,t3,acc,0,\n")
    runs = load_runs([str(tmp_path / "a.jsonl"), str(tmp_path / "b.csv")])
    assert {r.task_id: r.cluster for r in runs} == {"t1": "passage-1", "t2": "passage-2", "t3": None}


def test_a_cluster_that_is_not_a_string_is_an_error_at_its_line(tmp_path: Path) -> None:
    record = '{"model_id": "m", "task_id": "t1", "metric_name": "acc", "score": 1, "cluster": 3}'
    (tmp_path / "a.jsonl").write_text(record + "\n")
    with pytest.raises(InvalidEvalRuns) as caught:
        load_runs([str(tmp_path / "a.jsonl")])
    (problem,) = caught.value.problems
    assert (problem.line, problem.field) == (1, "cluster")


def test_an_inspect_sample_cluster_is_its_metadata_cluster(tmp_path: Path) -> None:
    log = {
        "eval": {"model": "openai/x", "task": "reading", "scorers": [{"name": "match"}]},
        "samples": [
            {"id": 1, "epoch": 1, "scores": {"match": {"value": "C"}}, "metadata": {"cluster": "passage-7"}},
            {"id": 2, "epoch": 1, "scores": {"match": {"value": "I"}}},
        ],
    }
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    runs = load_runs([str(path)])
    assert {r.task_id: r.cluster for r in runs} == {"reading/1": "passage-7", "reading/2": None}


def test_a_task_in_two_clusters_is_an_error_naming_both_places(tmp_path: Path) -> None:
    lines = [
        '{"model_id": "a", "task_id": "t1", "metric_name": "acc", "score": 1, "cluster": "p1"}',
        '{"model_id": "b", "task_id": "t1", "metric_name": "acc", "score": 0, "cluster": "p2"}',
    ]
    (tmp_path / "r.jsonl").write_text("\n".join(lines) + "\n")
    runs = load_runs([str(tmp_path / "r.jsonl")])
    with pytest.raises(InvalidEvalRuns) as caught:
        analyse(runs, cluster_by="cluster")
    (problem,) = caught.value.problems
    assert (problem.line, problem.field) == (2, "cluster") and "r.jsonl:1" in problem.message


def test_cluster_by_cluster_needs_a_cluster_on_every_record() -> None:
    with pytest.raises(InvalidEvalRuns, match="has no cluster"):
        analyse([run("a", "t1", 1.0), run("b", "t1", 0.0)], cluster_by="cluster")


def test_a_task_in_two_categories_cannot_be_clustered_by_category() -> None:
    with pytest.raises(InvalidEvalRuns, match="must be the same for every model"):
        analyse([run("a", "t1", 1.0, "x"), run("b", "t1", 0.0, "y")], cluster_by="category")


# --- clustered decisions -------------------------------------------------------------------------


def test_a_clustered_pair_is_tested_by_flipping_cluster_sums_exactly() -> None:
    rng = np.random.default_rng(3)
    g = np.repeat(np.arange(8), [30, 12, 9, 7, 5, 4, 2, 1])
    a, b = rng.random(g.size), rng.random(g.size)
    board = analyse(clustered_runs("a", a, g) + clustered_runs("b", b, g), cluster_by="cluster")
    (pair,) = board.pairs
    sums = np.bincount(g, a - b) * (1 if pair.model_a == "a" else -1)
    flips = np.array(list(itertools.product([-1, 1], repeat=8)))
    brute = np.mean(np.abs(flips @ sums) >= abs(sums.sum()) - 1e-9)
    assert pair.p_value == pytest.approx(brute) and pair.test == "exact sign-flip" and pair.n_clusters == 8


def test_below_six_clusters_nothing_is_significant_and_the_reason_says_so() -> None:
    g = np.repeat(np.arange(5), 40)
    board = analyse(
        clustered_runs("a", np.ones(g.size), g) + clustered_runs("b", np.zeros(g.size), g), cluster_by="cluster"
    )
    (pair,) = board.pairs
    assert not pair.significant and pair.reason is not None
    reason = reason_text(pair.reason)
    assert reason.startswith("too few shared clusters (5 < 6)") and "alpha = 0.05" in reason


def test_clustered_leaderboard_does_not_depend_on_record_order() -> None:
    rng = np.random.default_rng(8)
    g = np.repeat(np.arange(7), [20, 9, 6, 5, 3, 2, 1])
    runs = [r for m in "abc" for r in clustered_runs(m, rng.random(g.size), g)]
    forward = render_json(analyse(runs, cluster_by="category"))
    assert render_json(analyse(runs[::-1], cluster_by="category")) == forward


def _equal_pair_with_cluster_effects(rng: np.random.Generator, rho: float) -> tuple[list[EvalRun], float]:
    sizes = np.array([231, 75, 44, 34, 32, 22, 22, 19, 10, 8]) * 200 // 497 + 1
    g = np.repeat(np.arange(sizes.size), sizes)
    s = rng.normal(0, math.sqrt(rho / (1 - rho) * 0.25), sizes.size)[g]
    u = rng.normal(0, math.sqrt(rho / (1 - rho) * 0.35), sizes.size)[g]
    x = rng.uniform(-0.3, 0.3, g.size)
    pa, pb = np.clip(0.5 + s + x + u / 2, 0.02, 0.98), np.clip(0.5 + s + x - u / 2, 0.02, 0.98)
    a, b = (rng.random(g.size) < pa).astype(float), (rng.random(g.size) < pb).astype(float)
    return clustered_runs("a", a, g) + clustered_runs("b", b, g), 0.5


def test_clustered_pairs_hold_their_level_and_cover_with_ten_unequal_clusters() -> None:
    # The short version of bench_clusters.py's "10, 0.2" row: without clustering ~45% false positives.
    rng = np.random.default_rng(15)
    reps, false, cover = 80, 0, 0
    for r in range(reps):
        runs, truth = _equal_pair_with_cluster_effects(rng, 0.2)
        board = analyse(runs, b=400, seed=r, cluster_by="cluster")
        false += board.pairs[0].significant
        row = next(x for x in board.rows if x.model_id == "a")
        cover += row.mean_ci_lo <= truth <= row.mean_ci_hi
    bound = 0.05 + 2 * math.sqrt(0.05 * 0.95 / reps)
    assert false / reps <= bound and cover / reps >= 0.93 - 2 * math.sqrt(0.93 * 0.07 / reps)


def test_the_gate_clusters_as_the_leaderboard_does() -> None:
    g = np.repeat(np.arange(5), 40)
    base = clustered_runs("m", np.ones(g.size), g)
    pr = clustered_runs("m", np.zeros(g.size), g)
    (change,) = compare(base, pr, b=400, alpha=0.05, seed=0, cluster_by="cluster").models
    assert change.verdict == "no detectable change" and change.reason is not None
    assert reason_text(change.reason).startswith("too few shared clusters (5 < 6)")
    g = np.repeat(np.arange(8), 25)
    (change,) = compare(
        clustered_runs("m", np.ones(g.size), g), clustered_runs("m", np.zeros(g.size), g), b=400, alpha=0.05, seed=0,
        cluster_by="cluster",
    ).models  # fmt: skip
    # One-sided for a drop (the gate's family, issue 14): 1 / 2^8, half the two-sided 2 / 2^8.
    assert change.regressed and change.p_value == pytest.approx(1 / 2**8)


def test_the_clustered_comparison_says_its_rule_and_reports_its_clusters() -> None:
    g = np.repeat(np.arange(8), 25)
    comparison = compare(
        clustered_runs("m", np.ones(g.size), g), clustered_runs("m", np.zeros(g.size), g), b=400, alpha=0.05, seed=0,
        cluster_by="cluster",
    )  # fmt: skip
    assert "CR2 cluster-robust CI over 8 clusters (by cluster)" in rule_text(comparison)
    assert "cluster sign-flip test" in rule_text(comparison)
    assert comparison_dict(comparison)["clustering"] == {
        "cluster_by": "cluster",
        "clusters": 8,
        "task_weights": "ignore",
        "relabelled": 0,
        "reweighted": 0,
    }


# --- documents ---------------------------------------------------------------------------------


def test_the_documents_say_how_many_clusters_and_warn_when_one_dominates() -> None:
    rng = np.random.default_rng(2)
    g = np.repeat(np.arange(6), [60, 10, 10, 10, 5, 5])
    runs = clustered_runs("a", rng.random(g.size), g) + clustered_runs("b", rng.random(g.size), g)
    text = render_report(analyse(runs, cluster_by="category"))
    assert "**Clustered by category**: 6 clusters of 100 tasks (largest `c00`, 60% of tasks)" in text
    assert "⚠ Few effective clusters: the largest cluster holds 60% of the tasks" in text


def test_categories_at_different_levels_widen_the_model_intervals_clustered_and_the_note_says_how_much() -> None:
    rng = np.random.default_rng(4)
    g = np.repeat(np.arange(8), 25)
    level = rng.uniform(0.1, 0.9, 8)[g]  # tasks in a category share their difficulty
    runs = [r for m in "ab" for r in clustered_runs(m, np.clip(level + rng.normal(0, 0.05, g.size), 0, 1), g)]
    board = analyse(runs)
    assert board.design is not None and board.design.design_effect >= 2
    text = render_report(board)
    assert "Each model's interval would be about" in text and "`cluster-by: category`" in text


def test_unrelated_categories_that_would_change_nothing_are_not_mentioned() -> None:
    rng = np.random.default_rng(4)
    g = np.repeat(np.arange(8), 25)
    runs = [r for m in "ab" for r in clustered_runs(m, rng.random(g.size), g)]
    text = render_report(analyse(runs))
    assert "Clustered by category" not in text and "`cluster-by: category`" not in text


def test_the_bundled_examples_design_effect_is_the_anova_icc_figure() -> None:
    runs = load_runs([str(EXAMPLE)])
    board = analyse(runs)
    assert board.design is not None
    # Independently: per model, the one-way ANOVA ICC and Kish's 1 + (sum n_g^2 / N - 1) ICC; their median.
    effects = []
    for model in sorted({r.model_id for r in runs}):
        mine = [r for r in runs if r.model_id == model]
        groups = sorted({r.category for r in mine})
        values = [np.array([r.score for r in mine if r.category == c]) for c in groups]
        sizes = np.array([v.size for v in values], dtype=float)
        n, k = sizes.sum(), len(values)
        grand = np.concatenate(values).mean()
        msb = sum(v.size * (v.mean() - grand) ** 2 for v in values) / (k - 1)
        msw = sum(((v - v.mean()) ** 2).sum() for v in values) / (n - k)
        m0 = (n - (sizes**2).sum() / n) / (k - 1)
        icc = max(0.0, (msb - msw) / (msb + (m0 - 1) * msw))
        effects.append(1 + ((sizes**2).sum() / n - 1) * icc)
    assert board.design.design_effect == pytest.approx(float(np.median(effects)), rel=1e-9)
    assert "Each model's interval would be about" in render_report(board)


def test_json_report_holds_the_clustering_and_each_rows_ci_method() -> None:
    g = np.repeat(np.arange(6), 10)
    runs = clustered_runs("a", (np.arange(60) % 3 == 0).astype(float), g)
    runs += clustered_runs("b", np.linspace(0, 1, 60), g)
    report = json.loads(render_json(analyse(runs, cluster_by="cluster")))
    assert report["schema_version"] == 3 and report["parameters"]["cluster_by"] == "cluster"
    assert report["clustering"]["clusters"] == 6 and report["clustering"]["method"].startswith("CR2")
    assert {r["model_id"]: r["ci_method"] for r in report["rows"]} == {"a": "clustered Wilson", "b": "CR2 t"}
    assert report["pairs"][0]["n_clusters"] == 6 and report["design_effect"] is None


# --- 0/1 intervals ---------------------------------------------------------------------------------


def test_all_solved_gets_a_wilson_interval_not_all_equal() -> None:
    (row,) = analyse([run("a", f"t{i}", 1.0) for i in range(10)]).rows
    assert row.ci_note is None and row.ci_method == "Wilson"
    assert row.mean_ci_hi == 1.0 and row.mean_ci_lo == pytest.approx(0.65546, abs=1e-4)


@pytest.mark.parametrize("n", [10, 20, 50])
@pytest.mark.parametrize("rate", [0.5, 0.9, 0.97])
def test_a_0_1_models_interval_covers_at_least_93_percent(n: int, rate: float) -> None:
    # Exact: the interval of every possible count x of n, weighed by its binomial probability.
    covered = 0.0
    for x in range(n + 1):
        (row,) = analyse([run("a", f"t{i:02d}", 1.0 if i < x else 0.0) for i in range(n)], pairs=False).rows
        if row.mean_ci_lo <= rate <= row.mean_ci_hi:
            covered += stats.binom.pmf(x, n, rate)
    assert covered >= 0.93


# --- task weights ---------------------------------------------------------------------------------


def test_applied_weights_give_weighted_means_and_keep_win_rate_a_share_of_tasks() -> None:
    runs = [run("a", "t1", 1.0, weight=3.0), run("a", "t2", 0.0, weight=1.0)]
    runs += [run("b", "t1", 0.0, weight=3.0), run("b", "t2", 1.0, weight=1.0)]
    board = analyse(runs, weights="apply")
    means = {r.model_id: r.mean_score for r in board.rows}
    assert means == {"a": 0.75, "b": 0.25}
    assert {r.model_id: r.win_rate for r in board.rows} == {"a": 0.5, "b": 0.5}


def test_applied_weights_flip_weight_times_difference() -> None:
    rng = np.random.default_rng(6)
    w = rng.uniform(0.5, 3, 12)
    a, b = rng.random(12), rng.random(12)
    g = np.zeros(12, dtype=int)
    (pair,) = analyse(clustered_runs("a", a, g, w) + clustered_runs("b", b, g, w), weights="apply").pairs
    d = (a - b) * w
    flips = np.array(list(itertools.product([-1, 1], repeat=12)))
    assert pair.p_value == pytest.approx(np.mean(np.abs(flips @ d) >= abs(d.sum()) - 1e-9))
    assert pair.mean_diff == pytest.approx(abs(d.sum() / w.sum()))


def test_applied_weights_must_be_the_same_for_every_model_of_a_task() -> None:
    runs = [run("a", "t1", 1.0, weight=2.0), run("b", "t1", 0.0, weight=1.0)]
    with pytest.raises(InvalidEvalRuns, match="task-weights: apply"):
        analyse(runs, weights="apply")


def test_ignored_weights_are_still_said_and_applied_ones_too() -> None:
    runs = [run("a", "t1", 1.0, weight=2.0), run("a", "t2", 0.5)]
    assert "weights were ignored" in render_report(analyse(runs))
    applied = analyse(runs, weights="apply")
    assert "**Task weights applied**" in render_report(applied)
    report = json.loads(render_json(applied))
    assert (report["weights_applied"], report["weights_ignored"]) == (True, False)


def test_weighted_interval_covers_the_weighted_mean() -> None:
    # The short version of bench_clusters.py's weights table: ignored weights cover ~30% here.
    rng = np.random.default_rng(9)
    d = rng.uniform(0, 1, 400_000)
    y = np.clip(0.9 - 0.7 * d + rng.normal(0, 0.1, d.size), 0, 1)
    truth = float(((1 + 4 * d) * y).sum() / (1 + 4 * d).sum())
    reps, cover = 60, 0
    for r in range(reps):
        d = rng.uniform(0, 1, 200)
        y = np.clip(0.9 - 0.7 * d + rng.normal(0, 0.1, 200), 0, 1)
        (row,) = analyse(clustered_runs("a", y, np.zeros(200, dtype=int), 1 + 4 * d), seed=r, weights="apply").rows
        cover += row.mean_ci_lo <= truth <= row.mean_ci_hi
    assert cover / reps >= 0.93 - 2 * math.sqrt(0.93 * 0.07 / reps)


# --- inputs ------------------------------------------------------------------------------------------


def test_cluster_by_and_task_weights_inputs_are_checked() -> None:
    with pytest.raises(SettingsError) as caught:
        parse_settings({"INPUT_RUNS": "r.jsonl", "INPUT_CLUSTER-BY": "repo", "INPUT_TASK-WEIGHTS": "yes"})
    assert any("input 'cluster-by' must be one of none, category, cluster" in p for p in caught.value.problems)
    assert any("input 'task-weights' must be one of ignore, apply" in p for p in caught.value.problems)


def test_the_configurations_cluster_by_applies_when_the_caller_gives_none() -> None:
    config = parse_config("statistics:\n  cluster_by: category\n  task_weights: apply\n", "leaderboard.yml")
    g = np.repeat(np.arange(6), 5)
    board, _ = evaluate(clustered_runs("a", np.linspace(0, 1, 30), g), config)
    assert board.clustering is not None and board.clustering.by == "category" and board.task_weights == "apply"
    board, _ = evaluate(clustered_runs("a", np.linspace(0, 1, 30), g), config, cluster_by="none")
    assert board.clustering is None


def test_a_wrong_cluster_by_in_the_configuration_names_its_line() -> None:
    with pytest.raises(InvalidEvalRuns) as caught:
        parse_config("statistics:\n  cluster_by: repo\n", "leaderboard.yml")
    (problem,) = caught.value.problems
    assert (problem.line, problem.field) == (2, "statistics.cluster_by")


def test_design_effect_is_none_with_one_category() -> None:
    assert design_effect(np.ones((2, 3)), np.ones((2, 3), dtype=bool), np.zeros(3, dtype=np.int64)) is None


# --- real data -----------------------------------------------------------------------------------


def test_swebench_repositories_show_a_design_effect_and_cluster_honestly() -> None:
    runs = load_runs([str(realdata("swebench_verified.jsonl"))])
    plain = analyse(runs, b=400)
    assert plain.design is not None and 6 <= plain.design.design_effect <= 11
    assert "`cluster-by: category`" in render_report(plain)
    clustered = analyse(runs, b=400, cluster_by="category")
    assert clustered.clustering is not None and clustered.clustering.count == 12
    half = [(r.mean_ci_hi - r.mean_ci_lo) / 2 for r in clustered.rows]
    assert min(half) >= 0.07 and max(half) <= 0.14  # against about 0.04 with tasks independent
    assert int(clustered.pairs.significant.sum()) < int(plain.pairs.significant.sum())


def test_clustered_detectable_difference_counts_clusters_and_their_spread() -> None:
    rng = np.random.default_rng(21)
    g = np.repeat(np.arange(30), 8)
    effect = rng.normal(0, 0.15, (3, 30))[:, g]
    scores = np.clip(0.5 + effect + rng.normal(0, 0.1, (3, g.size)), 0, 1)
    runs = [r for m in range(3) for r in clustered_runs(f"m{m}", scores[m], g)]
    board = analyse(runs, b=400, cluster_by="cluster")
    d = board.detectable()
    assert d is not None and d.unit == "cluster" and d.n_shared == 30
    assert np.isclose(d.sd, np.median(board.pairs.cluster_sd))
    assert "With 30 shared clusters this suite detects a difference of about ±" in render_report(board)


def test_swebench_by_repository_claims_no_detectable_difference_at_few_df() -> None:
    # 12 clusters, effective df about 3: pairs 0.3 apart stay unresolved, so "detects ±0.08" would be false.
    board = analyse(load_runs([str(realdata("swebench_verified.jsonl"))]), b=400, cluster_by="category")
    text = render_report(board)
    assert "this suite detects a difference of about" not in text
    assert "With 12 shared clusters and effective df as low as 3.33, no figure" in text


def _swe_shaped_comparison(seed: int) -> tuple[list[EvalRun], list[EvalRun]]:
    """Three 0/1 models on SWE-bench's repository sizes (effective df about 3), two of them moved."""
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(len(SWE_SIZES)), SWE_SIZES)
    base = (rng.random((3, g.size)) < 0.6).astype(float)
    pr = base.copy()
    for m in (0, 1):
        flip = rng.choice(g.size, 40, replace=False)
        pr[m, flip] = 1.0 - pr[m, flip]
    return (
        [r for m in range(3) for r in clustered_runs(f"m{m}", base[m], g)],
        [r for m in range(3) for r in clustered_runs(f"m{m}", pr[m], g)],
    )


def test_a_clustered_comparison_at_few_effective_df_gives_no_detectable_figure() -> None:
    base, pr = _swe_shaped_comparison(31)
    comparison = compare(base, pr, b=400, alpha=0.05, seed=0, cluster_by="cluster")
    d = comparison.detectable
    assert d is not None and d.unit == "cluster" and d.df < 10
    text = rule_text(comparison)
    assert "no figure of the change this suite detects holds" in text
    assert "this suite detects a change of about" not in text


def test_the_clustered_comparison_rule_names_the_cluster_robust_interval() -> None:
    base, pr = _swe_shaped_comparison(31)
    text = rule_text(compare(base, pr, b=400, alpha=0.05, seed=0, cluster_by="cluster"))
    assert "CR2 cluster-robust CI" in text and "bootstrap" not in text


def test_the_gates_too_few_clusters_reason_is_true_of_a_one_sided_test() -> None:
    # 5 clusters: a one-sided sign-flip test could reach 1/32 < 0.05, so the reason must not say that
    # no test can; it says the comparison asks for the two-sided test's fewest.
    g = np.repeat(np.arange(5), 40)
    (change,) = compare(
        clustered_runs("m", np.ones(g.size), g), clustered_runs("m", np.zeros(g.size), g), b=400, alpha=0.05,
        seed=0, cluster_by="cluster", fail_on_regression=True,
    ).models  # fmt: skip
    assert change.reason is not None and reason_text(change.reason).startswith("too few shared clusters (5 < 6)")
    assert "no cluster sign-flip test can reach" not in reason_text(change.reason)
