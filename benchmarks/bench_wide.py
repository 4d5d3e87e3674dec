"""Wide inputs: a CSV header of many columns, a JSONL line of many keys each written twice.

Each case is loaded in a child process with a time cap, so a quadratic check shows as "over the cap"
instead of hanging the script. Prints seconds per case and the first problem reported.

    python benchmarks/bench_wide.py [--cap SECONDS] [SIZE ...]    (default sizes: 20000 200000)
"""

from __future__ import annotations

import argparse
import multiprocessing
import tempfile
import time
from pathlib import Path


def _csv(path: Path, columns: int, duplicated: bool) -> None:
    extra = [f"x{i}" for i in range(columns)]
    header = ["model_id", "task_id", "metric_name", "score", *extra, *(extra if duplicated else [])]
    row = ["m", "t", "acc", "0.5", *([""] * (len(header) - 4))]
    path.write_text(",".join(header) + "\n" + ",".join(row) + "\n", encoding="utf-8")


def _jsonl(path: Path, keys: int) -> None:
    pairs = ", ".join(f'"k{i}": {i}, "k{i}": {i}' for i in range(keys))
    record = '{"model_id": "m", "task_id": "t", "metric_name": "acc", "score": 0.5, ' + pairs + "}"
    path.write_text(record + "\n", encoding="utf-8")


def _load(path: str, queue: multiprocessing.Queue[tuple[float, str]]) -> None:
    from leaderboard import InvalidEvalRuns, load_runs

    start = time.perf_counter()
    try:
        runs = load_runs([path])
        outcome = f"{len(runs)} record(s)"
    except InvalidEvalRuns as exc:
        outcome = str(exc.problems[0])[:160]
    queue.put((time.perf_counter() - start, outcome))


def _timed(path: Path, cap: float) -> str:
    queue: multiprocessing.Queue[tuple[float, str]] = multiprocessing.Queue()
    child = multiprocessing.Process(target=_load, args=(str(path), queue))
    child.start()
    child.join(cap)
    if child.is_alive():
        child.kill()
        child.join()
        return f"over {cap:g} s (stopped)"
    seconds, outcome = queue.get()
    return f"{seconds:7.2f} s  {outcome}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[20_000, 200_000])
    parser.add_argument("--cap", type=float, default=120.0, help="seconds before a case is stopped")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            cases = {
                f"CSV, {size:,} distinct extra columns": lambda p, n=size: _csv(p, n, duplicated=False),
                f"CSV, {size:,} columns each twice": lambda p, n=size: _csv(p, n, duplicated=True),
                f"JSONL, one line of {size:,} keys each twice": lambda p, n=size: _jsonl(p, n),
            }
            for index, (label, write) in enumerate(cases.items()):
                path = Path(tmp) / f"case{size}_{index}.{'jsonl' if 'JSONL' in label else 'csv'}"
                write(path)
                print(f"{label:<45} {_timed(path, args.cap)}", flush=True)


if __name__ == "__main__":
    main()
