"""lm-evaluation-harness: ``samples_<task>_<date>.jsonl`` beside ``results_<date>.json``.

One line per (doc_id, filter). The model is named in the results file (``model_name``, else
``config.model_args``), as are the task's group, metrics, filters and which metrics are
lower-is-better. The older layout names the samples file ``.json`` though it holds JSON lines,
and its lines have no ``filter`` or ``metrics`` keys.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import limits
from ..records import EvalRun, Source
from ._common import LM_EVAL_RESULTS, FileRead, ReadContext, Refused, describe, read_whole, too_long

_DATE = r"\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?"
SAMPLES_NAME = re.compile(rf"samples_(?P<task>.+)_(?P<date>{_DATE})\.jsonl?")
RESULTS_NAME = re.compile(rf"results_(?P<date>{_DATE})\.json")
# The default metric of a task: the first of these it has, else its first metric.
DEFAULT_METRICS = ("acc", "exact_match")
_NO_FILTER = "none"  # what lm-eval calls the unfiltered responses, and what the older layout implies


@dataclass(frozen=True)
class Results:
    """What a results file says about its run."""

    model: str | None
    groups: dict[str, str]  # task -> the group it belongs to
    configs: dict[str, Any]
    higher_is_better: dict[str, Any]


def results_of(document: object) -> Results:
    if not isinstance(document, dict):
        raise Refused("an lm-eval results file is a JSON object")
    groups: dict[str, str] = {}
    subtasks = document.get("group_subtasks")
    if isinstance(subtasks, dict):
        for group, tasks in subtasks.items():
            for task in tasks if isinstance(tasks, list) else []:
                if isinstance(task, str) and task != group:
                    groups.setdefault(task, group)
    configs = document.get("configs")
    better = document.get("higher_is_better")
    return Results(
        _model(document),
        groups,
        configs if isinstance(configs, dict) else {},
        better if isinstance(better, dict) else {},
    )


def _model(document: dict[str, Any]) -> str | None:
    name = document.get("model_name")
    if isinstance(name, str) and name.strip():
        return name
    config = document.get("config")
    args = config.get("model_args") if isinstance(config, dict) else None
    if isinstance(args, str):  # "pretrained=org/model,dtype=bfloat16"
        pairs = dict(part.split("=", 1) for part in args.split(",") if "=" in part)
        args = pairs or args
    if isinstance(args, dict):
        for key in ("pretrained", "model", "model_name", "path"):
            value = args.get(key)
            if isinstance(value, str) and value.strip():
                return value
        return None
    return args.strip() if isinstance(args, str) and args.strip() else None


def load_results(path: Path) -> Results:
    try:
        document = json.loads(read_whole(path))
    except (OSError, ValueError) as exc:  # UnicodeDecodeError included
        raise Refused(f"cannot read the results file {path.name} beside it: {exc}") from None
    return results_of(document)


def task_metrics(results: Results, task: str) -> list[str]:
    config = results.configs.get(task)
    metrics = config.get("metric_list") if isinstance(config, dict) else None
    names = [m.get("metric") for m in metrics or [] if isinstance(m, dict)]
    return [n for n in names if isinstance(n, str)]


def _default_filter(results: Results, task: str) -> str | None:
    config = results.configs.get(task)
    filters = config.get("filter_list") if isinstance(config, dict) else None
    if isinstance(filters, list) and filters and isinstance(filters[0], dict):
        name = filters[0].get("name")
        if isinstance(name, str):
            return name
    return None


def choose_metric(results: Results, task: str, wanted: str | None, first_line: dict[str, Any], number: int) -> str:
    """The ``metric`` input, else the task's default; refused when the task does not have it."""
    listed = task_metrics(results, task) or [m for m in first_line.get("metrics") or [] if isinstance(m, str)]
    if wanted:
        if wanted not in first_line and wanted not in listed:
            has = ", ".join(listed) or "none listed"
            raise Refused(f"task {task!r} has no metric {wanted!r} (it has: {has}); set the input 'metric'", number)
        return wanted
    for name in DEFAULT_METRICS:
        if name in listed:
            return name
    if listed:
        return listed[0]
    raise Refused(f"cannot tell the metrics of task {task!r}: set the input 'metric'")


def _refuse_lower_is_better(results: Results, task: str, metric: str, number: int) -> None:
    for scope in (task, results.groups.get(task)):
        flags = results.higher_is_better.get(scope) if scope else None
        if isinstance(flags, dict) and flags.get(metric) is False:
            raise Refused(
                f"metric {metric!r} of task {task!r} is lower-is-better (higher_is_better: false in the results "
                "file): an error or distance, not a per-instance score on 0-1; choose another with the input 'metric'",
                number,
                "metric",
            )


def _companion(path: Path) -> tuple[str, Path]:
    match = SAMPLES_NAME.fullmatch(path.name)
    if match is None:
        raise Refused(
            "an lm-eval samples file is named samples_<task>_<date>.jsonl, which says its task and which "
            "results_<date>.json beside it names the model; this name does not"
        )
    return match["task"], path.with_name(f"results_{match['date']}.json")


