"""The paired-difference kernel: what the leaderboard's pairs and the baseline comparison both compute.

A row is a paired difference: two models of one run (a leaderboard pair), or one model against
its baseline. Each goes through the same steps, in this order:

1. per-task differences over the shared tasks, a difference within the tie rule being 0
   (:func:`differences`);
2. its interval: the percentile bootstrap (widened by :func:`weighted_hull` when task weights are
   applied), or with clustering the CR2 t-interval of the cluster totals (:func:`cluster_figures`);
3. the sign-flip test of the (weighted) differences, or of their cluster sums, with the Monte Carlo
   refinement a large family needs (:func:`sign_flip`); with clustering, the CR2 t-test where the
   few clusters' sign-flip cannot reach the family's level (:func:`clustered_p`);
4. the family's correction, two-sided or as one-sided families of drops and rises (:func:`decide`);
5. the reason a row is not decided (:func:`reason_codes`); what the suite can resolve is
   stats/power.py's, for one named row.

The callers differ only where their questions do: the leaderboard resamples model means (a pair's
interval is the difference of the two resampled means), the comparison resamples differences; the
gate asks one-sided questions; and each keeps its own mean and spread (the leaderboard's a running
sum, so that a pair's mean does not move in its last bit when an unrelated model joins).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from ..records import Why
from .clustering import cr2, t_interval, t_two_sided_p
from .family import Correction, adjust, one_sided, step_levels
from .parameters import min_resamples
from .resampling import FloatArray
from .significance import CR2_T, min_tasks, sign_flip_test
from .ties import TIE_ABS_TOL, TIE_REL_TOL, tie_tolerance

# The reason code of a decided row (a significant pair, a detected change); any other is a Why.
DECIDED = 0
# Per-task differences the sign-flip test holds at once (~32 MiB of float64), whatever rows x tasks.
_TEST_CHUNK_ELEMENTS = 1 << 22


@dataclass(frozen=True)
class Differences:
    """Per row and task: shared by both sides, the raw difference, and the difference after the tie rule."""

    shared: NDArray[np.bool_]
    raw: FloatArray  # 0 where not shared
    tied: FloatArray  # raw, with every difference within the tie rule 0


def differences(
    scores: FloatArray, present: NDArray[np.bool_], a: NDArray[np.intp], b: NDArray[np.intp]
) -> Differences:
    """Rows ``a - b`` of ``scores`` (0 where absent) over the tasks both are ``present`` on.

    Near-equal scores are equal (the one tie rule): such a task is no difference at all. Scores
    are on [0, 1], so the tolerance is at most 1e-9: only differences that small need the test.
    """
    shared = present[a] & present[b]
    raw = np.where(shared, scores[a] - scores[b], 0.0)
    tied = raw
    tiny = np.flatnonzero((np.abs(raw) <= TIE_REL_TOL) & (raw != 0))
    if tiny.size:
        at_row, at_task = np.unravel_index(tiny, raw.shape)
        tol = tie_tolerance(scores[a[at_row], at_task], scores[b[at_row], at_task])
        tied = raw.copy()
        near = raw[at_row, at_task]
        tied[at_row, at_task] = np.where(np.abs(near) <= tol, 0.0, near)
    return Differences(shared, raw, tied)


def weighted_hull(
    totals: FloatArray,
    sizes: FloatArray,
    means: FloatArray,
    lo: FloatArray,
    hi: FloatArray,
    alpha: float,
    bounds: tuple[float, float] | None = None,
) -> tuple[FloatArray, FloatArray]:
    """The weighted percentile interval, widened where needed to the HC2 t-interval with Bell-McCaffrey df.

    A weighted mean's percentile interval is too narrow at tens of tasks (92.7% at n = 50 in
    bench_clusters.py), more so as unequal weights lower the effective n. The HC2 interval (CR2
    with every task its own cluster, weights as sizes) carries the small-sample df the bootstrap
    lacks; the hull of the two covers at least as often as either. ``bounds``: where the t-interval
    is cut (a mean score lies in [0, 1]; a difference is not cut).
    """
    moments = replace(cr2(totals, sizes), mean=means)
    t_lo, t_hi = t_interval(moments, alpha)
    if bounds is not None:
        t_lo, t_hi = np.maximum(t_lo, bounds[0]), np.minimum(t_hi, bounds[1])
    return np.fmin(lo, t_lo), np.fmax(hi, t_hi)


@dataclass(frozen=True)
class ClusterFigures:
    """A clustered row's CR2 t-interval, shared clusters, spread sqrt(V C), Bell-McCaffrey df and CR2 t-test p."""

    ci_lo: FloatArray
    ci_hi: FloatArray
    clusters: NDArray[np.int64]
    sd: FloatArray
    df: FloatArray
    t_p: FloatArray  # two-sided, of the sums after the tie rule; NaN where V is not > 0 (no t to read)


