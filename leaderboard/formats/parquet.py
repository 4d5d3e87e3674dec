"""Parquet: EvalRun's columns in a columnar file, read with the same checks and written from validated records.

The columns are EvalRun's fields: ``model_id``, ``task_id``, ``metric_name``, ``score`` (required),
``category``, ``weight`` and the call fields ``cost_usd``, ``latency_ms``, ``error``, ``metrics``
(a map or a struct of names to numbers), ``trial``, ``cluster``; other columns are ignored, a null cell is an
absent field. A column of the wrong type is refused by name; a bad cell is a problem at
``file:row`` (rows counted from 1), with the same message the JSONL reader gives for it.

Reading and writing go through DuckDB, an optional dependency of the library and the CLI
(``pip install 'leaderboard-action[parquet]'``) that the action's image installs: its wheel is half
pyarrow's, and the same engine reads newline-delimited JSON as columns.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import tempfile
import unicodedata
from collections.abc import Iterator, Sequence
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import limits
from ..records import NO_ERROR, EvalRun, Source
from ..run_columns import RunColumns
from ..validation import CALL_FIELDS, check_fields
from ._common import FileRead, ReadContext, Refused
from .fast_columns import coded

if TYPE_CHECKING:  # pragma: no cover
    import duckdb

FORMAT = "parquet"
MAGIC = b"PAR1"
INSTALL = "pip install 'leaderboard-action[parquet]'"
# Rows of one file: about the records MAX_INPUT_BYTES holds as JSON lines. A Parquet file is small for its
# rows (dictionary and run-length encoding), so its size alone does not bound what reading it costs.
MAX_ROWS = 5_000_000

_NUMERIC = frozenset(
    {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT",
     "FLOAT", "DOUBLE"}
)  # fmt: skip
_INTEGER = frozenset(t for t in _NUMERIC if "INT" in t)
# The DuckDB types each column may have (a DECIMAL is a number too; metrics: see _type_ok).
_STRING = frozenset({"VARCHAR"})
_COLUMNS: dict[str, frozenset[str]] = {
    "model_id": _STRING, "task_id": _STRING, "metric_name": _STRING, "category": _STRING, "cluster": _STRING,
    "score": _NUMERIC, "weight": _NUMERIC, "cost_usd": _NUMERIC, "latency_ms": _NUMERIC,
    "error": _STRING | {"BOOLEAN"}, "trial": _INTEGER | _STRING,
}  # fmt: skip
_REQUIRED = ("model_id", "task_id", "metric_name", "score")
_BATCH = 100_000  # rows fetched at a time: memory follows the records kept, not the file's decoded size


def _duckdb() -> Any:
    try:
        import duckdb
    except ImportError:
        raise Refused(
            f"reading Parquet needs DuckDB, which is not installed: {INSTALL} (the action's image has it)"
        ) from None
    return duckdb


def _connect(allowed: Sequence[str]) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB that may touch the ``allowed`` files and nothing else (no other file, no network)."""
    con = _duckdb().connect(":memory:")
    # One thread: the statistics that follow are the work; a shared 2-core runner gains nothing from more.
    con.execute("SET threads = 1")
    con.execute("SET enable_progress_bar = false")  # it would write to the terminal during a long read
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute("SET allowed_paths = ?", [list(allowed)])
    con.execute("SET enable_external_access = false")
    return con  # type: ignore[no-any-return]


def _type_ok(name: str, kind: str) -> bool:
    if name == "metrics":
        # A map as DuckDB and Spark write it; a struct as pandas (through pyarrow) and Polars write a column of
        # dicts, its fields checked per row like a JSONL record's metrics.
        return kind.startswith("STRUCT(") or (
            kind.startswith("MAP(VARCHAR, ") and kind[len("MAP(VARCHAR, ") : -1] in _NUMERIC
        )
    allowed = _COLUMNS[name]
    return kind in allowed or (kind.startswith("DECIMAL") and "DOUBLE" in allowed)


def _columns(con: duckdb.DuckDBPyConnection, path: str) -> list[str]:
    """The EvalRun columns the file has, each of a type that holds the field; Refused naming any other."""
    try:
        described = con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [path]).fetchall()
        rows = con.execute("SELECT sum(num_rows) FROM parquet_file_metadata(?)", [path]).fetchone()
    except _duckdb().Error as exc:
        raise Refused(f"not a readable Parquet file: {_first_line(exc)}") from None
    count = int(rows[0] or 0) if rows else 0
    if count > MAX_ROWS:
        raise Refused(f"has {count:,} rows; a Parquet file may hold {MAX_ROWS:,}")
    types = {str(name): str(kind) for name, kind, *_ in described}
    missing = [c for c in _REQUIRED if c not in types]
    if missing:
        raise Refused(f"has no column {', '.join(missing)}: an EvalRun Parquet file has {', '.join(_REQUIRED)}")
    wanted = [c for c in (*_COLUMNS, "metrics") if c in types]
    for name in wanted:
        if not _type_ok(name, types[name]):
            raise Refused(f"column {name!r} is {types[name]}, which cannot hold the field", field=name)
    return wanted


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


