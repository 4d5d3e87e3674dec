"""What the fast paths share: a locked-down DuckDB, the typed read of plain JSON records, and the columns.

A fast path (JSON lines: :mod:`~leaderboard.formats.evalrun_fast`; a JSON array:
:mod:`~leaderboard.formats.evalrun_fast_array`; CSV: :mod:`~leaderboard.formats.evalrun_fast_csv`; Parquet's
plain rows) leaves a table ``records`` (line, model, task, metric, category, score, weight) of rows DuckDB
found plain; :func:`coded` turns it into :class:`~leaderboard.run_columns.RunColumns` after checking the
distinct ids, or gives None when an id is not as the precise reader keeps it; :func:`through_duckdb` opens
the file for DuckDB and spends the bytes only when a fast path vouches for it.
"""

from __future__ import annotations

import operator
import os
import re
import tempfile
import unicodedata
from collections.abc import Callable, Sequence
from itertools import filterfalse
from operator import itemgetter
from typing import Any, BinaryIO

import numpy as np
from numpy.typing import NDArray

from .. import limits
from ..run_columns import Codes, RunColumns
from .evalrun_records import Sink

MAX_FLOAT = 1.7976931348623157e308
# Escapes of UTF-16 surrogates. JSON writes a character past U+FFFF as a pair (a high one, then a low one), which
# DuckDB decodes as Python does; a lone one is not text DuckDB keeps as Python does.
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
# From a backslash: an escaped backslash (what follows it is no escape), a pair, or a surrogate on its own (group 1).
_ESCAPE = re.compile(rb"\\(?:\\|u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|(u[dD][89a-fA-F]))")

# The fields of a plain record, as DuckDB reads them. DuckDB casts what it can ("0.5" to 0.5, true to 1.0,
# 7 to "7"), so each record's JSON types are read as well, and a record of any other type is not vouched for.
COLUMNS = {
    "model_id": "VARCHAR", "task_id": "VARCHAR", "metric_name": "VARCHAR", "score": "DOUBLE",
    "category": "VARCHAR", "weight": "DOUBLE",
}  # fmt: skip
PATHS = [f"$.{name}" for name in COLUMNS]
_NUMBER = "('DOUBLE', 'BIGINT', 'UBIGINT')"

# ``$format`` is DuckDB's: 'newline_delimited' (JSON lines) or 'array' (a JSON array of records). A read from
# one file keeps the records' order in the table it fills (DuckDB preserves insertion order, on every thread),
# so a row's line is its rowid + 1 (NUMBERED, run after TABLE): the read needs no window over it.
TABLE = """
CREATE TEMP TABLE lines AS SELECT
    model_id AS model, task_id AS task, metric_name AS metric, score,
    COALESCE(category, 'general') AS category, COALESCE(weight, 1.0) AS weight
FROM read_json($path, format = $format, columns = $columns)
"""
NUMBERED = "CREATE TEMP VIEW records AS SELECT rowid + 1 AS line, * FROM lines"
# Each record's JSON types, in one parse of it: DuckDB casts what it can, so a record whose field is of another
# type (or null) is one the fast path does not vouch for. The third count is the keys the fields account for.
PLAIN_TYPES = f"""
    types[1] = 'VARCHAR' AND types[2] = 'VARCHAR' AND types[3] = 'VARCHAR' AND types[4] IN {_NUMBER}
    AND (types[5] IS NULL OR types[5] = 'VARCHAR') AND (types[6] IS NULL OR types[6] IN {_NUMBER})"""
