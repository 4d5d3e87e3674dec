"""The interval of a mean score in [0, 1] over few tasks: Student's t hulled with a bounded Wilson interval.

Used for a continuous model's mean below SMALL_SUITE tasks (hulled with its percentile bootstrap as
well) and for every category mean (no bootstrap there: a model has one per category).

Why not the t-interval alone: scores near a bound are skewed, and a few of them can all miss the
long tail toward the middle (six scores of a model averaging 0.97 are often all above 0.99), so
their spread, and with it the t-interval, is far too small (78% coverage at 6 tasks, mean 0.97).
Wilson's interval at the effective n that gives the scores' own variance, m (1 - m) / V, reaches
away from the bound as a symmetric interval does not, but it too trusts the small spread. So the
effective n is capped at EFFECTIVE_CAP times the (Kish) number of tasks: the scores are taken to be
no more than that much surer than 0/1 scores with the same mean would be. The cap is what makes the
interval cover when the tail was not drawn, and the price is width where it was (the coverage and
width of each choice, and of the bootstrap-t, are in docs/statistics.md, measured by
benchmarks/bench_small_intervals.py).
"""

from __future__ import annotations

import functools
import math
from statistics import NormalDist

import numpy as np
from numpy.typing import NDArray

from .clustering import ClusterMoments, t_quantile, wilson
from .resampling import FloatArray

# Wilson's effective n is at most this many times the tasks (measured: 8 keeps >= 93% in every cell of
# the benchmark's beta, bimodal and exact-1.0 scores at means 0.5-0.99; 10 and above miss bimodal ones).
EFFECTIVE_CAP = 8.0
# The one-sided level of the spread's upper bound that decides whether scores crowd a bound (0.2 lets
# three scores from one lump of a bimodal spread through: 91% coverage at mean 0.5).
SPREAD_LEVEL = 0.05


def task_moments(
    values: FloatArray, weights: FloatArray | None, group: NDArray[np.intp], groups: int
) -> ClusterMoments:
    """HC2 variance and Bell-McCaffrey df of each group's (weighted) mean, every task its own cluster.

    ``values``, ``weights`` (None: all 1) and ``group`` are one entry per (row, task) cell in the mean;
    the sums are bincounts, so the cost is one pass over the cells however many groups (models x
    categories) there are. The same numbers as ``clustering.cr2`` with every task a cluster and the
    weights as sizes; with equal weights that is s^2 / n on exactly n - 1 df.
    """
    count = np.bincount(group, minlength=groups)
    w = np.ones(values.shape) if weights is None else weights
    total = np.bincount(group, weights=w, minlength=groups) if weights is not None else count.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(group, weights=w * values, minlength=groups) / total
        share = w / total[group]
        keep = share < 1.0
        inflate = np.where(keep, 1.0 / np.where(keep, 1.0 - share, 1.0), 0.0)
        resid = w * (values - mean[group])
        variance = np.bincount(group, weights=resid * resid * inflate, minlength=groups) / (total * total)
        if weights is None:
            df = count - 1.0
        else:
            d = share * inflate
            v2 = share * share * inflate
            frob = (
                np.bincount(group, weights=d * d, minlength=groups)
                - 2.0 * np.bincount(group, weights=d * v2, minlength=groups)
                + np.bincount(group, weights=v2, minlength=groups) ** 2
            )
            # Rounded so that groups of the same design share one t quantile (each distinct df is solved once).
            df = np.round(1.0 / frob, 9)
    few = count < 2
    largest = np.zeros(groups)
    np.maximum.at(largest, group, share)
    return ClusterMoments(
        mean=np.asarray(mean, dtype=np.float64),
        variance=np.where(few, np.nan, variance),
        df=np.where(few, np.nan, df),
        clusters=count.astype(np.int64),
        largest_share=largest,
    )


