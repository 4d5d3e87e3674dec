"""Every Eval Ever, the EvalEval Coalition's interchange format: ``<id>_samples.jsonl`` beside ``<id>.json``.

A samples line (``instance_level_eval.schema.json``, schema 0.2.x and 0.3.x) says ``model_id``,
``evaluation_name`` (the benchmark), ``sample_id`` (the task), ``evaluation.score`` and, from 0.3,
``evaluation_result_id``: which of the aggregate's results it scores. The aggregate (``eval.schema.json``)
lists ``evaluation_results[]``, each with a ``metric_config`` saying the score's direction
(``lower_is_better``) and range (``min_score``, ``max_score``). The task is ``<evaluation_name>/<sample_id>``,
so that samples of two benchmarks with the same id stay apart, as the other readers prefix theirs.

A score on 0-1 is taken as it is. A score of a metric whose ``metric_config`` gives a finite range is
mapped onto 0-1 (and turned round when lower is better); without one, a score outside 0-1, or a
lower-is-better metric, is refused at its line, as the other readers refuse them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..records import EvalRun
from ._common import EEE_AGGREGATE, FileRead, ReadContext, Refused, describe, non_empty, read_whole
from ._json import json_lines

FORMAT = "every-eval-ever"
SAMPLES_SUFFIX = "_samples.jsonl"
DEFAULT_METRIC = "score"  # the samples' own name for it, when no aggregate names the metric
# The schema versions read here: 0.2.x (the converters' first releases) and 0.3.x (evaluation_result_id).
SCHEMA_VERSION = re.compile(r"0\.[23](?:\.\d+)?")
# What tells a samples line and an aggregate apart from other JSON (detect.py reads these).
SAMPLE_KEYS = frozenset({"sample_id", "evaluation_name", "evaluation"})
AGGREGATE_KEYS = frozenset({"evaluation_results", "model_info"})


@dataclass(frozen=True)
class Scale:
    """How one metric's scores map onto 0-1, as its ``metric_config`` says."""

    low: float | None = None  # None: not said, or unbounded
    high: float | None = None
    lower_is_better: bool = False
    unknown_level: bool = False  # score_type "levels" with has_unknown_level: -1 means Unknown

    def to_unit(self, value: float) -> float | None:
        """``value`` on 0-1, higher better; None for an Unknown level; ValueError saying why not."""
        if self.unknown_level and value == -1:
            return None
        if self.low is not None and self.high is not None:
            if not self.low <= value <= self.high:
                raise ValueError(f"outside its metric's range [{self.low:g}, {self.high:g}] (metric_config)")
            unit = (value - self.low) / (self.high - self.low)
            return 1.0 - unit if self.lower_is_better else unit
        if self.lower_is_better:
            raise ValueError(
                "of a lower-is-better metric with no finite min_score/max_score in its metric_config: an error "
                "or a distance, not a score that maps onto 0-1"
            )
        if not 0.0 <= value <= 1.0:
            raise ValueError("outside [0, 1], and no metric_config gives a finite min_score/max_score to map it")
        return value


@dataclass(frozen=True)
class Result:
    """One of the aggregate's ``evaluation_results``: a benchmark scored with one metric."""

    name: str  # evaluation_name
    result_id: str | None  # evaluation_result_id (schema 0.3), the samples' key to it
    metric: str
    scale: Scale


@dataclass(frozen=True)
class Aggregate:
    """What an aggregate file says about its samples."""

    file: str
    evaluation_id: str | None
    model: str | None
    results: tuple[Result, ...]
    samples_name: str | None  # the file name detailed_evaluation_results.file_path ends with


def _bound(value: object, what: str) -> float | None:
    """A finite bound, None when not said or unbounded ("Infinity", "-Infinity", null)."""
    if value is None or value in ("Infinity", "-Infinity"):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Refused(f"metric_config.{what} is {describe(value)}: a number, 'Infinity', '-Infinity' or null")
    number = float(value)
    return number if math.isfinite(number) else None


