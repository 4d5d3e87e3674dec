"""The composite ranking as a markdown section (under the title) and as the JSON report's ``composite``."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from ..composite import DESCRIBED, CompositeBoard, Ranked, TooClose, Unknown, format_value
from ..config import Normalization
from .document import comment_length
from .formatting import labels
from .markdown import DASH, md_code, md_text, truncate


def _and(words: Sequence[str]) -> str:
    if len(words) <= 2:
        return " and ".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def too_close_sentence(
    close: TooClose, name: Callable[[str], str] = str, metric: Callable[[str], str] = str, *, limit: int | None = None
) -> str:
    """The specification's sentence for #1 and #2 not separated on accuracy.

    ``name`` formats a model id and ``metric`` a custom metric or category name, both data (a code
    span in markdown; the built-in metrics' words are ours); ``limit``: metrics named before the rest
    are counted.
    """
    a, b = name(close.model_a), name(close.model_b)
    if close.tasks_needed is not None and close.tasks_needed <= close.n_shared:
        head = (
            f"{a} and {b} are too close to call on accuracy — their {close.n_shared:,} shared tasks are not "
            "enough to separate them at this level."
        )
    elif close.tasks_needed is not None:
        head = (
            f"{a} and {b} are too close to call on accuracy — this suite of {close.n_tasks:,} tasks cannot "
            "resolve a gap this small."
        )
    else:
        head = f"{a} and {b} are too close to call on accuracy — this suite does not separate them at this level."
    if close.differing:
        keep = len(close.differing) if limit is None else limit
        named = [d if d in DESCRIBED.values() else metric(d) for d in close.differing[:keep]]
        if len(close.differing) > keep:
            named.append(f"{len(close.differing) - keep:,} more weighted metrics")
        return f"{head} Any gap between them here is coming from {_and(named)}."
    return f"{head} No other weighted metric separates them either: their order here is not established."


def _inline(text: str) -> str:
    return md_code(text, table=False)


def _name(text: str) -> str:
    """A metric or category name (data) in running text, cut to ID_WIDTH."""
    return _inline(truncate(text, ID_WIDTH))


# Rows the section shows of each kind, and characters of a name outside the table: the section is
# never dropped for size, so it bounds itself to SECTION_LIMIT (under a third of a comment), showing
# fewer rows and warnings where it must; what it leaves out is in the JSON report's ``composite``.
MAX_ROWS = 50
ID_WIDTH = 60
SECTION_LIMIT = 20_000
# Custom metric columns shown (the JSON report has all).
MAX_CUSTOM_COLUMNS = 4
# Weighted metrics unknown for some models: one warning each up to this many, then one for the rest.
MAX_WARNINGS = 5
# Models named in one warning, reasons shown per disqualified model, metrics named in the too-close
# sentence and in the composite's formula.
WARNING_MODELS = 20
MAX_REASONS = 5
REASON_WIDTH = 200
MAX_NAMED = 5
MAX_TERMS = 10

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
    shown = md_text(label) if name in _BUILTIN else _name(label)
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
            needed = "this suite cannot resolve a gap this small"
        else:
            needed = "this suite does not separate them at this level"
        if close.differing:
            text += f"; the two are too close to call on accuracy ({needed}), so the gap comes from the other metrics"
        else:
            text += f"; the two are too close to call ({needed}): their order here is not established"
    return text + "." + disqualified


def _fix(unknown: Unknown) -> str:
    """The warning's fix in markdown: a custom metric's name is data, so it is a code span."""
    if unknown.metric in _BUILTIN:
        return unknown.fix  # our words, with our field names in code spans
    return f"report {_name(unknown.metric)} for these models"


def _warnings(result: CompositeBoard, shown: int, models: int) -> list[str]:
    """A warning per weighted metric unknown for some models, up to ``shown``; then one for the rest."""
    out = []
    for unknown in result.unknown[:shown]:
        names = ", ".join(_name(m) for m in unknown.models[:models]) + (
            f" and {len(unknown.models) - models:,} more" if len(unknown.models) > models else ""
        )
        what = "Cost per 1k calls" if unknown.metric == "cost" else _name(unknown.metric)
        out.append(
            f"> [!WARNING]\n> {what} is weighted, but it is unknown for {names}: it counts as 0 (the worst) for "
            f"{'them' if len(unknown.models) > 1 else 'it'}. To fix, {_fix(unknown)}."
        )
    rest = result.unknown[shown:]
    if rest:
        named = ", ".join(_name(u.metric) for u in rest[:MAX_NAMED]) + (
            f" and {len(rest) - MAX_NAMED:,} more" if len(rest) > MAX_NAMED else ""
        )
        out.append(
            f"> [!WARNING]\n> {len(rest):,} more weighted metrics are unknown for some models and count as 0 (the "
            f"worst) for them: {named}. The JSON report's `composite.unknown_weighted` names every metric, the "
            "models it is unknown for and the fix."
        )
    return out


def _unmatched(result: CompositeBoard, shown: int) -> str:
    cards = result.unmatched_cards
    names = ", ".join(_name(m) for m in cards[:shown]) + (
        f" and {len(cards) - shown:,} more" if len(cards) > shown else ""
    )
    one = len(cards) == 1
    return (
        f"> [!WARNING]\n> The configuration's `models` {'has a card' if one else f'has {len(cards):,} cards'} for "
        f"{names}, but no model of that id is in the data: {'it applies' if one else 'they apply'} to nothing. "
        "Check the spelling against the ids in the table (the JSON report's `composite.unmatched_cards` lists them)."
    )


def _reasons(entry: Ranked) -> str:
    shown = [truncate(r, REASON_WIDTH) for r in entry.reasons[:MAX_REASONS]]
    more = len(entry.reasons) - len(shown)
    return md_text("; ".join(shown)) + (f"; and {more:,} more (the JSON report has every reason)" if more else "")


def composite_section(result: CompositeBoard) -> str:
    """The ranking by composite, the DISQUALIFIED models with their reasons, warnings, the too-close sentence.

    Never over SECTION_LIMIT: when the fullest section is larger, fewer rows, warnings and
    models per warning are shown (each said, with where the rest is).
    """
    rows, warnings, models = MAX_ROWS, MAX_WARNINGS, WARNING_MODELS
    while True:
        text = _section(result, rows, warnings, models)
        if comment_length(text) <= SECTION_LIMIT or (rows, warnings, models) == (1, 0, 1):
            return text
        rows, warnings, models = max(1, rows // 2), warnings // 2, max(1, models // 2)


def _section(result: CompositeBoard, max_rows: int, max_warnings: int, warning_models: int) -> str:
    custom = list(result.custom_metrics[:MAX_CUSTOM_COLUMNS])
    names = [md_code(truncate(c, ID_WIDTH)) for c in custom]
    header = ["Rank", "Model", "Composite", *(label for _, label in _COLUMNS), *names]
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

    for entry in result.ranked[:max_rows]:
        lines.append(
            _row(cells(entry, str(entry.rank), f"{entry.composite:.3f}" if entry.composite is not None else DASH))
        )
    for entry in result.disqualified[:max_rows]:
        lines.append(_row(cells(entry, DASH, "DISQUALIFIED")))
    parts = ["### Composite ranking\n\n" + "\n".join(lines)]
    if result.too_close is not None:
        parts.append(too_close_sentence(result.too_close, _inline, _name, limit=MAX_NAMED))
    if result.disqualified:
        reasons = [
            f"- ✗ {_inline(label[entry.model_id])}: {_reasons(entry)}" for entry in result.disqualified[:max_rows]
        ]
        why = (
            "Why 1 model is disqualified"
            if len(result.disqualified) == 1
            else (f"Why {len(result.disqualified):,} models are disqualified")
        )
        parts.append(f"<details><summary>{why}</summary>\n\n" + "\n".join(reasons) + "\n\n</details>")
    hidden = max(0, len(result.ranked) - max_rows) + max(0, len(result.disqualified) - max_rows)
    if hidden:
        parts.append(f"{hidden} more models are in the JSON report (`composite`).")
    parts.extend(_warnings(result, max_warnings, warning_models))
    if result.unmatched_cards:
        parts.append(_unmatched(result, warning_models))
    if not result.ranked:
        parts.append("**Every model is disqualified**: no model meets the constraints.")
    return "\n\n".join(parts)


def composite_method(result: CompositeBoard) -> str:
    """How the composite is made, for the method block."""
    terms = [(name, w) for name, w in result.weights.items() if w > 0]
    weights = " + ".join(f"{w:.2f} × {_how(name, result.normalization[name])}" for name, w in terms[:MAX_TERMS])
    if len(terms) > MAX_TERMS:
        weights += f" + {len(terms) - MAX_TERMS:,} more terms (the JSON report's `composite.weights`)"
    return (
        f"**The composite** = {weights}; ties broken by {_name(result.tie_breaker)}. Cost is the mean over completed "
        "calls ×1000 and unknown if any completed call is unpriced; failed calls count only in the error rate. "
        "A disqualified model is not ranked."
    )


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
        "unmatched_cards": list(result.unmatched_cards),
        "too_close": None
        if too_close is None
        else {
            "a": too_close.model_a,
            "b": too_close.model_b,
            "tasks_needed": too_close.tasks_needed,
            "differing": list(too_close.differing),
            "sentence": too_close_sentence(too_close),
        },
        "config": result.config.as_dict(),
    }
