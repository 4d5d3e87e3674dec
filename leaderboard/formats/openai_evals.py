"""OpenAI evals: an ``oaieval`` record, JSON lines: a ``spec`` line, event lines
``{run_id, event_id, sample_id, type, data}`` and a ``final_report`` line (not necessarily last).

The model is the spec's completion function; the task is the event's ``sample_id``; the score is a
``match`` event's ``data.correct`` (1/0) by default, or with the input ``metric`` a number on 0-1 in
the ``data`` of ``metrics`` events. Several scoring events for one sample are trials.
"""

from __future__ import annotations

import json

from ..records import EvalRun
from ._common import FileRead, ReadContext, Refused, describe, non_empty, unit_score
from ._json import json_lines

DEFAULT_METRIC = "correct"


def read_record(read: FileRead) -> None:
    metric = read.options.metric or DEFAULT_METRIC
    event_type = "match" if metric == DEFAULT_METRIC else "metrics"
    model: str | None = None
    category = "general"
    events: list[tuple[int, str, object]] = []  # (line, sample id, value): the spec line need not come first
    report = False
    for number, text in json_lines(read.path):
        try:
            line = json.loads(text)
        except ValueError as exc:
            read.problem(f"invalid JSON: {exc}", number)
            continue
        if not isinstance(line, dict):
            read.problem("not an oaieval record line (a JSON object)", number)
            continue
        if "spec" in line:
            spec = line["spec"]
            fns = spec.get("completion_fns") if isinstance(spec, dict) else None
            names = [f for f in fns if non_empty(f)] if isinstance(fns, list) else []
            if not names:
                raise Refused("the spec names no completion function", number)
            model = ",".join(names)
            category = non_empty(spec.get("base_eval")) or non_empty(spec.get("eval_name")) or category
        elif "final_report" in line:
            report = True
        elif line.get("type") == event_type:
            sample = non_empty(line.get("sample_id"))
            data = line.get("data")
            if sample is None or not isinstance(data, dict):
                read.problem("an event with no sample_id or data", number)
                continue
            events.append((number, sample, data.get(metric)))
    if model is None:
        raise Refused("no spec line: the record does not say which completion function (model) ran")
    if not events:
        what = "only a spec and a final_report" if report else "no per-sample events"
        raise Refused(
            f"this oaieval record has {what}: no '{event_type}' event to score per sample (a record trimmed of "
            "its events, or an eval that logs none) - a leaderboard needs the full record",
        )
    for number, sample, value in events:
        if value is None:
            read.unscored += 1
            continue
        try:
            score = unit_score(value)
        except ValueError as exc:
            raise Refused(
                f"{metric!r} is {describe(value)} here ({exc}): not a per-sample score on 0-1", number, "metric"
            ) from None
        if score is None:
            read.unscored += 1
            continue
        read.add(model, sample, metric, score, category, read.source(number))


def read(file: FileRead, context: ReadContext) -> list[EvalRun]:
    """The records of an OpenAI evals log (JSON lines of ``spec``, ``sample`` and ``match`` events)."""
    read_record(file)
    return list(file.records())
