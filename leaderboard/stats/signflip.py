"""The sign-flip test's tail where enumeration is too costly: a saddlepoint p that reaches any level.

Under "no difference" each of the k non-zero per-task (or per-cluster) differences d_i keeps or
flips its sign with probability 1/2, so the statistic S = sum s_i |d_i| has the cumulant generating
function K(t) = sum log cosh(t |d_i|). Its tail P(S >= s) is approximated by Lugannani and Rice's
saddlepoint formula, which Robinson (1982, JRSS B 44, "Saddlepoint approximations for permutation
tests and confidence intervals") derived for exactly this randomisation distribution:

    K'(t) = s,   w = sqrt(2 (t s - K(t))),   u = t sqrt(K''(t)),
    P(S >= s) ~ 1 - Phi(w) + phi(w) (1/u - 1/w).

Its *relative* error is O(1/k) uniformly over the tail (Robinson 1982; Jensen 1995, ch. 6), not an
absolute error: unlike a normal or Monte Carlo p, the approximation is as good at 1e-8 as at 0.05,
so it can reach Holm's first level however large the family. Measured (benchmarks/bench_pvalues.py,
tests/test_signflip.py) against the exact enumeration at k = 27-32 and against 2e7 Monte Carlo
patterns at k = 200, continuous, rounded and heavy-tailed differences: within ERROR_BOUND
(relative) wherever p <= 0.2.

Where the differences sit on a lattice (every |d_i| a multiple of g: rounded scores), S moves in
steps of 2g and has atoms; the formula is then taken at s - g with u = sinh(t g) sqrt(K''(t)) / g
(Daniels 1987's second continuity correction), which keeps an atom's own mass in the tail.

Two cheap exact or rigorous pieces bound the approximation from above:

* Chernoff: P(S >= s) <= exp(K(t) - t s) at the saddlepoint, an upper bound of the exact tail;
  the returned tail never exceeds it;
* a sum that no other pattern reaches (s above total - 2 min |d_i|): exactly 2^-k.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

# The largest relative error of the one-sided tail measured against exact references (see above).
ERROR_BOUND = 0.07
# Newton steps on K'(t) = s; from t = s / sum d^2 (below the root, K' concave) every step rises to it.
_NEWTON_STEPS = 60
_TOLERANCE = 1e-12
# Below this standardised sum the tail is above 0.3: the normal approximation says it, with no
# saddlepoint singularity at w = u = 0.
_CENTRE_Z = 0.5
# Where Hoeffding's bound 2 exp(-s^2 / (2 sum d^2)) is this small it is the p: alpha / m is never below
# ~1e-13 (b >= 20 / alpha resamples, at most MAX_BOOTSTRAP_SAMPLES; pairs of at most a few thousand models).
FAR_TAIL = 1e-30
# Rows whose effective number of differences is below DOMINATED enumerate their ENUMERATED largest
# (about 1% of rows of 27 normal differences, none at 50: the cost stays small).
DOMINATED = 5.0
ENUMERATED = 8
_BLOCK_ELEMENTS = 1 << 22
# A tail holding fewer than 2^EXTREME_PATTERNS_LOG2 of the 2^k patterns is read from Chernoff's bound.
EXTREME_PATTERNS_LOG2 = 6
# Two multiples of a span are taken as such to this absolute error (values scaled to at most 1).
LATTICE_TOLERANCE = 1e-9
# Candidate lattice spans: the smallest |d| divided by 1..4 (0.2 and 0.3 sit on a lattice of 0.1).
_DIVISORS = (1, 2, 3, 4)
_PROBE = 32


def _log_cosh(x: FloatArray) -> FloatArray:
    a = np.abs(x)
    return np.asarray(a + np.log1p(np.exp(-2.0 * a)) - math.log(2.0))


_ERFC = np.vectorize(math.erfc, otypes=[np.float64])


def _normal_tail(x: FloatArray) -> FloatArray:
    """1 - Phi(x), to full relative precision far into the tail (math.erfc; rows are few)."""
    return np.asarray(_ERFC(np.asarray(x, dtype=np.float64) / math.sqrt(2.0)) / 2.0)


def lattice_span(values: FloatArray, tolerance: float) -> FloatArray:
    """Each row's lattice span g (every non-zero |d| a whole multiple of g, to ``tolerance``), else 0."""
    rows = values.shape[0]
    smallest = np.where(values > 0, values, np.inf).min(axis=1)
    span = np.zeros(rows)
    open_rows = np.flatnonzero(np.isfinite(smallest))
    for divisor in _DIVISORS:
        if not open_rows.size:
            break
        g = smallest[open_rows] / divisor
        # Continuous differences fail on their first few values: test those before the whole row.
        fits = _multiples(values[open_rows, :_PROBE], g, tolerance)
        fits[fits] = _multiples(values[open_rows[fits]], g[fits], tolerance)
        span[open_rows[fits]] = g[fits]
        open_rows = open_rows[~fits]
    return span


def _multiples(values: FloatArray, g: FloatArray, tolerance: float) -> NDArray[np.bool_]:
    ratio = values / g[:, None]
    return np.asarray((np.abs(ratio - np.rint(ratio)) * g[:, None] <= tolerance).all(axis=1))


def tail_p(values: FloatArray, observed: FloatArray, tolerance: FloatArray | float = 0.0) -> FloatArray:
    """Two-sided sign-flip p of each row: 2 P(S >= observed), at most 1.

    ``values`` is (rows, k) of d or |d| (only magnitudes count; zeros flip to themselves); ``observed`` is each row's
    |sum of the signed d|; ``tolerance`` the rounding within which two sums are equal (per row, or one
    for all). Values are best scaled to at most 1 (a lattice is detected to LATTICE_TOLERANCE).

    A row whose few largest differences dominate (effective number of differences (sum d^2)^2 / sum d^4
    below DOMINATED) is enumerated over its ENUMERATED largest ones, each pattern adding the saddlepoint
    tail of the rest: the saddlepoint's relative error grows as the effective number falls, and a sum of
    few large terms is what enumeration does exactly.
    """
    rows = values.shape[0]
    out = np.ones(rows)
    if rows == 0:
        return out
    tolerance = np.broadcast_to(np.asarray(tolerance, dtype=np.float64), (rows,))
    squares = (values * values).sum(axis=1)
    s = observed - tolerance
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        hoeffding = 2.0 * np.exp(-0.5 * s * s / squares)
    # Hoeffding's bound is itself a valid p; below FAR_TAIL it decides at every level a family can hold.
    far = (squares > 0) & (s > 0) & (hoeffding <= FAR_TAIL)
    out[far] = hoeffding[far]
    near = np.flatnonzero((squares > 0) & ~far)
    if near.size:
        out[near] = _near(np.abs(values[near]), observed[near], tolerance[near], squares[near])
    return out


def _near(values: FloatArray, observed: FloatArray, tolerance: FloatArray, squares: FloatArray) -> FloatArray:
    """tail_p of rows with some non-zero value whose p may be near a level in force."""
    out = np.ones(values.shape[0])
    total = values.sum(axis=1)
    nonzero = np.count_nonzero(values, axis=1)
    span = lattice_span(values, LATTICE_TOLERANCE)
    smallest = np.where(values > 0, values, np.inf).min(axis=1)
    # Only the all-one-way pattern (and its mirror) reaches a sum this large: exactly 2 / 2^k.
    alone = observed > total - 2.0 * smallest + tolerance
    out[alone] = np.exp2(1.0 - nonzero[alone])
    v2 = values * values
    with np.errstate(divide="ignore", invalid="ignore"):
        effective = squares * squares / (v2 * v2).sum(axis=1)
    few = (effective < DOMINATED) & (nonzero > ENUMERATED + 1)
    plain = np.flatnonzero(~alone & ~few)
    if plain.size:
        level = _level(observed[plain], span[plain], tolerance[plain])
        out[plain] = np.minimum(1.0, 2.0 * upper_tail(values[plain], level, span[plain]))
    dominated = np.flatnonzero(~alone & few)
    if dominated.size:
        tails = _partly_enumerated(values[dominated], observed[dominated], span[dominated], tolerance[dominated])
        out[dominated] = np.minimum(1.0, 2.0 * tails)
    # Within the few most extreme patterns the distribution is a handful of atoms the smooth formula
    # cannot resolve (measured: up to 2x too small): there p is Chernoff's bound, an upper bound of the exact tail.
    extreme = np.flatnonzero(~alone & (out < np.exp2(EXTREME_PATTERNS_LOG2 + 1.0 - nonzero)))
    if extreme.size:
        level = _level(observed[extreme], span[extreme], tolerance[extreme])
        _, bound = _saddlepoint(values[extreme], level, squares[extreme], span[extreme])
        out[extreme] = np.minimum(1.0, 2.0 * bound)
    return out


def _level(observed: FloatArray, span: FloatArray, tolerance: FloatArray) -> FloatArray:
    """Where the continuous tail is read: half a lattice step below an atom (its own mass counts)."""
    return np.where(span > 0, observed - span, observed - tolerance)


def _partly_enumerated(values: FloatArray, observed: FloatArray, span: FloatArray, tolerance: FloatArray) -> FloatArray:
    """P(S >= observed): every pattern of the ENUMERATED largest |d|, the saddlepoint over the rest."""
    ordered = -np.sort(-values, axis=1)
    top, rest = ordered[:, :ENUMERATED], ordered[:, ENUMERATED:]
    count = 1 << ENUMERATED
    patterns = ((np.arange(count)[:, None] >> np.arange(ENUMERATED)[None, :]) & 1) * 2.0 - 1.0
    # (rows, 2^J), summed row by row: a matrix product's blocking would depend on the rows tested together.
    top_sums = (top[:, None, :] * patterns[None, :, :]).sum(axis=2)
    need = _level((observed[:, None] - top_sums).ravel(), np.repeat(span, count), np.repeat(tolerance, count)).reshape(
        top_sums.shape
    )
    out = np.empty(values.shape[0])
    # Rows in groups whose expanded (rows x 2^J, k - J) block stays ~32 MiB.
    group = max(1, _BLOCK_ELEMENTS // (count * max(1, rest.shape[1])))
    for first in range(0, values.shape[0], group):
        last = min(values.shape[0], first + group)
        block = np.repeat(rest[first:last], count, axis=0)
        spans = np.repeat(span[first:last], count)
        tails = upper_tail(block, need[first:last].ravel(), spans).reshape(last - first, count)
        out[first:last] = tails.mean(axis=1)
    return out


def upper_tail(values: FloatArray, level: FloatArray, span: FloatArray) -> FloatArray:
    """P(S >= level) read from the saddlepoint at any real level (1 - the mirror tail below 0)."""
    squares = (values * values).sum(axis=1)
    some = squares > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.abs(level) / np.sqrt(squares)
    centre = some & (z < _CENTRE_Z)
    tail = np.zeros(level.size)
    tail[centre] = _normal_tail(z[centre])
    far = np.flatnonzero(some & ~centre & (np.abs(level) < values.sum(axis=1)))
    if far.size:
        tail[far] = _saddlepoint(values[far], np.abs(level[far]), squares[far], span[far])[0]
    tail = np.where(some, tail, 0.0)
    return np.asarray(np.where(level > 0, tail, 1.0 - tail) if True else tail)


def _saddlepoint(
    values: FloatArray, s: FloatArray, squares: FloatArray, span: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """P(S >= s) by Lugannani-Rice (with the lattice correction where span > 0), capped by Chernoff's bound,
    and that bound exp(K(t) - t s) itself."""
    t = s / squares  # K'(t) <= t sum d^2: this start is at or below the root
    active = np.arange(values.shape[0])
    for _ in range(_NEWTON_STEPS):
        v = values[active]
        x = t[active, None] * v
        th = np.tanh(x)
        slope = (v * th).sum(axis=1)
        curvature = (v * v * (1.0 - th * th)).sum(axis=1)
        gap = s[active] - slope
        step = gap / np.maximum(curvature, 1e-300)
        t[active] += np.maximum(step, 0.0)
        done = (np.abs(gap) <= _TOLERANCE * s[active]) | (step <= _TOLERANCE * t[active])
        active = active[~done]
        if active.size == 0:
            break
    x = t[:, None] * values
    th = np.tanh(x)
    k = _log_cosh(x).sum(axis=1)
    k2 = (values * values * (1.0 - th * th)).sum(axis=1)
    exponent = np.maximum(t * s - k, 0.0)
    w = np.sqrt(2.0 * exponent)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        scale = np.where(span > 0, np.sinh(t * span) / np.where(span > 0, span, 1.0), t)
        u = scale * np.sqrt(k2)
        density = np.exp(-0.5 * w * w) / math.sqrt(2.0 * math.pi)
        tail = _normal_tail(w) + density * (1.0 / u - 1.0 / w)
    chernoff = np.exp(-exponent)
    tail = np.where(np.isfinite(tail) & (tail > 0), tail, chernoff)
    return np.asarray(np.minimum(tail, chernoff)), chernoff
