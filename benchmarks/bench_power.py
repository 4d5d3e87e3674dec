"""Does "detects ±x with 80% power" come true? Before (the normal formula on the median pair) and after (power.py).

Each replication draws a suite from a world of models whose per-task differences are spread unequally
(so the pair a reader asks about is not the median pair), computes the figure as the statistics do
(the family's p-values, Holm's level in force, the typical pair and its detectable difference), then
draws a fresh suite of the same size for the pair the figure is checked on, with that pair's true
difference set to the printed x, and runs the test the statistics run (sign-flip p, with the family's
Monte Carlo refinement) at the printed level. The rate of detection is the promise kept.

* pairs: 5 models, every pair two-sided, Holm over the 10 pairs.
* gate: 4 models against their baselines, one-sided drops, Holm over the 4.
* continuous: normal task effects plus model noise of unequal spread; binary: 0/1 outcomes whose
  discordance differs by pair. A fresh pair at true difference x keeps the world's spread of the
  pair's centred differences (continuous) or its discordant share (binary).

"before" is checked on the pair a reader reads it beside (the top two; the gate's first model),
"after" on the pair it names. Rates are ± one Monte Carlo SE.

Clustered (``--clustered``): five equal models on C clusters of 20 tasks (C = 6, 8, 12, 30), each model
with its own advantage per cluster (sd 0.02-0.10) and its own task noise (sd 0.05-0.25), so the pairs'
per-cluster differences spread unequally. The figure is the one ``analyse(cluster_by="cluster")`` prints
(the typical pair, the level in force); a fresh suite of C clusters for the named pair, its true
difference set to x, is tested as the statistics test it (the CR2 t-test where 2 / 2^C cannot reach the
family's first level 0.05 / 10, else the cluster sign-flip; either way with the CR2 interval excluding 0).
"before" is the figure the sign-flip power gave (none at 6 and 8 clusters: "cannot detect"). The gate:
four models re-run, each PR score its baseline's plus the model's own per-cluster change and task noise
(the same spreads), ``compare(cluster_by="cluster")`` one-sided over the four (the CR2 t-test where
1 / 2^C cannot reach 0.05 / 4: at 6 clusters); a fresh re-run of the named model with its true change
set to a drop of x.

    python benchmarks/bench_power.py --reps 200
    python benchmarks/bench_power.py --clustered --reps 200
"""

from __future__ import annotations

import argparse
import math
import time
from statistics import NormalDist

import numpy as np

from leaderboard import EvalRun, analyse
from leaderboard.stats.comparison import compare
from leaderboard.stats.family import family_members
from leaderboard.stats.paired import cluster_figures, decide, sign_flip
from leaderboard.stats.power import ClusterTest, detectable_for, typical

ALPHA = 0.05
SIGMA = np.array([0.04, 0.08, 0.12, 0.2, 0.3])  # model noise: pair spreads differ
MEANS = np.array([0.50, 0.51, 0.52, 0.53, 0.54])
LOGIT_SLOPE = np.array([0.3, 0.6, 1.0, 1.6, 2.4])  # binary: how strongly each model follows task difficulty


def suite(rng: np.random.Generator, n: int, binary: bool) -> np.ndarray:
    """(models, tasks) scores."""
    task = rng.normal(0.0, 1.0, n)
    if binary:
        logits = LOGIT_SLOPE[:, None] * task[None, :] + np.log(MEANS / (1 - MEANS))[:, None]
        noise = rng.normal(0.0, 0.5, (MEANS.size, n))
        return (rng.random((MEANS.size, n)) < 1.0 / (1.0 + np.exp(-(logits + noise)))).astype(np.float64)
    return MEANS[:, None] + 0.1 * task[None, :] + SIGMA[:, None] * rng.normal(0.0, 1.0, (MEANS.size, n))


def old_figure(sd: np.ndarray, n: int, level: float, two_sided: bool) -> float:
    z = NormalDist().inv_cdf(1 - (level / 2 if two_sided else level)) + NormalDist().inv_cdf(0.8)
    return z * float(np.median(sd)) / math.sqrt(n)


