"""The statistics, as leaderboard-aggregation.md and issue 2 specify them."""

from __future__ import annotations

import dataclasses
import math
import random

import numpy as np
import pytest
import scipy.stats
from conftest import demo_suite, run
from hypothesis import given, settings
from hypothesis import strategies as st

from leaderboard import (
    EvalRun,
    InvalidEvalRuns,
    aggregate,
    analyse,
    bootstrap_mean_ci,
    bootstrap_pairwise_diff,
    pairwise_diffs,
)
from leaderboard.stats.resampling import EXACT_LIMIT, EXACT_PAIR_LIMIT, encode_ids, keyed_rng


def scipy_ci(x: np.ndarray, b: int, alpha: float, seed: int) -> tuple[float, float]:
    res = scipy.stats.bootstrap(
        (x,),
        np.mean,
        n_resamples=b,
        confidence_level=1 - alpha,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return res.confidence_interval.low, res.confidence_interval.high


# --- the bootstrap helpers --------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 12, 41, 500])
@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.025])
def test_mean_ci_is_scipys_percentile_interval_to_the_last_bit(n: int, alpha: float) -> None:
    x = np.random.default_rng(n).random(n)
    for seed in range(3):
        assert bootstrap_mean_ci(x, 1000, alpha, rng=np.random.default_rng(seed)) == scipy_ci(x, 1000, alpha, seed)


def test_pairwise_ci_is_scipys_interval_of_the_per_task_differences() -> None:
    rng = np.random.default_rng(7)
    a, b = rng.random(60), rng.random(60)
    ours = bootstrap_pairwise_diff(a, b, 999, 0.05, rng=np.random.default_rng(3))
    assert ours == scipy_ci(a - b, 999, 0.05, 3)


def test_bootstrap_is_deterministic_for_a_seed() -> None:
    x = np.random.default_rng(1).random(30)
    assert bootstrap_mean_ci(x, seed=5) == bootstrap_mean_ci(x, seed=5)
    assert bootstrap_mean_ci(x, seed=5) != bootstrap_mean_ci(x, seed=6)


def test_ci_of_a_single_score_is_that_score() -> None:
    assert bootstrap_mean_ci([0.7]) == (0.7, 0.7)


def test_ci_of_a_constant_series_is_degenerate() -> None:
    mean = float(np.mean([0.4] * 25))  # 0.4 up to rounding, as in every resample
    assert bootstrap_mean_ci([0.4] * 25) == (mean, mean)
    (row,) = aggregate([run("m", f"t{i}", 0.4) for i in range(25)])
    assert row.mean_ci_lo == row.mean_score == row.mean_ci_hi


def test_ci_narrows_as_tasks_grow() -> None:
    rng = np.random.default_rng(2)
    widths = []
    for n in (10, 100, 1000):
        lo, hi = bootstrap_mean_ci(rng.random(n), 1000)
        widths.append(hi - lo)
    assert widths[0] > 2 * widths[1] > 4 * widths[2]


def test_helpers_refuse_bad_parameters() -> None:
    with pytest.raises(ValueError, match="alpha"):
        bootstrap_mean_ci([0.1, 0.2], alpha=1.5)
    with pytest.raises(ValueError, match="resamples"):
        bootstrap_mean_ci([0.1, 0.2], B=0)
    with pytest.raises(ValueError, match="non-empty"):
        bootstrap_mean_ci([])
    with pytest.raises(ValueError, match="align"):
        bootstrap_pairwise_diff([0.1], [0.1, 0.2])


# --- aggregate --------------------------------------------------------------------------


def test_empty_input_gives_empty_tables() -> None:
    assert aggregate([]) == []
    assert pairwise_diffs([]) == []


