"""Speed, memory and approximation error of the statistics engine.

    python benchmarks/bench_statistics.py            # everything (the baseline takes a minute or two)
    python benchmarks/bench_statistics.py --quick    # skip the seed-style baseline

Targets, on a 2-core machine, for ``analyse`` (rows and every pair, each pair with its bootstrap CI
and exact permutation test) on built EvalRun lists: 50 models x 10,000 tasks, B=1000, 1,225 pairs:
<= 1 s (issue 6: the exact test must not cost the existing speed) and <= 512 MiB peak; the same with
10% of (model, task) pairs missing: <= 2 s; the 3 x 12 demo: <= 20 ms.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from generators import rounded_suite

from leaderboard import EvalRun, aggregate, analyse, load_runs, pairwise_diffs
from leaderboard.stats import cache
from leaderboard.stats.resampling import encode_ids, keyed_rng, percentile_interval


def suite(models: int, tasks: int, missing: float, seed: int = 0) -> list[EvalRun]:
    rng = np.random.default_rng(seed)
    skill = rng.random(models)
    difficulty = rng.random(tasks)
    scores = np.clip(
        0.5 + 0.3 * (skill[:, None] - difficulty[None, :]) + 0.1 * rng.standard_normal((models, tasks)), 0, 1
    )
    keep = rng.random((models, tasks)) >= missing
    return [
        EvalRun(f"model-{m:02d}", f"task-{t:05d}", "accuracy", float(scores[m, t]), f"cat-{t % 7}")
        for m in range(models)
        for t in range(tasks)
        if keep[m, t]
    ]


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(best wall seconds, median wall seconds) over ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def peak_mib(fn: Callable[[], object]) -> float:
    gc.collect()
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def cold() -> None:
    """Forget the last analysis' resamples, so that every timed call pays for its own."""
    cache.forget()


def both(runs: list[EvalRun], b: int) -> None:
    """Rows and every pair in one pass, as the CLI and the action do (pairs tested exactly too)."""
    cold()
    analyse(runs, b=b)


def seed_style(runs: list[EvalRun], b: int) -> None:
    """The straightforward implementation: a Python loop per model and per pair, rng.integers each."""
    rng = np.random.default_rng(0)
    by_model: dict[str, dict[str, float]] = {}
    for r in runs:
        by_model.setdefault(r.model_id, {})[r.task_id] = r.score
    for scores in by_model.values():
        x = np.array(list(scores.values()))
        means = x[rng.integers(0, x.size, (b, x.size))].mean(axis=1)
        np.percentile(means, [2.5, 97.5])
    names = sorted(by_model)
    for i, a in enumerate(names):
        for other in names[i + 1 :]:
            shared = sorted(set(by_model[a]) & set(by_model[other]))
            d = np.array([by_model[a][t] - by_model[other][t] for t in shared])
            means = d[rng.integers(0, d.size, (b, d.size))].mean(axis=1)
            np.percentile(means, [2.5, 97.5])