def figures(scores: np.ndarray, gate: bool, seed: int) -> tuple[float, float, float, tuple[int, int], tuple[int, int]]:
    """(old x, new x, level, the pair after names, the pair before is read beside) of one suite."""
    m, n = scores.shape
    if gate:
        # The PR's scores: each model's baseline row is the next model's (a fixed unequal spread of change).
        a, b = np.arange(m - 1), np.arange(1, m)
    else:
        a, b = np.triu_indices(m, 1)
    diffs = scores[a] - scores[b]
    sd = diffs.std(axis=1, ddof=1)
    member = family_members(np.count_nonzero(diffs, axis=1), 2 * ALPHA if gate else ALPHA)
    p, _ = sign_flip(diffs)
    if gate:
        mean = diffs.mean(axis=1)
        decisions = decide(p, member, ALPHA, "holm", one_sided_rows=diffs, down=mean < 0)
    else:
        decisions = decide(p, member, ALPHA, "holm")
    level = decisions.level
    k = typical(np.full(a.size, n), sd)
    assert k is not None
    new = detectable_for(diffs[k], np.ones(n), level, two_sided=not gate, seed=seed, pair=("a", "b"), sd=sd[k])
    old = old_figure(sd, n, level, not gate)
    order = np.argsort(-scores.mean(axis=1))
    read = (int(a[0]), int(b[0])) if gate else (int(order[0]), int(order[1]))
    return old, new.difference, level, (int(a[k]), int(b[k])), read


def detected(rng: np.random.Generator, n: int, binary: bool, pair: tuple[int, int], x: float, level: float,
             gate: bool, seed: int) -> bool:  # fmt: skip
    """A fresh suite of the pair, its true difference set to x (toward a drop for the gate): detected at level?"""
    if not math.isfinite(x):
        return False
    fresh = suite(rng, n, binary)
    d = fresh[pair[0]] - fresh[pair[1]]
    sign = -1.0 if gate else 1.0
    if binary:
        discordant = rng.random(n) < max(DISCORDANCE[(n, pair)], x)
        psi = max(DISCORDANCE[(n, pair)], x)
        up = rng.random(n) < (psi + x) / (2 * psi)
        d = np.where(discordant, np.where(up, 1.0, -1.0), 0.0) * sign
    else:
        d = d - TRUE_MEAN[pair] + sign * x
    p, _ = sign_flip(d[None, :])
    if gate:
        return bool(d.sum() < 0 and p[0] / 2 <= level)
    return bool(p[0] <= level)


DISCORDANCE: dict[tuple[int, tuple[int, int]], float] = {}
TRUE_MEAN: dict[tuple[int, int], float] = {}


def world(binary: bool) -> None:
    """The world's true pair means and discordant shares, from one large draw."""
    big = suite(np.random.default_rng(12345), 400_000, binary)
    for i in range(MEANS.size):
        for j in range(MEANS.size):
            if i != j:
                TRUE_MEAN[(i, j)] = float((big[i] - big[j]).mean())
                for n in SIZES:
                    DISCORDANCE[(n, (i, j))] = float(np.mean(big[i] != big[j]))


SIZES = (12, 16, 41, 200, 1000)

# Clustered: each model's own advantage per cluster, and its own task noise.
CLUSTER_TAU = np.array([0.02, 0.04, 0.06, 0.08, 0.10])
CLUSTER_SIGMA = np.array([0.05, 0.10, 0.15, 0.20, 0.25])
CLUSTER_TASKS = 20


def clustered_suite(rng: np.random.Generator, c: int) -> tuple[np.ndarray, np.ndarray]:
    """((models, tasks) scores, each task's cluster) of five equal models on c clusters."""
    g = np.repeat(np.arange(c), CLUSTER_TASKS)
    base = 0.5 + rng.normal(0, 0.1, c)[g] + rng.uniform(-0.2, 0.2, g.size)
    own = CLUSTER_TAU[:, None] * rng.normal(0, 1, (CLUSTER_TAU.size, c))[:, g]
    noise = CLUSTER_SIGMA[:, None] * rng.normal(0, 1, (CLUSTER_SIGMA.size, g.size))
    return np.clip(base[None, :] + own + noise, 0.0, 1.0), g


