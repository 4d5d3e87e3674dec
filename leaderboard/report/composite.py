"""The composite ranking as a markdown section (under the title) and as the JSON report's ``composite``."""

from __future__ import annotations

import math

from ..composite import CompositeBoard, Ranked, format_value
from ..config import Normalization
from .formatting import labels
from .markdown import DASH, md_code, md_text, truncate


def _inline(text: str) -> str:
    return md_code(text, table=False)


# Rows the section shows of each kind, and characters of an id outside the table: the section is
# never dropped for size, so it bounds itself (about 20,000 characters at most, a third of a comment).
MAX_ROWS = 50
ID_WIDTH = 60
# Custom metric columns shown (the JSON report has all).
MAX_CUSTOM_COLUMNS = 4

_BUILTIN = ("accuracy", "cost", "latency", "latency_p50", "error_rate")
_COLUMNS = (("accuracy", "Accuracy"), ("cost", "$/1k calls"), ("latency", "p95 ms"), ("error_rate", "Error rate"))


def _cell(metric: str, value: float | None) -> str:
    if value is None:
        return DASH
    if metric == "latency":
        return f"{value:,.0f}"
    return format_value(metric, value)


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _how(name: str, n: Normalization) -> str:
    label = {"latency": "latency p95"}.get(name, name)
    detail: str = n.mode
    if n.mode == "target":
        detail += f" {n.target:g}"
    elif n.mode == "budget":
        detail += f" {n.budget:g}"
    if n.mode != "budget":
        detail += f", {n.direction} is better"
    # Built-in names are our words; any other is a custom metric or category from the data.
    shown = md_text(label) if name in _BUILTIN else _inline(label)
    return f"{shown} ({detail})"


ACCURACY_HEADING = "### Accuracy, every model"


def composite_verdict(result: CompositeBoard) -> str:
    """The document's first sentence when a composite ranks the models: its winner, not accuracy's."""
    out = len(result.disqualified)
    disqualified = f" {out} model{'s' if out != 1 else ''} disqualified." if out else ""
    if not result.ranked:
        return f"**Every model is disqualified**: none meets the constraints (below).{disqualified}"
    first = result.ranked[0]
    score = f" ({first.composite:.3f})" if first.composite is not None else ""
    text = f"**{_inline(first.model_id)} ranks first on the composite**{score}"
    if len(result.ranked) > 1:
        second = result.ranked[1]
        other = f" ({second.composite:.3f})" if second.composite is not None else ""
        text += f", ahead of {_inline(second.model_id)}{other}"
    close = result.too_close
    if close is not None and {close.model_a, close.model_b} == {first.model_id, result.ranked[1].model_id}:
        if close.tasks_needed and close.tasks_needed <= close.n_shared:
            needed = f"their {close.n_shared:,} shared tasks are not enough at this level"
        elif close.tasks_needed:
            needed = f"about {close.tasks_needed:,} tasks in total would separate them"
        else:
            needed = "the suite cannot say how many tasks would separate them"
        if close.differing:
            text += f"; the two are too close to call on accuracy ({needed}), so the gap comes from the other metrics"
        else:
            text += f"; the two are too close to call ({needed}): their order here is not established"
    return text + "." + disqualified


