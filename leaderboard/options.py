"""Every option, declared once: the action's input, the CLI's flag, the configuration's key, its default."""

from __future__ import annotations

from .stats.aggregation import RankBy
from .stats.clustering import ClusterBy
from .stats.family import DEFAULT_CORRECTION, Correction
from .stats.weights import TaskWeights

DEFAULT_RESAMPLES = 500
DEFAULT_ALPHA = 0.05
DEFAULT_SEED = 0
DEFAULT_RANK_BY: RankBy = "mean"
DEFAULT_CLUSTER_BY: ClusterBy = "none"
DEFAULT_TASK_WEIGHTS: TaskWeights = "ignore"
__all__ = ["DEFAULT_CORRECTION", "Correction"]