# The characters Python's str.isspace() is true of, as RE2 spells them: the JSONL reader's tests, in the query.
_SPACE = r"[\t-\r\x1c-\x1f\x{85}\pZ]"


def _plain_sql(columns: Sequence[str]) -> str:
    """True for a row the JSONL reader's common path would take as it is; every other row is checked in Python.

    The test is never looser than the JSONL reader's: a row it passes needs no other check.
    """

    def plain_id(column: str) -> str:
        return (
            f'(length("{column}") BETWEEN 1 AND {limits.MAX_ID_LENGTH} AND nfc_normalize("{column}") = "{column}" '
            f'AND NOT regexp_matches("{column}", $space))'
        )

    tests = [
        plain_id("model_id"), plain_id("task_id"),
        # A metric name may have spaces at its ends, but may not be nothing else.
        f"(length(metric_name) BETWEEN 1 AND {limits.MAX_ID_LENGTH} AND NOT regexp_full_match(metric_name, $blank))",
        "(score BETWEEN 0 AND 1)",  # NULL and NaN are not
    ]  # fmt: skip
    if "category" in columns:
        tests.append(f"(category IS NULL OR {plain_id('category')})")
    if "weight" in columns:
        tests.append("(weight IS NULL OR (weight > 0 AND isfinite(CAST(weight AS DOUBLE))))")
    tests += [f'"{c}" IS NULL' for c in columns if c in (*CALL_FIELDS,)]
    return "COALESCE(" + " AND ".join(tests) + ", false)"


def is_parquet(path: Path) -> bool:
    """The file is a regular file that starts as Parquet does (a FIFO is never opened: it would wait)."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return False
        with path.open("rb") as handle:
            return handle.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def read(file: FileRead, context: ReadContext) -> Sequence[EvalRun]:
    """The records of an EvalRun Parquet file: EvalRun's own columns, trials and call fields included."""
    return read_runs(file)


def read_runs(read: FileRead) -> Sequence[EvalRun]:
    """The records of an EvalRun Parquet file; problems at file:row appended to ``read.problems``.

    The file is copied once into a DuckDB table with a ``plain`` flag per row, computed there; plain rows
    become records straight from their columns, the others go through the JSONL reader's field checks.
    """
    # DuckDB takes *, ? and [ in a path as a glob: the file is read through a link of a plain name.
    folder = tempfile.TemporaryDirectory(prefix="leaderboard-")
    path = os.path.join(folder.name, "input.parquet")
    os.symlink(os.path.abspath(read.path), path)
    con = _connect([path])
    try:
        columns = _columns(con, path)
        select = ", ".join(f'"{c}"' for c in columns)
        con.execute(
            f"CREATE TEMP TABLE rows AS SELECT file_row_number + 1 AS row, {select}, {_plain_sql(columns)} AS plain "
            "FROM read_parquet($path, file_row_number = true)",
            {"path": path, "space": f"^{_SPACE}|{_SPACE}$", "blank": f"{_SPACE}*"},
        )
        count = con.execute("SELECT count(*), count(*) FILTER (WHERE NOT plain) FROM rows").fetchone()
        total = int(count[0]) if count else 0
        if total and count is not None and count[1] == 0 and (columns_read := _as_columns(con, read.name, columns)):
            return columns_read  # every row plain: columns, no object per row
        runs: list[EvalRun] = []
        for start in range(1, total + 1, _BATCH):
            batch = con.execute(
                f"SELECT row, {select} FROM rows WHERE plain AND row >= ? AND row < ? ORDER BY row",
                [start, start + _BATCH],
            ).fetchnumpy()
            runs.extend(_plain_rows(read.name, batch))
        others = con.execute(f"SELECT row, {select} FROM rows WHERE NOT plain ORDER BY row")
        checked = [run for batch in _batches(others) for row in batch if (run := _checked(read, columns, row))]
    except _duckdb().Error as exc:
        raise Refused(f"cannot read the Parquet file: {_first_line(exc)}") from None
    finally:
        con.close()
        folder.cleanup()
    if checked:
        runs = sorted([*runs, *checked], key=_row_of)  # in the file's order, as the JSONL reader keeps it
    return runs