TYPED_FIELDS = "4 + (types[5] IS NOT NULL)::INTEGER + (types[6] IS NOT NULL)::INTEGER"
TYPES = f"""
SELECT count(*), count(*) FILTER (WHERE NOT COALESCE({PLAIN_TYPES}, false)), sum({TYPED_FIELDS})
FROM (SELECT json_type(json, $paths) AS types FROM read_json_objects($path, format = $format))
"""
# Records with a key besides the fields (a call field, another key, a key twice), counted over each record's keys:
# DuckDB fails on a field written twice but ignores the keys it was not asked for. A second parse of every record,
# run only when the file's colons do not already show there is none (see :func:`no_other_key`).
_KEYS = f"""
SELECT count(*) FILTER (WHERE len(json_keys(json)) != {TYPED_FIELDS})
FROM (SELECT json, json_type(json, $paths) AS types FROM read_json_objects($path, format = $format))
"""
# Values out of bounds, on the same lines read typed.
VALUES = f"""
SELECT count(*), count(*) FILTER (WHERE NOT COALESCE(
    score BETWEEN 0 AND 1 AND weight > 0 AND weight <= {MAX_FLOAT}, false)) FROM records
"""
# Each kind of id once, in sorted order (bytes of UTF-8 sort as Python sorts the strings). DuckDB keeps a table's
# rows in the order its query gives them (with preserve_insertion_order), so a name's code is its rowid: no window
# numbers them, and they are fetched in order.
_DICTIONARY = "CREATE TEMP TABLE {0}_ids AS SELECT DISTINCT {0} AS name FROM records ORDER BY name"
_KINDS = ("model", "task", "metric", "category")
# A kind of at most this many ids gives each row's code by a cast to an ENUM of its ids in order (a lookup in a small
# table, cheaper than a join of every row); a kind of more ids (a million tasks: an ENUM of them is slow to build and
# to cast to) is joined to its table of ids.
_FEW = 1 << 10
# With few models the task ids are about as many as the rows (a (model, task) is read once, so there are at least a
# third as many task ids as rows with three models): the tasks are then coded by one sort of the rows instead, each
# row's dense rank its code and the first row of each id naming it. About a fifth cheaper than the dictionary and
# the join with a million task ids over two million rows, a third dearer with 10,000 over 500,000, even at a tenth.
_RANKED_MODELS = 3
# The position is numbered before the sort (a window over no order keeps the rows' order).
_RANKED = """
SELECT position, dense_rank() OVER sorted - 1 AS code, lag({0}) OVER sorted IS DISTINCT FROM {0} AS first,
    CASE WHEN lag({0}) OVER sorted IS DISTINCT FROM {0} THEN {0} END AS name
FROM (SELECT row_number() OVER () - 1 AS position, {0} FROM records) WINDOW sorted AS (ORDER BY {0})
"""

# Runners often write the tasks in order: each model's tasks sorted, one model after another (a block of ``span``
# rows, every block the same ids), or each task's records together, the tasks sorted (``every`` rows a task, one a
# model). Each is checked on the rows of table ``lines`` in the file's order, each row beside the next (a positional
# join; the rowids checked too, so no order is assumed), the block layout first (the commoner) and on the first rows
# before all: the ids then need no sort nor join, a row's code is its position's.
_IN_ORDER = """
SELECT count(*) FILTER (WHERE b.i IS DISTINCT FROM a.i + 1 OR NOT COALESCE({0}, false))
FROM (SELECT rowid AS i, task FROM lines WHERE rowid < $rows - 1) a
POSITIONAL JOIN (SELECT rowid AS i, task FROM lines WHERE rowid >= 1 AND rowid < $rows) b
"""
# Each block of ``span`` rows in order (``every`` 1); or each ``every`` rows one task, the tasks in order.
_BY_BLOCK = _IN_ORDER.format("(a.i + 1) % $span = 0 OR a.task < b.task")
_BY_TASK = _IN_ORDER.format("CASE WHEN (a.i + 1) % $every = 0 THEN a.task < b.task ELSE a.task = b.task END")
# Every block of ``span`` rows the same ids as the one before it.
_REPEATED = """
SELECT count(*) FILTER (WHERE b.i IS DISTINCT FROM a.i + $span OR a.task IS DISTINCT FROM b.task)
FROM (SELECT rowid AS i, task FROM lines WHERE rowid < $rows - $span) a
POSITIONAL JOIN (SELECT rowid AS i, task FROM lines WHERE rowid >= $span) b
"""
# The ids checked as :func:`plain_ids` checks them, in DuckDB (a million task ids as Python strings take a tenth of a
# second in Python): 1 to MAX_ID_LENGTH characters (code points, as Python counts), no ASCII blank (Python's isspace)
# at either end. The ids not all ASCII (fewer characters than bytes) are checked again in Python: NFC and the other
# blanks (second count).
_ASCII_BLANKS = tuple(c for c in range(128) if chr(c).isspace())
_PLAIN = f"""
SELECT count(*) FILTER (WHERE {{0}} IS NULL OR length({{0}}) NOT BETWEEN 1 AND {limits.MAX_ID_LENGTH}
        OR ascii({{0}}) IN {_ASCII_BLANKS} OR ascii(right({{0}}, 1)) IN {_ASCII_BLANKS}),
    count(*) FILTER (WHERE strlen({{0}}) != length({{0}}))
FROM {{1}}
"""
_GLANCE = 1 << 16  # the rows looked at first: a file not in order mostly shows it there, for a fraction of the cost


