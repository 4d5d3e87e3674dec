"""Loading EvalRun records from JSON, JSONL and CSV files, remembering where each came from.

Input is untrusted, so reading is bounded and never surprised: only regular files are
opened (a FIFO would block forever, a device never end), the bytes read are capped
(:data:`~leaderboard.limits.MAX_INPUT_BYTES`), a glob never follows a directory link
twice (no loops) nor out of the workspace, a file reached by two paths is read once,
and every malformed byte, line, number or object becomes a problem at file:line.
"""

from __future__ import annotations

import contextlib
import csv
import fnmatch
import gc
import glob
import io
import json
import os
import stat
import sys
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any, BinaryIO, NoReturn

import numpy as np

from . import limits
from .formats import Session
from .numbers import parse_decimal, parse_integer
from .records import NO_ERROR, EvalRun, Source
from .validation import (
    CALL_FIELDS,
    FIELDS,
    KEY_FIELDS,
    InvalidEvalRuns,
    Problem,
    check_fields,
    duplicate_problem,
    shown,
)

FORMATS = (".json", ".jsonl", ".csv")
BOM = b"\xef\xbb\xbf"

_MAX_FLOAT = sys.float_info.max  # an int above it has no float: float() would raise OverflowError
_CALL_KEYS = frozenset(CALL_FIELDS)


@dataclass(frozen=True, slots=True)
class _Spelling:
    """An id written other than as it is kept (not NFC, or with surrounding whitespace)."""

    field: str
    written: str
    canonical: str
    source: Source


class _Sink:
    """What reading collects: problems, every (model, task) seen, and the odd spellings of ids."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        # (model, task, where) of records rejected for another field: they can still be duplicates.
        self.rejected: list[tuple[str, str, Source]] = []
        self.spellings: list[_Spelling] = []
        self.budget = limits.MAX_INPUT_BYTES  # bytes still allowed to be read

    def problem(self, message: str, file: str, line: int | None = None) -> None:
        self.problems.append(Problem(message=message, file=file, line=line))


def canonical(text: str) -> str:
    """An id as it is compared and kept: NFC (one spelling of "é"), nothing stripped."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def _plain(text: str) -> bool:
    """Already canonical and within bounds: the common case, checked cheaply."""
    return (
        0 < len(text) <= limits.MAX_ID_LENGTH
        and (text.isascii() or unicodedata.is_normalized("NFC", text))
        and not text[0].isspace()
        and not text[-1].isspace()
    )


def _build(record: object, source: Source, sink: _Sink) -> EvalRun | None:
    """The EvalRun a parsed record describes, or None with its problems noted in ``sink``."""
    if not isinstance(record, dict):
        sink.problems.append(_not_an_object(record, source))
        return None
    get = record.get
    model_id, task_id, metric = get("model_id"), get("task_id"), get("metric_name")
    score, category, weight = get("score"), get("category", "general"), get("weight", 1.0)
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
    # spelling of the same id elsewhere is reported by _spelling_problems.
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
        out["trial"] = record["trial"]
    if record.get("cluster") is not None:
        out["cluster"] = sys.intern(record["cluster"])
    return out


def _respelled(name: str, value: object, source: Source, sink: _Sink) -> object:
    """``value`` as kept (NFC); an id written any other way is noted, to find its twins."""
    if not isinstance(value, str) or len(value) > limits.MAX_ID_LENGTH or not value.strip():
        return value
    kept = canonical(value)
    if kept != value or kept != kept.strip():
        sink.spellings.append(_Spelling(name, value, canonical(value.strip()), source))
    return kept


def _spelling_problems(runs: list[EvalRun], sink: _Sink, files: list[str]) -> list[Problem]:
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


def _duplicates(runs: list[EvalRun], rejected: list[tuple[str, str, Source]], files: list[str]) -> list[Problem]:
    """The same (model, task) twice would count a task twice: name both places.

    Pairs are coded as integers and sorted, so finding them costs 8 bytes a record
    rather than an index of tuples as large as the records.
    """
    models = [*map(attrgetter("model_id"), runs), *(r[0] for r in rejected)]
    # Trials of one (model, task) are distinct records; without trials, the task alone is the key.
    trials = any(run.trial is not None for run in runs)
    task_of: Any = attrgetter("task_id", "trial") if trials else attrgetter("task_id")
    tasks = [*map(task_of, runs), *((r[1], None) if trials else r[1] for r in rejected)]
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
        first = seen[0][2]
        for model_id, task_id, source, trial in seen[1:]:
            problems.append(
                duplicate_problem(model_id, task_id, str(first), {"file": source.file, "line": source.line}, trial)
            )
    return problems


