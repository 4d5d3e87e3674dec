"""What treating each category as one unit would change, when the statistics treat tasks as independent.

Which correlation matters depends on the claim. A model's interval rests on its scores: when a
category's tasks sit at a common level (the scores' intra-category correlation), the mean of a
few categories is less certain than the mean of as many independent tasks. A pair's claim (and
the top group, and the verdict) rests on the per-task *differences*: categories at different
levels do not move a difference, only a model that is better in some categories than in others
does. So the scores' correlation (MTEB categories 0.58-0.73) says little about pair claims
(whose differences correlate at about 0.09 there), and the advice to cluster on it would erase
claims the data supports.

Rather than a threshold on either correlation, the claims are recomputed clustered by category
(CR2 intervals, cluster sign-flip tests, the same correction and the same confidence set for the
best) and compared: which significant pairs and which top group would differ, and how much wider
the model intervals would be. The documents say what differs and nothing when nothing does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .best import best_set
from .bootstrap import BootstrapEngine
from .clustering import design_effect
from .design import Design
from .family import Correction
from .matrix import ScoreMatrix
from .pairs import PairTable, pair_table
from .resampling import FloatArray
from .rows import RankBy, model_rows

# Above this many models the clustered recomputation (every pair again) is not made.
MAX_CHECKED_MODELS = 200


@dataclass(frozen=True)
class ClusterCheck:
    """The claims recomputed with each category as one unit, against those shown.

    ``difference_icc_lo``/``_hi``: the range over the pairs the verdict and vs next read (the leader
    against each model, each model against the next) of the per-task differences' ANOVA
    intra-category correlation, and ``difference_design_effect`` its median design effect.
    ``lost``/``gained``: pairs significant only as shown / only clustered, (higher, lower) ids;
    ``top_group``: the clustered top group; ``interval_ratio``: the median over models of the
    clustered interval's width over the one shown.
    """

    categories: int
    difference_icc_lo: float
    difference_icc_hi: float
    difference_design_effect: float
    lost: tuple[tuple[str, str], ...]
    gained: tuple[tuple[str, str], ...]
    top_group: tuple[str, ...]
    top_group_shown: tuple[str, ...]
    interval_ratio: float

    @property
    def claims_differ(self) -> bool:
        return bool(self.lost or self.gained) or set(self.top_group) != set(self.top_group_shown)


def _category_of_tasks(matrix: ScoreMatrix) -> tuple[np.ndarray, tuple[str, ...]] | None:
    """Each task's category index (0..G-1) and the names, or None when a task has two categories."""
    index = matrix.category_index
    low = np.where(matrix.present, index, np.iinfo(np.int64).max).min(axis=0)
    if not np.array_equal(low, index.max(axis=0)):
        return None
    used = np.unique(low)
    return np.searchsorted(used, low).astype(np.int64), tuple(matrix.categories[k] for k in used)


def cluster_check(
    matrix: ScoreMatrix,
    engine: BootstrapEngine,
    design: Design,
    table: PairTable,
    means: FloatArray,
    order: list[int],
    alpha: float,
    rank_by: RankBy,
    correction: Correction,
    shown_widths: FloatArray,
    top_group: tuple[str, ...],
) -> ClusterCheck | None:
    """The claims clustered by category against ``table`` (the module docstring); None when not made.

    ``shown_widths``: each model's interval width as shown, in ``matrix`` order.
    """
    m = len(order)
    if design.cluster is not None or m < 2 or m > MAX_CHECKED_MODELS or len(matrix.categories) < 2:
        return None
    grouped = _category_of_tasks(matrix)
    if grouped is None:
        return None
    cluster, names = grouped
    if len(names) < 2:
        return None
    ranked = np.asarray(order, dtype=np.int64)
    read = [(0, k) for k in range(1, m)] + [(k, k + 1) for k in range(1, m - 1)]
    a = ranked[[i for i, _ in read]]
    b = ranked[[j for _, j in read]]
    shared = matrix.present[a] & matrix.present[b]
    diffs = np.where(shared, engine.filled[a] - engine.filled[b], 0.0)
    effect = design_effect(diffs, shared, cluster)
    clustered = Design(cluster, names, design.weight)
    other = pair_table(matrix, engine, np.zeros((0, engine.b)), means, order, alpha, correction, clustered, shown=table)
    rows, _, _ = model_rows(matrix, None, alpha, rank_by, clustered)
    index = {mid: k for k, mid in enumerate(matrix.model_ids)}
    widths = np.zeros(len(matrix.model_ids))
    for row in rows:
        widths[index[row.model_id]] = row.mean_ci_hi - row.mean_ci_lo
    ok = shown_widths > 0
    ratio = float(np.median(widths[ok] / shown_widths[ok])) if ok.any() else 1.0
    shown, now = table.significant, other.significant
    ids = table.ranked_ids

    def named(mask: np.ndarray) -> tuple[tuple[str, str], ...]:
        at = np.flatnonzero(mask)
        return tuple((ids[int(table.a[p])], ids[int(table.b[p])]) for p in at)

    return ClusterCheck(
        categories=len(names),
        difference_icc_lo=effect.icc_lo if effect is not None else 0.0,
        difference_icc_hi=effect.icc_hi if effect is not None else 0.0,
        difference_design_effect=effect.design_effect if effect is not None else 1.0,
        lost=named(shown & ~now),
        gained=named(now & ~shown),
        top_group=best_set(other).members,
        top_group_shown=top_group,
        interval_ratio=ratio,
    )
