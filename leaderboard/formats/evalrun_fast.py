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
import re
import tempfile
import unicodedata
from collections.abc import Sequence
from itertools import filterfalse
from operator import itemgetter
from typing import Any, BinaryIO

import numpy as np

from .. import limits
from ..run_columns import RunColumns
from .evalrun_records import Sink

# The fields of a plain record, as DuckDB reads them. DuckDB casts what it can ("0.5" to 0.5, true to 1.0,
# 7 to "7"), so each line's JSON types are read as well, and a line of any other type is not vouched for.
_COLUMNS = {
    "model_id": "VARCHAR", "task_id": "VARCHAR", "metric_name": "VARCHAR", "score": "DOUBLE",
    "category": "VARCHAR", "weight": "DOUBLE",
}  # fmt: skip
_PATHS = [f"$.{name}" for name in _COLUMNS]
_NUMBER = "('DOUBLE', 'BIGINT', 'UBIGINT')"
_MAX_FLOAT = 1.7976931348623157e308
# Escapes of UTF-16 surrogates: JSON allows them, but a lone one is not text DuckDB keeps as Python does.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abAB]")

# A read from one file keeps the lines' order in the table it fills (DuckDB preserves insertion order, on
# every thread), so a row's line is its rowid + 1: the read may use every core and needs no window over it.
_TABLE = """
CREATE TEMP TABLE lines AS SELECT
    model_id AS model, task_id AS task, metric_name AS metric, score,
    COALESCE(category, 'general') AS category, COALESCE(weight, 1.0) AS weight
FROM read_json($path, format = 'newline_delimited', columns = $columns)
"""
_NUMBERED = "CREATE TEMP VIEW records AS SELECT rowid + 1 AS line, * FROM lines"
# Each line's keys and the JSON type of each field, in one parse of the line. DuckDB fails on a field written
# twice but ignores the keys it was not asked for, so a line with any key besides the fields it gives (a
# call field, another key, a key twice, a field set to null) is one the fast path does not vouch for.
_TYPES = f"""
SELECT count(*), count(*) FILTER (WHERE NOT COALESCE(
    types[1] = 'VARCHAR' AND types[2] = 'VARCHAR' AND types[3] = 'VARCHAR' AND types[4] IN {_NUMBER}
    AND (types[5] IS NULL OR types[5] = 'VARCHAR') AND (types[6] IS NULL OR types[6] IN {_NUMBER})
    AND keys = 4 + (types[5] IS NOT NULL)::INTEGER + (types[6] IS NOT NULL)::INTEGER, false))
FROM (SELECT len(json_keys(json)) AS keys, json_type(json, $paths) AS types
      FROM read_json_objects($path, format = 'newline_delimited'))
"""
# Values out of bounds, on the same lines read typed.
_VALUES = f"""
SELECT count(*), count(*) FILTER (WHERE NOT COALESCE(
    score BETWEEN 0 AND 1 AND weight > 0 AND weight <= {_MAX_FLOAT}, false)) FROM records
"""
# Each kind of id once, numbered in sorted order (bytes of UTF-8 sort as Python sorts the strings).
_DICTIONARY = """
CREATE TEMP TABLE {0}_ids AS SELECT name, (row_number() OVER (ORDER BY name) - 1)::BIGINT AS code
FROM (SELECT DISTINCT {0} AS name FROM records)
"""
_KINDS = ("model", "task", "metric", "category")
# The codes in the rows' order is not asked of the joins: the line numbers are sorted afterwards.
_CODED = """
SELECT r.line, m.code AS model, t.code AS task, k.code AS metric, c.code AS category, r.score, r.weight
FROM records r JOIN model_ids m ON r.model = m.name JOIN task_ids t ON r.task = t.name
JOIN metric_ids k ON r.metric = k.name JOIN category_ids c ON r.category = c.name
"""