def cluster_figures(
    raw_totals: FloatArray, tied_totals: FloatArray, sizes: FloatArray, alpha: float, mean: FloatArray | None = None
) -> ClusterFigures:
    """The interval from each cluster's summed raw difference; the spread from the sums after the tie rule.

    ``mean`` replaces the CR2 mean (the ratio of the totals) where the caller has its own. The spread
    sqrt(V C) of a row's CR2 variance V over its C clusters sizes the clusters needed and the
    minimum detectable difference (V scales as 1 / C at a fixed cluster size: C* = z^2 V C / d^2).
    """
    moments = cr2(raw_totals, sizes)
    if mean is not None:
        moments = replace(moments, mean=mean)
    lo, hi = t_interval(moments, alpha)
    spread = cr2(tied_totals, sizes)
    with np.errstate(invalid="ignore", divide="ignore"):
        positive = spread.variance > 0
        t = np.where(positive, spread.mean / np.sqrt(np.where(positive, spread.variance, 1.0)), np.nan)
    t_p = t_two_sided_p(t, spread.df)
    return ClusterFigures(lo, hi, moments.clusters, np.sqrt(spread.variance * spread.clusters), spread.df, t_p)


def clustered_p(
    p: FloatArray,
    method: NDArray[np.int8],
    t_p: FloatArray,
    nonzero: NDArray[np.integer],
    member: NDArray[np.bool_],
    level: float,
) -> tuple[FloatArray, NDArray[np.int8]]:
    """The sign-flip p where it can reach ``level``, else the CR2 t-test's ``t_p`` (method CR2_T).

    ``level``: the smallest level the family holds a row to (two-sided; Holm's first step alpha / m).
    The sign-flip's smallest p over C non-zero cluster sums is 2 / 2^C: where that is above ``level``
    no difference of any size could be claimed, so the t-test (not exact, but able to reach it) is
    used instead. Only family members switch (a non-member keeps a p its test cannot bring to
    alpha), and only where the t is defined (V > 0). The choice reads C and the family size, never p.
    """
    with np.errstate(over="ignore"):
        floor = 2.0 / np.exp2(nonzero.astype(np.float64))
    use = member & (floor > level) & np.isfinite(t_p)
    return np.where(use, t_p, p), np.where(use, np.int8(CR2_T), method).astype(np.int8)