def _not_an_object(value: object, source: Source) -> Problem:
    return Problem(
        message=f"each record must be a JSON object with the EvalRun fields, got {type(value).__name__}",
        file=source.file,
        line=source.line,
    )


class _Parser:
    """A JSON decoder that notes duplicate keys (json keeps the last one silently)."""

    def __init__(self) -> None:
        self.duplicates: list[str] = []
        self.decoder = json.JSONDecoder(object_pairs_hook=self._object)

    def _object(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen and key not in self.duplicates:
                    self.duplicates.append(key)
                seen.add(key)
        return obj

    def duplicate_problem(self, file: str, line: int) -> Problem | None:
        if not self.duplicates:
            return None
        keys = ", ".join(shown(k) for k in self.duplicates)
        self.duplicates.clear()
        return Problem(
            message=f"the JSON object has the key(s) {keys} more than once; which value counts is ambiguous",
            file=file,
            line=line,
        )


def _parse_failure(exc: Exception) -> str | None:
    """The message for a value json could not parse, or None for an error that is not about the text."""
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON: {exc.msg} (column {exc.colno})"
    if isinstance(exc, RecursionError):
        return "invalid JSON: nested too deeply (arrays or objects hundreds of levels deep)"
    if isinstance(exc, ValueError) and "digits" in str(exc):
        return f"invalid JSON: an integer with more than {sys.get_int_max_str_digits()} digits"
    return None


def _read_jsonl(handle: BinaryIO, name: str, sink: _Sink) -> list[EvalRun]:
    # Binary lines end at "\n" alone, so a bare "\r" (inside a string or not) never splits a
    # record, and each line is decoded on its own so that a bad byte is reported at its line.
    parser = _Parser()
    decode = parser.decoder.decode
    runs: list[EvalRun] = []
    for number, raw in enumerate(handle, start=1):
        sink.budget -= len(raw)
        if sink.budget < 0:
            sink.problem(_over_budget("the file grew while being read, past the bytes left"), name, number)
            break
        if number == 1 and raw.startswith(BOM):
            raw = raw[len(BOM) :]
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            sink.problem(f"not UTF-8 text (byte {exc.start + 1} of the line: {exc.reason})", name, number)
            continue
        try:
            value = decode(text)
        except (ValueError, RecursionError) as exc:
            message = _parse_failure(exc)
            if message is None:
                raise
            parser.duplicates.clear()
            sink.problem(message, name, number)
            continue
        duplicate = parser.duplicate_problem(name, number)
        if duplicate is not None:
            sink.problems.append(duplicate)
        run = _build(value, Source(name, number), sink)
        if run is not None:
            runs.append(run)
    return runs


def _read_text(handle: BinaryIO, name: str, sink: _Sink) -> str | None:
    """The whole file as text, or None with the problem (the limit, a bad byte at its line) noted."""
    data = handle.read(max(sink.budget, 0) + 1)
    sink.budget -= len(data)
    if sink.budget < 0:
        sink.problem(_over_budget("the file grew while being read, past the bytes left"), name)
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        sink.problem(f"not UTF-8 text (byte {column} of the line: {exc.reason})", name, line)
        return None


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


class _JsonShapeError(Exception):
    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


class _JsonDocument:
    """A JSON document read value by value, so each record has its line and its own problems.

    Accepted shapes: a top-level array of records, or an object with a ``"runs"`` array.
    """

    def __init__(self, text: str, name: str, sink: _Sink) -> None:
        self.text, self.name, self.sink = text, name, sink
        self.parser = _Parser()
        self.runs: list[EvalRun] = []
        self._line, self._counted = 1, 0
        self.current = 0  # where the value being parsed starts, for errors without a position

    def line_at(self, pos: int) -> int:
        if pos < self._counted:  # never in practice: offsets only grow
            return self.text.count("\n", 0, pos) + 1
        self._line += self.text.count("\n", self._counted, pos)
        self._counted = pos
        return self._line

    def _expect(self, pos: int, what: str) -> NoReturn:
        raise json.JSONDecodeError(f"Expecting {what}", self.text, pos)

    def _value(self, pos: int) -> tuple[Any, int]:
        self.current = pos
        value, end = self.parser.decoder.raw_decode(self.text, pos)
        duplicate = self.parser.duplicate_problem(self.name, self.line_at(pos))
        if duplicate is not None:
            self.sink.problems.append(duplicate)
        return value, end

    def _records(self, pos: int) -> int:
        """Build the records of the array opening at ``pos``; the offset after it."""
        text = self.text
        pos = _skip_ws(text, pos + 1)
        if text.startswith("]", pos):
            return pos + 1
        while True:
            if pos >= len(text):
                self._expect(pos, "value")
            value, end = self._value(pos)
            run = _build(value, Source(self.name, self.line_at(pos)), self.sink)
            if run is not None:
                self.runs.append(run)
            pos = _skip_ws(text, end)
            if text.startswith(",", pos):
                pos = _skip_ws(text, pos + 1)
            elif text.startswith("]", pos):
                return pos + 1
            else:
                self._expect(pos, "',' delimiter")

    def _object(self, pos: int) -> int:
        """Read the top-level object at ``pos``, building the records of its ``"runs"``."""
        text = self.text
        found = False
        pos = _skip_ws(text, pos + 1)
        if text.startswith("}", pos):
            pos += 1
        else:
            while True:
                if not text.startswith('"', pos):
                    self._expect(pos, "property name enclosed in double quotes")
                key, pos = self._value(pos)
                pos = _skip_ws(text, pos)
                if not text.startswith(":", pos):
                    self._expect(pos, "':' delimiter")
                pos = _skip_ws(text, pos + 1)
                if key == "runs" and found:
                    raise _JsonShapeError('the key "runs" appears more than once: which runs count is ambiguous', pos)
                if key == "runs" and text.startswith("[", pos):
                    found = True
                    pos = self._records(pos)
                else:
                    if pos >= len(text):
                        self._expect(pos, "value")
                    _, pos = self._value(pos)
                pos = _skip_ws(text, pos)
                if text.startswith(",", pos):
                    pos = _skip_ws(text, pos + 1)
                elif text.startswith("}", pos):
                    pos += 1
                    break
                else:
                    self._expect(pos, "',' delimiter")
        if not found:
            raise _JsonShapeError('expected a JSON array of records or an object with a "runs" array', 0)
        return pos

    def read(self) -> None:
        text = self.text
        start = _skip_ws(text, 0)
        try:
            if text.startswith("[", start):
                end = self._records(start)
            elif text.startswith("{", start):
                end = self._object(start)
            else:
                if start < len(text):
                    self._value(start)  # a broken document is reported where it breaks
                    raise _JsonShapeError('expected a JSON array of records or an object with a "runs" array', start)
                self._expect(start, "value")
            end = _skip_ws(text, end)
            if end < len(text):
                raise json.JSONDecodeError("Extra data", text, end)
        except json.JSONDecodeError as exc:
            self.sink.problem(f"invalid JSON: {exc.msg} (column {exc.colno})", self.name, exc.lineno)
        except _JsonShapeError as exc:
            self.sink.problem(str(exc), self.name, self.line_at(exc.pos) if exc.pos else 1)
        except (ValueError, RecursionError) as exc:
            message = _parse_failure(exc)
            if message is None:
                raise
            self.sink.problem(message, self.name, self.line_at(self.current))


def _read_json(handle: BinaryIO, name: str, sink: _Sink) -> list[EvalRun]:
    text = _read_text(handle, name, sink)
    if text is None:
        return []
    document = _JsonDocument(text, name, sink)
    document.read()
    return document.runs


_CSV_CALL_FIELDS = ("cost_usd", "latency_ms", "error", "trial", "cluster")
_CSV_METRIC = "metrics."
_BOOLEAN_CELLS = {"true": True, "false": False, "1": True, "0": False}


def _csv_records(text: str, name: str, sink: _Sink) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, record) for each data row; a malformed row stops the file with a problem at its line."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    start = 1
    try:
        header = next(reader, None) or []
        missing = [f for f in FIELDS[:4] if f not in header]
        twice = sorted({f for f in header if header.count(f) > 1})
        if missing or twice:
            if missing:
                sink.problem(f"the header row lacks the column(s) {', '.join(missing)}", name, 1)
            if twice:
                sink.problem(f"the header row names the column(s) {', '.join(twice)} more than once", name, 1)
            return
        columns = {f: header.index(f) for f in (*FIELDS, *_CSV_CALL_FIELDS) if f in header}
        # A custom metric is a column "metrics.<name>".
        columns.update({f: i for i, f in enumerate(header) if f.startswith(_CSV_METRIC) and len(f) > len(_CSV_METRIC)})
        start = reader.line_num + 1
        for cells in reader:
            line, start = start, reader.line_num + 1
            if not cells:
                continue  # a blank line
            if len(cells) > len(header):
                sink.problem("more cells than header columns", name, line)
                continue
            record: dict[str, Any] = {}
            for field, index in columns.items():
                if index >= len(cells):
                    continue
                cell = cells[index]
                # CSV cannot leave a cell out, only empty: an empty optional cell means "not given".
                if cell == "" and (field in ("category", "weight", *_CSV_CALL_FIELDS) or field.startswith(_CSV_METRIC)):
                    continue
                if field.startswith(_CSV_METRIC):
                    number = parse_decimal(cell)
                    record.setdefault("metrics", {})[field[len(_CSV_METRIC) :]] = cell if number is None else number
                elif field == "error":
                    record[field] = _BOOLEAN_CELLS.get(cell.lower(), cell)
                elif field == "trial":
                    integer = parse_integer(cell)
                    record[field] = cell if integer is None else integer
                elif field in ("score", "weight", "cost_usd", "latency_ms"):
                    # Plain decimal only ("0_1" is not 1.0); other text stays a string, which the
                    # type check then names.
                    number = parse_decimal(cell)
                    record[field] = cell if number is None else number
                else:
                    record[field] = cell
            if record.get("score") == "" and record.get("error") not in (None, False):
                del record["score"]  # a failed call may leave the score out
            yield line, record
    except csv.Error as exc:
        hint = " (a quoted field that starts here is never closed)" if "end of data" in str(exc) else ""
        sink.problem(f"unreadable CSV: {exc}{hint}", name, start)


