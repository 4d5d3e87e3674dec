"""The fast path for EvalRun CSV: a file of plain rows read by DuckDB straight into columns.

DuckDB reads every cell as text (so that no cell is cast otherwise than the precise reader reads it), the
cells are checked over the columns, and the result is a :class:`~leaderboard.run_columns.RunColumns`. A
row's place is its line: the fast path vouches only for a file whose every row is one line (no blank
line, no line end inside a quoted cell), so row ``n`` is line ``n + 1``.

It vouches for a file of UTF-8 (a byte-order mark allowed) whose header names each column once, without
quotes, with ``model_id``, ``task_id``, ``metric_name`` and ``score``, and whose every row has a cell for
each column, ids as they are kept, a score written as a plain decimal in [0, 1], a category or an empty
cell, a weight that is a positive finite plain decimal or an empty cell, and every call column (cost,
latency, error, trial, cluster, ``metrics.*``) empty; other columns are ignored, as the precise reader
ignores them. Anything else gives None and the precise reader (:mod:`~leaderboard.formats.evalrun`) reads
the file again: a quote anywhere but around a whole cell (the two readers would split the line apart
differently), a line end other than ``\\n`` or ``\\r\\n``, a control character, a line longer than
Python's CSV field limit, a cell that is not plain, a row of another length, a blank line.
"""

from __future__ import annotations

import csv
from collections import Counter
from typing import Any, BinaryIO

import numpy as np

from ..numbers import DECIMAL
from ..run_columns import RunColumns
from ..validation import REQUIRED_FIELDS
from .evalrun_records import Sink
from .fast_columns import MAX_FLOAT, coded, positions, through_duckdb, utf8

# The call fields a CSV row may give, besides custom metrics (a column "metrics.<name>").
CALL_COLUMNS = ("cost_usd", "latency_ms", "error", "trial", "cluster")
METRIC_PREFIX = "metrics."
_BOM = b"\xef\xbb\xbf"
# Columns of a header the fast path reads; a wider one (a header may be hostile) takes the precise reader.
MAX_COLUMNS = 1_000
_COMMA, _FEED, _RETURN, _TAB, _QUOTE = (ord(c) for c in ',\n\r\t"')
# Every cell as text, each column once, the quoting of RFC 4180 (a quote inside a quoted cell doubled),
# nothing guessed; a row of another length is an error, and one thread keeps the rows in the file's order.
_CELLS = """
CREATE TEMP TABLE cells AS SELECT row_number() OVER () + 1 AS line, {model} AS model, {task} AS task,
    {metric} AS metric, {category} AS category, {score} AS score, {weight} AS weight, {calls} AS calls
FROM read_csv($path, columns = $columns, header = false, skip = 1, delim = ',', quote = '"', escape = '"',
    auto_detect = false, strict_mode = true, null_padding = false, parallel = false)
"""
# An empty cell is NULL: "not given" for the category, the weight and the call fields (as the precise reader
# takes it), and a problem for an id or the score.
_CHECK = f"""
SELECT count(*), count(*) FILTER (WHERE NOT COALESCE(
    model IS NOT NULL AND task IS NOT NULL AND metric IS NOT NULL AND calls
    AND regexp_full_match(score, $decimal) AND TRY_CAST(score AS DOUBLE) BETWEEN 0 AND 1
    AND (weight IS NULL OR (regexp_full_match(weight, $decimal)
                            AND TRY_CAST(weight AS DOUBLE) > 0 AND TRY_CAST(weight AS DOUBLE) <= {MAX_FLOAT})), false))
FROM cells
"""
_RECORDS = """
CREATE TEMP VIEW records AS SELECT line, model, task, metric, COALESCE(category, 'general') AS category,
    CAST(score AS DOUBLE) AS score, COALESCE(CAST(weight AS DOUBLE), 1.0) AS weight FROM cells
"""