def test_model_ci_is_the_exact_bootstrap_keyed_by_its_task_set() -> None:
    runs = demo_suite(tasks=60)  # from 50 tasks up: below, the interval may be widened (the next tests)
    row = next(r for r in aggregate(runs, b=500, seed=3) if r.model_id == "model-1")
    own = sorted((r for r in runs if r.model_id == "model-1"), key=lambda r: r.task_id)
    scores = np.array([r.score for r in own])
    rng = keyed_rng(3, encode_ids([r.task_id for r in own]))
    assert (row.mean_ci_lo, row.mean_ci_hi) == bootstrap_mean_ci(scores, 500, rng=rng)
    assert row.mean_score == np.mean(scores)


def test_rows_sort_by_mean_then_win_rate_then_id() -> None:
    runs = [
        run("b", "t1", 0.5), run("b", "t2", 0.5), run("b", "t3", 0.5),
        run("a", "t1", 0.5), run("a", "t2", 0.5), run("a", "t3", 0.5),
        run("c", "t1", 0.75), run("c", "t2", 0.75), run("c", "t3", 0.0),
        run("d", "t1", 0.6), run("d", "t2", 0.1), run("d", "t3", 0.1),
    ]  # fmt: skip
    rows = aggregate(runs)
    assert [r.mean_score for r in rows[:3]] == [0.5, 0.5, 0.5]
    assert [r.model_id for r in rows] == ["c", "a", "b", "d"]


def test_rank_by_win_rate_puts_the_most_frequent_winner_first() -> None:
    runs = [run("often", "t0", 0.9), run("often", "t1", 0.9), run("often", "t2", 0.0)]
    runs += [run("higher", "t0", 0.8), run("higher", "t1", 0.8), run("higher", "t2", 0.9)]
    assert [r.model_id for r in aggregate(runs)] == ["higher", "often"]
    assert [r.model_id for r in aggregate(runs, rank_by="win-rate")] == ["often", "higher"]


def test_category_means_are_per_model_per_category() -> None:
    runs = [run("m", "t1", 0.2, "math"), run("m", "t2", 0.4, "math"), run("m", "t3", 1.0, "code")]
    (row,) = aggregate(runs)
    assert dict(row.categories) == {"code": 1.0, "math": pytest.approx(0.3)}


def test_unknown_rank_by_is_refused() -> None:
    with pytest.raises(ValueError, match="rank_by"):
        aggregate([run("m", "t", 0.5)], rank_by="median")  # type: ignore[arg-type]


# --- win-rate -----------------------------------------------------------------------------


def reference_win_rate(model: str, runs: list) -> tuple[float, int]:
    """The specification's _win_rate, verbatim in substance."""
    by_task: dict[str, dict[str, float]] = {}
    for r in runs:
        by_task.setdefault(r.task_id, {})[r.model_id] = r.score
    wins = total = 0
    for scores in by_task.values():
        if model not in scores:
            continue
        total += 1
        if math.isclose(scores[model], max(scores.values()), abs_tol=1e-12):
            wins += 1
    return (wins / total, total) if total else (0.0, 0)


def win_rates(runs: list) -> dict[str, tuple[float, int]]:
    return {r.model_id: (r.win_rate, r.tasks_completed) for r in aggregate(runs, b=400)}


def test_tied_models_each_get_a_full_win() -> None:
    runs = [run("a", "t", 0.5), run("b", "t", 0.5), run("c", "t", 0.1)]
    assert win_rates(runs) == {"a": (1.0, 1), "b": (1.0, 1), "c": (0.0, 1)}


def test_a_near_tie_within_1e_12_absolute_wins() -> None:
    runs = [run("a", "t", 1e-13), run("b", "t", 0.0), run("c", "t", 2e-12)]
    assert win_rates(runs) == {"a": (0.0, 1), "b": (0.0, 1), "c": (1.0, 1)}
    runs = [run("a", "t", 5e-13), run("b", "t", 0.0)]
    assert win_rates(runs) == {"a": (1.0, 1), "b": (1.0, 1)}


