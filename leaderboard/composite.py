"""Ranking on what a team buys: per-model metrics, normalised, weighted, constrained.

The specification is ``metrics-and-leaderboard.md``, in four stages:

1. aggregate: per model, accuracy (the leaderboard's mean), cost per 1k calls, latency
   p50/p95, error rate, each custom metric and each category mean;
2. normalise each to 0-1 (identity, minmax, target, budget; higher or lower is better);
3. weight: weights normalised to sum to 1, the composite their weighted sum;
4. constrain: a model violating any hard constraint is DISQUALIFIED, not ranked low.

:func:`rank` takes the records and the :class:`~leaderboard.stats.aggregation.Leaderboard`
made from them rather than fetching anything, so the library, the CLI (``--config``,
``--weights``) and the action rank with this one function: a what-if and a live run
cannot disagree.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter

import numpy as np

from .config import Card, Config, Normalization, default_normalization, weights_problem
from .records import EvalRun
from .stats.aggregation import Leaderboard, tie_key
from .validation import BUILTIN_METRICS, InvalidEvalRuns, Problem, shown, validate_runs

# Two normalised values closer than this are the same (the composite is printed to 3 decimals).
_SAME = 1e-9


@dataclass(frozen=True)
class ModelMetrics:
    """Stage 1 for one model. ``values``: every metric by name (None: unknown)."""

    model_id: str
    calls: int
    completed: int
    failed: int
    unpriced: int  # completed calls without cost_usd
    untimed: int  # completed calls without latency_ms
    values: Mapping[str, float | None]


@dataclass(frozen=True)
class Ranked:
    """A model after stages 2-4: ``rank`` None and ``reasons`` non-empty when disqualified."""

    model_id: str
    rank: int | None
    composite: float | None
    normalised: Mapping[str, float | None]
    metrics: ModelMetrics
    reasons: tuple[str, ...] = ()

    @property
    def disqualified(self) -> bool:
        return bool(self.reasons)


@dataclass(frozen=True)
class Unknown:
    """A weighted metric some models have no value for: it counts as 0 (the worst) for them."""

    metric: str
    models: tuple[str, ...]

    @property
    def fix(self) -> str:
        if self.metric == "cost":
            return "give every completed call a `cost_usd`"
        if self.metric in ("latency", "latency_p50"):
            return "give every completed call a `latency_ms`"
        if self.metric == "accuracy":
            return "these models have no completed call"
        return f"report `{self.metric}` for these models"


@dataclass(frozen=True)
class TooClose:
    """#1 and #2 by composite are not separated on accuracy by this suite (``report.composite`` words it)."""

    model_a: str
    model_b: str
    tasks_needed: int | None  # deprecated: always None (a post-hoc power figure that did not come true)
    n_tasks: int
    differing: tuple[str, ...]  # weighted metrics other than accuracy on which they differ
    n_shared: int = 0  # tasks the two share: an estimate at or below it is never printed


@dataclass(frozen=True)
class CompositeBoard:
    """Everything :func:`rank` produces, with the weights and normalisations it used."""

    ranked: tuple[Ranked, ...]
    disqualified: tuple[Ranked, ...]
    weights: Mapping[str, float]  # normalised to sum to 1
    normalization: Mapping[str, Normalization]  # of every metric normalised
    tie_breaker: str
    custom_metrics: tuple[str, ...]
    unknown: tuple[Unknown, ...]
    too_close: TooClose | None
    config: Config = field(repr=False)
    # Capability cards in the configuration that match no model of the data (a typo, or a model not run).
    unmatched_cards: tuple[str, ...] = ()

    @property
    def top_model(self) -> str:
        """The top-ranked model after disqualification ('' when every model is disqualified)."""
        return self.ranked[0].model_id if self.ranked else ""


# How the too-close sentence names a built-in metric (any other is named as the data spells it).
DESCRIBED = {"cost": "cost", "latency": "speed", "latency_p50": "speed", "error_rate": "error rate"}


def _described(metric: str) -> str:
    """A metric as the too-close sentence names it."""
    return DESCRIBED.get(metric, metric)


