"""Leaderboard statistics: means with bootstrap CIs, win-rates, category means, paired differences.

The specification is ``leaderboard-aggregation.md``; docs/statistics.md (and the
README) say what is resampled for each number.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from .records import EvalRun, LeaderboardRow, PairwiseDiff
from .resampling import (
    EXACT_LIMIT,
    EXACT_PAIR_LIMIT,
    FloatArray,
    encode_ids,
    keyed_rng,
    percentile_interval,
    poisson_weights,
    resampled_means,
    task_keys,
)
from .validation import validate_runs

RankBy = Literal["mean", "win-rate"]
RANK_BY: tuple[RankBy, ...] = ("mean", "win-rate")

# Ties: math.isclose(score, best, abs_tol=TIE_ABS_TOL) with its default rel_tol.
TIE_ABS_TOL = 1e-12
TIE_REL_TOL = 1e-9
# Below this many shared tasks no test can reach 5% (a two-sided sign test's floor is 2/2^5).
MIN_SHARED_FOR_SIGNIFICANCE = 6


@dataclass(frozen=True)
class Leaderboard:
    """Everything one analysis produces, with the parameters that produced it."""

    rows: tuple[LeaderboardRow, ...]
    pairs: tuple[PairwiseDiff, ...]
    alpha: float
    b: int
    seed: int
    rank_by: RankBy
    n_runs: int
    n_models: int
    n_tasks: int
    categories: tuple[str, ...]
    weights_ignored: bool


@dataclass(frozen=True)
class _Matrix:
    model_ids: tuple[str, ...]
    task_ids: tuple[str, ...]
    scores: FloatArray  # (models, tasks); NaN where a model has no score
    present: NDArray[np.bool_]
    category_index: NDArray[np.int64]  # (models, tasks); -1 where absent
    categories: tuple[str, ...]
    weights_ignored: bool


def _check_parameters(b: int, alpha: float) -> None:
    if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b < 1:
        raise ValueError(f"b (the number of bootstrap resamples) must be a positive integer, got {b!r}")
    if not (isinstance(alpha, (int, float)) and 0.0 < alpha < 1.0):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")


def _column(runs: Sequence[EvalRun], name: str) -> list[Any]:
    return list(map(attrgetter(name), runs))


def _valid_strings(column: list[Any]) -> set[str] | None:
    """The distinct values, if every one is a non-empty string."""
    if not set(map(type, column)) <= {str}:
        return None
    distinct: set[str] = set(column)
    return distinct if all(v.strip() for v in distinct) else None


def _valid_numbers(column: list[Any]) -> NDArray[np.float64] | None:
    # bool is excluded by exact type; numpy scalars and the like take the slow, thorough path.
    if not set(map(type, column)) <= {float, int}:
        return None
    return np.array(column, dtype=np.float64)


def _matrix(runs: Sequence[EvalRun]) -> _Matrix:
    """Scores as a (models x tasks) matrix, rows and columns in sorted id order.

    A cheap columnar check passes any valid input; only a failure pays for the
    record-by-record report that names every problem.
    """
    if set(map(type, runs)) != {EvalRun}:
        validate_runs(runs)
    model_col, task_col, category_col = (_column(runs, n) for n in ("model_id", "task_id", "category"))
    distinct = [_valid_strings(c) for c in (model_col, task_col, category_col, _column(runs, "metric_name"))]
    scores = _valid_numbers(_column(runs, "score"))
    weights = _valid_numbers(_column(runs, "weight"))
    if (
        any(d is None for d in distinct)
        or scores is None
        or weights is None
        or not (np.all(scores >= 0.0) and np.all(scores <= 1.0))
        or not (np.all(np.isfinite(weights)) and np.all(weights > 0.0))
    ):
        validate_runs(runs)  # raises InvalidEvalRuns with every problem
    assert scores is not None and weights is not None
    model_ids, task_ids, categories = (tuple(sorted(d or ())) for d in distinct[:3])
    n_tasks = len(task_ids)
    m_of = {m: i for i, m in enumerate(model_ids)}
    t_of = {t: i for i, t in enumerate(task_ids)}
    c_of = {c: i for i, c in enumerate(categories)}
    cell = np.array(list(map(m_of.__getitem__, model_col)), dtype=np.int64) * n_tasks
    cell += np.array(list(map(t_of.__getitem__, task_col)), dtype=np.int64)
    shape = (len(model_ids), n_tasks)
    if np.bincount(cell, minlength=shape[0] * shape[1]).max() > 1:
        validate_runs(runs)  # names both places of each duplicate
    values = np.full(shape, np.nan)
    values.flat[cell] = scores
    category_index = np.full(shape, -1, dtype=np.int64)
    category_index.flat[cell] = np.array(list(map(c_of.__getitem__, category_col)), dtype=np.int64)
    return _Matrix(
        model_ids=model_ids,
        task_ids=task_ids,
        scores=values,
        present=~np.isnan(values),
        category_index=category_index,
        categories=categories,
        weights_ignored=bool(np.any(weights != 1.0)),
    )


def _win_rates(matrix: _Matrix) -> tuple[FloatArray, NDArray[np.int64]]:
    """Per model: share of its tasks on which it is within ``math.isclose`` of the best score."""
    scores = matrix.scores
    best = np.nanmax(scores, axis=0)
    # math.isclose: |a-b| <= max(rel_tol * max(|a|, |b|), abs_tol). np.isclose is asymmetric
    # (it scales by |b| only and adds the tolerances), so it would not give the same ties.
    with np.errstate(invalid="ignore"):
        tol = np.maximum(TIE_REL_TOL * np.maximum(np.abs(scores), np.abs(best)), TIE_ABS_TOL)
        wins = (np.abs(scores - best) <= tol) & matrix.present
    completed = matrix.present.sum(axis=1)
    rates = np.where(completed > 0, wins.sum(axis=1) / np.maximum(completed, 1), 0.0)
    return rates.astype(np.float64), completed.astype(np.int64)


def _task_sets(present: NDArray[np.bool_]) -> dict[bytes, list[int]]:
    """Models grouped by the exact set of tasks they have, in model order."""
    groups: dict[bytes, list[int]] = {}
    for m in range(present.shape[0]):
        groups.setdefault(np.packbits(present[m]).tobytes(), []).append(m)
    return groups


class _Engine:
    """Resamples task sets as resampling.py describes, for one matrix, B and seed."""

    def __init__(self, matrix: _Matrix, b: int, seed: int) -> None:
        self.matrix = matrix
        self.b = b
        self.seed = seed
        self._encoded = encode_ids(matrix.task_ids)
        self._filled = np.where(matrix.present, matrix.scores, 0.0)
        self._sets = list(_task_sets(matrix.present).values())
        # (models, models): how many tasks each pair both ran. 0/1 in float32 counts exactly to 2^24.
        present = matrix.present.astype(np.float32)
        self.shared_counts: NDArray[np.int64] = np.rint(present @ present.T).astype(np.int64)

    def exact(self, rows: Sequence[int], columns: NDArray[np.intp]) -> FloatArray:
        """Exact bootstrap means of the given models over the given tasks, on one keyed draw."""
        rng = keyed_rng(self.seed, [self._encoded[t] for t in columns])
        return resampled_means(self.matrix.scores[np.ix_(np.asarray(rows, dtype=np.intp), columns)], self.b, rng)

    def poisson(self, n_items: int, items: Callable[[int, int], tuple[FloatArray, NDArray[np.bool_]]]) -> FloatArray:
        """Poisson-weighted means of ``n_items`` rows, each over its own mask.

        ``items(i, j)`` gives rows i..j-1 as (values, zero outside the mask; mask). Returns
        (n_items, b). One weight matrix serves every row; rows come in groups and weights in
        row blocks, so memory stays bounded whatever the number of models, pairs or tasks.
        """
        n_tasks = len(self.matrix.task_ids)
        out = np.empty((n_items, self.b))
        keys = task_keys(self.seed, self._encoded)
        block = max(1, min(self.b, _WEIGHT_ELEMENTS // max(1, n_tasks)))
        # Rows are cheap to rebuild, but not free: keep them when they are small enough.
        groups = range(0, n_items, _ITEM_GROUP)
        kept = (
            [items(g, min(n_items, g + _ITEM_GROUP)) for g in groups] if n_items * n_tasks <= _KEEP_ELEMENTS else None
        )
        for start in range(0, self.b, block):
            stop = min(self.b, start + block)
            weights = poisson_weights(keys, start, stop - start)
            weights32 = weights.astype(np.float32)  # small integers: float32 sums them exactly
            for k, g in enumerate(groups):
                values, masks = kept[k] if kept is not None else items(g, min(n_items, g + _ITEM_GROUP))
                total = (weights32 @ masks.T.astype(np.float32)).astype(np.float64)
                sums = weights @ values.T
                # A zero total needs every weight of a large set to be 0: p < e^-200.
                np.divide(sums, total, out=sums, where=total > 0)
                out[g : g + len(values), start:stop] = sums.T
        return out

    def models(self) -> FloatArray:
        """Bootstrap means (models, b): each model over its own tasks."""
        matrix = self.matrix
        theta = np.empty((len(matrix.model_ids), self.b))
        large: list[int] = []
        for members in self._sets:
            columns = np.flatnonzero(matrix.present[members[0]])
            if columns.size <= EXACT_LIMIT:
                theta[members] = self.exact(members, columns)
            else:
                large.extend(members)
        if large:
            # Identical models must get identical resamples to the bit (so their difference is exactly 0);
            # a matrix product need not compute two equal columns alike, so each distinct model goes once.
            values, masks = self._filled[large], matrix.present[large]
            distinct: dict[bytes, int] = {}
            inverse = [
                distinct.setdefault(values[i].tobytes() + np.packbits(masks[i]).tobytes(), i) for i in range(len(large))
            ]
            first = sorted(set(inverse))
            where = {row: k for k, row in enumerate(first)}
            resampled = self.poisson(len(first), lambda i, j: (values[first[i:j]], masks[first[i:j]]))
            theta[large] = resampled[[where[row] for row in inverse]]
        return theta

    def pairs(self, listed: Sequence[tuple[int, int]], theta: FloatArray) -> FloatArray:
        """Resampled mean differences (pairs, b) over each pair's shared tasks; NaN with none."""
        present = self.matrix.present
        out = np.full((len(listed), self.b), np.nan)
        if not listed:
            return out
        a_idx = np.array([a for a, _ in listed])
        b_idx = np.array([b for _, b in listed])
        group = np.empty(len(self.matrix.model_ids), dtype=np.int64)
        for g, members in enumerate(self._sets):
            group[members] = g
        same = group[a_idx] == group[b_idx]
        # One task set, one set of resamples: the difference of the resampled means is the
        # resampled mean of the per-task differences (and exactly 0 for identical models).
        out[same] = theta[a_idx[same]] - theta[b_idx[same]]
        n_shared = self.shared_counts[a_idx, b_idx]
        for p in np.flatnonzero(~same & (n_shared > 0) & (n_shared <= EXACT_PAIR_LIMIT)):
            columns = np.flatnonzero(present[a_idx[p]] & present[b_idx[p]])
            both = self.exact([int(a_idx[p]), int(b_idx[p])], columns)
            out[p] = both[0] - both[1]
        large = np.flatnonzero(~same & (n_shared > EXACT_PAIR_LIMIT))
        if large.size:
            la, lb = a_idx[large], b_idx[large]

            def rows(i: int, j: int) -> tuple[FloatArray, NDArray[np.bool_]]:
                shared = present[la[i:j]] & present[lb[i:j]]
                return np.where(shared, self._filled[la[i:j]] - self._filled[lb[i:j]], 0.0), shared

            out[large] = self.poisson(large.size, rows)
        return out