def read_samples(read: FileRead, cache: dict[Path, Results]) -> Iterator[EvalRun]:
    """The records of a samples file, streamed: one line in memory at a time."""
    task, results_path = _companion(read.path)
    if results_path not in cache:
        if not results_path.is_file():
            raise Refused(
                f"no {results_path.name} beside this samples file: lm-eval names the model there; keep the "
                "two files together"
            )
        cache[results_path] = load_results(results_path)
    results = cache[results_path]
    if results.model is None:
        raise Refused(f"{results_path.name} names no model (neither model_name nor config.model_args)")
    model = sys.intern(results.model)
    category = sys.intern(results.groups.get(task, task))
    if len(model) > limits.MAX_ID_LENGTH or len(category) > limits.MAX_ID_LENGTH:
        raise Refused(too_long("model" if len(model) > limits.MAX_ID_LENGTH else "category"))
    chosen = read.options.filter or _default_filter(results, task)  # None: the file's first filter
    prefix, name = task + "/", read.name
    metric = ""
    other_filters: set[str] = set()
    matched = 0
    # raw_decode, not json.loads: the same C scanner without two regex whitespace scans a line,
    # which on a million lines is a fifth of the time. Anything unusual takes json.loads's path.
    decode = json.JSONDecoder().raw_decode
    with read.path.open(encoding="utf-8-sig", newline="") as handle:
        for number, text in enumerate(handle, start=1):
            try:
                line, end = decode(text)
                if len(text) - end > 2 and text[end:].strip():
                    raise ValueError("extra data")
            except ValueError:
                if not text.strip():
                    continue
                try:
                    line = json.loads(text)
                except ValueError as exc:
                    read.problem(f"invalid JSON: {exc}", number)
                    continue
            if type(line) is not dict or "doc_id" not in line:
                read.problem("not an lm-eval sample line (no doc_id)", number)
                continue
            if not metric:
                metric = choose_metric(results, task, read.options.metric, line, number)
                if len(metric) > limits.MAX_ID_LENGTH:
                    raise Refused(too_long("metric"), number, "metric")
                _refuse_lower_is_better(results, task, metric, number)
            line_filter = line.get("filter", _NO_FILTER)
            if chosen is None:
                chosen = line_filter
            if line_filter != chosen:
                other_filters.add(str(line_filter))
                continue
            matched += 1
            value = line.get(metric)
            if type(value) is not float:  # the hot path: lm-eval writes 0.0/1.0 floats
                value = _judge(value, metric, task, number)
                if value is None:
                    read.unscored += 1
                    continue
            elif not 0.0 <= value <= 1.0:
                if math.isnan(value):
                    read.unscored += 1
                    continue
                raise _off_scale(metric, task, value, number)
            task_id = prefix + str(line["doc_id"])
            if len(task_id) > limits.MAX_ID_LENGTH:
                read.problem(too_long("task"), number, "task_id")
                continue
            yield EvalRun(model, task_id, metric, value, category, source=Source(name, number))
    if metric and not matched:
        raise Refused(
            f"no line has filter {chosen!r} (filters here: {', '.join(sorted(other_filters)) or 'none'}); "
            "set the input 'filter'",
            field="filter",
        )
    if metric:
        read.metrics.add(metric)


def _judge(value: object, metric: str, task: str, number: int) -> float | None:
    if value is None:  # a line without the metric: nothing was scored for this doc
        return None
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int):
        value = float(value)
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if 0.0 <= value <= 1.0:
            return value
        raise _off_scale(metric, task, value, number)
    raise Refused(
        f"metric {metric!r} of task {task!r} holds {describe(value)} per line: the inputs of a corpus-level "
        "metric (lm-eval computes it over the whole task), not a per-instance score; choose a per-instance "
        "metric with the input 'metric'",
        number,
        "metric",
    )


def _off_scale(metric: str, task: str, value: float, number: int) -> Refused:
    return Refused(
        f"metric {metric!r} of task {task!r} is not a per-instance score on 0-1: {value!r} on this line; "
        "choose a 0-1 metric with the input 'metric'",
        number,
        "metric",
    )


def check_results(read: FileRead) -> None:
    """A results file is read with its samples; alone it has only aggregates to offer."""
    match = RESULTS_NAME.fullmatch(read.path.name)
    read.companion = True
    if match is None:
        return
    date = match["date"]
    if not any(read.path.parent.glob(f"samples_*_{date}.json*")):
        raise Refused(
            "lm-eval results hold only aggregate scores and no samples file of this run is beside it: "
            "run lm_eval with --log_samples and keep the samples_<task>_<date>.jsonl files with it"
        )


def read(file: FileRead, context: ReadContext) -> list[EvalRun]:
    """A samples file's records; a results file gives none (it is checked, and names the model for its samples)."""
    if file.format == LM_EVAL_RESULTS or RESULTS_NAME.fullmatch(file.path.name):
        file.format = LM_EVAL_RESULTS
        check_results(file)
        return []
    return list(read_samples(file, context.lm_eval_results))
