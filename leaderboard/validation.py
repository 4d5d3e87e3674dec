"""Validation: every problem in an input is found and reported together."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import numpy as np

from .limits import MAX_ID_LENGTH
from .numbers import parse_integer
from .records import EvalRun, Source, is_failure

# The largest cost, latency or custom metric a call may report: means and per-1k costs stay finite.
MAX_AMOUNT = 1e12

REQUIRED_FIELDS = ("model_id", "task_id", "metric_name", "score")
OPTIONAL_FIELDS = ("category", "weight")
FIELDS = REQUIRED_FIELDS + OPTIONAL_FIELDS
# What a record may say about the call itself, besides its score; absent, null, false and {} all mean "not said".
CALL_FIELDS = ("cost_usd", "latency_ms", "error", "metrics", "trial", "cluster")
# What describes the task rather than one call of it: every trial of a (model, task) must say the same.
TASK_FIELDS = ("category", "cluster", "weight")
# The per-model metrics the leaderboard computes itself: a custom metric may not take their names.
BUILTIN_METRICS = ("accuracy", "cost", "latency", "latency_p50", "error_rate")
# The fields that group records (a row, a column, a category mean): a stray space would split a group.
KEY_FIELDS = ("model_id", "task_id", "category")


def printable(text: str) -> str:
    """``text`` on one line: control and other unprintable characters shown as escapes."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input, located as precisely as it can be."""

    message: str
    file: str | None = None
    line: int | None = None
    field: str | None = None
    index: int | None = None

    @property
    def location(self) -> str:
        if self.file is not None:
            return self.file if self.line is None else f"{self.file}:{self.line}"
        if self.index is not None:
            return f"record #{self.index}"
        return "input"

    def __str__(self) -> str:
        where = printable(self.location)
        message = printable(self.message)
        return f"{where}: {self.field}: {message}" if self.field else f"{where}: {message}"


def _problem_order(p: Problem) -> tuple[str, int, int, str, str]:
    return (p.file or "", p.line or 0, p.index if p.index is not None else -1, p.field or "", p.message)


