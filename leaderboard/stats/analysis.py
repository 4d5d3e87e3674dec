"""One analysis of a suite: ranked rows and every pair, with the parameters that produced them.

Means with their intervals, win rates, category means and paired differences as the README's
"The statistics" section describes them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ..records import EvalRun, LeaderboardRow, PairwiseDiff
from ..run_columns import RunColumns
from ..trials import DEFAULT_FAILED_CALLS, FAILED_CALLS, FailedCalls
from .best import BestSet, best_set, in_set
from .cache import prepared
from .categories import CategoryBest, category_best
from .cluster_check import ClusterCheck, cluster_check
from .clustering import CLUSTER_BY, ClusterBy, DesignEffect
from .design import Clusters, category_design, cluster_summary
from .family import DEFAULT_CORRECTION, Correction, check_correction
from .pairs import PairTable, empty_columns, pair_table
from .parameters import check_b_alpha, check_resamples
from .power import Detectable
from .rows import RANK_BY, RankBy, all_tied_tasks, binary_models, category_tasks, model_rows, rank_ranges
from .weights import TASK_WEIGHTS, TaskWeights


@dataclass(frozen=True)
class Leaderboard:
    """Everything one analysis produces, with the parameters that produced it."""

    rows: tuple[LeaderboardRow, ...]
    pairs: PairTable
    alpha: float
    b: int
    seed: int
    rank_by: RankBy
    n_runs: int
    n_models: int
    n_tasks: int
    categories: tuple[str, ...]
    weights_ignored: bool
    correction: Correction = DEFAULT_CORRECTION
    all_tied_tasks: int = 0
    pairs_computed: bool = True
    category_tasks: Mapping[str, int] = field(default_factory=dict)  # distinct tasks in each category
    # What the statistics resampled or flipped (cluster-by), and how task weights were treated.
    clustering: Clusters | None = None
    design: DesignEffect | None = None  # the categories' design effect, when clustering is off
    task_weights: TaskWeights = "ignore"
    binary_models: int = 0  # models whose scores are all 0/1: their CI is Wilson's
    best: BestSet | None = None  # the confidence set for the best (stats/best.py), None without pairs
    # Each category's leader and whether its own comparisons name it best (stats/categories.py); () without pairs.
    category_best: tuple[CategoryBest, ...] = ()
    failed_calls: FailedCalls = DEFAULT_FAILED_CALLS  # how failed calls were scored (trials.py)
    # The claims recomputed with each category as one unit (stats/cluster_check.py), when clustering is off.
    cluster_check: ClusterCheck | None = None

    def pair(self, i: int, j: int) -> PairwiseDiff:
        """The comparison of the models at ranks ``i`` and ``j`` (1-based), oriented as stored."""
        return self.pairs[self.pairs.position(i - 1, j - 1)]

    def resolution(self) -> tuple[tuple[PairwiseDiff, ...], tuple[PairwiseDiff, ...]]:
        """(each adjacent pair in the ranking, #1 against every other model): does the suite separate them?"""
        if not self.pairs_computed or len(self.rows) < 2:
            return (), ()
        m = len(self.rows)
        adjacent = tuple(self.pair(r, r + 1) for r in range(1, m))
        leader = tuple(self.pair(1, r) for r in range(2, m + 1))
        return adjacent, leader

    @property
    def top_group(self) -> tuple[str, ...]:
        """The confidence set for the best (stats/best.py): the models whose best rank is 1."""
        return tuple(row.model_id for row in self.rows if row.rank_lo == 1)

    def detectable(self) -> Detectable | None:
        """The typical pair's minimum detectable difference at the level in force for a pair not yet separated."""
        d = self.pairs.detectable if self.pairs_computed else None
        if d is not None and self.pairs.clustered:
            return replace(d, df=self.clustering.min_df if self.clustering is not None else math.inf)
        return d


def analyse(
    runs: Sequence[EvalRun],
    *,
    b: int = 500,
    alpha: float = 0.05,
    seed: int = 0,
    rank_by: RankBy = "mean",
    pairs: bool = True,
    correction: Correction = DEFAULT_CORRECTION,
    cluster_by: ClusterBy = "none",
    weights: TaskWeights = "ignore",
    failed_calls: FailedCalls = DEFAULT_FAILED_CALLS,
    min_effect: float | None = None,
) -> Leaderboard:
    """The whole leaderboard in one pass: ranked rows and (optionally) every pairwise comparison.

    ``correction="holm"`` (the default) makes every decision family-wise (stats/family.py): the
    chance of any false "significant" among the pairs, and so in the rank ranges and the top
    group, is at most alpha. ``"none"`` tests each pair at alpha on its own.

    ``cluster_by`` ("category" or "cluster") makes every interval and test treat the task's
    cluster as the unit (stats/clustering.py); ``weights="apply"`` applies task weights
    (stats/weights.py). ``failed_calls="zero"`` (the default) scores a failed call 0, so a model whose calls
    fail on the hard tasks is not ahead for it; ``"exclude"`` leaves failed calls out.
    (stats/weights.py). ``min_effect``: the detectable figure also says how many units of the typical
    pair's kind detect a difference this size (stats/power.py).
    """
    check_b_alpha(b, alpha)
    if cluster_by not in CLUSTER_BY:
        raise ValueError(f"cluster_by must be one of {', '.join(CLUSTER_BY)}, got {cluster_by!r}")
    if weights not in TASK_WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(TASK_WEIGHTS)}, got {weights!r}")
    check_resamples(b, alpha, name="b")
    if rank_by not in RANK_BY:
        raise ValueError(f"rank_by must be one of {', '.join(RANK_BY)}, got {rank_by!r}")
    check_correction(correction)
    if failed_calls not in FAILED_CALLS:
        raise ValueError(f"failed_calls must be one of {', '.join(FAILED_CALLS)}, got {failed_calls!r}")
    runs = runs if isinstance(runs, RunColumns) else list(runs)  # columns stay columns: no record objects
    ready = prepared(runs, b, seed, cluster_by, weights, failed_calls)
    if ready is None:
        empty = PairTable((), empty_columns(), alpha, correction)
        return Leaderboard(
            (), empty, alpha, b, seed, rank_by, len(runs), 0, 0, (), False, correction, 0, pairs,
            failed_calls=failed_calls,
        )  # fmt: skip
    matrix, design, engine, theta = ready.matrix, ready.design, ready.engine, ready.theta
    rows, means, df = model_rows(matrix, theta, alpha, rank_by, design)
    index = {m: i for i, m in enumerate(matrix.model_ids)}
    order = [index[row.model_id] for row in rows]
    clustered = design.cluster is not None
    if pairs:
        table = pair_table(matrix, engine, theta if theta is not None else np.zeros((0, b)), means, order, alpha,
                            correction, design, min_effect)  # fmt: skip
        best = best_set(table)
        rows = rank_ranges(rows, table, in_set(best, table.ranked_ids))
        winners = category_best(matrix, design, alpha, correction, seed)
        widths = np.zeros(len(matrix.model_ids))
        for row in rows:
            widths[index[row.model_id]] = row.mean_ci_hi - row.mean_ci_lo
        check = cluster_check(
            matrix, engine, design, table, means, order, alpha, rank_by, correction, widths,
            tuple(best.members),
        )  # fmt: skip
    else:
        best, winners, check = None, (), None
        table = PairTable([matrix.model_ids[m] for m in order], empty_columns(), alpha, correction, clustered=clustered)
    return Leaderboard(
        rows=tuple(rows),
        pairs=table,
        alpha=alpha,
        b=b,
        seed=seed,
        rank_by=rank_by,
        n_runs=len(runs),
        n_models=len(matrix.model_ids),
        n_tasks=len(matrix.task_ids),
        categories=matrix.categories,
        weights_ignored=matrix.weights_ignored,
        correction=correction,
        all_tied_tasks=all_tied_tasks(matrix),
        pairs_computed=pairs,
        category_tasks=category_tasks(matrix),
        clustering=cluster_summary(design, cluster_by, df),
        design=category_design(matrix) if not clustered else None,
        task_weights=weights,
        binary_models=int(binary_models(matrix).sum()),
        best=best,
        category_best=winners,
        failed_calls=failed_calls,
        cluster_check=check,
    )
