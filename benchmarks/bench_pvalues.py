"""Large suites: how many pairs the default (Holm) separates, the sign-flip p's accuracy, calibration, speed.

    python benchmarks/bench_pvalues.py                    # every scenario
    python benchmarks/bench_pvalues.py --only grid        # one: grid, accuracy, calibration, speed
    python benchmarks/bench_pvalues.py --reps 100         # calibration replications (default 200)

* grid: M models x n continuous tasks, true means spread evenly over 0.40-0.80 (task effects and noise
  shared by the design, scores clipped to [0, 1]): significant pairs of M(M-1)/2 at the defaults, for
  30 x 900, 40 x 200, 50 x 100, 60 x 50, 50 x 200 and 50 x 500 x 3 trials (mean over 3 suites).
* accuracy: the p-value against the exact sign-flip distribution (enumeration of 2^k patterns, k = 22)
  and against 2e7 Monte Carlo patterns (k = 200), continuous, rounded and heavy-tailed differences.
* calibration: P(any false claim) among 20 and 50 equal models, binary and continuous (rate +- SE).
* speed: ``analyse`` at 50 x 10,000 continuous tasks (best of 3).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from generators import differences, exact_p, spread_suite  # noqa: E402

from leaderboard import EvalRun, analyse  # noqa: E402
from leaderboard.stats import significance  # noqa: E402


def rate(hits: int, reps: int) -> str:
    p = hits / reps
    return f"{100 * p:.1f}% (SE {100 * math.sqrt(max(p * (1 - p), 1e-12) / reps):.1f}, {hits}/{reps})"


def scenario_grid(suites: int) -> None:
    for models, tasks, trials in ((30, 900, 1), (40, 200, 1), (50, 100, 1), (60, 50, 1), (50, 200, 1), (50, 500, 3)):
        rng = np.random.default_rng(23)
        found, methods = [], {}
        for _ in range(suites):
            board = analyse(spread_suite(models, tasks, rng, trials=trials))
            found.append(int(board.pairs.significant.sum()))
            for name in (p.test for p in board.pairs):
                methods[name] = methods.get(name, 0) + 1
        pairs = models * (models - 1) // 2
        label = f"{models} x {tasks}" + (f" x {trials} trials" if trials > 1 else "")
        print(f"grid   {label:>20}: significant pairs {np.mean(found):7.1f} of {pairs:,} {found} tests {methods}")


def monte_carlo_p(d: np.ndarray, resamples: int, rng: np.random.Generator) -> tuple[float, float]:
    hits = 0
    for _ in range(resamples // 100_000):
        signs = rng.integers(0, 2, (100_000, d.size), dtype=np.int8).astype(np.float64) * 2.0 - 1.0
        hits += int((np.abs(signs @ np.abs(d)) >= abs(d.sum()) - 1e-9).sum())
    p = hits / resamples
    return p, math.sqrt(p * (1 - p) / resamples)


def scenario_accuracy() -> None:
    rng = np.random.default_rng(5)
    for k in (27, 32):
        for kind in ("continuous", "rounded", "rubric", "heavy"):
            ratios = []
            for _ in range(40):
                d = differences(kind, k, rng)
                truth = exact_p(d)
                if truth <= 0.2:
                    ratios.append(float(significance.sign_flip_test(d[None, :] / 4.0)[0][0]) / truth)
            r = np.array(ratios)
            print(
                f"acc    k={k} {kind:>10}: p / exact over {r.size} cases with p <= 0.2: min {r.min():.3f} "
                f"median {np.median(r):.3f} max {r.max():.3f}"
            )
    for kind in ("continuous", "rounded", "heavy"):
        d = differences(kind, 200, rng, 0.06 if kind != "heavy" else 0.04)
        mc, se = monte_carlo_p(d, 20_000_000, rng)
        p = float(significance.sign_flip_test(d[None, :])[0][0])
        print(f"acc    k={d.size} {kind:>10}: saddlepoint p {p:.4g}, 2e7 Monte Carlo patterns {mc:.4g} +- {se:.2g}")


def equal_suite(kind: str, models: int, tasks: int, rng: np.random.Generator) -> list[EvalRun]:
    if kind == "binary":
        difficulty = rng.normal(0.0, 1.5, tasks)
        scores = (rng.random((models, tasks)) < 1.0 / (1.0 + np.exp(difficulty)[None, :])).astype(float)
    else:
        centre = rng.uniform(0.2, 0.8, tasks)
        scores = np.clip(centre[None, :] + 0.15 * rng.standard_normal((models, tasks)), 0.0, 1.0)
    return [EvalRun(f"m{m:02d}", f"t{t:05d}", "acc", float(scores[m, t])) for m in range(models) for t in range(tasks)]


def scenario_calibration(reps: int) -> None:
    for kind in ("binary", "continuous"):
        for models, tasks in ((20, 200), (50, 200)):
            rng = np.random.default_rng(7)
            hits = sum(
                bool(analyse(equal_suite(kind, models, tasks, rng)).pairs.significant.any()) for _ in range(reps)
            )
            print(f"calib  {models} equal models x {tasks} {kind}: P(any false claim) = {rate(hits, reps)}")


def scenario_speed() -> None:
    rng = np.random.default_rng(0)
    runs = spread_suite(50, 10_000, rng)
    best = math.inf
    for _ in range(3):
        start = time.perf_counter()
        board = analyse(runs)
        best = min(best, time.perf_counter() - start)
    found = int(board.pairs.significant.sum())
    print(f"speed  analyse 50 x 10,000 continuous: best of 3 {best:.3f} s ({found} significant)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=("grid", "accuracy", "calibration", "speed"))
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--suites", type=int, default=3)
    args = parser.parse_args()
    if args.only in (None, "grid"):
        scenario_grid(args.suites)
    if args.only in (None, "accuracy"):
        scenario_accuracy()
    if args.only in (None, "calibration"):
        scenario_calibration(args.reps)
    if args.only in (None, "speed"):
        scenario_speed()


if __name__ == "__main__":
    main()
