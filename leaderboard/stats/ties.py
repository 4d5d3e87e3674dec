"""The one tie rule: two scores this close are equal, everywhere a score is compared.

The specification's ``math.isclose`` (abs_tol 1e-12, default rel_tol 1e-9) decides win rates,
per-task differences and significance; ranking compares values rounded to TIE_DECIMALS (scores
are on [0, 1], so a relative 1e-9 is at most 1e-9).
"""

from __future__ import annotations

import numpy as np

from .resampling import FloatArray

TIE_ABS_TOL = 1e-12
TIE_REL_TOL = 1e-9
TIE_DECIMALS = 9


def tie_tolerance(a: FloatArray, b: FloatArray) -> FloatArray:
    """How far apart two scores may be and still be equal: ``math.isclose``'s rule, elementwise.

    (np.isclose is asymmetric: it scales by |b| only and adds the tolerances.)
    """
    return np.maximum(TIE_REL_TOL * np.maximum(np.abs(a), np.abs(b)), TIE_ABS_TOL)


def tie_key(value: float) -> float:
    """``value`` rounded to the tie tolerance: near-equal values (math.isclose) sort as equal."""
    return round(float(value), TIE_DECIMALS)
