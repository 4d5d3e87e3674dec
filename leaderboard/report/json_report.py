"""The versioned JSON report: every number of the analysis, full precision (docs/report-schema.md).

Pairs grow as models squared (half a million at 1,000 models), so they are written
one compact line each, streamed from the analysis' columns, and name their models by
rank instead of repeating ids.
"""

from __future__ import annotations

import io
import json
import math
import re
import secrets
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import TextIO, cast

import numpy as np

from ..records import PairwiseDiff
from ..stats.analysis import Leaderboard
from ..stats.family import METHOD_WORDS
from ..stats.pairs import SIGNIFICANT
from ..stats.parameters import RESAMPLES_PER_TAIL, min_resamples
from ..stats.resampling import EXACT_LIMIT, EXACT_PAIR_LIMIT, FloatArray
from ..stats.significance import ERROR_BOUND, EXACT_MAX_NONZERO, METHOD_NAMES, min_tasks
from .formatting import detectable_dict
from .reasons import reason_text

REPORT_SCHEMA = "leaderboard-action/report"
REPORT_SCHEMA_VERSION = 3
_PAIRS_PER_WRITE = 4096
_ROWS_PER_WRITE = 1 << 16
_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


@dataclass(frozen=True)
class CompactRows:
    """Flat rows (JSON arrays), held as columns, that the report writes one a line (the task changes).

    Indenting millions of rows one value a line takes seconds (``json`` indents in Python), and so
    does a Python object per row: each column of a chunk of rows is encoded by one call of the C
    encoder, and the chunk's lines are put together by one join.
    """

    columns: tuple[Sequence[object] | FloatArray, ...]  # each as long as the others (arrays: one dimension)

    def __len__(self) -> int:
        return len(self.columns[0]) if self.columns else 0

    def chunks(self, indent: str) -> Iterator[str]:
        """The rows' text after the opening bracket: each row on a line of its own, after ``indent``."""
        total = len(self)
        for start in range(0, total, _ROWS_PER_WRITE):
            stop = min(total, start + _ROWS_PER_WRITE)
            slots: list[str | Sequence[str]] = [f",\n{indent}  ["]
            for k, column in enumerate(self.columns):
                before, texts, after = _texts(column[start:stop])
                _add(slots, (", " if k else "") + before)
                _add(slots, texts)
                _add(slots, after)
            _add(slots, "]")
            text = interleaved(slots, stop - start)
            # The first row follows the opening bracket: no comma before it.
            yield text[1:] if start == 0 else text


def _add(slots: list[str | Sequence[str]], slot: str | Sequence[str]) -> None:
    """Append ``slot``, a text every row has joined to the one before it: fewer slots to interleave."""
    if isinstance(slot, str) and isinstance(slots[-1], str):
        slots[-1] += slot
    else:
        slots.append(slot)


def interleaved(slots: Sequence[str | Sequence[str]], rows: int, head: str = "") -> str:
    """``head``, then ``rows`` rows, each the concatenation of its slots: a slot is a text every row has, or a
    column (a text per row). One join, in C: no Python object is made per row."""
    width = len(slots)
    parts: list[str] = [head] * (width * rows + 1)
    for k, slot in enumerate(slots):
        parts[1 + k :: width] = repeat(slot, rows) if isinstance(slot, str) else slot
    return "".join(parts)


def _texts(values: Sequence[object] | FloatArray) -> tuple[str, str | Sequence[str], str]:
    """Each value as ``json.dumps`` writes it (``ensure_ascii`` off, no NaN), the column encoded at once in C:
    (text before each, the texts (one text: every value's), text after each)."""
    if not len(values):
        return "", [], ""
    if isinstance(values, np.ndarray):  # numbers: ", " only between values
        return "", _encode(values.tolist())[1:-1].split(", "), ""
    if values[0] is None and values.count(None) == len(values):
        return "", "null", ""
    strings = cast(Sequence[str], values)
    try:
        flat = "".join(strings)  # a TypeError unless every value is a string
    except TypeError:
        flat = None
    if flat is not None:
        # Few distinct values (categories): each encoded once. The first values tell, before hashing them all.
        if len(set(strings[:256])) * 4 <= min(256, len(strings)):
            encoded = {v: _encode(v) for v in set(strings)}
            return "", list(map(encoded.__getitem__, strings)), ""
        # Nothing to escape (no quote, backslash or control character): each string is its own text, in quotes.
        if flat.isprintable() and '"' not in flat and "\\" not in flat:
            return '"', strings, '"'
        # A string's own quotes are escaped, so `, "` is only ever between two strings.
        first, *rest = _encode(list(strings))[1:-1].split(', "')
        return "", [first, *map('"'.__add__, rest)], ""
    if set(map(type, values)) <= {float, int, bool, type(None)}:
        return "", _encode(list(values))[1:-1].split(", "), ""  # no string: ", " only between values
    return "", list(map(_encode, values)), ""


def _placeholder(nonce: str, index: int) -> str:
    return f"\x00compact-{nonce}-{index}\x00"