# Poisson weights held at once (~32 MiB), rows per matrix product, and the most row values
# kept between weight blocks (~128 MiB) before they are rebuilt for each block instead.
_WEIGHT_ELEMENTS = 1 << 22
_ITEM_GROUP = 256
_KEEP_ELEMENTS = 1 << 24


def _order(model_ids: Sequence[str], means: FloatArray, rates: FloatArray, rank_by: RankBy) -> list[int]:
    if rank_by == "mean":
        return sorted(range(len(model_ids)), key=lambda m: (-means[m], -rates[m], model_ids[m]))
    return sorted(range(len(model_ids)), key=lambda m: (-rates[m], -means[m], model_ids[m]))


def _rows(matrix: _Matrix, theta: FloatArray, alpha: float, rank_by: RankBy) -> tuple[list[LeaderboardRow], FloatArray]:
    n_models = len(matrix.model_ids)
    means = np.array([np.mean(matrix.scores[m, matrix.present[m]]) for m in range(n_models)])
    rates, completed = _win_rates(matrix)
    lo, hi = percentile_interval(theta, alpha)
    rows = []
    for m in _order(matrix.model_ids, means, rates, rank_by):
        own = matrix.present[m]
        cats = matrix.category_index[m, own]
        sums = np.bincount(cats, weights=matrix.scores[m, own], minlength=len(matrix.categories))
        counts = np.bincount(cats, minlength=len(matrix.categories))
        categories = {matrix.categories[c]: float(sums[c] / counts[c]) for c in np.flatnonzero(counts)}
        rows.append(
            LeaderboardRow(
                model_id=matrix.model_ids[m],
                mean_score=float(means[m]),
                mean_ci_lo=float(lo[m]),
                mean_ci_hi=float(hi[m]),
                win_rate=float(rates[m]),
                tasks_completed=int(completed[m]),
                categories=categories,
            )
        )
    return rows, means