def _scale(config: Mapping[str, Any], name: str) -> Scale:
    low, high = _bound(config.get("min_score"), "min_score"), _bound(config.get("max_score"), "max_score")
    if low is not None and high is not None and not low < high:
        raise Refused(f"evaluation {name!r}: metric_config's min_score {low:g} is not below its max_score {high:g}")
    if low is None or high is None:
        low = high = None  # a range open at one end maps nothing onto 0-1
    better = config.get("lower_is_better")
    unknown = config.get("score_type") == "levels" and config.get("has_unknown_level") is True
    return Scale(low, high, better is True, unknown)


def aggregate_of(document: object, file: str) -> Aggregate:
    """The results an aggregate document lists; Refused when it is not one."""
    if not isinstance(document, dict) or not isinstance(document.get("evaluation_results"), list):
        raise Refused(f"{file} is not an Every Eval Ever aggregate (a JSON object with evaluation_results)")
    info = document.get("model_info")
    model = non_empty(info.get("id")) if isinstance(info, dict) else None
    results = []
    for entry in document["evaluation_results"]:
        name = non_empty(entry.get("evaluation_name")) if isinstance(entry, dict) else None
        if name is None:
            continue  # the schema requires it; such an entry cannot be matched by any sample
        config = entry.get("metric_config")
        config = config if isinstance(config, dict) else {}
        result_id = non_empty(entry.get("evaluation_result_id"))
        metric = non_empty(config.get("metric_id")) or non_empty(config.get("metric_name")) or DEFAULT_METRIC
        results.append(Result(name, result_id, metric, _scale(config, name)))
    detailed = document.get("detailed_evaluation_results")
    path = non_empty(detailed.get("file_path")) if isinstance(detailed, dict) else None
    evaluation = non_empty(document.get("evaluation_id"))
    return Aggregate(file, evaluation, model, tuple(results), path.rsplit("/", 1)[-1] if path else None)


def aggregate_path(samples: Path) -> Path:
    """``<id>.json`` for ``<id>_samples.jsonl``: the layout the format's datastore and converters write."""
    return samples.with_name(samples.name.removesuffix(SAMPLES_SUFFIX) + ".json")


def _load_aggregate(samples: Path) -> Aggregate | None:
    if not samples.name.endswith(SAMPLES_SUFFIX):
        return None
    path = aggregate_path(samples)
    if not path.is_file():
        return None
    try:
        document = json.loads(read_whole(path))
    except (OSError, ValueError) as exc:  # UnicodeDecodeError included
        raise Refused(f"cannot read the aggregate {path.name} beside it: {exc}") from None
    return aggregate_of(document, path.name)


class _Choice:
    """The result read per benchmark: the ``metric`` input's, else the aggregate's first, else the first met."""

    def __init__(self, aggregate: Aggregate | None, wanted: str | None) -> None:
        self.aggregate = aggregate
        self.wanted = wanted
        self.chosen: dict[str, tuple[str | None, str, Scale]] = {}  # name -> (result id, metric, scale)

    def of(self, name: str, result_id: str | None, number: int) -> tuple[str | None, str, Scale]:
        held = self.chosen.get(name)
        if held is None:
            held = self.chosen[name] = self._choose(name, result_id, number)
        return held

    def _choose(self, name: str, result_id: str | None, number: int) -> tuple[str | None, str, Scale]:
        results = [r for r in self.aggregate.results if r.name == name] if self.aggregate else []
        if not results:
            if self.wanted and self.wanted != DEFAULT_METRIC and self.wanted != result_id:
                where = f"{self.aggregate.file} lists no result for it" if self.aggregate else "no aggregate beside it"
                raise Refused(
                    f"evaluation {name!r} has no metric {self.wanted!r} ({where}, so its samples' score is "
                    f"the only metric); set the input 'metric' to {DEFAULT_METRIC!r} or leave it empty",
                    number,
                    "metric",
                )
            return result_id, DEFAULT_METRIC, Scale()
        if self.wanted:
            named = [r for r in results if self.wanted in (r.metric, r.result_id)]
            if not named:
                has = ", ".join(r.metric for r in results)
                raise Refused(
                    f"evaluation {name!r} has no metric {self.wanted!r} (it has: {has}); set the input 'metric'",
                    number,
                    "metric",
                )
            results = named
        first = results[0]
        return first.result_id, first.metric, first.scale


