"""History at size: 10 earlier runs of 50 models x 2,000 tasks read from JSONL and summarised.

    python benchmarks/bench_history.py [--runs 10] [--models 50] [--tasks 2000] [--repeat 3]

Each earlier run is a directory named by a commit holding one JSONL file of 0/1 scores; 5% of the tasks
are flaky (their score redrawn every run), the rest fixed per model. Timed separately, medians of
``--repeat``, wall clock and the process's CPU time (the fairer figure on a shared machine):

* read: :func:`leaderboard.history_files.read_history` (the loader, then each run's score matrix);
* summarise: :func:`leaderboard.stats.history.summarise` against this run;
* words: every model's trend cell, the chart, and the JSON section serialised;
* beside the run: the CLI on this run alone, then with ``--history`` of the earlier runs (what the history
  adds to a run, everything included: the leaderboard, the documents, the JSON report), once each.

Then what was found: the flaky tasks against the ones planted, and the size of the JSON section.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from leaderboard.cli import main as cli  # noqa: E402
from leaderboard.history_files import read_history  # noqa: E402
from leaderboard.report.history import history_dict, trend_cell, trend_chart  # noqa: E402
from leaderboard.stats.history import summarise  # noqa: E402

T = TypeVar("T")


def write_run(path: Path, scores: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for m in range(scores.shape[0]):
            model = f"model-{m:02d}"
            for t in range(scores.shape[1]):
                out.write(
                    f'{{"model_id": "{model}", "task_id": "task-{t:05d}", "metric_name": "acc", '
                    f'"score": {scores[m, t]:.1f}}}\n'
                )


def timed(fn: Callable[[], T], repeat: int) -> tuple[T, float, float]:
    walls, cpus = [], []
    result = fn()
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return result, statistics.median(walls), statistics.median(cpus)


def once(fn: Callable[[], object]) -> tuple[float, float]:
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--models", type=int, default=50)
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-cli", action="store_true", help="skip the CLI's end-to-end timing")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    skill = rng.uniform(0.4, 0.9, args.models)
    fixed = (rng.random((args.models, args.tasks)) < skill[:, None]).astype(float)
    flaky = rng.random(args.tasks) < 0.05

    def one_run() -> np.ndarray:
        redrawn = (rng.random((args.models, args.tasks)) < skill[:, None]).astype(float)
        return np.where(flaky[None, :], redrawn, fixed)

    with tempfile.TemporaryDirectory() as tmp:
        dirs = []
        for k in range(args.runs):
            d = Path(tmp) / f"{k:040x}"
            write_run(d / "runs.jsonl", one_run())
            dirs.append(d)
        size = sum(f.stat().st_size for d in dirs for f in d.iterdir())
        current_path = Path(tmp) / "current.jsonl"
        write_run(current_path, one_run())
        shape = f"{args.runs} runs of {args.models} x {args.tasks:,}"
        print(f"{shape} ({size / 1e6:.1f} MB of JSONL), repeat {args.repeat}")

        read, wall, cpu = timed(lambda: read_history(dirs, limit=args.runs), args.repeat)
        print(f"read:      {wall:.3f} s wall, {cpu:.3f} s CPU  ({read.coverage.read} runs)")
        now = read_history([current_path]).runs[0]
        history, wall, cpu = timed(lambda: summarise(read.runs, now), args.repeat)
        print(f"summarise: {wall:.3f} s wall, {cpu:.3f} s CPU")
        ranked = [s.model_id for s in history.series]

        def words() -> str:
            cells = [trend_cell(s) for s in history.series]
            chart = trend_chart(history, ranked, ranked[:5], branch="main")
            return json.dumps(history_dict(history, read.coverage), allow_nan=False) + chart + "".join(cells)

        text, wall, cpu = timed(words, args.repeat)
        print(f"words:     {wall:.3f} s wall, {cpu:.3f} s CPU  (JSON section {len(text) / 1e6:.2f} MB)")
        if not args.no_cli:
            report = str(Path(tmp) / "report.json")
            base = [str(current_path), "--json", report, "--comment", str(Path(tmp) / "comment.md")]
            with open(Path(tmp) / "out.md", "w") as sink:
                saved, sys.stdout = sys.stdout, sink
                try:
                    alone, alone_cpu = once(lambda: cli(base))
                    both, both_cpu = once(lambda: cli([*base, "--history", *map(str, dirs)]))
                finally:
                    sys.stdout = saved
            print(f"CLI alone: {alone:.3f} s wall, {alone_cpu:.3f} s CPU")
            print(f"CLI with --history: {both:.3f} s wall, {both_cpu:.3f} s CPU  (+{both - alone:.3f} s wall)")
    found = {int(f.task_id.split("-")[1]) for f in history.flaky}
    planted = set(np.flatnonzero(flaky).tolist())
    print(
        f"flaky tasks: {len(found)} found, {len(planted)} planted, {len(found & planted)} of them found, "
        f"{len(found - planted)} false"
    )


if __name__ == "__main__":
    main()
