"""The comparison's intervals at the family's level: simultaneous coverage, and rows whose interval contradicts
the verdict beside it.

    python benchmarks/bench_simultaneous.py                      # 50 and 500 models, 1,000 / 200 reps
    python benchmarks/bench_simultaneous.py --models 50 --reps 100
    python benchmarks/bench_simultaneous.py --models 5 10 50 --reps 200 --kinds "all drop" --shift 0.012  # power

m models on n tasks, each task's true score uniform on [0.3, 0.7]; the baseline and this run each a fresh
draw with noise sd 0.02 (continuous), or 0/1 scores drawn at those rates (binary). This run adds a true
change theta_i to model i: none (every model re-measured), a mix (10% drop 0.03, 10% rise 0.03), or all
drop 0.03 (where Holm's later steps are looser than alpha / m). A rep covers when every lower bound is
<= theta_i (and, separately, every upper bound >= theta_i): each side's bounds are simultaneous at 1 - alpha.
A row contradicts when its interval excludes 0 on Δ's side and its verdict is not a detected change, or the
reverse. Rates with their Monte Carlo SE sqrt(p(1-p)/reps).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from leaderboard import EvalRun
from leaderboard.stats.comparison import compare
from leaderboard.stats.paired import excludes_zero

ALPHA = 0.05
NOISE = 0.02
SHIFT = 0.03


def rate(hits: int, reps: int) -> str:
    p = hits / reps
    return f"{100 * p:.1f}% (SE {100 * math.sqrt(max(p * (1 - p), 1e-12) / reps):.1f})"


def truth(kind: str, m: int, shift: float = SHIFT) -> np.ndarray:
    theta = np.zeros(m)
    if kind == "mix":
        k = max(1, m // 10)
        theta[:k], theta[k : 2 * k] = -shift, shift
    elif kind == "all drop":
        theta[:] = -shift
    return theta


def records(values: np.ndarray) -> list[EvalRun]:
    m, n = values.shape
    return [EvalRun(f"m{i:03d}", f"t{t:03d}", "acc", float(values[i, t])) for i in range(m) for t in range(n)]


def one(rng: np.random.Generator, m: int, n: int, theta: np.ndarray, binary: bool, seed: int) -> tuple[int, ...]:
    mu = rng.uniform(0.3, 0.7, (m, n))
    if binary:
        base = (rng.random((m, n)) < mu).astype(float)
        pr = (rng.random((m, n)) < mu + theta[:, None]).astype(float)
    else:
        base = mu + NOISE * rng.standard_normal((m, n))
        pr = mu + theta[:, None] + NOISE * rng.standard_normal((m, n))
    c = compare(records(base), records(pr), b=500, alpha=ALPHA, seed=seed)
    lo = np.array([x.ci_lo for x in c.models])
    hi = np.array([x.ci_hi for x in c.models])
    delta = np.array([x.delta for x in c.models])
    detected = np.array([x.significant for x in c.models])
    regressed = np.array([x.regressed for x in c.models])
    contradicting = int(np.count_nonzero(excludes_zero(lo, hi, delta) != detected))
    found = int(np.count_nonzero(detected & (theta != 0) & (np.sign(delta) == np.sign(theta))))
    return (
        int(np.all(lo <= theta)),
        int(np.all(hi >= theta)),
        int(np.all((lo <= theta) & (hi >= theta))),
        contradicting,
        int(np.any(regressed & (theta >= 0))),
        found,
        int(np.count_nonzero(theta)),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, nargs="+", default=[50, 500])
    parser.add_argument("--reps", type=int, nargs="+", default=[1000, 200])
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--kinds", nargs="+", default=["none", "mix", "all drop"])
    parser.add_argument("--binary", action="store_true", help="0/1 scores on --tasks tasks")
    parser.add_argument("--shift", type=float, default=SHIFT, help="the size of each true change")
    args = parser.parse_args()
    reps_of = args.reps + [args.reps[-1]] * len(args.models)
    for m, reps in zip(args.models, reps_of, strict=False):
        for kind in args.kinds:
            rng = np.random.default_rng(m)
            theta = truth(kind, m, args.shift)
            start = time.perf_counter()
            totals = np.zeros(7, dtype=np.int64)
            for r in range(reps):
                totals += one(rng, m, args.tasks, theta, args.binary, r)
            lower, upper, both, contradicting, false_regression, found, real = totals.tolist()
            power = f", power {100 * found / real:.1f}% of {real // reps} real changes" if real else ""
            print(
                f"{m} models x {args.tasks} {'binary ' if args.binary else ''}tasks, {kind}, {reps} reps: "
                f"lower bounds all hold {rate(lower, reps)}, upper {rate(upper, reps)}, both {rate(both, reps)}; "
                f"rows contradicting their verdict {contradicting}; any false regression "
                f"{rate(false_regression, reps)}{power} ({time.perf_counter() - start:.0f} s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
