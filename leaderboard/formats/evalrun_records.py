"""An EvalRun record from a parsed object: checked, its ids kept in one spelling, duplicates named.

Every reader of the EvalRun format (JSON lines, a JSON document, CSV) turns a line into a
mapping and hands it to :func:`build`; what is wrong is noted in the load's :class:`Sink`, and
what can only be judged over all files (two spellings of one id, the same (model, task) twice)
is found at the end by :func:`spelling_problems` and :func:`duplicates`.
"""

from __future__ import annotations

import sys
import unicodedata
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import numpy as np

from .. import limits
from ..records import NO_ERROR, EvalRun, Source
from ..validation import (
    CALL_FIELDS,
    KEY_FIELDS,
    OPTIONAL_FIELDS,
    Problem,
    check_fields,
    duplicate_problem,
    encodable,
    shown,
    trial_key,
    trial_label,
)

_MAX_FLOAT = sys.float_info.max  # an int above it has no float: float() would raise OverflowError
_CALL_KEYS = frozenset(CALL_FIELDS)


@dataclass(frozen=True, slots=True)
class Spelling:
    """An id written other than as it is kept (not NFC, or with surrounding whitespace)."""

    field: str
    written: str
    canonical: str
    source: Source


class Sink:
    """What reading collects: problems, every (model, task) seen, and the odd spellings of ids."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        # (model, task, where) of records rejected for another field: they can still be duplicates.
        self.rejected: list[tuple[str, str, Source]] = []
        self.spellings: list[Spelling] = []
        self.budget = limits.MAX_INPUT_BYTES  # bytes still allowed to be read

    def problem(self, message: str, file: str, line: int | None = None) -> None:
        self.problems.append(Problem(message=message, file=file, line=line))


def canonical(text: str) -> str:
    """An id as it is compared and kept: NFC (one spelling of "é"), nothing stripped."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def _plain(text: str) -> bool:
    """Already canonical and within bounds: the common case, checked cheaply. A lone surrogate is NFC to
    ``unicodedata`` but no file can hold it: such an id goes to check_fields, which names it at its line
    beside the file's other problems (not later, when the records are checked as a whole)."""
    return (
        0 < len(text) <= limits.MAX_ID_LENGTH
        and (text.isascii() or (unicodedata.is_normalized("NFC", text) and encodable(text)))
        and not text[0].isspace()
        and not text[-1].isspace()
    )


def build(record: object, source: Source, sink: Sink) -> EvalRun | None:
    """The EvalRun a parsed record describes, or None with its problems noted in ``sink``."""
    if not isinstance(record, dict):
        sink.problems.append(not_an_object(record, source))
        return None
    get = record.get
    model_id, task_id, metric = get("model_id"), get("task_id"), get("metric_name")
    # null is "not given" for an optional field, as an empty CSV cell is: its default.
    score, category, weight = get("score"), get("category"), get("weight")
    category = "general" if category is None else category
    weight = 1.0 if weight is None else weight
    # The common case, checked inline (a million records should load in seconds); anything
    # unusual goes through check_fields, which says exactly what is wrong.
    if (
        type(model_id) is str
        and type(task_id) is str
        and type(metric) is str
        and type(category) is str
        and (type(score) is float or type(score) is int)
        and (type(weight) is float or type(weight) is int)
        and 0.0 <= score <= 1.0
        and 0.0 < weight <= _MAX_FLOAT
        and _plain(model_id)
        and _plain(task_id)
        and _plain(category)
        and 0 < len(metric) <= limits.MAX_ID_LENGTH
        and metric.strip()
        and _CALL_KEYS.isdisjoint(record)
    ):
        # Model ids, metrics and categories repeat on every line: keep one copy of each.
        return EvalRun(
            sys.intern(model_id), task_id, sys.intern(metric), float(score), sys.intern(category), float(weight),
            source=source,
        )  # fmt: skip
    if any(record.get(name, "") is None for name in OPTIONAL_FIELDS):
        record = {k: v for k, v in record.items() if not (v is None and k in OPTIONAL_FIELDS)}
    error = record.get("error")
    if isinstance(error, str) and error.lower() in NO_ERROR:
        record = {**record, "error": False}  # "0", "false", "": no error, not a reason for one
    elif isinstance(error, str) and error.lower() == "true":
        record = {**record, "error": True}
    problems = check_fields(record, {"file": source.file, "line": source.line})
    model_kept = _respelled("model_id", model_id, source, sink)
    task_kept = _respelled("task_id", task_id, source, sink)
    category_kept = _respelled("category", category, source, sink)
    if problems:
        sink.problems.extend(problems)
        if isinstance(model_kept, str) and isinstance(task_kept, str):
            sink.rejected.append((model_kept, task_kept, source))  # so a duplicate is still reported
        return None
    # Valid, but an id is not in NFC: it is kept in NFC (the README says so), and a second
    # spelling of the same id elsewhere is reported by spelling_problems.
    assert isinstance(model_kept, str) and isinstance(task_kept, str) and isinstance(category_kept, str)
    assert isinstance(metric, str) and isinstance(weight, (int, float))
    assert score is None or isinstance(score, (int, float))
    return EvalRun(
        sys.intern(model_kept), task_kept, sys.intern(metric), None if score is None else float(score),
        sys.intern(category_kept), float(weight), source=source, **_call_fields(record),
    )  # fmt: skip


