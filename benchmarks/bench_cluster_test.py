"""The clustered pair test at few clusters: level kept and power, by simulation.

    python benchmarks/bench_cluster_test.py             # 200 replications per row (~2 minutes under load)
    python benchmarks/bench_cluster_test.py --reps 50   # quicker

Five models score C clusters of TASKS tasks each (continuous scores): task t of cluster g scores
0.5 + s_g + x_t + e_m + u_gm + N(0, 0.15), clipped to [0, 1], with s_g ~ N(0, 0.1) the cluster's
difficulty, x_t ~ U(-0.2, 0.2) the task's, e_m the model's true effect and u_gm ~ N(0, 0.05) the
model's own advantage on the cluster (what makes tasks of one cluster related in a difference).
Every replication goes through ``analyse`` with ``cluster_by="category"`` and Holm over the 10 pairs.

1. Level: five equal models (e_m = 0) at C = 6, 8, 12, 30: how often is any of the 10 pairs
   significant? (Holm keeps the family-wise rate at or below alpha = 0.05.)
2. Power: model m0 true +0.08 over four equal models at C = 6 and 8: the share of m0's four
   pairs called significant.

Run the same file from a checkout of the earlier code for its "before" figures (the script imports
the ``leaderboard`` beside it).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from leaderboard import EvalRun, analyse

TASKS = 20
MODELS = 5
B = 400  # the model intervals' bootstrap (its floor at alpha 0.05); a clustered pair's interval and test draw nothing


def board_of(c: int, effect: float, rng: np.random.Generator, seed: int) -> tuple[int, int]:
    """(pairs significant, of them pairs with m0) in one replication."""
    g = np.repeat(np.arange(c), TASKS)
    base = 0.5 + rng.normal(0, 0.1, c)[g] + rng.uniform(-0.2, 0.2, g.size)
    runs = []
    for m in range(MODELS):
        e = effect if m == 0 else 0.0
        scores = np.clip(base + e + rng.normal(0, 0.05, c)[g] + rng.normal(0, 0.15, g.size), 0, 1)
        runs += [
            EvalRun(model_id=f"m{m}", task_id=f"t{t:04d}", metric_name="acc", score=float(s), category=f"c{g[t]:02d}")
            for t, s in enumerate(scores)
        ]
    board = analyse(runs, b=B, seed=seed, cluster_by="category", correction="holm")
    hits = [p for p in board.pairs if p.significant]
    return len(hits), sum("m0" in (p.model_a, p.model_b) for p in hits)


def se(p: float, reps: int) -> float:
    return math.sqrt(max(p * (1 - p), 1e-9) / reps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=200)
    reps = parser.parse_args().reps
    print(f"## Level: 5 equal models, {TASKS} tasks a cluster, Holm over 10 pairs ({reps} replications)\n")
    print("| clusters | any false claim |")
    print("|---:|---:|")
    for c in (6, 8, 12, 30):
        rng = np.random.default_rng(100 + c)
        f = sum(board_of(c, 0.0, rng, r)[0] > 0 for r in range(reps)) / reps
        print(f"| {c} | {f:.1%} ± {se(f, reps):.1%} |", flush=True)
    print(f"\n## Power: m0 true +0.08 over 4 equal models ({reps} replications)\n")
    print("| clusters | m0's pairs significant |")
    print("|---:|---:|")
    for c in (6, 8):
        rng = np.random.default_rng(200 + c)
        hit = sum(board_of(c, 0.08, rng, r)[1] for r in range(reps)) / (4 * reps)
        # The four pairs of a replication share m0's draw: the SE over replications is at most this.
        print(f"| {c} | {hit:.1%} ± {se(hit, reps):.1%} |", flush=True)


if __name__ == "__main__":
    main()
