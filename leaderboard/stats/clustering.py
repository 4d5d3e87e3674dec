"""Tasks that come in families: clustered intervals and tests, and the design effect of categories.

With ``cluster-by`` on, the unit of every statistic is the cluster (a repository of
SWE-bench, a passage of a reading test), not the task:

* **A model's CI of the mean** is the CR2 (bias-reduced linearisation, Bell & McCaffrey
  2002) cluster-robust t-interval on the cluster totals, with the Bell-McCaffrey degrees
  of freedom. For the mean (an intercept-only regression) both have closed forms: with
  cluster g holding a share p_g of the tasks (of the weight, when weights are applied)
  and S_g the sum of its residuals,

      V = sum_g S_g^2 / (1 - p_g) / N^2,
      df = 1 / (sum d_g^2 - 2 sum d_g v_g^2 + (sum v_g^2)^2),
      d_g = p_g / (1 - p_g),  v_g^2 = p_g^2 / (1 - p_g),

  so df = C - 1 with C equal clusters and falls toward 1 as one cluster dominates, which
  is what keeps the level with few clusters of very unequal size (Imbens & Kolesar 2016).
* **A pair's decision** is the cluster sign-flip test: each cluster's summed per-task
  difference keeps or flips its sign, every pattern equally likely under "no difference";
  it is :func:`~leaderboard.stats.significance.sign_flip_test` applied to the cluster sums,
  with the same tiers (exact enumeration up to 26 non-zero clusters, exact binomial when
  all sums are equal, the saddlepoint tail otherwise). Valid at any cluster sizes.
  Fewer than ``min_tasks(alpha)`` clusters cannot reach alpha: nothing is significant.
  Its smallest p is 2 / 2^C, so with a few clusters it cannot reach the level a family holds
  a pair to (Holm's alpha / m: 8 clusters and 10 pairs never do). There, and only there, the
  pair is tested with the **CR2 t-test**: t = mean / sqrt(V) against Student's t at the
  Bell-McCaffrey df (:func:`t_two_sided_p`), whose p can reach any level. It is the interval's
  own test (p <= alpha exactly when the t-interval excludes 0), not exact but measured to keep
  the level at 6 to 30 clusters (benchmarks/bench_cluster_test.py).
* **0/1 scores**: the (continuity-corrected) Wilson score interval with the design-effect-adjusted effective n
  (N / max(1, V / (p(1-p)/N))) and the t quantile at the Bell-McCaffrey df.

Without clustering, :func:`design_effect` measures how much the categories would widen
the intervals if tasks in a category are related (Kish: 1 + (sum n_g^2 / N - 1) ICC).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from statistics import NormalDist
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from ..records import EvalRun
from ..validation import InvalidEvalRuns, Problem, shown

FloatArray = NDArray[np.float64]

ClusterBy = Literal["none", "category", "cluster"]
CLUSTER_BY: tuple[ClusterBy, ...] = ("none", "category", "cluster")
METHOD = (
    "CR2 t-interval with Bell-McCaffrey df; cluster sign-flip test, or the CR2 t-test where it cannot reach the level"
)
# The documents warn that the clusters are too few to resolve much (wide intervals, few differences
# separable) when one cluster holds more than this share of the tasks, or when the smallest
# effective degrees of freedom of a model's interval (or of the pairs behind a detectable
# difference) is below FEW_DF: there the t quantiles and the few sign patterns dominate.
LARGEST_SHARE_WARNING = 0.25
FEW_DF = 10
# The design effect from which the notes say the intervals are too narrow for related tasks.
DESIGN_EFFECT_WARNING = 2.0


# --- the Student t quantile, without scipy --------------------------------------------------


def _betacf(a: FloatArray, b: FloatArray, x: FloatArray) -> FloatArray:
    """The continued fraction of the incomplete beta function (modified Lentz), elementwise."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(x)
    d = 1.0 - qab * x / qap
    d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
    h = d.copy()
    for m in range(1, 200):
        m2 = 2.0 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
            c = 1.0 + aa / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            delta = d * c
            h *= delta
        if np.all(np.abs(delta - 1.0) < 1e-13):
            break
    return h


