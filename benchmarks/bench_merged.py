"""Family-wise claims (issue 14) and clusters (issue 15) together, measured by simulation after the merge.

    python benchmarks/bench_merged.py             # 200 replications per row (a few minutes under load)
    python benchmarks/bench_merged.py --reps 100  # quicker

Every replication goes through the library as the CLI and the action do, at the defaults (B = 500,
alpha 0.05, ``correction="holm"``), with a fresh seed.

1. Leaderboard: 10 models of equal quality x 100 binary tasks in 10 clusters of 10 (and, where Holm's
   first level is within reach of a cluster test, in 20 clusters of 5), an intra-cluster correlation
   rho = 0.05 on each model's scores and on the per-task differences between models. ``analyse(...,
   cluster_by=...)``: how often is any of the 45 pairs "significant"? Bound: 5% + 2 SE.
2. Gate: 20 models re-run unchanged (each task a fresh Bernoulli draw; per cluster, a shift of the
   re-run against the baseline with intra-cluster correlation 0.05 on the per-task difference, mean 0),
   100 binary tasks in 10 clusters. ``compare(..., cluster_by=..., fail_on_regression=True)``: how
   often does the gate fail? Bound: 5% + 2 SE.

With 10 clusters the smallest two-sided cluster sign-flip p is 2 / 2^10 = 0.00195, above Holm's first
level for 45 pairs (0.05 / 45 = 0.0011): no pair of that leaderboard can be significant, whatever the
data, so its rate is 0 by construction; the 20-cluster row is the one that exercises the step-down.
The gate's first level (one-sided, 0.05 / 20 = 0.0025) is reachable with 10 clusters (1 / 2^10).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from leaderboard import EvalRun, analyse
from leaderboard.stats.clustering import ClusterBy
from leaderboard.stats.comparison import compare

RHO = 0.05
SCORE_WITHIN = 0.25  # a 0/1 score's variance within a cluster, about
DIFF_WITHIN = 0.35  # a per-task difference's variance within a cluster, about (bench_clusters.py)


def se(p: float, reps: int) -> float:
    return math.sqrt(max(p * (1 - p), 1e-9) / reps)


def runs_of(models: dict[str, np.ndarray], g: np.ndarray) -> list[EvalRun]:
    return [
        EvalRun(model_id=name, task_id=f"t{t:04d}", metric_name="acc", score=float(s), category=f"c{g[t]:02d}")
        for name, scores in models.items()
        for t, s in enumerate(scores)
    ]


def equal_models(n_models: int, g: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Models of equal quality: each solves task t of cluster k with probability 0.5 + s_k + x_t + u_mk.

    s_k (shared by every model) gives the scores an intra-cluster correlation rho; u_mk (the model's
    own luck on cluster k, mean 0) gives the per-task difference of two models one, so the models are
    equal over the population of clusters but not within the clusters drawn.
    """
    c = int(g.max()) + 1
    s = rng.normal(0, math.sqrt(RHO / (1 - RHO) * SCORE_WITHIN), c)[g]
    x = rng.uniform(-0.3, 0.3, g.size)
    out = {}
    for m in range(n_models):
        u = rng.normal(0, math.sqrt(RHO / (1 - RHO) * DIFF_WITHIN / 2), c)[g]
        out[f"m{m:02d}"] = (rng.random(g.size) < np.clip(0.5 + s + x + u, 0.02, 0.98)).astype(float)
    return out


def leaderboard(reps: int) -> None:
    print(f"\n## Leaderboard: 10 equal models x 100 binary tasks, rho {RHO:g} ({reps} replications, defaults)\n")
    print("| clusters | cluster_by | P(any of 45 pairs significant) | mean pairs significant |")
    print("|---:|---|---:|---:|")
    for clusters in (10, 20):
        g = np.repeat(np.arange(clusters), 100 // clusters)
        for by in ("category", "none"):
            by_: ClusterBy = by  # type: ignore[assignment]
            rng = np.random.default_rng(100 + clusters)
            anyone = total = 0
            started = time.perf_counter()
            for r in range(reps):
                board = analyse(runs_of(equal_models(10, g, rng), g), seed=r, cluster_by=by_)
                count = int(board.pairs.significant.sum())
                anyone += count > 0
                total += count
            p = anyone / reps
            print(
                f"| {clusters} | {by} | {anyone}/{reps} = {p:.1%} ± {se(p, reps):.1%} | {total / reps:.2f} |"
                f"  <!-- {time.perf_counter() - started:.0f} s -->",
                flush=True,
            )


def gate(reps: int) -> None:
    print(f"\n## Gate: 20 unchanged models x 100 binary tasks in 10 clusters, rho {RHO:g} ({reps} replications)\n")
    print("| cluster_by | P(gate fails) |")
    print("|---|---:|")
    g = np.repeat(np.arange(10), 10)
    for by in ("category", "none"):
        by_: ClusterBy = by  # type: ignore[assignment]
        rng = np.random.default_rng(7)
        fails = 0
        for r in range(reps):
            base, pr = {}, {}
            for m in range(20):
                x = rng.uniform(0.2, 0.8, g.size)
                u = rng.normal(0, math.sqrt(RHO / (1 - RHO) * DIFF_WITHIN), 10)[g]
                base[f"m{m:02d}"] = (rng.random(g.size) < np.clip(x - u / 2, 0.02, 0.98)).astype(float)
                pr[f"m{m:02d}"] = (rng.random(g.size) < np.clip(x + u / 2, 0.02, 0.98)).astype(float)
            result = compare(
                runs_of(base, g), runs_of(pr, g), b=500, alpha=0.05, seed=r, cluster_by=by_, fail_on_regression=True
            )
            fails += bool(result.regressions)
        p = fails / reps
        print(f"| {by} | {fails}/{reps} = {p:.1%} ± {se(p, reps):.1%} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--only", default="leaderboard,gate")
    args = parser.parse_args()
    for part in args.only.split(","):
        globals()[part](args.reps)


if __name__ == "__main__":
    main()
