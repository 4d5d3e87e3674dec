"""The versioned JSON report: every number of the analysis, full precision (docs/report-schema.md)."""

from __future__ import annotations

import json
import math

from ..resampling import EXACT_LIMIT, EXACT_PAIR_LIMIT
from ..statistics import MIN_SHARED_FOR_SIGNIFICANCE, Leaderboard

REPORT_SCHEMA = "leaderboard-action/report"
REPORT_SCHEMA_VERSION = 1


def _float(value: float) -> float | None:
    return None if math.isnan(value) else value


def report_dict(board: Leaderboard) -> dict[str, object]:
    """The JSON report as a dict (schema: docs/report-schema.md)."""
    return {
        "schema": REPORT_SCHEMA,
        "schema_version": REPORT_SCHEMA_VERSION,
        "parameters": {
            "alpha": board.alpha,
            "confidence": 1.0 - board.alpha,
            "bootstrap_samples": board.b,
            "seed": board.seed,
            "rank_by": board.rank_by,
            "exact_bootstrap_max_tasks": EXACT_LIMIT,
            "exact_pair_bootstrap_max_shared_tasks": EXACT_PAIR_LIMIT,
            "min_shared_for_significance": MIN_SHARED_FOR_SIGNIFICANCE,
        },
        "counts": {
            "runs": board.n_runs,
            "models": board.n_models,
            "tasks": board.n_tasks,
            "categories": len(board.categories),
            "pairs": len(board.pairs),
        },
        "weights_applied": False,
        "weights_ignored": board.weights_ignored,
        "categories": list(board.categories),
        "rows": [
            {
                "rank": rank,
                "model_id": row.model_id,
                "mean_score": row.mean_score,
                "mean_ci_lo": row.mean_ci_lo,
                "mean_ci_hi": row.mean_ci_hi,
                "win_rate": row.win_rate,
                "tasks_completed": row.tasks_completed,
                "categories": dict(row.categories),
            }
            for rank, row in enumerate(board.rows, start=1)
        ],
        "pairs": [
            {
                "model_a": p.model_a,
                "model_b": p.model_b,
                "n_shared": p.n_shared,
                "mean_diff": _float(p.mean_diff),
                "ci_lo": _float(p.ci_lo),
                "ci_hi": _float(p.ci_hi),
                "significant": p.significant,
                "enough_shared": p.n_shared >= MIN_SHARED_FOR_SIGNIFICANCE,
            }
            for p in board.pairs
        ],
    }


def render_json(board: Leaderboard) -> str:
    """The JSON report: full precision, stable key order, no NaN (null instead)."""
    return json.dumps(report_dict(board), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