def aggregate_metrics(runs: Sequence[EvalRun], board: Leaderboard) -> dict[str, ModelMetrics]:
    """Stage 1: each model's metrics over every completed call (failed calls only in the error rate).

    Cost and latency are all-or-nothing: one completed call without a price makes the
    model's cost unknown (None), because a mean over the priced part would read as what
    the model costs. Accuracy and category means are the leaderboard's own.
    """
    _check_calls(runs)
    rows = {row.model_id: row for row in board.rows}
    calls: dict[str, list[EvalRun]] = {}
    for run in runs:
        calls.setdefault(run.model_id, []).append(run)
    out: dict[str, ModelMetrics] = {}
    for model, its in sorted(calls.items()):
        completed = [r for r in its if not r.failed]
        costs = [r.cost_usd for r in completed if r.cost_usd is not None]
        latencies = [r.latency_ms for r in completed if r.latency_ms is not None]
        row = rows.get(model)
        values: dict[str, float | None] = {
            "accuracy": row.mean_score if row is not None else None,
            "cost": math.fsum(costs) / len(costs) * 1000.0 if costs and len(costs) == len(completed) else None,
            "latency": None,
            "latency_p50": None,
            "error_rate": (len(its) - len(completed)) / len(its),
        }
        if latencies and len(latencies) == len(completed):
            p50, p95 = np.percentile(np.array(latencies), [50, 95])
            values["latency_p50"], values["latency"] = float(p50), float(p95)
        custom: dict[str, list[float]] = {}
        for r in completed:
            for name, value in r.metrics.items():
                custom.setdefault(name, []).append(value)
        values.update({name: math.fsum(v) / len(v) for name, v in custom.items()})
        if row is not None:
            for category, mean in row.categories.items():
                values.setdefault(category, mean)  # a custom metric of the same name keeps the name
        out[model] = ModelMetrics(
            model_id=model,
            calls=len(its),
            completed=len(completed),
            failed=len(its) - len(completed),
            unpriced=len(completed) - len(costs),
            untimed=len(completed) - len(latencies),
            values=values,
        )
    return out


def _check_calls(runs: Sequence[EvalRun]) -> None:
    """Records built in code skip the loader's checks, and analyse() reads only their scores:
    check the call fields the composite reads, cheaply, and name every problem if one is off."""
    for name in ("cost_usd", "latency_ms"):
        values = [v for v in map(attrgetter(name), runs) if v is not None]
        if not set(map(type, values)) <= {float, int}:
            validate_runs(runs)
        column = np.array(values, dtype=np.float64)
        if not (np.all(np.isfinite(column)) and np.all(column >= 0)):
            validate_runs(runs)
    metrics = [m for m in map(attrgetter("metrics"), runs) if m]
    if metrics and not all(
        isinstance(v, (float, int)) and not isinstance(v, bool) and math.isfinite(v)
        for m in metrics
        for v in m.values()
    ):
        validate_runs(runs)


def normalise(values: Mapping[str, float | None], how: Normalization) -> dict[str, float | None]:
    """Stage 2 for one metric across models: each known value on 0-1, 1 the best."""
    known = [v for v in values.values() if v is not None]
    out: dict[str, float | None] = {}
    for model, v in values.items():
        if v is None:
            out[model] = None
            continue
        if how.mode == "identity":
            score = v
        elif how.mode == "minmax":
            lo, hi = min(known), max(known)
            if hi - lo <= _SAME * max(1.0, abs(hi)):
                out[model] = 1.0  # every model alike: none is worse than another on this metric
                continue
            score = (v - lo) / (hi - lo)
        elif how.mode == "target":
            assert how.target is not None
            # Reaching the target scores 1; short of it, the share reached (either direction).
            score = v / how.target if how.direction == "higher" else (1.0 if v <= how.target else how.target / v)
            out[model] = min(1.0, max(0.0, score))
            continue
        else:  # budget: 1 at zero, 0 at or over budget, so being over budget is visible
            assert how.budget is not None
            out[model] = min(1.0, max(0.0, 1.0 - v / how.budget))
            continue
        out[model] = min(1.0, max(0.0, 1.0 - score if how.direction == "lower" else score))
    return out


def _metric_names(metrics: Mapping[str, ModelMetrics], board: Leaderboard) -> tuple[tuple[str, ...], tuple[str, ...]]:
    custom = sorted({n for m in metrics.values() for n in m.values} - set(BUILTIN_METRICS) - set(board.categories))
    return tuple(custom), tuple(board.categories)


def _check(config: Config, metrics: Mapping[str, ModelMetrics], board: Leaderboard) -> list[Problem]:
    """The configuration against the data: every metric it names must exist."""
    custom, categories = _metric_names(metrics, board)
    known = set(BUILTIN_METRICS) | set(custom) | set(categories)
    listing = (
        f"the metrics are {', '.join(BUILTIN_METRICS)}"
        + (f"; custom metrics {', '.join(shown(c, 40) for c in custom[:20])}" if custom else "")
        + (f"; categories {', '.join(shown(c, 40) for c in categories[:20])}" if categories else "")
    )
    problems = []
    for metric in config.weights:
        if metric not in known:
            problems.append(
                config.problem(f"metrics.weights.{metric}", f"no metric {shown(metric)} in the data: {listing}")
            )
    for metric in config.normalize:
        if metric not in known:
            problems.append(
                config.problem(f"metrics.normalize.{metric}", f"no metric {shown(metric)} in the data: {listing}")
            )
    if config.tie_breaker not in known:
        problems.append(config.problem("metrics.tie_breaker", f"no metric {shown(config.tie_breaker)}: {listing}"))
    for kind, metric, _ in config.constraints.bounds:
        if metric not in known:
            problems.append(
                config.problem(
                    f"constraints.{kind}_{metric}",
                    f"no metric or category {shown(metric)} in the data to bound: {listing}",
                )
            )
    return problems


