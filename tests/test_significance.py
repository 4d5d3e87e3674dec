"""The calibrated pairwise decision: exact tests, one tie rule, honest refusals, rank ranges, resolution."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats

from leaderboard import EvalRun, analyse
from leaderboard.cli import main as cli_main
from leaderboard.report.document import render_report
from leaderboard.report.json_report import render_json
from leaderboard.report.reasons import reason_text
from leaderboard.stats.parameters import min_resamples, resample_advice
from leaderboard.stats.significance import (
    BINOMIAL,
    EXACT,
    SADDLEPOINT,
    _exact,
    holm,
    min_tasks,
    quantised,
    sign_flip_test,
)


def run(model: str, task: str, score: float, category: str = "general") -> EvalRun:
    return EvalRun(model, task, "acc", score, category)


def paired(a: list[float], b: list[float]) -> list[EvalRun]:
    return [run("a", f"t{i:03d}", s) for i, s in enumerate(a)] + [run("b", f"t{i:03d}", s) for i, s in enumerate(b)]


def brute_force_p(d: np.ndarray) -> float:
    d = d[d != 0]
    if d.size == 0:
        return 1.0
    observed = abs(d.sum())
    hits = sum(
        abs(float(np.dot(signs, np.abs(d)))) >= observed - 1e-9 for signs in itertools.product((1, -1), repeat=d.size)
    )
    return hits / 2**d.size


# --- the exact test -------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_exact_sign_flip_p_equals_enumerating_every_pattern(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 13))
    d = [rng.integers(-1, 2, n).astype(float), np.round(rng.normal(0, 0.3, n), 2), rng.normal(0.1, 0.3, n)][seed % 3]
    p, method = sign_flip_test(d[None, :], seed=0)
    assert p[0] == pytest.approx(brute_force_p(d), abs=1e-12)
    assert method[0] == (EXACT if np.any(d) else 0)


def test_exact_sign_flip_p_equals_scipys_exact_permutation_test() -> None:
    rng = np.random.default_rng(7)
    d = rng.normal(0.2, 1.0, 16)
    p, _ = sign_flip_test(d[None, :], seed=0)
    reference = stats.permutation_test(
        (d,), np.mean, permutation_type="samples", n_resamples=np.inf, alternative="two-sided"
    ).pvalue
    assert p[0] == pytest.approx(reference, rel=1e-12)


@pytest.mark.parametrize(("wins", "losses"), [(30, 10), (25, 20), (40, 0), (15, 15), (120, 90)])
def test_zero_one_scores_get_the_exact_mcnemar_test_at_any_size(wins: int, losses: int) -> None:
    d = np.array([1.0] * wins + [-1.0] * losses + [0.0] * 7)
    p, method = sign_flip_test(d[None, :], seed=0)
    assert method[0] == BINOMIAL
    assert p[0] == pytest.approx(stats.binomtest(wins, wins + losses).pvalue, rel=1e-9)


def test_decimal_ties_count_as_ties() -> None:
    # 0.15 + 0.1 == 0.25 in decimal, not in binary floating point.
    d = np.array([0.15, 0.1, -0.25, 0.3, -0.05, 0.2])
    assert sign_flip_test(d[None, :], seed=0)[0][0] == pytest.approx(brute_force_p(d))


def test_many_tasks_take_the_saddlepoint_and_agree_with_the_t_test() -> None:
    d = np.random.default_rng(3).normal(0.05, 1.0, 5000)
    p, method = sign_flip_test(d[None, :])
    assert method[0] == SADDLEPOINT
    assert p[0] == pytest.approx(stats.ttest_1samp(d, 0).pvalue, rel=0.05)


def test_past_the_exact_limit_the_saddlepoint_is_close_to_the_exact_test() -> None:
    d = np.random.default_rng(5).normal(0.3, 1.0, 28)
    p, method = sign_flip_test(d[None, :])
    # The exact enumeration (checked above against brute force and scipy) run past its usual limit.
    q = quantised(d / 4.0)[None, :]
    exact = float(_exact(q, (np.sign(d).astype(np.int64) * q).sum(axis=1))[0])
    assert method[0] == SADDLEPOINT
    assert p[0] == pytest.approx(exact, rel=0.05)
    # All 30 one way: exactly 2 / 2^30, not a Monte Carlo floor.
    far = np.full((1, 30), 0.5) + np.linspace(0, 0.01, 30)
    assert sign_flip_test(far)[0][0] == 2.0**-29


def test_a_pairs_p_does_not_depend_on_the_other_pairs_tested_with_it() -> None:
    rng = np.random.default_rng(9)
    rows = rng.normal(0.1, 1.0, (5, 30))
    together, _ = sign_flip_test(rows)
    alone = [sign_flip_test(rows[i : i + 1])[0][0] for i in range(5)]
    assert together.tolist() == alone


def test_the_fewest_tasks_a_sign_flip_test_can_decide_on() -> None:
    assert [min_tasks(a) for a in (0.1, 0.05, 0.01)] == [5, 6, 8]
    # All k differences one way: the smallest p is 2 / 2^k.
    assert sign_flip_test(np.ones((1, 5)) * 0.3, seed=0)[0][0] == 2 / 32
    assert sign_flip_test(np.ones((1, 6)) * 0.3, seed=0)[0][0] == 2 / 64


# --- false positives and power, by simulation (a longer run: benchmarks/bench_significance.py) ---


def null_rows(kind: str, n: int, reps: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if kind == "binary":
        p = rng.uniform(0.1, 0.9, (reps, n))
        return (rng.random((reps, n)) < p).astype(float), (rng.random((reps, n)) < p).astype(float)
    base = rng.uniform(0.2, 0.8, (reps, n))
    return (
        np.clip(base + rng.normal(0, 0.15, (reps, n)), 0, 1),
        np.clip(base + rng.normal(0, 0.15, (reps, n)), 0, 1),
    )


@pytest.mark.parametrize("kind", ["binary", "continuous"])
@pytest.mark.parametrize("n", [6, 10, 20, 50, 200])
def test_the_test_alone_rejects_a_true_null_at_most_alpha_of_the_time(kind: str, n: int) -> None:
    reps = 20_000 if n <= 50 else 4_000
    a, b = null_rows(kind, n, reps, np.random.default_rng(n))
    p, _ = sign_flip_test(a - b, seed=1)
    rate = float(np.mean(p <= 0.05))
    assert rate <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / reps)


@pytest.mark.parametrize("kind", ["binary", "continuous"])
@pytest.mark.parametrize("n", [6, 10, 20, 50])
def test_significant_is_false_for_equal_models_at_most_alpha_of_the_time(kind: str, n: int) -> None:
    reps = 150
    a, b = null_rows(kind, n, reps, np.random.default_rng(100 + n))
    hits = sum(analyse(paired(list(a[r]), list(b[r])), seed=r).pairs[0].significant for r in range(reps))
    assert hits / reps <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / reps)


def test_four_one_way_disagreements_in_fifty_binary_tasks_are_not_significant() -> None:
    a = [1.0] * 30 + [1.0] * 4 + [0.0] * 16
    b = [1.0] * 30 + [0.0] * 4 + [0.0] * 16
    for seed in range(20):
        (pair,) = analyse(paired(a, b), seed=seed).pairs
        assert not pair.significant and pair.p_value == 0.125
        assert pair.reason is not None and reason_text(pair.reason) in ("exact test p = 0.125", "CI includes 0")


def test_three_disagreements_of_six_are_never_significant() -> None:
    (pair,) = analyse(paired([1, 1, 1, 0, 0, 1], [0, 0, 0, 0, 0, 1])).pairs
    assert pair.p_value == 0.25 and not pair.significant


def test_a_clear_gap_on_enough_tasks_is_significant_with_its_p() -> None:
    (pair,) = analyse(paired([0.9] * 8, [0.2] * 8)).pairs
    assert pair.significant and pair.reason is None and pair.p_value == 2 / 256 and pair.test == "exact sign-flip"


# --- one decision everywhere ----------------------------------------------------------------


def test_pairs_with_fewer_shared_tasks_than_the_test_needs_are_never_significant_anywhere() -> None:
    runs = [run(f"m{m}", f"t{t}", 0.1 + 0.15 * m + 0.001 * t) for m in range(5) for t in range(5)]
    board = analyse(runs)
    report = json.loads(render_json(board))
    assert not any(p.significant for p in board.pairs)
    assert not any(p["significant"] for p in report["pairs"])
    assert {reason_text(p.reason) for p in board.pairs if p.reason} == {"too few shared tasks (5 < 6)"}
    assert "**yes**" not in render_report(board)


def test_json_and_api_carry_the_same_decision_reason_and_p() -> None:
    rng = np.random.default_rng(2)
    runs = [run(f"m{m}", f"t{t:02d}", float(rng.uniform(0.3, 0.7) + 0.01 * m)) for m in range(6) for t in range(30)]
    board = analyse(runs)
    report = json.loads(render_json(board))
    for entry, pair in zip(report["pairs"], board.pairs, strict=True):
        assert entry["significant"] == pair.significant and entry["reason"] == (
            reason_text(pair.reason) if pair.reason else None
        )
        assert entry["p_value"] == pair.p_value and entry["p_adjusted"] == pair.p_adjusted


def test_a_significant_pair_has_a_ci_that_excludes_zero_and_a_small_p() -> None:
    rng = np.random.default_rng(11)
    scores = np.clip(rng.normal(0.4 + 0.05 * np.arange(8)[:, None], 0.2, (8, 40)), 0, 1)
    runs = [run(f"m{m}", f"t{t:02d}", float(scores[m, t])) for m in range(8) for t in range(40)]
    for pair in analyse(runs).pairs:
        if pair.significant:
            assert pair.ci_lo > 0 and pair.p_value <= 0.05
        else:
            assert pair.reason


# --- Holm -------------------------------------------------------------------------------------


def test_holm_adjusts_as_the_step_down_procedure_says() -> None:
    assert holm(np.array([0.01, 0.04, 0.03, 0.5])).tolist() == pytest.approx([0.04, 0.09, 0.09, 0.5])


def test_holm_makes_fewer_pairs_significant_and_the_notes_say_how_many_were_tested() -> None:
    rng = np.random.default_rng(4)
    scores = np.clip(rng.normal(0.5 + 0.02 * np.arange(10)[:, None], 0.15, (10, 60)), 0, 1)
    runs = [run(f"m{m}", f"t{t:02d}", float(scores[m, t])) for m in range(10) for t in range(60)]
    plain, corrected = analyse(runs, correction="none"), analyse(runs)
    assert sum(p.significant for p in corrected.pairs) < sum(p.significant for p in plain.pairs)
    assert all(c.p_adjusted >= c.p_value for c in corrected.pairs)
    assert any(reason_text(p.reason).startswith("Holm-adjusted p = ") for p in corrected.pairs if p.reason)
    assert "45 pairs tested at family-wise alpha = 0.05 (Holm's step-down" in render_report(corrected)
    assert "45 pairs tested at alpha = 0.05 per pair" in render_report(plain)


def test_the_cli_takes_the_correction(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "r.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [
        {"model_id": m, "task_id": f"t{t}", "metric_name": "acc", "score": 0.1 * (m == "a") + 0.01 * t}
        for m in "abc" for t in range(10)
    ]))  # fmt: skip
    assert cli_main([str(path), "--correction", "holm"]) == 0
    assert "Holm's step-down over the 2 pairs whose test can reach 0.05" in capsys.readouterr().out  # b = c: no test
    assert cli_main([str(path), "--correction", "none"]) == 0
    assert "tested at alpha = 0.05 per pair" in capsys.readouterr().out


# --- ties -------------------------------------------------------------------------------------


def test_a_model_a_hair_below_on_every_task_is_tied_not_worse() -> None:
    a = [0.5 + 0.01 * i for i in range(20)]
    board = analyse(paired(a, [s - 2e-12 for s in a]))
    (pair,) = board.pairs
    assert not pair.significant and pair.p_value == 1.0
    assert [r.win_rate for r in board.rows] == [1.0, 1.0]
    assert [r.model_id for r in board.rows] == ["a", "b"]  # equal means, equal win-rates: by id
    assert [(r.rank_lo, r.rank_hi) for r in board.rows] == [(1, 2), (1, 2)]


def test_near_equal_means_rank_as_equal_then_by_id() -> None:
    runs = [run("z-sum", "t1", 0.1), run("z-sum", "t2", 0.2), run("a-one", "t1", 0.3), run("a-one", "t2", 0.0)]
    runs += [run("z-sum", "t3", 0.0), run("a-one", "t3", 0.0)]
    board = analyse(runs)
    means = {r.model_id: r.mean_score for r in board.rows}
    assert means["z-sum"] > means["a-one"]  # (0.1 + 0.2) / 3 > 0.3 / 3 in floating point, by 1e-17
    assert [r.win_rate for r in board.rows] == [2 / 3, 2 / 3]
    assert [r.model_id for r in board.rows] == ["a-one", "z-sum"]


# --- refusing what cannot be honest ------------------------------------------------------------


@pytest.mark.parametrize(("b", "alpha"), [(1, 0.05), (399, 0.05), (50, 0.001), (199, 0.1)])
def test_too_few_resamples_for_the_tails_are_refused_naming_b(b: int, alpha: float) -> None:
    with pytest.raises(ValueError, match=rf"b must be at least {min_resamples(alpha)} at alpha"):
        analyse([run("m", "t", 0.5)], b=b, alpha=alpha)


def test_the_resample_floor_is_twenty_over_alpha() -> None:
    assert [min_resamples(a) for a in (0.05, 0.1, 0.01, 0.001)] == [400, 200, 2000, 20000]
    analyse([run("m", "t", 0.5)], b=400)


def test_the_cli_refuses_too_few_resamples(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        cli_main(["x.jsonl", "--b", "50", "--alpha", "0.001"])
    assert stop.value.code == 2
    assert "--b must be at least 20,000 at --alpha 0.001" in capsys.readouterr().err


def test_an_alpha_too_small_for_any_allowed_resample_count_says_so() -> None:
    advice = resample_advice(1e-300, "--b", "--alpha")
    assert advice.startswith("--alpha 1e-300 is too small") and "use --alpha >= 0.0002" in advice and len(advice) < 200


def test_a_ci_from_one_task_or_equal_scores_is_marked_not_informative() -> None:
    runs = [run("one", "t0", 0.9)] + [run("same", f"t{i}", 0.7) for i in range(5)]
    runs += [run("varied", f"t{i}", 0.1 * i) for i in range(5)]
    notes = {r.model_id: r.ci_note for r in analyse(runs).rows}
    assert notes == {"one": "n=1", "same": "all equal", "varied": None}


# --- rank ranges, top group, resolution ------------------------------------------------------


def separated_suite(gaps: list[float], n: int = 40, seed: int = 0) -> list[EvalRun]:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.3, 0.6, n)
    runs = []
    for m, gap in enumerate(gaps):
        scores = np.clip(base + gap + rng.normal(0, 0.01, n), 0, 1)
        runs += [run(f"m{m}", f"t{t:02d}", float(s)) for t, s in enumerate(scores)]
    return runs


def test_clearly_separated_models_have_single_ranks_and_a_top_group_of_one() -> None:
    board = analyse(separated_suite([0.3, 0.2, 0.1, 0.0]))
    assert [(r.rank_lo, r.rank_hi) for r in board.rows] == [(1, 1), (2, 2), (3, 3), (4, 4)]
    assert board.top_group == ("m0",)


def test_tied_leaders_share_a_rank_range_and_the_top_group() -> None:
    board = analyse(separated_suite([0.2, 0.2, 0.0]))
    assert [(r.rank_lo, r.rank_hi) for r in board.rows] == [(1, 2), (1, 2), (3, 3)]
    assert set(board.top_group) == {"m0", "m1"} and all(r.in_top_group for r in board.rows[:2])


def test_rank_ranges_are_in_the_report() -> None:
    report = json.loads(render_json(analyse(separated_suite([0.2, 0.2, 0.0]))))
    assert [(r["rank_lo"], r["rank_hi"]) for r in report["rows"]] == [(1, 2), (1, 2), (3, 3)]
    assert sorted(report["top_group"]) == ["m0", "m1"]


def test_resolution_covers_neighbours_and_the_leader_against_everyone() -> None:
    board = analyse(separated_suite([0.2, 0.2, 0.0, -0.1]))
    adjacent, leader = board.resolution()
    ranked = [r.model_id for r in board.rows]
    assert [{p.model_a, p.model_b} for p in adjacent] == [set(ranked[i : i + 2]) for i in range(3)]
    assert [{p.model_a, p.model_b} for p in leader] == [{ranked[0], other} for other in ranked[1:]]
    assert len(leader) == 3 and not adjacent[0].significant
    report = json.loads(render_json(board))
    assert report["resolution"]["adjacent"][0]["separated"] is False


def test_no_pair_carries_a_post_hoc_tasks_needed_figure() -> None:
    board = analyse(separated_suite([0.2, 0.2, 0.0, -0.1]))
    assert all(p.tasks_needed is None and p.clusters_needed is None for p in board.pairs)
    report = json.loads(render_json(board))
    assert {p["tasks_needed"] for p in report["pairs"]} == {None}


# --- categories and win-rate fine print -------------------------------------------------------


def test_rows_count_tasks_per_category() -> None:
    runs = [run("m", f"t{i}", 0.5, "math" if i < 7 else "code") for i in range(9)]
    (row,) = analyse(runs).rows
    assert dict(row.category_tasks) == {"code": 2, "math": 7}
    assert json.loads(render_json(analyse(runs)))["rows"][0]["category_tasks"] == {"code": 2, "math": 7}


def test_tasks_every_model_tied_on_are_counted_and_noted() -> None:
    runs = [*paired([0.0, 0.0, 1.0, 0.5], [0.0, 0.0, 0.0, 0.5]), run("a", "solo", 0.3)]
    board = analyse(runs)
    assert board.all_tied_tasks == 3
    assert json.loads(render_json(board))["counts"]["all_tied_tasks"] == 3
    assert "3 of 5 tasks were tied by every model that ran them" in render_report(board)


def test_a_reason_never_prints_p_on_the_other_side_of_alpha() -> None:
    from leaderboard.report.reasons import p_text

    assert p_text(0.05004, 0.05) == "p = 0.05004"  # not "0.05" beside "not significant"
    assert float(p_text(0.0499999, 0.05).removeprefix("p = ")) <= 0.05
    assert p_text(0.125, 0.05) == "p = 0.125"
    assert p_text(0.05, 0.05) == "p = 0.05"
    assert p_text(0.0002, 0.05) == "p < 0.001"  # the tables' floor, in the same words