def _compacted(value: object, found: list[CompactRows], nonce: str) -> object:
    """``value`` with each :class:`CompactRows` replaced by a placeholder string (kept in ``found``)."""
    if isinstance(value, CompactRows):
        found.append(value)
        return _placeholder(nonce, len(found) - 1)
    if isinstance(value, dict):
        return {k: _compacted(v, found, nonce) for k, v in value.items()}
    if isinstance(value, list):
        return [_compacted(v, found, nonce) for v in value]
    return value


def _write_head(report: Mapping[str, object], handle: TextIO) -> None:
    """Write ``json.dumps(report, indent=2)`` but its closing brace (and the blanks before it), each
    :class:`CompactRows` element on one line of its own, streamed."""
    found: list[CompactRows] = []
    # A random nonce: no string from the data can equal a placeholder.
    nonce = secrets.token_hex(8)
    text = json.dumps(_compacted(dict(report), found, nonce), indent=2, ensure_ascii=False, allow_nan=False)
    pieces = re.split(rf'"\\u0000compact-{nonce}-(\d+)\\u0000"', text)
    for k in range(1, len(pieces), 2):
        before = pieces[k - 1]
        handle.write(before)
        rows = found[int(pieces[k])]
        if not rows:
            handle.write("[]")
            continue
        line = before[before.rfind("\n") + 1 :]
        indent = " " * (len(line) - len(line.lstrip(" ")))
        handle.write("[")
        for chunk in rows.chunks(indent):
            handle.write(chunk)
        handle.write(f"\n{indent}]")
    # After the last block: its text ends with "]", which no strip reaches.
    last = pieces[-1]
    handle.write(last[: last.rindex("}")].rstrip())


def _float(value: float) -> float | None:
    return None if math.isnan(value) else value


def report_dict(
    board: Leaderboard,
    *,
    pairs: bool = True,
    baseline: Mapping[str, object] | None = None,
    composite: Mapping[str, object] | None = None,
    required: Mapping[str, object] | None = None,
    failures: Mapping[str, object] | None = None,
    history: Mapping[str, object] | None = None,
) -> dict[str, object]:
    """The JSON report as a dict (schema: docs/report-schema.md); ``pairs=False`` leaves them out.

    ``baseline``: the comparison with a baseline (``report.comparison_json.comparison_dict``), written
    under ``"baseline"`` after ``resolution``; no key without one. ``composite``: the ranking on a
    configuration (:func:`leaderboard.report.composite.composite_dict`), written next, under
    ``"composite"``; no key without one. ``failures``: the failed calls left out of the scores
    (:func:`leaderboard.report.failures.failures_dict`), under ``"failures"`` after ``counts``.
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

    applied = board.task_weights == "apply" and board.weights_ignored
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
            "saddlepoint_relative_error": ERROR_BOUND,
            "cluster_by": board.clustering.by if board.clustering is not None else "none",
            "task_weights": board.task_weights,
            "failed_calls": board.failed_calls,
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
        **({"failures": dict(failures)} if failures is not None else {}),
        "weights_applied": applied,
        "weights_ignored": board.weights_ignored and not applied,
        "clustering": _clustering(board),
        "design_effect": _design(board),
        "categories": list(board.categories),
        "top_group": list(board.top_group),
        "detectable": detectable_dict(board.detectable()),
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
                "ci_method": row.ci_method,
                "win_rate": row.win_rate,
                "tasks_completed": row.tasks_completed,
                "categories": dict(row.categories),
                "category_tasks": dict(row.category_tasks),
                "category_ci": {c: list(ci) for c, ci in row.category_ci.items()},
                "category_ci_notes": dict(row.category_ci_notes),
            }
            for r, row in enumerate(board.rows, start=1)
        ],
        "resolution": {"adjacent": resolved(adjacent), "leader": resolved(leader)},
    }
    if baseline is not None:
        report["baseline"] = dict(baseline)
    if composite is not None:
        report["composite"] = dict(composite)
    if required is not None:
        report["required"] = dict(required)
    if history is not None:  # the earlier runs on the base branch, when they were asked for
        report["history"] = dict(history)
    if pairs:
        report["pairs"] = [json.loads(line) for line in _pair_lines(board, 0, len(table))]
    return report


def _clustering(board: Leaderboard) -> dict[str, object] | None:
    """What the statistics treated as units (cluster-by); None without clustering."""
    c = board.clustering
    if c is None:
        return None
    return {
        "by": c.by,
        "clusters": c.count,
        "largest": c.largest,
        "largest_share": c.largest_share,
        "mean_size": c.mean_size,
        "min_df": _float(c.min_df),
        "method": c.method,
        "warning": c.warns,
    }


def _design(board: Leaderboard) -> dict[str, object] | None:
    """The categories' design effect, reported when clustering is off and there are two categories or more."""
    d = board.design
    if d is None:
        return None
    return {
        "categories": d.categories,
        "icc_lo": d.icc_lo,
        "icc_hi": d.icc_hi,
        "design_effect": d.design_effect,
        "warning": d.warns,
        **_cluster_check(board),
    }


