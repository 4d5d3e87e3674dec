"""What categories cost ``analyse``: 50 models x 10,000 tasks with 8 categories against the same with one.

    python benchmarks/bench_categories.py            # best of 5, cold each time
    python benchmarks/bench_categories.py --repeat 9 --profile

With two or more categories ``analyse`` adds the per-category rows and tests and the clustering diagnostic
(the claims recomputed with each category as one unit); the aim is within 1.2x of the time without them.
Each call is cold: the last analysis is forgotten first, and the two cases alternate so that a change in the
machine's load falls on both.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from generators import rounded_suite

from leaderboard import EvalRun, analyse
from leaderboard.stats import cache


def cold(runs: list[EvalRun]) -> float:
    cache.forget()
    gc.collect()
    start = time.perf_counter()
    analyse(runs, b=1000, seed=0)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, default=50)
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--categories", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="also profile one call with categories")
    args = parser.parse_args()
    one = rounded_suite(args.models, args.tasks, 1)
    many = rounded_suite(args.models, args.tasks, args.categories)
    cold(one), cold(many)  # warm-up: imports, first allocations
    times: dict[str, list[float]] = {"one": [], "many": []}
    for _ in range(args.repeat):
        times["one"].append(cold(one))
        times["many"].append(cold(many))
    best_one, best_many = min(times["one"]), min(times["many"])
    print(f"{args.models} models x {args.tasks:,} tasks, B = 1000, best of {args.repeat} (cold):")
    print("| case | best | median |\n|---|---:|---:|")
    for name, label in (("one", "one category"), ("many", f"{args.categories} categories")):
        print(f"| {label} | {min(times[name]):.3f} s | {float(np.median(times[name])):.3f} s |")
    print(f"ratio (best): {best_many / best_one:.2f}x; ratio (median): "
          f"{float(np.median(times['many'])) / float(np.median(times['one'])):.2f}x")  # fmt: skip
    if args.profile:
        cache.forget()
        profiler = cProfile.Profile()
        profiler.runcall(analyse, many, b=1000, seed=0)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()
