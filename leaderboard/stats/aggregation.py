"""The specification's API: rows, pairs and the two bootstrap intervals (README, "The statistics").

The analysis itself is :func:`~leaderboard.stats.analysis.analyse`; the names the package's
callers have always imported from here are re-exported.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..records import EvalRun, LeaderboardRow, PairwiseDiff
from .analysis import Leaderboard, analyse
from .family import CORRECTIONS
from .parameters import RESAMPLES_PER_TAIL, check_b_alpha, check_resamples, min_resamples, resample_advice
from .resampling import FloatArray, percentile_interval, resampled_means
from .rows import RANK_BY, RankBy
from .ties import TIE_ABS_TOL, TIE_REL_TOL, tie_key, tie_tolerance

__all__ = [
    "CORRECTIONS",
    "RANK_BY",
    "RESAMPLES_PER_TAIL",
    "TIE_ABS_TOL",
    "TIE_REL_TOL",
    "Leaderboard",
    "RankBy",
    "aggregate",
    "analyse",
    "bootstrap_mean_ci",
    "bootstrap_pairwise_diff",
    "check_resamples",
    "min_resamples",
    "pairwise_diffs",
    "resample_advice",
    "tie_key",
    "tie_tolerance",
]


def aggregate(
    runs: Sequence[EvalRun], *, b: int = 500, alpha: float = 0.05, seed: int = 0, rank_by: RankBy = "mean"
) -> list[LeaderboardRow]:
    """One row per model, ranked by mean (or win-rate), with a percentile bootstrap CI of the mean."""
    return list(analyse(runs, b=b, alpha=alpha, seed=seed, rank_by=rank_by, pairs=False).rows)


def pairwise_diffs(
    runs: Sequence[EvalRun], *, b: int = 500, alpha: float = 0.05, seed: int = 0, rank_by: RankBy = "mean"
) -> list[PairwiseDiff]:
    """Every pair of models: paired bootstrap CI of the mean difference over the tasks both ran."""
    return list(analyse(runs, b=b, alpha=alpha, seed=seed, rank_by=rank_by).pairs)


def _generator(seed: int | None, rng: np.random.Generator | None) -> np.random.Generator:
    return rng if rng is not None else np.random.default_rng(seed)


def bootstrap_mean_ci(
    scores: Sequence[float] | FloatArray,
    B: int = 1000,
    alpha: float = 0.05,
    *,
    seed: int | None = 0,
    rng: np.random.Generator | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean of ``scores``.

    Draws ``rng.integers(0, n, (B, n))`` like ``scipy.stats.bootstrap``, so with
    the same generator the interval is scipy's, bit for bit.
    """
    check_b_alpha(B, alpha)
    values = np.asarray(scores, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError("scores must be a non-empty one-dimensional sequence")
    theta = resampled_means(values[None, :], B, _generator(seed, rng))
    lo, hi = percentile_interval(theta[0], alpha)
    return float(lo), float(hi)


def bootstrap_pairwise_diff(
    scores_a: Sequence[float] | FloatArray,
    scores_b: Sequence[float] | FloatArray,
    B: int = 1000,
    alpha: float = 0.05,
    *,
    seed: int | None = 0,
    rng: np.random.Generator | None = None,
) -> tuple[float, float]:
    """Paired percentile bootstrap CI of the mean of ``scores_a - scores_b`` (aligned by task)."""
    a = np.asarray(scores_a, dtype=np.float64)
    b = np.asarray(scores_b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired scores must align task by task, got {a.shape} and {b.shape}")
    return bootstrap_mean_ci(a - b, B, alpha, seed=seed, rng=rng)
