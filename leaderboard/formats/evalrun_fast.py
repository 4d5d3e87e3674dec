"""The fast path for EvalRun JSON lines: a file of plain records decoded by DuckDB straight into columns.

The precise reader (:mod:`leaderboard.formats.evalrun`) builds and checks one record at a time, which
is most of a large load. Here DuckDB's JSON reader decodes every line into typed columns, the checks run
over the columns (and over the distinct ids, not every record), and the result is a
:class:`~leaderboard.run_columns.RunColumns`: no Python object per record.

The fast path only ever says "this file is plain, and here are its records": it vouches for a file when
every line is a JSON object with string ids, a number score in [0, 1], a string category or none, a
positive finite weight or none, and no call field (cost, latency, error, metrics, trial, cluster), with
ids already as they are kept (NFC, no surrounding whitespace, within the length bound). A byte-order mark
at the start and ``\\r\\n`` line ends are read as the precise reader reads them. Anything else (a bad line,
a key other than those fields or a field set to null, a duplicate key, a blank line, a control character,
a ``\\r`` not ending a line, a lone surrogate escape, a field of another type, DuckDB missing) gives None,
and the precise reader reads the file again and names every problem at its line, exactly as it would
have without this path.

One parse of each line gives both the values and their types: the ids are read as text and the score and
weight as JSON. DuckDB casts what it can (``"0.5"`` or ``true`` to a number, ``7`` to ``"7"``): the score
and weight keep their JSON type, and the file's bytes show that the ids are strings (see :class:`Plain`).
When the bytes cannot show it, a second parse reads each record's JSON types (and keys).
"""

from __future__ import annotations

import codecs
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np
from numpy.typing import NDArray

from ..run_columns import RunColumns
from .evalrun_records import Sink
from .fast_columns import (
    MAX_FLOAT,
    MAX_GAP,
    PATHS,
    PLAIN_TYPES,
    TYPED_FIELDS,
    coded,
    comma_before,
    connect,
    lone_surrogate,
    positions,
    trailing_comma,
)

_BLOCK = 1 << 18
_FEED, _RETURN, _COLON, _QUOTE, _BACKSLASH, _CLOSE = (ord(c) for c in '\n\r:"\\}')
_BOM = b"\xef\xbb\xbf"

# The typed read, in the file's order (DuckDB preserves insertion order, on every thread, so a row's line is its
# rowid + 1). The score and weight are read as JSON, whose text casts to a number only where it is a JSON number (a
# string keeps its quotes, a literal is no number): anything else is NULL and fails the bounds below. ``weighted``:
# a weight given (a JSON null is read as none, and shows in the colons).
_COLUMNS = {
    "model_id": "VARCHAR", "task_id": "VARCHAR", "metric_name": "VARCHAR", "score": "JSON",
    "category": "VARCHAR", "weight": "JSON",
}  # fmt: skip
_TABLE = """
CREATE TEMP TABLE lines AS SELECT
    model_id AS model, task_id AS task, metric_name AS metric, TRY_CAST(score::VARCHAR AS DOUBLE) AS score,
    category, CASE WHEN weight IS NULL THEN 1.0 ELSE TRY_CAST(weight::VARCHAR AS DOUBLE) END AS weight,
    weight IS NOT NULL AS weighted
FROM read_json($path, format = 'newline_delimited', columns = $columns)
"""
_RECORDS = """
CREATE TEMP VIEW records AS SELECT rowid + 1 AS line, model, task, metric, COALESCE(category, 'general') AS category,
    score, weight FROM lines
"""
# The rows, the rows with a value missing or out of bounds, the categories given and the weights given.
_VALUES = f"""
SELECT count(*), count(*) FILTER (WHERE NOT COALESCE(
    model IS NOT NULL AND task IS NOT NULL AND metric IS NOT NULL
    AND score BETWEEN 0 AND 1 AND weight > 0 AND weight <= {MAX_FLOAT}, false)),
    count(category), count(*) FILTER (WHERE weighted)
FROM lines
"""
# The second parse, when the bytes cannot vouch for the records: each record's JSON types and, when the colons do
# not already show there is no other key (see :class:`Plain`), its keys. DuckDB fails on a field written twice but
# ignores the keys it was not asked for.
_CHECK = """
SELECT count(*), count(*) FILTER (WHERE NOT COALESCE({0}, false))
FROM (SELECT json, json_type(json, $paths) AS types FROM read_json_objects($path, format = 'newline_delimited'))
"""
_TYPES_CHECK = _CHECK.format(PLAIN_TYPES)
_KEYS_CHECK = _CHECK.format(f"{PLAIN_TYPES} AND len(json_keys(json)) = {TYPED_FIELDS}")