def _as_columns(con: duckdb.DuckDBPyConnection, name: str, columns: Sequence[str]) -> RunColumns | None:
    """Plain rows (no call field, every check passed in the query) as columns, as the JSON-lines fast path
    gives them."""
    category = "COALESCE(category, 'general')" if "category" in columns else "'general'"
    weight = "COALESCE(weight::DOUBLE, 1.0)" if "weight" in columns else "1.0"
    con.execute(
        "CREATE TEMP VIEW records AS SELECT row AS line, model_id AS model, task_id AS task, metric_name AS metric, "
        f"{category} AS category, score::DOUBLE AS score, {weight} AS weight FROM rows"
    )
    return coded(con, name)


def _row_of(run: EvalRun) -> int:
    return run.source.line if run.source is not None else 0


def _batches(result: duckdb.DuckDBPyConnection) -> Iterator[list[tuple[Any, ...]]]:
    while batch := result.fetchmany(_BATCH):
        yield batch


def _plain_rows(name: str, batch: dict[str, Any]) -> Iterator[EvalRun]:
    """Records of rows the query found plain: their columns as they are, no check left to make."""
    intern = sys.intern
    rows, models, tasks = batch["row"].tolist(), batch["model_id"].tolist(), batch["task_id"].tolist()
    metrics, scores = batch["metric_name"].tolist(), batch["score"].tolist()
    size = len(rows)
    categories = batch["category"].tolist() if "category" in batch else [None] * size
    weights = batch["weight"].tolist() if "weight" in batch else [None] * size
    for row, model, task, metric, score, category, weight in zip(
        rows, models, tasks, metrics, scores, categories, weights, strict=True
    ):
        yield EvalRun(
            intern(model), task, intern(metric), float(score), intern(category or "general"),
            1.0 if weight is None else float(weight), source=Source(name, row),
        )  # fmt: skip


def _checked(read: FileRead, columns: Sequence[str], row: tuple[Any, ...]) -> EvalRun | None:
    """A row off the common path, checked field by field as the JSONL reader checks a record."""
    line = row[0]
    record: dict[str, Any] = {c: v for c, v in zip(columns, row[1:], strict=True) if v is not None}
    for field in ("score", "weight", "cost_usd", "latency_ms"):
        value = record.get(field)
        if value is not None and not isinstance(value, (int, float)):
            record[field] = float(value)  # a DECIMAL column's value (a Decimal)
    error = record.get("error")
    if isinstance(error, str) and error.lower() in NO_ERROR:
        record["error"] = False
    elif isinstance(error, str) and error.lower() == "true":
        record["error"] = True
    if "metrics" in record:
        # A null entry is an absent metric: a struct column has every field on every row.
        metrics = dict(record["metrics"]).items()
        record["metrics"] = {n: float(v) if isinstance(v, Decimal) else v for n, v in metrics if v is not None}
    problems = check_fields(record, {"file": read.name, "line": line})
    if problems:
        read.problems.extend(problems)
        return None
    ids = {f: _nfc(record[f]) for f in ("model_id", "task_id", "metric_name")}
    calls = {f: record[f] for f in CALL_FIELDS if f in record and f != "metrics"}
    if record.get("metrics"):
        calls["metrics"] = {sys.intern(n): float(v) for n, v in record["metrics"].items()}
    if "cluster" in calls:
        calls["cluster"] = sys.intern(calls["cluster"])
    for field in ("cost_usd", "latency_ms"):
        if field in calls:
            calls[field] = float(calls[field])
    score = record.get("score")
    return EvalRun(
        sys.intern(ids["model_id"]), ids["task_id"], sys.intern(ids["metric_name"]),
        None if score is None else float(score), sys.intern(_nfc(record.get("category", "general"))),
        float(record.get("weight", 1.0)), source=Source(read.name, line), **calls,
    )  # fmt: skip


