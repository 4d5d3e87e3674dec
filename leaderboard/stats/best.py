"""Which model is best: a confidence set for the best, from each model's comparisons with the others.

The headline ("`A` is best", "`A`, `B` are tied for best") is a claim about one model, not about
every pair: it should not weaken when models far below join the suite. All-pairs Holm holds it to
alpha / (M (M - 1) / 2) at its first step, so adding nine weak models to six moved the example's
leader from "significantly ahead" to "too close to call" on the same tasks and the same gap.

The set (multiple comparisons with the best, in the spirit of Hsu's MCB and the rank confidence
sets of Mogstad, Romano, Shaikh and Wilhelm): a model is left out when some other model is ahead
of it on the tasks both ran, one-sided sign-flip p <= alpha / (M - 1), and the pair's interval
excludes 0 on that side. Every other model stays in.

Guarantee: the true best b is left out only if one of its own M - 1 one-sided nulls "j is not
ahead of b" is rejected at alpha / (M - 1); each is true, so by Bonferroni the chance is at most
alpha, whatever the dependence between the comparisons (they share tasks) and whatever the other
models. Requiring the interval as well only leaves fewer models out. The one-sided p is half the
two-sided one when the difference points that way (family.py: valid for each sign-flip test used).
With ``correction="none"`` the set is the per-pair view: the models no pair puts anything ahead of.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .pairs import PairTable
from .ties import TIE_ABS_TOL


@dataclass(frozen=True)
class BestSet:
    """The confidence set for the best: its members in ranking order, and how it was made.

    ``per_comparison``: the one-sided level each of a model's ``comparisons`` was held to
    (alpha / (M - 1); alpha itself per pair with ``correction="none"``); ``ahead``: for each model
    left out, the first model (in ranking order) found ahead of it at that level.
    """

    members: tuple[str, ...]
    alpha: float
    comparisons: int
    per_comparison: float
    family: bool  # False: the per-pair view (correction "none")
    ahead: tuple[tuple[str, str], ...] = ()
    # The interval of the first pair (ranks 1 and 2, as the pair table orients it) the verdict gives beside its
    # gap: the pair's own, reaching 0 unless the set puts one of the two ahead of the other.
    gap: tuple[float, float] = (math.nan, math.nan)

    def ahead_of(self, model: str) -> str | None:
        """The model found ahead of ``model``, None when ``model`` is in the set."""
        return next((winner for loser, winner in self.ahead if loser == model), None)


def best_set(table: PairTable) -> BestSet:
    """The confidence set for the best of the table's models (the module docstring)."""
    ids = table.ranked_ids
    m = len(ids)
    alpha = float(table.alpha)
    family = table.correction != "none"
    if m < 2:
        return BestSet(ids, alpha, 0, alpha, family)
    lo, hi = table.leader_ci
    if family:
        level = alpha / (m - 1)
        direction = np.sign(np.where(np.abs(table.mean_diff) <= TIE_ABS_TOL, 0.0, table.mean_diff))
        with np.errstate(invalid="ignore"):
            tested = (table.n_shared > 0) & (direction != 0) & (table.p_value / 2.0 <= level)
        ahead = tested & (table.own_side == direction)  # the pair's own interval at alpha, not the table's
    else:
        level = alpha
        direction = np.sign(table.mean_diff)
        ahead = np.asarray(table.significant)
    # The pair (a, b) puts a ahead of b when its difference a - b is positive, b ahead of a when negative.
    winner = np.where(direction > 0, table.a, table.b)[ahead]
    loser = np.where(direction > 0, table.b, table.a)[ahead]
    first_winner = np.full(m, m, dtype=np.int64)
    np.minimum.at(first_winner, loser.astype(np.int64), winner.astype(np.int64))  # the highest-ranked winner
    out = first_winner == m
    if not out.any():
        # Every model behind another on their shared tasks (a cycle across different task sets): the set is
        # made the whole table, which only widens it.
        out[:] = True
        first_winner[:] = m
    members = tuple(ids[k] for k in np.flatnonzero(out))
    named = tuple((ids[k], ids[int(first_winner[k])]) for k in np.flatnonzero(~out))
    if ahead.size and not ahead[0]:
        lo, hi = min(lo, 0.0), max(hi, 0.0)  # NaN stays NaN: the pair shares no task
    return BestSet(members, alpha, m - 1, level, family, named, (lo, hi))


def in_set(best: BestSet, ranked_ids: tuple[str, ...]) -> NDArray[np.bool_]:
    """Per ranking position: the model is in the set."""
    members = set(best.members)
    return np.array([i in members for i in ranked_ids], dtype=bool)
