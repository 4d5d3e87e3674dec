"""Leaderboard statistics: means with bootstrap CIs, win-rates, category means, paired differences.

The specification is ``leaderboard-aggregation.md``; docs/statistics.md (and the
README) say what is resampled for each number.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from operator import attrgetter
from statistics import NormalDist
from typing import Any, Literal, overload

import numpy as np
from numpy.typing import NDArray

from ..limits import MAX_BOOTSTRAP_SAMPLES, MAX_ID_LENGTH
from ..records import EvalRun, LeaderboardRow, PairwiseDiff
from ..run_columns import RunColumns
from ..trials import collapse_trials
from ..validation import encodable, validate_runs
from .clustering import (
    CLUSTER_BY,
    METHOD,
    ClusterBy,
    DesignEffect,
    Grouping,
    cluster_of,
    clustered_wilson,
    cr2,
    design_effect,
    onehot_of,
    t_interval,
    wilson,
)
from .family import (
    CORRECTIONS as CORRECTIONS,
)
from .family import (
    DEFAULT_CORRECTION,
    Correction,
    Detectable,
    adjust,
    check_correction,
    detectable,
    family_members,
    refine_monte_carlo,
    step_levels,
    tasks_needed_at,
)
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
from .significance import METHOD_NAMES, min_tasks, p_text, sign_flip_test
from .weights import TASK_WEIGHTS, TaskWeights, kish, task_weights

RankBy = Literal["mean", "win-rate"]
RANK_BY: tuple[RankBy, ...] = ("mean", "win-rate")

# The one tie rule (the specification's math.isclose, abs_tol 1e-12, default rel_tol): two
# scores this close are equal for win-rate, per-task differences and significance; ranking
# compares values rounded to TIE_DECIMALS (scores are on [0, 1], so 1e-9 relative <= 1e-9).
TIE_ABS_TOL = 1e-12
TIE_REL_TOL = 1e-9
TIE_DECIMALS = 9
# Resamples per tail at the least: a percentile end needs enough resamples beyond it to be
# more than the most extreme draw or two. b >= RESAMPLES_PER_TAIL * 2 / alpha (400 at 0.05).
RESAMPLES_PER_TAIL = 10


def tie_tolerance(a: FloatArray, b: FloatArray) -> FloatArray:
    """How far apart two scores may be and still be equal: ``math.isclose``'s rule, elementwise.

    (np.isclose is asymmetric: it scales by |b| only and adds the tolerances.)
    """
    return np.maximum(TIE_REL_TOL * np.maximum(np.abs(a), np.abs(b)), TIE_ABS_TOL)


def min_resamples(alpha: float) -> int:
    """The fewest bootstrap resamples whose percentile interval at ``alpha`` is worth printing."""
    return math.ceil(2 * RESAMPLES_PER_TAIL / alpha - 1e-9)


def resample_advice(alpha: float, name: str, alpha_name: str = "alpha") -> str:
    """Why ``name`` is too small at ``alpha``, with a bound the user can actually meet."""
    floor = min_resamples(alpha)
    if floor > MAX_BOOTSTRAP_SAMPLES:
        return (
            f"{alpha_name} {alpha:g} is too small: its interval ends need 20 / alpha resamples, more than the "
            f"{MAX_BOOTSTRAP_SAMPLES:,} allowed; use {alpha_name} >= {2 * RESAMPLES_PER_TAIL / MAX_BOOTSTRAP_SAMPLES:g}"
        )
    return (
        f"{name} must be at least {floor:,} at {alpha_name} {alpha:g} (20 / alpha: {RESAMPLES_PER_TAIL} resamples "
        f"beyond each end of the {(1 - alpha) * 100:.6g}% interval)"
    )


def check_resamples(b: int, alpha: float, *, name: str) -> None:
    """Refuse a resample count too small for ``alpha``'s tails, naming the input ``name``."""
    floor = min_resamples(alpha)
    if b < floor:
        raise ValueError(
            f"{name} must be at least {floor} at alpha {alpha:g} (20 / alpha: {RESAMPLES_PER_TAIL} resamples "
            f"beyond each end of the {(1 - alpha) * 100:.6g}% interval), got {b}"
        )


@dataclass(frozen=True)
class Leaderboard:
    """Everything one analysis produces, with the parameters that produced it."""

    rows: tuple[LeaderboardRow, ...]
    pairs: PairTable
    alpha: float
    b: int
    seed: int
    rank_by: RankBy
    n_runs: int
    n_models: int
    n_tasks: int
    categories: tuple[str, ...]
    weights_ignored: bool
    correction: Correction = DEFAULT_CORRECTION
    all_tied_tasks: int = 0
    pairs_computed: bool = True
    category_tasks: Mapping[str, int] = field(default_factory=dict)  # distinct tasks in each category
    # Issue 15: what the statistics resampled or flipped, and how task weights were treated.
    clustering: Clusters | None = None
    design: DesignEffect | None = None  # the categories' design effect, when clustering is off
    task_weights: TaskWeights = "ignore"
    binary_models: int = 0  # models whose scores are all 0/1: their CI is Wilson's

    def pair(self, i: int, j: int) -> PairwiseDiff:
        """The comparison of the models at ranks ``i`` and ``j`` (1-based), oriented as stored."""
        return self.pairs[self.pairs.position(i - 1, j - 1)]

    def resolution(self) -> tuple[tuple[PairwiseDiff, ...], tuple[PairwiseDiff, ...]]:
        """(each adjacent pair in the ranking, #1 against every other model): does the suite separate them?"""
        if not self.pairs_computed or len(self.rows) < 2:
            return (), ()
        m = len(self.rows)
        adjacent = tuple(self.pair(r, r + 1) for r in range(1, m))
        leader = tuple(self.pair(1, r) for r in range(2, m + 1))
        return adjacent, leader

    @property
    def top_group(self) -> tuple[str, ...]:
        """Every model no other model is significantly ahead of (best rank 1)."""
        return tuple(row.model_id for row in self.rows if row.rank_lo == 1)

    def detectable(self) -> Detectable | None:
        """The suite's minimum detectable difference at the level in force for a pair not yet separated."""
        if not self.pairs_computed:
            return None
        table = self.pairs
        if table.clustered:
            d = detectable(table.n_clusters.astype(np.int64), table.cluster_sd, table.level, unit="cluster")
            fewest_df = self.clustering.min_df if self.clustering is not None else math.inf
            return replace(d, df=fewest_df) if d is not None else None
        return detectable(table.n_shared.astype(np.int64), table.sd, table.level)


