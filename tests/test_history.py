"""History on the base branch: each model's series, its run-to-run noise, the range check and flaky tasks."""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np
import pytest

from leaderboard import EvalRun
from leaderboard.stats.clustering import t_quantile, wilson
from leaderboard.stats.history import (
    EXPIRED,
    INVALID,
    MIN_NOISE_RUNS,
    History,
    RunScores,
    coverage_of,
    run_scores,
    summarise,
)


def scores(model: str, values: Sequence[float | None], prefix: str = "t") -> list[EvalRun]:
    """One record per task ``prefix00``, ``prefix01``, ... (None: the task is not run)."""
    return [EvalRun(model, f"{prefix}{k:02d}", "acc", v) for k, v in enumerate(values) if v is not None]


def runs_of(*records: list[EvalRun]) -> list[RunScores]:
    return [run_scores(f"{k:040x}", None, r) for k, r in enumerate(records)]


def summary(*history: list[EvalRun], current: list[EvalRun] | None = None) -> History:
    now = run_scores("now", None, current if current is not None else history[-1])
    return summarise(runs_of(*history), now)


# --- flaky tasks -----------------------------------------------------------------------------------------


def test_a_task_that_changes_between_runs_is_flaky_with_changes_over_transitions() -> None:
    pattern = [1.0, 0.0, 0.0, 1.0, 1.0]  # 1→0, 0→0, 0→1, 1→1: 2 changes in 4 transitions
    history = [scores("m", [pattern[k], 1.0]) for k in range(5)]
    h = summary(*history)
    (task,) = h.flaky
    assert (task.task_id, task.flips, task.transitions, task.rate) == ("t00", 2, 4, 0.5)
    assert task.flipped_on == ("m",) and task.mean_change == 1.0
    assert h.flaky_rates == {"t00": 0.5}
    assert h.observed_tasks == 2  # t01 was observed and never changed


def test_a_task_that_never_changes_is_not_flaky() -> None:
    h = summary(*[scores("m", [1.0, 0.0, 0.5]) for _ in range(4)])
    assert h.flaky == ()


def test_the_flip_rate_pools_the_models_transitions() -> None:
    history = [scores("a", [float(k % 2)]) + scores("b", [1.0]) for k in range(3)]  # a flips twice, b never
    (task,) = summary(*history).flaky
    assert (task.flips, task.transitions, task.rate, task.flipped_on) == (2, 4, 0.5, ("a",))


def test_a_transition_counts_only_when_both_runs_scored_the_task() -> None:
    history = [scores("m", [1.0, 1.0]), scores("m", [None, 1.0]), scores("m", [0.0, 1.0])]
    h = summary(*history)
    assert h.flaky == ()  # t00: run 0 → run 1 and run 1 → run 2 each miss one side
    assert h.observed_tasks == 1


def test_a_model_renamed_in_the_newest_run_is_left_out_of_flakiness_and_noise() -> None:
    old = [scores("m", [float(k % 2), 0.5 + 0.01 * k]) for k in range(4)]
    renamed = scores("m-v2", [1.0, 0.9])
    h = summary(*old, renamed, current=renamed)
    assert h.flaky == ()
    m, v2 = h.series_of("m"), h.series_of("m-v2")
    assert m is not None and v2 is not None
    assert (m.stable_runs, m.noise, m.outside) == (0, None, None)
    assert v2.stable_runs == 1 and v2.noise is None


def test_a_rename_in_the_middle_restarts_the_stable_stretch_after_it() -> None:
    # m flips on t00 in every transition, but only runs 3 → 4 are both after its rename back.
    history = [scores("m", [0.0]), scores("m", [1.0]), scores("m2", [0.0]), scores("m", [1.0]), scores("m", [0.0])]
    h = summary(*history)
    (task,) = h.flaky
    assert (task.flips, task.transitions) == (1, 1)
    series = h.series_of("m")
    assert series is not None and series.stable_runs == 2