def coded(con: Any, name: str, numbered: bool = False, weighted: bool = True) -> RunColumns | None:
    """The columns of the table ``records`` (line, model, task, metric, category, score, weight: rows DuckDB
    found plain) of the file ``name``; None when an id is not as it is kept. ``numbered``: each record's line is
    its rowid in the table ``lines`` plus one (a row's position), so tasks written in order are coded by it.
    ``weighted``: some record may give a weight (otherwise every weight is 1 and none is fetched)."""
    ranked: set[str] = set()
    names: dict[str, tuple[str, ...]] = {}
    codes: dict[str, Codes] = {}
    ordered: tuple[int, int] | None = None
    for kind in _KINDS:
        if kind == "task" and numbered:
            found = _in_order(con, len(names["model"]))
            if found is not None:
                names[kind], ordered = found
                continue
        if kind == "task" and len(names["model"]) <= _RANKED_MODELS:
            ranked.add(kind)
            names[kind], codes[kind] = _ranked(con, kind)
            continue
        con.execute(_DICTIONARY.format(kind))
        names[kind] = tuple(con.execute(f"SELECT name FROM {kind}_ids").fetchnumpy()["name"].tolist())
        if not all(map(operator.lt, names[kind], names[kind][1:])):
            return None  # not the order asked for (checked, as a code is a place in it)
    models, tasks, metrics, categories = (names[k] for k in _KINDS)
    if ordered is not None:
        span, every = ordered
        source = f"lines WHERE rowid < {span}" if every == 1 else f"lines WHERE rowid % {every} = 0"
    else:
        source = "records" if ranked else "task_ids"
    column_of = "name" if source == "task_ids" else "task"
    if not (plain_ids(models) and plain_ids(categories) and plain_metrics(metrics)):
        return None
    if not _plain_in_duckdb(con, column_of, source, tasks):
        return None
    # A kind of one id (one metric, say) codes every row 0: no cast, no column fetched.
    single = [k for k in _KINDS if len(names[k]) == 1 and k not in ranked]
    looked_up = [k for k in _KINDS if k not in (*ranked, *single) and not (k == "task" and ordered is not None)]
    few = [k for k in looked_up if 0 < len(names[k]) <= _FEW]
    for kind in few:
        con.execute(f"CREATE TYPE {kind}_enum AS ENUM (SELECT name FROM {kind}_ids ORDER BY name)")
    fields = "".join(
        f", enum_code(r.{k}::{k}_enum) AS {k}" if k in few else f", {k}_ids.rowid AS {k}" for k in looked_up
    )
    joins = " ".join(f"JOIN {k}_ids ON r.{k} = {k}_ids.name" for k in looked_up if k not in few)
    values = ", r.score, r.weight" if weighted else ", r.score"
    if joins or ranked:
        # Each row's place in the records, numbered before a join shuffles them: ranked codes are put by it too.
        rows = "(SELECT row_number() OVER () - 1 AS position, * FROM records) r"
        column = con.execute(f"SELECT r.position, r.line{fields}{values} FROM {rows} {joins}").fetchnumpy()
        column = _placed(int64(column.pop("position")), column)
    else:
        # One view read alone keeps the records' order.
        column = con.execute(f"SELECT r.line{fields}{values} FROM records r").fetchnumpy()
    column |= codes
    line = int64(column["line"])
    for kind in single:
        column[kind] = np.zeros(line.size, dtype=np.int64)
    if not weighted:
        column["weight"] = np.ones(line.size, dtype=np.float64)
    if ordered is not None:
        span, every = ordered
        column["task"] = (line - 1) % span // every
    return RunColumns(
        models, tasks, metrics, categories, (name,),
        int64(column["model"]), int64(column["task"]), int64(column["metric"]), int64(column["category"]),
        np.zeros(line.size, dtype=np.int64), line,
        np.asarray(column["score"], dtype=np.float64), np.asarray(column["weight"], dtype=np.float64),
    )  # fmt: skip