def _read_csv(handle: BinaryIO, name: str, sink: _Sink) -> list[EvalRun]:
    text = _read_text(handle, name, sink)
    if text is None:
        return []
    runs = []
    for line, record in _csv_records(text, name, sink):
        run = _build(record, Source(name, line), sink)
        if run is not None:
            runs.append(run)
    return runs


_READERS = {".json": _read_json, ".jsonl": _read_jsonl, ".csv": _read_csv}


def _over_budget(what: str) -> str:
    mib = limits.MAX_INPUT_BYTES / 2**20
    return f"{what}: the input limit is {limits.MAX_INPUT_BYTES:,} bytes ({mib:g} MiB) for all files together"


def _kind(mode: int) -> str | None:
    """What a non-regular file is, to refuse it by name (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    for test, kind in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return "not a regular file"


def _not_regular(kind: str) -> str:
    return f"is {kind}, not a regular file: refused (reading it could block or never end)"


def _open_regular(path: Path, name: str, sink: _Sink) -> BinaryIO | None:
    """The file opened for reading, or None with the problem noted: only a regular file within the limit."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        sink.problem(f"cannot read the file: {exc.strerror or exc}", name)
        return None
    info = os.fstat(fd)
    kind = _kind(info.st_mode)
    if kind is not None or info.st_size > sink.budget:
        os.close(fd)
        if kind is not None:
            sink.problem(_not_regular(kind), name)
        else:
            sink.problem(_over_budget(f"is {info.st_size:,} bytes, more than the {sink.budget:,} left"), name)
        return None
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _read_one(path: Path, name: str, sink: _Sink) -> list[EvalRun]:
    reader = _READERS.get(path.suffix.lower())
    if reader is None:
        sink.problem(f"unknown format {path.suffix!r}: use .json, .jsonl or .csv", name)
        return []
    before = len(sink.problems)
    handle = _open_regular(path, name, sink)
    if handle is None:
        return []
    with handle:
        try:
            runs = reader(handle, name, sink)
        except OSError as exc:
            sink.problem(f"cannot read the file: {exc.strerror or exc}", name)
            return []
    if not runs and len(sink.problems) == before:
        sink.problem("the file holds no EvalRun records", name)
    return runs