@dataclass(frozen=True)
class Plain:
    """What the bytes of a file show: its size, lines and colons, and its strings when they can be counted.

    Every key of a record has its colon outside strings, so a file whose records have ``keys`` keys in all among the
    fields has at least that many colons: exactly as many means no record has another key, a key twice, a field set
    to null, or a colon in a string. When also no quote may be escaped (no ``\\"`` nor ``\\\\``) and there is no
    ``[``, every value is a string, a number, a literal or an empty object, each ``"`` opens or closes a string, and
    a string is a key or a value: with the score and weight known to be numbers, as many strings as keys and ids
    means every id is a string (DuckDB would have read a number or a literal as text).
    """

    size: int
    lines: int
    colons: int
    strings: int | None  # None: a quote may be escaped, a string may sit in an array

    def vouches(self, keys: int, strings: int) -> bool:
        return self.colons == keys and self.strings == keys + strings


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
    arguments = {"path": link}
    con = None
    # The bytes are read and checked on a thread while DuckDB makes the typed read, free to use every core.
    pool = ThreadPoolExecutor(1)
    checking = pool.submit(_read_plain, handle, sink.budget)
    try:
        con = connect(duckdb, link)
        con.execute(f"SET threads = {max(1, os.cpu_count() or 1)}")
        con.execute(_TABLE, {**arguments, "columns": _COLUMNS})
        con.execute(_RECORDS)
        valued = con.execute(_VALUES).fetchone()
        plain = checking.result()
        if plain is None or valued is None or valued[0] != plain.lines or valued[1] != 0:
            return None  # a blank line, or a line the fast path cannot vouch for
        # The keys the fields account for, and the strings among their values (each id, and a category given).
        keys, strings = 4 * plain.lines + valued[2] + valued[3], 3 * plain.lines + valued[2]
        if not plain.vouches(keys, strings):
            check = _TYPES_CHECK if plain.colons == keys else _KEYS_CHECK
            typed = con.execute(check, {**arguments, "paths": PATHS}).fetchone()
            if typed is None or typed[0] != plain.lines or typed[1] != 0:
                return None
        columns = coded(con, name, numbered=True, weighted=valued[3] > 0)
    except duckdb.Error:
        return None  # not JSON lines DuckDB reads as plain records (a duplicate key, a broken line...)
    finally:
        pool.shutdown()
        if con is not None:
            con.close()
        folder.cleanup()
    if columns is not None:
        sink.budget -= plain.size
    return columns