def cluster_sums(d: np.ndarray, g: np.ndarray, c: int) -> tuple[np.ndarray, np.ndarray]:
    return np.bincount(g, weights=d, minlength=c)[None, :], np.bincount(g, minlength=c).astype(float)[None, :]


def clustered_rates(c: int, reps: int) -> tuple[np.ndarray, np.ndarray, float]:
    """(detection at the figure before / after, the mean figures before / after, the share tested by CR2 t)."""
    big, _ = clustered_suite(np.random.default_rng(4321), 20_000)
    rng = np.random.default_rng(1000 + c)
    test = ClusterTest(ALPHA / 10, 6)  # five models: ten pairs, every one a member at 6+ clusters
    hits, xs = np.zeros((2, reps)), np.full((2, reps), np.nan)
    for r in range(reps):
        scores, g = clustered_suite(rng, c)
        ids = [f"m{m}" for m in range(scores.shape[0])]
        runs = [
            EvalRun(ids[m], f"t{t:04d}", "acc", float(scores[m, t]), cluster=f"k{g[t]:02d}")
            for m in range(scores.shape[0])
            for t in range(g.size)
        ]
        d = analyse(runs, b=400, seed=r, cluster_by="cluster", correction="holm").detectable()
        assert d is not None
        i, j = (ids.index(m) for m in d.pair)
        totals, sizes = cluster_sums(scores[i] - scores[j], g, c)
        before = detectable_for(
            totals[0], sizes[0], d.level, two_sided=True, seed=r, pair=d.pair, sd=d.sd, unit="cluster"
        )
        xs[:, r] = before.difference, d.difference
        fresh, fg = clustered_suite(rng, c)
        centred = fresh[i] - fresh[j] - float((big[i] - big[j]).mean())
        for k, x in enumerate(xs[:, r]):
            if not math.isfinite(x):
                continue
            t, s = cluster_sums(centred + x, fg, c)
            figures = cluster_figures(t, t, s, ALPHA)
            p = figures.t_p if test.t_test_at(c) else sign_flip(t)[0]
            hits[k, r] = bool(p[0] <= d.level and (figures.ci_lo[0] > 0 or figures.ci_hi[0] < 0))
    shown = np.array([float(np.mean(row[np.isfinite(row)])) if np.isfinite(row).any() else math.nan for row in xs])
    return hits.mean(axis=1), shown, test.t_test_at(c)


def rerun(rng: np.random.Generator, base: np.ndarray, g: np.ndarray) -> np.ndarray:
    """A PR's scores of the first four models: each baseline score plus the model's own change."""
    c = int(g.max()) + 1
    own = CLUSTER_TAU[:4, None] * rng.normal(0, 1, (4, c))[:, g]
    return np.clip(base[:4] + own + CLUSTER_SIGMA[:4, None] * rng.normal(0, 1, (4, g.size)), 0.0, 1.0)


