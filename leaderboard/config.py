"""The leaderboard's configuration: a YAML file read into a frozen :class:`Config`.

Every mistake (an unknown key, a wrong type, a negative budget, a key written twice)
is a :class:`~leaderboard.validation.Problem` naming the key and the file's line, all
of them reported together; nothing is ranked on a half-read configuration. The node
tree is walked with :class:`~leaderboard.yaml_nodes.NodeReader`, which knows each value's
line. Anchors and aliases are refused: a configuration this small never needs them, and
an alias bomb would expand exponentially.

Checks that need the data (a weight on a metric no record has) are made by
:func:`leaderboard.composite.rank`, which names the key's line from :attr:`Config.origins`.
The schema is docs/leaderboard-config.schema.json.
"""

from __future__ import annotations

import math
import os
import sys
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import yaml

from .numbers import parse_decimal
from .options import STATISTICS
from .stats.clustering import ClusterBy
from .stats.family import Correction
from .stats.weights import TaskWeights
from .trials import FailedCalls
from .validation import InvalidEvalRuns, Problem, shown
from .yaml_nodes import PLAIN_TAGS, STR, NodeReader, line_of, shared_or_tagged

Mode = Literal["identity", "minmax", "target", "budget"]
Direction = Literal["higher", "lower"]
MODES: tuple[Mode, ...] = ("identity", "minmax", "target", "budget")
DIRECTIONS: tuple[Direction, ...] = ("higher", "lower")
# Far above any real configuration; it keeps a planted file from costing memory or time.
MAX_CONFIG_BYTES = 1024 * 1024

# The named constraints and what each bounds; min_<x>/max_<x> for any other metric or category.
NAMED_CONSTRAINTS = (
    "min_accuracy",
    "max_latency_p95_ms",
    "max_cost_per_1k_calls_usd",
    "max_error_rate",
    "min_context_tokens",
    "required_features",
    "privacy_required",
    "allow_unknown_card",
)


@dataclass(frozen=True)
class Normalization:
    """How one metric is brought to 0-1: ``target`` for mode target, ``budget`` for mode budget."""

    mode: Mode
    direction: Direction
    target: float | None = None
    budget: float | None = None


# Lower is better for these; higher for everything else (accuracy, custom metrics, categories).
LOWER_IS_BETTER = ("cost", "latency", "latency_p50", "error_rate")


def default_normalization(metric: str) -> Normalization:
    """How a metric is normalised when the configuration does not say.

    Accuracy, error rate and category means are already fractions (identity); cost and latency
    are relative to this run's models (minmax) and lower is better; a custom metric's scale is
    unknown, so it is minmax, higher is better.
    """
    direction: Direction = "lower" if metric in LOWER_IS_BETTER else "higher"
    mode: Mode = "identity" if metric in ("accuracy", "error_rate") else "minmax"
    return Normalization(mode, direction)


@dataclass(frozen=True)
class Card:
    """What a model can do, as its provider states it (``None``: not stated)."""

    context_tokens: int | None = None
    features: tuple[str, ...] = ()
    privacy: tuple[str, ...] = ()


@dataclass(frozen=True)
class Constraints:
    """Hard limits: a model violating any is disqualified. ``bounds``: (min|max, metric, value)."""

    min_accuracy: float | None = None
    max_latency_p95_ms: float | None = None
    max_cost_per_1k_calls_usd: float | None = None
    max_error_rate: float | None = None
    min_context_tokens: int | None = None
    required_features: tuple[str, ...] = ()
    privacy_required: tuple[str, ...] = ()
    allow_unknown_card: bool = True
    bounds: tuple[tuple[Literal["min", "max"], str, float], ...] = ()


@dataclass(frozen=True)
class StatisticsConfig:
    """The ``statistics`` block; None where the file does not say (the inputs' defaults apply)."""

    enabled: bool | None = None
    resamples: int | None = None
    confidence: float | None = None
    seed: int | None = None
    cluster_by: ClusterBy | None = None
    task_weights: TaskWeights | None = None
    correction: Correction | None = None
    failed_calls: FailedCalls | None = None


