"""The gate's bound at the gate's level: false fails and power with one model compared.

    python benchmarks/bench_gate_bound.py               # 1,000 null and 500 drop replications
    python benchmarks/bench_gate_bound.py --reps 200    # quicker

One model, continuous scores on n tasks: each task's true score uniform on [0.2, 0.9], each run a
fresh draw with noise sd 0.037 (the per-task differences' sd about 0.052). Unchanged (re-run), the
gate must fail at most alpha = 0.05 of the time (target <= 5% + 2 SE); with a true drop of 0.01
over 50 tasks, P(the gate fails) is its power. A regression needs the one-sided test at alpha and
the CI's upper end below 0: that end a one-sided 95% bound (today's code) where it was a two-sided
95% interval's (a 97.5% bound). Rates with their Monte Carlo SE sqrt(p(1-p)/reps).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from leaderboard import EvalRun
from leaderboard.stats.comparison import compare

NOISE = 0.037


def rate(hits: int, reps: int) -> str:
    p = hits / reps
    return f"{100 * p:.1f}% (SE {100 * math.sqrt(max(p * (1 - p), 1e-12) / reps):.1f}, {hits}/{reps})"


def runs(scores: np.ndarray) -> list[EvalRun]:
    return [EvalRun("m", f"t{t:04d}", "acc", float(s)) for t, s in enumerate(scores)]


def fails(rng: np.random.Generator, n: int, drop: float, seed: int) -> bool:
    truth = rng.uniform(0.2, 0.9, n)
    base = np.clip(truth + rng.normal(0.0, NOISE, n), 0.0, 1.0)
    pr = np.clip(truth - drop + rng.normal(0.0, NOISE, n), 0.0, 1.0)
    c = compare(runs(base), runs(pr), b=500, alpha=0.05, seed=seed, fail_on_regression=True)
    return bool(c.regressions)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=1000)
    args = parser.parse_args()
    rng = np.random.default_rng(20261201)
    for n in (20, 50, 200):
        hits = sum(fails(rng, n, 0.0, r) for r in range(args.reps))
        print(f"unchanged, n = {n}: false fails {rate(hits, args.reps)}")
    reps = max(1, args.reps // 2)
    hits = sum(fails(rng, 50, 0.01, r) for r in range(reps))
    print(f"drop 0.01, n = 50: power {rate(hits, reps)}")


if __name__ == "__main__":
    main()