def _read_file(path: Path, name: str, sink: _Sink, session: Session) -> list[EvalRun]:
    """Hook for harness outputs (issue 11): the session reads them; an EvalRun file is read as before."""
    harness = session.read(path, name, sink.problems)
    if harness is not None:
        return harness
    runs = _read_one(path, name, sink)
    session.note_evalrun(name, len(runs))
    return runs


class _Glob:
    """One pattern expanded like :func:`glob.glob` (``recursive=True``), but safely.

    ``*``, ``?`` and ``[...]`` match within a path segment and skip hidden names, as
    glob does; ``**`` matches any number of directories. Unlike glob, no directory is
    entered twice (a link to an ancestor cannot loop, a link to a sibling is not walked
    again) and, with a workspace, a link to a directory outside it is refused once, by
    its name, instead of being walked.
    """

    def __init__(self, base: Path | None) -> None:
        self.base = base
        self.matches: list[str] = []
        self.problems: list[Problem] = []
        self._entered: set[tuple[int, int]] = set()

    def _name(self, path: str) -> str:
        return _lexical_name(path, self.base)

    def _enter(self, path: str) -> bool:
        """Whether to walk into the directory at ``path``: once each, and never out of the workspace."""
        try:
            info = os.stat(path)
        except OSError:
            return False
        identity = (info.st_dev, info.st_ino)
        if identity in self._entered:
            return False
        if self.base is not None and not _inside(path, self.base):
            self.problems.append(
                Problem(
                    message="is a link to a directory outside the workspace: not followed",
                    file=self._name(path),
                )
            )
            return False
        self._entered.add(identity)
        return True

    def _entries(self, directory: str) -> list[os.DirEntry[str]]:
        try:
            with os.scandir(directory or ".") as it:
                return sorted(it, key=lambda e: e.name)
        except OSError as exc:
            self.problems.append(
                Problem(message=f"cannot list the directory: {exc.strerror or exc}", file=self._name(directory))
            )
            return []

    def expand(self, pattern: str) -> list[str]:
        anchor = os.sep if pattern.startswith(os.sep) else ""
        parts = [p for p in pattern.split(os.sep) if p]
        # The literal directories before the first wildcard are the user's own words: walk from there.
        first = next(i for i, p in enumerate(parts) if glob.has_magic(p))
        directory = os.path.join(anchor, *parts[:first]) if parts[:first] else anchor
        if not os.path.isdir(directory or "."):
            return []
        if self.base is not None and not _inside(directory or ".", self.base):
            self.problems.append(
                Problem(
                    message="is outside the workspace (through a link, or absolute): not searched",
                    file=self._name(directory),
                )
            )
            return []
        self._enter(directory)
        self._walk(directory, parts[first:])
        return self.matches

    def _walk(self, directory: str, parts: list[str]) -> None:
        part, rest = parts[0], parts[1:]
        if part == "**":
            self._recurse(directory, rest)
        elif not glob.has_magic(part):
            child = os.path.join(directory, part)
            if not rest:
                if os.path.lexists(child):
                    self.matches.append(child)
            elif os.path.isdir(child):
                self._walk(child, rest)
        else:
            for entry in self._entries(directory):
                if entry.name.startswith(".") and not part.startswith("."):
                    continue
                if not fnmatch.fnmatchcase(entry.name, part):
                    continue
                child = os.path.join(directory, entry.name)
                if not rest:
                    self.matches.append(child)
                elif _is_dir(entry) and self._enter(child):
                    self._walk(child, rest)

    def _recurse(self, directory: str, rest: list[str]) -> None:
        """``**``: ``rest`` matched in ``directory`` and in every directory under it."""
        if rest:
            self._walk(directory, rest)
        for entry in self._entries(directory):
            if entry.name.startswith("."):
                continue
            child = os.path.join(directory, entry.name)
            is_dir = _is_dir(entry)
            if not rest and not is_dir:
                self.matches.append(child)  # a trailing "**" matches the files too
            if is_dir and self._enter(child):
                if not rest:
                    self.matches.append(child)
                self._recurse(child, rest)


