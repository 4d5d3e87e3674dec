"""Each model's row: its mean with its interval, win rate and category means, ranked; then its rank range."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from statistics import NormalDist
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from ..records import LeaderboardRow
from .clustering import clustered_wilson, cr2, t_interval, wilson
from .design import Design
from .matrix import ScoreMatrix, row_sums
from .mean_intervals import bounded_interval, task_moments
from .paired import weighted_hull
from .pairs import PairTable
from .resampling import FloatArray, percentile_interval
from .ties import TIE_ABS_TOL, TIE_REL_TOL, tie_key, tie_tolerance
from .weights import kish

RankBy = Literal["mean", "win-rate"]
# Below this many tasks a continuous model's bootstrap interval is widened to the t-interval where wider.
SMALL_SUITE = 50
WIDENED = "percentile bootstrap, t and Wilson hull"
RANK_BY: tuple[RankBy, ...] = ("mean", "win-rate")


def _win_rates(matrix: ScoreMatrix) -> tuple[FloatArray, NDArray[np.int64]]:
    """Per model: share of its tasks on which it is within ``math.isclose`` of the best score."""
    scores = matrix.scores
    best = np.nanmax(scores, axis=0)
    with np.errstate(invalid="ignore"):
        tol = tie_tolerance(scores, best)
        wins = (np.abs(scores - best) <= tol) & matrix.present
    completed = matrix.present.sum(axis=1)
    rates = np.where(completed > 0, wins.sum(axis=1) / np.maximum(completed, 1), 0.0)
    return rates.astype(np.float64), completed.astype(np.int64)


def _order(model_ids: Sequence[str], means: FloatArray, rates: FloatArray, rank_by: RankBy) -> list[int]:
    mean_key = [tie_key(v) for v in means]
    rate_key = [tie_key(v) for v in rates]
    if rank_by == "mean":
        return sorted(range(len(model_ids)), key=lambda m: (-mean_key[m], -rate_key[m], model_ids[m]))
    return sorted(range(len(model_ids)), key=lambda m: (-rate_key[m], -mean_key[m], model_ids[m]))


def _ci_note(values: FloatArray) -> str | None:
    if values.size < 2:
        return f"n={values.size}"
    low, high = float(values.min()), float(values.max())
    if math.isclose(low, high, rel_tol=TIE_REL_TOL, abs_tol=TIE_ABS_TOL):
        return "all equal"
    return None


_CI_METHODS = {
    (False, False): "percentile bootstrap",
    (False, True): "Wilson",
    (True, False): "CR2 t",
    (True, True): "clustered Wilson",
}


def binary_models(matrix: ScoreMatrix) -> NDArray[np.bool_]:
    """Models whose every score is 0 or 1: their interval is a score interval, not a bootstrap."""
    s = matrix.scores
    return np.asarray(((s == 0.0) | (s == 1.0) | ~matrix.present).all(axis=1) & matrix.present.any(axis=1))


def _small(n: NDArray[np.integer], binary: NDArray[np.bool_], notes: Sequence[str | None]) -> NDArray[np.bool_]:
    """Continuous models below SMALL_SUITE tasks whose scores are not all equal: their interval is widened."""
    return np.asarray((n < SMALL_SUITE) & ~binary & np.array([note is None for note in notes], dtype=bool))


def _small_suite(
    filled: FloatArray, present: FloatArray, means: FloatArray, lo: FloatArray, hi: FloatArray, alpha: float
) -> tuple[FloatArray, FloatArray]:
    """A continuous model's percentile interval below SMALL_SUITE tasks, hulled with the bounded interval.

    The percentile interval is too narrow there (86.7% at 6 tasks, 71.0% at 6 tasks near the ceiling
    in bench_small_intervals.py): the hull adds Student's t-interval (the small-sample df the bootstrap
    lacks) and Wilson's interval at the scores' own variance with its effective n capped
    (mean_intervals.py: the long tail toward the middle that a few scores near a bound miss).
    ``filled``: each task's (weight x) score, 0 where absent; ``present``: its weight, 0 where absent.
    """
    moments = replace(cr2(filled, present), mean=means)  # HC2: every task its own cluster, weights as sizes
    b_lo, b_hi = bounded_interval(moments, kish(present, present > 0), alpha)
    return np.fmin(lo, b_lo), np.fmax(hi, b_hi)


def _intervals(
    matrix: ScoreMatrix, theta: FloatArray | None, alpha: float, design: Design
) -> tuple[FloatArray, FloatArray, FloatArray, list[str | None], FloatArray]:
    """Each model's mean, CI and why the CI tells nothing; and its Bell-McCaffrey df (NaN unclustered).

    0/1 scores get Wilson's interval (its clustered version with clustering on); other scores the
    percentile bootstrap (with task weights, its hull with the t-interval; below SMALL_SUITE tasks,
    its hull with the bounded interval of mean_intervals.py), or with clustering on the CR2
    t-interval on cluster totals.
    """
    present = matrix.present
    w = design.weight[None, :] if design.weight is not None else np.ones((1, present.shape[1]))
    wp = np.where(present, w, 0.0)
    filled = np.where(present, matrix.scores, 0.0)
    n = present.sum(axis=1)
    if design.weight is None:
        means = np.array([np.mean(matrix.scores[m, present[m]]) for m in range(present.shape[0])])
        n_eff = n.astype(np.float64)
    else:
        means = row_sums(filled * w, present) / row_sums(wp, present)
        n_eff = kish(np.broadcast_to(w, present.shape), present)
    binary = binary_models(matrix)
    df = np.full(means.shape, np.nan)
    notes: list[str | None] = [None] * means.size
    if design.cluster is None:
        assert theta is not None
        lo, hi = percentile_interval(theta, alpha)
        if design.weight is not None:
            lo, hi = weighted_hull(filled * w, wp, means, lo, hi, alpha, bounds=(0.0, 1.0))
        for m in np.flatnonzero(~binary):
            notes[m] = _ci_note(matrix.scores[m, present[m]])
        # An interval of all-equal scores stays the degenerate bootstrap one.
        small = np.flatnonzero(_small(n, binary, notes))
        if small.size:
            weighted = (filled * w)[small]
            lo[small], hi[small] = _small_suite(weighted, wp[small], means[small], lo[small], hi[small], alpha)
        if binary.any():
            z = np.full(int(binary.sum()), NormalDist().inv_cdf(1.0 - alpha / 2.0))
            lo[binary], hi[binary] = wilson(means[binary], n_eff[binary], z)
        for m in np.flatnonzero(~binary):
            notes[m] = _ci_note(matrix.scores[m, present[m]])
        return means, lo, hi, notes, df
    onehot = design.onehot
    moments = cr2(onehot.sums(filled * w), onehot.sums(wp))
    moments = replace(moments, mean=means)
    lo, hi = t_interval(moments, alpha)
    if binary.any():
        sub = replace(
            moments,
            mean=means[binary],
            variance=moments.variance[binary],
            df=moments.df[binary],
            clusters=moments.clusters[binary],
            largest_share=moments.largest_share[binary],
        )
        lo[binary], hi[binary] = clustered_wilson(sub, n_eff[binary], alpha)
    for k in range(means.size):
        if moments.clusters[k] < 2:
            notes[k] = f"{int(moments.clusters[k])} cluster"
            lo[k] = hi[k] = means[k]
        elif not binary[k]:
            notes[k] = _ci_note(matrix.scores[k, present[k]])
    return means, np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0), notes, moments.df


def category_intervals(
    matrix: ScoreMatrix, design: Design, alpha: float
) -> tuple[FloatArray, FloatArray, NDArray[np.int64]]:
    """Each model's interval of each category mean (models, categories): lo, hi and its task count.

    The bounded interval of mean_intervals.py over the category's tasks (a model has one mean per
    category, so there is no bootstrap to hull with); 0/1 scores Wilson's, as a model's. The
    category's tasks are its units whatever ``cluster-by`` says: the category is fixed, its tasks
    sampled. NaN with one task, or with every (continuous) score equal: ``category_note`` says which.
    """
    models, categories = len(matrix.model_ids), len(matrix.categories)
    rows, tasks = np.nonzero(matrix.present)
    group = rows * categories + matrix.category_index[rows, tasks]
    groups = models * categories
    values = matrix.scores[rows, tasks]
    weight = design.weight[tasks] if design.weight is not None else None
    moments = task_moments(values, weight, group, groups)
    n = moments.clusters
    n_kish = n.astype(np.float64)
    if weight is not None:
        total = np.bincount(group, weights=weight, minlength=groups)
        with np.errstate(invalid="ignore", divide="ignore"):
            n_kish = total * total / np.bincount(group, weights=weight * weight, minlength=groups)
    lo, hi = bounded_interval(moments, n_kish, alpha, t_one_by_one=True)
    # Equal scores (by the one tie rule) have no spread to read, whatever rounding left in V.
    low, high = np.full(groups, np.inf), np.full(groups, -np.inf)
    np.minimum.at(low, group, values)
    np.maximum.at(high, group, values)
    with np.errstate(invalid="ignore"):
        flat = np.abs(high - low) <= np.maximum(TIE_REL_TOL * np.maximum(np.abs(low), np.abs(high)), TIE_ABS_TOL)
    lo[flat], hi[flat] = np.nan, np.nan
    binary = np.bincount(group, weights=((values != 0.0) & (values != 1.0)).astype(np.float64), minlength=groups)
    binary = (binary == 0) & (n >= 2)
    if binary.any():
        z = np.full(int(binary.sum()), NormalDist().inv_cdf(1.0 - alpha / 2.0))
        lo[binary], hi[binary] = wilson(moments.mean[binary], n_kish[binary], z)
    shape = (models, categories)
    return lo.reshape(shape), hi.reshape(shape), n.reshape(shape)


def category_note(lo: float, tasks: int) -> str | None:
    """Why a category mean has no interval: one task ("n=1"), or every score equal; None when it has one."""
    if tasks == 1:
        return "n=1"
    return "all equal" if math.isnan(lo) else None


def model_rows(
    matrix: ScoreMatrix, theta: FloatArray | None, alpha: float, rank_by: RankBy, design: Design
) -> tuple[list[LeaderboardRow], FloatArray, FloatArray]:
    means, lo, hi, ci_notes, df = _intervals(matrix, theta, alpha, design)
    binary = binary_models(matrix)
    widened = _small(matrix.present.sum(axis=1), binary, ci_notes) & (design.cluster is None)
    rates, completed = _win_rates(matrix)
    cat_lo, cat_hi, cat_n = category_intervals(matrix, design, alpha)
    rows = []
    for m in _order(matrix.model_ids, means, rates, rank_by):
        own = matrix.present[m]
        cats = matrix.category_index[m, own]
        w = design.weight[own] if design.weight is not None else np.ones(int(own.sum()))
        sums = np.bincount(cats, weights=matrix.scores[m, own] * w, minlength=len(matrix.categories))
        counts = np.bincount(cats, minlength=len(matrix.categories))
        totals = np.bincount(cats, weights=w, minlength=len(matrix.categories))
        categories = {matrix.categories[c]: float(sums[c] / totals[c]) for c in np.flatnonzero(counts)}
        notes = {matrix.categories[c]: category_note(cat_lo[m, c], int(cat_n[m, c])) for c in np.flatnonzero(counts)}
        rows.append(
            LeaderboardRow(
                model_id=matrix.model_ids[m],
                mean_score=float(means[m]),
                mean_ci_lo=float(lo[m]),
                mean_ci_hi=float(hi[m]),
                win_rate=float(rates[m]),
                tasks_completed=int(completed[m]),
                categories=categories,
                category_tasks={matrix.categories[c]: int(counts[c]) for c in np.flatnonzero(counts)},
                category_ci={
                    matrix.categories[c]: (float(cat_lo[m, c]), float(cat_hi[m, c]))
                    for c in np.flatnonzero(counts)
                    if notes[matrix.categories[c]] is None
                },
                category_ci_notes={c: note for c, note in notes.items() if note is not None},
                ci_note=ci_notes[m],
                ci_method=WIDENED if widened[m] else _CI_METHODS[(design.cluster is not None, bool(binary[m]))],
            )
        )
    return rows, means, df


def category_tasks(matrix: ScoreMatrix) -> dict[str, int]:
    """Distinct tasks per category, over every model."""
    n_tasks = len(matrix.task_ids)
    index, present = matrix.category_index, matrix.present
    if index.shape[0]:
        # A task in one category for every model that ran it (the usual case) counts once there: no sort.
        highest = index.max(axis=0)
        lowest = np.where(present, index, np.iinfo(np.int64).max).min(axis=0)
        ran = present.any(axis=0)
        if np.array_equal(highest[ran], lowest[ran]):
            counts = np.bincount(highest[ran], minlength=len(matrix.categories))
            return {c: int(counts[k]) for k, c in enumerate(matrix.categories)}
    cells = np.flatnonzero(present.ravel())
    codes = np.unique(index.ravel()[cells] * n_tasks + cells % n_tasks)
    counts = np.bincount(codes // n_tasks, minlength=len(matrix.categories))
    return {c: int(counts[k]) for k, c in enumerate(matrix.categories)}


def all_tied_tasks(matrix: ScoreMatrix) -> int:
    """Tasks run by two or more models on which every one of them has the top score."""
    scores = matrix.scores
    with np.errstate(invalid="ignore"):
        best, worst = np.nanmax(scores, axis=0), np.nanmin(scores, axis=0)
        tol = tie_tolerance(best, worst)
        tied = np.abs(best - worst) <= tol
    return int(np.count_nonzero(tied & (matrix.present.sum(axis=0) >= 2)))


def rank_ranges(rows: list[LeaderboardRow], table: PairTable, best: NDArray[np.bool_]) -> list[LeaderboardRow]:
    """Each model's rank range (Chatbot Arena's "rank (UB)", paired): 1 for the models in the confidence set
    for the best (``best``, per ranking position; stats/best.py), else at least 2 and 1 + the models
    significantly ahead; to M - the models significantly behind."""
    m = len(rows)
    sig = table.significant
    ahead = np.bincount(table.b[sig], minlength=m)  # models significantly ahead of each
    behind = np.bincount(table.a[sig], minlength=m)
    lo = np.where(best, 1, np.maximum(2, 1 + ahead))
    return [replace(row, rank_lo=int(lo[k]), rank_hi=max(int(lo[k]), m - int(behind[k]))) for k, row in enumerate(rows)]
