"""Calibration of the pairwise "significant" by simulation, and its power.

    python benchmarks/bench_significance.py            # 1,000 replications per case (about a minute)
    python benchmarks/bench_significance.py --reps 200 # quicker

Two models of the same true quality on n paired tasks; how often is the pair called
significant at alpha = 0.05? Scores are either 0/1 (each model solves task t with the
task's own probability, drawn from U(0.1, 0.9)) or continuous (the task's difficulty
from U(0.2, 0.8) plus N(0, 0.15) noise per model, clipped to [0, 1]). Each replication
goes through ``analyse`` exactly as the CLI and the action do (B = 500, a fresh seed).

Targets (issue 6): false positives <= 5% + 2 Monte Carlo SE at every n >= 6, binary and
continuous; power within 2 points of the paired t-test at n = 500 with a true gap of 0.03.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from leaderboard import EvalRun, analyse


def scores(kind: str, n: int, gap: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if kind == "binary":
        p = rng.uniform(0.1, 0.9, n)
        return (rng.random(n) < np.clip(p + gap, 0, 1)).astype(float), (rng.random(n) < p).astype(float)
    base = rng.uniform(0.2, 0.8, n)
    a = np.clip(base + gap + rng.normal(0, 0.15, n), 0, 1)
    return a, np.clip(base + rng.normal(0, 0.15, n), 0, 1)


def runs_of(a: np.ndarray, b: np.ndarray) -> list[EvalRun]:
    return [EvalRun("a", f"t{i:04d}", "acc", float(s)) for i, s in enumerate(a)] + [
        EvalRun("b", f"t{i:04d}", "acc", float(s)) for i, s in enumerate(b)
    ]


def rates(kind: str, n: int, gap: float, reps: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    ours = t_test = sign = 0
    for r in range(reps):
        a, b = scores(kind, n, gap, rng)
        (pair,) = analyse(runs_of(a, b), seed=r).pairs
        ours += pair.significant
        d = a - b
        if np.any(d):
            t_test += bool(stats.ttest_rel(a, b).pvalue <= 0.05)
            nonzero = d[d != 0]
            sign += bool(stats.binomtest(int((nonzero > 0).sum()), nonzero.size).pvalue <= 0.05)
    return {"ours": ours / reps, "paired_t": t_test / reps, "sign_test": sign / reps}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=1000)
    args = parser.parse_args()
    reps = args.reps
    bound = 0.05 + 2 * math.sqrt(0.05 * 0.95 / reps)
    print(f"False 'significant' for equal models, alpha 0.05, {reps} replications; bound 5% + 2 SE = {bound:.1%}")
    print("| scores | shared tasks | ours | paired t | exact sign test | within bound |")
    print("|---|---:|---:|---:|---:|:---:|")
    started = time.perf_counter()
    worst = 0.0
    for kind in ("continuous", "binary"):
        for n in (6, 10, 20, 50, 200):
            r = rates(kind, n, 0.0, reps, seed=n)
            worst = max(worst, r["ours"])
            ok = "yes" if r["ours"] <= bound else "**NO**"
            print(f"| {kind} | {n} | {r['ours']:.1%} | {r['paired_t']:.1%} | {r['sign_test']:.1%} | {ok} |", flush=True)
    print(f"\nworst false-positive rate {worst:.1%} (bound {bound:.1%})")
    print("\nPower at n = 500 shared tasks, true gap 0.03 (continuous scores):")
    power = rates("continuous", 500, 0.03, reps, seed=500)
    print(
        f"ours {power['ours']:.1%}, paired t {power['paired_t']:.1%}: "
        f"difference {100 * (power['ours'] - power['paired_t']):+.1f} points"
    )
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