def _inside(path: str, base: Path) -> bool:
    """Whether ``path``, links resolved, is in ``base``. realpath, unlike Path.resolve, does not
    raise on a link loop: the loop stays in the path, and opening it fails with a message."""
    return Path(os.path.realpath(path)).is_relative_to(base)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _lexical_name(path: str, base: Path | None) -> str:
    """``path`` relative to the workspace as written (links not resolved), for messages."""
    if base is not None:
        absolute = os.path.normpath(os.path.join(base, path))
        if Path(absolute).is_relative_to(base):
            return Path(absolute).relative_to(base).as_posix()
    return Path(path).as_posix()


def expand_paths(
    patterns: Iterable[str], *, root: str | os.PathLike[str] | None = None
) -> tuple[list[Path], list[Problem]]:
    """Expand paths and globs into a sorted list of distinct regular files.

    With ``root``, relative patterns are taken from it and anything that resolves
    outside it (``..``, an absolute path, a symlink out) is refused, naming the file.
    A file reached by several paths (a link, ``a/../a``) is listed once, by its first path.
    """
    base = Path(root).resolve() if root is not None else None
    candidates: set[str] = set()
    problems: list[Problem] = []
    literal: dict[str, str] = {}  # path -> the pattern that names it, for messages
    for pattern in patterns:
        full = pattern if base is None or os.path.isabs(pattern) else os.path.join(base, pattern)
        if glob.has_magic(full):
            walker = _Glob(base)
            matches = walker.expand(full)
            problems.extend(walker.problems)
            if not matches and not walker.problems:
                problems.append(Problem(message=f"no file matches {pattern!r}", file=pattern))
            candidates.update(matches)
        else:
            candidates.add(full)
            literal.setdefault(full, pattern)
    found: dict[tuple[int, int] | str, Path] = {}
    for match in sorted(candidates):
        path = Path(match)
        name = _lexical_name(match, base)
        try:
            info: os.stat_result | None = path.stat()
        except OSError:
            info = None  # reading it reports why it cannot be read
        kind = _kind(info.st_mode) if info is not None else None
        if kind == "a directory" and match not in literal:
            continue  # a wildcard matching a directory is not a request to read it
        if base is not None and not _inside(match, base):
            named = literal.get(match, name)
            problems.append(Problem(message=f"{named!r} resolves outside the workspace and is refused", file=named))
            continue
        if info is None:
            found.setdefault(match, path)
        elif kind == "a directory":
            problems.append(Problem(message="is a directory, not an EvalRun file", file=name))
        elif kind is not None:
            problems.append(Problem(message=_not_regular(kind), file=name))
        else:
            found.setdefault((info.st_dev, info.st_ino), path)
    return sorted(found.values(), key=str), problems