def _betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta I_x(a, b) of one value (Lentz's continued fraction, as clustering.py's)."""
    if x <= 0.0 or x >= 1.0:
        return 0.0 if x <= 0.0 else 1.0
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - _betainc(b, a, 1.0 - x)
    front = math.exp(a * math.log(x) + b * math.log1p(-x) - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)))
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        even = m * (b - m) * x / ((a - 1.0 + 2 * m) * (a + 2 * m))
        odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 1.0 + 2 * m))
        for aa in (even, odd):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return front * h / a


@functools.lru_cache(maxsize=4096)
def t_scalar(q: float, df: float) -> float:
    """The ``q`` quantile (q > 1/2) of Student's t at ``df``, one value at a time and cached.

    ``clustering.t_quantile`` solves a batch, and its last bits depend on the batch (its continued
    fraction stops when every member has converged); a category's interval must not depend on which
    other categories were solved with it, nor cost that bisection's ~0.1 s on every analysis. Bisection
    on x = df / (df + t^2), where the two-sided tail I_x(df/2, 1/2) is increasing: within 1e-12 of
    the batch solver's t.
    """
    tail = 2.0 * (1.0 - q)
    lo, hi = 0.0, 1.0
    for _ in range(80):
        mid = (lo + hi) / 2.0
        if _betainc(df / 2.0, 0.5, mid) < tail:
            lo = mid
        else:
            hi = mid
    x = (lo + hi) / 2.0
    return math.sqrt(df * (1.0 - x) / x)


def variance_inflation(df: FloatArray, alpha: float) -> FloatArray:
    """df / chi2_{alpha, df}: a sample variance's one-sided upper confidence bound over the estimate.

    Wilson and Hilferty's cube-root normal approximation of the chi-square quantile (within a few
    percent from df = 3; at df 1-2 it errs small, so the bound errs large, the safe side).
    """
    z = NormalDist().inv_cdf(alpha)
    k = np.maximum(df, 1.0)
    quantile = k * np.maximum(1.0 - 2.0 / (9.0 * k) + z * np.sqrt(2.0 / (9.0 * k)), 1e-3) ** 3
    return np.asarray(k / quantile, dtype=np.float64)


def bounded_interval(
    moments: ClusterMoments, n_tasks: FloatArray, alpha: float, *, t_one_by_one: bool = False
) -> tuple[FloatArray, FloatArray]:
    """The t-interval hulled with Wilson's at the capped effective n (module docstring), within [0, 1].

    Both at the t quantile of the Bell-McCaffrey df (n - 1 with equal weights); ``t_one_by_one``
    takes it from :func:`t_scalar` (categories: many, cheap, independent of each other) rather
    than the batch solver (a model's, as its other intervals). ``n_tasks``: each
    row's (Kish effective) number of tasks. NaN where the variance is not > 0 (one task, or every
    score equal: the caller says why there is no interval).
    """
    mean = moments.mean
    ok = np.isfinite(moments.df) & (moments.df > 0) & (moments.variance > 0)
    lo = np.full(mean.shape, np.nan)
    hi = np.full(mean.shape, np.nan)
    if not ok.any():
        return lo, hi
    m, v = mean[ok], moments.variance[ok]
    df = np.maximum(moments.df[ok], 0.5)
    if t_one_by_one:
        distinct, inverse = np.unique(df, return_inverse=True)
        t = np.array([t_scalar(1.0 - alpha / 2.0, float(d)) for d in distinct])[inverse]
    else:
        t = t_quantile(1.0 - alpha / 2.0, df)
    half = t * np.sqrt(v)
    # Capped only where the scores may crowd a bound: their mean within about one standard deviation
    # of it, at the upper confidence bound of that deviation (two or three scores from one lump of a
    # bimodal spread say little about it). Scores whose spread sits well inside the range (twelve at
    # 0.80 +/- 0.08) show the spread they have.
    near = np.minimum(m, 1.0 - m)
    sd_upper = v * n_tasks[ok] * variance_inflation(n_tasks[ok] - 1.0, SPREAD_LEVEL)
    cap = EFFECTIVE_CAP * n_tasks[ok] * np.maximum(1.0, near * near / sd_upper)
    # A mean that rounds to a bound with V > 0 (scores within 1e-16 of it) is as sure as the cap allows.
    n_eff = np.where(m * (1.0 - m) > 0.0, np.minimum(m * (1.0 - m) / v, cap), cap)
    w_lo, w_hi = wilson(m, n_eff, t)
    lo[ok] = np.clip(np.fmin(m - half, w_lo), 0.0, 1.0)
    hi[ok] = np.clip(np.fmax(m + half, w_hi), 0.0, 1.0)
    return lo, hi