def read_jsonl(handle: BinaryIO, name: str, sink: Sink) -> RunColumns | None:
    """The file's records as columns when every line is plain; None (nothing noted, nothing spent) otherwise."""
    try:
        import duckdb
    except ImportError:
        return None  # an optional dependency: without it, every file takes the precise reader
    data = handle.read(max(sink.budget, 0) + 1)
    feeds = data.count(b"\n")
    if len(data) > sink.budget or not _plain_bytes(data, feeds):
        return None
    lines = feeds + (0 if data.endswith(b"\n") else 1)
    folder = tempfile.TemporaryDirectory(prefix="leaderboard-")
    # DuckDB reads the file this process opened (not a path that may since name another) through a link
    # of a plain name: it takes *, ? and [ in a path as a glob.
    link = os.path.join(folder.name, "records.jsonl")
    os.symlink(f"/proc/self/fd/{handle.fileno()}", link)
    con = None
    try:
        con = _connect(duckdb, link)
        con.execute(f"SET threads = {max(1, os.cpu_count() or 1)}")
        typed = con.execute(_TYPES, {"path": link, "paths": _PATHS}).fetchone()
        if typed is None or typed[0] != lines or typed[1] != 0 or lines == 0:
            return None  # a blank line, or a line the fast path cannot vouch for
        con.execute(_TABLE, {"path": link, "columns": _COLUMNS})
        con.execute(_NUMBERED)
        valued = con.execute(_VALUES).fetchone()
        if valued is None or valued[0] != lines or valued[1] != 0:
            return None
        columns = coded(con, name)
    except duckdb.Error:
        return None  # not JSON lines DuckDB reads as plain records (a duplicate key, a broken line...)
    finally:
        if con is not None:
            con.close()
        folder.cleanup()
    if columns is not None:
        sink.budget -= len(data)
    return columns


def coded(con: Any, name: str) -> RunColumns | None:
    """The columns of the table ``records`` (line, model, task, metric, category, score, weight: rows DuckDB
    found plain) of the file ``name``; None when an id is not as it is kept."""
    names = []
    for kind in _KINDS:
        con.execute(_DICTIONARY.format(kind))
        names.append(tuple(con.execute(f"SELECT name FROM {kind}_ids ORDER BY code").fetchnumpy()["name"].tolist()))
    models, tasks, metrics, categories = names
    if not (_plain_ids(models) and _plain_ids(tasks) and _plain_ids(categories) and _plain_metrics(metrics)):
        return None
    fetched = con.execute(_CODED).fetchnumpy()
    order = np.argsort(_int64(fetched["line"]), kind="stable")
    column = {key: np.asarray(values)[order] for key, values in fetched.items()}
    return RunColumns(
        models, tasks, metrics, categories, (name,),
        _int64(column["model"]), _int64(column["task"]), _int64(column["metric"]), _int64(column["category"]),
        np.zeros(len(order), dtype=np.int64), _int64(column["line"]),
        column["score"].astype(np.float64), column["weight"].astype(np.float64),
    )  # fmt: skip


def _connect(duckdb: Any, path: str) -> Any:
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


def _int64(values: Any) -> np.ndarray[Any, np.dtype[np.int64]]:
    return np.asarray(values, dtype=np.int64)


def _plain_bytes(data: bytes, feeds: int) -> bool:
    """No byte the precise reader would read otherwise than DuckDB: control characters other than the
    line feed (a carriage return, a tab inside a string), a byte-order mark, a surrogate escape, bad UTF-8."""
    if not data or data.startswith(b"\xef\xbb\xbf"):
        return False
    as_bytes = np.frombuffer(data, dtype=np.uint8)
    # In blocks of 4 MiB: the comparison's mask stays in cache instead of a file-sized array.
    block = 1 << 22
    controls = sum(int(np.count_nonzero(as_bytes[k : k + block] < 0x20)) for k in range(0, as_bytes.size, block))
    if controls != feeds:
        return False
    if _SURROGATE_ESCAPE.search(data) is not None:
        return False
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return False
    return True


def _plain_ids(names: Sequence[str]) -> bool:
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


def _plain_metrics(names: Sequence[str]) -> bool:
    """A metric name may have spaces at its ends, but may not be empty or nothing else."""
    return all(0 < len(n) <= limits.MAX_ID_LENGTH and n.strip() for n in names)
