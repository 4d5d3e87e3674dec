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
and every step before it passes). That is the level the minimum detectable difference
(stats/power.py) is computed at.

The intervals beside the claims
-------------------------------
An interval at alpha beside a Holm verdict can contradict it: of 500 re-measured models, 76 had a
one-sided 95% bound that excluded 0 and a Holm-adjusted p of 1. So each bound of the baseline
comparison is at alpha / m (:func:`simultaneous`, Bonferroni over the m members): all m hold at once
with probability at least 1 - alpha. Holm's later steps reject at more than alpha / m, so a claim
also needs its bound to exclude 0 (a Holm rejection alone does not make a Bonferroni bound exclude
0). The leaderboard's pairs keep each pair's own interval at alpha: there Holm's step-down separates
most pairs of a typical table, and Bonferroni intervals would undo it. In both, a row not claimed has
its interval reach 0 (``paired.reaching_zero``) where the interval alone would exclude it, so every
interval shown says what its verdict says, at any m.
"""

from __future__ import annotations

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


def check_correction(correction: object) -> None:
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, got {correction!r}")


def family_members(nonzero: IntArray, alpha: float) -> NDArray[np.bool_]:
    """Which hypotheses are in the family: those whose test can reach ``alpha`` at all."""
    return np.asarray(nonzero >= min_tasks(alpha))


def simultaneous(alpha: float, family: int) -> float:
    """The level of each of ``family`` intervals that all hold at once with probability >= 1 - alpha."""
    return float(alpha) / max(1, int(family))


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
