"""Calibrated tests on paired per-task differences, and what a suite can resolve.

The bootstrap percentile interval of a mean difference is too narrow on few tasks
(its coverage is below nominal at n < ~50), so "the CI excludes 0" alone calls too
many ties significant. A pair is significant only when, in addition, an exact
paired permutation test agrees: under "no difference", each per-task difference is
as likely to have either sign, so the p-value is the share of the 2^k sign patterns
of the k non-zero differences whose |sum| is at least the observed |sum|.

How p is computed, by the pair's k non-zero differences:

* k <= EXACT_MAX_NONZERO: exact enumeration of all 2^k patterns (meet in the
  middle: two halves' subset sums, one sorted, counted by binary search).
* every non-zero |difference| equal (0/1 scores, for one): exact binomial tail at
  any k; this is the exact McNemar test.
* otherwise the saddlepoint tail of the same sign-flip distribution (stats/signflip.py:
  Lugannani-Rice on K(t) = sum log cosh(t d_i), relative error within ERROR_BOUND where
  measured, Chernoff's upper bound in the few most extreme patterns). Its relative
  accuracy holds far into the tail, so p can reach any level a family asks for (no
  Monte Carlo floor of 1 / (1 + R)), and it is a deterministic function of the differences.

Differences are compared on an integer grid of QUANTUM (2^-40) with a slack of one
grid step per difference, so sums that are equal in decimal arithmetic (0.15 + 0.1
and 0.25) are equal here too, and 0/1 data has no rounding at all.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .signflip import ERROR_BOUND as ERROR_BOUND
from .signflip import tail_p

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

EXACT_MAX_NONZERO = 26
QUANTUM = 2.0**-40

# How each p-value was computed (PairwiseDiff.test and the JSON report say it in words).
# MONTE_CARLO and NORMAL are no longer used (every p now reaches any level); their codes stay reserved.
# CR2_T: with clustering, the CR2 t-test with Bell-McCaffrey df where the cluster sign-flip cannot reach
# the family's level (stats/paired.py clustered_p); not a sign-flip tier.
NONE, EXACT, BINOMIAL, MONTE_CARLO, NORMAL, SADDLEPOINT, CR2_T = range(7)
METHOD_NAMES = (
    "none",
    "exact sign-flip",
    "exact binomial (McNemar)",
    "Monte Carlo sign-flip",
    "normal approximation",
    "saddlepoint sign-flip",
    "CR2 t-test",
)

# Subset sums held at once when counting (~32 MiB of int64).
_SUM_ELEMENTS = 1 << 22
# Rows per MITM chunk: row offsets of up to 2^45 each must stay below 2^62.
_MAX_ROWS = 1 << 16


def min_tasks(alpha: float) -> int:
    """Fewest non-zero differences with which a two-sided sign-flip test can reach ``alpha``.

    Its smallest p-value is 2 / 2^k (all differences one way), so k >= log2(2 / alpha):
    6 at alpha = 0.05. A parametric test (a paired t) can go lower, but only by assuming
    a normal distribution that six scores cannot check.
    """
    return max(1, math.ceil(math.log2(2.0 / alpha) - 1e-12))


def quantised(values: FloatArray) -> IntArray:
    """|values| on the QUANTUM grid; a non-zero value never rounds to 0."""
    q = np.rint(np.abs(values) * (1.0 / QUANTUM)).astype(np.int64)
    lost = (q == 0) & (values != 0)
    if lost.any():
        q[lost] = 1
    return q


def _subset_sums(q: IntArray) -> IntArray:
    """(rows, 2^h): every subset sum of each row's h values."""
    rows, h = q.shape
    sums = np.zeros((rows, 1), dtype=np.int64)
    for j in range(h):
        sums = np.concatenate([sums, sums + q[:, j : j + 1]], axis=1)
    return sums


def _exact(q: IntArray, signed: IntArray) -> FloatArray:
    """Exact two-sided sign-flip p-values for rows of k > 0 quantised |d| (all of one k)."""
    rows, k = q.shape
    total = q.sum(axis=1)
    observed = np.abs(signed)
    # |sum of signed q| >= observed  <=>  (sum of the + part) >= (total + observed) / 2, or its
    # mirror image; the two are disjoint unless observed == 0 (then p = 1). A slack of k grid
    # steps keeps sums that are equal in decimal (0.15 + 0.1 and 0.25) equal after rounding.
    need = (total + observed - k + 1) // 2
    h1 = k // 2
    h2 = k - h1
    out = np.ones(rows)
    step = max(1, min(_MAX_ROWS, _SUM_ELEMENTS >> max(h1, h2)))
    for start in range(0, rows, step):
        stop = min(rows, start + step)
        left = _subset_sums(q[start:stop, :h1])
        right = np.sort(_subset_sums(q[start:stop, h1:]), axis=1)
        span = int(total[start:stop].max()) + 2
        offsets = np.arange(stop - start, dtype=np.int64)[:, None] * span
        flat = (right + offsets).ravel()
        # For each left sum l, the right sums r with l + r >= need, by one binary search over all rows.
        target = np.clip(need[start:stop, None] - left, 0, span - 1) + offsets
        position = np.searchsorted(flat, target.ravel(), side="left").reshape(target.shape)
        position -= (np.arange(stop - start, dtype=np.int64) << h2)[:, None]
        hits = ((1 << h2) - position).sum(axis=1)
        p = np.minimum(1.0, 2.0 * hits / float(1 << k))
        out[start:stop] = np.where(observed[start:stop] == 0, 1.0, p)
    return out