def test_a_change_within_the_tie_tolerance_is_not_a_flip_and_any_larger_change_is() -> None:
    history = [scores("m", [0.5, 0.5, 0.5]), scores("m", [0.5 + 1e-13, 0.501, 0.3])]
    h = summary(*history)
    assert [f.task_id for f in h.flaky] == ["t01", "t02"]  # t00 moved by 1e-13: the same score
    assert h.flaky[0].mean_change == pytest.approx(0.001)
    assert h.flaky[1].mean_change == pytest.approx(0.2)


def test_trials_are_averaged_before_flips_are_counted() -> None:
    def trials(passed: int) -> list[EvalRun]:
        return [EvalRun("m", "t", "acc", 1.0 if k < passed else 0.0, trial=k) for k in range(3)]

    h = summary(trials(2), trials(2), trials(1))
    (task,) = h.flaky
    assert task.flips == 1 and task.mean_change == pytest.approx(1 / 3)


# --- noise ----------------------------------------------------------------------------------------------


def flat(model: str, mean: float, n: int = 10) -> list[EvalRun]:
    return scores(model, [mean] * n)


def test_noise_is_the_root_mean_square_of_the_consecutive_changes() -> None:
    h = summary(flat("m", 0.70), flat("m", 0.72), flat("m", 0.71), current=flat("m", 0.71))
    series = h.series_of("m")
    assert series is not None and series.noise is not None
    noise = series.noise
    assert noise.runs == 3
    assert noise.rms_change == pytest.approx(math.sqrt((0.02**2 + 0.01**2) / 2))
    assert noise.largest_change == pytest.approx(0.02)
    assert noise.sd == pytest.approx(float(np.std([0.70, 0.72, 0.71], ddof=1)))
    assert (noise.low, noise.high) == pytest.approx((0.70, 0.72))


def test_noise_needs_three_runs_with_the_same_id() -> None:
    assert MIN_NOISE_RUNS == 3
    series = summary(flat("m", 0.70), flat("m", 0.72)).series_of("m")
    assert series is not None and series.noise is None and series.outside is None


def test_a_change_is_paired_over_the_tasks_both_runs_scored() -> None:
    # The third run adds a task at 0: its mean drops, but on the shared tasks nothing changed.
    h = summary(flat("m", 0.8, 4), flat("m", 0.8, 4), scores("m", [0.8] * 4 + [0.0]))
    series = h.series_of("m")
    assert series is not None and series.noise is not None
    assert series.noise.rms_change == 0.0
    assert series.means[2] == pytest.approx(0.64)


def test_this_run_does_not_count_toward_the_noise() -> None:
    h = summary(flat("m", 0.70), flat("m", 0.70), flat("m", 0.70), current=flat("m", 0.50))
    series = h.series_of("m")
    assert series is not None and series.noise is not None and series.noise.rms_change == 0.0


# --- the range check ------------------------------------------------------------------------------------


def test_a_mean_above_every_earlier_mean_is_outside_the_range() -> None:
    history = [flat("m", v) for v in (0.70, 0.72, 0.71)]
    series = summary(*history, current=flat("m", 0.75)).series_of("m")
    assert series is not None and series.outside is not None
    out = series.outside
    assert (out.direction, out.mean, out.low, out.high, out.runs) == ("above", 0.75, 0.70, 0.72, 3)
    assert out.chance == 0.5  # 2 / (3 + 1)


def test_a_mean_below_every_earlier_mean_is_outside_the_range() -> None:
    series = summary(*[flat("m", v) for v in (0.70, 0.72, 0.71)], current=flat("m", 0.6)).series_of("m")
    assert series is not None and series.outside is not None and series.outside.direction == "below"


def test_a_mean_inside_or_on_the_edge_of_the_range_is_not_outside() -> None:
    history = [flat("m", v) for v in (0.70, 0.72, 0.71)]
    for mean in (0.71, 0.72, 0.72 + 1e-13):
        series = summary(*history, current=flat("m", mean)).series_of("m")
        assert series is not None and series.outside is None