def test_a_near_tie_within_1e_9_relative_wins() -> None:
    best = 0.9
    runs = [run("a", "t", best), run("b", "t", best * (1 - 5e-10)), run("c", "t", best * (1 - 5e-9))]
    assert win_rates(runs) == {"a": (1.0, 1), "b": (1.0, 1), "c": (0.0, 1)}


def test_win_rate_counts_only_the_tasks_a_model_ran() -> None:
    runs = [run("a", "t1", 0.9), run("a", "t2", 0.1), run("b", "t2", 0.5), run("b", "t3", 0.5)]
    assert win_rates(runs) == {"a": (0.5, 2), "b": (1.0, 2)}


def test_one_model_wins_every_task() -> None:
    assert win_rates([run("solo", f"t{i}", i / 10) for i in range(5)]) == {"solo": (1.0, 5)}


def test_one_task_one_winner() -> None:
    assert win_rates([run("a", "t", 0.3), run("b", "t", 0.4)]) == {"a": (0.0, 1), "b": (1.0, 1)}


near = st.sampled_from([0.0, 1e-13, 5e-13, 1e-12, 1.5e-12, 1e-10, 5e-10, 1e-9, 2e-9, 1e-6])


@settings(max_examples=200, deadline=None)
@given(
    base=st.floats(0.0, 1.0),
    offsets=st.lists(st.tuples(near, st.booleans()), min_size=1, max_size=5),
)
def test_vectorised_win_rate_equals_math_isclose_on_near_ties(base: float, offsets: list) -> None:
    runs = [run("top", "t", base)]
    for i, (offset, relative) in enumerate(offsets):
        score = base * (1 - offset) if relative else base - offset
        runs.append(run(f"m{i}", "t", min(1.0, max(0.0, score))))
    assert win_rates(runs) == {m: reference_win_rate(m, runs) for m in {r.model_id for r in runs}}


# --- pairwise -------------------------------------------------------------------------------


def test_identical_models_differ_by_exactly_zero_and_are_never_significant() -> None:
    runs = demo_suite()
    runs += [run("twin", r.task_id, r.score, r.category) for r in runs if r.model_id == "model-0"]
    (pair,) = [p for p in pairwise_diffs(runs) if {p.model_a, p.model_b} == {"twin", "model-0"}]
    assert (pair.mean_diff, pair.ci_lo, pair.ci_hi, pair.significant) == (0.0, 0.0, 0.0, False)


def test_identical_models_on_a_large_task_set_differ_by_exactly_zero() -> None:
    rng = np.random.default_rng(0)
    scores = rng.random(EXACT_LIMIT + 200)
    runs = [run(m, f"t{i}", float(s)) for m in ("a", "b") for i, s in enumerate(scores)]
    runs.append(run("c", "only-c", 0.5))
    (pair,) = [p for p in pairwise_diffs(runs) if {p.model_a, p.model_b} == {"a", "b"}]
    assert (pair.mean_diff, pair.ci_lo, pair.ci_hi, pair.significant) == (0.0, 0.0, 0.0, False)


def test_many_copies_of_a_model_on_a_large_task_set_all_differ_by_exactly_zero() -> None:
    rng = np.random.default_rng(3)
    n = EXACT_LIMIT + 100
    base = rng.random(n)
    runs = [run(f"copy-{c}", f"t{i}", float(x)) for c in range(7) for i, x in enumerate(base)]
    runs += [run(f"other-{o}", f"t{i}", float(x)) for o in range(6) for i, x in enumerate(rng.random(n))]
    copies = [p for p in pairwise_diffs(runs, b=400) if p.model_a.startswith("copy") and p.model_b.startswith("copy")]
    assert len(copies) == 21
    assert {(p.mean_diff, p.ci_lo, p.ci_hi, p.significant) for p in copies} == {(0.0, 0.0, 0.0, False)}


