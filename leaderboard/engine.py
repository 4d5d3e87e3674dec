"""The one path from records to a leaderboard, shared by the library, the CLI and the action.

With a configuration, the statistics' parameters come from its ``statistics`` block where
the caller gives none, and the composite ranking is made with :func:`leaderboard.composite.rank`;
without one, the leaderboard is exactly what :func:`~leaderboard.stats.aggregation.analyse` makes.
Because the CLI's what-if (``--config``, ``--weights``) and the action both call :func:`evaluate`,
they cannot disagree on the same files and configuration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .composite import CompositeBoard, rank
from .config import Config
from .records import EvalRun
from .stats.aggregation import Leaderboard, RankBy, analyse, min_resamples
from .stats.clustering import ClusterBy
from .stats.family import DEFAULT_CORRECTION, Correction
from .stats.weights import TaskWeights
from .validation import InvalidEvalRuns, Problem

DEFAULT_RESAMPLES = 500
DEFAULT_ALPHA = 0.05
DEFAULT_SEED = 0


@dataclass(frozen=True)
class Parameters:
    """The statistics' parameters in force: the caller's, else the configuration's, else the defaults."""

    b: int
    alpha: float
    seed: int
    pairs: bool
    correction: Correction = DEFAULT_CORRECTION
    cluster_by: ClusterBy = "none"
    task_weights: TaskWeights = "ignore"


def parameters(
    config: Config | None,
    *,
    b: int | None,
    alpha: float | None,
    seed: int | None,
    correction: Correction | None = None,
    cluster_by: ClusterBy | None = None,
    task_weights: TaskWeights | None = None,
) -> Parameters:
    """Resolve the parameters; a resample count too small for the level is a problem at its key."""
    stats = config.statistics if config is not None else None
    from_config_alpha = stats is not None and stats.confidence is not None and alpha is None
    if alpha is None:
        # Rounded: 1 - 0.95 is 0.050000000000000044 in binary, and the level is printed.
        alpha = (
            round(1.0 - stats.confidence, 12) if stats is not None and stats.confidence is not None else DEFAULT_ALPHA
        )
    from_config_b = b is None and stats is not None and stats.resamples is not None
    if b is None:
        b = stats.resamples if stats is not None and stats.resamples is not None else DEFAULT_RESAMPLES
    if seed is None:
        seed = stats.seed if stats is not None and stats.seed is not None else DEFAULT_SEED
    enabled = stats.enabled if stats is not None and stats.enabled is not None else True
    if correction is None:
        correction = stats.correction if stats is not None and stats.correction is not None else DEFAULT_CORRECTION
    if b < min_resamples(alpha):
        message = (
            f"{b} resamples are too few at confidence {1 - alpha:g}: at least {min_resamples(alpha)} "
            "(20 / alpha: 10 resamples beyond each end of the interval)"
        )
        if config is not None and (from_config_b or from_config_alpha):
            key = "statistics.resamples" if from_config_b else "statistics.confidence"
            raise InvalidEvalRuns([config.problem(key, message)])
        raise InvalidEvalRuns([Problem(message=message, field="resamples")])
    if cluster_by is None:
        cluster_by = stats.cluster_by if stats is not None and stats.cluster_by is not None else "none"  # type: ignore[assignment]
    if task_weights is None:
        task_weights = stats.task_weights if stats is not None and stats.task_weights is not None else "ignore"  # type: ignore[assignment]
    assert cluster_by is not None and task_weights is not None
    return Parameters(
        b=b, alpha=alpha, seed=seed, pairs=enabled, correction=correction, cluster_by=cluster_by,
        task_weights=task_weights,
    )  # fmt: skip


def evaluate(
    runs: Sequence[EvalRun],
    config: Config | None = None,
    *,
    b: int | None = None,
    alpha: float | None = None,
    seed: int | None = None,
    rank_by: RankBy = "mean",
    correction: Correction | None = None,
    cluster_by: ClusterBy | None = None,
    task_weights: TaskWeights | None = None,
) -> tuple[Leaderboard, CompositeBoard | None]:
    """The leaderboard of ``runs`` and, with a configuration, its composite ranking.

    ``correction`` None: the configuration's ``statistics.correction``, else the default (holm).
    ``cluster_by`` / ``task_weights`` None: the configuration's ``statistics`` block decides, else
    "none" / "ignore".
    """
    p = parameters(
        config, b=b, alpha=alpha, seed=seed, correction=correction, cluster_by=cluster_by, task_weights=task_weights
    )
    board = analyse(
        runs, b=p.b, alpha=p.alpha, seed=p.seed, rank_by=rank_by, pairs=p.pairs, correction=p.correction,
        cluster_by=p.cluster_by, weights=p.task_weights,
    )  # fmt: skip
    return board, (rank(runs, board, config) if config is not None else None)