def _pairs(
    matrix: _Matrix, engine: _Engine, theta: FloatArray, means: FloatArray, order: Sequence[int], alpha: float
) -> list[PairwiseDiff]:
    """Paired bootstrap of the difference for every pair, listed in leaderboard order.

    A pair is oriented so that ``model_a`` has the higher mean (then the smaller id):
    that depends on the two models alone, so adding a model never flips a sign.
    """
    listed: list[tuple[int, int]] = []
    for i, first in enumerate(order):
        for second in order[i + 1 :]:
            a, b = sorted((first, second), key=lambda m: (-means[m], matrix.model_ids[m]))
            listed.append((a, b))
    diff_theta = engine.pairs(listed, theta)
    lo, hi = percentile_interval(diff_theta, alpha)
    counts = engine.shared_counts
    result = []
    for p, (a, b) in enumerate(listed):
        n_shared = int(counts[a, b])
        if n_shared == 0:
            result.append(
                PairwiseDiff(matrix.model_ids[a], matrix.model_ids[b], 0, math.nan, math.nan, math.nan, False)
            )
            continue
        shared = matrix.present[a] & matrix.present[b]
        result.append(
            PairwiseDiff(
                model_a=matrix.model_ids[a],
                model_b=matrix.model_ids[b],
                n_shared=n_shared,
                mean_diff=float(np.mean(matrix.scores[a, shared] - matrix.scores[b, shared])),
                ci_lo=float(lo[p]),
                ci_hi=float(hi[p]),
                # "Excludes zero" with the tie tolerance: identical models are never significant.
                significant=bool(lo[p] > TIE_ABS_TOL or hi[p] < -TIE_ABS_TOL),
            )
        )
    return result