def test_models_with_no_shared_task_are_reported_and_never_significant() -> None:
    (pair,) = pairwise_diffs([run("a", "t1", 0.9), run("b", "t2", 0.1)])
    assert pair.n_shared == 0 and not pair.significant
    assert math.isnan(pair.mean_diff) and math.isnan(pair.ci_lo) and math.isnan(pair.ci_hi)


def test_a_clear_difference_is_significant_and_points_from_the_better_model() -> None:
    runs = [run("good", f"t{i}", 0.8 + 0.01 * (i % 5)) for i in range(40)]
    runs += [run("bad", f"t{i}", 0.3 + 0.01 * (i % 7)) for i in range(40)]
    (pair,) = pairwise_diffs(runs)
    assert (pair.model_a, pair.model_b, pair.n_shared) == ("good", "bad", 40)
    assert pair.significant and 0 < pair.ci_lo <= pair.mean_diff <= pair.ci_hi


def test_the_pair_ci_is_the_paired_bootstrap_over_the_shared_tasks() -> None:
    runs = [run("a", f"t{i}", 0.1 * (i % 10)) for i in range(30)] + [run("a", "extra", 1.0)]
    runs += [run("b", f"t{i}", 0.05 * (i % 9)) for i in range(30)]
    (pair,) = pairwise_diffs(runs, b=400, seed=9)
    tasks = sorted(f"t{i}" for i in range(30))
    a = np.array([0.1 * (int(t[1:]) % 10) for t in tasks])
    b = np.array([0.05 * (int(t[1:]) % 9) for t in tasks])
    draws = keyed_rng(9, encode_ids(tasks)).integers(0, 30, (400, 30))
    lo, hi = np.percentile(a[draws].mean(axis=1) - b[draws].mean(axis=1), [2.5, 97.5])
    assert pair.n_shared == 30
    assert pair.ci_lo == pytest.approx(lo, abs=1e-12) and pair.ci_hi == pytest.approx(hi, abs=1e-12)


def test_significance_never_changes_the_ranking() -> None:
    runs = [run("a", f"t{i}", 0.51) for i in range(3)] + [run("b", f"t{i}", 0.50) for i in range(3)]
    board = analyse(runs)
    assert [r.model_id for r in board.rows] == ["a", "b"]
    assert board.pairs[0].n_shared == 3


# --- determinism and stability ----------------------------------------------------------------


def test_the_same_records_in_any_order_give_identical_results() -> None:
    runs = demo_suite(models=5)
    shuffled = runs[:]
    random.Random(4).shuffle(shuffled)
    assert analyse(runs) == analyse(shuffled)


def test_a_small_suite_of_continuous_scores_has_at_least_the_t_interval() -> None:
    scores = [0.42, 0.55, 0.61, 0.38, 0.7, 0.49, 0.52, 0.66, 0.45, 0.58]
    row = analyse([EvalRun("m", f"t{i}", "acc", s) for i, s in enumerate(scores)], b=1000).rows[0]
    half = scipy.stats.t.ppf(0.975, 9) * np.std(scores, ddof=1) / math.sqrt(10)
    assert row.mean_ci_lo <= np.mean(scores) - half + 1e-12 and row.mean_ci_hi >= np.mean(scores) + half - 1e-12


def test_a_small_suite_near_the_ceiling_reaches_further_from_the_bound() -> None:
    scores = [1.0, 0.99, 0.98, 1.0, 0.97, 0.99, 0.9, 1.0]
    row = analyse([EvalRun("m", f"t{i}", "acc", s) for i, s in enumerate(scores)], b=1000).rows[0]
    assert row.mean_score - row.mean_ci_lo > row.mean_ci_hi - row.mean_score and row.mean_ci_hi <= 1.0


def test_a_different_seed_gives_different_intervals() -> None:
    runs = demo_suite(tasks=60)  # below 50 tasks a t-based end may be the one shown
    assert aggregate(runs, seed=1) != aggregate(runs, seed=2)