def _nfc(text: str) -> str:
    """An id as the JSONL reader keeps it: NFC."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


# --- writing ------------------------------------------------------------------------------------------------

_WRITTEN = {
    "model_id": "VARCHAR", "task_id": "VARCHAR", "metric_name": "VARCHAR", "score": "DOUBLE",
    "category": "VARCHAR", "weight": "DOUBLE", "cost_usd": "DOUBLE", "latency_ms": "DOUBLE", "error": "VARCHAR",
    "metrics": "MAP(VARCHAR, DOUBLE)", "trial": "BIGINT", "cluster": "VARCHAR",
}  # fmt: skip


def _row(run: EvalRun, text_trials: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "model_id": run.model_id, "task_id": run.task_id, "metric_name": run.metric_name, "score": run.score,
        "category": run.category, "weight": run.weight, "cost_usd": run.cost_usd, "latency_ms": run.latency_ms,
        # A failed call is "true" or its reason; the reader maps "true" back to True.
        "error": None if run.error is False else ("true" if run.error is True else run.error),
        "metrics": dict(run.metrics) or None, "cluster": run.cluster,
        "trial": None if run.trial is None else (str(run.trial) if text_trials else run.trial),
    }  # fmt: skip
    return out


def write_runs(runs: Sequence[EvalRun], path: str | os.PathLike[str]) -> None:
    """Write validated records as Parquet, in the columns :func:`read_runs` reads back to the same records.

    Records held as columns go to DuckDB as they are (:func:`_write_columns`). Other records go to DuckDB as
    JSON lines in a temporary file, then one ``COPY`` writes the Parquet file with declared column types (a
    column is typed even when every value in it is null).
    """
    target = Path(path)
    if isinstance(runs, RunColumns):
        _write_columns(runs, target)
        return
    text_trials = any(isinstance(run.trial, str) for run in runs)
    columns = {**_WRITTEN, "trial": "VARCHAR" if text_trials else "BIGINT"}
    _duckdb()  # refused before anything is written when DuckDB is not there
    # In the system's temporary folder, whose path has no glob character for DuckDB to expand.
    handle, staging = tempfile.mkstemp(prefix="leaderboard-", suffix=".jsonl")
    con = None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.writelines(json.dumps(_row(run, text_trials), ensure_ascii=False) + "\n" for run in runs)
        con = _connect([staging, str(target.absolute())])
        con.execute(
            "COPY (SELECT * FROM read_json(?, format = 'newline_delimited', columns = ?)) TO "
            f"'{_quoted(target.absolute())}' (FORMAT parquet, COMPRESSION zstd, USE_TMP_FILE false)",
            [staging, columns],
        )
    finally:
        if con is not None:
            con.close()
        with contextlib.suppress(OSError):
            os.unlink(staging)


# The plain records' columns, decoded from their codes, in the order and types the JSON-lines staging writes:
# the same Parquet file either way. The call fields are typed nulls.
_FROM_CODES = """
COPY (
    SELECT m.name AS model_id, t.name AS task_id, k.name AS metric_name, r.score, c.name AS category, r.weight,
        NULL::DOUBLE AS cost_usd, NULL::DOUBLE AS latency_ms, NULL::VARCHAR AS error,
        NULL::MAP(VARCHAR, DOUBLE) AS metrics, NULL::BIGINT AS trial, NULL::VARCHAR AS cluster
    FROM codes r JOIN model_names m ON r.model = m.code JOIN task_names t ON r.task = t.code
    JOIN metric_names k ON r.metric = k.code JOIN category_names c ON r.category = c.code
    ORDER BY r.row
) TO '{target}' (FORMAT parquet, COMPRESSION zstd, USE_TMP_FILE false)
"""


def _write_columns(runs: RunColumns, target: Path) -> None:
    """Plain records held as columns written straight from their arrays: no Python object per record."""
    con = _connect([str(target.absolute())])
    try:
        con.register(
            "codes",
            {
                "row": np.arange(len(runs), dtype=np.int64), "model": runs.model, "task": runs.task,
                "metric": runs.metric, "category": runs.category, "score": runs.score, "weight": runs.weight,
            },
        )  # fmt: skip
        for kind, names in (
            ("model", runs.models), ("task", runs.tasks), ("metric", runs.metrics), ("category", runs.categories)
        ):  # fmt: skip
            # One Python string a distinct id, already held by the columns.
            codes = np.arange(len(names), dtype=np.int64)
            con.register(f"{kind}_names", {"code": codes, "name": np.array(names, dtype=object)})
        con.execute(_FROM_CODES.format(target=_quoted(target.absolute())))
    finally:
        con.close()


def _quoted(path: Path) -> str:
    """A path inside a SQL string literal (COPY TO takes no parameter)."""
    return str(path).replace("'", "''")


def export(runs: Sequence[EvalRun], path: str | os.PathLike[str], shown: str | None = None) -> str | None:
    """:func:`write_runs` for the CLI and the action: None when written, else the one line that says why not
    (naming the file ``shown``, by default ``path``)."""
    name = shown if shown is not None else Path(path).as_posix()
    try:
        write_runs(runs, path)
    except Refused as refused:
        return f"cannot write {name}: {refused}"
    except OSError as exc:
        return f"cannot write {name}: {exc.strerror or exc}"
    except _duckdb().Error as exc:  # evaluated only when DuckDB is there: without it, write_runs refused
        return f"cannot write {name}: {_first_line(exc)}"
    return None
