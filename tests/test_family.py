"""Claims about the whole table, kept at alpha (issue 14): the family, the gate, the level in force, power.

The simulations here are short versions of benchmarks/bench_family.py (fixed seeds, a few dozen
replications); the bound each asserts leaves room for the Monte Carlo error of that many.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats

from leaderboard import EvalRun, analyse
from leaderboard.action.settings import DEFAULTS
from leaderboard.config import parse_config
from leaderboard.options import INPUTS
from leaderboard.pipeline import evaluate, parameters
from leaderboard.report.comparison import comparison_markdown
from leaderboard.report.comparison_json import comparison_dict
from leaderboard.report.comparison_method import rule_text
from leaderboard.report.document import render_report
from leaderboard.report.json_report import report_dict
from leaderboard.report.reasons import reason_text
from leaderboard.stats.comparison import compare
from leaderboard.stats.family import (
    adjust,
    one_sided,
    step_levels,
)
from leaderboard.stats.significance import SADDLEPOINT, sign_flip_test
from leaderboard.validation import InvalidEvalRuns

ROOT = Path(__file__).resolve().parent.parent


def records(scores: np.ndarray, prefix: str = "m") -> list[EvalRun]:
    return [
        EvalRun(f"{prefix}{m:02d}", f"t{t:04d}", "acc", float(scores[m, t]))
        for m in range(scores.shape[0])
        for t in range(scores.shape[1])
    ]


def binary(rng: np.random.Generator, p: np.ndarray) -> np.ndarray:
    return (rng.random(p.shape) < p).astype(float)


# --- the default, everywhere --------------------------------------------------------------------


def test_the_default_correction_is_holm_in_the_library_the_engine_the_action_and_its_manifest() -> None:
    runs = records(np.array([[0.2, 0.4, 0.6], [0.3, 0.5, 0.7]]))
    assert analyse(runs).correction == "holm"
    assert parameters(None, b=None, alpha=None, seed=None).correction == "holm"
    assert INPUTS["pairwise-correction"].default == "holm"
    manifest = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    # Empty in the manifest so that the configuration may decide; the description names the default.
    assert DEFAULTS["pairwise-correction"] == manifest["inputs"]["pairwise-correction"]["default"] == ""
    assert "`holm`" in manifest["inputs"]["pairwise-correction"]["description"]


def test_the_configurations_statistics_block_sets_the_correction_unless_the_caller_does() -> None:
    config = parse_config("statistics:\n  correction: none\n", "c.yml")
    runs = records(np.array([[0.2, 0.4, 0.6], [0.3, 0.5, 0.7]]))
    assert evaluate(runs, config)[0].correction == "none"
    assert evaluate(runs, config, correction="holm")[0].correction == "holm"


def test_an_unknown_correction_in_the_configuration_is_a_problem_at_its_line() -> None:
    with pytest.raises(InvalidEvalRuns) as info:
        parse_config("statistics:\n  correction: bonferroni\n", "c.yml")
    (problem,) = info.value.problems
    assert problem.field == "statistics.correction" and problem.line == 2 and "holm, none" in problem.message


# --- the pairs' family --------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "models", "tasks"), [("binary", 20, 200), ("continuous", 20, 200), ("binary", 5, 50)])
def test_equal_models_make_no_significant_pair_in_more_than_alpha_of_tables(kind: str, models: int, tasks: int) -> None:
    rng = np.random.default_rng(11)
    reps, any_significant = 40, 0
    for _ in range(reps):
        if kind == "binary":
            p = np.broadcast_to(rng.uniform(0.1, 0.9, tasks), (models, tasks))
            scores = binary(rng, p)
        else:
            scores = np.clip(rng.uniform(0.2, 0.8, tasks) + 0.15 * rng.standard_normal((models, tasks)), 0, 1)
        any_significant += bool(analyse(records(scores)).pairs.significant.any())
    # Per pair, 83-96% of these tables had a false "significant"; at alpha, ~2 of 40. 6 is ~2.4 SE above.
    assert any_significant <= 6


def test_a_rank_range_comes_from_the_family_wise_decisions_and_its_best_rank_from_the_set_for_the_best() -> None:
    rng = np.random.default_rng(3)
    p = np.broadcast_to(rng.uniform(0.3, 0.7, 300), (8, 300)) + 0.03 * np.arange(8)[:, None]
    runs = records(binary(rng, np.clip(p, 0, 1)))
    holm, per_pair = analyse(runs), analyse(runs, correction="none")
    for board in (holm, per_pair):
        significant = board.pairs.significant
        assert board.best is not None
        for k, row in enumerate(board.rows):
            ahead = int(np.count_nonzero(significant & (board.pairs.b == k)))
            assert row.rank_lo == (1 if row.model_id in board.best.members else max(2, 1 + ahead))
            assert row.rank_hi == len(board.rows) - int(np.count_nonzero(significant & (board.pairs.a == k)))
        assert board.top_group == board.best.members
    assert int(holm.pairs.significant.sum()) < int(per_pair.pairs.significant.sum())
    assert set(per_pair.top_group) <= set(holm.top_group)


def test_a_pair_whose_test_cannot_reach_alpha_is_not_in_the_family_and_keeps_its_raw_p() -> None:
    scores = np.full((3, 40), 0.5)
    scores[1, :4] = 0.6  # four differences: the smallest two-sided p is 2 / 16
    scores[2] = np.linspace(0.0, 1.0, 40)
    board = analyse(records(scores))
    pair = next(p for p in board.pairs if {p.model_a, p.model_b} == {"m00", "m01"})
    assert (
        pair.p_adjusted == pair.p_value == 0.125
        and pair.reason is not None
        and reason_text(pair.reason) == "exact test p = 0.125"
    )  # not Holm-adjusted
    assert board.pairs.family == 2 and report_dict(board)["counts"]["family"] == 2  # type: ignore[index]


def test_holms_level_in_force_separates_a_pair_exactly_when_its_p_is_at_most_it() -> None:
    p = np.array([0.001, 0.004, 0.03, 0.3, 0.018])
    member = np.ones(5, dtype=bool)
    adjusted = adjust(p, member, "holm")
    levels = step_levels(adjusted, member, 0.05, "holm")
    # Two separated (0.001 <= 0.05/5, 0.004 <= 0.05/4), then 0.018 > 0.05/3 stops the step-down.
    assert (adjusted <= 0.05).tolist() == [True, True, False, False, False]
    assert levels.tolist() == pytest.approx([0.01, 0.0125, 0.05 / 3, 0.05 / 3, 0.05 / 3])
    for k in (2, 3, 4):
        moved = p.copy()
        moved[k] = 0.05 / 3 * 0.999
        assert adjust(moved, member, "holm")[k] <= 0.05
        moved[k] = 0.05 / 3 * 1.001
        assert adjust(moved, member, "holm")[k] > 0.05


def test_a_pair_past_the_exact_limit_can_reach_holms_first_step_in_a_large_family() -> None:
    rng = np.random.default_rng(5)
    d = rng.normal(0.3, 0.2, (1, 60)) * rng.uniform(0.2, 1.0, (1, 60))  # unequal magnitudes
    p, method = sign_flip_test(d)
    assert method[0] == SADDLEPOINT and p[0] < 0.05 / 100_000


def test_the_saddlepoint_p_stays_valid_under_the_null() -> None:
    rng = np.random.default_rng(8)
    magnitudes = rng.uniform(0.01, 1.0, 30)
    d = magnitudes * rng.choice([-1.0, 1.0], (20_000, 30))
    p, method = sign_flip_test(d)
    assert (method == SADDLEPOINT).all()
    for level in (0.0005, 0.001, 0.01, 0.05):
        hits = int(np.count_nonzero(p <= level))
        assert hits <= 20_000 * level + 3 * math.sqrt(20_000 * level)


# --- the gate's family --------------------------------------------------------------------------


def test_the_one_sided_p_for_a_drop_of_0_1_scores_is_the_exact_binomial_lower_tail() -> None:
    d = np.zeros((1, 60))
    d[0, :7] = 1.0
    d[0, 7:25] = -1.0  # 7 up, 18 down of 25 discordant
    p, _ = sign_flip_test(d, seed=0)
    assert one_sided(d, p, -1)[0] == pytest.approx(stats.binom.cdf(7, 25, 0.5), rel=1e-9)
    assert one_sided(d, p, +1)[0] == 1.0


def test_the_gate_of_twenty_unchanged_models_fails_in_at_most_alpha_of_runs() -> None:
    rng = np.random.default_rng(2)
    reps, fails = 30, 0
    for _ in range(reps):
        p = 1.0 / (1.0 + np.exp(rng.normal(0, 1.5, 50)[None, :] - rng.normal(0, 1, 20)[:, None]))
        base, pr = records(binary(rng, p)), records(binary(rng, p))
        fails += bool(compare(base, pr, b=400, alpha=0.05, seed=0, fail_on_regression=True).regressions)
    # Per model it failed 25-30% of these runs; at alpha, ~1.5 of 30.
    assert fails <= 5


def test_the_gate_is_family_wise_whenever_it_is_on_even_with_correction_none() -> None:
    scores = np.random.default_rng(1).uniform(0.2, 0.8, (3, 30))
    runs = records(scores)
    gate = compare(runs, runs, b=400, alpha=0.05, seed=0, correction="none", fail_on_regression=True)
    per_model = compare(runs, runs, b=400, alpha=0.05, seed=0, correction="none")
    assert (gate.correction, gate.one_sided) == ("holm", True)
    assert (per_model.correction, per_model.one_sided) == ("none", False)


def test_one_model_that_drops_five_points_among_twenty_is_flagged_on_2000_binary_tasks() -> None:
    rng = np.random.default_rng(3)
    p = 1.0 / (1.0 + np.exp(rng.normal(0, 1.5, 2000)[None, :] - rng.normal(0, 1, 20)[:, None]))
    dropped = p.copy()
    dropped[0] = p[0] * (1.0 - 0.05 / p[0].mean())  # the mean drops by exactly 5 points
    result = compare(records(binary(rng, p)), records(binary(rng, dropped)), b=400, alpha=0.05, seed=0)
    assert [m.model_id for m in result.regressions] == ["m00"]
    flagged = result.regressions[0]
    assert flagged.test.startswith("one-sided") and flagged.p_adjusted >= flagged.p_value


# --- power, said honestly -----------------------------------------------------------------------


def test_the_detectable_difference_is_computed_at_the_level_in_force_after_the_correction() -> None:
    rng = np.random.default_rng(4)
    scores = np.clip(rng.normal(0.5 + 0.01 * np.arange(10)[:, None], 0.15, (10, 100)), 0, 1)
    runs = records(scores)
    holm, per_pair = analyse(runs).detectable(), analyse(runs, correction="none").detectable()
    assert holm is not None and per_pair is not None
    assert holm.level < per_pair.level == 0.05 and holm.pair == per_pair.pair
    assert holm.difference > per_pair.difference


def test_the_leaderboard_says_how_far_its_claims_hold_and_what_the_suite_can_detect() -> None:
    rng = np.random.default_rng(6)
    runs = records(np.clip(rng.normal(0.5, 0.2, (4, 80)), 0, 1))
    holm = render_report(analyse(runs))
    per_pair = render_report(analyse(runs, correction="none"))
    assert "the chance of any false claim in this table is at most 0.05 (Holm's step-down over 6 pairs)" in holm
    assert "family-wise (Holm)" in holm and "per-pair claims (no correction)" in per_pair
    assert "Per-pair claims (`pairwise-correction: none`)" in per_pair
    for text in (holm, per_pair):
        assert "With 80 shared tasks this suite detects a difference of about ±" in text
        assert "with 80% power at this level" in text


def test_the_comparison_gives_its_minimum_detectable_change_and_its_family() -> None:
    rng = np.random.default_rng(7)
    scores = rng.uniform(0.2, 0.8, (5, 60))
    base = records(scores)
    pr = records(np.clip(scores + 0.05 * rng.standard_normal(scores.shape), 0, 1))
    result = compare(base, pr, b=400, alpha=0.05, seed=0)
    text = rule_text(result)
    assert "With 60 shared tasks this suite detects a change of about ±" in text
    assert "Holm's step-down over the 5 models" in text
    section = comparison_dict(result)
    assert section["counts"]["family"] == 5 and section["parameters"]["one_sided"] is True  # type: ignore[index]
    assert section["detectable"]["n_shared"] == 60  # type: ignore[index]


# --- the report ---------------------------------------------------------------------------------


def test_the_report_names_the_method_the_family_and_keeps_raw_and_adjusted_p() -> None:
    rng = np.random.default_rng(9)
    board = analyse(records(np.clip(rng.normal(0.5, 0.2, (4, 50)), 0, 1)))
    report = json.loads(json.dumps(report_dict(board)))
    assert report["schema_version"] == 3
    assert report["parameters"]["correction"] == "holm"
    assert report["parameters"]["correction_method"] == "Holm's step-down"
    assert report["counts"]["family"] == 6
    assert report["detectable"]["level"] == report["parameters"]["level_in_force"]
    assert all(p["p_adjusted"] >= p["p_value"] for p in report["pairs"])


def test_unchanged_models_do_not_make_the_detectable_change_zero() -> None:
    # Most models of a PR are re-used unchanged: their differences are all 0 and say nothing of the spread.
    rng = np.random.default_rng(11)
    scores = rng.uniform(0.2, 0.8, (7, 60))
    moved = scores.copy()
    moved[:2] = np.clip(scores[:2] + 0.05 * rng.standard_normal((2, 60)), 0, 1)
    result = compare(records(scores), records(moved), b=400, alpha=0.05, seed=0)
    assert result.detectable is not None and result.detectable.difference > 0.01
    assert "change of about ±0 " not in comparison_markdown(result, "")


def test_no_detectable_change_is_claimed_when_nothing_moved() -> None:
    scores = np.random.default_rng(12).uniform(0.2, 0.8, (4, 40))
    result = compare(records(scores), records(scores + 1e-17), b=400, alpha=0.05, seed=0)
    assert result.detectable is None
    assert "this suite detects" not in comparison_markdown(result, "")


def test_per_pair_claims_do_not_describe_holm_in_the_pairwise_note() -> None:
    rng = np.random.default_rng(13)
    runs = records(np.clip(rng.normal(0.5, 0.2, (4, 60)), 0, 1))
    per_pair = render_report(analyse(runs, correction="none"))
    note = next(line for line in per_pair.splitlines() if line.startswith("- Pairwise:"))
    assert "Holm" not in note and "at alpha = 0.05 per pair" in note
    holm = render_report(analyse(runs))
    assert "(Holm's step-down over the 6 pairs whose test can reach 0.05)" in holm
