"""The intervals beside family-wise verdicts: each is at the family's simultaneous level, and no interval
says more (or less) than the verdict beside it, at any family size (stats/family.py, "The intervals
beside the claims")."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import run

from leaderboard import EvalRun, analyse
from leaderboard.report.comparison import gate_line, shown_interval, table, verdict_text
from leaderboard.report.comparison_method import rule_text
from leaderboard.report.document import render_markdown
from leaderboard.report.verdict import verdict
from leaderboard.stats.analysis import Leaderboard
from leaderboard.stats.comparison import Comparison, ModelChange, compare
from leaderboard.stats.paired import excludes_zero, reaching_zero

ALPHA = 0.05


def remeasured(models: int, tasks: int, seed: int, drops: dict[int, float] | None = None) -> tuple[list[EvalRun], ...]:
    """``models`` models evaluated twice on ``tasks`` tasks: the second run the first plus noise (and ``drops``)."""
    rng = np.random.default_rng(seed)
    scores = rng.uniform(0.3, 0.7, (models, tasks))
    again = scores + 0.02 * rng.standard_normal(scores.shape)
    for m, by in (drops or {}).items():
        again[m] -= by
    again = np.clip(again, 0.0, 1.0)

    def records(values: np.ndarray) -> list[EvalRun]:
        return [run(f"m{m:03d}", f"t{t:02d}", float(values[m, t])) for m in range(models) for t in range(tasks)]

    return records(scores), records(again)


def agrees(m: ModelChange) -> bool:
    """The row's interval excludes 0 (on Δ's side) exactly when its verdict is a detected change."""
    if m.verdict in ("unchanged",) or m.n_shared == 0 or math.isnan(m.ci_lo):
        return True
    side = np.array([m.delta])
    return bool(excludes_zero(np.array([m.ci_lo]), np.array([m.ci_hi]), side)[0]) == m.significant


@pytest.fixture(scope="module")
def five_hundred() -> Comparison:
    # The reported case: 500 models re-measured with noise alone, 40 tasks each. Each bound at 95%
    # one-sided (the level of one model) excluded 0 for 76 of them, beside "no detectable change
    # (Holm-adjusted one-sided p = 1)".
    base, pr = remeasured(500, 40, seed=7)
    return compare(base, pr, b=500, alpha=ALPHA, seed=0)


def test_with_500_models_each_bound_is_at_alpha_over_500_and_none_excludes_0_beside_no_change(
    five_hundred: Comparison,
) -> None:
    assert five_hundred.family == 500 and five_hundred.ci_alpha == pytest.approx(2 * ALPHA / 500)
    assert not any(m.significant for m in five_hundred.models)
    assert all(m.ci_lo <= 0.0 <= m.ci_hi for m in five_hundred.models)
    assert all(shown_interval(m)[2] is False for m in five_hundred.models)
    assert not any("did not confirm" in verdict_text(m, 0.0) for m in five_hundred.models)


def test_the_table_and_the_method_name_the_simultaneous_level(five_hundred: Comparison) -> None:
    head = table(five_hundred.models[:1], five_hundred).splitlines()[0]
    assert "[simultaneous one-sided 95% bounds]" in head
    words = rule_text(five_hundred)
    assert "each end a one-sided 99.99% bound (0.05 / 500" in words
    assert "all the upper bounds hold at once with probability at least 95%" in words


@pytest.mark.parametrize("models", [1, 2, 10, 60])
def test_at_every_family_size_a_detected_change_and_only_one_has_an_interval_excluding_0(models: int) -> None:
    # Real drops of several sizes among noise: some detected, some near the threshold either way.
    drops = {m: 0.01 * ((m + 2) % 4) for m in range(models)}
    base, pr = remeasured(models, 30, seed=models, drops=drops)
    for correction in ("holm", "none"):
        c = compare(base, pr, b=500, alpha=ALPHA, seed=1, correction=correction)  # type: ignore[arg-type]
        assert all(agrees(m) for m in c.models), correction
        assert any(m.significant for m in c.models)


def test_the_gate_line_names_the_simultaneous_bound_of_a_regression_below_0() -> None:
    base, pr = remeasured(40, 40, seed=3, drops={0: 0.08})
    c = compare(base, pr, b=500, alpha=ALPHA, seed=0, fail_on_regression=True)
    (worst,) = c.regressions
    line = gate_line(worst, c.alpha)
    assert worst.family == 40 and "simultaneous one-sided 95% bounds [" in line
    assert worst.ci_hi < 0 and all(agrees(m) for m in c.models)


def test_a_regression_beyond_the_tolerance_is_judged_on_the_simultaneous_bound() -> None:
    base, pr = remeasured(40, 40, seed=3, drops={0: 0.08})
    c = compare(base, pr, b=500, alpha=ALPHA, seed=0, fail_on_regression=True)
    (worst,) = c.regressions
    # A tolerance just above the family's bound: the drop is no longer shown to exceed it.
    at = compare(base, pr, b=500, alpha=ALPHA, seed=0, fail_on_regression=True, tolerance=-worst.ci_hi + 1e-6)
    assert at.regressions == () and at.having("within tolerance")[0].model_id == worst.model_id


def test_an_undecided_row_reaches_0_and_a_decided_row_keeps_its_interval() -> None:
    decided = np.array([False, False, True, False])
    lo, hi = reaching_zero(np.array([0.01, -0.05, 0.02, np.nan]), np.array([0.05, -0.01, 0.04, np.nan]), decided)
    assert lo.tolist()[:3] == [0.0, -0.05, 0.02] and hi.tolist()[:3] == [0.05, 0.0, 0.04]
    assert math.isnan(lo[3]) and math.isnan(hi[3])


# --- the leaderboard's pairs ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def noisy_board() -> Leaderboard:
    # 40 models whose true means differ by little on 30 tasks: of 780 pairs, some have a 95% interval that
    # excludes 0 while Holm's step-down over the 780 does not separate them.
    rng = np.random.default_rng(11)
    scores = np.clip(rng.uniform(0.3, 0.7, 30)[None, :] + 0.08 * rng.standard_normal((40, 30)), 0.0, 1.0)
    runs = [run(f"m{m:02d}", f"t{t:02d}", float(scores[m, t])) for m in range(40) for t in range(30)]
    return analyse(runs, b=500, seed=0)


def test_a_pair_not_significant_has_its_interval_reach_0_and_a_significant_one_excludes_it(
    noisy_board: Leaderboard,
) -> None:
    table = noisy_board.pairs
    shown = excludes_zero(table.ci_lo, table.ci_hi)
    assert np.array_equal(shown, table.significant)
    # The case that contradicted its verdict: the pair's own interval excluded 0, the family did not separate it.
    unconfirmed = (table.own_side != 0) & ~table.significant
    assert unconfirmed.sum() > 0
    assert np.all((table.ci_lo[unconfirmed] == 0.0) | (table.ci_hi[unconfirmed] == 0.0))


def test_the_pair_tables_say_no_interval_beside_a_no_excludes_0(noisy_board: Leaderboard) -> None:
    text = render_markdown(noisy_board)
    assert "the test did not confirm it" not in text
    assert "Each 95% CI is the pair's own (not simultaneous over the" in text
    for line in text.splitlines():
        if "| no: " in line:
            ci = next(cell for cell in line.split("|") if cell.strip().startswith("["))
            lo, hi = (float(x.replace("−", "-").replace("+", "")) for x in ci.strip()[1:-1].split(",\u00a0"))
            assert lo <= 0.0 <= hi, line


def leader_ahead_of_29(gap: float) -> Leaderboard:
    """30 models on 40 tasks, the first ``gap`` above 29 alike: Holm over 435 pairs separates none of them,
    the confidence set for the best (29 one-sided comparisons) may."""
    rng = np.random.default_rng(2)
    scores = rng.uniform(0.3, 0.7, 40)[None, :] + 0.15 * rng.standard_normal((30, 40))
    scores[0] += gap
    scores = np.clip(scores, 0.0, 1.0)
    return analyse([run(f"m{m:02d}", f"t{t:02d}", float(scores[m, t])) for m in range(30) for t in range(40)], b=500)


def test_the_best_is_named_beside_its_own_interval_though_the_pair_table_does_not_separate_the_two() -> None:
    board = leader_ahead_of_29(0.14)
    top = board.pair(1, 2)
    assert board.top_group == ("m00",) and not top.significant and top.ci_lo == 0.0
    # The set's own family: the gap's interval excludes 0, as the claim "is best" does.
    assert board.best is not None and board.best.gap[0] > 0.0 and board.pairs.own_side[0] == 1
    assert "**`m00` is best**" in verdict(board) and "(95% CI [+0.050,\u00a0+0.197])" in verdict(board)


def test_a_tie_for_first_is_said_beside_a_gap_interval_reaching_0() -> None:
    board = leader_ahead_of_29(0.10)
    assert len(board.top_group) > 1 and board.pairs.leader_ci[0] > 0.0  # the pair's own interval excluded 0
    assert "statistically tied for first" in verdict(board) and "(95% CI [0.000,\u00a0+0.159])" in verdict(board)
