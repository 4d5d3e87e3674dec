"""Loading at the speed of the data: the project's loader against the columnar floor, in one run.

    python benchmarks/bench_load.py                          # 50 models x 10,000 tasks (500,000 records)
    python benchmarks/bench_load.py --models 2 --tasks 200000
    python benchmarks/bench_load.py --wheels                 # also the wheel sizes (pip download --no-deps)
    python benchmarks/bench_load.py --models 2 --tasks 1000000 --no-candidates --with-baseline
    python benchmarks/bench_load.py --no-candidates --other-formats   # also the CLI on a JSON array and on CSV

One synthetic EvalRun JSONL file (about 55 MB at the default size) and the same records as Parquet are
written to a temporary folder, then read by every candidate in this process, each once after a warm-up
of its import: the project's ``load_runs``, ``json.loads`` and ``orjson.loads`` per line, ``msgspec``
decoding each line into a typed struct, the columnar readers (pyarrow, DuckDB, Polars; each skipped
when not installed), and the whole CLI (``python -m leaderboard FILE --json out``) as a child process,
on the JSONL and on the Parquet file, with its peak resident memory (``ru_maxrss`` from ``wait4`` in a small
process that forks it).
Ratios are against the fastest columnar read of the JSONL file: the floor a typed fast path aims at.

The optional readers are for measuring only; only what the decision in docs/parquet.md names is a
dependency of the project.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from leaderboard import load_runs  # noqa: E402
from leaderboard.formats import evalrun  # noqa: E402

WHEELS = ("pyarrow", "msgspec", "orjson", "polars", "polars-runtime-32", "duckdb", "fastparquet", "pandas")


def write_suite(folder: Path, models: int, tasks: int, seed: int = 0, name: str = "runs.jsonl") -> Path:
    """An EvalRun JSONL file: every model on every task, scores on 0-1, seven categories (``seed``: the noise;
    the models' skills and the tasks' difficulties are the same for every seed, as a baseline's would be)."""
    rng = np.random.default_rng(0)
    skill = rng.uniform(0.3, 0.7, models)
    difficulty = rng.uniform(0.0, 1.0, tasks)
    noise = np.random.default_rng(seed).normal(0, 0.1, (models, tasks))
    scores = np.clip(0.5 * skill[:, None] + 0.5 * difficulty[None, :] + noise, 0, 1)
    path = folder / name
    with path.open("w") as out:
        for m in range(models):
            model = f"org/model-{m:04d}"
            for t in range(tasks):
                record = {"model_id": model, "task_id": f"task-{t:06d}", "metric_name": "acc"}
                out.write(json.dumps({**record, "score": float(scores[m, t]), "category": f"cat-{t % 7}"}) + "\n")
    return path


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    gc.collect()
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def _lines(path: Path) -> list[bytes]:
    with path.open("rb") as handle:
        return handle.readlines()


def candidates(jsonl: Path, parquet: Path | None) -> dict[str, tuple[str, Callable[[], object]]]:
    """name -> (kind, reader): kind "columnar" marks the floor the ratios are taken against."""

    def precise_only() -> object:
        # The precise reader alone: what every file took before the fast path.
        fast = evalrun.read_jsonl
        evalrun.read_jsonl = lambda handle, name, sink: None  # type: ignore[assignment]
        try:
            return len(load_runs([str(jsonl)]))
        finally:
            evalrun.read_jsonl = fast

    out: dict[str, tuple[str, Callable[[], object]]] = {
        "load_runs (the project, JSONL: the fast path)": ("project", lambda: len(load_runs([str(jsonl)]))),
        "load_runs, the precise reader only (before)": ("project", precise_only),
        "json.loads per line, no checks": ("rows", lambda: [json.loads(line) for line in _lines(jsonl)]),
    }
    if parquet is not None:
        out["load_runs (the project, Parquet)"] = ("project", lambda: len(load_runs([str(parquet)])))
    try:
        import orjson

        out["orjson.loads per line, no checks"] = ("rows", lambda: [orjson.loads(line) for line in _lines(jsonl)])
    except ImportError:
        pass
    try:
        import msgspec

        class Record(msgspec.Struct, forbid_unknown_fields=False):
            model_id: str
            task_id: str
            metric_name: str
            score: float
            category: str = "general"
            weight: float = 1.0

        decoder = msgspec.json.Decoder(Record)

        def typed() -> object:
            rows = decoder.decode_lines(jsonl.read_bytes())
            return np.fromiter((r.score for r in rows), float, len(rows))

        out["msgspec typed struct per line (decode_lines)"] = ("rows", typed)
    except ImportError:
        pass
    try:
        import pyarrow.json as pa_json
        import pyarrow.parquet as pq

        out["pyarrow.json.read_json"] = ("columnar", lambda: pa_json.read_json(jsonl).column("score").to_numpy())
        if parquet is not None:
            out["pyarrow.parquet.read_table"] = ("parquet", lambda: pq.read_table(parquet).column("score").to_numpy())
    except ImportError:
        pass
    try:
        import duckdb

        def duck(sql: str) -> Callable[[], object]:
            def run() -> object:
                with duckdb.connect() as con:
                    return con.execute(sql).fetchnumpy()

            return run

        columns = "model_id, task_id, score"
        out["duckdb read_json (3 columns to numpy)"] = (
            "columnar",
            duck(f"SELECT {columns} FROM read_json('{jsonl}', format='newline_delimited')"),
        )
        if parquet is not None:
            out["duckdb read_parquet (3 columns to numpy)"] = (
                "parquet",
                duck(f"SELECT {columns} FROM read_parquet('{parquet}')"),
            )
    except ImportError:
        pass
    try:
        import polars as pl

        out["polars read_ndjson"] = ("columnar", lambda: pl.read_ndjson(jsonl)["score"].to_numpy())
        if parquet is not None:
            out["polars read_parquet"] = ("parquet", lambda: pl.read_parquet(parquet)["score"].to_numpy())
    except ImportError:
        pass
    return out


def warm_up(folder: Path) -> None:
    """DuckDB imported and its JSON reader run once on a small file: the first reader measured pays no start-up."""
    small = write_suite(folder, 2, 10, name="warm-up.jsonl")
    load_runs([str(small)])
    try:
        import duckdb

        with duckdb.connect() as con:
            con.execute(f"SELECT * FROM read_json('{small}', format='newline_delimited')").fetchnumpy()
    except ImportError:
        pass


def write_parquet(jsonl: Path) -> Path | None:
    try:
        import duckdb
    except ImportError:
        return None
    path = jsonl.with_suffix(".parquet")
    with duckdb.connect() as con:
        con.execute(
            f"COPY (SELECT * FROM read_json('{jsonl}', format='newline_delimited')) TO '{path}' (FORMAT parquet)"
        )
    return path


def write_other_formats(jsonl: Path) -> list[Path]:
    """The same records as a JSON array (one record a line) and as CSV (a header, then one row a record), in order:
    the files the other two fast paths read."""
    try:
        import duckdb
    except ImportError:
        return []
    paths = [jsonl.with_suffix(".json"), jsonl.with_suffix(".csv")]
    with duckdb.connect() as con:
        select = f"SELECT * FROM read_json('{jsonl}', format='newline_delimited')"
        con.execute(f"COPY ({select}) TO '{paths[0]}' (FORMAT json, ARRAY true)")
        con.execute(f"COPY ({select}) TO '{paths[1]}' (FORMAT csv, HEADER true)")
    return paths


# Forks the CLI from a small process: a child's ru_maxrss keeps its parent's resident size at the fork (Linux
# carries the high-water mark across exec), so forking from this process, which holds the loaded records,
# would report this process's memory rather than the CLI's.
_WRAPPER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.execv(sys.executable, [sys.executable, "-m", "leaderboard", *sys.argv[1:]])
_, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss, usage.ru_utime + usage.ru_stime)
"""


def run_cli(
    data: Path, folder: Path, code: Path = ROOT, baseline: Path | None = None
) -> tuple[float, float, float] | None:
    """Wall seconds, peak MiB and CPU seconds (user + system: steadier than the wall on a shared machine)
    of ``python -m leaderboard DATA --json out`` as a child process, the package taken from ``code`` (a
    checkout); with ``baseline``, ``--baseline BASELINE`` too."""
    report = folder / f"{data.stem}-{code.name}-report.json"
    start = time.perf_counter()
    command = [sys.executable, "-c", _WRAPPER, str(data), "--json", str(report)]
    if baseline is not None:
        command += ["--baseline", str(baseline)]
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run(command, cwd=code, capture_output=True, text=True, check=False, env=env)
    seconds = time.perf_counter() - start
    status, peak_kib, cpu = done.stdout.split()
    if int(status) != 0:
        print(f"the CLI failed on {data.name}: {done.stderr[-500:]}", file=sys.stderr)
        return None
    return seconds, int(peak_kib) / 1024, float(cpu)


def wheel_sizes(folder: Path) -> dict[str, float]:
    """MB of each wheel for CPython 3.11 on manylinux x86_64, as pip downloads it."""
    sizes: dict[str, float] = {}
    target = folder / "wheels"
    for name in WHEELS:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
             "--python-version", "3.11", "--platform", "manylinux_2_28_x86_64", "--platform",
             "manylinux_2_17_x86_64", "--platform", "manylinux2014_x86_64", "-d", str(target), name],
            capture_output=True, check=False,
        )  # fmt: skip
        stem = name.replace("-", "_").lower()
        found = [w for w in target.glob("*.whl") if w.name.lower().startswith(stem + "-")]
        if found:
            sizes[name] = found[0].stat().st_size / 1e6
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, default=50)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--wheels", action="store_true", help="also download the candidate wheels and size them")
    parser.add_argument("--no-cli", action="store_true", help="skip the whole-CLI runs")
    parser.add_argument("--before", type=Path, help="a checkout of the code before: its CLI is measured too")
    parser.add_argument("--no-candidates", action="store_true", help="only the project's loader and the floor")
    parser.add_argument("--repeat", type=int, default=1, help="each reader's best of this many runs")
    parser.add_argument("--with-baseline", action="store_true", help="also the CLI with a baseline of the same size")
    parser.add_argument(
        "--other-formats", action="store_true", help="also the CLI on the same records as a JSON array and as CSV"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        jsonl = write_suite(folder, args.models, args.tasks)
        parquet = write_parquet(jsonl)
        records = args.models * args.tasks
        print(f"{args.models} models x {args.tasks:,} tasks = {records:,} records; "
              f"JSONL {jsonl.stat().st_size / 1e6:.1f} MB"
              + (f", Parquet {parquet.stat().st_size / 1e6:.1f} MB" if parquet else ""))  # fmt: skip
        warm_up(folder)
        times: dict[str, tuple[str, float]] = {}
        chosen = candidates(jsonl, parquet)
        if args.no_candidates:
            chosen = {n: c for n, c in chosen.items() if c[0] in ("project", "columnar") and "pyarrow" not in n}
        for name, (kind, reader) in chosen.items():
            # The best of --repeat runs, in turn with the others': a shared machine's load falls on all alike.
            seconds = min(timed(reader)[0] for _ in range(args.repeat))
            times[name] = (kind, seconds)
            print(f"  measured {name}: {seconds:.2f} s", file=sys.stderr, flush=True)
        columnar = [s for k, s in times.values() if k == "columnar"]
        floor = min(columnar) if columnar else min(s for _, s in times.values())
        rows: list[tuple[str, float, str]] = [(n, s, "") for n, (_, s) in times.items()]
        if not args.no_cli:
            baseline = write_suite(folder, args.models, args.tasks, 1, "baseline.jsonl") if args.with_baseline else None
            runs: list[tuple[Path | None, Path, str, Path | None]] = [
                (jsonl, ROOT, "", None),
                (parquet, ROOT, "", None),
            ]
            if args.other_formats:
                runs += [(path, ROOT, "", None) for path in write_other_formats(jsonl)]
            if baseline is not None:
                runs.append((jsonl, ROOT, ", with a baseline of as many records", baseline))
            if args.before is not None:
                runs.append((jsonl, args.before.resolve(), ", before", None))
                if baseline is not None:
                    runs.append((jsonl, args.before.resolve(), ", with the baseline, before", baseline))
            for data, code, label, base in runs:
                if data is None:
                    continue
                measured = run_cli(data, folder, code, base)
                if measured is None:
                    continue
                seconds, mib, cpu = measured
                kind = {".json": "a JSON array", ".jsonl": "JSONL"}.get(data.suffix, data.suffix[1:].upper())
                name = f"the whole CLI on {kind} (--json){label}"
                rows.append((name, seconds, f"{mib:,.0f} MiB peak, CPU {cpu:.2f} s"))
        print(f"\n| {records:,} records | time | x fastest columnar JSONL read | memory |\n|---|---:|---:|---|")
        for name, seconds, extra in rows:
            print(f"| {name} | {seconds:.2f} s | {seconds / floor:.1f} | {extra} |")
        if args.wheels:
            print("\n| wheel (CPython 3.11, manylinux x86_64) | MB |\n|---|---:|")
            for name, mb in wheel_sizes(folder).items():
                print(f"| {name} | {mb:.1f} |")


if __name__ == "__main__":
    main()