def read(file: FileRead, context: ReadContext) -> list[EvalRun]:
    """The records of a samples file; an aggregate gives none (it is read with the samples beside it)."""
    if file.format == EEE_AGGREGATE:
        check_aggregate(file)
        return []
    read_samples(file)
    return list(file.records())


def read_samples(read: FileRead) -> None:
    """The records of a samples file, its aggregate beside it (when there is one) naming metrics and scales."""
    aggregate = _load_aggregate(read.path)
    choice = _Choice(aggregate, read.options.metric)
    for number, text in json_lines(read.path):
        try:
            line = json.loads(text)
        except ValueError as exc:
            read.problem(f"invalid JSON: {exc}", number)
            continue
        _read_line(read, line, number, aggregate, choice)


def _read_line(read: FileRead, line: object, number: int, aggregate: Aggregate | None, choice: _Choice) -> None:
    if not isinstance(line, dict) or not line.keys() >= SAMPLE_KEYS:
        read.problem("not an Every Eval Ever sample line (sample_id, evaluation_name, evaluation)", number)
        return
    version = line.get("schema_version")
    if version is not None and not (isinstance(version, str) and SCHEMA_VERSION.fullmatch(version)):
        raise Refused(f"schema_version {describe(version)} is not one read here (0.2.x, 0.3.x)", number)
    if aggregate is not None and aggregate.evaluation_id is not None:
        evaluation = non_empty(line.get("evaluation_id"))
        if evaluation is not None and evaluation != aggregate.evaluation_id:
            read.problem(
                f"{describe(evaluation)} is not that of {aggregate.file} beside it "
                f"({describe(aggregate.evaluation_id)}): keep each samples file beside its own aggregate",
                number,
                "evaluation_id",
            )
            return
    model = non_empty(line.get("model_id")) or (aggregate.model if aggregate else None)
    name, sample = non_empty(line["evaluation_name"]), non_empty(line["sample_id"])
    named = (("model_id", model), ("evaluation_name", name), ("sample_id", sample))
    missing = next((field for field, value in named if not value), None)
    if missing is not None:
        read.problem("must be a non-empty string", number, missing)
        return
    assert model is not None and name is not None and sample is not None
    result_id = non_empty(line.get("evaluation_result_id"))
    chosen_id, metric, scale = choice.of(name, result_id, number)
    if chosen_id is not None and result_id is not None and result_id != chosen_id:
        return  # a sample's score on another metric of the same benchmark
    evaluation = line["evaluation"]
    value = evaluation.get("score") if isinstance(evaluation, dict) else None
    if value is None or (isinstance(value, float) and math.isnan(value)):
        read.unscored += 1
        return
    if isinstance(value, bool):
        value = float(value)
    if not isinstance(value, (int, float)):
        read.problem(f"must be a number, got {describe(value)}", number, "evaluation.score")
        return
    try:
        score = scale.to_unit(float(value))
    except ValueError as exc:
        read.problem(f"{describe(value)} is {exc}", number, "evaluation.score")
        return
    if score is None:
        read.unscored += 1
        return
    read.add(model, f"{name}/{sample}", metric, score, name, read.source(number))


def check_aggregate(read: FileRead) -> None:
    """An aggregate is read with its samples file; alone it has only aggregate scores to offer."""
    read.companion = True
    aggregate = aggregate_of(_parse(read.path), read.name)
    beside = [read.path.with_name(read.path.stem + SAMPLES_SUFFIX)]
    if aggregate.samples_name:
        beside.append(read.path.with_name(aggregate.samples_name))
    if not any(p.is_file() for p in beside):
        raise Refused(
            "an Every Eval Ever aggregate holds only aggregate scores and its samples file is not beside it: "
            f"keep {beside[-1].name} (detailed_evaluation_results) in the same folder"
        )


def _parse(path: Path) -> object:
    try:
        return json.loads(read_whole(path))
    except UnicodeDecodeError:
        raise  # the session says the file is not UTF-8
    except ValueError as exc:
        raise Refused(f"invalid JSON: {exc}", getattr(exc, "lineno", None)) from None