def test_adding_a_model_changes_no_other_models_ci_nor_other_pairs() -> None:
    runs = demo_suite(models=3)
    newcomer = [run("newcomer", f"task-{t:02d}", 0.5) for t in range(0, 12, 2)] + [run("newcomer", "new-task", 1.0)]
    # Per pair: with a family-wise correction a pair's adjusted p depends on the family by design.
    before, after = analyse(runs, correction="none"), analyse(runs + newcomer, correction="none")
    ci = {r.model_id: (r.mean_ci_lo, r.mean_ci_hi, r.mean_score) for r in before.rows}
    assert {r.model_id: (r.mean_ci_lo, r.mean_ci_hi, r.mean_score) for r in after.rows if r.model_id in ci} == ci
    untouched = [p for p in after.pairs if "newcomer" not in (p.model_a, p.model_b)]
    assert sorted(untouched, key=lambda p: (p.model_a, p.model_b)) == sorted(
        before.pairs, key=lambda p: (p.model_a, p.model_b)
    )


def test_on_large_task_sets_adding_a_model_moves_nothing_beyond_rounding() -> None:
    rng = np.random.default_rng(5)
    n = EXACT_LIMIT + 300
    runs = [run(m, f"t{i:05d}", float(rng.random())) for m in ("a", "b", "c") for i in range(n) if (i + ord(m)) % 13]
    extra = [run("d", f"t{i:05d}", float(rng.random())) for i in range(n + 50)]
    before, after = analyse(runs, b=400), analyse(runs + extra, b=400)
    old = {r.model_id: r for r in before.rows}
    for row in after.rows:
        if row.model_id in old:
            assert row.mean_ci_lo == pytest.approx(old[row.model_id].mean_ci_lo, abs=1e-14)
            assert row.mean_ci_hi == pytest.approx(old[row.model_id].mean_ci_hi, abs=1e-14)


def test_large_task_sets_use_a_poisson_bootstrap_close_to_the_exact_one() -> None:
    rng = np.random.default_rng(11)
    n = 3000
    scores = rng.beta(2, 3, n)
    (row,) = aggregate([run("m", f"t{i}", float(s)) for i, s in enumerate(scores)], b=2000)
    lo, hi = scipy_ci(scores, 2000, 0.05, 0)
    width = hi - lo
    # Monte Carlo error of a 2.5% quantile from 2000 resamples is a few % of the width.
    assert abs(row.mean_ci_lo - lo) < 0.08 * width
    assert abs(row.mean_ci_hi - hi) < 0.08 * width


def test_a_pair_with_its_own_large_shared_set_is_close_to_the_exact_paired_bootstrap() -> None:
    rng = np.random.default_rng(12)
    n = EXACT_PAIR_LIMIT + 150
    a, b = rng.beta(3, 2, n), rng.beta(2, 2, n)
    runs = [run("a", f"t{i}", float(x)) for i, x in enumerate(a)] + [run("a", "only-a", 0.5)]
    runs += [run("b", f"t{i}", float(x)) for i, x in enumerate(b)] + [run("b", "only-b", 0.5)]
    (pair,) = pairwise_diffs(runs, b=2000)
    lo, hi = scipy_ci(a - b, 2000, 0.05, 0)
    assert pair.n_shared == n
    assert abs(pair.ci_lo - lo) < 0.08 * (hi - lo) and abs(pair.ci_hi - hi) < 0.08 * (hi - lo)


# --- validation -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (run("m", "t", 1.5), "score"),
        (run("m", "t", -0.01), "score"),
        (run("m", "t", math.nan), "score"),
        (run("m", "t", math.inf), "score"),
        (run("m", "t", True), "score"),  # type: ignore[arg-type]
        (run("m", "t", "0.5"), "score"),  # type: ignore[arg-type]
        (run("", "t", 0.5), "model_id"),
        (run("m", "  ", 0.5), "task_id"),
        (run("m", "t", 0.5, category=""), "category"),
        (run("m", "t", 0.5, weight=0.0), "weight"),
        (run("m", "t", 0.5, weight=math.nan), "weight"),
    ],
)
def test_aggregate_refuses_an_invalid_record(bad, field: str) -> None:
    with pytest.raises(InvalidEvalRuns) as caught:
        aggregate([run("ok", "t", 0.5), bad])
    assert [p.field for p in caught.value.problems] == [field]
    assert caught.value.problems[0].index == 1


