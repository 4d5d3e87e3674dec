"""Clustered inference, applied weights and 0/1 intervals, measured by simulation (issue 15).

    python benchmarks/bench_clusters.py             # 300 replications per row (a few minutes under load)
    python benchmarks/bench_clusters.py --reps 100  # quicker

Every replication goes through ``analyse`` as the CLI and the action do (B = 400, a fresh seed).

1. Clusters: tasks in C clusters with SWE-bench Verified's repository sizes (C = 10: its ten
   largest repositories, scaled to 200 tasks) or Zipf-like sizes (C = 30, 300 tasks); a
   cluster effect of variance rho on the per-task difference of two models whose average
   difference over clusters is 0 (binary: the effect shifts each task's solve probability;
   continuous: it shifts the score). Reported: false "significant" for the pair, and the
   coverage of model a's 95% CI of its true mean, with ``cluster_by`` "none" and "category".
2. Gate: 20 unchanged models in 10 clusters, rho 0.05: how often does any model "regress"?
3. Weights: coverage of the weighted mean when weight correlates with difficulty.
4. 0/1 intervals: coverage at n = 6, 10, 20, 50 for true rates 0.5, 0.9, 0.97 (Wilson), and of
   the percentile bootstrap for continuous scores.
5. Scale: 50 models x 10,000 tasks in 100 clusters, B = 1000, all pairs.
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
from leaderboard.stats.comparison import compare

SWE_SIZES = np.array([231, 75, 44, 34, 32, 22, 22, 19, 10, 8])  # SWE-bench Verified's ten largest repositories
B = 400


def sizes_of(c: int, total: int) -> np.ndarray:
    raw = SWE_SIZES.astype(float) if c == 10 else 1.0 / np.arange(1, c + 1)
    out = np.maximum(1, np.round(raw / raw.sum() * total)).astype(int)
    return out


def simulate(kind: str, sizes: np.ndarray, rho: float, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """(scores a, scores b, cluster of each task, true mean of a).

    Task t in cluster g: a's expected score 0.5 + s_g + x_t + u_g / 2, b's 0.5 + s_g + x_t - u_g / 2,
    with x_t ~ U(-0.3, 0.3) the task's own difficulty, s_g the cluster's difficulty (intra-cluster
    correlation rho on scores) and u_g the cluster's advantage of a over b (intra-cluster correlation
    rho on the per-task difference; E u_g = 0: no difference on average over clusters). Binary:
    each model solves the task with that probability (clipped to [0.02, 0.98]); continuous: that
    value plus N(0, 0.15) noise, clipped to [0, 1]. Everything is symmetric about 0.5, so a's
    true mean over the population of clusters is 0.5.
    """
    g = np.repeat(np.arange(sizes.size), sizes)
    n = g.size
    within = 0.25 if kind == "binary" else 0.03 + 0.0225  # a score's variance within a cluster, about
    diff_within = 0.35 if kind == "binary" else 2 * 0.0225
    s = rng.normal(0, math.sqrt(rho / (1 - rho) * within), sizes.size)[g]
    u = rng.normal(0, math.sqrt(rho / (1 - rho) * diff_within), sizes.size)[g]
    x = rng.uniform(-0.3, 0.3, n)
    mean_a, mean_b = 0.5 + s + x + u / 2, 0.5 + s + x - u / 2
    if kind == "binary":
        pa, pb = np.clip(mean_a, 0.02, 0.98), np.clip(mean_b, 0.02, 0.98)
        return (rng.random(n) < pa).astype(float), (rng.random(n) < pb).astype(float), g, 0.5
    a = np.clip(mean_a + rng.normal(0, 0.15, n), 0, 1)
    b = np.clip(mean_b + rng.normal(0, 0.15, n), 0, 1)
    return a, b, g, 0.5


def runs_of(models: dict[str, np.ndarray], g: np.ndarray, weights: np.ndarray | None = None) -> list[EvalRun]:
    out = []
    for name, scores in models.items():
        for t, s in enumerate(scores):
            w = 1.0 if weights is None else float(weights[t])
            out.append(
                EvalRun(model_id=name, task_id=f"t{t:05d}", metric_name="acc", score=float(s), category=f"c{g[t]:02d}",
                        weight=w)
            )  # fmt: skip
    return out


def se(p: float, reps: int) -> float:
    return math.sqrt(max(p * (1 - p), 1e-9) / reps)


KINDS = ("binary", "continuous")


def clusters(reps: int) -> None:
    print(f"\n## Clusters ({reps} replications per row; alpha 0.05, B = {B})\n")
    print("| scores | clusters, rho | cluster-by | false 'significant' (pair) | coverage of a's CI | half-width |")
    print("|---|---|---|---:|---:|---:|")
    for kind in KINDS:
        for c, rho in ((10, 0.0), (10, 0.05), (10, 0.20), (30, 0.05), (30, 0.20)):
            sizes = sizes_of(c, 200 if c == 10 else 300)
            for by in ("none", "category"):
                rng = np.random.default_rng(1000 * c + int(rho * 100))
                false = cover = 0
                width = 0.0
                for r in range(reps):
                    a, b, g, truth = simulate(kind, sizes, rho, rng)
                    board = analyse(runs_of({"a": a, "b": b}, g), b=B, seed=r, cluster_by=by)  # type: ignore[arg-type]
                    false += board.pairs[0].significant
                    row = next(x for x in board.rows if x.model_id == "a")
                    cover += row.mean_ci_lo <= truth <= row.mean_ci_hi
                    width += (row.mean_ci_hi - row.mean_ci_lo) / 2
                f, cv = false / reps, cover / reps
                print(
                    f"| {kind} | {c}, {rho:g} | {by} | {f:.1%} ± {se(f, reps):.1%} | {cv:.1%} ± {se(cv, reps):.1%} "
                    f"| {width / reps:.3f} |",
                    flush=True,
                )


def gate(reps: int) -> None:
    print(f"\n## Gate: 20 unchanged models in 10 clusters, rho 0.05 ({reps} replications)\n")
    sizes = sizes_of(10, 200)
    g = np.repeat(np.arange(10), sizes)
    for by in ("none", "category"):
        rng = np.random.default_rng(7)
        fails = 0
        for r in range(reps):
            base, pr = {}, {}
            for m in range(20):
                # The same model re-run: per cluster, a shift u_g of the re-run against the baseline with
                # intra-cluster correlation 0.05 on the per-task difference (mean 0: unchanged on average).
                x = rng.uniform(0.2, 0.8, g.size)
                u = rng.normal(0, math.sqrt(0.05 / 0.95 * 0.35), 10)[g]
                p = np.clip(x - u / 2, 0.02, 0.98)
                q = np.clip(x + u / 2, 0.02, 0.98)
                base[f"m{m:02d}"] = (rng.random(g.size) < p).astype(float)
                pr[f"m{m:02d}"] = (rng.random(g.size) < q).astype(float)
            result = compare(runs_of(base, g), runs_of(pr, g), b=B, alpha=0.05, seed=r, cluster_by=by,  # type: ignore[arg-type]
                             correction="holm")  # fmt: skip
            fails += bool(result.regressions)
        f = fails / reps
        print(f"- cluster-by {by}: gate fails {f:.1%} ± {se(f, reps):.1%} (Holm over the 20 models)", flush=True)


def weighted_truth() -> float:
    """E[w y] / E[w] of the weighted simulation, by a million draws (its clipping has no closed form)."""
    rng = np.random.default_rng(12345)
    d = rng.uniform(0, 1, 1_000_000)
    y = np.clip(0.9 - 0.7 * d + rng.normal(0, 0.1, d.size), 0, 1)
    w = 1.0 + 4.0 * d
    return float((w * y).sum() / w.sum())


def weights(reps: int) -> None:
    truth = weighted_truth()
    print(f"\n## Weighted mean coverage, weight correlated with difficulty ({reps} replications, B = 1000)\n")
    print("| tasks | task-weights | coverage of the weighted mean |")
    print("|---:|---|---:|")
    for n in (50, 200):
        for mode in ("ignore", "apply"):
            rng = np.random.default_rng(n)
            cover = 0
            for r in range(reps):
                difficulty = rng.uniform(0, 1, n)
                w = 1.0 + 4.0 * difficulty  # hard tasks weigh more
                p = 0.9 - 0.7 * difficulty
                scores = np.clip(p + rng.normal(0, 0.1, n), 0, 1)
                board = analyse(runs_of({"a": scores}, np.zeros(n, dtype=int), w), b=1000, seed=r, weights=mode)  # type: ignore[arg-type]
                row = board.rows[0]
                cover += row.mean_ci_lo <= truth <= row.mean_ci_hi
            c = cover / reps
            print(f"| {n} | {mode} | {c:.1%} ± {se(c, reps):.1%} |", flush=True)


def binary(reps: int) -> None:
    print(f"\n## Per-model coverage of the 95% CI ({reps} replications)\n")
    print("| scores | true rate | n = 6 | n = 10 | n = 20 | n = 50 |")
    print("|---|---:|---:|---:|---:|---:|")
    for kind, rates in (("0/1 (Wilson)", (0.5, 0.9, 0.97)), ("continuous (bootstrap)", (0.5, 0.9))):
        for p in rates:
            cells = []
            for n in (6, 10, 20, 50):
                rng = np.random.default_rng(int(p * 1000) + n)
                cover = 0
                for r in range(reps):
                    if kind.startswith("0/1"):
                        s = (rng.random(n) < p).astype(float)
                    else:
                        s = rng.beta(p * 10, (1 - p) * 10, n)
                    row = analyse(runs_of({"a": s}, np.zeros(n, dtype=int)), b=B, seed=r).rows[0]
                    cover += row.mean_ci_lo <= p <= row.mean_ci_hi
                c = cover / reps
                cells.append(f"{c:.1%} ± {se(c, reps):.1%}")
            print(f"| {kind} | {p:g} | " + " | ".join(cells) + " |", flush=True)


def scale() -> None:
    rng = np.random.default_rng(0)
    models, tasks, c = 50, 10_000, 100
    g = rng.integers(0, c, tasks)
    skill = rng.uniform(0.3, 0.7, models)
    scores = np.clip(skill[:, None] + rng.normal(0, 0.2, (models, tasks)), 0, 1)
    runs = [
        EvalRun(model_id=f"m{m:02d}", task_id=f"t{t:05d}", metric_name="acc", score=float(scores[m, t]),
                category=f"c{g[t]:03d}")
        for m in range(models) for t in range(tasks)
    ]  # fmt: skip
    analyse(runs[:1000], b=1000, cluster_by="category")  # warm up
    started = time.perf_counter()
    board = analyse(runs, b=1000, cluster_by="category")
    elapsed = time.perf_counter() - started
    print(f"\n## Scale\n\n50 models x 10,000 tasks in 100 clusters, B = 1000, all {len(board.pairs):,} pairs: "
          f"{elapsed:.2f} s (cluster-by: category, measured under load)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--only", default="clusters,gate,weights,binary,scale")
    parser.add_argument("--kinds", default="binary,continuous", help="score kinds of the clusters table")
    args = parser.parse_args()
    global KINDS
    KINDS = tuple(args.kinds.split(","))
    for part in args.only.split(","):
        if part == "scale":
            scale()
        else:
            globals()[part](args.reps)


if __name__ == "__main__":
    main()