def _ranked(con: Any, kind: str) -> tuple[tuple[str, ...], Codes]:
    """The kind's ids in sorted order and each record's code, from one sort of the records."""
    fetched = con.execute(_RANKED.format(kind)).fetchnumpy()
    code, first = int64(fetched["code"]), np.asarray(fetched["first"], dtype=bool)
    ids = np.empty(int(np.count_nonzero(first)), dtype=object)
    ids[code[first]] = np.asarray(fetched["name"], dtype=object)[first]
    return tuple(ids.tolist()), _placed(int64(fetched["position"]), {"code": code})["code"]


def _in_order(con: Any, models: int) -> tuple[tuple[str, ...], tuple[int, int]] | None:
    """The task ids in sorted order and how a row's position gives its code (``position % span // every``) when
    the tasks are written in order (see ``_IN_ORDER``); None otherwise."""
    counted = con.execute("SELECT count(*) FROM lines").fetchone()
    rows = 0 if counted is None else int(counted[0])
    if rows == 0 or models == 0 or rows % models != 0:
        return None
    if _layout(con, _BY_BLOCK, rows, {"span": rows // models}) and (
        models == 1 or _count(con, _REPEATED, {"rows": rows, "span": rows // models}) == 0
    ):
        span, every, where = rows // models, 1, f"rowid < {rows // models}"
    elif models > 1 and _layout(con, _BY_TASK, rows, {"every": models}):
        span, every, where = rows, models, f"rowid % {models} = 0"
    else:
        return None
    fetched = con.execute(f"SELECT rowid AS i, task FROM lines WHERE {where}").fetchnumpy()
    if not np.array_equal(int64(fetched["i"]), np.arange(0, span, every)):
        return None  # not the rows asked for, in order
    return tuple(fetched["task"].tolist()), (span, every)


def _layout(con: Any, query: str, rows: int, parameters: dict[str, Any]) -> bool:
    """The rows are laid out as ``query`` asks: the first rows looked at, then all."""
    return all(_count(con, query, {**parameters, "rows": bound}) == 0 for bound in (min(rows, _GLANCE), rows))


def _plain_in_duckdb(con: Any, column: str, source: str, names: Sequence[str]) -> bool:
    """The ids of ``column`` in ``source`` (``names``, distinct) are as :func:`plain_ids` wants them."""
    found = con.execute(_PLAIN.format(column, source)).fetchone()
    if found is None or found[0] != 0:
        return False
    return found[1] == 0 or plain_ids(names)


def _count(con: Any, query: str, parameters: dict[str, Any]) -> int | None:
    found = con.execute(query, parameters).fetchone()
    return None if found is None else int(found[0])


def _placed(position: Codes, column: dict[str, Any]) -> dict[str, Any]:
    """Each column's values put at their rows' positions (a permutation of 0..n-1)."""
    if bool(np.all(position[1:] > position[:-1])):
        return column
    placed = {}
    for key, values in column.items():
        array = np.asarray(values)
        placed[key] = np.empty_like(array)
        placed[key][position] = array
    return placed


def no_other_key(con: Any, arguments: dict[str, Any], fields: int, colons: int) -> bool:
    """No record has a key besides the fields TYPES found (``fields`` keys in all, ``colons`` the file's ``:``).

    Every key of a record has its colon outside strings, so a file of records with nothing else has at least as
    many colons as keys: as many as the fields account for, and none anywhere else, means no record has another
    key (nor a key twice). Otherwise (a colon in an id, say) each record's keys are counted.
    """
    if colons == fields:
        return True
    other = con.execute(_KEYS, {**arguments, "paths": PATHS}).fetchone()
    return other is not None and other[0] == 0


def connect(duckdb: Any, path: str) -> Any:
    """An in-memory DuckDB that may read ``path`` and nothing else (no other file, no network)."""
    con = duckdb.connect(":memory:")
    # One thread unless a read asks for more; the rows keep the file's order whatever the threads (line numbers).
    con.execute("SET threads = 1")
    con.execute("SET preserve_insertion_order = true")
    con.execute("SET enable_progress_bar = false")
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute("SET allowed_paths = ?", [[path]])
    con.execute("SET enable_external_access = false")
    return con


def int64(values: Any) -> np.ndarray[Any, np.dtype[np.int64]]:
    return np.asarray(values, dtype=np.int64)


def plain_ids(names: Sequence[str]) -> bool:
    """Every id as it is kept: 1 to MAX_ID_LENGTH characters, NFC, no whitespace at either end.

    Checked over the distinct ids with passes that run in C (a million task ids take a fraction of a second).
    """
    if not names:
        return True
    if min(map(len, names)) < 1 or max(map(len, names)) > limits.MAX_ID_LENGTH:
        return False
    ends = set(map(itemgetter(0), names)) | set(map(itemgetter(-1), names))
    if any(c.isspace() for c in ends):
        return False
    return all(unicodedata.is_normalized("NFC", n) for n in filterfalse(str.isascii, names))


def plain_metrics(names: Sequence[str]) -> bool:
    """A metric name may have spaces at its ends, but may not be empty or nothing else."""
    return all(0 < len(n) <= limits.MAX_ID_LENGTH and n.strip() for n in names)


def through_duckdb(
    handle: BinaryIO, sink: Sink, suffix: str, read: Callable[[Any, str, bytes], RunColumns | None]
) -> RunColumns | None:
    """``read(con, path, data)`` on the open file (its bytes ``data``, and ``path`` for DuckDB to read it by);
    None, nothing noted and nothing spent, when DuckDB is not installed, the file is over the bytes left, DuckDB
    fails on it, or ``read`` does not vouch for it."""
    try:
        import duckdb
    except ImportError:
        return None  # an optional dependency: without it, every file takes the precise reader
    data = handle.read(max(sink.budget, 0) + 1)
    if not data or len(data) > sink.budget:
        return None
    folder = tempfile.TemporaryDirectory(prefix="leaderboard-")
    # DuckDB reads the file this process opened (not a path that may since name another) through a link
    # of a plain name: it takes *, ? and [ in a path as a glob.
    link = os.path.join(folder.name, f"records{suffix}")
    os.symlink(f"/proc/self/fd/{handle.fileno()}", link)
    con = None
    try:
        con = connect(duckdb, link)
        columns = read(con, link, data)
    except duckdb.Error:
        return None  # a file DuckDB does not read as plain records
    finally:
        if con is not None:
            con.close()
        folder.cleanup()
    if columns is not None:
        sink.budget -= len(data)
    return columns


def lone_surrogate(data: bytes) -> bool:
    """Some escape of a UTF-16 surrogate is not half of a pair (``\\ud83d\\ude00``); ``\\\\ud83d`` is no escape."""
    if _SURROGATE.search(data) is None:
        return False
    return any(found.group(1) is not None for found in _ESCAPE.finditer(data))


def utf8(data: bytes) -> bool:
    """The bytes are UTF-8 (a byte-order mark allowed) and hold no lone escape of a UTF-16 surrogate."""
    if lone_surrogate(data):
        return False
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return False
    return True


_CLOSE, _COMMA = ord("}"), ord(",")
_BLANK = np.zeros(256, dtype=bool)  # a lookup table: is the byte a blank between JSON values
_BLANK[[ord(" "), ord("\t"), ord("\n"), ord("\r")]] = True
MAX_GAP = 64  # blanks looked through before a closing brace; a longer run is not vouched for
_BLOCK = 1 << 18


def positions(raw: NDArray[np.uint8], byte: int) -> NDArray[np.intp]:
    """Where ``byte`` stands in ``raw``, found over blocks of 256 KiB: no comparison mask the size of the file (its
    pages, fresh in a new process, cost more than the comparison)."""
    found = [np.flatnonzero(raw[k : k + _BLOCK] == byte) + k for k in range(0, raw.size, _BLOCK)]
    return np.concatenate(found) if found else np.zeros(0, dtype=np.intp)


def trailing_comma(data: bytes, closes: NDArray[np.intp] | None = None) -> bool:
    """Some ``}`` follows a ``,`` with only blanks between: DuckDB reads such an object, Python's JSON refuses it.

    A ``}`` inside a string may be taken for one: the file then takes the precise reader, which is never wrong.
    ``closes``: where each ``}`` stands, when already found.
    """
    raw = np.frombuffer(data, dtype=np.uint8)
    return comma_before(raw, positions(raw, _CLOSE) if closes is None else closes)


def comma_before(raw: NDArray[np.uint8], closes: NDArray[np.intp]) -> bool:
    """Some of the ``}`` at ``closes`` in ``raw`` follows a ``,`` with only blanks between (or more than MAX_GAP
    blanks): the bytes before ``raw`` are taken to be none."""
    before = closes - 1
    for _ in range(MAX_GAP):
        before = before[before >= 0]
        previous = raw[before]
        if bool((previous == _COMMA).any()):
            return True
        blank = _BLANK[previous]
        if not blank.any():
            return False
        before = before[blank] - 1
    return True