def _read_plain(handle: BinaryIO, budget: int) -> Plain | None:
    """What the file's bytes show when it is within ``budget`` and its bytes are plain; None otherwise.

    The bytes are read a block at a time into one buffer and checked there, in cache: no copy of the whole file is
    made (its fresh pages cost more than the checks). A file with a backslash (an escape: its surrogates and quotes
    are looked at over the whole file) or a byte past ASCII (UTF-8 and byte-order marks, across blocks) is read whole
    and checked by :func:`plain_bytes`, as is a handle that cannot read into a buffer.
    """
    readinto = getattr(handle, "readinto", None)
    if readinto is None:
        return _read_whole(handle, budget)
    # The buffer holds the last MAX_GAP bytes of the block before (at the start of the file, bytes that are neither
    # blanks nor commas), so that the blanks before a closing brace are looked through across blocks.
    buffer = bytearray(b"x" * MAX_GAP + bytes(_BLOCK))
    view, raw = memoryview(buffer), np.frombuffer(buffer, dtype=np.uint8)
    size = controls = feeds = colons = quotes = 0
    bracket = after_return = False
    last = 0
    while got := readinto(view[MAX_GAP:]):
        size += got
        if size > budget:
            return None
        end = MAX_GAP + got
        block = raw[MAX_GAP:end]
        if buffer.find(b"\\", MAX_GAP, end) != -1:
            return _read_whole(handle, budget)
        if after_return and block[0] != _FEED:
            return None  # a "\r" that ended the block before and no line
        # As signed bytes, the controls and the bytes past ASCII (negative) in one count.
        block_controls, block_feeds = (
            int(np.count_nonzero(block.view(np.int8) < 0x20)),
            int(np.count_nonzero(block == _FEED)),
        )
        after_return = False
        if block_controls != block_feeds:
            if int(block.max()) >= 0x80:
                return _read_whole(handle, budget)
            returns = np.flatnonzero(block == _RETURN)
            ended = returns[returns + 1 < got]
            if block_controls != block_feeds + returns.size or bool((block[ended + 1] != _FEED).any()):
                return None  # a control character other than a line end, or a "\r" before anything but a line feed
            after_return = ended.size != returns.size
        controls, feeds = controls + block_controls, feeds + block_feeds
        colons += int(np.count_nonzero(block == _COLON))
        quotes += int(np.count_nonzero(block == _QUOTE))
        bracket = bracket or buffer.find(b"[", MAX_GAP, end) != -1
        if comma_before(raw[:end], np.flatnonzero(block == _CLOSE) + MAX_GAP):
            return None
        last = int(block[-1])
        buffer[:MAX_GAP] = buffer[got:end]
    if size == 0 or after_return:
        return None  # nothing, or a "\r" that ends the file
    lines = feeds + (0 if last == _FEED else 1)
    return Plain(size, lines, colons, quotes // 2 if not bracket and quotes % 2 == 0 else None)


def _read_whole(handle: BinaryIO, budget: int) -> Plain | None:
    handle.seek(0)
    data = handle.read(max(budget, 0) + 1)
    return None if len(data) > budget else plain_bytes(data)


def plain_bytes(data: bytes) -> Plain | None:
    """What the bytes show when no byte is one the precise reader would read otherwise than DuckDB: a control
    character other than the line feed (a tab inside a string, a ``\\r`` not before a line feed), a byte-order mark
    but at the start, a lone surrogate escape, bad UTF-8, a comma before a closing brace (DuckDB reads it); None
    otherwise."""
    if not data:
        return None
    raw = np.frombuffer(data, dtype=np.uint8)
    # Each count over blocks of 256 KiB: a comparison's mask stays in cache instead of a file-sized array. A byte only
    # looked for is found by memchr, several times faster than a count.
    # The closing braces are found in the same pass, while each block is in cache (for the trailing commas).
    controls = feeds = colons = quotes = 0
    closes = []
    for k in range(0, raw.size, _BLOCK):
        block = raw[k : k + _BLOCK]
        controls += int(np.count_nonzero(block < 0x20))
        feeds += int(np.count_nonzero(block == _FEED))
        colons += int(np.count_nonzero(block == _COLON))
        quotes += int(np.count_nonzero(block == _QUOTE))
        closes.append(np.flatnonzero(block == _CLOSE) + k)
    if controls != feeds:
        returns = positions(raw, _RETURN)
        ended = returns[returns + 1 < raw.size]
        if controls != feeds + returns.size or ended.size != returns.size or bool((raw[ended + 1] != _FEED).any()):
            return None  # a control character other than a line end, or a "\r" before anything but a line feed
    if trailing_comma(data, np.concatenate(closes)):
        return None
    escapes = b"\\" in data
    if escapes and lone_surrogate(data):
        return None
    if not data.isascii():
        if data.find(_BOM, 1) != -1:
            return None  # a byte-order mark past the start: the precise reader refuses one outside a string
        if not _utf8(data):
            return None
    counted = b"[" not in data and quotes % 2 == 0 and not (escapes and _escaped_quote(raw))
    lines = feeds + (0 if data.endswith(b"\n") else 1)
    return Plain(len(data), lines, colons, quotes // 2 if counted else None)


def _utf8(data: bytes) -> bool:
    """The bytes are UTF-8: decoded a block at a time, so that no string the size of the file is made."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    try:
        for k in range(0, len(view), _BLOCK):
            decoder.decode(view[k : k + _BLOCK])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _escaped_quote(raw: NDArray[np.uint8]) -> bool:
    """Some quote may be escaped: a backslash stands before a quote or another backslash (``\\"``, ``\\\\``)."""
    after = positions(raw[:-1], _BACKSLASH) + 1
    return bool(np.isin(raw[after], (_QUOTE, _BACKSLASH)).any())
