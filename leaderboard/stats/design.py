"""The design of a suite as the statistics use it: each task's cluster and weight, and what the clusters were."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..records import EvalRun
from .clustering import (
    FEW_DF,
    LARGEST_SHARE_WARNING,
    METHOD,
    ClusterBy,
    DesignEffect,
    Grouping,
    cluster_of,
    design_effect,
    onehot_of,
)
from .matrix import ScoreMatrix
from .resampling import FloatArray
from .weights import TaskWeights, normalised, task_weights


@dataclass(frozen=True)
class Clusters:
    """The clusters the statistics resampled (``cluster-by`` on): how many, how unequal, how few df.

    ``largest_share`` is the largest cluster's share of the tasks; ``min_df`` the smallest
    Bell-McCaffrey degrees of freedom of a model's interval (its effective number of clusters).
    """

    by: ClusterBy
    count: int
    largest: str
    largest_share: float
    min_df: float
    mean_size: float
    method: str

    @property
    def warns(self) -> bool:
        return self.largest_share > LARGEST_SHARE_WARNING or not self.min_df >= FEW_DF


@dataclass(frozen=True)
class Design:
    """What the statistics need to know about clusters and weights, per task."""

    cluster: NDArray[np.int64] | None  # each task's cluster index, None without clustering
    cluster_names: tuple[str, ...]
    weight: FloatArray | None  # each task's weight, None unless applied

    @property
    def onehot(self) -> Grouping:
        assert self.cluster is not None
        return onehot_of(self.cluster, len(self.cluster_names))


def task_design(runs: Sequence[EvalRun], matrix: ScoreMatrix, cluster_by: ClusterBy, weights: TaskWeights) -> Design:
    """Each task's cluster and weight, as asked; a task given two of either is a problem at its record."""
    cluster: NDArray[np.int64] | None = None
    names: tuple[str, ...] = ()
    if cluster_by == "category":
        # The matrix has each cell's category already: one per task is checked without a pass over the records.
        index = matrix.category_index
        low = np.where(matrix.present, index, np.iinfo(np.int64).max).min(axis=0)
        if np.array_equal(low, index.max(axis=0)):
            used = np.unique(low)
            names = tuple(matrix.categories[k] for k in used)
            cluster = np.searchsorted(used, low).astype(np.int64)
    if cluster_by != "none" and cluster is None:
        label = cluster_of(runs, cluster_by)
        names = tuple(sorted(set(label.values())))
        at = {c: k for k, c in enumerate(names)}
        cluster = np.array([at[label[t]] for t in matrix.task_ids], dtype=np.int64)
    # Only the ratios matter: scaled by a power of two (exact), no product or sum overflows.
    weight = (
        normalised(task_weights(runs, matrix.task_ids)) if weights == "apply" and matrix.weights is not None else None
    )
    return Design(cluster, names, weight)


def cluster_summary(design: Design, by: ClusterBy, df: FloatArray) -> Clusters | None:
    """What the statistics clustered on, given each model's Bell-McCaffrey df; None without clustering."""
    if design.cluster is None:
        return None
    counts = np.bincount(design.cluster, minlength=len(design.cluster_names))
    top = int(np.argmax(counts))
    finite = df[np.isfinite(df)]
    return Clusters(
        by=by,
        count=len(design.cluster_names),
        largest=design.cluster_names[top],
        largest_share=float(counts[top] / counts.sum()),
        min_df=float(finite.min()) if finite.size else math.nan,
        mean_size=float(counts.sum() / max(1, len(design.cluster_names))),
        method=METHOD,
    )


def category_design(matrix: ScoreMatrix) -> DesignEffect | None:
    """The categories' design effect on the means (the diagnostic shown when clustering is off)."""
    if len(matrix.categories) < 2:
        return None
    return design_effect(matrix.scores, matrix.present, matrix.category_index.max(axis=0))
