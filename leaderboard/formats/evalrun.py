"""The EvalRun format: one record per JSON line, a JSON array (or ``{"runs": [...]}``), or a CSV row.

Every malformed byte, line, number or object becomes a problem at file:line; the bytes read
over all files of a load are capped (:data:`~leaderboard.limits.MAX_INPUT_BYTES`, counted in
the load's :class:`~leaderboard.formats.evalrun_records.Sink`).
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any, BinaryIO

from ..numbers import parse_decimal, parse_integer
from ..paths import open_regular, over_budget
from ..records import EvalRun, Source
from ..validation import FIELDS, listed
from ._common import FileRead, ReadContext
from .evalrun_fast import read_jsonl
from .evalrun_fast_array import read_json_array
from .evalrun_fast_csv import CALL_COLUMNS, METRIC_PREFIX, read_csv_columns
from .evalrun_json import JsonDocument, KeyCheckingDecoder, parse_failure
from .evalrun_records import Sink, build

FORMATS = (".json", ".jsonl", ".csv")
BOM = b"\xef\xbb\xbf"


def read(file: FileRead, context: ReadContext) -> Sequence[EvalRun]:
    """The records of an EvalRun file, its problems noted in ``context.sink``."""
    sink = context.sink
    name = file.name
    reader = _READERS.get(file.path.suffix.lower())
    if reader is None:
        if file.path.suffix.lower() == ".parquet":
            sink.problem("not a Parquet file: it does not start with the bytes PAR1", name)
        else:
            sink.problem(f"unknown format {file.path.suffix!r}: use .json, .jsonl, .csv or Parquet", name)
        return []
    before = len(sink.problems)
    handle = open_regular(file.path, name, sink.problems, sink.budget)
    if handle is None:
        return []
    with handle:
        try:
            # Looked up here, not once: a test swaps a fast path out to compare with the precise reader alone.
            fast = {".jsonl": read_jsonl, ".json": read_json_array, ".csv": read_csv_columns}[file.path.suffix.lower()]
            columns = fast(handle, name, sink)
            if columns is not None:
                return columns
            handle.seek(0)  # the precise reader: every problem, at its line
            runs = reader(handle, name, sink)
        except OSError as exc:
            sink.problem(f"cannot read the file: {exc.strerror or exc}", name)
            return []
    if not runs and len(sink.problems) == before:
        sink.problem("the file holds no EvalRun records", name)
    return runs


def _read_jsonl(handle: BinaryIO, name: str, sink: Sink) -> list[EvalRun]:
    # Binary lines end at "\n" alone, so a bare "\r" (inside a string or not) never splits a
    # record, and each line is decoded on its own so that a bad byte is reported at its line.
    parser = KeyCheckingDecoder()
    decode = parser.decoder.decode
    runs: list[EvalRun] = []
    for number, raw in enumerate(handle, start=1):
        sink.budget -= len(raw)
        if sink.budget < 0:
            sink.problem(over_budget("the file grew while being read, past the bytes left"), name, number)
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
            message = parse_failure(exc)
            if message is None:
                raise
            parser.duplicates.clear()
            sink.problem(message, name, number)
            continue
        duplicate = parser.duplicate_problem(name, number)
        if duplicate is not None:
            sink.problems.append(duplicate)
        run = build(value, Source(name, number), sink)
        if run is not None:
            runs.append(run)
    return runs


def _read_text(handle: BinaryIO, name: str, sink: Sink) -> str | None:
    """The whole file as text, or None with the problem (the limit, a bad byte at its line) noted."""
    data = handle.read(max(sink.budget, 0) + 1)
    sink.budget -= len(data)
    if sink.budget < 0:
        sink.problem(over_budget("the file grew while being read, past the bytes left"), name)
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        sink.problem(f"not UTF-8 text (byte {column} of the line: {exc.reason})", name, line)
        return None


def _read_json(handle: BinaryIO, name: str, sink: Sink) -> list[EvalRun]:
    text = _read_text(handle, name, sink)
    if text is None:
        return []
    document = JsonDocument(text, name, sink)
    document.read()
    return document.runs


_BOOLEAN_CELLS = {"true": True, "false": False, "1": True, "0": False}


def _csv_records(text: str, name: str, sink: Sink) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, record) for each data row; a malformed row stops the file with a problem at its line."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    start = 1
    try:
        header = next(reader, None) or []
        # Counted once over the header: a per-column count of the whole header is quadratic, and a
        # header may have hundreds of thousands of columns.
        counts = Counter(header)
        missing = [f for f in FIELDS[:4] if f not in counts]
        twice = sorted(f for f, n in counts.items() if n > 1)
        if missing or twice:
            if missing:
                sink.problem(f"the header row lacks the column(s) {', '.join(missing)}", name, 1)
            if twice:
                sink.problem(f"the header row names the column(s) {listed(twice)} more than once", name, 1)
            return
        columns = {f: header.index(f) for f in (*FIELDS, *CALL_COLUMNS) if f in counts}
        # A custom metric is a column "metrics.<name>".
        columns.update({f: i for i, f in enumerate(header) if f.startswith(METRIC_PREFIX) and f != METRIC_PREFIX})
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
                if cell == "" and (field in ("category", "weight", *CALL_COLUMNS) or field.startswith(METRIC_PREFIX)):
                    continue
                if field.startswith(METRIC_PREFIX):
                    number = parse_decimal(cell)
                    record.setdefault("metrics", {})[field[len(METRIC_PREFIX) :]] = cell if number is None else number
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


def _read_csv(handle: BinaryIO, name: str, sink: Sink) -> list[EvalRun]:
    text = _read_text(handle, name, sink)
    if text is None:
        return []
    runs = []
    for line, record in _csv_records(text, name, sink):
        run = build(record, Source(name, line), sink)
        if run is not None:
            runs.append(run)
    return runs


_READERS: dict[str, Callable[[BinaryIO, str, Sink], list[EvalRun]]] = {
    ".json": _read_json,
    ".jsonl": _read_jsonl,
    ".csv": _read_csv,
}