@dataclass(frozen=True)
class Config:
    """A whole configuration. ``weights`` as written (empty: accuracy alone); ``origins`` maps each
    dotted key (``metrics.weights.cost``) to the (file, line) it came from, for later messages."""

    normalize: Mapping[str, Normalization] = field(default_factory=dict)
    weights: Mapping[str, float] = field(default_factory=dict)
    tie_breaker: str = "accuracy"
    constraints: Constraints = field(default_factory=Constraints)
    models: Mapping[str, Card] = field(default_factory=dict)
    statistics: StatisticsConfig = field(default_factory=StatisticsConfig)
    file: str | None = None
    origins: Mapping[str, tuple[str | None, int | None]] = field(default_factory=dict)

    def problem(self, key: str, message: str) -> Problem:
        """A problem with the key ``key`` (dotted), at its line when known."""
        file, line = self.origins.get(key, (self.file, None))
        return Problem(message=message, file=file, line=line, field=key)

    def as_dict(self) -> dict[str, object]:
        """The configuration used, for the JSON report."""
        c = self.constraints
        constraints: dict[str, object] = {
            name: getattr(c, name) for name in NAMED_CONSTRAINTS if getattr(c, name) not in (None, ())
        }
        constraints["allow_unknown_card"] = c.allow_unknown_card
        constraints.update({f"{kind}_{metric}": value for kind, metric, value in c.bounds})
        for name in ("required_features", "privacy_required"):
            if name in constraints:
                constraints[name] = list(getattr(c, name))
        return {
            "file": self.file,
            "metrics": {
                "normalize": {
                    name: {k: v for k, v in vars(n).items() if v is not None} for name, n in self.normalize.items()
                },
                "weights": dict(self.weights),
                "tie_breaker": self.tie_breaker,
            },
            "constraints": constraints,
            "models": {
                model: {
                    "context_tokens": card.context_tokens,
                    "features": list(card.features),
                    "privacy": list(card.privacy),
                }
                for model, card in self.models.items()
            },
            "statistics": {k: v for k, v in vars(self.statistics).items() if v is not None},
        }


# --- the sections ----------------------------------------------------------------------------------


def _normalize(r: NodeReader, entries: Mapping[str, yaml.Node]) -> dict[str, Normalization]:
    out: dict[str, Normalization] = {}
    for metric, node in entries.items():
        key = f"metrics.normalize.{metric}"
        spec = r.mapping(key, node)
        if spec is None:
            continue
        r.unknown(key, spec, ("mode", "direction", "target", "budget"))
        default = default_normalization(metric)
        mode: Mode | None = default.mode
        if "mode" in spec:
            mode = r.scalar(f"{key}.mode", spec["mode"], (STR,), f"one of {', '.join(MODES)}")
            if mode is not None and mode not in MODES:
                r.bad(f"{key}.mode", spec["mode"], f"must be one of {', '.join(MODES)}, got {shown(mode)}")
                mode = None
        direction: Direction | None = default.direction
        if "direction" in spec:
            direction = r.scalar(f"{key}.direction", spec["direction"], (STR,), "higher or lower")
            if direction is not None and direction not in DIRECTIONS:
                r.bad(f"{key}.direction", spec["direction"], f"must be higher or lower, got {shown(direction)}")
                direction = None
        values: dict[str, float | None] = {}
        for name in ("target", "budget"):
            if name in spec:
                values[name] = r.number(f"{key}.{name}", spec[name], lambda v: v > 0, "a number > 0")
                if mode is not None and mode != name:
                    r.bad(f"{key}.{name}", spec[name], f"applies only to mode {name}, and the mode here is {mode}")
            elif mode == name:
                r.bad(key, node, f"mode {name} needs a {name}: the value that scores 1 (target) or 0 (budget)")
        if mode == "budget" and direction == "higher":
            r.bad(key, node, "mode budget is lower-is-better (1 at zero, 0 at or over budget): direction must be lower")
        if mode is not None and direction is not None:
            out[metric] = Normalization(mode, direction, values.get("target"), values.get("budget"))
    return out


def _weights(r: NodeReader, entries: Mapping[str, yaml.Node], node: yaml.Node) -> dict[str, float]:
    out: dict[str, float] = {}
    for metric, value_node in entries.items():
        weight = r.number(f"metrics.weights.{metric}", value_node, lambda v: v >= 0, "a number >= 0")
        if weight is not None:
            out[metric] = weight
    if entries and len(out) == len(entries):
        if sum(out.values()) <= 0:
            r.bad("metrics.weights", node, "the weights add up to 0: give at least one metric a positive weight")
        elif (message := weights_problem(out)) is not None:
            r.bad("metrics.weights", node, message)
    return out


def weights_problem(weights: Mapping[str, float]) -> str | None:
    """Why the weights cannot be normalised (their sum overflows a float), or None."""
    if math.isfinite(sum(weights.values())):
        return None
    return (
        f"the weights add up to more than a number can hold (about {sys.float_info.max:.3g}): only their ratios "
        "matter, so scale them down (e.g. 0.6 and 0.4)"
    )


