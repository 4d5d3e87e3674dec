"""Coverage of a model's mean interval on small suites of continuous scores.

    python benchmarks/bench_small_intervals.py              # 1,000 replications per cell
    python benchmarks/bench_small_intervals.py --reps 300   # quicker

One model (with a second, independent one so the leaderboard has a pair) on n = 6, 10, 20, 40 tasks,
each score drawn from a Beta with mean 0.5 (Beta(2, 2)) or near the ceiling, 0.97 (Beta(9.7, 0.3)):
P(the 95% CI shown contains the true mean), target >= 93%. Through ``analyse`` with its defaults
(B = 1,000, alpha 0.05). Rates with their Monte Carlo SE sqrt(p(1-p)/reps).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from leaderboard import EvalRun, analyse

SHAPES = {0.5: (2.0, 2.0), 0.97: (9.7, 0.3)}


def rate(hits: int, reps: int) -> str:
    p = hits / reps
    return f"{100 * p:.1f}% (SE {100 * math.sqrt(max(p * (1 - p), 1e-12) / reps):.1f}, {hits}/{reps})"


def covers(rng: np.random.Generator, n: int, mean: float, seed: int) -> bool:
    a, b = SHAPES[mean]
    scores = rng.beta(a, b, (2, n))
    runs = [EvalRun(f"m{m}", f"t{t:03d}", "acc", float(scores[m, t])) for m in range(2) for t in range(n)]
    row = next(r for r in analyse(runs, b=1000, seed=seed).rows if r.model_id == "m0")
    return row.mean_ci_lo <= mean <= row.mean_ci_hi


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=1000)
    args = parser.parse_args()
    rng = np.random.default_rng(20261201)
    for mean in SHAPES:
        for n in (6, 10, 20, 40):
            hits = sum(covers(rng, n, mean, r) for r in range(args.reps))
            print(f"mean {mean}, n = {n}: coverage {rate(hits, args.reps)}")


if __name__ == "__main__":
    main()
