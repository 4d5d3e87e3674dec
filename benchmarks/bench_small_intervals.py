"""Coverage and width of the mean's interval on small suites of continuous scores, and of category means.

    python benchmarks/bench_small_intervals.py              # 400 replications per cell
    python benchmarks/bench_small_intervals.py --reps 1000  # tighter
    python benchmarks/bench_small_intervals.py --part categories --means 0.97,0.99
    python benchmarks/bench_small_intervals.py --part alternatives  # the intervals not chosen, for models

Each cell draws ``reps`` independent suites of n tasks from one score distribution with a known mean
and asks whether the 95% interval contains it (target >= 93%), with the Monte Carlo SE
sqrt(p (1 - p) / reps) and the mean width. Replications are the rows of one score matrix (one
"model" each, on the same task ids), so the library's own code computes every interval at once:

* models: ``BootstrapEngine(...).models()`` (B = 1,000, exact multinomial resamples as ``analyse``
  draws them) and ``rows._intervals``: *before* is the rule this replaces (the percentile bootstrap
  hulled with the t-interval and Wilson's interval at the uncapped effective n; with weights, the
  weighted percentile interval hulled with the HC2 t-interval), *after* is the library's rule now.
* categories: ``rows.category_intervals`` on one category of n tasks; *before* is the percentile
  bootstrap of the category's mean (what a category interval would have been without a rule of its own).

* alternatives (models, unweighted): the studentized bootstrap (bootstrap-t, each resample's own
  s / sqrt(n)), the t-interval on the logit scale, and the hull of percentile, t and Wilson with the
  effective n capped at K x the tasks everywhere (no relaxation inside the range), K = 8, 10, 12, 15.

Distributions, each at mean 0.5, 0.9, 0.97, 0.99:
  beta      Beta(m nu, (1 - m) nu), nu = 4 at 0.5 (Beta(2, 2)) and 10 elsewhere (0.97: Beta(9.7, 0.3))
  bimodal   two Beta lumps of precision 20 (0.5: 0.2 and 0.8; 0.9: 0.5 and 0.95; 0.97 and 0.99: 0.6
            and 0.99 / 0.995), mixed to the mean
  ones      exact 1.0 with probability 0.3 / 0.6 / 0.8 / 0.9, else a Beta of precision 5 (partial credit)
  weighted  beta, with every fifth task weighted 3 (``task-weights: apply``; models only)
  binaryish Beta(m, 1 - m): every score within a hair of 0 or 1, 0/1 in all but name (a stress case
            outside the target: no rule for continuous scores covers it without widening every other cell)
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from leaderboard.stats import mean_intervals, rows
from leaderboard.stats.bootstrap import BootstrapEngine
from leaderboard.stats.clustering import t_quantile, wilson
from leaderboard.stats.design import Design
from leaderboard.stats.matrix import ScoreMatrix
from leaderboard.stats.paired import weighted_hull
from leaderboard.stats.resampling import FloatArray, percentile_interval, resampled_means

ALPHA = 0.05
B = 1000
MEANS = (0.5, 0.9, 0.97, 0.99)
MODEL_NS = (6, 10, 20, 30, 49)
CATEGORY_NS = (2, 3, 5, 10, 20, 49)
LUMPS = {0.5: (0.8, 0.2), 0.9: (0.95, 0.5), 0.97: (0.99, 0.6), 0.99: (0.995, 0.6)}
ONES = {0.5: 0.3, 0.9: 0.6, 0.97: 0.8, 0.99: 0.9}
CAPS = ["cap 8x", "cap 10x", "cap 12x", "cap 15x"]


def draw(rng: np.random.Generator, dist: str, mean: float, reps: int, n: int) -> FloatArray:
    if dist in ("beta", "weighted"):
        nu = 4.0 if mean == 0.5 else 10.0
        return rng.beta(mean * nu, (1 - mean) * nu, (reps, n))
    if dist == "bimodal":
        high, low = LUMPS[mean]
        share = (mean - low) / (high - low)
        upper = rng.beta(high * 20, (1 - high) * 20, (reps, n))
        lower = rng.beta(low * 20, (1 - low) * 20, (reps, n))
        return np.where(rng.random((reps, n)) < share, upper, lower)
    if dist == "ones":
        share = ONES[mean]
        rest = (mean - share) / (1 - share)
        partial = rng.beta(rest * 5, (1 - rest) * 5, (reps, n))
        return np.where(rng.random((reps, n)) < share, 1.0, partial)
    if dist == "binaryish":
        return rng.beta(mean, 1 - mean, (reps, n))
    raise ValueError(dist)


def task_weights(dist: str, n: int) -> FloatArray | None:
    return np.where(np.arange(n) % 5 == 4, 3.0, 1.0) if dist == "weighted" else None


def matrix_of(scores: FloatArray, weights: FloatArray | None) -> ScoreMatrix:
    reps, n = scores.shape
    return ScoreMatrix(
        model_ids=tuple(f"r{r}" for r in range(reps)),
        task_ids=tuple(f"t{t:03d}" for t in range(n)),
        scores=scores,
        present=np.ones((reps, n), dtype=bool),
        category_index=np.zeros((reps, n), dtype=np.int64),
        categories=("c",),
        weights_ignored=False,
        weights=weights,
    )


def model_intervals(scores: FloatArray, weights: FloatArray | None, seed: int) -> dict[str, tuple[FloatArray, ...]]:
    matrix = matrix_of(scores, weights)
    design = Design(cluster=None, cluster_names=(), weight=weights)
    theta = BootstrapEngine(matrix, B, seed, weights).models()
    means, lo, hi, _, _ = rows._intervals(matrix, theta, ALPHA, design)
    p_lo, p_hi = percentile_interval(theta, ALPHA)
    if weights is None:
        with mock.patch.object(mean_intervals, "EFFECTIVE_CAP", math.inf):
            _, b_lo, b_hi, _, _ = rows._intervals(matrix, theta, ALPHA, design)
    else:
        w = np.broadcast_to(weights, scores.shape)
        b_lo, b_hi = weighted_hull(scores * w, np.asarray(w), means, p_lo, p_hi, ALPHA, bounds=(0.0, 1.0))
    return {"before": (b_lo, b_hi), "after": (lo, hi)}


def category_intervals(scores: FloatArray, seed: int) -> dict[str, tuple[FloatArray, ...]]:
    matrix = matrix_of(scores, None)
    design = Design(cluster=None, cluster_names=(), weight=None)
    lo, hi, _ = rows.category_intervals(matrix, design, ALPHA)
    theta = resampled_means(scores, B, np.random.default_rng(seed))
    return {"before": percentile_interval(theta, ALPHA), "after": (lo[:, 0], hi[:, 0])}


def alternatives(scores: FloatArray, seed: int) -> dict[str, tuple[FloatArray, ...]]:
    _, n = scores.shape
    mean, sd = scores.mean(axis=1), scores.std(axis=1, ddof=1)
    se = sd / math.sqrt(n)
    idx = np.random.default_rng(seed).integers(0, n, (B, n))
    resampled = scores[:, idx]  # (reps, B, n)
    theta = resampled.mean(axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        t_star = (theta - mean[:, None]) / (resampled.std(axis=2, ddof=1) / math.sqrt(n))
    t_star = np.sort(np.where(np.isnan(t_star), 0.0, t_star), axis=1)
    k_lo, k_hi = math.floor((B + 1) * ALPHA / 2) - 1, math.ceil((B + 1) * (1 - ALPHA / 2)) - 1
    out: dict[str, tuple[FloatArray, ...]] = {
        "bootstrap-t": (
            np.clip(mean - t_star[:, k_hi] * se, 0, 1),
            np.clip(mean - t_star[:, k_lo] * se, 0, 1),
        )
    }
    q = float(t_quantile(1 - ALPHA / 2, np.array([n - 1.0]))[0])
    with np.errstate(invalid="ignore", divide="ignore"):
        logit, spread = np.log(mean / (1 - mean)), q * se / (mean * (1 - mean))
        out["logit t"] = (1 / (1 + np.exp(spread - logit)), 1 / (1 + np.exp(-logit - spread)))
    p_lo, p_hi = percentile_interval(theta, ALPHA)
    binary = ((scores == 0) | (scores == 1)).all(axis=1)
    for k in (8.0, 10.0, 12.0, 15.0):
        with np.errstate(invalid="ignore", divide="ignore"):
            n_eff = np.minimum(mean * (1 - mean) / (se * se), k * n)
        w_lo, w_hi = wilson(mean, n_eff, np.full(mean.shape, q))
        lo, hi = np.fmin(np.fmin(p_lo, mean - q * se), w_lo), np.fmax(np.fmax(p_hi, mean + q * se), w_hi)
        out[f"cap {k:g}x"] = (np.clip(lo, 0, 1), np.clip(hi, 0, 1))
    # Every alternative, as the library does, gives a suite of 0/1 scores (all 1.0: often, near the ceiling)
    # Wilson's interval at n.
    b_lo, b_hi = wilson(mean, np.full(mean.shape, float(n)), np.full(mean.shape, 1.959964))
    return {k: (np.where(binary, b_lo, lo), np.where(binary, b_hi, hi)) for k, (lo, hi) in out.items()}


def cell(hits: int, width: float, reps: int) -> str:
    p = hits / reps
    se = math.sqrt(max(p * (1 - p), 1e-12) / reps)
    return f"{100 * p:.1f}% ± {100 * se:.1f}% ({width:.3f})"


def run(part: str, dists: list[str], means: list[float], ns: tuple[int, ...], reps: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    keys = ["before", "after"] if part != "alternatives" else ["bootstrap-t", "logit t", *CAPS]
    print(f"\n{part}: coverage ± SE (mean width); {reps} replications per cell\n")
    print("| scores | mean | n | " + " | ".join(keys) + " |\n|---|---:|---:|" + "---:|" * len(keys))
    for dist in dists:
        for mean in means:
            for n in ns:
                scores = draw(rng, dist, mean, reps, n)
                weights = task_weights(dist, n)
                truth = mean  # every task's score has the same distribution: so has the weighted mean
                if part == "models":
                    got = model_intervals(scores, weights, int(rng.integers(2**31)))
                elif part == "categories":
                    got = category_intervals(scores, int(rng.integers(2**31)))
                else:
                    got = alternatives(scores, int(rng.integers(2**31)))
                shown = []
                for key in keys:
                    lo, hi = got[key]
                    # An interval that is not there (every score equal) does not cover.
                    covered = np.nan_to_num(lo, nan=2.0) <= truth
                    covered &= truth <= np.nan_to_num(hi, nan=-1.0)
                    shown.append(cell(int(covered.sum()), float(np.nanmean(hi - lo)), reps))
                print(f"| {dist} | {mean} | {n} | " + " | ".join(shown) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--part", choices=("models", "categories", "both", "alternatives"), default="both")
    parser.add_argument("--dists", default="beta,bimodal,ones,weighted,binaryish")
    parser.add_argument("--means", default=",".join(str(m) for m in MEANS))
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args()
    dists = args.dists.split(",")
    means = [float(m) for m in args.means.split(",")]
    start = time.perf_counter()
    if args.part in ("models", "both"):
        run("models", dists, means, MODEL_NS, args.reps, args.seed)
    if args.part in ("categories", "both"):
        run("categories", [d for d in dists if d != "weighted"], means, CATEGORY_NS, args.reps, args.seed + 1)
    if args.part == "alternatives":
        run("alternatives", [d for d in dists if d != "weighted"], means, MODEL_NS, args.reps, args.seed)
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