def gate_rates(c: int, reps: int) -> tuple[np.ndarray, np.ndarray, float]:
    """As clustered_rates, for the gate: a drop of x in the named model, one-sided at the printed level."""
    big_base, big_g = clustered_suite(np.random.default_rng(4322), 20_000)
    big = rerun(np.random.default_rng(4323), big_base, big_g) - big_base[:4]
    rng = np.random.default_rng(2000 + c)
    test = ClusterTest(2 * ALPHA / 4, 6)
    hits, xs = np.zeros((2, reps)), np.full((2, reps), np.nan)
    ids = [f"m{m}" for m in range(4)]

    def runs_of(scores: np.ndarray, g: np.ndarray) -> list[EvalRun]:
        return [
            EvalRun(ids[m], f"t{t:04d}", "acc", float(scores[m, t]), cluster=f"k{g[t]:02d}")
            for m in range(4)
            for t in range(g.size)
        ]

    for r in range(reps):
        base, g = clustered_suite(rng, c)
        pr = rerun(rng, base, g)
        d = compare(
            runs_of(base[:4], g), runs_of(pr, g), b=400, alpha=ALPHA, seed=r, cluster_by="cluster", correction="holm"
        ).detectable
        assert d is not None
        i = ids.index(d.pair[0])
        totals, sizes = cluster_sums(pr[i] - base[i], g, c)
        before = detectable_for(
            totals[0], sizes[0], d.level, two_sided=False, seed=r, pair=d.pair, sd=d.sd, unit="cluster"
        )
        xs[:, r] = before.difference, d.difference
        fresh_base, fg = clustered_suite(rng, c)
        change = rerun(rng, fresh_base, fg)[i] - fresh_base[i] - float(big[i].mean())
        for k, x in enumerate(xs[:, r]):
            if not math.isfinite(x):
                continue
            t, s = cluster_sums(change - x, fg, c)
            p = cluster_figures(t, t, s, ALPHA).t_p if test.t_test_at(c) else sign_flip(t)[0]
            hits[k, r] = bool(t.sum() < 0 and p[0] / 2 <= d.level)
    shown = np.array([float(np.mean(row[np.isfinite(row)])) if np.isfinite(row).any() else math.nan for row in xs])
    return hits.mean(axis=1), shown, test.t_test_at(c)


def clustered_main(reps: int, *, gate_only: bool = False) -> None:
    print(f"{'clusters':<10} {'before':>14} {'after':>14}  mean x before/after  test")
    cells = ((clustered_rates, "pairs"), (gate_rates, "gate"))
    for rates, what in cells[1:] if gate_only else cells:
        for c in (6, 8, 12, 30):
            start = time.perf_counter()
            rate, x, t_test = rates(c, reps)
            se = np.sqrt(rate * (1 - rate) / reps)
            shown = "  ".join(f"{100 * v:5.1f}% ± {100 * e:3.1f}" for v, e in zip(rate, se, strict=True))
            test = "CR2 t" if t_test else "sign-flip"
            elapsed = (time.perf_counter() - start) / reps
            print(f"{what} {c:<4} {shown}  {x[0]:.3f}/{x[1]:.3f}  {test}  {elapsed:.2f} s/rep", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--only", choices=("continuous", "binary"), help="one kind of scores")
    parser.add_argument("--clustered", action="store_true", help="the clustered designs (6 to 30 clusters)")
    parser.add_argument("--gate", action="store_true", help="with --clustered: the gate only")
    args = parser.parse_args()
    if args.clustered:
        clustered_main(args.reps, gate_only=args.gate)
        return
    print(f"{'cell':<24} {'before (top pair)':>20} {'before (named)':>18} {'after (named)':>18}  mean x old/new  s/rep")
    for binary in (False, True):
        if args.only is not None and binary != (args.only == "binary"):
            continue
        world(binary)
        for gate in (False, True):
            for n in SIZES:
                rng = np.random.default_rng(n * 7 + binary * 3 + gate)
                hits = np.zeros((3, args.reps))
                xs = np.zeros((2, args.reps))
                start = time.perf_counter()
                for r in range(args.reps):
                    scores = suite(rng, n, binary)
                    old, new, level, named, read = figures(scores, gate, r)
                    xs[:, r] = old, new
                    hits[0, r] = detected(rng, n, binary, read, old, level, gate, r + 1)
                    hits[1, r] = detected(rng, n, binary, named, old, level, gate, r + 1)
                    hits[2, r] = detected(rng, n, binary, named, new, level, gate, r + 1)
                rate = hits.mean(axis=1)
                se = np.sqrt(rate * (1 - rate) / args.reps)
                cell = f"{'binary' if binary else 'continuous'} {'gate' if gate else 'pairs'} n={n}"
                shown = "  ".join(f"{100 * v:5.1f}% ± {100 * s:3.1f}" for v, s in zip(rate, se, strict=True))
                elapsed = (time.perf_counter() - start) / args.reps
                print(f"{cell:<24} {shown}  {np.nanmean(xs[0]):.3f}/{np.nanmean(xs[1]):.3f}  {elapsed:.2f}", flush=True)


if __name__ == "__main__":
    main()