def test_a_model_missing_from_this_run_has_no_range_check_but_keeps_its_noise() -> None:
    history = [flat("m", v) for v in (0.70, 0.72, 0.71)]
    series = summary(*history, current=flat("other", 0.9)).series_of("m")
    assert series is not None and series.outside is None and series.noise is not None
    assert series.current is None


# --- series and intervals -------------------------------------------------------------------------------


def test_the_series_has_a_point_per_run_and_this_run_last_with_none_where_absent() -> None:
    h = summary(flat("a", 0.5), flat("b", 0.6), current=flat("a", 0.7))
    a = h.series_of("a")
    assert a is not None
    assert [None if p is None else p.mean for p in a.points] == [0.5, None, 0.7]
    assert [s.model_id for s in h.series] == ["a", "b"]
    assert [r.commit for r in h.runs] == [f"{0:040x}", f"{1:040x}"]


def test_a_model_with_0_1_scores_gets_wilsons_interval() -> None:
    h = summary(scores("m", [1.0] * 7 + [0.0] * 3))
    point = h.series[0].points[0]
    assert point is not None and point.ci_method == "Wilson"
    lo, hi = wilson(np.array([0.7]), np.array([10.0]), np.array([NormalDist().inv_cdf(0.975)]))
    assert (point.ci_lo, point.ci_hi) == pytest.approx((float(lo[0]), float(hi[0])))


def test_other_scores_get_the_t_interval() -> None:
    values = [0.2, 0.4, 0.5, 0.9]
    point = summary(scores("m", values)).series[0].points[0]
    assert point is not None and point.ci_method == "t"
    half = float(t_quantile(0.975, np.array([3.0]))[0]) * float(np.std(values, ddof=1)) / 2.0
    assert (point.ci_lo, point.ci_hi) == pytest.approx((0.5 - half, 0.5 + half))


def test_one_task_gives_no_interval() -> None:
    point = summary(scores("m", [0.3])).series[0].points[0]
    assert point is not None and math.isnan(point.ci_lo) and math.isnan(point.ci_hi) and point.tasks == 1


def test_a_run_with_no_scored_record_breaks_every_stable_stretch() -> None:
    failed = [EvalRun("m", "t00", "acc", None, error="timeout")]
    h = summary(flat("m", 0.7), flat("m", 0.7), failed, flat("m", 0.7))
    series = h.series_of("m")
    assert series is not None and series.stable_runs == 1 and series.points[2] is None


def test_no_earlier_run_gives_a_series_of_this_run_alone() -> None:
    h = summarise([], run_scores("now", None, flat("m", 0.7)))
    assert h.flaky == () and h.runs == ()
    series = h.series_of("m")
    assert series is not None and len(series.points) == 1 and series.stable_runs == 0


# --- coverage -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wanted", "found", "read", "skipped", "denied", "reason"),
    [
        (0, 0, 0, {}, False, "off"),
        (10, 0, 0, {}, False, "first-run"),
        (10, 0, 0, {}, True, "no-permission"),
        (10, 3, 0, {EXPIRED: 3}, False, "all-expired"),
        (10, 3, 0, {EXPIRED: 2, INVALID: 1}, False, "none-read"),
        (10, 3, 1, {EXPIRED: 2}, False, None),
    ],
)
def test_no_history_has_one_reason(
    wanted: int, found: int, read: int, skipped: dict[str, int], denied: bool, reason: str | None
) -> None:
    assert coverage_of(wanted, found, read, skipped, denied=denied).missing_reason == reason


def test_coverage_keeps_the_skip_reasons_in_a_fixed_order_without_zeros() -> None:
    coverage = coverage_of(10, 10, 7, {INVALID: 1, EXPIRED: 2, "missing": 0})
    assert coverage.skipped == ((EXPIRED, 2), (INVALID, 1)) and coverage.partial
    with pytest.raises(ValueError, match="unknown skip reasons: gone"):
        coverage_of(1, 1, 0, {"gone": 1})