def _identity_problems(config: Config, metric: str, values: Mapping[str, float | None]) -> list[Problem]:
    outside = [(m, v) for m, v in values.items() if v is not None and not 0.0 <= v <= 1.0]
    if not outside:
        return []
    model, value = outside[0]
    key = f"metrics.normalize.{metric}" if metric in config.normalize else f"metrics.weights.{metric}"
    return [
        config.problem(
            key,
            f"mode identity needs values on 0-1, but {shown(metric)} of {shown(model)} is {value:g}: "
            "use minmax, target or budget",
        )
    ]


def format_value(metric: str, value: float, extra: int = 0) -> str:
    """A raw metric value in its unit, for reasons and tables (``extra`` decimals more)."""
    if metric in ("accuracy", "error_rate"):
        return f"{value * 100:.{1 + extra}f}%"
    if metric == "cost":
        return f"${value:,.{2 + extra}f}"
    if metric in ("latency", "latency_p50"):
        return f"{value:,.{extra}f} ms"
    return f"{value:.{3 + extra}g}"


def _apart(metric: str, value: float, limit: float) -> tuple[str, str]:
    """The value and the limit it breaks, with decimals enough that they do not print alike."""
    for extra in range(8):
        shown = format_value(metric, value, extra), format_value(metric, limit, extra)
        if shown[0] != shown[1]:
            return shown
    return shown


_LABELS = {
    "accuracy": "accuracy",
    "cost": "cost per 1k calls",
    "latency": "latency p95",
    "latency_p50": "latency p50",
    "error_rate": "error rate",
}


def _label(metric: str) -> str:
    return _LABELS.get(metric, metric)


def _unknown_reason(metric: str, m: ModelMetrics) -> str:
    if metric == "cost":
        if m.completed == 0:
            return "cost per 1k calls unknown (no completed call)"
        return f"cost per 1k calls unknown ({m.unpriced} of {m.completed} completed calls have no cost_usd)"
    if metric in ("latency", "latency_p50"):
        if m.completed == 0:
            return f"{_label(metric)} unknown (no completed call)"
        return f"{_label(metric)} unknown ({m.untimed} of {m.completed} completed calls have no latency_ms)"
    if metric == "accuracy":
        return "accuracy unknown (no completed call)"
    return f"{metric} unknown (not reported for this model)"


def _bound(metric: str, kind: str, limit: float, m: ModelMetrics) -> str | None:
    value = m.values.get(metric)
    if value is None:
        return _unknown_reason(metric, m)
    if kind == "min" and value < limit:
        shown, required = _apart(metric, value, limit)
        return f"{_label(metric)} {shown} below the required {required}"
    if kind == "max" and value > limit:
        shown, allowed = _apart(metric, value, limit)
        return f"{_label(metric)} {shown} above the limit {allowed}"
    return None


def _reasons(m: ModelMetrics, config: Config, cards: Mapping[str, Card]) -> tuple[str, ...]:
    """Stage 4: every constraint ``m`` violates or that cannot be checked for it, in words."""
    c = config.constraints
    reasons: list[str | None] = []
    for metric, kind, limit in (
        ("accuracy", "min", c.min_accuracy),
        ("latency", "max", c.max_latency_p95_ms),
        ("cost", "max", c.max_cost_per_1k_calls_usd),
        ("error_rate", "max", c.max_error_rate),
    ):
        if limit is not None:
            reasons.append(_bound(metric, kind, limit, m))
    reasons.extend(_bound(metric, kind, limit, m) for kind, metric, limit in c.bounds)
    reasons.extend(_card_reasons(cards.get(m.model_id), config))
    return tuple(r for r in reasons if r is not None)


