"""Claims about many pairs at once, kept at alpha: the family, its correction and the level in force.

A reader of the leaderboard reads the rank column, the top group, "is best" and the pairwise
table, and a reviewer reads the gate: each is a claim about many pairs (or models) at once.
Tested pair by pair at alpha, some claim in a table of 190 equal pairs is false most of the
time. With the default correction, ``holm``, every such claim comes from Holm's step-down over
the family, so the chance of *any* false claim in the table is at most alpha, whatever the
dependence between the pairs (they share tasks). ``none`` tests each pair at alpha: an
explicit, exploratory per-pair view, which every document then labels as such.

Who is in the family
--------------------
Every pair (or, for the gate, every model compared) whose test *can* reach alpha: at least
``min_tasks(alpha)`` non-zero per-task differences. A pair with fewer (identical models, say)
can never be called significant, whatever the correction; leaving it out is valid because the
sign-flip test is conditional on the |differences|, which decide membership (Tarone's argument).

The gate's family
-----------------
Regressions are a family of their own: each model against its baseline tested *one-sided* for
a drop, Holm-adjusted over the models compared (and improvements, one-sided for a rise, the
same way). The one-sided p is half the two-sided one when the observed sum points that way,
else 1: under "no change" the sign of the sign-flip sum is independent of its size, so this is
a valid one-sided p for each of the tests significance.py uses (and, for 0/1 scores, exactly
the binomial lower tail).

Resolution
----------
Holm's first step asks for p <= alpha / m: 4e-5 for 1,225 pairs. Every p of significance.py
can reach it: the exact and binomial tiers exactly, the rest by the saddlepoint tail of the
same sign-flip distribution, whose error is relative (stats/signflip.py), not a Monte Carlo
floor of 1 / (1 + R). A pair's p is a function of its own differences alone.

The level in force
------------------
After Holm's step-down has made r claims out of m, a pair not yet separated is separated
exactly when its p is at most alpha / (m - r) (it would take its place among the first r + 1
and every step before it passes). That is the level ``tasks_needed`` and the minimum
detectable difference are computed at, for such pairs; a separated pair's is its own step's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from .significance import holm, min_tasks, quantised

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

Correction = Literal["holm", "none"]
CORRECTIONS: tuple[Correction, ...] = ("holm", "none")
DEFAULT_CORRECTION: Correction = "holm"
# How each correction is named in the documents.
METHOD_WORDS = {"holm": "Holm's step-down", "none": "none (each pair at alpha)"}

POWER = 0.8
# A spread at or below the tie tolerance (ties.TIE_ABS_TOL) is rounding noise of equal scores.
NO_SPREAD = 1e-12


def check_correction(correction: object) -> None:
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, got {correction!r}")


def family_members(nonzero: IntArray, alpha: float) -> NDArray[np.bool_]:
    """Which hypotheses are in the family: those whose test can reach ``alpha`` at all."""
    return np.asarray(nonzero >= min_tasks(alpha))


def adjust(p: FloatArray, member: NDArray[np.bool_], correction: Correction) -> FloatArray:
    """The p compared with alpha: Holm-adjusted over the members, or p itself with ``none``.

    A non-member keeps its raw p: it is above alpha already (its test cannot reach alpha).
    """
    out = p.copy()
    if correction != "none":
        out[member] = holm(p[member])
    return out


def one_sided(diffs: FloatArray, p_two: FloatArray, direction: int) -> FloatArray:
    """One-sided p for a shift in ``direction`` (-1: a drop, +1: a rise) from the two-sided p."""
    signed = (np.sign(diffs).astype(np.int64) * quantised(diffs)).sum(axis=1)
    return np.where(direction * signed > 0, p_two / 2.0, 1.0)


def step_levels(adjusted: FloatArray, member: NDArray[np.bool_], alpha: float, correction: Correction) -> FloatArray:
    """The level each hypothesis is held to after the correction (the module docstring).

    ``none``: alpha. ``holm``: for a claim made, its own step's alpha / (m - i + 1); for any
    other, alpha / (m - r) after r claims (alpha itself once every member is claimed).
    """
    levels = np.full(adjusted.shape, float(alpha))
    if correction == "none":
        return levels
    m = int(member.sum())
    claimed = member & (adjusted <= alpha)
    r = int(claimed.sum())
    levels[~claimed] = alpha / max(1, m - r)
    if r:
        at = np.flatnonzero(claimed)
        order = at[np.argsort(adjusted[at], kind="stable")]
        levels[order] = alpha / (m - np.arange(r))
    return levels


def _z(level: float, two_sided: bool) -> float:
    return NormalDist().inv_cdf(1.0 - (level / 2.0 if two_sided else level)) + NormalDist().inv_cdf(POWER)


def tasks_needed_at(
    mean_diff: FloatArray, sd_diff: FloatArray, levels: FloatArray, *, two_sided: bool = True
) -> IntArray:
    """significance.tasks_needed at each hypothesis' own level: -1 when d = 0 or unknown.

    n* = ceil((z_{1-level/2} + z_0.8)^2 s_d^2 / d^2) (z_{1-level} one-sided), never below the
    fewest non-zero differences that can reach the level at all.
    """
    out = np.full(mean_diff.shape, -1, dtype=np.int64)
    ok = np.isfinite(sd_diff) & (mean_diff != 0) & np.isfinite(mean_diff)
    if not ok.any():
        return out
    distinct, inverse = np.unique(levels[ok], return_inverse=True)
    z = np.array([_z(float(v), two_sided) for v in distinct])[inverse]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        n = np.minimum(np.ceil(z * z * sd_diff[ok] ** 2 / mean_diff[ok] ** 2), 2.0**62)
    # min_tasks at each level (one-sided: the smallest p is 1 / 2^k, as two-sided at twice the level).
    fewest = np.maximum(1, np.ceil(np.log2(2.0 / (levels[ok] * (1.0 if two_sided else 2.0))) - 1e-12))
    out[ok] = np.maximum(n, fewest).astype(np.int64)
    return out


Unit = Literal["task", "cluster"]


@dataclass(frozen=True)
class Detectable:
    """What the suite can resolve: with ``n_shared`` shared units (tasks, or clusters when the statistics
    flip clusters), a paired difference of about ±``difference`` is detected with ``power`` at ``level``
    (from the median spread ``sd`` of the per-unit differences: with clusters, sqrt(V C) of the CR2
    variance V of the mean difference over C clusters, so that sd / sqrt(C) is its standard error)."""

    n_shared: int
    sd: float
    level: float
    two_sided: bool
    difference: float  # NaN when n_shared < fewest: no difference at all can be detected at this level
    power: float = POWER
    # "task", or "cluster" with clustering on: n_shared counts clusters and sd is the cluster-robust
    # spread (sqrt(V C)), so the figure agrees with the clustered decisions beside it.
    unit: Unit = "task"
    # The smallest Bell-McCaffrey df among the clustered pairs counted (inf unclustered or unknown).
    df: float = math.inf
    fewest: int = 1  # the fewest non-zero units whose sign-flip test can reach the level at all

    @property
    def reachable(self) -> bool:
        return self.n_shared >= self.fewest


def detectable(
    n_shared: IntArray,
    sd: FloatArray,
    level: float,
    *,
    two_sided: bool = True,
    unit: Unit = "task",
    df: FloatArray | None = None,
) -> Detectable | None:
    """The suite's minimum detectable difference at ``level``: the median pair's n and spread.

    ``n_shared`` and ``sd`` count and measure the units the test flips: with clustering, the shared
    clusters and sqrt(V C) (the per-task spread would promise a resolution the clusters do not give).
    None when no pair has two shared units with a spread to measure (a pair whose differences are all
    0, a model unchanged against its baseline, has none: it would promise to detect "±0").
    """
    ok = (n_shared > 1) & np.isfinite(sd) & (sd > NO_SPREAD)
    if not ok.any():
        return None
    n = int(np.median(n_shared[ok]))
    spread = float(np.median(sd[ok]))
    fewest = fewest_at(level, two_sided=two_sided)
    # Below the fewest units that can reach the level, power is 0 whatever the difference.
    difference = _z(level, two_sided) * spread / math.sqrt(n) if n >= fewest else math.nan
    fewest_df = float(np.min(df[ok])) if df is not None and np.isfinite(df[ok]).any() else math.inf
    return Detectable(
        n_shared=n, sd=spread, level=float(level), two_sided=two_sided, difference=difference, unit=unit,
        df=fewest_df, fewest=fewest,
    )  # fmt: skip


def fewest_at(level: float, *, two_sided: bool = True) -> int:
    """The fewest non-zero differences whose sign-flip test can reach ``level`` (its smallest p is 2 / 2^k,
    one-sided 1 / 2^k)."""
    return max(1, math.ceil(math.log2(2.0 / (level * (1.0 if two_sided else 2.0))) - 1e-12))