def composite_section(result: CompositeBoard) -> str:
    """The ranking by composite, the DISQUALIFIED models with every reason, warnings, the too-close sentence."""
    custom = list(result.custom_metrics[:MAX_CUSTOM_COLUMNS])
    header = ["Rank", "Model", "Composite", *(label for _, label in _COLUMNS), *(md_code(c) for c in custom)]
    lines = [_row(header), "|-----:|-------|----------:|" + "-----:|" * (len(_COLUMNS) + len(custom))]

    label = labels([e.model_id for e in (*result.ranked, *result.disqualified)])

    def cells(entry: Ranked, rank: str, composite: str) -> list[str]:
        values = entry.metrics.values
        return [
            rank,
            md_code(label[entry.model_id]),
            composite,
            *(_cell(metric, values.get(metric)) for metric, _ in _COLUMNS),
            *(_cell(c, values.get(c)) for c in custom),
        ]

    for entry in result.ranked[:MAX_ROWS]:
        lines.append(
            _row(cells(entry, str(entry.rank), f"{entry.composite:.3f}" if entry.composite is not None else DASH))
        )
    for entry in result.disqualified[:MAX_ROWS]:
        lines.append(_row(cells(entry, DASH, "DISQUALIFIED")))
    parts = ["### Composite ranking\n\n" + "\n".join(lines)]
    if result.too_close is not None:
        parts.append(result.too_close.sentence(_inline))
    if result.disqualified:
        reasons = [
            f"- ✗ {_inline(label[entry.model_id])}: {md_text('; '.join(entry.reasons))}"
            for entry in result.disqualified[:MAX_ROWS]
        ]
        parts.append("\n".join(reasons))
    hidden = max(0, len(result.ranked) - MAX_ROWS) + max(0, len(result.disqualified) - MAX_ROWS)
    if hidden:
        parts.append(f"{hidden} more models are in the JSON report (`composite`).")
    for unknown in result.unknown:
        models = ", ".join(_inline(truncate(m, ID_WIDTH)) for m in unknown.models[:20]) + (
            " …" if len(unknown.models) > 20 else ""
        )
        what = "Cost per 1k calls" if unknown.metric == "cost" else _inline(unknown.metric)
        parts.append(
            f"> [!WARNING]\n> {what} is weighted, but it is unknown for {models}: it counts as 0 (the worst) for "
            f"{'them' if len(unknown.models) > 1 else 'it'}. To fix, {unknown.fix}."
        )
    if not result.ranked:
        parts.append("**Every model is disqualified**: no model meets the constraints.")
    weights = " + ".join(
        f"{w:.2f} × {_how(name, result.normalization[name])}" for name, w in result.weights.items() if w > 0
    )
    parts.append(
        f"<sub>Composite = {weights}; ties broken by {_inline(result.tie_breaker)}. Cost is the mean over completed "
        "calls ×1000 and unknown if any completed call is unpriced; failed calls count only in the error rate. "
        "A disqualified model is not ranked.</sub>"
    )
    return "\n\n".join(parts)


def _number(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else value


def composite_dict(result: CompositeBoard) -> dict[str, object]:
    """The JSON report's ``composite``: raw, normalised and composite values, reasons, the configuration used."""

    def entry(r: Ranked) -> dict[str, object]:
        m = r.metrics
        return {
            "rank": r.rank,
            "model_id": r.model_id,
            "disqualified": r.disqualified,
            "reasons": list(r.reasons),
            "composite": _number(r.composite),
            "calls": m.calls,
            "completed_calls": m.completed,
            "failed_calls": m.failed,
            "unpriced_calls": m.unpriced,
            "untimed_calls": m.untimed,
            "raw": {k: _number(v) for k, v in m.values.items()},
            "normalised": {k: _number(v) for k, v in r.normalised.items()},
        }

    too_close = result.too_close
    return {
        "top_model": result.top_model or None,
        "weights": dict(result.weights),
        "normalization": {
            name: {k: v for k, v in vars(n).items() if v is not None} for name, n in result.normalization.items()
        },
        "tie_breaker": result.tie_breaker,
        "custom_metrics": list(result.custom_metrics),
        "ranked": [entry(r) for r in result.ranked],
        "disqualified": [entry(r) for r in result.disqualified],
        "unknown_weighted": [{"metric": u.metric, "models": list(u.models), "fix": u.fix} for u in result.unknown],
        "too_close": None
        if too_close is None
        else {
            "a": too_close.model_a,
            "b": too_close.model_b,
            "tasks_needed": too_close.tasks_needed,
            "differing": list(too_close.differing),
            "sentence": too_close.sentence(),
        },
        "config": result.config.as_dict(),
    }