def analyse(
    runs: Sequence[EvalRun],
    *,
    b: int = 500,
    alpha: float = 0.05,
    seed: int = 0,
    rank_by: RankBy = "mean",
    pairs: bool = True,
) -> Leaderboard:
    """The whole leaderboard in one pass: ranked rows and (optionally) every pairwise difference."""
    _check_parameters(b, alpha)
    if rank_by not in RANK_BY:
        raise ValueError(f"rank_by must be one of {', '.join(RANK_BY)}, got {rank_by!r}")
    runs = list(runs)
    if not runs:
        return Leaderboard((), (), alpha, b, seed, rank_by, 0, 0, 0, (), False)
    matrix = _matrix(runs)
    engine = _Engine(matrix, b, seed)
    theta = engine.models()
    rows, means = _rows(matrix, theta, alpha, rank_by)
    pair_rows: list[PairwiseDiff] = []
    if pairs:
        index = {m: i for i, m in enumerate(matrix.model_ids)}
        order = [index[row.model_id] for row in rows]
        pair_rows = _pairs(matrix, engine, theta, means, order, alpha)
    return Leaderboard(
        rows=tuple(rows),
        pairs=tuple(pair_rows),
        alpha=alpha,
        b=b,
        seed=seed,
        rank_by=rank_by,
        n_runs=len(runs),
        n_models=len(matrix.model_ids),
        n_tasks=len(matrix.task_ids),
        categories=matrix.categories,
        weights_ignored=matrix.weights_ignored,
    )


