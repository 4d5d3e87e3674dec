"""The fast path for an EvalRun JSON array: a file of plain records decoded by DuckDB straight into columns.

As for JSON lines (:mod:`~leaderboard.formats.evalrun_fast`), DuckDB reads every record of the array into
typed columns, the checks run over the columns and the distinct ids, and the result is a
:class:`~leaderboard.run_columns.RunColumns`. A record's place is the line its ``{`` stands on, as the
precise reader (:mod:`~leaderboard.formats.evalrun_json`) gives it: a plain record has one ``{`` outside
its strings, so the records' braces are the file's ``{`` (or, when a string holds one, those outside
strings), found over the bytes with numpy.

It vouches for a file when the top level is an array of objects each with string ids, a number score in
[0, 1], a string category or none, a positive finite weight or none, no other key, and ids as they are kept.
Anything else gives None and the precise reader reads the file again: the ``{"runs": [...]}`` form, a
``{`` in a string of a file with an escaped quote (``\\"`` hides where strings end), a surrogate escape, bad
UTF-8, a key twice, a call field, a field of another type or out of bounds, an empty array, what DuckDB's
JSON reader refuses (a trailing comma in the array, a comment, extra data, a control character in a
string), and what it reads but Python's JSON does not (a comma before a closing brace, a form feed or
another control character between values).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, BinaryIO

import numpy as np
from numpy.typing import NDArray

from ..run_columns import RunColumns
from .evalrun_records import Sink
from .fast_columns import (
    COLUMNS,
    NUMBERED,
    PATHS,
    TABLE,
    TYPES,
    VALUES,
    coded,
    int64,
    no_other_key,
    positions,
    through_duckdb,
    trailing_comma,
    utf8,
)

_QUOTE, _OPEN, _FEED, _COLON = (ord(c) for c in '"{\n:')


def read_json_array(handle: BinaryIO, name: str, sink: Sink) -> RunColumns | None:
    """The array's records as columns when every record is plain; None (nothing noted, nothing spent) otherwise."""

    def read(con: Any, path: str, data: bytes) -> RunColumns | None:
        if not plain_bytes(data):
            return None
        arguments = {"path": path, "format": "array"}
        # Counting is the same in any order: this pass may use every core; the typed read keeps the records' order.
        con.execute(f"SET threads = {max(1, os.cpu_count() or 1)}")
        typed = con.execute(TYPES, {**arguments, "paths": PATHS}).fetchone()
        colons = int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8) == _COLON))
        if typed is None or typed[0] == 0 or typed[1] != 0 or not no_other_key(con, arguments, typed[2], colons):
            return None
        lines = record_lines(data, int(typed[0]))
        if lines is None:
            return None
        con.execute("SET threads = 1")
        con.execute(TABLE, {**arguments, "columns": COLUMNS})
        con.execute(NUMBERED)
        valued = con.execute(VALUES).fetchone()
        if valued is None or valued[0] != lines.size or valued[1] != 0:
            return None
        columns = coded(con, name, numbered=True)
        # The table numbers the records 1, 2, ... in the array's order: each becomes the line of its brace.
        return None if columns is None else dataclasses.replace(columns, line=lines[columns.line - 1])

    return through_duckdb(handle, sink, ".json", read)


def plain_bytes(data: bytes) -> bool:
    """No byte DuckDB reads otherwise than Python's JSON: a control character other than a blank between
    values (a form feed, say), a comma before a closing brace, a surrogate escape, bad UTF-8."""
    raw = np.frombuffer(data, dtype=np.uint8)
    blanks = data.count(b"\t") + data.count(b"\n") + data.count(b"\r")
    return int(np.count_nonzero(raw < 0x20)) == blanks and utf8(data) and not trailing_comma(data)


def record_lines(data: bytes, records: int) -> NDArray[np.int64] | None:
    """The line of each of the ``records`` plain records' ``{``, in order; None when they cannot be told.

    A plain record has one ``{`` of its own: when the file has no other, each is a record's. Otherwise the
    ``{`` outside strings are the records': every ``"`` opens or closes a string unless one is escaped, so
    the file is refused when one may be (``\\"``), and a ``{`` is outside strings when an even number of
    quotes stands before it.
    """
    raw = np.frombuffer(data, dtype=np.uint8)
    braces = positions(raw, _OPEN)
    if braces.size != records:
        if b'\\"' in data:
            return None
        quotes = positions(raw, _QUOTE)
        braces = braces[np.searchsorted(quotes, braces) % 2 == 0]
        if braces.size != records:
            return None
    feeds = positions(raw, _FEED)
    return int64(np.searchsorted(feeds, braces) + 1)
