"""The versioned JSON report: every number of the analysis, full precision (docs/report-schema.md).

Pairs grow as models squared (half a million at 1,000 models), so they are written
one compact line each, streamed from the analysis' columns, and name their models by
rank instead of repeating ids.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Mapping
from typing import TextIO

from ..records import PairwiseDiff
from ..stats.aggregation import RESAMPLES_PER_TAIL, Leaderboard, min_resamples
from ..stats.family import METHOD_WORDS, family_resamples
from ..stats.resampling import EXACT_LIMIT, EXACT_PAIR_LIMIT
from ..stats.significance import EXACT_MAX_NONZERO, MC_RESAMPLES, METHOD_NAMES, NORMAL_MIN_EFFECTIVE, min_tasks

REPORT_SCHEMA = "leaderboard-action/report"
REPORT_SCHEMA_VERSION = 3
_PAIRS_PER_WRITE = 4096


def _float(value: float) -> float | None:
    return None if math.isnan(value) else value


def report_dict(
    board: Leaderboard,
    *,
    pairs: bool = True,
    baseline: Mapping[str, object] | None = None,
    composite: Mapping[str, object] | None = None,
) -> dict[str, object]:
    """The JSON report as a dict (schema: docs/report-schema.md); ``pairs=False`` leaves them out.

    ``baseline``: the comparison with a baseline (``report.comparison.comparison_dict``), written
    under ``"baseline"`` after ``resolution``; no key without one. ``composite``: the ranking on a
    configuration (:func:`leaderboard.report.composite.composite_dict`), written next, under
    ``"composite"``; no key without one.
    """
    table = board.pairs
    adjacent, leader = board.resolution()
    rank = {row.model_id: r for r, row in enumerate(board.rows, start=1)}

    def resolved(pair_list: tuple[PairwiseDiff, ...]) -> list[dict[str, object]]:
        return [
            {
                "a": rank[p.model_a],
                "b": rank[p.model_b],
                "separated": p.significant,
                "n_shared": p.n_shared,
                "mean_diff": _float(p.mean_diff),
                "tasks_needed": p.tasks_needed,
            }
            for p in pair_list
        ]

    report: dict[str, object] = {
        "schema": REPORT_SCHEMA,
        "schema_version": REPORT_SCHEMA_VERSION,
        "parameters": {
            "alpha": board.alpha,
            "confidence": 1.0 - board.alpha,
            "bootstrap_samples": board.b,
            "min_bootstrap_samples": min_resamples(board.alpha),
            "resamples_per_tail": RESAMPLES_PER_TAIL,
            "seed": board.seed,
            "rank_by": board.rank_by,
            "correction": board.correction,
            "correction_method": METHOD_WORDS[board.correction],
            "level_in_force": table.level,
            "exact_bootstrap_max_tasks": EXACT_LIMIT,
            "exact_pair_bootstrap_max_shared_tasks": EXACT_PAIR_LIMIT,
            "min_shared_for_significance": min_tasks(board.alpha),
            "exact_test_max_nonzero": EXACT_MAX_NONZERO,
            "monte_carlo_resamples": MC_RESAMPLES,
            "family_monte_carlo_resamples": family_resamples(table.tested, board.alpha)
            if board.correction != "none"
            else MC_RESAMPLES,
            "normal_min_effective_tasks": NORMAL_MIN_EFFECTIVE,
        },
        "counts": {
            "runs": board.n_runs,
            "models": board.n_models,
            "tasks": board.n_tasks,
            "categories": len(board.categories),
            "pairs": len(table),
            "pairs_tested": table.tested,
            "family": table.family,
            "pairs_significant": int(table.significant.sum()),
            "all_tied_tasks": board.all_tied_tasks,
        },
        "weights_applied": False,
        "weights_ignored": board.weights_ignored,
        "categories": list(board.categories),
        "top_group": list(board.top_group),
        "detectable": _detectable(board),
        "rows": [
            {
                "rank": r,
                "model_id": row.model_id,
                "rank_lo": row.rank_lo,
                "rank_hi": row.rank_hi,
                "mean_score": row.mean_score,
                "mean_ci_lo": row.mean_ci_lo,
                "mean_ci_hi": row.mean_ci_hi,
                "ci_note": row.ci_note,
                "win_rate": row.win_rate,
                "tasks_completed": row.tasks_completed,
                "categories": dict(row.categories),
                "category_tasks": dict(row.category_tasks),
            }
            for r, row in enumerate(board.rows, start=1)
        ],
        "resolution": {"adjacent": resolved(adjacent), "leader": resolved(leader)},
    }
    if baseline is not None:
        report["baseline"] = dict(baseline)
    if composite is not None:
        report["composite"] = dict(composite)
    if pairs:
        report["pairs"] = [json.loads(line) for line in _pair_lines(board, 0, len(table))]
    return report


def _detectable(board: Leaderboard) -> dict[str, object] | None:
    d = board.detectable()
    if d is None:
        return None
    return {"n_shared": d.n_shared, "sd": d.sd, "level": d.level, "power": d.power, "difference": d.difference}


def _numbers(values: list[float]) -> list[str]:
    # json.dumps writes floats with repr; NaN has no JSON form.
    return [repr(v) if v == v else "null" for v in values]


def _pair_lines(board: Leaderboard, start: int, stop: int) -> list[str]:
    t = board.pairs
    a, b = (t.a[start:stop] + 1).tolist(), (t.b[start:stop] + 1).tolist()
    n = t.n_shared[start:stop].tolist()
    needed = [str(v) if v >= 0 else "null" for v in t.tasks_needed[start:stop].tolist()]
    tests = [METHOD_NAMES[m] for m in t.method[start:stop].tolist()]
    significant = ["true" if v else "false" for v in t.significant[start:stop].tolist()]
    mean, lo, hi, p, adjusted = (
        _numbers(c[start:stop].tolist()) for c in (t.mean_diff, t.ci_lo, t.ci_hi, t.p_value, t.p_adjusted)
    )
    reasons = [json.dumps(r) for r in t.reasons(start, stop)]
    return [
        f'{{"a": {a[k]}, "b": {b[k]}, "n_shared": {n[k]}, "mean_diff": {mean[k]}, "ci_lo": {lo[k]}, '
        f'"ci_hi": {hi[k]}, "p_value": {p[k]}, "p_adjusted": {adjusted[k]}, "test": "{tests[k]}", '
        f'"significant": {significant[k]}, "reason": {reasons[k]}, "tasks_needed": {needed[k]}}}'
        for k in range(stop - start)
    ]


def write_json(
    board: Leaderboard,
    handle: TextIO,
    *,
    baseline: Mapping[str, object] | None = None,
    composite: Mapping[str, object] | None = None,
) -> None:
    """Stream the JSON report to ``handle``: the head indented, then one line per pair."""
    head = json.dumps(
        report_dict(board, pairs=False, baseline=baseline, composite=composite),
        indent=2,
        ensure_ascii=False,
        allow_nan=False,
    )
    handle.write(head[: head.rindex("}")].rstrip() + ',\n  "pairs": [')
    total = len(board.pairs)
    for start in range(0, total, _PAIRS_PER_WRITE):
        lines = _pair_lines(board, start, min(total, start + _PAIRS_PER_WRITE))
        handle.write(("\n    " if start == 0 else ",\n    ") + ",\n    ".join(lines))
    handle.write("\n  ]\n}\n" if total else "]\n}\n")


def render_json(
    board: Leaderboard, *, baseline: Mapping[str, object] | None = None, composite: Mapping[str, object] | None = None
) -> str:
    """The JSON report: full precision, stable key order, no NaN (null instead)."""
    out = io.StringIO()
    write_json(board, out, baseline=baseline, composite=composite)
    return out.getvalue()