class InvalidEvalRuns(ValueError):
    """Raised with every problem found, never just the first."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        # Sorted so that the report does not depend on the order things were read in.
        self.problems: tuple[Problem, ...] = tuple(sorted(problems, key=_problem_order))
        count = len(self.problems)
        head = "\n".join(str(p) for p in self.problems[:20])
        more = f"\n... and {count - 20} more" if count > 20 else ""
        super().__init__(f"{count} problem{'s' if count != 1 else ''} in the eval runs:\n{head}{more}")


def _where(source: Source | None, index: int) -> dict[str, Any]:
    if source is None:
        return {"index": index}
    return {"file": source.file, "line": source.line}


def _is_number(value: object) -> bool:
    # bool is an int subclass; a True score is a bug upstream, not a 1.0.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _float(value: float) -> float | None:
    """``float(value)``, or None for an integer too large for a float (it would raise OverflowError)."""
    try:
        return float(value)
    except OverflowError:
        return None


def shown(value: object, width: int = 60) -> str:
    """``repr(value)`` cut to ``width`` characters; an integer too long to print is described instead."""
    try:
        text = repr(value)
    except ValueError:  # int beyond sys.get_int_max_str_digits()
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"  # type: ignore[attr-defined]
    return text if len(text) <= width else text[: width - 1] + "…"


def trial_label(value: object) -> object:
    """A ``trial`` as it is compared: text that is a plain integer is that integer (``"1"`` is trial 1 in JSON
    as in CSV, where every cell is text); anything else as written."""
    if isinstance(value, str):
        number = parse_integer(value)
        if number is not None:
            return number
    return value


def trial_key(value: object) -> object:
    """The trial a record is for duplicates: a record without ``trial`` is trial 1."""
    return 1 if value is None else trial_label(value)


LISTED = 10  # names a message lists before it counts the rest


def listed(names: Sequence[str], limit: int = LISTED) -> str:
    """``names`` joined with commas, the first ``limit`` of them and then how many more (a message stays short
    whatever the input holds: a header may name 200,000 columns twice)."""
    head = ", ".join(names[:limit])
    return head if len(names) <= limit else f"{head} and {len(names) - limit:,} others"


def encodable(value: str) -> bool:
    """False for a lone surrogate (JSON's "\\ud800"), which no text file, report or comment can hold."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _string_problem(name: str, value: str) -> str | None:
    if not encodable(value):
        return f"{shown(value)} is not valid Unicode (a lone surrogate escape such as \\ud800)"
    if len(value) > MAX_ID_LENGTH:
        return f"is {len(value):,} characters long; at most {MAX_ID_LENGTH} are allowed (starts {shown(value[:40])})"
    if not value.strip():
        return "must be a non-empty string" if name != "category" else "must be a non-empty string when given"
    if name in KEY_FIELDS and value != value.strip():
        return (
            f"{shown(value)} has leading or trailing whitespace: ids are compared as written, "
            "so remove it upstream (it is not stripped silently)"
        )
    return None


def check_fields(record: Mapping[str, object], where: Mapping[str, Any]) -> list[Problem]:
    """Type and range checks of one record's fields, as read from a file or built in code."""
    problems: list[Problem] = []

    def bad(name: str, message: str) -> None:
        problems.append(Problem(message=message, field=name, **where))

    for name in ("model_id", "task_id", "metric_name", "category"):
        if name not in record:
            if name != "category":
                bad(name, "missing required field")
            continue
        value = record[name]
        if not isinstance(value, str):
            bad(name, f"must be a string, got {type(value).__name__} {shown(value)}")
        elif (message := _string_problem(name, value)) is not None:
            bad(name, message)
    failed = is_failure(record.get("error"))
    if "score" not in record:
        if not failed:
            bad("score", "missing required field (only a failed call, with `error` set, may leave it out)")
    elif record["score"] is None and failed:
        pass  # a failed call need not have a score
    else:
        score = record["score"]
        value = _float(score) if _is_number(score) else None  # type: ignore[arg-type]
        if not _is_number(score):
            bad("score", f"must be a number, got {type(score).__name__} {shown(score)}")
        elif value is None:
            bad("score", f"{shown(score)} is outside [0, 1]; normalise the metric to a fraction upstream")
        elif not math.isfinite(value):
            bad("score", f"must be finite, got {score!r}")
        elif not 0.0 <= value <= 1.0:
            bad("score", f"{shown(score)} is outside [0, 1]; normalise the metric to a fraction upstream")
    if "weight" in record:
        weight = record["weight"]
        value = _float(weight) if _is_number(weight) else None  # type: ignore[arg-type]
        if not _is_number(weight):
            bad("weight", f"must be a number, got {type(weight).__name__} {shown(weight)}")
        elif value is None or not math.isfinite(value) or value <= 0:
            bad("weight", f"must be a finite positive number, got {shown(weight)}")
    problems.extend(_call_problems(record, where))
    return problems


def _amount_problem(value: object) -> str | None:
    """Why ``value`` is not a finite number >= 0 (None when it is)."""
    number = _float(value) if _is_number(value) else None  # type: ignore[arg-type]
    if not _is_number(value):
        return f"must be a number, got {type(value).__name__} {shown(value)}"
    if number is None or not math.isfinite(number) or number < 0:
        return f"must be a finite number >= 0, got {shown(value)}"
    if number > MAX_AMOUNT:
        # A mean or a per-1k cost of such values overflows to infinity, which no report can hold.
        return f"must be at most {MAX_AMOUNT:g}, got {shown(value)}"
    return None


def _name_problem(value: str) -> str | None:
    if not encodable(value):
        return f"{shown(value)} is not valid Unicode (a lone surrogate escape such as \\ud800)"
    if len(value) > MAX_ID_LENGTH:
        return f"is {len(value):,} characters long; at most {MAX_ID_LENGTH} are allowed (starts {shown(value[:40])})"
    if not value.strip() or value != value.strip():
        return f"{shown(value)} must be non-empty, without leading or trailing whitespace"
    return None


def _call_problems(record: Mapping[str, object], where: Mapping[str, Any]) -> list[Problem]:
    """The optional fields about the call: cost, latency, error, custom metrics, trial."""
    problems: list[Problem] = []

    def bad(name: str, message: str) -> None:
        problems.append(Problem(message=message, field=name, **where))

    for name in ("cost_usd", "latency_ms"):
        value = record.get(name)
        if value is not None and (message := _amount_problem(value)) is not None:
            bad(name, message)
    error = record.get("error")
    if error is not None and not isinstance(error, bool):
        if not isinstance(error, str):
            bad("error", f'must be true, false or a short reason such as "timeout", got {shown(error)}')
        elif (message := _name_problem(error)) is not None:
            bad("error", message)
    metrics = record.get("metrics")
    if metrics is not None:
        if not isinstance(metrics, Mapping):
            bad("metrics", f'must be an object of numbers such as {{"citation_rate": 0.8}}, got {shown(metrics)}')
        else:
            for key, value in metrics.items():
                if not isinstance(key, str) or (message := _name_problem(key)) is not None:
                    bad("metrics", f"name {shown(key)}: {message if isinstance(key, str) else 'must be a string'}")
                elif key in BUILTIN_METRICS:
                    bad("metrics", f"{shown(key)} is a metric the leaderboard computes itself; name yours otherwise")
                elif _amount_problem(abs(value) if _is_number(value) else value) is not None:
                    bad(
                        "metrics",
                        f"{shown(key)} must be a finite number of magnitude at most {MAX_AMOUNT:g}, got {shown(value)}",
                    )
    cluster = record.get("cluster")
    if cluster is not None:
        if not isinstance(cluster, str):
            bad("cluster", f"must be a string (the task's family), got {type(cluster).__name__} {shown(cluster)}")
        elif (message := _name_problem(cluster)) is not None:
            bad("cluster", message)
    trial = record.get("trial")
    if trial is not None:
        if isinstance(trial, bool) or not isinstance(trial, (int, str)):
            bad("trial", f"must be an integer or a string, got {type(trial).__name__} {shown(trial)}")
        elif isinstance(trial, str) and (message := _name_problem(trial)) is not None:
            bad("trial", message)
    return problems


def duplicate_problem(
    model_id: str,
    task_id: str,
    first: str,
    where: Mapping[str, Any],
    trial: object = None,
    unnumbered: bool = False,
) -> Problem:
    """The same (model, task) twice would count a task twice: the one message for it, naming both places.

    Several trials of one (model, task) are allowed when their ``trial`` values differ; ``unnumbered``:
    one of the two has no ``trial`` and so is trial 1.
    """
    if trial is not None:
        key = f"(model_id, task_id, trial) = ({shown(model_id, 200)}, {shown(task_id, 200)}, {shown(trial, 200)})"
    else:
        key = f"(model_id, task_id) = ({shown(model_id, 200)}, {shown(task_id, 200)})"
    note = " (a record without `trial` is trial 1)" if unnumbered else ""
    return Problem(
        message=f"duplicate {key}; first seen at {printable(first)}{note}",
        field="task_id",
        **where,
    )


def find_duplicates(runs: Iterable[object]) -> list[Problem]:
    """The same (model, task) twice would count a task twice; name both places."""
    first_seen: dict[tuple[str, str, object], tuple[EvalRun, int]] = {}
    trials = any(isinstance(run, EvalRun) and run.trial is not None for run in runs)
    problems: list[Problem] = []
    for index, run in enumerate(runs):
        if not isinstance(run, EvalRun):
            continue
        if not (isinstance(run.model_id, str) and isinstance(run.task_id, str)):
            continue  # already reported as a type problem
        try:
            key = (run.model_id, run.task_id, trial_key(run.trial))
            earlier_run, earlier_index = first_seen.setdefault(key, (run, index))
        except TypeError:
            continue  # an unhashable trial: already reported as a type problem
        if earlier_run is run:
            continue
        earlier = str(earlier_run.source) if earlier_run.source is not None else f"record #{earlier_index}"
        unnumbered = trials and None in (run.trial, earlier_run.trial)
        problems.append(
            duplicate_problem(
                run.model_id, run.task_id, earlier, _where(run.source, index), key[2] if trials else None, unnumbered
            )
        )
    return problems


def _codes(values: Sequence[object]) -> np.ndarray[Any, np.dtype[np.int64]]:
    """Each value as the index of its first occurrence among the distinct values (equal values, one code)."""
    code = {value: i for i, value in enumerate(dict.fromkeys(values))}
    return np.fromiter(map(code.__getitem__, values), np.int64, len(values))


def task_field_problems(runs: Sequence[EvalRun], indices: Sequence[int] | None = None) -> list[Problem]:
    """Records of one (model, task) that disagree on what describes the task: a problem at each later one.

    The records of a (model, task) are its trials, and they describe one task: its ``category``,
    ``cluster`` and ``weight`` (``TASK_FIELDS``) must be the same on each, or which value counts would
    depend on which record comes first. ``runs`` are in their order (a load's: files sorted, then
    lines), and each problem is at a record that differs from the first of its (model, task), so one
    is named whatever the order. ``indices``: the records' positions, for a record without a source.
    """
    if len(runs) < 2 or set(map(attrgetter("trial"), runs)) <= {None}:
        return []  # without trials a (model, task) twice is a duplicate, reported as one
    models, tasks = map(attrgetter("model_id"), runs), map(attrgetter("task_id"), runs)
    pairs = _codes(list(zip(models, tasks, strict=True)))
    if int(pairs.max()) + 1 == len(runs):
        return []  # no (model, task) twice: the common case, one pass
    order = np.argsort(pairs, kind="stable")  # each (model, task) together, in record order
    sorted_pairs = pairs[order]
    starts = np.flatnonzero(np.r_[True, sorted_pairs[1:] != sorted_pairs[:-1]])
    first = order[np.repeat(starts, np.diff(np.r_[starts, len(runs)]))]  # each record's first of its pair
    problems: list[Problem] = []
    for name in TASK_FIELDS:
        codes = _codes(list(map(attrgetter(name), runs)))
        for index in np.flatnonzero(codes[order] != codes[first]):
            later, earlier = int(order[index]), int(first[index])
            here, there = runs[later], runs[earlier]
            if indices is not None:
                later, earlier = indices[later], indices[earlier]
            at = str(there.source) if there.source is not None else f"record #{earlier}"
            problems.append(_disagreement(name, here, there, at, _where(here.source, later)))
    return problems


def _disagreement(name: str, here: EvalRun, there: EvalRun, at: str, where: Mapping[str, Any]) -> Problem:
    pair = f"(model_id, task_id) = ({shown(here.model_id, 200)}, {shown(here.task_id, 200)})"
    value, other = getattr(here, name), getattr(there, name)
    message = (
        f"{pair} has {name} {shown(value)} here but {shown(other)} at {printable(at)}: the trials of a task "
        f"describe one task, so its {', '.join(TASK_FIELDS)} must be the same on each"
    )
    return Problem(message=message, field=name, **where)


def validate_runs(runs: Sequence[EvalRun]) -> None:
    """Raise :class:`InvalidEvalRuns` listing every problem in ``runs``."""
    problems: list[Problem] = []
    valid: list[EvalRun] = []
    indices: list[int] = []
    for index, run in enumerate(runs):
        if not isinstance(run, EvalRun):
            problems.append(Problem(message=f"not an EvalRun: {type(run).__name__}", index=index))
            continue
        fields = {name: getattr(run, name) for name in FIELDS + CALL_FIELDS}
        found = check_fields(fields, _where(run.source, index))
        problems.extend(found)
        if not found:
            valid.append(run)
            indices.append(index)
    problems.extend(find_duplicates(runs))
    problems.extend(task_field_problems(valid, indices))
    if problems:
        raise InvalidEvalRuns(problems)