def read_csv_columns(handle: BinaryIO, name: str, sink: Sink) -> RunColumns | None:
    """The file's rows as columns when every row is plain; None (nothing noted, nothing spent) otherwise."""

    def read(con: Any, path: str, data: bytes) -> RunColumns | None:
        header = plain_header(data)
        rows = one_line_rows(data)
        if header is None or rows is None or rows == 0:
            return None
        where = {column: i for i, column in enumerate(header)}
        calls = [f"c{i} IS NULL" for i, column in enumerate(header) if call_column(column)]

        def cell(field: str) -> str:
            return f"c{where[field]}" if field in where else "NULL"

        con.execute(
            _CELLS.format(
                model=cell("model_id"), task=cell("task_id"), metric=cell("metric_name"), score=cell("score"),
                category=cell("category"), weight=cell("weight"), calls=" AND ".join(calls) or "true",
            ),
            {"path": path, "columns": {f"c{i}": "VARCHAR" for i in range(len(header))}},
        )  # fmt: skip
        checked = con.execute(_CHECK, {"decimal": DECIMAL.pattern}).fetchone()
        if checked is None or checked[0] != rows or checked[1] != 0:
            return None
        con.execute(_RECORDS)
        return coded(con, name)

    return through_duckdb(handle, sink, ".csv", read)


def call_column(column: str) -> bool:
    """The column gives a call field (a custom metric is a column "metrics.<name>")."""
    return column in CALL_COLUMNS or (column.startswith(METRIC_PREFIX) and len(column) > len(METRIC_PREFIX))


def plain_header(data: bytes) -> list[str] | None:
    """The header's column names when it is one line without quotes of at most MAX_COLUMNS columns, names each
    column once and has the required ones; None otherwise."""
    first = data[: data.find(b"\n")] if b"\n" in data else data
    first = first.removeprefix(_BOM).removesuffix(b"\r")
    if b'"' in first:
        return None
    try:
        header = first.decode("utf-8").split(",")
    except UnicodeDecodeError:
        return None
    if len(header) > MAX_COLUMNS:
        return None
    counts = Counter(header)
    if any(n > 1 for n in counts.values()) or any(f not in counts for f in REQUIRED_FIELDS):
        return None
    return header


def one_line_rows(data: bytes) -> int | None:
    """The number of rows after the header when every line is one row as both readers split it; else None.

    A quote must open a cell (after a comma or a line end) or close one (before a comma or a line end), or
    be doubled inside a quoted cell: then both readers find the same cells. Whether a quoted cell holds a
    line end is told by the row count DuckDB gives (one row fewer than the lines).
    """
    if not utf8(data):
        return None
    raw = np.frombuffer(data, dtype=np.uint8)
    feeds = positions(raw, _FEED)
    returns = int(np.count_nonzero(raw == _RETURN))
    controls = int(np.count_nonzero(raw < 0x20)) - int(np.count_nonzero(raw == _TAB))
    if controls != feeds.size + returns or returns != data.count(b"\r\n"):
        return None  # a NUL or another control character, or a line ended by "\r" alone
    ends = np.concatenate(([-1], feeds, [raw.size]))
    if int(np.diff(ends).max()) > csv.field_size_limit():
        return None  # Python's CSV reader refuses a cell longer than its limit
    quotes = positions(raw, _QUOTE)
    if quotes.size % 2:
        return None
    if quotes.size:
        opening, closing = quotes[0::2], quotes[1::2]
        before = raw[opening - 1]  # the header has no quote: an opening quote is never the first byte
        after = raw[np.minimum(closing + 1, raw.size - 1)]
        last = closing + 1 == raw.size  # the file's end ends a line
        allowed_before = (before == _COMMA) | (before == _FEED) | (before == _QUOTE)
        allowed_after = last | (after == _COMMA) | (after == _FEED) | (after == _RETURN) | (after == _QUOTE)
        if not (allowed_before.all() and allowed_after.all()):
            return None
    lines = feeds.size + (0 if data.endswith(b"\n") else 1)
    return lines - 1