def poisson_error(runs: list[EvalRun], b: int, pairs: int) -> dict[str, float]:
    """CI endpoints of Poisson-bootstrapped pairs against the exact paired bootstrap.

    The yardstick is the exact bootstrap's own Monte Carlo error: the spread of its
    endpoints over five seeds.
    """
    diffs = pairwise_diffs(runs, b=b)
    by_model: dict[str, dict[str, float]] = {}
    for r in runs:
        by_model.setdefault(r.model_id, {})[r.task_id] = r.score
    errors, spreads, widths = [], [], []
    for pair in diffs[:pairs]:
        shared = sorted(set(by_model[pair.model_a]) & set(by_model[pair.model_b]))
        d = np.array([by_model[pair.model_a][t] - by_model[pair.model_b][t] for t in shared])
        endpoints = []
        for seed in range(5):
            rng = keyed_rng(seed, encode_ids(shared))
            means = np.stack(
                [d[rng.integers(0, d.size, (min(b, 100), d.size))].mean(axis=1) for _ in range(b // min(b, 100))]
            )
            lo, hi = percentile_interval(means.ravel(), 0.05)
            endpoints.append((float(lo), float(hi)))
        exact = np.array(endpoints)
        errors.append(max(abs(pair.ci_lo - exact[:, 0].mean()), abs(pair.ci_hi - exact[:, 1].mean())))
        spreads.append(float(exact.std(axis=0, ddof=1).max()))
        widths.append(float(exact[:, 1].mean() - exact[:, 0].mean()))
    return {
        "pairs_checked": len(errors),
        "max_abs_endpoint_error": max(errors),
        "median_abs_endpoint_error": statistics.median(errors),
        "median_exact_mc_sd": statistics.median(spreads),
        "median_ci_width": statistics.median(widths),
    }


def jsonl_load(records: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.jsonl"
        with path.open("w") as f:
            for i in range(records):
                f.write(
                    json.dumps(
                        {
                            "model_id": f"model-{i % 50:02d}",
                            "task_id": f"task-{i // 50:06d}",
                            "metric_name": "accuracy",
                            "score": (i % 997) / 996,
                            "category": f"cat-{i % 7}",
                        }
                    )
                    + "\n"
                )
        size = path.stat().st_size / 2**20
        seconds, _ = timed(lambda: load_runs([str(path)]), 1)
        peak = peak_mib(lambda: load_runs([str(path)]))
    return {"records": records, "file_mib": round(size, 1), "seconds": round(seconds, 2), "peak_mib": round(peak, 1)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="skip the seed-style baseline")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, numpy {np.__version__}")
    results: dict[str, object] = {}

    demo = suite(3, 12, 0.0)
    best, median = timed(lambda: both(demo, 500), 20)
    results["demo_3x12_b500"] = {"best_ms": round(best * 1e3, 2), "median_ms": round(median * 1e3, 2)}

    # Issue 14: the specification's aggregate() + pairwise_diffs() on one list (the second reuses the
    # first's resamples), scores rounded to 2 decimals in 4 categories, family-wise (the default).
    runs = rounded_suite(50, 10000)
    results["rounded_50x10000_b1000"] = {
        "analyse_s": round(timed(lambda: both(runs, 1000), 3)[0], 3),
        "aggregate_plus_pairwise_diffs_s": round(
            timed(lambda: (cold(), aggregate(runs, b=1000), pairwise_diffs(runs, b=1000)), 3)[0], 3
        ),
        "analyse_per_pair_s": round(timed(lambda: (cold(), analyse(runs, b=1000, correction="none")), 3)[0], 3),
    }
    print("rounded", results["rounded_50x10000_b1000"], flush=True)

    for label, missing in (("full_50x10000_b1000", 0.0), ("missing10_50x10000_b1000", 0.1)):
        runs = suite(50, 10000, missing)
        best, median = timed(lambda runs=runs: both(runs, 1000), 3)
        results[label] = {
            "records": len(runs),
            "best_s": round(best, 3),
            "median_s": round(median, 3),
            "aggregate_s": round(timed(lambda runs=runs: (cold(), aggregate(runs, b=1000)), 3)[0], 3),
            "pairwise_diffs_s": round(timed(lambda runs=runs: (cold(), pairwise_diffs(runs, b=1000)), 3)[0], 3),
            "peak_mib": round(peak_mib(lambda runs=runs: both(runs, 1000)), 1),
        }
        print(label, results[label], flush=True)
        if missing:
            results["poisson_vs_exact_missing10"] = poisson_error(runs, 1000, pairs=20)
            print("poisson_vs_exact", results["poisson_vs_exact_missing10"], flush=True)
        elif not args.quick:
            baseline, _ = timed(lambda runs=runs: seed_style(runs, 1000), 1)
            results["seed_style_baseline_full_s"] = round(baseline, 1)
            results["speedup_vs_baseline"] = round(baseline / best, 1)
            print("baseline", baseline, flush=True)

    # The slowest shape for the exact bootstrap: every pair has a shared set of its own just
    # under EXACT_PAIR_LIMIT, each a fresh B x n draw.
    runs = suite(50, 200, 0.1)
    results["exact_pairs_missing10_50x200_b1000"] = {
        "records": len(runs),
        "best_s": round(timed(lambda: both(runs, 1000), 3)[0], 3),
    }
    print("exact pairs", results["exact_pairs_missing10_50x200_b1000"], flush=True)

    # Memory stays bounded as pairs grow as M^2: 120 models, 7,140 pairs, rows rebuilt per block.
    runs = suite(120, 10000, 0.1)
    results["missing10_120x10000_b1000"] = {
        "records": len(runs),
        "best_s": round(timed(lambda: both(runs, 1000), 1)[0], 3),
        "peak_mib": round(peak_mib(lambda: both(runs, 1000)), 1),
    }
    print("120 models", results["missing10_120x10000_b1000"], flush=True)

    results["jsonl_load_1M"] = jsonl_load(1_000_000)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
