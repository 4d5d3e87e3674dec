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

3. ``--wild``: the CR2 t-test (Bell-McCaffrey df) against the wild cluster bootstrap, the same worlds
   drawn directly (the ten pairs' cluster sums of differences, Holm over the ten; no ``analyse``): the
   bootstrap imposes the null (the restricted residuals are the cluster sums themselves), draws Webb's
   6-point weights (+-sqrt(1/2), +-1, +-sqrt(3/2)) per cluster, and compares the CR2 t of every one of the
   6^C patterns with the observed |t| (enumerated exactly: 46,656 patterns at 6 clusters, 1,679,616 at 8,
   so its p reaches 6 / 6^C, below any level ten pairs need). Level and power as in 1 and 2.
4. ``--categories``: category winners when a category's tasks span clusters. Four models, two categories,
   each over C clusters of 10 tasks (repositories across task types); each model has its own advantage
   per cluster (sd 0.05) besides task noise (sd 0.1). Any false winner among equal models, and the share
   of categories naming m0 when it truly leads by +0.08: "before" tests the leader on the category's
   tasks (what ``cluster_by="cluster"`` did), "after" on its clusters (the pairs' test choice).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from leaderboard import EvalRun, analyse
from leaderboard.stats.clustering import cr2, t_two_sided_p
from leaderboard.stats.significance import holm

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


WEBB = np.array([-math.sqrt(1.5), -1.0, -math.sqrt(0.5), math.sqrt(0.5), 1.0, math.sqrt(1.5)])


def pair_sums(c: int, effect: float, rng: np.random.Generator) -> np.ndarray:
    """(10 pairs, c) cluster sums of per-task differences in one world of bench 1 / 2 (m0's pairs first)."""
    g = np.repeat(np.arange(c), TASKS)
    base = 0.5 + rng.normal(0, 0.1, c)[g] + rng.uniform(-0.2, 0.2, g.size)
    scores = np.empty((MODELS, g.size))
    for m in range(MODELS):
        e = effect if m == 0 else 0.0
        scores[m] = np.clip(base + e + rng.normal(0, 0.05, c)[g] + rng.normal(0, 0.15, g.size), 0, 1)
    a, b = np.triu_indices(MODELS, 1)
    return np.stack([np.bincount(g, weights=scores[i] - scores[j], minlength=c) for i, j in zip(a, b, strict=True)])


def cr2_p(sums: np.ndarray) -> np.ndarray:
    """Two-sided CR2 t-test p of each row (equal clusters of TASKS tasks), at the Bell-McCaffrey df."""
    sizes = np.full(sums.shape, float(TASKS))
    m = cr2(sums, sizes)
    return t_two_sided_p(m.mean / np.sqrt(m.variance), m.df)


def wild_p(sums: np.ndarray, patterns: np.ndarray) -> np.ndarray:
    """Two-sided wild cluster bootstrap p of each row: null imposed, Webb weights, every pattern, CR2-studentized.

    With equal clusters (share 1/C each) the CR2 t of weights v is A / sqrt(k (sum v^2 S^2 - A^2 / C)), A =
    sum v S: three products of the (P, C) patterns with the rows, no loop over patterns.
    """
    c = sums.shape[1]
    a = patterns @ sums.T  # (P, rows)
    b = (patterns * patterns) @ (sums * sums).T
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.abs(a) / np.sqrt(np.maximum(b - a * a / c, 0.0))
        observed = np.abs(sums.sum(axis=1)) / np.sqrt((sums * sums).sum(axis=1) - sums.sum(axis=1) ** 2 / c)
    # Patterns at the observed |t| up to rounding count as at least as extreme (the identity among them).
    return np.asarray((t >= observed[None, :] * (1 - 1e-10)).mean(axis=0), dtype=np.float64)


def holm_claims(p: np.ndarray) -> np.ndarray:
    return np.asarray(holm(p) <= 0.05)


def compare_tests(reps: int, clusters: tuple[int, ...]) -> None:
    print(f"\n## CR2 t (Bell-McCaffrey df) vs wild cluster bootstrap (Webb, null imposed), {reps} replications\n")
    print("| clusters | any false claim: CR2 t | wild bootstrap | m0's pairs (true +0.08): CR2 t | wild bootstrap |")
    print("|---:|---:|---:|---:|---:|")
    per_pair = {}
    for c in clusters:
        # -v gives the same |t| as v: the half of the patterns whose first weight is positive is enough.
        index = np.stack(np.meshgrid(*[np.arange(6)] * c, indexing="ij"), axis=-1).reshape(-1, c)
        patterns = WEBB[index[index[:, 0] >= 3]]
        false, power = np.zeros(2), np.zeros(2)
        rejected = np.zeros((2, 2))  # (test, level 0.05 / 0.005): null pairs rejected on their own
        rng = np.random.default_rng(300 + c)
        for _ in range(reps):
            null = pair_sums(c, 0.0, rng)
            for k, p in enumerate((cr2_p(null), wild_p(null, patterns))):
                false[k] += holm_claims(p).any()
                rejected[k] += (p[:, None] <= np.array([0.05, 0.005])[None, :]).sum(axis=0)
            led = pair_sums(c, 0.08, rng)
            for k, p in enumerate((cr2_p(led), wild_p(led, patterns))):
                power[k] += holm_claims(p)[:4].sum() / 4
        f, w = false / reps, power / reps
        cells = [f"{v:.1%} ± {se(v, reps):.1%}" for v in (*f, *w)]
        print(f"| {c} | " + " | ".join(cells) + " |", flush=True)
        per_pair[c] = rejected / (10 * reps)
    print(f"\nPer null pair on its own ({10 * reps} pairs per row): rejected at 0.05 / at 0.005\n")
    print("| clusters | CR2 t | wild bootstrap |")
    print("|---:|---:|---:|")
    for c, r in per_pair.items():
        print(f"| {c} | {r[0, 0]:.2%} / {r[0, 1]:.2%} | {r[1, 0]:.2%} / {r[1, 1]:.2%} |")


def category_board(c: int, effect: float, rng: np.random.Generator, seed: int) -> tuple[int, int, int, int]:
    """(false winners before, after; categories naming m0 before, after) in one replication."""
    runs = []
    for category in ("code", "math"):
        g = np.repeat(np.arange(c), 10)
        base = 0.5 + rng.normal(0, 0.1, c)[g] + rng.uniform(-0.2, 0.2, g.size)
        for m in range(4):
            e = effect if m == 0 else 0.0
            scores = np.clip(base + e + rng.normal(0, 0.05, c)[g] + rng.normal(0, 0.1, g.size), 0, 1)
            runs += [
                EvalRun(f"m{m}", f"{category}{t:04d}", "acc", float(s), category=category, cluster=f"r{g[t]:02d}")
                for t, s in enumerate(scores)
            ]
    out = []
    for by in ("none", "cluster"):
        named = [w for w in analyse(runs, b=B, seed=seed, cluster_by=by).category_best if w.named]
        out.append((sum(w.leader != "m0" or effect == 0 for w in named), sum(w.leader == "m0" for w in named)))
    return out[0][0], out[1][0], out[0][1], out[1][1]


def category_winners(reps: int) -> None:
    print(
        f"\n## Category winners over clusters: 4 models, 2 categories of C clusters x 10 tasks ({reps} replications)\n"
    )
    print("| clusters | any false winner, before | after | categories naming m0 (+0.08), before | after |")
    print("|---:|---:|---:|---:|---:|")
    for c in (8, 12, 30):
        rng = np.random.default_rng(400 + c)
        false = np.zeros(2)
        for r in range(reps):
            f = category_board(c, 0.0, rng, r)
            false += np.array(f[:2]) > 0
        hit = np.zeros(2)
        for r in range(reps):
            h = category_board(c, 0.08, rng, r)
            hit += np.array(h[2:]) / 2
        cells = [f"{v:.1%} ± {se(v, reps):.1%}" for v in (*(false / reps), *(hit / reps))]
        print(f"| {c} | " + " | ".join(cells) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--wild", action="store_true", help="the CR2 t-test against the wild cluster bootstrap")
    parser.add_argument("--clusters", type=int, nargs="+", default=[6, 8], help="with --wild: the cluster counts")
    parser.add_argument("--categories", action="store_true", help="category winners over clusters")
    args = parser.parse_args()
    reps = args.reps
    if args.categories:
        category_winners(reps)
        return
    if args.wild:
        compare_tests(reps, tuple(args.clusters))
        return
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
