"""The rules every analysis' parameters meet: a positive B, alpha in (0, 1), enough resamples for alpha's tails."""

from __future__ import annotations

import math

import numpy as np

from ..limits import MAX_BOOTSTRAP_SAMPLES

# Resamples per tail at the least: a percentile end needs enough resamples beyond it to be
# more than the most extreme draw or two. b >= RESAMPLES_PER_TAIL * 2 / alpha (400 at 0.05).
RESAMPLES_PER_TAIL = 10


def min_resamples(alpha: float) -> int:
    """The fewest bootstrap resamples whose percentile interval at ``alpha`` is worth printing."""
    return math.ceil(2 * RESAMPLES_PER_TAIL / alpha - 1e-9)


def resample_advice(alpha: float, name: str, alpha_name: str = "alpha") -> str:
    """Why ``name`` is too small at ``alpha``, with a bound the user can actually meet."""
    floor = min_resamples(alpha)
    if floor > MAX_BOOTSTRAP_SAMPLES:
        return (
            f"{alpha_name} {alpha:g} is too small: its interval ends need 20 / alpha resamples, more than the "
            f"{MAX_BOOTSTRAP_SAMPLES:,} allowed; use {alpha_name} >= {2 * RESAMPLES_PER_TAIL / MAX_BOOTSTRAP_SAMPLES:g}"
        )
    return (
        f"{name} must be at least {floor:,} at {alpha_name} {alpha:g} (20 / alpha: {RESAMPLES_PER_TAIL} resamples "
        f"beyond each end of the {(1 - alpha) * 100:.6g}% interval)"
    )


def check_resamples(b: int, alpha: float, *, name: str) -> None:
    """Refuse a resample count too small for ``alpha``'s tails, naming the input ``name``."""
    floor = min_resamples(alpha)
    if b < floor:
        raise ValueError(
            f"{name} must be at least {floor} at alpha {alpha:g} (20 / alpha: {RESAMPLES_PER_TAIL} resamples "
            f"beyond each end of the {(1 - alpha) * 100:.6g}% interval), got {b}"
        )


def check_b_alpha(b: int, alpha: float) -> None:
    """Refuse a resample count that is not a positive integer, or an alpha outside (0, 1)."""
    if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b < 1:
        raise ValueError(f"b (the number of bootstrap resamples) must be a positive integer, got {b!r}")
    if not (isinstance(alpha, (int, float)) and 0.0 < alpha < 1.0):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