def _cluster_check(board: Leaderboard) -> dict[str, object]:
    """The claims recomputed clustered by category (stats/cluster_check.py), beside the scores' design effect."""
    c = board.cluster_check
    if c is None:
        return {}
    return {
        "differences_icc_lo": c.difference_icc_lo,
        "differences_icc_hi": c.difference_icc_hi,
        "differences_design_effect": c.difference_design_effect,
        "clustered_interval_ratio": c.interval_ratio,
        "clustered_claims_differ": c.claims_differ,
        "clustered_lost_pairs": [list(p) for p in c.lost],
        "clustered_gained_pairs": [list(p) for p in c.gained],
        "clustered_top_group": list(c.top_group),
    }


def _numbers(column: FloatArray) -> list[str]:
    """Each float as json.dumps writes it (repr; NaN has no JSON form: null).

    Formatting a float is most of the report's time at millions of pairs, so a column of few
    distinct values (p-values at the Monte Carlo floor) formats each once; distinct by bits, so
    that -0.0 stays -0.0. The rest go through json.dumps, which formats in C.
    """
    if not column.size:
        return []
    bits, inverse = np.unique(column.view(np.int64), return_inverse=True)
    if bits.size * 4 <= column.size:
        shown = [repr(v) if v == v else "null" for v in bits.view(np.float64).tolist()]
        return [shown[i] for i in inverse.ravel().tolist()]
    return json.dumps(column.tolist()).replace("NaN", "null")[1:-1].split(", ")


def _reasons(board: Leaderboard, start: int, stop: int) -> list[str]:
    """Each pair's reason, JSON-encoded, in the tables' own words: each distinct reason worded and encoded once."""
    distinct, index = board.pairs.reasons(start, stop)
    encoded = [json.dumps(reason_text(r) if r is not None else None) for r in distinct]
    return [encoded[k] for k in index]


def _pair_lines(board: Leaderboard, start: int, stop: int) -> list[str]:
    t = board.pairs
    a, b = (list(map(str, (c[start:stop] + 1).tolist())) for c in (t.a, t.b))
    n = list(map(str, t.n_shared[start:stop].tolist()))
    tests = [METHOD_NAMES[m] for m in t.method[start:stop].tolist()]
    # The chunk's own codes: ``t.significant`` compares the whole column, on every chunk.
    significant = ["true" if v == SIGNIFICANT else "false" for v in t.reason_code[start:stop].tolist()]
    mean, lo, hi, p, adjusted = (
        _numbers(c[start:stop]) for c in (t.mean_diff, t.ci_lo, t.ci_hi, t.p_value, t.p_adjusted)
    )
    reasons = _reasons(board, start, stop)
    # With cluster-by on: the pair's shared clusters (and the deprecated clusters_needed), after the other fields.
    extra = [""] * (stop - start)
    if t.clustered:
        clusters = t.n_clusters[start:stop].tolist()
        extra = [f', "n_clusters": {clusters[k]}, "clusters_needed": null' for k in range(stop - start)]
    return [
        f'{{"a": {a[k]}, "b": {b[k]}, "n_shared": {n[k]}, "mean_diff": {mean[k]}, "ci_lo": {lo[k]}, '
        f'"ci_hi": {hi[k]}, "p_value": {p[k]}, "p_adjusted": {adjusted[k]}, "test": "{tests[k]}", '
        f'"significant": {significant[k]}, "reason": {reasons[k]}, "tasks_needed": null{extra[k]}}}'
        for k in range(stop - start)
    ]


def write_json(
    board: Leaderboard,
    handle: TextIO,
    *,
    baseline: Mapping[str, object] | None = None,
    composite: Mapping[str, object] | None = None,
    required: Mapping[str, object] | None = None,
    failures: Mapping[str, object] | None = None,
    history: Mapping[str, object] | None = None,
) -> None:
    """Stream the JSON report to ``handle``: the head indented, then one line per pair."""
    _write_head(
        report_dict(
            board,
            pairs=False,
            baseline=baseline,
            composite=composite,
            required=required,
            failures=failures,
            history=history,
        ),
        handle,
    )
    handle.write(',\n  "pairs": [')
    total = len(board.pairs)
    for start in range(0, total, _PAIRS_PER_WRITE):
        lines = _pair_lines(board, start, min(total, start + _PAIRS_PER_WRITE))
        handle.write(("\n    " if start == 0 else ",\n    ") + ",\n    ".join(lines))
    handle.write("\n  ]\n}\n" if total else "]\n}\n")


def render_json(
    board: Leaderboard,
    *,
    baseline: Mapping[str, object] | None = None,
    composite: Mapping[str, object] | None = None,
    required: Mapping[str, object] | None = None,
    failures: Mapping[str, object] | None = None,
) -> str:
    """The JSON report: full precision, stable key order, no NaN (null instead)."""
    out = io.StringIO()
    write_json(board, out, baseline=baseline, composite=composite, required=required, failures=failures)
    return out.getvalue()