def _log_factorials(n: int) -> FloatArray:
    return np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=np.float64)))])


def _binomial(k: IntArray, wins: IntArray) -> FloatArray:
    """Two-sided exact binomial (sign test) p-values: ``wins`` of ``k`` one way, p = 1/2."""
    out = np.ones(k.size)
    logf = _log_factorials(int(k.max()))
    for n in np.unique(k):
        rows = np.flatnonzero(k == n)
        j = np.arange(n + 1)
        pmf = np.exp(logf[n] - logf[j] - logf[n - j] - n * math.log(2.0))
        tail = np.cumsum(pmf[::-1])[::-1]  # tail[m] = P(X >= m)
        extreme = np.maximum(wins[rows], n - wins[rows])
        p = np.minimum(1.0, 2.0 * tail[extreme])
        out[rows] = np.where(2 * wins[rows] == n, 1.0, p)
    return out


def sign_flip_test(diffs: FloatArray, seed: int = 0) -> tuple[FloatArray, NDArray[np.int8]]:
    """Two-sided paired permutation p-value of each row of per-task differences.

    ``diffs`` is (pairs, tasks) with 0 wherever there is no difference (a tie, or a task
    the two models do not share): a zero flips to itself and changes nothing. Returns the
    p-values and the method codes (``METHOD_NAMES``). Rows with no non-zero difference
    get p = 1 (method NONE). Each row is first scaled by a power of two to a largest |d| in
    [1/2, 1): p does not depend on the scale (weights of 1e-12 or 1e300 test as weights of 1),
    the scaling is exact, and the integer grid cannot overflow. ``seed`` is unused (no p is drawn).
    """
    pairs = diffs.shape[0]
    p = np.ones(pairs)
    method = np.full(pairs, NONE, dtype=np.int8)
    if pairs == 0:
        return p, method
    diffs = scaled_rows(diffs)
    q = quantised(diffs)
    nonzero = np.count_nonzero(q, axis=1)
    signed = q.sum(axis=1) - 2 * np.where(diffs < 0, q, 0).sum(axis=1)
    top = q.max(axis=1)
    # Equal magnitudes: every non-zero q equals the row's largest (to rounding).
    equal = ((q >= top[:, None] - 2) | (q == 0)).all(axis=1)
    binomial = equal & (nonzero > EXACT_MAX_NONZERO)
    if binomial.any():
        wins = ((diffs > 0) & (q > 0)).sum(axis=1)
        p[binomial] = _binomial(nonzero[binomial], wins[binomial])
        method[binomial] = BINOMIAL
    # Many differences: the saddlepoint tail (stats/signflip.py), on the same grid and slack as the exact test.
    many = np.flatnonzero(~binomial & (nonzero > EXACT_MAX_NONZERO))
    if many.size:
        values = diffs if many.size == pairs else diffs[many]
        observed = np.abs(signed[many]).astype(np.float64) * QUANTUM
        p[many] = tail_p(values, observed, nonzero[many] * QUANTUM)
        method[many] = SADDLEPOINT
    # The rest, grouped by k, with each row's non-zero values packed to the front.
    small = ~binomial & (nonzero > 0) & (nonzero <= EXACT_MAX_NONZERO)
    for k in map(int, np.unique(nonzero[small])):
        rows = np.flatnonzero((nonzero == k) & small)
        values_k = -np.sort(-q[rows], axis=1)[:, :k]
        p[rows] = _exact(values_k, signed[rows])
        method[rows] = EXACT
    return p, method


def scaled_rows(diffs: FloatArray) -> FloatArray:
    """Each row times the power of two that brings its largest |value| into [1/2, 1) (a zero row as it is)."""
    top = np.abs(diffs).max(axis=1) if diffs.shape[1] else np.zeros(diffs.shape[0])
    _, exponent = np.frexp(np.where((top > 0) & np.isfinite(top), top, 0.5))
    # A power of two multiplies exactly: only the exponent of every value moves.
    return np.asarray(diffs * np.ldexp(1.0, -exponent)[:, None])


def holm(p_values: FloatArray) -> FloatArray:
    """Holm's step-down adjusted p-values (controls the family-wise error rate at any dependence)."""
    m = p_values.size
    if m == 0:
        return p_values.copy()
    order = np.argsort(p_values, kind="stable")
    scaled = np.minimum(1.0, p_values[order] * (m - np.arange(m)))
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted
