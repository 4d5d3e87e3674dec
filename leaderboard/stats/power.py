"""What a suite can resolve: the minimum detectable difference of the test and level actually used.

A figure "detects ±x with 80% power" is a promise about the next suite of the same size: a pair
whose true difference is x is separated 80% of the time by the test the tool runs, at the level
that pair is held to. A normal-approximation formula on the median pair's spread keeps that
promise only when the pair in question is the median one and the test behaves like a z-test
(neither the exact sign-flip test at a dozen tasks nor the discrete McNemar test does). So the
figure is computed for one named pair, from that pair's own per-unit differences:

* **0/1 differences** (every non-zero difference of one size, the McNemar case): exact power.
  With K ~ Bin(n, psi) discordant units (psi the observed share, or delta when the shift is
  larger) and each discordant unit in the direction of the shift with probability
  (psi + delta) / (2 psi), the power is the sum over K of the binomial probability that the
  exact sign test rejects at the level.
* **Clustered, where the statistics run the CR2 t-test** (the cluster sign-flip's smallest p, 2 / 2^C,
  cannot reach the family's strictest level: stats/paired.py clustered_p): simulation from the observed
  cluster sums, as below, with the CR2 t-test itself in each resample: t = mean / sqrt(V) against
  Student's t at that resample's Bell-McCaffrey df (it moves with the resampled cluster sizes), so the
  figure carries the few df's heavy tails that a sign-flip or normal power would leave out. Which test
  a suite of n clusters gets is read from n and the family, as the statistics read it; below the fewest
  clusters a claim needs (min_tasks(alpha)) nothing is detectable.
* **Any other differences**: simulation from the observed differences. R resamples of the
  units, centred (and rescaled by sqrt(n / (n - 1)), so that their spread is the sample's
  unbiased one), plus a shift delta (delta times the unit's size, for clusters). The test is
  the one the statistics run: the exact sign-flip test up to EXACT_POWER_MAX units, else its
  normal form |sum x| / sqrt(sum x^2) >= z (z with the Cornish-Fisher term of the sign-flip
  sum's kurtosis), which for a shift delta is a closed form in the resamples' sums of powers,
  so the bisection on delta costs O(R) a step.

The shift reaching POWER is found by bisection (power is monotone in the shift for each
resample). The same computation, bisected on the number of units instead, gives the suite size
that detects a declared effect (``min-effect``). Each uses keyed resamples: the same data and
seed give the same figure.

The post-hoc "about N tasks would tell" (the observed difference plugged into a power formula)
is not computed: it is a function of the p-value beside it, and suites extended to that size
separated small differences under half the time.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from .clustering import cr2, t_two_sided_p
from .resampling import keyed_rng
from .significance import quantised, sign_flip_test

FloatArray = NDArray[np.float64]

POWER = 0.8
# Resamples of the simulated power: its Monte Carlo SE at 80% is 0.013.
POWER_RESAMPLES = 1000
# A spread at or below the tie tolerance (ties.TIE_ABS_TOL) is rounding noise of equal scores.
NO_SPREAD = 1e-12
# Up to this many units the power is the exact sign-flip test's (its discreteness matters most there);
# beyond, its normal form (the enumeration of 2^n patterns per resample would cost seconds).
EXACT_POWER_MAX = 10
# Up to this many, the exact test's p by its saddlepoint approximation; beyond, the normal form (with
# the kurtosis term), whose error shrinks as 1 / n.
SADDLEPOINT_MAX = 30
# Past this many units the sum of resampled units is normal to well within the simulation's error.
ANALYTIC_FROM = 2000
# The most units a declared effect is sized to; beyond, "more than" this.
MAX_UNITS = 10**7

Unit = Literal["task", "cluster"]


@dataclass(frozen=True)
class ClusterTest:
    """How the clustered statistics test a row of C non-zero cluster sums: the cluster sign-flip where its
    smallest p (2 / 2^C) reaches ``reach`` (two-sided: the family's strictest level, Holm's alpha / m), else
    the CR2 t-test; with fewer than ``fewest`` shared clusters (min_tasks(alpha)) nothing is claimed."""

    reach: float
    fewest: int

    def t_test_at(self, clusters: int) -> bool:
        """Whether a row of ``clusters`` non-zero cluster sums is tested by the CR2 t-test (C alone decides)."""
        return 2.0 / 2.0 ** min(clusters, 1100) > self.reach


@dataclass(frozen=True)
class Detectable:
    """What the suite can resolve for the pair ``pair`` (two model ids; one model id for a change
    against its baseline): with ``n_shared`` shared units (tasks, or clusters when the statistics flip
    clusters), a true difference of ``difference`` is detected with ``power`` at ``level`` by the test
    the statistics run on that pair (``exact``: an exact power computation, else simulated). ``sd``
    is that pair's spread of per-unit differences (clustered: of the cluster sums per task)."""

    n_shared: int
    sd: float
    level: float
    two_sided: bool
    difference: float  # NaN when no difference can reach POWER at this level with these units
    power: float = POWER
    unit: Unit = "task"
    # The smallest Bell-McCaffrey df among the clustered pairs counted (inf unclustered or unknown).
    df: float = math.inf
    fewest: int = 1  # the fewest units with which the test can reach the level at all
    pair: tuple[str, ...] = ()
    exact: bool = False
    min_effect: float | None = None
    # Units of this pair's kind that detect ``min_effect`` with ``power`` (-1: more than MAX_UNITS).
    units_for_effect: int | None = None
    # Clustered: the figure is the CR2 t-test's power at its Bell-McCaffrey df (the test run on this pair).
    t_test: bool = False

    @property
    def reachable(self) -> bool:
        return self.n_shared >= self.fewest and not math.isnan(self.difference)


def fewest_at(level: float, *, two_sided: bool = True) -> int:
    """The fewest non-zero differences whose sign-flip test can reach ``level`` (its smallest p is 2 / 2^k,
    one-sided 1 / 2^k)."""
    return max(1, math.ceil(math.log2(2.0 / (level * (1.0 if two_sided else 2.0))) - 1e-12))


def typical(n_shared: NDArray[np.integer], sd: FloatArray) -> int | None:
    """The pair whose spread of differences is the median among pairs with two units and a spread (the
    lower middle one; the first listed among equal spreads), or None when there is none."""
    ok = np.flatnonzero((n_shared > 1) & np.isfinite(sd) & (sd > NO_SPREAD))
    if ok.size == 0:
        return None
    ordered = ok[np.argsort(sd[ok], kind="stable")]
    return int(ordered[(ordered.size - 1) // 2])


def _binary_step(values: FloatArray) -> float | None:
    """The one size of every non-zero value (0/1 differences), or None when they differ."""
    q = quantised(values)
    nonzero = q[q > 0]
    if nonzero.size == 0 or int(nonzero.max()) - int(nonzero.min()) > 2:
        return None
    return float(np.abs(values[values != 0]).max())


# --- exact power of the sign (McNemar) test -------------------------------------------------------


def _binary_power(n: int, psi: float, shift: float, level: float, two_sided: bool) -> float:
    """Power of the exact sign test over n units, discordant share psi, shift (in steps) toward +.

    Exact (a table of binomial probabilities over the likely discordant counts) up to ANALYTIC_FROM
    units; beyond, the normal approximation of the binomial with its continuity correction.
    """
    if n <= 0 or psi <= 0.0:
        return 0.0
    # A shift beyond the observed discordance makes more units discordant, all of them its way.
    psi = min(1.0, max(psi, shift))
    up = min(1.0, max(0.0, (psi + shift) / (2.0 * psi)))
    tail = level / 2.0 if two_sided else level
    if n > ANALYTIC_FROM:
        return _binary_power_normal(n * psi, up, tail, two_sided)
    spread = 8.0 * math.sqrt(n * psi * (1.0 - psi)) + 2.0
    k = np.arange(max(1, int(n * psi - spread)), min(n, math.ceil(n * psi + spread)) + 1)
    if k.size == 0:
        return 0.0
    log_factorial = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=np.float64)))])
    m = np.arange(int(k.max()) + 1)
    inside = m[None, :] <= k[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_choose = np.where(
            inside,
            log_factorial[k][:, None] - log_factorial[m][None, :] - log_factorial[np.abs(k[:, None] - m)],
            -np.inf,
        )
        null = np.exp(log_choose - k[:, None] * math.log(2.0))
        # P(X >= m) under no difference, and the fewest wins that reject (k + 1: none do).
        null_tail = np.cumsum(null[:, ::-1], axis=1)[:, ::-1]
        critical = np.where(null_tail <= tail * (1.0 + 1e-9), m[None, :], k[:, None] + 1).min(axis=1)
        log_up = math.log(up) if up > 0 else -math.inf
        log_down = math.log1p(-up) if up < 1 else -math.inf
        alternative = np.exp(log_choose + np.nan_to_num(m[None, :] * log_up, nan=0.0)
                             + np.nan_to_num((k[:, None] - m[None, :]) * log_down, nan=0.0))  # fmt: skip
    alternative = np.where(inside, np.nan_to_num(alternative), 0.0)
    reject = np.where(m[None, :] >= critical[:, None], alternative, 0.0).sum(axis=1)
    if two_sided:
        reject += np.where(m[None, :] <= (k - critical)[:, None], alternative, 0.0).sum(axis=1)
    with np.errstate(divide="ignore"):
        weight = np.exp(
            log_factorial[n] - log_factorial[k] - log_factorial[n - k]
            + k * math.log(psi) + _times_log(n - k, 1.0 - psi)
        )  # fmt: skip
    return float(np.sum(np.nan_to_num(weight) * reject))


def _times_log(count: NDArray[np.int64], p: float) -> FloatArray:
    """count x log p, with 0 x log 0 = 0 (no unit of a kind that has no chance)."""
    if p > 0:
        return np.asarray(count * math.log(p), dtype=np.float64)
    return np.where(count == 0, 0.0, -np.inf)


def _binary_power_normal(k: float, up: float, tail: float, two_sided: bool) -> float:
    """The sign test's power over ~k discordant units, by the normal approximation of the binomial."""
    normal = NormalDist()
    z = normal.inv_cdf(1.0 - tail)
    bound = k / 2.0 + z * math.sqrt(k) / 2.0 + 0.5  # the fewest wins that reject, continuity-corrected
    sd = math.sqrt(max(k * up * (1.0 - up), 1e-300))
    power = 1.0 - normal.cdf((bound - k * up) / sd)
    if two_sided:
        power += normal.cdf((k - bound - k * up) / sd)
    return power


# --- simulated power of the sign-flip test --------------------------------------------------------


@dataclass(frozen=True)
class _Resamples:
    """R resamples of n centred units x with their sizes s: the sums of x^a s^b the normal form of the test
    needs at any shift (``sums[a, b]``), or the units themselves for the exact test at few units."""

    sums: FloatArray  # (5, 5, R): sums[a, b] = sum of x^a s^b over a resample's units
    values: FloatArray | None  # (R, n) centred values, kept for the exact test at few units
    sizes: FloatArray | None


def _resamples(centred: FloatArray, sizes: FloatArray, n: int, seed: int) -> _Resamples:
    rng = keyed_rng(seed, [b"power", n.to_bytes(8, "little"), centred.size.to_bytes(8, "little")])
    at = rng.integers(0, centred.size, (POWER_RESAMPLES, n))
    # The spread is estimated from the pair's own units: each resample's is drawn as uncertain as that
    # estimate (sigma / s as sqrt(m / chi2_m), m = units - 1), so the power is averaged over the spreads
    # the data allow, and a figure from an underestimated spread does not promise too much.
    df = max(1, centred.size - 1)
    spread = np.sqrt(df / rng.chisquare(df, POWER_RESAMPLES))
    x, s = centred[at] * spread[:, None], sizes[at]
    sums = np.zeros((5, 5, POWER_RESAMPLES))
    unit_sizes = bool(np.all(sizes == 1.0))
    x_power = np.ones_like(x)
    for a in range(5):
        if unit_sizes:
            # Sizes of 1: sum x^a s^b is sum x^a, whatever b.
            sums[a, : 5 - a] = x_power.sum(axis=1)
        else:
            term = x_power
            for b in range(5 - a):
                sums[a, b] = term.sum(axis=1)
                term = term * s
        x_power = x_power * x
    keep = n <= SADDLEPOINT_MAX
    return _Resamples(sums, x if keep else None, s if keep else None)


def _log_cosh(z: FloatArray) -> FloatArray:
    a = np.abs(z)
    return np.asarray(a + np.log1p(np.exp(-2.0 * a)) - math.log(2.0), dtype=np.float64)


def _saddlepoint_p(x: FloatArray) -> FloatArray:
    """Two-sided sign-flip p of each row by the Lugannani-Rice saddlepoint approximation.

    Under sign flips the sum S of a row has the cumulant generating function K(t) = sum log cosh(t x);
    K'(t) = sum x tanh(t x) is increasing and concave for t > 0, so Newton's steps from t = 0 climb to
    the root of K'(t) = |S| from below without overshooting it.
    """
    observed = np.abs(x.sum(axis=1))
    most = np.abs(x).sum(axis=1)
    t = np.zeros(observed.size)
    for _ in range(15):
        tx = t[:, None] * x
        slope = (x * np.tanh(tx)).sum(axis=1)
        curvature = (x * x / np.cosh(np.clip(tx, -350.0, 350.0)) ** 2).sum(axis=1)
        step = np.where(curvature > 0, (observed - slope) / np.maximum(curvature, 1e-300), 0.0)
        t = t + np.maximum(step, 0.0)
    tx = t[:, None] * x
    k = _log_cosh(tx).sum(axis=1)
    curvature = (x * x / np.cosh(np.clip(tx, -350.0, 350.0)) ** 2).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.sqrt(np.maximum(2.0 * (t * observed - k), 0.0))
        u = t * np.sqrt(curvature)
        normal = NormalDist()
        tail = np.array([1.0 - normal.cdf(v) for v in w]) + np.exp(-0.5 * w * w) / math.sqrt(2.0 * math.pi) * (
            1.0 / u - 1.0 / w
        )
    # Near the centre (w -> 0) the formula is 0/0: the normal tail is right there.
    central = w < 1e-3
    tail = np.where(central, [1.0 - NormalDist().cdf(v) for v in observed / np.sqrt((x * x).sum(axis=1))], tail)
    # All flips one way: the largest sum, one pattern of 2^n.
    tail = np.where(observed >= most * (1.0 - 1e-12), 0.5 ** np.count_nonzero(x, axis=1), tail)
    return np.asarray(np.clip(2.0 * tail, 0.0, 1.0), dtype=np.float64)


def _shifted_sum(sums: FloatArray, k: int, shift: float) -> FloatArray:
    """sum of (x + shift s)^k from the sums of x^a s^b (the binomial expansion)."""
    return np.asarray(sum(math.comb(k, j) * shift**j * sums[k - j, j] for j in range(k + 1)), dtype=np.float64)


def _critical(level: float, kurtosis: FloatArray) -> FloatArray:
    """The normal form's critical value with the Cornish-Fisher term of the sign-flip sum's kurtosis.

    A sum of signs times fixed values is lighter-tailed than a normal (standardised fourth cumulant
    -2 sum x^4 / (sum x^2)^2): at a small level the plain z would ask for more than the exact test does.
    """
    z = NormalDist().inv_cdf(1.0 - level)
    return np.asarray(z + kurtosis / 24.0 * (z**3 - 3.0 * z), dtype=np.float64)


def _simulated_power(r: _Resamples, shift: float, level: float, direction: int, seed: int) -> float:
    """Share of resamples whose test (``direction`` 0: two-sided; -1 / +1 one-sided) rejects at the shift."""
    if r.values is not None and r.sizes is not None:
        shifted = r.values + shift * r.sizes
        if shifted.shape[1] <= EXACT_POWER_MAX:
            p, _ = sign_flip_test(shifted, seed)
        else:
            p = _saddlepoint_p(shifted)
        if direction == 0:
            return float(np.mean(p <= level))
        total = shifted.sum(axis=1)
        return float(np.mean((p / 2.0 <= level) & (direction * total > 0)))
    total = _shifted_sum(r.sums, 1, shift)
    squares = _shifted_sum(r.sums, 2, shift)
    fourth = _shifted_sum(r.sums, 4, shift)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(squares > 0, total / np.sqrt(squares), 0.0)
        kurtosis = np.where(squares > 0, -2.0 * fourth / (squares * squares), 0.0)
    if direction == 0:
        return float(np.mean(np.abs(t) >= _critical(level / 2.0, kurtosis)))
    return float(np.mean(direction * t >= _critical(level, kurtosis)))


def _centred(values: FloatArray, sizes: FloatArray) -> FloatArray:
    """The units less the shift they show (mean per size), rescaled to the unbiased spread."""
    n = values.size
    mean = float(values.sum() / sizes.sum())
    return np.asarray((values - mean * sizes) * math.sqrt(n / max(1, n - 1)), dtype=np.float64)


def _analytic_power(
    centred: FloatArray, sizes: FloatArray, n: int, shift: float, level: float, direction: int
) -> float:
    """The normal form's power at n units from the units' moments (large n: the sums are normal)."""
    size, size2 = float(sizes.mean()), float((sizes * sizes).mean())
    var = float((centred * centred).mean())
    cross = float((centred * sizes).mean())
    mean_t = math.sqrt(n) * shift * size / math.sqrt(var + 2.0 * shift * cross + shift * shift * size2)
    scale = math.sqrt(var / (var + 2.0 * shift * cross + shift * shift * size2))
    normal = NormalDist()
    if direction == 0:
        z = normal.inv_cdf(1.0 - level / 2.0)
        return normal.cdf((mean_t - z) / scale) + normal.cdf((-mean_t - z) / scale)
    z = normal.inv_cdf(1.0 - level)
    return normal.cdf((direction * mean_t - z) / scale)


def _cluster_resamples(centred: FloatArray, sizes: FloatArray, n: int, seed: int) -> tuple[FloatArray, FloatArray]:
    """R resamples of n clusters: (centred sums, each drawn as uncertain as the spread's estimate; sizes)."""
    rng = keyed_rng(seed, [b"cr2 power", n.to_bytes(8, "little"), centred.size.to_bytes(8, "little")])
    at = rng.integers(0, centred.size, (POWER_RESAMPLES, n))
    df = max(1, centred.size - 1)
    spread = np.sqrt(df / rng.chisquare(df, POWER_RESAMPLES))
    return centred[at] * spread[:, None], sizes[at]


def _t_test_power(values: FloatArray, sizes: FloatArray, shift: float, level: float, direction: int) -> float:
    """Share of resamples whose CR2 t-test (at each one's Bell-McCaffrey df) rejects at the shift."""
    moments = cr2(values + shift * sizes, sizes)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(moments.variance > 0, moments.mean / np.sqrt(moments.variance), np.nan)
    p = t_two_sided_p(t, moments.df)  # NaN (no t: every sum on its mean) never rejects
    if direction == 0:
        return float(np.mean(p <= level))
    return float(np.mean((p / 2.0 <= level) & (direction * t > 0)))


def _power_at(
    values: FloatArray,
    sizes: FloatArray,
    n: int,
    level: float,
    direction: int,
    seed: int,
    clusters: ClusterTest | None = None,
) -> tuple[Callable[[float], float], bool, float]:
    """(the power at n units as a function of the shift, in score units toward ``direction`` or +; whether
    it is exact; the largest shift the units allow: a 0/1 pair's discordant share). ``clusters``: the units
    are clusters, tested as the clustered statistics choose at n."""
    toward = -1.0 if direction < 0 else 1.0
    if clusters is not None and n < clusters.fewest:
        return lambda shift: 0.0, False, math.inf
    if clusters is not None and clusters.t_test_at(n):
        x, s = _cluster_resamples(_centred(values, sizes), sizes, n, seed)
        return lambda shift: _t_test_power(x, s, toward * shift, level, direction), False, math.inf
    step = _binary_step(values) if np.all(sizes == 1.0) else None
    if step is not None:
        psi = float(np.count_nonzero(values)) / values.size
        # The sign test is symmetric: a drop is as detectable as a rise of the same size.
        return lambda shift: _binary_power(n, psi, shift / step, level, direction == 0), True, step
    centred = _centred(values, sizes)
    if n > ANALYTIC_FROM:
        return lambda shift: _analytic_power(centred, sizes, n, toward * shift, level, direction), False, math.inf
    r = _resamples(centred, sizes, n, seed)
    return lambda shift: _simulated_power(r, toward * shift, level, direction, seed), False, math.inf


def minimum_detectable(
    values: FloatArray,
    level: float,
    *,
    sizes: FloatArray | None = None,
    direction: int = 0,
    seed: int = 0,
    clusters: ClusterTest | None = None,
) -> tuple[float, bool]:
    """(the shift detected with POWER by the test at ``level`` over these units, whether exactly computed).

    ``values``: the pair's tested units (per-task differences, or cluster sums with their ``sizes`` and the
    clustered test choice ``clusters``); ``direction`` 0 two-sided, -1 a drop (the gate), +1 a rise. NaN
    when no shift reaches POWER.
    """
    sizes = np.ones(values.size) if sizes is None else sizes
    fewest = fewest_at(level, two_sided=direction == 0) if clusters is None else clusters.fewest
    if values.size < fewest:
        return math.nan, clusters is None and _binary_step(values) is not None
    power, exact, most = _power_at(values, sizes, values.size, level, direction, seed, clusters)
    scale = float(np.sqrt(np.mean(_centred(values, sizes) ** 2))) / max(float(sizes.mean()), NO_SPREAD)
    hi = min(most, max(scale, NO_SPREAD))
    while power(hi) < POWER:
        if hi >= most or hi > 1e6 * max(scale, NO_SPREAD):
            return math.nan, exact
        hi = min(most, hi * 2.0)
    lo = 0.0
    # To a part in 2^-10 of the bracket: the figure is printed to 3 significant digits.
    width = hi / 1024.0
    while hi - lo > width:
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if power(mid) < POWER else (lo, mid)
    return hi, exact


def units_needed(
    values: FloatArray,
    effect: float,
    level: float,
    *,
    sizes: FloatArray | None = None,
    direction: int = 0,
    seed: int = 0,
    clusters: ClusterTest | None = None,
) -> int:
    """The fewest units of this pair's kind that detect ``effect`` with POWER at ``level`` (-1: more than
    MAX_UNITS), the units drawn from these ``values`` (centred) and shifted by ``effect``; clustered, each
    size tested as the statistics would test it (``clusters``)."""
    sizes = np.ones(values.size) if sizes is None else sizes

    def enough(n: int) -> bool:
        power, _, most = _power_at(values, sizes, n, level, direction, seed, clusters)
        return effect <= most and power(effect) >= POWER

    lo, hi = 1, 2
    while not enough(hi):
        if hi >= MAX_UNITS:
            return -1
        lo, hi = hi, min(MAX_UNITS, hi * 2)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi


def detectable_for(
    values: FloatArray,
    sizes: FloatArray,
    level: float,
    *,
    two_sided: bool,
    seed: int,
    pair: tuple[str, ...],
    sd: float,
    unit: Unit = "task",
    min_effect: float | None = None,
    clusters: ClusterTest | None = None,
) -> Detectable:
    """The named pair's minimum detectable difference at ``level`` (one-sided: a drop), and the units that
    detect ``min_effect``, from the pair's tested units (``values``, with their ``sizes``); ``clusters``:
    the units are clusters, tested as the clustered statistics choose."""
    direction = 0 if two_sided else -1
    fewest = fewest_at(level, two_sided=two_sided) if clusters is None else clusters.fewest
    n = int(values.size)
    difference, exact = minimum_detectable(
        values, level, sizes=sizes, direction=direction, seed=seed, clusters=clusters
    )
    needed = None
    if min_effect is not None:
        needed = units_needed(values, min_effect, level, sizes=sizes, direction=direction, seed=seed, clusters=clusters)
    return Detectable(
        n_shared=n, sd=sd, level=float(level), two_sided=two_sided, difference=difference, unit=unit,
        fewest=fewest, pair=pair, exact=exact, min_effect=min_effect, units_for_effect=needed,
        t_test=clusters is not None and n >= clusters.fewest and clusters.t_test_at(n),
    )  # fmt: skip
