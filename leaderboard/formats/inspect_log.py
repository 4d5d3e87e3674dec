"""Inspect (inspect_ai) logs: the ``.eval`` zip (``header.json`` + ``samples/<id>_epoch_<n>.json``) and
the older ``.json`` log (one object with ``eval`` and ``samples``).

A sample's score is one scorer's value, turned into a number as Inspect's ``value_to_float`` does:
"C" 1, "P" 0.5, "I" and "N" 0, booleans 1/0, "yes"/"true" 1, "no"/"false" 0, numeric strings and
numbers as they are. Epochs of a sample are trials: one record, their mean (what Inspect's default
"mean" reducer writes to ``reductions.json``).

A sample's cluster (``cluster-by: cluster``) is its ``metadata.cluster`` string (the passage, the
repository: whatever family the task's samples come in), the convention Inspect's own
``stderr(cluster="cluster")`` reads from sample metadata.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..records import EvalRun
from ..validation import Problem
from ._common import FileRead, ReadContext, Refused, describe, non_empty, read_whole
from ._json import elements_with_lines
from .ziplimits import BoundedZip, ZipLimitError, ZipLimits

_LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
_WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}
_SAMPLE_MEMBER = re.compile(r"samples/[^/]+\.json")
# The sample metadata key that names its cluster.
CLUSTER_KEY = "cluster"


def to_float(value: object) -> float | None:
    """A scorer's value as Inspect reads it; None when the sample is unscored (no value, NaN)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return None if math.isnan(value) else float(value)
    if isinstance(value, str):
        if value in _LETTERS:
            return _LETTERS[value]
        lowered = value.strip().lower()
        if lowered in _WORDS:
            return _WORDS[lowered]
        try:
            number = float(lowered)
        except ValueError:
            pass
        else:
            return None if math.isnan(number) else number
    raise ValueError(describe(value))


def first_scorer(header: dict[str, Any]) -> str | None:
    """The scorer Inspect lists first: the task's ``eval.scorers``, else the first in ``results.scores``."""
    spec = header.get("eval")
    scorers = spec.get("scorers") if isinstance(spec, dict) else None
    if isinstance(scorers, list):
        for scorer in scorers:
            if isinstance(scorer, dict) and isinstance(scorer.get("name"), str):
                return str(scorer["name"])
    results = header.get("results")
    scores = results.get("scores") if isinstance(results, dict) else None
    if isinstance(scores, list):
        for score in scores:
            if isinstance(score, dict):
                name = score.get("scorer") or score.get("name")
                if isinstance(name, str):
                    return name
    return None


def _identity(header: object) -> tuple[str, str]:
    spec = header.get("eval") if isinstance(header, dict) else None
    if not isinstance(spec, dict):
        raise Refused("not an Inspect log: no 'eval' object")
    model, task = non_empty(spec.get("model")), non_empty(spec.get("task"))
    if model is None or task is None:
        raise Refused("the Inspect log's eval names no model or no task")
    return model, task


def read_samples(read: FileRead, header: dict[str, Any], samples: Iterable[tuple[Any, int, str | None]]) -> None:
    """Score each (sample, line, zip member); epochs of a sample are folded into one record."""
    model, task = _identity(header)
    scorer = read.options.metric or first_scorer(header)
    seen_scorers: set[str] = set()
    for sample, line, member in samples:
        where = read.source(line, member)
        if not isinstance(sample, dict) or non_empty(sample.get("id")) is None:
            read.problems.append(Problem("not an Inspect sample (no id)", where.file, where.line))
            continue
        scores = sample.get("scores")
        if isinstance(scores, dict):
            seen_scorers.update(k for k in scores if isinstance(k, str))
        if scorer is None and isinstance(scores, dict) and scores:
            scorer = next(iter(scores))
        entry = scores.get(scorer) if isinstance(scores, dict) and scorer is not None else None
        value = entry.get("value") if isinstance(entry, dict) else None
        try:
            score = to_float(value)
        except ValueError:
            kind = "several values" if isinstance(value, (dict, list)) else "a value Inspect cannot read as a number"
            raise Refused(
                f"scorer {scorer!r} gives {describe(value)}: {kind}, not one per-sample score; "
                "choose another scorer with the input 'metric'",
                where.line,
                "metric",
                where.file,
            ) from None
        if score is None:
            read.unscored += 1
            continue
        if not 0.0 <= score <= 1.0:
            raise Refused(
                f"scorer {scorer!r} gives {score!r}: not a score on 0-1; choose a 0-1 scorer with the input 'metric'",
                where.line,
                "metric",
                where.file,
            )
        epoch = sample.get("epoch")
        trial = epoch if isinstance(epoch, int) and not isinstance(epoch, bool) else None
        metadata = sample.get("metadata")
        cluster = non_empty(metadata.get(CLUSTER_KEY)) if isinstance(metadata, dict) else None
        read.add(model, f"{task}/{sample['id']}", str(scorer), score, task, where, trial, cluster)
    if read.options.metric and read.options.metric not in seen_scorers and seen_scorers:
        raise Refused(
            f"no sample has scorer {read.options.metric!r} (scorers here: {', '.join(sorted(seen_scorers))})",
            field="metric",
        )


def _epoch_order(name: str) -> tuple[str, int]:
    # samples/<id>_epoch_<n>.json: read epochs in order, so the record's source is the first epoch.
    stem = name.rsplit("/", 1)[-1].removesuffix(".json")
    base, _, epoch = stem.rpartition("_epoch_")
    return (base, int(epoch)) if epoch.isdigit() else (stem, 0)


def read_eval_zip(read: FileRead, limits: ZipLimits | None = None) -> None:
    try:
        with BoundedZip(read.path, limits) as archive:
            names = archive.names()
            head_name = "header.json" if "header.json" in names else "_journal/start.json"
            if head_name not in names:
                raise Refused("not an Inspect .eval log: neither header.json nor _journal/start.json inside")
            header = _member_json(archive, head_name)
            if not isinstance(header, dict):
                raise Refused(f"{head_name} is not a JSON object")
            members = sorted((n for n in names if _SAMPLE_MEMBER.fullmatch(n)), key=_epoch_order)
            read_samples(read, header, ((_member_json(archive, m), 1, m) for m in members))
    except ZipLimitError as exc:
        raise Refused(str(exc)) from None


def _member_json(archive: BoundedZip, name: str) -> Any:
    try:
        return json.loads(archive.read(name))
    except ValueError as exc:  # UnicodeDecodeError included
        raise Refused(f"{name} in the archive is not JSON: {exc}") from None


def read_json_log(read: FileRead, text: str) -> None:
    try:
        document = json.loads(text)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        raise Refused(f"invalid JSON: {exc}", line) from None
    if not isinstance(document, dict):
        raise Refused("not an Inspect log: a JSON log is one object")
    samples = ((sample, line, None) for line, sample in elements_with_lines(text, ("samples",)))
    read_samples(read, document, samples)


def read(file: FileRead, context: ReadContext) -> list[EvalRun]:
    """The records of an Inspect log: a ``.eval`` zip, or the older JSON log."""
    if _is_zip(file.path):
        read_eval_zip(file, context.zip_limits)
    else:
        read_json_log(file, read_whole(file.path))
    return list(file.records())


def _is_zip(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(4) in (b"PK\x03\x04", b"PK\x05\x06")