@dataclass(frozen=True)
class ScoreMatrix:
    """Every score of a suite as a (models x tasks) matrix; the one input the engine and the comparison read."""

    model_ids: tuple[str, ...]
    task_ids: tuple[str, ...]
    scores: FloatArray  # (models, tasks); NaN where a model has no score
    present: NDArray[np.bool_]
    category_index: NDArray[np.int64]  # (models, tasks); -1 where absent
    categories: tuple[str, ...]
    weights_ignored: bool
    # (models, tasks) weights, 1 where absent; None when every weight is 1.
    weights: FloatArray | None = None


@dataclass(frozen=True)
class Clusters:
    """The clusters the statistics resampled (``cluster-by`` on): how many, how unequal, how few df.

    ``largest_share`` is the largest cluster's share of the tasks; ``min_df`` the smallest
    Bell-McCaffrey degrees of freedom of a model's interval (its effective number of clusters).
    """

    by: ClusterBy
    count: int
    largest: str
    largest_share: float
    min_df: float
    mean_size: float
    method: str

    @property
    def warns(self) -> bool:
        return self.largest_share > 0.25 or not self.min_df >= 10.0


@dataclass(frozen=True)
class _Design:
    """What the statistics need to know about clusters and weights, per task."""

    cluster: NDArray[np.int64] | None  # each task's cluster index, None without clustering
    cluster_names: tuple[str, ...]
    weight: FloatArray | None  # each task's weight, None unless applied

    @property
    def onehot(self) -> Grouping:
        assert self.cluster is not None
        return onehot_of(self.cluster, len(self.cluster_names))


def _check_parameters(b: int, alpha: float) -> None:
    if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b < 1:
        raise ValueError(f"b (the number of bootstrap resamples) must be a positive integer, got {b!r}")
    if not (isinstance(alpha, (int, float)) and 0.0 < alpha < 1.0):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")


def _column(runs: Sequence[EvalRun], name: str) -> list[Any]:
    return list(map(attrgetter(name), runs))


def _valid_strings(column: list[Any]) -> set[str] | None:
    """The distinct values, if every one is a non-empty string of at most MAX_ID_LENGTH with no
    surrounding whitespace (the loader's rules, so records built in code meet them too)."""
    if not set(map(type, column)) <= {str}:
        return None
    distinct: set[str] = set(column)
    ok = all(v.strip() == v and 0 < len(v) <= MAX_ID_LENGTH and (v.isascii() or encodable(v)) for v in distinct)
    return distinct if ok else None


def _valid_numbers(column: list[Any]) -> NDArray[np.float64] | None:
    # bool is excluded by exact type; numpy scalars and the like take the slow, thorough path.
    if not set(map(type, column)) <= {float, int}:
        return None
    return np.array(column, dtype=np.float64)


def score_matrix(runs: Sequence[EvalRun]) -> ScoreMatrix:
    """Scores as a (models x tasks) matrix, rows and columns in sorted id order.

    A cheap columnar check passes any valid input; only a failure pays for the
    record-by-record report that names every problem.
    """
    if isinstance(runs, RunColumns):
        return _columns_matrix(runs)
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
    # Valid, but not plain floats (numpy scalars, say): convert one by one.
    if scores is None:
        scores = np.array([float(v) for v in _column(runs, "score")])
    if weights is None:
        weights = np.array([float(v) for v in _column(runs, "weight")])
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
    return ScoreMatrix(
        model_ids=model_ids,
        task_ids=task_ids,
        scores=values,
        present=~np.isnan(values),
        category_index=category_index,
        categories=categories,
        weights_ignored=bool(np.any(weights != 1.0)),
        weights=None if bool(np.all(weights == 1.0)) else _cells(shape, cell, weights),
    )


def _columns_matrix(runs: RunColumns) -> ScoreMatrix:
    """The matrix of records the loader read as columns: checked as they were read, ids sorted, no pair twice."""
    shape = (len(runs.models), len(runs.tasks))
    cell = runs.cell_codes()
    values = np.full(shape, np.nan)
    values.flat[cell] = runs.score
    category_index = np.full(shape, -1, dtype=np.int64)
    category_index.flat[cell] = runs.category
    # Only the categories some record has: a code column may index a longer list after a merge.
    used = np.unique(runs.category)
    categories = tuple(runs.categories[k] for k in used)
    if len(used) != len(runs.categories):
        category_index.flat[cell] = np.searchsorted(used, runs.category)
    weights = runs.weight
    return ScoreMatrix(
        model_ids=runs.models,
        task_ids=runs.tasks,
        scores=values,
        present=~np.isnan(values),
        category_index=category_index,
        categories=categories,
        weights_ignored=bool(np.any(weights != 1.0)),
        weights=None if bool(np.all(weights == 1.0)) else _cells(shape, cell, weights),
    )


def _cells(shape: tuple[int, int], cell: NDArray[np.int64], values: FloatArray) -> FloatArray:
    out = np.ones(shape)
    out.flat[cell] = values
    return out


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


def _task_sets(present: NDArray[np.bool_]) -> dict[bytes, list[int]]:
    """Models grouped by the exact set of tasks they have, in model order."""
    groups: dict[bytes, list[int]] = {}
    for m in range(present.shape[0]):
        groups.setdefault(np.packbits(present[m]).tobytes(), []).append(m)
    return groups