def sign_flip(rows: FloatArray) -> tuple[FloatArray, NDArray[np.int8]]:
    """The two-sided sign-flip p of each row, and how it was computed.

    Rows are tested in chunks: a row's p depends on that row alone, and every p can reach any level a
    family needs (significance.sign_flip_test has no Monte Carlo floor).
    """
    count = rows.shape[0]
    p, method = np.ones(count), np.zeros(count, dtype=np.int8)
    step = max(1, _TEST_CHUNK_ELEMENTS // max(1, rows.shape[1]))
    for start in range(0, count, step):
        p[start : start + step], method[start : start + step] = sign_flip_test(rows[start : start + step])
    return p, method


@dataclass(frozen=True)
class Decisions:
    """After the family's correction: the p reported, the p compared with alpha, and each row's level."""

    p: FloatArray
    adjusted: FloatArray
    levels: FloatArray
    level: float  # the level a row not yet decided is held to (for one-sided families: a drop's)


def decide(
    p: FloatArray,
    member: NDArray[np.bool_],
    alpha: float,
    correction: Correction,
    *,
    one_sided_rows: FloatArray | None = None,
    down: NDArray[np.bool_] | None = None,
) -> Decisions:
    """The correction over the family ``member``: two-sided, or with ``one_sided_rows`` (the tested rows)
    drops and rises as one-sided families of their own, each row read in its direction (``down``)."""
    if one_sided_rows is None:
        adjusted = adjust(p, member, correction)
        levels = step_levels(adjusted, member, alpha, correction)
        claimed = int(np.count_nonzero(member & (adjusted <= alpha)))
        level = float(alpha) if correction == "none" else float(alpha) / max(1, int(member.sum()) - claimed)
        return Decisions(p, adjusted, levels, level)
    assert down is not None
    drop, rise = one_sided(one_sided_rows, p, -1), one_sided(one_sided_rows, p, +1)
    drop_adjusted, rise_adjusted = adjust(drop, member, "holm"), adjust(rise, member, "holm")
    levels = np.where(
        down, step_levels(drop_adjusted, member, alpha, "holm"), step_levels(rise_adjusted, member, alpha, "holm")
    )
    claimed = int(np.count_nonzero(member & (drop_adjusted <= alpha)))
    return Decisions(
        np.where(down, drop, rise),
        np.where(down, drop_adjusted, rise_adjusted),
        levels,
        float(alpha) / max(1, int(member.sum()) - claimed),
    )


def excludes_zero(ci_lo: FloatArray, ci_hi: FloatArray, direction: FloatArray | None = None) -> NDArray[np.bool_]:
    """The interval excludes 0 beyond the tie tolerance: on either side, or on the side ``direction`` points to."""
    with np.errstate(invalid="ignore"):
        if direction is None:
            return np.asarray((ci_lo > TIE_ABS_TOL) | (ci_hi < -TIE_ABS_TOL))
        return np.asarray(np.where(direction > 0, ci_lo > TIE_ABS_TOL, ci_hi < -TIE_ABS_TOL))


def reaching_zero(ci_lo: FloatArray, ci_hi: FloatArray, decided: NDArray[np.bool_]) -> tuple[FloatArray, FloatArray]:
    """Each row not decided has its interval reach 0: the shown interval never says more than the verdict.

    A bootstrap or t-interval and the sign-flip test are two procedures: near the threshold one can
    exclude 0 where the other does not confirm it. Widening such an interval to 0 keeps its coverage (it
    only grows) and makes it agree with the test, which decides. A decided row's interval excludes 0
    already (``reason_codes`` asks it to). NaN (no interval) stays NaN.
    """
    lo = np.where(decided, ci_lo, np.minimum(ci_lo, 0.0))
    hi = np.where(decided, ci_hi, np.maximum(ci_hi, 0.0))
    return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)


def t_hull(
    totals: FloatArray, sizes: FloatArray, means: FloatArray, lo: FloatArray, hi: FloatArray, alpha: float, b: int
) -> tuple[FloatArray, FloatArray]:
    """The percentile interval, widened to the (HC2) t-interval when ``b`` resamples cannot resolve ``alpha``.

    A family's interval is at alpha / m: 1e-4 at 500 models, beyond the last of 500 resamples. The
    extreme order statistic is then the end, and it falls short of the true quantile; the t-interval
    (each unit its own cluster, ``totals`` its weight x difference, ``sizes`` its weight: Student's t with
    n - 1 df at equal sizes) needs no resamples. Where ``b`` resolves ``alpha`` (``parameters.min_resamples``)
    the interval is kept.
    """
    if b >= min_resamples(alpha):
        return lo, hi
    return weighted_hull(totals, sizes, means, lo, hi, alpha)


def reason_codes(
    n_shared: NDArray[np.integer],
    units: NDArray[np.integer],
    excludes_0: NDArray[np.bool_],
    adjusted: FloatArray,
    alpha: float,
    unchanged: NDArray[np.bool_] | None = None,
) -> NDArray[np.int8]:
    """Why each row is not decided (a Why), or DECIDED, in the order the reasons are checked.

    ``units``: the shared tasks, or clusters with clustering on (clusters never outnumber tasks).
    """
    never = np.zeros(n_shared.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        codes = np.select(
            [
                n_shared == 0,
                unchanged if unchanged is not None else never,
                units < min_tasks(alpha),
                ~excludes_0,
                ~(adjusted <= alpha),
            ],
            [Why.NO_SHARED, Why.UNCHANGED, Why.TOO_FEW, Why.CI_INCLUDES_0, Why.TEST],
            DECIDED,
        )
    return np.asarray(codes, dtype=np.int8)
