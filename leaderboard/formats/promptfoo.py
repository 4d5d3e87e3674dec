"""promptfoo: ``promptfoo eval -o out.json``, ``{evalId, results: {version, results: [...], prompts}, ...}``.

Each result is one (test, prompt column) cell. ``promptIdx`` numbers the (prompt, provider) columns
of ``results.prompts``, so it is not a task: the task is the test (``testIdx``) and the model is the
provider (``provider.label`` when non-empty, else ``provider.id``), with the prompt's label added only
when that provider ran several prompts. Repeats of a cell (``--repeat``) are trials.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from ..records import EvalRun
from ._common import FileRead, ReadContext, Refused, describe, non_empty, read_whole, unit_score
from ._json import BrokenJson, located_array

DEFAULT_METRIC = "score"
_ERROR = 2  # ResultFailureReason.ERROR: the provider failed, nothing was graded


def _provider(value: object) -> str | None:
    if isinstance(value, dict):
        return non_empty(value.get("label")) or non_empty(value.get("id"))
    return non_empty(value)


def _columns(prompts: object) -> tuple[Counter[str | None], dict[int, str]]:
    """How many prompt columns each provider has, and each column's prompt label."""
    if not isinstance(prompts, list):
        return Counter(), {}
    providers = [_provider(p.get("provider")) if isinstance(p, dict) else None for p in prompts]
    labels = {
        index: non_empty(prompt.get("label")) or non_empty(prompt.get("raw")) or f"prompt {index}"
        for index, prompt in enumerate(prompts)
        if isinstance(prompt, dict)
    }
    return Counter(providers), labels


def _score(result: dict[str, Any], metric: str) -> object:
    if metric == "score":
        return result.get("score")
    if metric == "success":
        return result.get("success")
    named = result.get("namedScores")
    return named.get(metric) if isinstance(named, dict) else None


def read_export(read: FileRead, text: str) -> None:
    try:
        document = json.loads(text)
        located = located_array(text, ("results", "results"))
    except BrokenJson as exc:
        raise Refused(str(exc), exc.line) from None
    except ValueError as exc:
        raise Refused(f"invalid JSON: {exc}", getattr(exc, "lineno", None)) from None
    table = document.get("results") if isinstance(document, dict) else None
    if not isinstance(table, dict) or not isinstance(table.get("results"), list):
        raise Refused("not a promptfoo export: no results.results array")
    columns, labels = _columns(table.get("prompts"))
    metric = read.options.metric or DEFAULT_METRIC
    for line, result in located:
        test = result.get("testIdx") if isinstance(result, dict) else None
        if not isinstance(test, int) or isinstance(test, bool):
            read.problem("not a promptfoo result (no testIdx)", line)
            continue
        model = _provider(result.get("provider"))
        if model is None:
            read.problem("a promptfoo result with no provider", line)
            continue
        prompt = result.get("promptIdx")
        if columns[model] > 1 and isinstance(prompt, int) and prompt in labels:
            model = f"{model} [{labels[prompt]}]"
        value = _score(result, metric)
        if value is None or result.get("failureReason") == _ERROR:
            read.unscored += 1
            continue
        try:
            score = unit_score(value)
        except ValueError as exc:
            raise Refused(
                f"{metric!r} is {describe(value)} here ({exc}): not a score on 0-1; "
                "choose another with the input 'metric'",
                line,
                "metric",
            ) from None
        if score is None:
            read.unscored += 1
            continue
        read.add(model, str(test), metric, score, "general", read.source(line))


def read(file: FileRead, context: ReadContext) -> list[EvalRun]:
    """The records of a promptfoo export (``promptfoo eval -o results.json``)."""
    read_export(file, read_whole(file.path))
    return list(file.records())