def _shared_counts(present: NDArray[np.bool_]) -> NDArray[np.int64]:
    """(models, models): how many tasks each pair both ran.

    A popcount of the packed task bits, in blocks of rows: a small float matrix product costs
    little arithmetic but, on a loaded machine, a multithreaded BLAS call can wait tenths of a
    second for its threads. 0/1 in float32 (the fallback before numpy 2) counts exactly to 2^24.
    """
    count_bits = getattr(np, "bitwise_count", None)
    if count_bits is None:
        as_float = present.astype(np.float32)
        return np.asarray(np.rint(as_float @ as_float.T), dtype=np.int64)
    packed = np.packbits(present, axis=1)
    m = packed.shape[0]
    out = np.empty((m, m), dtype=np.int64)
    rows = max(1, _WEIGHT_ELEMENTS // max(1, m * packed.shape[1]))
    for start in range(0, m, rows):
        block = packed[start : start + rows, None, :] & packed[None, :, :]
        out[start : start + rows] = count_bits(block).sum(axis=2, dtype=np.int64)
    return out


class _Engine:
    """Resamples task sets as resampling.py describes, for one matrix, B and seed."""

    def __init__(self, matrix: ScoreMatrix, b: int, seed: int, weight: FloatArray | None = None) -> None:
        self.matrix = matrix
        self.b = b
        self.seed = seed
        self.weight = weight  # each task's weight when applied: resampled means are weighted means
        self._encoded = encode_ids(matrix.task_ids)
        self.filled = np.where(matrix.present, matrix.scores, 0.0)
        self._sets = list(_task_sets(matrix.present).values())
        self.task_sets = self._sets  # models grouped by the exact set of tasks they have
        self.shared_counts: NDArray[np.int64] = _shared_counts(matrix.present)

    def exact(self, rows: Sequence[int], columns: NDArray[np.intp]) -> FloatArray:
        """Exact bootstrap means of the given models over the given tasks, on one keyed draw."""
        rng = keyed_rng(self.seed, [self._encoded[t] for t in columns])
        values = self.matrix.scores[np.ix_(np.asarray(rows, dtype=np.intp), columns)]
        if self.weight is None:
            return resampled_means(values, self.b, rng)
        # The weights ride along on the same resamples: numerator and denominator of each weighted mean.
        w = self.weight[columns]
        both = resampled_means(np.vstack([values * w, w[None, :]]), self.b, rng)
        return np.asarray(both[:-1] / both[-1], dtype=np.float64)

    def poisson(self, n_items: int, items: Callable[[int, int], tuple[FloatArray, NDArray[Any]]]) -> FloatArray:
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
                if masks.dtype == np.bool_:
                    total = (weights32 @ masks.T.astype(np.float32)).astype(np.float64)
                else:  # task weights, not 0/1: in float64
                    total = weights @ masks.T
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
            values, masks = self.filled[large], matrix.present[large]
            if self.weight is not None:
                values, masks = values * self.weight, np.where(masks, self.weight, 0.0)
            distinct: dict[bytes, int] = {}
            inverse = [
                distinct.setdefault(values[i].tobytes() + np.packbits(masks[i] != 0).tobytes(), i)
                for i in range(len(large))
            ]
            first = sorted(set(inverse))
            where = {row: k for k, row in enumerate(first)}
            resampled = self.poisson(len(first), lambda i, j: (values[first[i:j]], masks[first[i:j]]))
            theta[large] = resampled[[where[row] for row in inverse]]
        return theta

    def pairs(self, listed: Sequence[tuple[int, int]], theta: FloatArray) -> FloatArray:
        """Resampled mean differences (pairs, b) over each pair's shared tasks; NaN with none."""
        present = self.matrix.present
        if not listed:
            return np.full((0, self.b), np.nan)
        a_idx = np.array([a for a, _ in listed])
        b_idx = np.array([b for _, b in listed])
        group = np.empty(len(self.matrix.model_ids), dtype=np.int64)
        for g, members in enumerate(self._sets):
            group[members] = g
        same = group[a_idx] == group[b_idx]
        if same.all():
            # Every model ran the same tasks (the common case): the chunk in two passes over memory, not five.
            out = np.take(theta, a_idx, axis=0)
            out -= np.take(theta, b_idx, axis=0)
            return out
        out = np.full((len(listed), self.b), np.nan)
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

            def rows(i: int, j: int) -> tuple[FloatArray, NDArray[Any]]:
                shared = present[la[i:j]] & present[lb[i:j]]
                diffs = np.where(shared, self.filled[la[i:j]] - self.filled[lb[i:j]], 0.0)
                if self.weight is None:
                    return diffs, shared
                return diffs * self.weight, np.where(shared, self.weight, 0.0)

            out[large] = self.poisson(large.size, rows)
        return out


# Poisson weights held at once (~32 MiB), rows per matrix product, and the most row values
# kept between weight blocks (~128 MiB) before they are rebuilt for each block instead.
_WEIGHT_ELEMENTS = 1 << 22
_ITEM_GROUP = 256
_KEEP_ELEMENTS = 1 << 24


def tie_key(value: float) -> float:
    """``value`` rounded to the tie tolerance: near-equal values (math.isclose) sort as equal."""
    return round(float(value), TIE_DECIMALS)


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


def _weighted_hull(
    totals: FloatArray, sizes: FloatArray, means: FloatArray, lo: FloatArray, hi: FloatArray, alpha: float
) -> tuple[FloatArray, FloatArray]:
    """The weighted percentile interval, widened where needed to the HC2 t-interval with Bell-McCaffrey df.

    A weighted mean's percentile interval is too narrow at tens of tasks (92.7% at n = 50 in
    bench_clusters.py), more so as unequal weights lower the effective n. The HC2 interval (CR2
    with every task its own cluster, weights as sizes) carries the small-sample df the bootstrap
    lacks; the hull of the two covers at least as often as either.
    """
    moments = replace(cr2(totals, sizes), mean=means)
    t_lo, t_hi = t_interval(moments, alpha)
    return np.fmin(lo, np.maximum(t_lo, 0.0)), np.fmax(hi, np.minimum(t_hi, 1.0))


_CI_METHODS = {
    (False, False): "percentile bootstrap",
    (False, True): "Wilson",
    (True, False): "CR2 t",
    (True, True): "clustered Wilson",
}


def _binary(matrix: ScoreMatrix) -> NDArray[np.bool_]:
    """Models whose every score is 0 or 1: their interval is a score interval, not a bootstrap."""
    s = matrix.scores
    return np.asarray(((s == 0.0) | (s == 1.0) | ~matrix.present).all(axis=1) & matrix.present.any(axis=1))


def _intervals(
    matrix: ScoreMatrix, theta: FloatArray | None, alpha: float, design: _Design
) -> tuple[FloatArray, FloatArray, FloatArray, list[str | None], FloatArray]:
    """Each model's mean, CI and why the CI tells nothing; and its Bell-McCaffrey df (NaN unclustered).

    0/1 scores get Wilson's interval (its clustered version with clustering on); other scores the
    percentile bootstrap, or with clustering on the CR2 t-interval on cluster totals.
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
        means = _row_sums(filled * w, present) / _row_sums(wp, present)
        n_eff = kish(np.broadcast_to(w, present.shape), present)
    binary = _binary(matrix)
    df = np.full(means.shape, np.nan)
    notes: list[str | None] = [None] * means.size
    if design.cluster is None:
        assert theta is not None
        lo, hi = percentile_interval(theta, alpha)
        if design.weight is not None:
            lo, hi = _weighted_hull(filled * w, wp, means, lo, hi, alpha)
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


def _rows(
    matrix: ScoreMatrix, theta: FloatArray | None, alpha: float, rank_by: RankBy, design: _Design
) -> tuple[list[LeaderboardRow], FloatArray, FloatArray]:
    means, lo, hi, ci_notes, df = _intervals(matrix, theta, alpha, design)
    binary = _binary(matrix)
    rates, completed = _win_rates(matrix)
    rows = []
    for m in _order(matrix.model_ids, means, rates, rank_by):
        own = matrix.present[m]
        cats = matrix.category_index[m, own]
        w = design.weight[own] if design.weight is not None else np.ones(int(own.sum()))
        sums = np.bincount(cats, weights=matrix.scores[m, own] * w, minlength=len(matrix.categories))
        counts = np.bincount(cats, minlength=len(matrix.categories))
        totals = np.bincount(cats, weights=w, minlength=len(matrix.categories))
        categories = {matrix.categories[c]: float(sums[c] / totals[c]) for c in np.flatnonzero(counts)}
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
                ci_note=ci_notes[m],
                ci_method=_CI_METHODS[(design.cluster is not None, bool(binary[m]))],
            )
        )
    return rows, means, df


def _category_tasks(matrix: ScoreMatrix) -> dict[str, int]:
    """Distinct tasks per category, over every model."""
    n_tasks = len(matrix.task_ids)
    cells = np.flatnonzero(matrix.present.ravel())
    codes = np.unique(matrix.category_index.ravel()[cells] * n_tasks + cells % n_tasks)
    counts = np.bincount(codes // n_tasks, minlength=len(matrix.categories))
    return {c: int(counts[k]) for k, c in enumerate(matrix.categories)}


def _all_tied_tasks(matrix: ScoreMatrix) -> int:
    """Tasks run by two or more models on which every one of them has the top score."""
    scores = matrix.scores
    with np.errstate(invalid="ignore"):
        best, worst = np.nanmax(scores, axis=0), np.nanmin(scores, axis=0)
        tol = tie_tolerance(best, worst)
        tied = np.abs(best - worst) <= tol
    return int(np.count_nonzero(tied & (matrix.present.sum(axis=0) >= 2)))


# Why a pair is not significant (PairTable.reason); 0 when it is.
SIGNIFICANT, NO_SHARED, TOO_FEW, CI_INCLUDES_0, TEST_NOT_SIGNIFICANT = range(5)


class PairTable(Sequence[PairwiseDiff]):
    """Every pair's comparison, held as columns; a :class:`PairwiseDiff` is made on access.

    Pairs are listed in leaderboard order (rank 1 against 2, 3, ..., then 2 against
    3, ...), so the pair of the models at ranks i < j (0-based positions) is at
    ``position(i, j)`` with no search. Columns hold model positions in the ranking, not
    ids: a million pairs cost tens of megabytes, not a million objects.
    """

    def __init__(
        self,
        ranked_ids: Sequence[str],
        columns: dict[str, NDArray[Any]],
        alpha: float,
        correction: Correction,
        *,
        clustered: bool = False,
    ) -> None:
        self.ranked_ids = tuple(ranked_ids)
        self.clustered = clustered  # decisions flip clusters, not tasks (issue 15)
        self.alpha = alpha
        self.correction = correction
        self.a: NDArray[np.int32] = columns["a"]  # ranking positions, 0-based
        self.b: NDArray[np.int32] = columns["b"]
        self.n_shared: NDArray[np.int32] = columns["n_shared"]
        self.mean_diff: FloatArray = columns["mean_diff"]
        self.ci_lo: FloatArray = columns["ci_lo"]
        self.ci_hi: FloatArray = columns["ci_hi"]
        self.p_value: FloatArray = columns["p_value"]
        self.p_adjusted: FloatArray = columns["p_adjusted"]
        self.method: NDArray[np.int8] = columns["method"]
        self.reason_code: NDArray[np.int8] = columns["reason"]
        self.tasks_needed: NDArray[np.int64] = columns["tasks_needed"]
        # Spread of each pair's per-task differences, and whether its test is in the family.
        self.sd: FloatArray = columns["sd"]
        self.member: NDArray[np.bool_] = columns["member"]
        count = self.a.size
        self.n_clusters: NDArray[np.int32] = columns.get("n_clusters", np.zeros(count, dtype=np.int32))
        self.clusters_needed: NDArray[np.int64] = columns.get("clusters_needed", np.full(count, -1, dtype=np.int64))
        # Clustered: sqrt(V C) of each pair's CR2 variance V over its C clusters (the spread that sizes
        # clusters needed and the minimum detectable difference); NaN otherwise.
        self.cluster_sd: FloatArray = columns.get("cluster_sd", np.full(count, np.nan))

    @property
    def significant(self) -> NDArray[np.bool_]:
        return np.asarray(self.reason_code == SIGNIFICANT)

    @property
    def tested(self) -> int:
        """Pairs with at least one shared task."""
        return int(np.count_nonzero(self.n_shared > 0))

    @property
    def family(self) -> int:
        """The claims the correction is over: pairs whose test can reach alpha (every pair is its own with none)."""
        return int(np.count_nonzero(self.member)) if self.correction != "none" else 1

    @property
    def level(self) -> float:
        """The level a pair not yet separated is held to (family.py: alpha / (m - r) with Holm)."""
        if self.correction == "none" or not self.member.any():
            return float(self.alpha)
        claimed = int(np.count_nonzero(self.member & (self.p_adjusted <= self.alpha)))
        return float(self.alpha) / max(1, int(np.count_nonzero(self.member)) - claimed)

    def __len__(self) -> int:
        return int(self.a.size)

    def position(self, i: int, j: int) -> int:
        """Position of the pair of ranking positions i and j (either order)."""
        i, j = min(i, j), max(i, j)
        m = len(self.ranked_ids)
        return i * m - i * (i + 1) // 2 + (j - i - 1)

    def reason(self, p: int) -> str | None:
        return self.reasons(p, p + 1)[0]

    def reasons(self, start: int, stop: int) -> list[str | None]:
        """Why each pair in ``start:stop`` is not significant, in words (None for a significant one)."""
        fewest = min_tasks(self.alpha)
        fixed: dict[int, str | None] = {SIGNIFICANT: None, NO_SHARED: "no shared tasks", CI_INCLUDES_0: "CI includes 0"}
        out: list[str | None] = []
        codes = self.reason_code[start:stop].tolist()
        for k, code in enumerate(codes):
            if code in fixed:
                out.append(fixed[code])
            elif code == TOO_FEW and self.clustered:
                out.append(
                    f"too few shared clusters ({int(self.n_clusters[start + k])} < {fewest}): "
                    f"no cluster sign-flip test can reach alpha = {self.alpha:g}"
                )
            elif code == TOO_FEW:
                out.append(f"too few shared tasks ({int(self.n_shared[start + k])} < {fewest})")
            else:
                adjusted = self.correction == "holm" and bool(self.member[start + k])
                test = "Holm-adjusted" if adjusted else TEST_WORDS[int(self.method[start + k])]
                if self.clustered and not adjusted:
                    test = f"cluster {test}"
                out.append(f"{test} p = {p_text(float(self.p_adjusted[start + k]), self.alpha)}")
        return out

    def _item(self, p: int) -> PairwiseDiff:
        needed = int(self.tasks_needed[p])
        return PairwiseDiff(
            model_a=self.ranked_ids[int(self.a[p])],
            model_b=self.ranked_ids[int(self.b[p])],
            n_shared=int(self.n_shared[p]),
            mean_diff=float(self.mean_diff[p]),
            ci_lo=float(self.ci_lo[p]),
            ci_hi=float(self.ci_hi[p]),
            significant=bool(self.reason_code[p] == SIGNIFICANT),
            p_value=float(self.p_value[p]),
            p_adjusted=float(self.p_adjusted[p]),
            test=METHOD_NAMES[int(self.method[p])],
            reason=self.reason(p),
            tasks_needed=needed if needed >= 0 else None,
            n_clusters=int(self.n_clusters[p]) if self.clustered else None,
            clusters_needed=int(self.clusters_needed[p]) if self.clustered and self.clusters_needed[p] >= 0 else None,
        )

    @overload
    def __getitem__(self, index: int) -> PairwiseDiff: ...
    @overload
    def __getitem__(self, index: slice) -> list[PairwiseDiff]: ...
    def __getitem__(self, index: int | slice) -> PairwiseDiff | list[PairwiseDiff]:
        if isinstance(index, slice):
            return [self._item(p) for p in range(len(self))[index]]
        if not -len(self) <= index < len(self):
            raise IndexError("pair index out of range")
        return self._item(index % len(self))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PairTable):
            return NotImplemented
        mine, theirs = vars(self), vars(other)
        return mine.keys() == theirs.keys() and all(
            np.array_equal(v, theirs[k], equal_nan=v.dtype.kind == "f") if isinstance(v, np.ndarray) else v == theirs[k]
            for k, v in mine.items()
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PairTable({len(self)} pairs, {int(self.significant.sum())} significant)"


TEST_WORDS = ("no test", "exact test", "exact McNemar test", "Monte Carlo test", "normal-approximation test")

# Values per pair chunk (~32 MiB of float64): a chunk's resampled differences and its
# per-task differences; memory stays bounded whatever the number of pairs.
_PAIR_CHUNK_ELEMENTS = 1 << 22


def _listed_pairs(order: Sequence[int], means: FloatArray, model_ids: Sequence[str]) -> tuple[NDArray[np.int32], ...]:
    """Every pair in leaderboard order, as the ranking positions of ``model_a`` and ``model_b``.

    The orientation (``model_a`` the higher mean to the tie tolerance, then the smaller
    id) depends on the two models alone, so adding a model never flips a sign. Positions
    are int32: at 3,000 models the pairs number 4.5 million.
    """
    m = len(order)
    counts = np.arange(m - 1, -1, -1, dtype=np.int64)  # pairs whose first position is i
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    i = np.repeat(np.arange(m, dtype=np.int32), counts)
    j = (np.arange(i.size, dtype=np.int64) - starts[i] + i + 1).astype(np.int32)
    strength = sorted(range(m), key=lambda k: (-tie_key(float(means[k])), model_ids[k]))
    place = np.empty(m, dtype=np.int32)
    place[strength] = np.arange(m, dtype=np.int32)
    placed = np.asarray(place[np.asarray(order, dtype=np.int64)])  # strength place of each ranking position
    swap = placed[i] > placed[j]
    return np.where(swap, j, i), np.where(swap, i, j)


def _row_sums(values: FloatArray, mask: NDArray[np.bool_]) -> FloatArray:
    """Each row's sum over its mask, added one by one in task order.

    numpy's sum is pairwise: with zeros at other places (another model brought more
    tasks) it groups the same values differently, and a pair's mean would change in its
    last bit when an unrelated model joins. A running sum (cumsum) adds them in order,
    and adding 0.0 changes nothing, so the result depends on the masked values alone.
    """
    if values.shape[1] == 0:
        return np.zeros(values.shape[0])
    # + 0.0 turns a -0.0 total into 0.0, which the JSON report would otherwise print as -0.0.
    return np.asarray(np.cumsum(np.where(mask, values, 0.0), axis=1)[:, -1] + 0.0)


def _pair_table(
    matrix: ScoreMatrix,
    engine: _Engine,
    theta: FloatArray,
    means: FloatArray,
    order: Sequence[int],
    alpha: float,
    correction: Correction,
    design: _Design,
) -> PairTable:
    """Every pair: paired bootstrap CI, exact permutation test, decision, tasks needed.

    Pairs are processed in chunks: the resampled differences of a chunk are reduced to
    their interval before the next chunk is drawn, so memory does not grow with pairs x B.
    """
    pos_a, pos_b = _listed_pairs(order, means, matrix.model_ids)
    ranked = np.asarray(order, dtype=np.int64)
    n_pairs = pos_a.size
    cols: dict[str, NDArray[Any]] = {
        "a": pos_a,
        "b": pos_b,
        "n_shared": np.zeros(n_pairs, dtype=np.int32),
        **{k: np.full(n_pairs, np.nan) for k in ("mean_diff", "ci_lo", "ci_hi", "p_value", "sd")},
        "method": np.zeros(n_pairs, dtype=np.int8),
        "n_clusters": np.zeros(n_pairs, dtype=np.int32),
        "clusters_needed": np.full(n_pairs, -1, dtype=np.int64),
        "nonzero": np.zeros(n_pairs, dtype=np.int64),
        "cluster_sd": np.full(n_pairs, np.nan),
    }
    # The family's size is known after the tests; the Monte Carlo refinement needs only a bound on it.
    tested = int(np.count_nonzero(engine.shared_counts[np.triu_indices(len(order), 1)] > 0))
    scores, present = engine.filled, matrix.present
    clustered = design.cluster is not None
    onehot = design.onehot if clustered else None
    tw = design.weight
    if onehot is not None:
        weighted = np.where(present, tw[None, :] if tw is not None else 1.0, 0.0)
        model_sums, model_sizes = onehot.sums(scores * weighted), onehot.sums(weighted)
        group = np.empty(len(matrix.model_ids), dtype=np.int64)
        for g, members in enumerate(engine.task_sets):
            group[members] = g
    # Two passes, each in chunks sized for its own arrays: the resampled differences are
    # (pairs, B), the per-task differences (pairs, tasks). A Poisson draw serves a whole
    # chunk, so the fewer chunks the bootstrap pass takes, the fewer weight matrices are made.
    # With clustering the interval is the CR2 t-interval of the second pass: no resampling at all.
    step = max(1, _PAIR_CHUNK_ELEMENTS // engine.b)
    for start in range(0, 0 if clustered else n_pairs, step):
        stop = min(n_pairs, start + step)
        a, b = ranked[pos_a[start:stop]], ranked[pos_b[start:stop]]
        cols["n_shared"][start:stop] = engine.shared_counts[a, b]
        listed = list(zip(a.tolist(), b.tolist(), strict=True))
        cols["ci_lo"][start:stop], cols["ci_hi"][start:stop] = percentile_interval(engine.pairs(listed, theta), alpha)
    step = max(1, _PAIR_CHUNK_ELEMENTS // max(1, len(matrix.task_ids)))
    for start in range(0, n_pairs, step):
        stop = min(n_pairs, start + step)
        a, b = ranked[pos_a[start:stop]], ranked[pos_b[start:stop]]
        shared = present[a] & present[b]
        n = shared.sum(axis=1)
        cols["n_shared"][start:stop] = n
        raw = np.where(shared, scores[a] - scores[b], 0.0)
        # Near-equal scores are equal (the one tie rule): such a task is no difference at all.
        # Scores are on [0, 1], so the tolerance is at most 1e-9: only tiny differences need the test.
        diffs = raw
        tiny = np.flatnonzero((np.abs(raw) <= TIE_REL_TOL) & (raw != 0))
        if tiny.size:
            at_pair, at_task = np.unravel_index(tiny, raw.shape)
            sa, sb = scores[a[at_pair], at_task], scores[b[at_pair], at_task]
            tol = tie_tolerance(sa, sb)
            diffs = raw.copy()
            near = raw[at_pair, at_task]
            diffs[at_pair, at_task] = np.where(np.abs(near) <= tol, 0.0, near)
        if tw is not None:
            # Weighted: the mean is sum w d / sum w, the test flips w x d, tasks needed counts Kish's n.
            wmask = np.where(shared, tw[None, :], 0.0)
            with np.errstate(invalid="ignore", divide="ignore"):
                total_w = _row_sums(wmask, shared)
                mean_raw = _row_sums(raw * tw, shared) / total_w
                mean_tied = _row_sums(diffs * tw, shared) / total_w
                n_k = kish(np.broadcast_to(tw, shared.shape), shared)
                spread = np.einsum("ij,ij->i", wmask, (diffs - mean_tied[:, None]) ** 2) / total_w
                sd = np.sqrt(np.maximum(spread, 0.0) * n_k / (n_k - 1) * n / n_k)
            flipped = diffs * tw
        else:
            with np.errstate(invalid="ignore", divide="ignore"):
                raw_sum = _row_sums(raw, shared)
                mean_raw = raw_sum / n
                mean_tied = (raw_sum if diffs is raw else _row_sums(diffs, shared)) / n
                # The spread only sizes tasks_needed (a rounded-up estimate): numpy's own sum will do.
                squares = np.einsum("ij,ij->i", diffs, diffs) - n * mean_tied * mean_tied
                sd = np.sqrt(np.maximum(squares, 0.0) / (n - 1))
            flipped = diffs
        if onehot is not None:
            # The cluster sign-flip test: each cluster's summed (weighted) difference keeps or flips its sign.
            # Two models with one task set: the difference of their own cluster sums (computed once per
            # model, a function of the two models alone); otherwise the pair's own sums.
            own = group[a] == group[b]
            sizes = np.empty((stop - start, onehot.count))
            cluster_raw = np.empty_like(sizes)
            cluster_tied = np.empty_like(sizes)
            sizes[own] = model_sizes[a[own]]
            cluster_raw[own] = model_sums[a[own]] - model_sums[b[own]]
            # The tie rule per task (at most 1e-9 a task for scores on [0, 1]) bounds a tied cluster's sum.
            cluster_tied[own] = np.where(np.abs(cluster_raw[own]) <= TIE_REL_TOL * sizes[own], 0.0, cluster_raw[own])
            other = ~own
            if other.any():
                sizes[other] = onehot.sums(shared[other].astype(np.float64) if tw is None else wmask[other])
                cluster_raw[other] = onehot.sums(raw[other] if tw is None else raw[other] * tw)
                cluster_tied[other] = onehot.sums(flipped[other])
            moments = cr2(cluster_raw, sizes)
            moments = replace(moments, mean=mean_raw)
            ci_lo, ci_hi = t_interval(moments, alpha)
            cols["ci_lo"][start:stop], cols["ci_hi"][start:stop] = ci_lo, ci_hi
            cols["n_clusters"][start:stop] = moments.clusters
            tied_moments = replace(moments, variance=cr2(cluster_tied, sizes).variance)
            # Clusters needed are sized at the level in force once the family is known (the end of this
            # function): C* = z^2 V C / d^2 is tasks_needed's n* with V C in the place of s_d^2.
            cols["cluster_sd"][start:stop] = np.sqrt(tied_moments.variance * tied_moments.clusters)
            tested_rows = cluster_tied
        else:
            tested_rows = flipped
        p, method = sign_flip_test(tested_rows, engine.seed)
        if correction != "none":
            p = refine_monte_carlo(tested_rows, p, method, alpha, tested, engine.seed)
        cols["nonzero"][start:stop] = np.count_nonzero(tested_rows, axis=1)
        some = n > 0
        cols["mean_diff"][start:stop] = np.where(some, mean_raw, np.nan)
        cols["p_value"][start:stop] = np.where(some, p, np.nan)
        cols["method"][start:stop] = method
        cols["sd"][start:stop] = np.where(n > 1, sd, np.nan)
    none = cols["n_shared"] == 0
    cols["ci_lo"][none] = np.nan
    cols["ci_hi"][none] = np.nan
    n_shared, p_value = cols["n_shared"], cols["p_value"]
    some = n_shared > 0
    member = some & family_members(cols.pop("nonzero"), alpha)
    adjusted = adjust(p_value, member, correction)
    cols["p_adjusted"], cols["member"] = adjusted, member
    ci_lo, ci_hi = cols["ci_lo"], cols["ci_hi"]
    units = cols["n_clusters"] if clustered else n_shared
    with np.errstate(invalid="ignore"):
        excludes_0 = (ci_lo > TIE_ABS_TOL) | (ci_hi < -TIE_ABS_TOL)
        reason = np.select(
            [~some, units < min_tasks(alpha), ~excludes_0, ~(adjusted <= alpha)],
            [NO_SHARED, TOO_FEW, CI_INCLUDES_0, TEST_NOT_SIGNIFICANT],
            SIGNIFICANT,
        )
    cols["reason"] = reason.astype(np.int8)
    tie_free_mean = np.where(np.abs(cols["mean_diff"]) <= TIE_ABS_TOL, 0.0, cols["mean_diff"])
    levels = step_levels(adjusted, member, alpha, correction)
    if clustered:
        # Clusters needed, in tasks: that many clusters of the pair's observed mean size.
        cols["clusters_needed"] = tasks_needed_at(np.nan_to_num(tie_free_mean), cols["cluster_sd"], levels)
        with np.errstate(invalid="ignore", divide="ignore"):
            size = n_shared / np.maximum(cols["n_clusters"], 1)
        needed = cols["clusters_needed"]
        cols["tasks_needed"] = np.where(needed >= 0, np.ceil(needed * size), -1).astype(np.int64)
    else:
        cols.pop("cluster_sd")
        cols["tasks_needed"] = tasks_needed_at(np.nan_to_num(tie_free_mean), cols["sd"], levels)
    return PairTable([matrix.model_ids[m] for m in order], cols, alpha, correction, clustered=clustered)


def _rank_ranges(rows: list[LeaderboardRow], table: PairTable) -> list[LeaderboardRow]:
    """Each model's rank range from the pairwise decisions (Chatbot Arena's "rank (UB)", paired)."""
    m = len(rows)
    sig = table.significant
    ahead = np.bincount(table.b[sig], minlength=m)  # models significantly ahead of each
    behind = np.bincount(table.a[sig], minlength=m)
    return [replace(row, rank_lo=1 + int(ahead[k]), rank_hi=m - int(behind[k])) for k, row in enumerate(rows)]


# The last analysis' matrix, design and resamples, keyed by the identity of every record it read
# (held, so no id is reused while it is kept), (b, seed) and the design asked for: the
# specification's aggregate() then pairwise_diffs() on the same list resample the models once.
# Records are frozen.
_Prepared = tuple[ScoreMatrix, "_Design", "_Engine", FloatArray | None]
_last: tuple[tuple[object, ...], Sequence[EvalRun], _Prepared | None] | None = None


def _prepared(
    runs: Sequence[EvalRun], b: int, seed: int, cluster_by: ClusterBy, weights: TaskWeights
) -> _Prepared | None:
    """The score matrix, its design, its engine and the models' resampled means (None with no scored record).

    With clustering the models' intervals are CR2's, not resampled: no resampled means then.
    """
    global _last
    key = (b, seed, cluster_by, weights, *((id(runs),) if isinstance(runs, RunColumns) else map(id, runs)))
    last = _last
    if last is not None and last[0] == key:
        return last[2]
    # Trials averaged and failed calls dropped first, so everything below resamples tasks (cases).
    scored = collapse_trials(runs)
    result: _Prepared | None = None
    if scored:
        matrix = score_matrix(scored)
        design = _design(runs, matrix, cluster_by, weights)
        engine = _Engine(matrix, b, seed, design.weight)
        result = (matrix, design, engine, engine.models() if design.cluster is None else None)
    _last = (key, runs, result)
    return result


def analyse(
    runs: Sequence[EvalRun],
    *,
    b: int = 500,
    alpha: float = 0.05,
    seed: int = 0,
    rank_by: RankBy = "mean",
    pairs: bool = True,
    correction: Correction = DEFAULT_CORRECTION,
    cluster_by: ClusterBy = "none",
    weights: TaskWeights = "ignore",
) -> Leaderboard:
    """The whole leaderboard in one pass: ranked rows and (optionally) every pairwise comparison.

    ``correction="holm"`` (the default) makes every decision family-wise (stats/family.py): the
    chance of any false "significant" among the pairs, and so in the rank ranges and the top
    group, is at most alpha. ``"none"`` tests each pair at alpha on its own.

    ``cluster_by`` ("category" or "cluster") makes every interval and test treat the task's
    cluster as the unit (stats/clustering.py); ``weights="apply"`` applies task weights
    (stats/weights.py).
    """
    _check_parameters(b, alpha)
    if cluster_by not in CLUSTER_BY:
        raise ValueError(f"cluster_by must be one of {', '.join(CLUSTER_BY)}, got {cluster_by!r}")
    if weights not in TASK_WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(TASK_WEIGHTS)}, got {weights!r}")
    check_resamples(b, alpha, name="b")
    if rank_by not in RANK_BY:
        raise ValueError(f"rank_by must be one of {', '.join(RANK_BY)}, got {rank_by!r}")
    check_correction(correction)
    runs = runs if isinstance(runs, RunColumns) else list(runs)  # columns stay columns: no record objects
    prepared = _prepared(runs, b, seed, cluster_by, weights)
    if prepared is None:
        empty = PairTable((), _empty_columns(), alpha, correction)
        return Leaderboard((), empty, alpha, b, seed, rank_by, len(runs), 0, 0, (), False, correction, 0, pairs)
    matrix, design, engine, theta = prepared
    rows, means, df = _rows(matrix, theta, alpha, rank_by, design)
    index = {m: i for i, m in enumerate(matrix.model_ids)}
    order = [index[row.model_id] for row in rows]
    clustered = design.cluster is not None
    if pairs:
        table = _pair_table(matrix, engine, theta if theta is not None else np.zeros((0, b)), means, order, alpha,
                            correction, design)  # fmt: skip
        rows = _rank_ranges(rows, table)
    else:
        table = PairTable(
            [matrix.model_ids[m] for m in order], _empty_columns(), alpha, correction, clustered=clustered
        )
    return Leaderboard(
        rows=tuple(rows),
        pairs=table,
        alpha=alpha,
        b=b,
        seed=seed,
        rank_by=rank_by,
        n_runs=len(runs),
        n_models=len(matrix.model_ids),
        n_tasks=len(matrix.task_ids),
        categories=matrix.categories,
        weights_ignored=matrix.weights_ignored,
        correction=correction,
        all_tied_tasks=_all_tied_tasks(matrix),
        pairs_computed=pairs,
        category_tasks=_category_tasks(matrix),
        clustering=_clusters(design, cluster_by, df),
        design=_category_design(matrix) if not clustered else None,
        task_weights=weights,
        binary_models=int(_binary(matrix).sum()),
    )


def _design(runs: Sequence[EvalRun], matrix: ScoreMatrix, cluster_by: ClusterBy, weights: TaskWeights) -> _Design:
    """Each task's cluster and weight, as asked; a task given two of either is a problem at its record."""
    cluster: NDArray[np.int64] | None = None
    names: tuple[str, ...] = ()
    if cluster_by == "category":
        # The matrix has each cell's category already: one per task is checked without a pass over the records.
        index = matrix.category_index
        low = np.where(matrix.present, index, np.iinfo(np.int64).max).min(axis=0)
        if np.array_equal(low, index.max(axis=0)):
            used = np.unique(low)
            names = tuple(matrix.categories[k] for k in used)
            cluster = np.searchsorted(used, low).astype(np.int64)
    if cluster_by != "none" and cluster is None:
        label = cluster_of(runs, cluster_by)
        names = tuple(sorted(set(label.values())))
        at = {c: k for k, c in enumerate(names)}
        cluster = np.array([at[label[t]] for t in matrix.task_ids], dtype=np.int64)
    weight = task_weights(runs, matrix.task_ids) if weights == "apply" and matrix.weights is not None else None
    return _Design(cluster, names, weight)


