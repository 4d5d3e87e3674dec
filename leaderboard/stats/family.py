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
Holm's first step asks for p <= alpha / m. A Monte Carlo p-value of R patterns is at least
1 / (1 + R), so for a large family a pair whose first p is at most REFINE_HITS hits from that
floor (p1 <= c = (1 + REFINE_HITS) / (1 + R)) gets a second, larger draw of
``family_resamples(m, alpha)`` patterns, and its p2 replaces p1. That keeps the p valid at every
level v: for v <= c, a final p <= v needs p2 <= v; for v > c, it needs p1 <= v (a refined pair
has p1 <= c < v), and each of p1, p2 is valid. R2 depends on the number of pairs tested (which
models share tasks), not on the scores, unless so many pairs are near the floor that the second
draw would exceed REFINE_BUDGET: then R2 is cut to fit (a pair far apart may then miss Holm's
first steps; no pair becomes easier to call).

The level in force
------------------
After Holm's step-down has made r claims out of m, a pair not yet separated is separated
exactly when its p is at most alpha / (m - r) (it would take its place among the first r + 1
and every step before it passes). That is the level the minimum detectable difference
(stats/power.py) is computed at.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from .resampling import keyed_rng
from .significance import MC_RESAMPLES, MONTE_CARLO, holm, min_tasks, quantised

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

Correction = Literal["holm", "none"]
CORRECTIONS: tuple[Correction, ...] = ("holm", "none")
DEFAULT_CORRECTION: Correction = "holm"
# How each correction is named in the documents.
METHOD_WORDS = {"holm": "Holm's step-down", "none": "none (each pair at alpha)"}

# Patterns held at once by the second Monte Carlo draw (~32 MiB of float64 sign patterns).
_PATTERN_ELEMENTS = 1 << 22
# The most patterns the second draw takes: a floor of 1e-6, alpha / m at 50,000 pairs at 0.05.
MAX_FAMILY_RESAMPLES = 1_000_000
# A first Monte Carlo p within this many hits of its floor gets the second draw, of at most
# this many multiply-adds in all (a second or two).
REFINE_HITS = 2
REFINE_BUDGET = 2.0**31


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


def family_resamples(size: int, alpha: float) -> int:
    """Patterns whose Monte Carlo floor 1 / (1 + R) is at most half of Holm's first level alpha / size."""
    return int(min(MAX_FAMILY_RESAMPLES, max(MC_RESAMPLES, math.ceil(2.0 * size / alpha))))


def refine_monte_carlo(
    diffs: FloatArray, p: FloatArray, method: NDArray[np.int8], alpha: float, size: int, seed: int
) -> FloatArray:
    """Two-sided p of the Monte Carlo rows near their floor again, on ``family_resamples(size, alpha)`` patterns.

    The arithmetic is significance._monte_carlo's (the same slack of k grid steps); the patterns
    depend on (seed, k, R) alone, so a pair's p does not depend on which others are tested. The
    second draw costs rows x k x R multiply-adds: past REFINE_BUDGET, R is cut to fit (never
    below the first draw's). That happens only when many pairs are far apart, which no test of a
    true "no difference" is (under it, a p this small is itself rare).
    """
    rows = np.flatnonzero((method == MONTE_CARLO) & (p * (1.0 + MC_RESAMPLES) <= 1.0 + REFINE_HITS + 1e-6))
    out = p.copy()
    if rows.size == 0:
        return out
    q = quantised(diffs[rows])
    nonzero = (q > 0).sum(axis=1)
    resamples = family_resamples(size, alpha)
    work = float(nonzero.sum()) * resamples
    if work > REFINE_BUDGET:
        resamples = max(MC_RESAMPLES, int(REFINE_BUDGET // max(1, int(nonzero.sum()))))
    if resamples <= MC_RESAMPLES:
        return out
    signed = (np.sign(diffs[rows]).astype(np.int64) * q).sum(axis=1)
    for k in map(int, np.unique(nonzero)):
        at = np.flatnonzero(nonzero == k)
        values = (-np.sort(-q[at], axis=1)[:, :k]).astype(np.float64)
        observed = np.abs(signed[at]).astype(np.float64) - float(k)
        rng = keyed_rng(seed, [b"sign-flip family", k.to_bytes(8, "little"), resamples.to_bytes(8, "little")])
        hits = np.zeros(at.size, dtype=np.int64)
        # Patterns in blocks, rows in groups: a block of sums (rows x patterns) stays ~32 MiB.
        count = max(1024, _PATTERN_ELEMENTS // k)
        group = max(1, _PATTERN_ELEMENTS // count)
        for first in range(0, resamples, count):
            n_patterns = min(count, resamples - first)
            signs = rng.integers(0, 2, (k, n_patterns), dtype=np.int8).astype(np.float64) * 2.0 - 1.0
            for g in range(0, at.size, group):
                sums = values[g : g + group] @ signs
                hits[g : g + group] += (np.abs(sums) >= observed[g : g + group, None]).sum(axis=1)
        out[rows[at]] = (1.0 + hits) / (1.0 + resamples)
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