def _call_fields(record: dict[str, Any]) -> dict[str, Any]:
    """The optional call fields of a checked record, as EvalRun keeps them (null means absent)."""
    out: dict[str, Any] = {}
    for name in ("cost_usd", "latency_ms"):
        if record.get(name) is not None:
            out[name] = float(record[name])
    if record.get("error") is not None:
        out["error"] = record["error"]
    if record.get("metrics"):
        out["metrics"] = {sys.intern(k): float(v) for k, v in record["metrics"].items()}
    if record.get("trial") is not None:
        out["trial"] = trial_label(record["trial"])
    if record.get("cluster") is not None:
        out["cluster"] = sys.intern(record["cluster"])
    return out


def _respelled(name: str, value: object, source: Source, sink: Sink) -> object:
    """``value`` as kept (NFC); an id written any other way is noted, to find its twins."""
    if not isinstance(value, str) or len(value) > limits.MAX_ID_LENGTH or not value.strip():
        return value
    kept = canonical(value)
    if kept != value or kept != kept.strip():
        sink.spellings.append(Spelling(name, value, canonical(value.strip()), source))
    return kept


def spelling_problems(runs: list[EvalRun], sink: Sink, files: list[str]) -> list[Problem]:
    """Two spellings of one id (NFC and NFD, or with and without a space) would count as two: name both."""
    if not sink.spellings:
        return []
    rank = {name: i for i, name in enumerate(files)}

    def order(source: Source) -> tuple[int, int]:
        return rank.get(source.file, -1), source.line

    odd = {(s.field, s.source) for s in sink.spellings}
    wanted = {(s.field, s.canonical) for s in sink.spellings}
    # Every spelling of each wanted id, with its first place: the odd ones, and the id as kept.
    places: dict[tuple[str, str], dict[str, Source]] = {}
    for spelling in sink.spellings:
        seen = places.setdefault((spelling.field, spelling.canonical), {})
        if spelling.written not in seen or order(spelling.source) < order(seen[spelling.written]):
            seen[spelling.written] = spelling.source
    plain: list[tuple[str, str, Source]] = [
        (name, getattr(run, name), run.source) for run in runs if run.source is not None for name in KEY_FIELDS
    ]
    plain += [(name, value, source) for model, task, source in sink.rejected for name, value in
              (("model_id", model), ("task_id", task))]  # fmt: skip
    for name, value, where in plain:
        if (name, value) in wanted and (name, where) not in odd:
            seen = places[(name, value)]
            if value not in seen or order(where) < order(seen[value]):
                seen[value] = where
    problems = []
    for (name, _), seen in places.items():
        if len(seen) < 2:
            continue
        (first, first_at), *others = sorted(seen.items(), key=lambda item: order(item[1]))
        for written, where in others:
            if canonical(written) == canonical(first):
                how = "Unicode normalisation"
            elif written.strip() == first.strip():
                how = "surrounding whitespace"
            else:
                how = "surrounding whitespace and Unicode normalisation"
            problems.append(
                Problem(
                    message=f"{shown(written)} and {shown(first)} (first at {first_at}) differ only in {how} "
                    f"(here {written!a}, there {first!a}): one id written two ways would be "
                    "counted as two; write it one way",
                    file=where.file,
                    line=where.line,
                    field=name,
                )
            )
    return problems


def duplicates(runs: list[EvalRun], rejected: list[tuple[str, str, Source]], files: list[str]) -> list[Problem]:
    """The same (model, task) twice would count a task twice: name both places.

    Pairs are coded as integers and sorted, so finding them costs 8 bytes a record
    rather than an index of tuples as large as the records.
    """
    models = [*map(attrgetter("model_id"), runs), *(r[0] for r in rejected)]
    # Trials of one (model, task) are distinct records, and a record without a trial is trial 1; without
    # trials, the task alone is the key. A rejected record's trial is not known: it matches no trial.
    trials = any(run.trial is not None for run in runs)
    if trials:
        tasks: list[object] = [(run.task_id, trial_key(run.trial)) for run in runs]
        tasks += [(r[1], None) for r in rejected]
    else:
        tasks = [*map(attrgetter("task_id"), runs), *(r[1] for r in rejected)]
    model_code = {m: i for i, m in enumerate(set(models))}
    task_code = {t: i for i, t in enumerate(set(tasks))}
    codes = np.fromiter(map(model_code.__getitem__, models), np.int64, len(models)) * len(task_code)
    codes += np.fromiter(map(task_code.__getitem__, tasks), np.int64, len(tasks))
    del models, tasks
    order = np.argsort(codes, kind="stable")
    repeated = np.flatnonzero(codes[order][1:] == codes[order][:-1])
    if repeated.size == 0:
        return []
    groups: dict[int, list[int]] = {}
    for position in np.union1d(repeated, repeated + 1):
        groups.setdefault(int(codes[order[position]]), []).append(int(order[position]))

    def entry(index: int) -> tuple[str, str, Source, int | str | None]:
        if index < len(runs):
            run = runs[index]
            assert run.source is not None
            return run.model_id, run.task_id, run.source, run.trial
        return (*rejected[index - len(runs)], None)

    rank = {name: i for i, name in enumerate(files)}
    problems = []
    for members in groups.values():
        seen = sorted((entry(i) for i in members), key=lambda e: (rank.get(e[2].file, -1), e[2].line))
        first, first_trial = seen[0][2], seen[0][3]
        for model_id, task_id, source, trial in seen[1:]:
            where = {"file": source.file, "line": source.line}
            shown_trial = trial_key(trial) if trials else None
            unnumbered = trials and None in (trial, first_trial)
            problems.append(duplicate_problem(model_id, task_id, str(first), where, shown_trial, unnumbered))
    return problems


def not_an_object(value: object, source: Source) -> Problem:
    return Problem(
        message=f"each record must be a JSON object with the EvalRun fields, got {type(value).__name__}",
        file=source.file,
        line=source.line,
    )
