"""Loading EvalRun records from JSON, JSONL and CSV files, remembering where each came from."""

from __future__ import annotations

import contextlib
import csv
import gc
import glob
import json
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from operator import attrgetter
from pathlib import Path
from typing import Any

import numpy as np

from .formats import Session
from .records import EvalRun, Source
from .validation import FIELDS, InvalidEvalRuns, Problem, check_fields, duplicate_problem

FORMATS = (".json", ".jsonl", ".csv")


_INF = float("inf")


class _Sink:
    """What reading collects: problems, and every (model, task) seen, valid record or not."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        # (model, task, where) of records rejected for another field: they can still be duplicates.
        self.rejected: list[tuple[str, str, Source]] = []


def _build(record: object, source: Source, sink: _Sink) -> EvalRun | None:
    """The EvalRun a parsed record describes, or None with its problems noted in ``sink``."""
    if not isinstance(record, dict):
        sink.problems.append(_not_an_object(record, source))
        return None
    get = record.get
    model_id, task_id, metric = get("model_id"), get("task_id"), get("metric_name")
    score, category, weight = get("score"), get("category", "general"), get("weight", 1.0)
    identified = isinstance(model_id, str) and isinstance(task_id, str) and model_id.strip() and task_id.strip()
    # The common case, checked inline (a million records should load in seconds); anything
    # unusual goes through check_fields, which says exactly what is wrong.
    if (
        identified
        and type(metric) is str
        and type(category) is str
        and (type(score) is float or type(score) is int)
        and (type(weight) is float or type(weight) is int)
        and 0.0 <= score <= 1.0
        and 0.0 < weight < _INF
        and metric.strip()
        and category.strip()
    ):
        # Model ids, metrics and categories repeat on every line: keep one copy of each.
        return EvalRun(
            sys.intern(str(model_id)), str(task_id), sys.intern(metric), float(score), sys.intern(category),
            float(weight), source,
        )  # fmt: skip
    problems = check_fields(record, {"file": source.file, "line": source.line})
    if not problems:  # pragma: no cover - the fast path accepts every valid record
        problems = [Problem("record rejected", source.file, source.line)]
    sink.problems.extend(problems)
    if identified:
        sink.rejected.append((str(model_id), str(task_id), source))  # so a duplicate is still reported
    return None


def _duplicates(runs: list[EvalRun], rejected: list[tuple[str, str, Source]], files: list[str]) -> list[Problem]:
    """The same (model, task) twice would count a task twice: name both places.

    Pairs are coded as integers and sorted, so finding them costs 8 bytes a record
    rather than an index of tuples as large as the records.
    """
    models = [*map(attrgetter("model_id"), runs), *(r[0] for r in rejected)]
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

    def entry(index: int) -> tuple[str, str, Source]:
        if index < len(runs):
            run = runs[index]
            assert run.source is not None
            return run.model_id, run.task_id, run.source
        return rejected[index - len(runs)]

    rank = {name: i for i, name in enumerate(files)}
    problems = []
    for members in groups.values():
        seen = sorted((entry(i) for i in members), key=lambda e: (rank.get(e[2].file, -1), e[2].line))
        first = seen[0][2]
        for model_id, task_id, source in seen[1:]:
            problems.append(
                duplicate_problem(model_id, task_id, str(first), {"file": source.file, "line": source.line})
            )
    return problems


def _not_an_object(value: object, source: Source) -> Problem:
    return Problem(
        message=f"each record must be a JSON object with the EvalRun fields, got {type(value).__name__}",
        file=source.file,
        line=source.line,
    )


def _read_jsonl(path: Path, name: str, sink: _Sink) -> Iterator[EvalRun]:
    # newline="" keeps a lone "\r" inside a JSON string from being taken for a line break;
    # "\r\n" endings are whitespace to the JSON parser.
    with path.open(encoding="utf-8-sig", newline="") as handle:
        for number, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            source = Source(name, number)
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                sink.problems.append(
                    Problem(message=f"invalid JSON: {exc.msg} (column {exc.colno})", file=name, line=number)
                )
                continue
            run = _build(value, source, sink)
            if run is not None:
                yield run


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


class _JsonShapeError(Exception):
    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


def _element_offsets(text: str, pos: int, decoder: json.JSONDecoder) -> list[int]:
    """Offsets of the elements of the (well-formed) array opening at ``pos``."""
    offsets: list[int] = []
    pos = _skip_ws(text, pos + 1)
    while text[pos] != "]":
        offsets.append(pos)
        _, pos = decoder.raw_decode(text, pos)
        pos = _skip_ws(text, pos)
        if text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
    return offsets


def _runs_offset(text: str, pos: int, decoder: json.JSONDecoder) -> int:
    """Offset of the value of the last "runs" key (the one json keeps) of the object at ``pos``."""
    found = pos
    pos = _skip_ws(text, pos + 1)
    while text[pos] != "}":
        key, pos = decoder.raw_decode(text, pos)
        pos = _skip_ws(text, _skip_ws(text, pos) + 1)  # past the ':'
        if key == "runs":
            found = pos
        _, pos = decoder.raw_decode(text, pos)
        pos = _skip_ws(text, pos)
        if text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
    return found


def _json_records(text: str) -> list[tuple[int, Any]]:
    """The records of a JSON document with their offsets: a top-level array or ``{"runs": [...]}``."""
    document = json.loads(text)  # first, so a broken file is reported where it breaks
    decoder = json.JSONDecoder()
    start = _skip_ws(text, 0)
    if isinstance(document, list):
        return list(zip(_element_offsets(text, start, decoder), document, strict=True))
    if isinstance(document, dict) and isinstance(document.get("runs"), list):
        return list(
            zip(_element_offsets(text, _runs_offset(text, start, decoder), decoder), document["runs"], strict=True)
        )
    raise _JsonShapeError('expected a JSON array of records or an object with a "runs" array', start)


def _read_json(path: Path, name: str, sink: _Sink) -> Iterator[EvalRun]:
    text = path.read_text(encoding="utf-8-sig")
    line = 1
    last = 0
    try:
        for offset, value in _json_records(text):
            line += text.count("\n", last, offset)
            last = offset
            run = _build(value, Source(name, line), sink)
            if run is not None:
                yield run
    except json.JSONDecodeError as exc:
        sink.problems.append(
            Problem(message=f"invalid JSON: {exc.msg} (column {exc.colno})", file=name, line=exc.lineno)
        )
    except _JsonShapeError as exc:
        sink.problems.append(Problem(message=str(exc), file=name, line=text.count("\n", 0, exc.pos) + 1))


def _read_csv(path: Path, name: str, sink: _Sink) -> Iterator[EvalRun]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle, strict=True)
        header = reader.fieldnames or []
        missing = [f for f in FIELDS[:4] if f not in header]
        if missing:
            sink.problems.append(
                Problem(message=f"the header row lacks the column(s) {', '.join(missing)}", file=name, line=1)
            )
            return
        start = reader.line_num + 1
        for row in reader:
            source = Source(name, start)
            start = reader.line_num + 1
            if None in row:
                sink.problems.append(Problem(message="more cells than header columns", file=name, line=source.line))
                continue
            record: dict[str, Any] = {}
            for field in FIELDS:
                cell = row.get(field)
                # CSV cannot leave a cell out, only empty: an empty optional cell means "not given".
                if cell is None or (field in ("category", "weight") and cell == ""):
                    continue
                record[field] = cell
            for field in ("score", "weight"):
                if field in record:
                    # Left a string when it is not a number, so that the type check names it.
                    with contextlib.suppress(ValueError):
                        record[field] = float(record[field])
            run = _build(record, source, sink)
            if run is not None:
                yield run


_READERS = {".json": _read_json, ".jsonl": _read_jsonl, ".csv": _read_csv}


def _read_one(path: Path, name: str, sink: _Sink) -> list[EvalRun]:
    reader = _READERS.get(path.suffix.lower())
    if reader is None:
        sink.problems.append(Problem(message=f"unknown format {path.suffix!r}: use .json, .jsonl or .csv", file=name))
        return []
    before = len(sink.problems)
    try:
        runs = list(reader(path, name, sink))
    except UnicodeDecodeError as exc:
        sink.problems.append(Problem(message=f"not UTF-8 text (byte {exc.start}: {exc.reason})", file=name))
        return []
    except csv.Error as exc:
        sink.problems.append(Problem(message=f"unreadable CSV: {exc}", file=name))
        return []
    except OSError as exc:
        sink.problems.append(Problem(message=f"cannot read the file: {exc.strerror or exc}", file=name))
        return []
    if not runs and len(sink.problems) == before:
        sink.problems.append(Problem(message="the file holds no EvalRun records", file=name))
    return runs


def _read_file(path: Path, name: str, sink: _Sink, session: Session) -> list[EvalRun]:
    """Hook for harness outputs (issue 11): the session reads them; an EvalRun file is read as before."""
    harness = session.read(path, name, sink.problems)
    if harness is not None:
        return harness
    runs = _read_one(path, name, sink)
    session.note_evalrun(name, len(runs))
    return runs


def expand_paths(
    patterns: Iterable[str], *, root: str | os.PathLike[str] | None = None
) -> tuple[list[Path], list[Problem]]:
    """Expand paths and globs into a sorted list of files.

    With ``root``, relative patterns are taken from it and anything that resolves
    outside it (``..``, an absolute path, a symlink out) is refused.
    """
    base = Path(root).resolve() if root is not None else None
    found: set[Path] = set()
    problems: list[Problem] = []
    for pattern in patterns:
        full = pattern if base is None or os.path.isabs(pattern) else str(base / pattern)
        matches = sorted(glob.glob(full, recursive=True)) if glob.has_magic(full) else [full]
        if not matches:
            problems.append(Problem(message=f"no file matches {pattern!r}", file=pattern))
            continue
        for match in matches:
            path = Path(match)
            if base is not None and not path.resolve().is_relative_to(base):
                problems.append(
                    Problem(message=f"{pattern!r} resolves outside the workspace and is refused", file=pattern)
                )
                continue
            if path.is_dir():
                if not glob.has_magic(full):
                    problems.append(Problem(message="is a directory, not an EvalRun file", file=pattern))
                continue
            found.add(path)
    return sorted(found, key=str), problems


def display_name(path: Path, root: str | os.PathLike[str] | None) -> str:
    """The path as a user (and a GitHub annotation) names it: relative to the workspace."""
    if root is not None:
        try:
            return path.resolve().relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            pass
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
    sink.problems.extend(_duplicates(runs, sink.rejected, names))
    if not runs and not sink.problems:
        sink.problems.append(session.nothing_scored())
    if sink.problems:
        raise InvalidEvalRuns(sink.problems)
    return runs


def load_file(path: str | os.PathLike[str], *, session: Session | None = None) -> list[EvalRun]:
    """Load one file (no glob expansion); raise :class:`InvalidEvalRuns` with every problem in it."""
    sink = _Sink()
    name = Path(path).as_posix()
    session = session or Session()
    with _no_cyclic_gc():
        runs = _read_file(Path(path), name, sink, session)
    sink.problems.extend(_duplicates(runs, sink.rejected, [name]))
    if not runs and not sink.problems:
        sink.problems.append(session.nothing_scored())
    if sink.problems:
        raise InvalidEvalRuns(sink.problems)
    return runs