def _betainc(a: FloatArray, b: FloatArray, x: FloatArray, log_beta: FloatArray) -> FloatArray:
    """Regularised incomplete beta I_x(a, b), elementwise (Numerical Recipes' betai); log_beta = ln B(a, b)."""
    x = np.clip(x, 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        front = np.exp(a * np.log(x) + b * np.log1p(-x) - log_beta)
        direct = x < (a + 1.0) / (a + b + 2.0)
        # Each side of the switch converges fast; the other is not evaluated where it would be slow.
        near = np.where(direct, x, 1.0 - x)
        first, second = np.where(direct, a, b), np.where(direct, b, a)
        fraction = front * _betacf(first, second, near) / first
    out = np.where(direct, fraction, 1.0 - fraction)
    return np.where(x <= 0.0, 0.0, np.where(x >= 1.0, 1.0, out))


def t_quantile(q: float, df: FloatArray) -> FloatArray:
    """The ``q`` quantile (q > 1/2) of Student's t at each (possibly fractional) ``df`` >= ~0.5.

    Bisection on the CDF 1 - I_{df/(df+t^2)}(df/2, 1/2) / 2: 64 halvings of [0, 1e6] come within
    1e-13 of the root; a normal quantile past df = 1e7. Each distinct df is solved once (the df of
    every pair over the same clusters is the same).
    """
    df = np.atleast_1d(np.asarray(df, dtype=np.float64))
    distinct, inverse = np.unique(df, return_inverse=True)
    lgamma = np.vectorize(math.lgamma, otypes=[np.float64])
    a, b = distinct / 2.0, np.full_like(distinct, 0.5)
    log_beta = lgamma(a) + lgamma(b) - lgamma(a + b)
    lo = np.zeros_like(distinct)
    hi = np.full_like(distinct, 1e6)
    tail = 2.0 * (1.0 - q)  # the two-sided tail I must equal at the root
    for _ in range(64):
        mid = (lo + hi) / 2.0
        two_sided = _betainc(a, b, distinct / (distinct + mid * mid), log_beta)
        above = two_sided > tail  # the tail beyond mid is too heavy: the root is further out
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
    out = np.where(distinct > 1e7, NormalDist().inv_cdf(q), (lo + hi) / 2.0)
    return np.asarray(out[inverse.reshape(df.shape)], dtype=np.float64)


def t_two_sided_p(t: FloatArray, df: FloatArray) -> FloatArray:
    """Student's two-sided tail P(|T_df| >= |t|) = I_{df/(df+t^2)}(df/2, 1/2), elementwise; NaN where df is not > 0.

    The incomplete beta form keeps its relative accuracy far into the tail (p of 1e-12 and below),
    where 1 - CDF would cancel to 0.
    """
    t, df = np.broadcast_arrays(np.asarray(t, dtype=np.float64), np.asarray(df, dtype=np.float64))
    out = np.full(t.shape, np.nan)
    ok = np.isfinite(df) & (df > 0) & ~np.isnan(t)
    if ok.any():
        lgamma = np.vectorize(math.lgamma, otypes=[np.float64])
        a, tt = df[ok] / 2.0, t[ok]
        b = np.full_like(a, 0.5)
        log_beta = lgamma(a) + lgamma(b) - lgamma(a + b)
        with np.errstate(over="ignore", invalid="ignore"):
            x = np.where(np.isinf(tt), 0.0, a * 2.0 / (a * 2.0 + tt * tt))
        out[ok] = _betainc(a, b, x, log_beta)
    return out


# --- CR2 and Bell-McCaffrey -------------------------------------------------------------------


@dataclass(frozen=True)
class ClusterMoments:
    """Per row (a model or a pair): its weighted mean, CR2 variance, Bell-McCaffrey df and cluster count."""

    mean: FloatArray
    variance: FloatArray
    df: FloatArray
    clusters: NDArray[np.int64]
    largest_share: FloatArray


def cr2(totals: FloatArray, sizes: FloatArray) -> ClusterMoments:
    """CR2 variance and Bell-McCaffrey df of the mean of each row from its cluster totals.

    ``totals`` (rows, C): each cluster's sum of (weight x) score or difference; ``sizes``
    (rows, C): its task count (or weight sum), 0 for a cluster the row does not have.
    Rows with fewer than two clusters get NaN variance and df.
    """
    n = sizes.sum(axis=1)
    clusters = (sizes > 0).sum(axis=1).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = totals.sum(axis=1) / n
        share = sizes / n[:, None]
        resid = totals - sizes * mean[:, None]
        keep = (sizes > 0) & (share < 1.0)
        inflate = np.where(keep, 1.0 / np.where(keep, 1.0 - share, 1.0), 0.0)
        variance = (resid * resid * inflate).sum(axis=1) / (n * n)
        d = share * inflate
        v2 = share * share * inflate
        frob = (d * d).sum(axis=1) - 2.0 * (d * v2).sum(axis=1) + v2.sum(axis=1) ** 2
        df = 1.0 / frob
    few = clusters < 2
    variance = np.where(few, np.nan, variance)
    df = np.where(few, np.nan, df)
    largest = np.where(n > 0, share.max(axis=1, initial=0.0), np.nan) if sizes.shape[1] else np.full(n.shape, np.nan)
    return ClusterMoments(mean, variance, df, clusters, np.asarray(largest, dtype=np.float64))


def t_interval(moments: ClusterMoments, alpha: float) -> tuple[FloatArray, FloatArray]:
    """mean -/+ t_{df, 1 - alpha/2} sqrt(V); NaN where there is no df."""
    ok = np.isfinite(moments.df) & (moments.df > 0)
    t = np.full(moments.df.shape, np.nan)
    if ok.any():
        t[ok] = t_quantile(1.0 - alpha / 2.0, np.maximum(moments.df[ok], 0.5))
    half = t * np.sqrt(np.maximum(moments.variance, 0.0))
    return moments.mean - half, moments.mean + half


def wilson(p: FloatArray, n_eff: FloatArray, z: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Wilson's score interval with continuity correction (Newcombe 1998) for a proportion ``p``.

    From an effective ``n_eff`` at quantile ``z``. Without the correction Wilson's coverage
    dips to 93.0% at n = 10, p = 0.9 and 83% at n = 6, p = 0.97 (exact binomial sums); with it
    every n >= 6 and p in {0.5, 0.9, 0.97} covers at least 95.8% (README, bench_clusters.py).
    """
    z2 = z * z
    denominator = 2.0 * (n_eff + z2)
    with np.errstate(invalid="ignore"):
        lo_root = np.sqrt(np.maximum(z2 - 2.0 - 1.0 / n_eff + 4.0 * p * (n_eff * (1.0 - p) + 1.0), 0.0))
        hi_root = np.sqrt(np.maximum(z2 + 2.0 - 1.0 / n_eff + 4.0 * p * (n_eff * (1.0 - p) - 1.0), 0.0))
    lo = (2.0 * n_eff * p + z2 - 1.0 - z * lo_root) / denominator
    hi = (2.0 * n_eff * p + z2 + 1.0 + z * hi_root) / denominator
    lo = np.where(p <= 0.0, 0.0, np.clip(lo, 0.0, 1.0))
    hi = np.where(p >= 1.0, 1.0, np.clip(hi, 0.0, 1.0))
    return np.minimum(lo, p), np.maximum(hi, p)


def clustered_wilson(moments: ClusterMoments, n_eff: FloatArray, alpha: float) -> tuple[FloatArray, FloatArray]:
    """Wilson with the design-effect-adjusted effective n and the t quantile at the Bell-McCaffrey df.

    The design effect is the CR2 variance over the binomial one, at least 1 (a cluster
    structure never makes a proportion surer than independent tasks would); at p = 0 or 1
    the binomial variance is 0 and the effective n stays n.
    """
    p = moments.mean
    with np.errstate(invalid="ignore", divide="ignore"):
        binomial = p * (1.0 - p) / n_eff
        deff = np.where(binomial > 0, np.maximum(1.0, moments.variance / binomial), 1.0)
    deff = np.where(np.isfinite(deff), deff, 1.0)
    ok = np.isfinite(moments.df) & (moments.df > 0)
    z = np.full(p.shape, np.nan)
    if ok.any():
        z[ok] = t_quantile(1.0 - alpha / 2.0, np.maximum(moments.df[ok], 0.5))
    return wilson(p, n_eff / deff, z)


# --- which cluster each task is in -------------------------------------------------------------


def cluster_of(runs: Sequence[EvalRun], by: ClusterBy) -> dict[str, str]:
    """Each task's cluster; a task given two clusters, or none under ``cluster``, is a problem at its record.

    Every record counts, failed calls too: a task's family does not depend on whether a call failed.
    """
    # The common case, column by column (map, zip and set run in C): every task has one label.
    tasks = list(map(attrgetter("task_id"), runs))
    labels = list(map(attrgetter("category" if by == "category" else "cluster"), runs))
    pairs = dict(zip(tasks, labels, strict=True))
    if None not in pairs.values() and len(set(zip(tasks, labels, strict=True))) == len(pairs):
        return pairs
    seen: dict[str, tuple[str, EvalRun]] = {}
    problems: list[Problem] = []
    field = "category" if by == "category" else "cluster"
    for index, run in enumerate(runs):
        label = run.category if by == "category" else run.cluster
        where = {"file": run.source.file, "line": run.source.line} if run.source else {"index": index}
        if label is None:
            problems.append(
                Problem(
                    message=f"task {shown(run.task_id)} has no cluster; cluster-by: cluster needs one on every record",
                    field="cluster",
                    **where,
                )
            )
            continue
        first = seen.setdefault(run.task_id, (label, run))
        if first[0] != label:
            at = str(first[1].source) if first[1].source else "another record"
            problems.append(
                Problem(
                    message=(
                        f"task {shown(run.task_id)} is in {field} {shown(label)} here but in {shown(first[0])} at "
                        f"{at}: a task's {field} must be the same for every model (cluster-by: {by})"
                    ),
                    field=field,
                    **where,
                )
            )
    if problems:
        raise InvalidEvalRuns(problems)
    return {task: label for task, (label, _) in seen.items()}


# --- the design effect of categories, when clustering is off -------------------------------------


@dataclass(frozen=True)
class DesignEffect:
    """How much related tasks within a category would widen a model's interval of the mean.

    ``icc_lo``/``icc_hi`` are the range over models of the ANOVA intra-category correlation
    of scores, ``design_effect`` the median over models of Kish's 1 + (sum n_g^2 / N - 1) ICC.
    """

    categories: int
    icc_lo: float
    icc_hi: float
    design_effect: float

    @property
    def warns(self) -> bool:
        return self.design_effect >= DESIGN_EFFECT_WARNING


def design_effect(scores: FloatArray, present: NDArray[np.bool_], groups: NDArray[np.int64]) -> DesignEffect | None:
    """The design effect of the task groups ``groups`` (per task, 0..G-1) on each model's mean; None below 2 groups."""
    n_groups = int(groups.max()) + 1 if groups.size else 0
    if n_groups < 2:
        return None
    grouping = onehot_of(np.where(groups < 0, 0, groups), n_groups)
    filled = np.where(present, scores, 0.0)
    sizes = grouping.sums(present.astype(np.float64))  # (models, G)
    totals = grouping.sums(filled)
    squares = grouping.sums(filled * filled)
    n = sizes.sum(axis=1)
    k = (sizes > 0).sum(axis=1)
    ok = (k >= 2) & (n > k)
    if not ok.any():
        return None
    n, k, sizes, totals, squares = n[ok], k[ok], sizes[ok], totals[ok], squares[ok]
    with np.errstate(invalid="ignore", divide="ignore"):
        grand = totals.sum(axis=1) / n
        group_mean = np.where(sizes > 0, totals / np.where(sizes > 0, sizes, 1.0), 0.0)
        between = (sizes * (group_mean - grand[:, None]) ** 2).sum(axis=1)
        within = squares.sum(axis=1) - (sizes * group_mean * group_mean).sum(axis=1)
        msb = between / (k - 1)
        msw = np.maximum(within, 0.0) / (n - k)
        m0 = (n - (sizes * sizes).sum(axis=1) / n) / (k - 1)
        icc = (msb - msw) / (msb + (m0 - 1.0) * msw)
    icc = np.where(np.isfinite(icc), np.clip(icc, 0.0, 1.0), 0.0)  # a negative estimate is no correlation
    deff = 1.0 + ((sizes * sizes).sum(axis=1) / n - 1.0) * icc
    return DesignEffect(
        categories=n_groups,
        icc_lo=float(icc.min()),
        icc_hi=float(icc.max()),
        design_effect=float(np.median(deff)),
    )


@dataclass(frozen=True)
class Grouping:
    """Each task's cluster, as the sums per cluster need it: tasks in cluster order and each cluster's end."""

    index: NDArray[np.int64]
    count: int

    def sums(self, values: FloatArray) -> FloatArray:
        """(rows, count): each row's sum over each cluster's tasks.

        Running sums in task order (a cumsum, then differences at the cluster ends), not a matrix
        product: a BLAS product may add in another order from one run or machine to the next, and
        the same input must give the same bytes.
        """
        order = np.argsort(self.index, kind="stable")
        ends = np.cumsum(np.bincount(self.index, minlength=self.count))
        running = np.cumsum(values[:, order], axis=1)
        at_ends = np.concatenate([np.zeros((values.shape[0], 1)), running], axis=1)[:, ends]
        out = np.diff(np.concatenate([np.zeros((values.shape[0], 1)), at_ends], axis=1), axis=1)
        return np.asarray(out + 0.0, dtype=np.float64)


def onehot_of(index: NDArray[np.int64], count: int) -> Grouping:
    """The grouping of tasks by ``index`` (each task's cluster, 0..count-1)."""
    return Grouping(np.asarray(index, dtype=np.int64), int(count))
