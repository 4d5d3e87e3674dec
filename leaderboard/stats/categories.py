"""Which model is best in each category, named only where the category's own comparisons support it.

A category row that names a "Best" reads as a fact. It is a claim about the category's models on
the category's tasks alone, so it is tested there: the model with the top mean in the category
is named only when it is ahead of every other model that ran the category, each one-sided on
the tasks both ran (the sign-flip test of the pairs), at the level in force for every category
claim shown. With the default correction that level is alpha / (C (M_c - 1)) per comparison (C
categories with a candidate, M_c models in the category): a named best is false only when one of
its category's true best model's M_c - 1 one-sided nulls is rejected, so by Bonferroni the chance
of any false name in the table is at most alpha (the confidence set for the best of stats/best.py,
one per category). With ``correction="none"``, each comparison is held to alpha on its own.

Fewer than MIN_TASKS tasks name no winner: a sign-flip test of 4 tasks cannot reach alpha = 0.05
two-sided, and the mean of a handful of tasks says little about the category.

With ``cluster-by`` on, a category whose tasks span clusters (``cluster-by: cluster`` with repositories
across task types, say) is tested on its clusters, as the pairs are: each comparison is the cluster
sign-flip test of the summed differences in the category's clusters where its smallest one-sided p
(1 / 2^C) can reach the level, else the CR2 t-test at the Bell-McCaffrey df (stats/paired.py); the
choice reads C and the level, never p. Fewer than min_tasks(alpha) clusters name no winner (no pair
on so few clusters is claimed either). A category that is a cluster of its own (``cluster-by:
category``) is a claim about its own tasks: they stay the units.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np
from numpy.typing import NDArray

from .clustering import Grouping
from .design import Design
from .family import Correction
from .matrix import ScoreMatrix
from .paired import cluster_figures, differences, sign_flip
from .resampling import FloatArray
from .significance import min_tasks
from .ties import TIE_ABS_TOL, TIE_REL_TOL, tie_key

MIN_TASKS = 5
# The runner-up is tested exactly only when a normal approximation's one-sided z reaches this (p < 0.1):
# below it the leader is far from separated at any level a family needs, and saying so is conservative.
SCREEN_Z = 1.2816


class NoBest(IntEnum):
    """Why a category names no winner."""

    FEW_TASKS = 1  # fewer than MIN_TASKS tasks
    TIED = 2  # two or more models share the top mean
    NOT_SEPARATED = 3  # the leader is not ahead of every other model at the level in force
    ONE_MODEL = 4  # a single model ran the category: there is no one to be best among
    FEW_CLUSTERS = 5  # clustered: the category's tasks span fewer than min_tasks(alpha) clusters


@dataclass(frozen=True)
class CategoryBest:
    """A category's leader (the top mean; None with no model), and whether it is named best (``why`` None)."""

    category: str
    leader: str | None
    tasks: int
    why: NoBest | None
    p: float  # the largest one-sided p of the leader's comparisons (NaN when none was tested)
    level: float  # the one-sided level each comparison was held to
    clusters: int = 0  # the clusters the comparisons were tested on (0: the category's tasks were the units)

    @property
    def named(self) -> bool:
        return self.why is None


def _worst_p(
    scores: FloatArray,
    cells: NDArray[np.bool_],
    w: FloatArray | None,
    leader: int,
    others: NDArray[np.int64],
    seed: int,
    alpha: float,
    level: float,
    grouping: Grouping | None,
) -> float:
    """The largest one-sided p of ``leader`` ahead of each of ``others`` on the tasks both ran in the category.

    One-sided: half the sign-flip p in the direction of the leader's lead (which reaches any ``level``),
    or with ``grouping`` the clustered test of :func:`_worst_clustered_p`.
    """
    d = differences(scores, cells, np.full(others.size, leader), others)
    flipped = d.tied * (w[None, :] if w is not None else 1.0)
    if grouping is not None:
        return _worst_clustered_p(d.raw * (w[None, :] if w is not None else 1.0), flipped, d.shared, w, grouping,
                                  alpha, level, screen=others.size == 1)  # fmt: skip
    n = d.shared.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = flipped.sum(axis=1) / n
        sd = np.sqrt(np.maximum((flipped * flipped).sum(axis=1) / n - mean * mean, 0.0))
        z = mean * np.sqrt(n) / sd
    if others.size == 1 and not z[0] >= SCREEN_Z:
        # Far from separated (a normal approximation's one-sided p above 0.1): no test needed to say so.
        return 1.0
    p_two, _ = sign_flip(flipped)
    ahead = (flipped.sum(axis=1) > TIE_ABS_TOL) & (d.shared.sum(axis=1) > 0)
    return float(np.where(ahead, p_two / 2.0, 1.0).max())