def display_name(path: Path, root: str | os.PathLike[str] | None) -> str:
    """The path as a user (and a GitHub annotation) names it: relative to the workspace."""
    if root is not None:
        return _lexical_name(str(path), Path(root).resolve())
    return path.as_posix()


@contextlib.contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Records hold no cycles; letting the collector rescan millions of them costs ~40% of a load."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _collapsed(problems: list[Problem]) -> list[Problem]:
    """Identical problems (same place, same message) once each, with how many times they occurred."""
    counts: dict[Problem, int] = {}
    for problem in problems:
        counts[problem] = counts.get(problem, 0) + 1
    return [
        p if n == 1 else Problem(f"{p.message} ({n} times)", p.file, p.line, p.field, p.index)
        for p, n in counts.items()
    ]


def _finish(runs: list[EvalRun], sink: _Sink, names: list[str]) -> list[EvalRun]:
    sink.problems.extend(_spelling_problems(runs, sink, names))
    sink.problems.extend(_duplicates(runs, sink.rejected, names))
    if sink.problems:
        raise InvalidEvalRuns(_collapsed(sink.problems))
    return runs


def load_runs(
    patterns: Sequence[str], *, root: str | os.PathLike[str] | None = None, session: Session | None = None
) -> list[EvalRun]:
    """Load every record from the files the patterns name; raise with every problem found.

    Files are read in sorted order whatever order the patterns come in, so the
    result (and every message) is the same for the same files. ``session`` carries the
    harness-format options in and the :class:`~leaderboard.formats.LoadReport` out.
    """
    session = session or Session()
    paths, problems = expand_paths(patterns, root=root)
    sink = _Sink()
    sink.problems.extend(problems)
    runs: list[EvalRun] = []
    names = [display_name(path, root) for path in paths]
    with _no_cyclic_gc():
        for path, name in zip(paths, names, strict=True):
            runs.extend(_read_file(path, name, sink, session))
    if not runs and not sink.problems:
        sink.problems.append(session.nothing_scored())
    return _finish(runs, sink, names)


def load_file(path: str | os.PathLike[str], *, session: Session | None = None) -> list[EvalRun]:
    """Load one file (no glob expansion); raise :class:`InvalidEvalRuns` with every problem in it."""
    sink = _Sink()
    name = Path(path).as_posix()
    session = session or Session()
    with _no_cyclic_gc():
        runs = _read_file(Path(path), name, sink, session)
    if not runs and not sink.problems:
        sink.problems.append(session.nothing_scored())
    return _finish(runs, sink, [name])