def _card_reasons(card: Card | None, config: Config) -> list[str]:
    c = config.constraints
    if c.min_context_tokens is None and not c.required_features and not c.privacy_required:
        return []
    if card is None:
        # Absence of evidence is not evidence of absence: a local model has no card by definition.
        return [] if c.allow_unknown_card else ["no capability card, and allow_unknown_card is false"]
    out = []
    if c.min_context_tokens is not None:
        if card.context_tokens is None:
            out.append("context window unknown (its card does not state context_tokens)")
        elif card.context_tokens < c.min_context_tokens:
            out.append(f"context window {card.context_tokens:,} tokens below the required {c.min_context_tokens:,}")
    missing = [f for f in c.required_features if f not in card.features]
    if missing:
        out.append(f"lacks the required feature{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    absent = [p for p in c.privacy_required if p not in card.privacy]
    if absent:
        out.append(f"lacks the required privacy guarantee{'s' if len(absent) > 1 else ''} {', '.join(absent)}")
    return out


def rank(runs: Sequence[EvalRun], board: Leaderboard, config: Config) -> CompositeBoard:
    """Stages 1-4 on ``runs`` (and ``board``, the leaderboard analysed from them).

    Raises :class:`~leaderboard.validation.InvalidEvalRuns` when the configuration names
    a metric the data does not have, each problem at the key's line.
    """
    metrics = aggregate_metrics(runs, board)
    problems = _check(config, metrics, board)
    if problems:
        raise InvalidEvalRuns(problems)
    custom, _ = _metric_names(metrics, board)
    raw_weights = dict(config.weights) or {"accuracy": 1.0}
    if (message := weights_problem(raw_weights)) is not None:  # a Config built in code skips the reader
        raise InvalidEvalRuns([config.problem("metrics.weights", message)])
    total = math.fsum(raw_weights.values())
    weights = {name: w / total for name, w in raw_weights.items()}
    wanted = dict.fromkeys([*weights, *config.normalize, config.tie_breaker])
    how = {name: config.normalize.get(name, default_normalization(name)) for name in wanted}
    normalised: dict[str, dict[str, float | None]] = {}
    for name, n in how.items():
        values = {model: m.values.get(name) for model, m in metrics.items()}
        if n.mode == "identity":
            problems.extend(_identity_problems(config, name, values))
        normalised[name] = normalise(values, n)
    if problems:
        raise InvalidEvalRuns(problems)
    unknown = tuple(
        Unknown(name, tuple(model for model in metrics if normalised[name][model] is None))
        for name in weights
        if weights[name] > 0 and any(normalised[name][model] is None for model in metrics)
    )
    # Ids are kept in NFC; a card keyed in another spelling (a Config built in code) is the same model.
    cards = {unicodedata.normalize("NFC", k): card for k, card in config.models.items()}
    entries = []
    for model, m in metrics.items():
        composite = math.fsum(w * (normalised[name][model] or 0.0) for name, w in weights.items())
        entries.append((model, composite, _reasons(m, config, cards)))
    breaker = normalised[config.tie_breaker]

    def order(entry: tuple[str, float, tuple[str, ...]]) -> tuple[float, float, str]:
        model, composite, _ = entry
        tie = breaker[model]
        return (-tie_key(composite), -tie_key(tie) if tie is not None else math.inf, model)

    ranked: list[Ranked] = []
    disqualified: list[Ranked] = []
    for model, composite, reasons in sorted(entries, key=order):
        shown_norm = {name: normalised[name][model] for name in how}
        if reasons:
            disqualified.append(Ranked(model, None, composite, shown_norm, metrics[model], reasons))
        else:
            ranked.append(Ranked(model, len(ranked) + 1, composite, shown_norm, metrics[model]))
    return CompositeBoard(
        ranked=tuple(ranked),
        disqualified=tuple(sorted(disqualified, key=lambda r: r.model_id)),
        weights=weights,
        normalization=how,
        tie_breaker=config.tie_breaker,
        custom_metrics=custom,
        unknown=unknown,
        too_close=_too_close(ranked, board, weights),
        config=config,
        unmatched_cards=tuple(sorted(k for k in config.models if unicodedata.normalize("NFC", k) not in metrics)),
    )


def _too_close(ranked: Sequence[Ranked], board: Leaderboard, weights: Mapping[str, float]) -> TooClose | None:
    """#1 and #2 when the suite cannot separate them on accuracy (the calibrated pair decision)."""
    if len(ranked) < 2 or not board.pairs_computed:
        return None
    first, second = ranked[0], ranked[1]
    position = {row.model_id: k for k, row in enumerate(board.rows)}
    if first.model_id not in position or second.model_id not in position:
        return None  # a model with no completed call has no accuracy to compare
    pair = board.pairs[board.pairs.position(position[first.model_id], position[second.model_id])]
    if pair.significant:
        return None
    differing = []
    for name, w in weights.items():
        if name == "accuracy" or w <= 0:
            continue
        a, b = first.normalised.get(name), second.normalised.get(name)
        if a is None or b is None or abs(a - b) > _SAME:
            described = _described(name)
            if described not in differing:
                differing.append(described)
    return TooClose(first.model_id, second.model_id, pair.tasks_needed, board.n_tasks, tuple(differing), pair.n_shared)
