"""EvalRun JSON arrays and CSV files: the fast path, the precise reader alone (before) and DuckDB's floor.

    python benchmarks/bench_load_formats.py                    # 50 models x 10,000 tasks (500,000 records)
    python benchmarks/bench_load_formats.py --models 2 --tasks 200000
    python benchmarks/bench_load_formats.py --repeat 3         # best of three runs of each reader

The records of ``bench_load.py`` are written as a JSON array (one record a line, as pandas' and most
exporters' ``[{...},\\n{...}]``, and indented by two as ``json.dump(indent=2)`` writes it) and as CSV. Each
file is read by ``load_runs`` (the fast path), by the precise reader alone (what every such file took
before), and by DuckDB reading three columns to numpy with no check (the floor). Then ``--export-parquet``'s
writer is timed on the loaded columns (after) and on the same records as objects (before).
"""

from __future__ import annotations

import argparse
import csv
import gc
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_load import write_suite  # noqa: E402

from leaderboard import load_runs  # noqa: E402
from leaderboard.formats import evalrun, parquet  # noqa: E402
from leaderboard.run_columns import RunColumns  # noqa: E402

FAST = {".json": "read_json_array", ".csv": "read_csv_columns"}


def records(jsonl: Path) -> Iterator[dict[str, object]]:
    with jsonl.open(encoding="utf-8") as lines:
        yield from map(json.loads, lines)


def write_array(jsonl: Path, path: Path, indent: int | None) -> Path:
    with path.open("w", encoding="utf-8") as out:
        if indent is None:
            out.write("[\n" + ",\n".join(json.dumps(r) for r in records(jsonl)) + "\n]\n")
        else:
            json.dump(list(records(jsonl)), out, indent=indent)
    return path


def write_csv(jsonl: Path, path: Path) -> Path:
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.DictWriter(out, ["model_id", "task_id", "metric_name", "score", "category"])
        writer.writeheader()
        writer.writerows(records(jsonl))
    return path


def best(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def precise(path: Path) -> object:
    """The precise reader alone: what every such file took before its fast path."""
    name = FAST[path.suffix]
    fast = getattr(evalrun, name)
    setattr(evalrun, name, lambda handle, file, sink: None)
    try:
        return load_runs([str(path)])
    finally:
        setattr(evalrun, name, fast)


def floor(path: Path) -> object:
    import duckdb

    reader = (
        f"read_json('{path}', format = 'array')"
        if path.suffix == ".json"
        else f"read_csv('{path}', header = true, all_varchar = false)"
    )
    with duckdb.connect() as con:
        return con.execute(f"SELECT model_id, task_id, score FROM {reader}").fetchnumpy()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, default=50)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        jsonl = write_suite(folder, args.models, args.tasks)
        files = {
            "JSON array, a record a line": write_array(jsonl, folder / "lines.json", None),
            "JSON array, indented by 2": write_array(jsonl, folder / "indented.json", 2),
            "CSV": write_csv(jsonl, folder / "runs.csv"),
        }
        (folder / "warm").mkdir()
        warm = write_csv(write_suite(folder / "warm", 2, 10), folder / "warm.csv")
        load_runs([str(warm)])  # DuckDB's import and first connection, outside every figure
        print(f"{args.models} models x {args.tasks:,} tasks = {args.models * args.tasks:,} records")
        print("\n| file | MB | fast path | precise reader (before) | DuckDB floor | fast / floor | before / fast |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        columns: RunColumns | None = None
        for label, path in files.items():
            fast_s, runs = best(lambda p=path: load_runs([str(p)]), args.repeat)  # type: ignore[misc]
            assert isinstance(runs, RunColumns), f"{label}: not read as columns"
            columns = runs
            slow_s, slow = best(lambda p=path: precise(p), args.repeat)  # type: ignore[misc]
            assert len(slow) == len(runs)  # type: ignore[arg-type]
            del slow
            floor_s, _ = best(lambda p=path: floor(p), args.repeat)  # type: ignore[misc]
            print(f"| {label} | {path.stat().st_size / 1e6:.0f} | {fast_s:.2f} s | {slow_s:.2f} s | {floor_s:.2f} s "
                  f"| {fast_s / floor_s:.1f} | {slow_s / fast_s:.1f} |")  # fmt: skip
        assert columns is not None
        out = folder / "export.parquet"
        after, _ = best(lambda: parquet.write_runs(columns, out), args.repeat)
        objects = list(columns)
        before, _ = best(lambda: parquet.write_runs(objects, out), args.repeat)
        print(f"\n| --export-parquet of {len(columns):,} records | time |\n|---|---:|")
        print(f"| from the columns (after) | {after:.2f} s |\n| from record objects (before) | {before:.2f} s |")


if __name__ == "__main__":
    main()