def _constraints(r: NodeReader, entries: Mapping[str, yaml.Node]) -> Constraints:
    values: dict[str, Any] = {}
    bounds: list[tuple[Literal["min", "max"], str, float]] = []
    fraction = ("a fraction from 0 to 1", lambda v: 0.0 <= v <= 1.0)
    amount = ("a number >= 0", lambda v: v >= 0.0)
    numeric: dict[str, tuple[str, Callable[[float], bool]]] = {
        "min_accuracy": fraction,
        "max_error_rate": fraction,
        "max_latency_p95_ms": amount,
        "max_cost_per_1k_calls_usd": amount,
    }
    for name, node in entries.items():
        key = f"constraints.{name}"
        if name in numeric:
            what, valid = numeric[name]
            values[name] = r.number(key, node, valid, what)
        elif name == "min_context_tokens":
            values[name] = r.integer(key, node, lambda v: v >= 0, "an integer >= 0")
        elif name in ("required_features", "privacy_required"):
            values[name] = r.names(key, node)
        elif name == "allow_unknown_card":
            values[name] = r.boolean(key, node)
        elif name.startswith(("min_", "max_")) and len(name) > 4:
            # Any custom metric or category; whether it exists is checked against the data.
            value = r.number(key, node, lambda v: True, "a number")
            if value is not None:
                bounds.append(("min" if name.startswith("min_") else "max", name[4:], value))
        else:
            r.unknown("constraints", {name: node}, (*NAMED_CONSTRAINTS, "min_<metric>", "max_<metric>"))
    kept = {k: v for k, v in values.items() if v is not None}
    return Constraints(**kept, bounds=tuple(bounds))


def _models(r: NodeReader, entries: Mapping[str, yaml.Node]) -> dict[str, Card]:
    """The cards by model id in NFC, as the loader keeps ids: a key written in NFD is the same model."""
    out: dict[str, Card] = {}
    spelled: dict[str, str] = {}
    for written, node in entries.items():
        model = unicodedata.normalize("NFC", written)
        key = f"models.{written}"
        if model in spelled:
            first = r.origins[f"models.{spelled[model]}"][1]
            r.bad(key, node, f"names the model of line {first} again, spelled otherwise (Unicode NFD and NFC)")
            continue
        spelled[model] = written
        r.origins[f"models.{model}"] = r.origins[key]
        spec = r.mapping(key, node)
        if spec is None:
            continue
        r.unknown(key, spec, ("context_tokens", "features", "privacy"))
        context = None
        if "context_tokens" in spec:
            context = r.integer(f"{key}.context_tokens", spec["context_tokens"], lambda v: v >= 0, "an integer >= 0")
        features = r.names(f"{key}.features", spec["features"]) if "features" in spec else ()
        privacy = r.names(f"{key}.privacy", spec["privacy"]) if "privacy" in spec else ()
        out[model] = Card(context, features or (), privacy or ())
    return out


def _statistics(r: NodeReader, entries: Mapping[str, yaml.Node]) -> StatisticsConfig:
    """The ``statistics`` block: each key read as the options table declares it."""
    r.unknown("statistics", entries, tuple(STATISTICS))
    values: dict[str, Any] = {}
    for key, node in entries.items():
        if (option := STATISTICS.get(key)) is None:
            continue
        dotted = f"statistics.{key}"
        if option.kind == "boolean":
            values[key] = r.boolean(dotted, node)
        elif option.kind == "integer":
            values[key] = r.integer(dotted, node, option.valid, option.what)
        elif option.kind == "decimal":
            values[key] = r.number(dotted, node, option.valid, option.what)
        else:
            value = r.name(dotted, node, option.what)
            if value is not None and value not in option.choices:
                r.bad(dotted, node, f"must be {option.what}, got {shown(value, 40)}")
                value = None
            values[key] = value
    return StatisticsConfig(**{k: v for k, v in values.items() if v is not None})