def test_aggregate_refuses_a_duplicate_pair_and_names_both_places() -> None:
    with pytest.raises(InvalidEvalRuns) as caught:
        aggregate([run("m", "t", 0.5), run("x", "t", 0.5), run("m", "t", 0.6)])
    (problem,) = caught.value.problems
    assert problem.index == 2 and "record #0" in problem.message


def test_every_problem_is_reported_together() -> None:
    with pytest.raises(InvalidEvalRuns) as caught:
        aggregate([run("m", "t", 2.0), run("m", "u", -1.0), run("m", "u", 0.5)])
    assert len(caught.value.problems) == 3


@settings(max_examples=30, deadline=None)
@given(
    scores=st.dictionaries(
        st.tuples(st.sampled_from(["a", "b", "c", "d"]), st.sampled_from([f"t{i}" for i in range(9)])),
        st.floats(0.0, 1.0),
        min_size=1,
        max_size=30,
    ),
    order=st.randoms(use_true_random=False),
)
def test_any_order_of_the_records_gives_the_same_report(scores: dict, order: random.Random) -> None:
    from leaderboard.report.json_report import render_json

    runs = [run(m, t, s, category=t[-1]) for (m, t), s in scores.items()]
    shuffled = runs[:]
    order.shuffle(shuffled)
    assert render_json(analyse(runs, b=400)) == render_json(analyse(shuffled, b=400))


def test_poisson_rows_rebuilt_per_block_give_the_same_numbers_as_rows_kept(monkeypatch) -> None:
    import leaderboard.stats.bootstrap as engine

    rng = np.random.default_rng(8)
    n = EXACT_LIMIT + 50
    runs = [run(m, f"t{i}", float(rng.random())) for m in "abcd" for i in range(n) if rng.random() > 0.1]
    monkeypatch.setattr(engine, "_WEIGHT_ELEMENTS", 50 * n)  # several weight blocks
    kept = analyse(runs, b=400)
    monkeypatch.setattr(engine, "_KEEP_ELEMENTS", 0)
    assert analyse(runs, b=400) == kept


def test_records_built_in_code_meet_the_loaders_id_rules() -> None:
    with pytest.raises(InvalidEvalRuns, match="leading or trailing whitespace"):
        analyse([run("gpt-4 ", "t", 0.5)])
    with pytest.raises(InvalidEvalRuns, match="at most 512"):
        analyse([run("m" * 513, "t", 0.5)])


def _counting_model_resamples(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Patch the engine to record each time it resamples the models; the analysis cache starts empty."""
    from leaderboard.stats import bootstrap, cache

    made: list[object] = []
    original = bootstrap.BootstrapEngine.models

    def models(self: bootstrap.BootstrapEngine) -> np.ndarray:
        made.append(self)
        return original(self)

    monkeypatch.setattr(bootstrap.BootstrapEngine, "models", models)
    cache.forget()
    return made


def test_the_specifications_rows_then_pairs_on_one_list_resample_the_models_once(monkeypatch) -> None:
    made = _counting_model_resamples(monkeypatch)
    runs = demo_suite()
    aggregate(runs, b=400)
    pairwise_diffs(runs, b=400)
    assert len(made) == 1


def test_equal_records_that_are_new_objects_are_analysed_afresh(monkeypatch) -> None:
    made = _counting_model_resamples(monkeypatch)
    runs = demo_suite()
    first = analyse(runs, b=400)
    again = analyse([dataclasses.replace(r) for r in runs], b=400)
    assert len(made) == 2 and again == first
