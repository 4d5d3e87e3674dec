"""Leaderboard statistics: means with bootstrap CIs, win-rates, category means, paired differences.

The specification is ``leaderboard-aggregation.md``; docs/statistics.md (and the
README) say what is resampled for each number.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import Any, Literal, overload

import numpy as np
from numpy.typing import NDArray

from ..limits import MAX_BOOTSTRAP_SAMPLES, MAX_ID_LENGTH
from ..records import EvalRun, LeaderboardRow, PairwiseDiff
from ..trials import collapse_trials
from ..validation import encodable, validate_runs
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
from .significance import METHOD_NAMES, min_tasks, sign_flip_test

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
    )


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

    def __init__(self, matrix: ScoreMatrix, b: int, seed: int) -> None:
        self.matrix = matrix
        self.b = b
        self.seed = seed
        self._encoded = encode_ids(matrix.task_ids)
        self.filled = np.where(matrix.present, matrix.scores, 0.0)
        self._sets = list(_task_sets(matrix.present).values())
        self.shared_counts: NDArray[np.int64] = _shared_counts(matrix.present)

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
            values, masks = self.filled[large], matrix.present[large]
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
                return np.where(shared, self.filled[la[i:j]] - self.filled[lb[i:j]], 0.0), shared

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


def _rows(
    matrix: ScoreMatrix, theta: FloatArray, alpha: float, rank_by: RankBy
) -> tuple[list[LeaderboardRow], FloatArray]:
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
                category_tasks={matrix.categories[c]: int(counts[c]) for c in np.flatnonzero(counts)},
                ci_note=_ci_note(matrix.scores[m, own]),
            )
        )
    return rows, means


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
    ) -> None:
        self.ranked_ids = tuple(ranked_ids)
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
            elif code == TOO_FEW:
                out.append(f"too few shared tasks ({int(self.n_shared[start + k])} < {fewest})")
            else:
                adjusted = self.correction == "holm" and bool(self.member[start + k])
                test = "Holm-adjusted" if adjusted else TEST_WORDS[int(self.method[start + k])]
                out.append(f"{test} p = {self.p_adjusted[start + k]:.3g}")
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
        "nonzero": np.zeros(n_pairs, dtype=np.int64),
    }
    # The family's size is known after the tests; the Monte Carlo refinement needs only a bound on it.
    tested = int(np.count_nonzero(engine.shared_counts[np.triu_indices(len(order), 1)] > 0))
    scores, present = engine.filled, matrix.present
    # Two passes, each in chunks sized for its own arrays: the resampled differences are
    # (pairs, B), the per-task differences (pairs, tasks). A Poisson draw serves a whole
    # chunk, so the fewer chunks the bootstrap pass takes, the fewer weight matrices are made.
    step = max(1, _PAIR_CHUNK_ELEMENTS // engine.b)
    for start in range(0, n_pairs, step):
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
        with np.errstate(invalid="ignore", divide="ignore"):
            raw_sum = _row_sums(raw, shared)
            mean_raw = raw_sum / n
            mean_tied = (raw_sum if diffs is raw else _row_sums(diffs, shared)) / n
            # The spread only sizes tasks_needed (a rounded-up estimate): numpy's own sum will do.
            squares = np.einsum("ij,ij->i", diffs, diffs) - n * mean_tied * mean_tied
            sd = np.sqrt(np.maximum(squares, 0.0) / (n - 1))
        p, method = sign_flip_test(diffs, engine.seed)
        if correction != "none":
            p = refine_monte_carlo(diffs, p, method, alpha, tested, engine.seed)
        cols["nonzero"][start:stop] = np.count_nonzero(diffs, axis=1)
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
    with np.errstate(invalid="ignore"):
        excludes_0 = (ci_lo > TIE_ABS_TOL) | (ci_hi < -TIE_ABS_TOL)
        reason = np.select(
            [~some, n_shared < min_tasks(alpha), ~excludes_0, ~(adjusted <= alpha)],
            [NO_SHARED, TOO_FEW, CI_INCLUDES_0, TEST_NOT_SIGNIFICANT],
            SIGNIFICANT,
        )
    cols["reason"] = reason.astype(np.int8)
    tie_free_mean = np.where(np.abs(cols["mean_diff"]) <= TIE_ABS_TOL, 0.0, cols["mean_diff"])
    levels = step_levels(adjusted, member, alpha, correction)
    cols["tasks_needed"] = tasks_needed_at(np.nan_to_num(tie_free_mean), cols["sd"], levels)
    return PairTable([matrix.model_ids[m] for m in order], cols, alpha, correction)


def _rank_ranges(rows: list[LeaderboardRow], table: PairTable) -> list[LeaderboardRow]:
    """Each model's rank range from the pairwise decisions (Chatbot Arena's "rank (UB)", paired)."""
    m = len(rows)
    sig = table.significant
    ahead = np.bincount(table.b[sig], minlength=m)  # models significantly ahead of each
    behind = np.bincount(table.a[sig], minlength=m)
    return [replace(row, rank_lo=1 + int(ahead[k]), rank_hi=m - int(behind[k])) for k, row in enumerate(rows)]


# The last analysis' matrix and resamples, keyed by the identity of every record it read (held,
# so no id is reused while it is kept) and (b, seed): the specification's aggregate() then
# pairwise_diffs() on the same list resample the models once. Records are frozen.
_last: tuple[tuple[int, ...], int, int, list[EvalRun], tuple[ScoreMatrix, _Engine, FloatArray] | None] | None = None


def _prepared(runs: list[EvalRun], b: int, seed: int) -> tuple[ScoreMatrix, _Engine, FloatArray] | None:
    """The score matrix, its engine and the models' resampled means (None with no scored record)."""
    global _last
    ids = tuple(map(id, runs))
    last = _last
    if last is not None and last[1] == b and last[2] == seed and last[0] == ids:
        return last[4]
    # Trials averaged and failed calls dropped first, so everything below resamples tasks (cases).
    scored = collapse_trials(runs)
    result = None
    if scored:
        matrix = score_matrix(scored)
        engine = _Engine(matrix, b, seed)
        result = (matrix, engine, engine.models())
    _last = (ids, b, seed, runs, result)
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
) -> Leaderboard:
    """The whole leaderboard in one pass: ranked rows and (optionally) every pairwise comparison.

    ``correction="holm"`` (the default) makes every decision family-wise (stats/family.py): the
    chance of any false "significant" among the pairs, and so in the rank ranges and the top
    group, is at most alpha. ``"none"`` tests each pair at alpha on its own.
    """
    _check_parameters(b, alpha)
    check_resamples(b, alpha, name="b")
    if rank_by not in RANK_BY:
        raise ValueError(f"rank_by must be one of {', '.join(RANK_BY)}, got {rank_by!r}")
    check_correction(correction)
    runs = list(runs)
    prepared = _prepared(runs, b, seed)
    if prepared is None:
        empty = PairTable((), _empty_columns(), alpha, correction)
        return Leaderboard((), empty, alpha, b, seed, rank_by, len(runs), 0, 0, (), False, correction, 0, pairs)
    matrix, engine, theta = prepared
    rows, means = _rows(matrix, theta, alpha, rank_by)
    index = {m: i for i, m in enumerate(matrix.model_ids)}
    order = [index[row.model_id] for row in rows]
    if pairs:
        table = _pair_table(matrix, engine, theta, means, order, alpha, correction)
        rows = _rank_ranges(rows, table)
    else:
        table = PairTable([matrix.model_ids[m] for m in order], _empty_columns(), alpha, correction)
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
    )


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