def parse_config(text: str, file: str) -> Config:
    """The configuration ``text`` (named ``file`` in messages); raises InvalidEvalRuns with every problem."""
    loader = yaml.SafeLoader(text)
    try:
        try:
            root = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = int(mark.line) + 1 if mark is not None else None
            problem = Problem(message=f"not valid YAML: {exc.problem or exc}", file=file, line=line)
            raise InvalidEvalRuns([problem]) from None
        except yaml.YAMLError as exc:
            raise InvalidEvalRuns([Problem(message=f"not valid YAML: {exc}", file=file)]) from None
        except RecursionError:
            message = "not a configuration: nested hundreds of levels deep"
            raise InvalidEvalRuns([Problem(message=message, file=file)]) from None
        if root is None:
            return Config(file=file)  # an empty file: every default
        shared = shared_or_tagged(root)
        if shared is not None:
            raise InvalidEvalRuns(
                [
                    Problem(
                        message=(
                            f"YAML tag {shared.tag!r} is not supported: a configuration is plain data"
                            if shared.tag not in PLAIN_TAGS
                            else "anchors and aliases (&, *) are not supported here: write each value out"
                        ),
                        file=file,
                        line=line_of(shared),
                    )
                ]
            )
        return _read(NodeReader(file, loader), root, file)
    finally:
        loader.dispose()


def _read(r: NodeReader, root: yaml.Node, file: str) -> Config:
    top = r.mapping("", root)
    if top is None:
        raise InvalidEvalRuns(r.problems)
    r.unknown("", top, ("metrics", "constraints", "models", "statistics"))
    normalize: dict[str, Normalization] = {}
    weights: dict[str, float] = {}
    tie_breaker = "accuracy"
    if "metrics" in top and (metrics := r.mapping("metrics", top["metrics"])) is not None:
        r.unknown("metrics", metrics, ("normalize", "weights", "tie_breaker"))
        if "normalize" in metrics and (entries := r.mapping("metrics.normalize", metrics["normalize"])) is not None:
            normalize = _normalize(r, entries)
        if "weights" in metrics and (entries := r.mapping("metrics.weights", metrics["weights"])) is not None:
            weights = _weights(r, entries, metrics["weights"])
        if "tie_breaker" in metrics:
            tie_breaker = r.name("metrics.tie_breaker", metrics["tie_breaker"], "a metric name") or tie_breaker
    constraints = Constraints()
    if "constraints" in top and (entries := r.mapping("constraints", top["constraints"])) is not None:
        constraints = _constraints(r, entries)
    models: dict[str, Card] = {}
    if "models" in top and (entries := r.mapping("models", top["models"])) is not None:
        models = _models(r, entries)
    statistics = StatisticsConfig()
    if "statistics" in top and (entries := r.mapping("statistics", top["statistics"])) is not None:
        statistics = _statistics(r, entries)
    if r.problems:
        raise InvalidEvalRuns(r.problems)
    return Config(normalize, weights, tie_breaker, constraints, models, statistics, file, r.origins)


def read_config(path: str | os.PathLike[str], *, name: str | None = None) -> Config:
    """Read the configuration file at ``path`` (named ``name`` in messages)."""
    shown_name = name if name is not None else Path(path).as_posix()
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise InvalidEvalRuns([Problem(message=f"cannot read the configuration: {exc.strerror or exc}",
                                       file=shown_name)]) from None  # fmt: skip
    if len(data) > MAX_CONFIG_BYTES:
        raise InvalidEvalRuns(
            [Problem(message=f"the configuration is over {MAX_CONFIG_BYTES:,} bytes: refused", file=shown_name)]
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InvalidEvalRuns([Problem(message="not UTF-8 text", file=shown_name, line=line)]) from None
    return parse_config(text, shown_name)


def parse_weights(text: str) -> dict[str, float]:
    """``accuracy=0.6,cost=0.4`` (the CLI's ``--weights``); raises ValueError saying what is wrong."""
    out: dict[str, float] = {}
    for item in (part.strip() for part in text.split(",")):
        metric, sep, value = item.partition("=")
        metric = metric.strip()
        number = parse_decimal(value.strip()) if sep else None
        if not metric or number is None or not math.isfinite(number) or number < 0:
            raise ValueError(f"expected metric=weight pairs such as accuracy=0.6,cost=0.4 (weights >= 0), got {item!r}")
        if metric in out:
            raise ValueError(f"{metric!r} is weighted twice")
        out[metric] = number
    if sum(out.values()) <= 0:
        raise ValueError("the weights add up to 0: give at least one metric a positive weight")
    if (message := weights_problem(out)) is not None:
        raise ValueError(message)
    return out


def with_weights(config: Config, weights: Mapping[str, float], origin: str = "--weights") -> Config:
    """``config`` with its weights replaced (a what-if); problems with them name ``origin``."""
    origins = {k: v for k, v in config.origins.items() if not k.startswith("metrics.weights.")}
    origins.update({f"metrics.weights.{m}": (origin, None) for m in weights})
    return replace(config, weights=dict(weights), origins=origins)