def _clusters(design: _Design, by: ClusterBy, df: FloatArray) -> Clusters | None:
    if design.cluster is None:
        return None
    counts = np.bincount(design.cluster, minlength=len(design.cluster_names))
    top = int(np.argmax(counts))
    finite = df[np.isfinite(df)]
    return Clusters(
        by=by,
        count=len(design.cluster_names),
        largest=design.cluster_names[top],
        largest_share=float(counts[top] / counts.sum()),
        min_df=float(finite.min()) if finite.size else math.nan,
        mean_size=float(counts.sum() / max(1, len(design.cluster_names))),
        method=METHOD,
    )


def _category_design(matrix: ScoreMatrix) -> DesignEffect | None:
    """The categories' design effect on the means (the diagnostic shown when clustering is off)."""
    if len(matrix.categories) < 2:
        return None
    return design_effect(matrix.scores, matrix.present, matrix.category_index.max(axis=0))


def _empty_columns() -> dict[str, NDArray[Any]]:
    ints = ("a", "b", "n_shared")
    floats = ("mean_diff", "ci_lo", "ci_hi", "p_value", "p_adjusted", "sd")
    return {
        **{k: np.zeros(0, dtype=np.int32) for k in ints},
        "tasks_needed": np.zeros(0, dtype=np.int64),
        "member": np.zeros(0, dtype=bool),
        **{k: np.zeros(0) for k in floats},
        "method": np.zeros(0, dtype=np.int8),
        "reason": np.zeros(0, dtype=np.int8),
    }


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
