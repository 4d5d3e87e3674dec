"""The comparison with the baseline in the JSON report: the ``baseline`` key, full precision, NaN as null.

Its words (the reasons) are the documents' (:mod:`leaderboard.report.reasons`); the counts are those the
section's headline gives (:mod:`leaderboard.report.comparison`).
"""

from __future__ import annotations

import math

from ..stats.comparison import Comparison
from ..stats.significance import min_tasks
from .comparison import not_compared
from .formatting import detectable_dict
from .reasons import reason_text


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def comparison_dict(comparison: Comparison) -> dict[str, object]:
    """The comparison for the JSON report's ``baseline`` key (full precision; NaN as null)."""
    return {
        "found": True,
        "parameters": {
            "alpha": comparison.alpha,
            "bootstrap_samples": comparison.b,
            "seed": comparison.seed,
            "regression_tolerance": comparison.tolerance,
            "correction": comparison.correction,
            "one_sided": comparison.one_sided,
            # [ci_lo, ci_hi]'s two-sided confidence: 1 - 2 alpha when each end is a one-sided 1 - alpha bound.
            "ci_confidence": 1.0 - comparison.ci_alpha,
            "level": comparison.level,
            "min_shared_for_significance": min_tasks(comparison.alpha),
        },
        # The comparison's unit and weights (the leaderboard's).
        "clustering": {
            "cluster_by": comparison.cluster_by,
            "clusters": comparison.clusters,
            "task_weights": comparison.task_weights,
            "relabelled": comparison.relabelled,
            "reweighted": comparison.reweighted,
        },
        "detectable": detectable_dict(comparison.detectable),
        "counts": {
            "compared": len(comparison.models) - not_compared(comparison),
            "not_compared": not_compared(comparison),
            "family": comparison.family,
            "regressed": comparison.count("regressed"),
            "within_tolerance": comparison.count("within tolerance"),
            "improved": comparison.count("improved"),
            "no_detectable_change": comparison.count("no detectable change") - not_compared(comparison),
            "unchanged": comparison.count("unchanged"),
            "new_models": len(comparison.new_models),
            "removed_models": len(comparison.removed_models),
            "tasks_added": len(comparison.tasks_added),
            "tasks_dropped": len(comparison.tasks_dropped),
        },
        "regressed_models": [m.model_id for m in comparison.regressions],
        "improved_models": [m.model_id for m in comparison.improvements],
        "models": [
            {
                "model_id": m.model_id,
                "verdict": m.verdict,
                "n_shared": m.n_shared,
                "base_mean": _number(m.base_mean),
                "pr_mean": _number(m.pr_mean),
                "delta": _number(m.delta),
                "ci_lo": _number(m.ci_lo),
                "ci_hi": _number(m.ci_hi),
                "p_value": _number(m.p_value),
                "p_adjusted": _number(m.p_adjusted),
                "test": m.test,
                "reason": reason_text(m.reason) if m.reason else None,
                "tasks_needed": m.tasks_needed,
                "base_mean_all": m.base_mean_all,
                "pr_mean_all": m.pr_mean_all,
                "base_tasks": m.base_tasks,
                "pr_tasks": m.pr_tasks,
                "categories": {c.category: {"delta": c.delta, "n_shared": c.n_shared} for c in m.categories},
                **(
                    {"n_clusters": m.n_clusters, "clusters_needed": m.clusters_needed}
                    if m.n_clusters is not None
                    else {}
                ),
            }
            for m in comparison.models
        ],
        "new_models": list(comparison.new_models),
        "removed_models": list(comparison.removed_models),
        "tasks_added": list(comparison.tasks_added),
        "tasks_dropped": list(comparison.tasks_dropped),
    }


def no_baseline_dict(reason: str, fix: str) -> dict[str, object]:
    """The JSON report's ``baseline`` when none was found."""
    return {"found": False, "reason": reason, "fix": fix}