def aggregate(
    runs: Sequence[EvalRun], *, b: int = 500, alpha: float = 0.05, seed: int = 0, rank_by: RankBy = "mean"
) -> list[LeaderboardRow]:
    """One row per model, ranked by mean (or win-rate), with a percentile bootstrap CI of the mean."""
    return list(analyse(runs, b=b, alpha=alpha, seed=seed, rank_by=rank_by, pairs=False).rows)


def pairwise_diffs(
    runs: Sequence[EvalRun], *, b: int = 500, alpha: float = 0.05, seed: int = 0, rank_by: RankBy = "mean"
) -> list[PairwiseDiff]:
    """Every pair of models: paired bootstrap CI of the mean difference over the tasks both ran."""
    return list(analyse(runs, b=b, alpha=alpha, seed=seed, rank_by=rank_by).pairs)


def _generator(seed: int | None, rng: np.random.Generator | None) -> np.random.Generator:
    return rng if rng is not None else np.random.default_rng(seed)


def bootstrap_mean_ci(
    scores: Sequence[float] | FloatArray,
    B: int = 1000,
    alpha: float = 0.05,
    *,
    seed: int | None = 0,
    rng: np.random.Generator | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean of ``scores``.

    Draws ``rng.integers(0, n, (B, n))`` like ``scipy.stats.bootstrap``, so with
    the same generator the interval is scipy's, bit for bit.
    """
    _check_parameters(B, alpha)
    values = np.asarray(scores, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError("scores must be a non-empty one-dimensional sequence")
    theta = resampled_means(values[None, :], B, _generator(seed, rng))
    lo, hi = percentile_interval(theta[0], alpha)
    return float(lo), float(hi)


def bootstrap_pairwise_diff(
    scores_a: Sequence[float] | FloatArray,
    scores_b: Sequence[float] | FloatArray,
    B: int = 1000,
    alpha: float = 0.05,
    *,
    seed: int | None = 0,
    rng: np.random.Generator | None = None,
) -> tuple[float, float]:
    """Paired percentile bootstrap CI of the mean of ``scores_a - scores_b`` (aligned by task)."""
    a = np.asarray(scores_a, dtype=np.float64)
    b = np.asarray(scores_b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired scores must align task by task, got {a.shape} and {b.shape}")
    return bootstrap_mean_ci(a - b, B, alpha, seed=seed, rng=rng)
