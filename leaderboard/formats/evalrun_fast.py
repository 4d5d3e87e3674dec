"""The fast path for EvalRun JSON lines: a file of plain records decoded by DuckDB straight into columns.

The precise reader (:mod:`leaderboard.formats.evalrun`) builds and checks one record at a time, which
is most of a large load. Here DuckDB's JSON reader decodes every line into typed columns, the checks run
over the columns (and over the distinct ids, not every record), and the result is a
:class:`~leaderboard.run_columns.RunColumns`: no Python object per record.

The fast path only ever says "this file is plain, and here are its records": it vouches for a file when
every line is a JSON object with string ids, a number score in [0, 1], a string category or none, a
positive finite weight or none, and no call field (cost, latency, error, metrics, trial, cluster), with
ids already as they are kept (NFC, no surrounding whitespace, within the length bound). Anything else
(a bad line, a key other than those fields or a field set to null, a duplicate key, a blank line, a
control character, a byte-order mark, a surrogate escape, a field of another type, DuckDB missing) gives
None, and the precise reader reads the file again and names every problem at its line, exactly as it
would have without this path.
"""

from __future__ import annotations

import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from typing import BinaryIO

import numpy as np

from ..run_columns import RunColumns
from .evalrun_records import Sink
from .fast_columns import (
    COLUMNS,
    NUMBERED,
    PATHS,
    SURROGATE_ESCAPE,
    TABLE,
    TYPES,
    VALUES,
    coded,
    connect,
    no_other_key,
    trailing_comma,
)

_BLOCK = 1 << 18
_FEED, _COLON, _BACKSLASH = (ord(c) for c in "\n:\\")


def read_jsonl(handle: BinaryIO, name: str, sink: Sink) -> RunColumns | None:
    """The file's records as columns when every line is plain; None (nothing noted, nothing spent) otherwise."""
    try:
        import duckdb
    except ImportError:
        return None  # an optional dependency: without it, every file takes the precise reader
    folder = tempfile.TemporaryDirectory(prefix="leaderboard-")
    # DuckDB reads the file this process opened (not a path that may since name another) through a link
    # of a plain name: it takes *, ? and [ in a path as a glob.
    link = os.path.join(folder.name, "records.jsonl")
    os.symlink(f"/proc/self/fd/{handle.fileno()}", link)
    arguments = {"path": link, "format": "newline_delimited"}
    con = None
    # Three passes over the file at once, each free to use every core: the bytes read and checked here, each
    # record's JSON types counted by DuckDB on a second connection, and the typed read, which keeps the lines'
    # order (DuckDB preserves insertion order); a file any of them does not vouch for is None all the same.
    pool = ThreadPoolExecutor(2)
    checking = pool.submit(_read_plain, handle, sink.budget)
    try:
        con = connect(duckdb, link)
        con.execute(f"SET threads = {max(1, os.cpu_count() or 1)}")
        other = con.cursor()
        typing = pool.submit(lambda: other.execute(TYPES, {**arguments, "paths": PATHS}).fetchone())
        con.execute(TABLE, {**arguments, "columns": COLUMNS})
        con.execute(NUMBERED)
        valued = con.execute(VALUES).fetchone()
        typed, checked = typing.result(), checking.result()
        if checked is None or typed is None or valued is None:
            return None
        size, lines, colons = checked
        if typed[0] != lines or typed[1] != 0 or valued[0] != lines or valued[1] != 0:
            return None  # a blank line, or a line the fast path cannot vouch for
        if not no_other_key(con, arguments, typed[2], colons):
            return None
        columns = coded(con, name)
    except duckdb.Error:
        return None  # not JSON lines DuckDB reads as plain records (a duplicate key, a broken line...)
    finally:
        pool.shutdown()
        if con is not None:
            con.close()
        folder.cleanup()
    if columns is not None:
        sink.budget -= size
    return columns


def _read_plain(handle: BinaryIO, budget: int) -> tuple[int, int, int] | None:
    """The file's bytes, lines and colons when it is within ``budget`` and its bytes are plain; None otherwise."""
    data = handle.read(max(budget, 0) + 1)
    if len(data) > budget:
        return None
    counted = _plain_bytes(data)
    return None if counted is None else (len(data), *counted)


def _plain_bytes(data: bytes) -> tuple[int, int] | None:
    """The file's lines and colons when no byte is one the precise reader would read otherwise than DuckDB:
    control characters other than the line feed (a carriage return, a tab inside a string), a byte-order mark,
    a surrogate escape, bad UTF-8, a comma before a closing brace (DuckDB reads it); None otherwise."""
    if not data or data.startswith(b"\xef\xbb\xbf"):
        return None
    raw = np.frombuffer(data, dtype=np.uint8)
    # Each count over blocks of 256 KiB: a comparison's mask stays in cache instead of a file-sized array.
    controls = feeds = colons = escapes = 0
    for k in range(0, raw.size, _BLOCK):
        block = raw[k : k + _BLOCK]
        controls += int(np.count_nonzero(block < 0x20))
        feeds += int(np.count_nonzero(block == _FEED))
        colons += int(np.count_nonzero(block == _COLON))
        escapes += int(np.count_nonzero(block == _BACKSLASH))
    if controls != feeds or trailing_comma(data):
        return None
    if escapes and SURROGATE_ESCAPE.search(data) is not None:
        return None
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return feeds + (0 if data.endswith(b"\n") else 1), colons