def _worst_clustered_p(
    raw: FloatArray,
    flipped: FloatArray,
    shared: NDArray[np.bool_],
    w: FloatArray | None,
    grouping: Grouping,
    alpha: float,
    level: float,
    *,
    screen: bool,
) -> float:
    """The largest one-sided p of the leader ahead of each model, the units the category's clusters.

    The test is the pairs' choice (stats/paired.py clustered_p): the cluster sign-flip where its smallest
    one-sided p, 1 / 2^C over C non-zero cluster sums, reaches ``level``; else the CR2 t-test. A model
    sharing fewer than min_tasks(alpha) of the category's clusters with the leader is not separated from it.
    """
    sizes = grouping.sums(np.where(shared, w[None, :] if w is not None else 1.0, 0.0))
    totals = grouping.sums(flipped)
    # The tie rule per task (at most 1e-9 a task for scores on [0, 1]) bounds a tied cluster's sum.
    totals = np.where(np.abs(totals) <= TIE_REL_TOL * sizes, 0.0, totals)
    figures = cluster_figures(grouping.sums(raw), totals, sizes, alpha)
    # The CR2 t is undefined where its variance is 0 (every cluster's sum in proportion to its size, as when
    # the leader wins every task by the same margin): the sign flips judge such a pair, as they do the pairs.
    defined = np.isfinite(figures.t_p)
    # The CR2 t's one-sided p above 0.1 (t < 1.28 at any df): far from separated, as unclustered.
    if screen and defined[0] and figures.t_p[0] / 2.0 >= 0.1:
        return 1.0
    nonzero = np.count_nonzero(totals, axis=1)
    sign_p, _ = sign_flip(totals)
    p_two = np.where((np.exp2(-nonzero.astype(np.float64)) > level) & defined, figures.t_p, sign_p)
    ahead = (totals.sum(axis=1) > TIE_ABS_TOL) & (figures.clusters >= min_tasks(alpha)) & np.isfinite(p_two)
    return float(np.where(ahead, p_two / 2.0, 1.0).max())


def category_best(
    matrix: ScoreMatrix, design: Design, alpha: float, correction: Correction, seed: int
) -> tuple[CategoryBest, ...]:
    """Every category's leader and whether the category's comparisons name it best (the module docstring)."""
    n_categories = len(matrix.categories)
    if n_categories == 0:
        return ()
    present = matrix.present
    in_category = [(matrix.category_index == c) & present for c in range(n_categories)]
    # Tasks of each category (a task belongs to the category any model recorded it in).
    tasks = [int(np.count_nonzero(cells.any(axis=0))) for cells in in_category]
    models = [np.flatnonzero(cells.any(axis=1)) for cells in in_category]
    candidates = [c for c in range(n_categories) if tasks[c] >= MIN_TASKS and models[c].size >= 2]
    comparisons = sum(int(models[c].size) - 1 for c in candidates)
    scores = np.where(present, matrix.scores, 0.0)
    w = design.weight
    spans = _cluster_counts(design, [cells.any(axis=0) for cells in in_category])
    out = []
    for c in range(n_categories):
        cells = in_category[c]
        who = models[c]
        if who.size == 0:
            out.append(CategoryBest(matrix.categories[c], None, tasks[c], NoBest.ONE_MODEL, np.nan, alpha))
            continue
        weight = np.where(cells, w[None, :] if w is not None else 1.0, 0.0)
        means = (scores * weight).sum(axis=1)[who] / weight.sum(axis=1)[who]
        keys = [tie_key(float(v)) for v in means]
        top = max(keys)
        leader = int(who[keys.index(top)])
        name = matrix.model_ids[leader]
        level = alpha / max(1, comparisons) if correction != "none" else alpha
        if who.size < 2:
            out.append(CategoryBest(matrix.categories[c], name, tasks[c], NoBest.ONE_MODEL, np.nan, level))
            continue
        if tasks[c] < MIN_TASKS:
            out.append(CategoryBest(matrix.categories[c], name, tasks[c], NoBest.FEW_TASKS, np.nan, level))
            continue
        if keys.count(top) > 1:
            out.append(CategoryBest(matrix.categories[c], name, tasks[c], NoBest.TIED, np.nan, level))
            continue
        grouping = design.onehot if spans[c] else None
        if spans[c] and spans[c] < min_tasks(alpha):
            out.append(CategoryBest(matrix.categories[c], name, tasks[c], NoBest.FEW_CLUSTERS, np.nan, level, spans[c]))
            continue
        # The runner-up first: in most categories it is not separated, and the rest need no test.
        rest = np.argsort(-means[who != leader], kind="stable")
        others = who[who != leader][rest]
        worst = _worst_p(scores, cells, w, leader, others[:1], seed, alpha, level, grouping)
        if worst <= level and others.size > 1:
            worst = max(worst, _worst_p(scores, cells, w, leader, others[1:], seed, alpha, level, grouping))
        why = None if worst <= level else NoBest.NOT_SEPARATED
        out.append(CategoryBest(matrix.categories[c], name, tasks[c], why, worst, level, spans[c]))
    return tuple(out)


def _cluster_counts(design: Design, members: list[NDArray[np.bool_]]) -> list[int]:
    """Per category (its tasks ``members``), the clusters its claims are tested on: 0 when its tasks are the
    units (no clustering, or the category is a cluster of its own: ``cluster-by: category``), else how many
    clusters its tasks span (a category inside a larger cluster spans 1: it can name no winner)."""
    if design.cluster is None:
        return [0] * len(members)
    counts = []
    for member in members:
        inside = np.unique(design.cluster[member])
        own = inside.size == 1 and not np.any(np.isin(design.cluster, inside) & ~member)
        counts.append(0 if own else int(inside.size))
    return counts
