"""The resampling engine: bootstrap means of models and of pairs for one score matrix, B and seed.

Small task sets get the exact multinomial bootstrap on one keyed draw per task set; large
ones the Poisson bootstrap, one weight matrix per block of resamples (resampling.py says why
both are the same bootstrap to within its own Monte Carlo error).

Engines over the same tasks, seed and B draw the same Poisson weights: within
:func:`shared_weights`, one engine's pass also resamples the other engines' (the *riders'*)
models, each with the very arithmetic of its own pass, so the weights are drawn once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .matrix import ScoreMatrix
from .resampling import (
    EXACT_LIMIT,
    EXACT_PAIR_LIMIT,
    FloatArray,
    encode_ids,
    keyed_rng,
    poisson_weights,
    resampled_means,
    task_keys,
)

# Poisson weights held at once (~32 MiB), rows per matrix product, and the most row values
# kept between weight blocks (~128 MiB) before they are rebuilt for each block instead.
_WEIGHT_ELEMENTS = 1 << 22
_ITEM_GROUP = 256
_KEEP_ELEMENTS = 1 << 24

Rows = Callable[[int, int], tuple[FloatArray, NDArray[Any]]]


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


class BootstrapEngine:
    """Resamples task sets as resampling.py describes, for one matrix, B and seed."""

    def __init__(self, matrix: ScoreMatrix, b: int, seed: int, weight: FloatArray | None = None) -> None:
        self.matrix = matrix
        self.b = b
        self.seed = seed
        self.weight = weight  # each task's weight when applied: resampled means are weighted means
        self._encoded = encode_ids(matrix.task_ids)
        self.filled = np.where(matrix.present, matrix.scores, 0.0)
        self.task_sets = list(_task_sets(matrix.present).values())  # models grouped by the exact tasks they have
        self.task_set_of = np.empty(len(matrix.model_ids), dtype=np.int64)  # each model's group in task_sets
        for g, members in enumerate(self.task_sets):
            self.task_set_of[members] = g
        self.shared_counts: NDArray[np.int64] = _shared_counts(matrix.present)
        self._ridden: FloatArray | None = None  # its distinct large models' means, from another engine's pass

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

    def poisson(self, n_items: int, items: Rows) -> FloatArray:
        """Poisson-weighted means of ``n_items`` rows, each over its own mask.

        ``items(i, j)`` gives rows i..j-1 as (values, zero outside the mask; mask). Returns
        (n_items, b). One weight matrix serves every row; rows come in groups and weights in
        row blocks, so memory stays bounded whatever the number of models, pairs or tasks.
        """
        return self._poisson_pass([(n_items, items)])[0]

    def _poisson_pass(self, jobs: Sequence[tuple[int, Rows]]) -> list[FloatArray]:
        """:meth:`poisson` of several sets of rows on one draw of the weights: each set's arithmetic is
        what its own pass would do (the same products of the same shapes), so its means are the same bits."""
        n_tasks = len(self.matrix.task_ids)
        outs = [np.empty((n_items, self.b)) for n_items, _ in jobs]
        keys = task_keys(self.seed, self._encoded)
        block = max(1, min(self.b, _WEIGHT_ELEMENTS // max(1, n_tasks)))
        # Rows are cheap to rebuild, but not free: keep them when they are small enough.
        kept = [
            [items(g, min(n_items, g + _ITEM_GROUP)) for g in range(0, n_items, _ITEM_GROUP)]
            if n_items * n_tasks <= _KEEP_ELEMENTS
            else None
            for n_items, items in jobs
        ]
        full = [[bool(masks.all()) for _, masks in rows] if rows is not None else None for rows in kept]
        buffer = np.empty((block, n_tasks))  # one for every block: no fresh pages to fault in each time
        for start in range(0, self.b, block):
            stop = min(self.b, start + block)
            counts = poisson_weights(keys, start, stop - start)
            weights = buffer[: stop - start]
            np.copyto(weights, counts)
            # Small integers: float32 sums them exactly while every sum stays within 2^24, as does any order of
            # adding them; so a row of every task totals its resample's count, whichever way it is added.
            # (Each weight is at most 41: int32 holds the sum of 2^25 of them.)
            resample_totals = counts.sum(axis=1, dtype=np.int32 if n_tasks < 1 << 25 else np.int64).astype(np.float64)
            exact = resample_totals.max(initial=0.0) <= 1 << 24
            weights32: NDArray[np.float32] | None = None
            for (n_items, items), rows, out, whole in zip(jobs, kept, outs, full, strict=True):
                for k, g in enumerate(range(0, n_items, _ITEM_GROUP)):
                    values, masks = rows[k] if rows is not None else items(g, min(n_items, g + _ITEM_GROUP))
                    if masks.dtype == np.bool_ and exact and (whole[k] if whole is not None else masks.all()):
                        total = np.repeat(resample_totals[:, None], len(values), axis=1)
                    elif masks.dtype == np.bool_:
                        if weights32 is None:
                            weights32 = counts.astype(np.float32)
                        total = (weights32 @ masks.T.astype(np.float32)).astype(np.float64)
                    else:  # task weights, not 0/1: in float64
                        total = weights @ masks.T
                    sums = weights @ values.T
                    # A zero total needs every weight of a large set to be 0: p < e^-200.
                    np.divide(sums, total, out=sums, where=total > 0)
                    out[g : g + len(values), start:stop] = sums.T
        return outs

    def _large(self) -> tuple[list[int], FloatArray, NDArray[Any], list[int], list[int]]:
        """The models resampled with Poisson weights: (models, their rows' values, masks, the first of each
        distinct row, each model's first)."""
        matrix = self.matrix
        large = [
            m
            for members in self.task_sets
            if np.count_nonzero(matrix.present[members[0]]) > EXACT_LIMIT
            for m in members
        ]
        values, masks = self.filled[large], matrix.present[large]
        if self.weight is not None:
            values, masks = values * self.weight, np.where(masks, self.weight, 0.0)
        # Identical models must get identical resamples to the bit (so their difference is exactly 0);
        # a matrix product need not compute two equal columns alike, so each distinct model goes once.
        distinct: dict[bytes, int] = {}
        inverse = [
            distinct.setdefault(values[i].tobytes() + np.packbits(masks[i] != 0).tobytes(), i)
            for i in range(len(large))
        ]
        return large, values, masks, sorted(set(inverse)), inverse

    def _rides_with(self, host: BootstrapEngine) -> bool:
        """The host's pass draws this engine's very weights (the same tasks, seed and B) and it has rows to resample."""
        return (
            host is not self
            and self._ridden is None
            and (self.b, self.seed) == (host.b, host.seed)
            and self.matrix.task_ids == host.matrix.task_ids
            and any(np.count_nonzero(self.matrix.present[m[0]]) > EXACT_LIMIT for m in self.task_sets)
        )

    def models(self) -> FloatArray:
        """Bootstrap means (models, b): each model over its own tasks.

        Within :func:`shared_weights`, the riders' large models are resampled in this pass too.
        """
        matrix = self.matrix
        theta = np.empty((len(matrix.model_ids), self.b))
        for members in self.task_sets:
            columns = np.flatnonzero(matrix.present[members[0]])
            if columns.size <= EXACT_LIMIT:
                theta[members] = self.exact(members, columns)
        large, values, masks, first, inverse = self._large()
        if large:
            if self._ridden is not None:
                resampled, self._ridden = self._ridden, None
            else:
                riders = [r for r in _riders.get() if r._rides_with(self)]
                plans = [r._large() for r in riders]
                jobs: list[tuple[int, Rows]] = [(len(first), _rows(values, masks, first))]
                jobs += [(len(plan[3]), _rows(plan[1], plan[2], plan[3])) for plan in plans]
                resampled, *theirs = self._poisson_pass(jobs)
                for rider, means in zip(riders, theirs, strict=True):
                    rider._ridden = means
            where = {row: k for k, row in enumerate(first)}
            theta[large] = resampled[[where[row] for row in inverse]]
        return theta

    def pairs(self, listed: Sequence[tuple[int, int]], theta: FloatArray) -> FloatArray:
        """Resampled mean differences (pairs, b) over each pair's shared tasks; NaN with none."""
        present = self.matrix.present
        if not listed:
            return np.full((0, self.b), np.nan)
        a_idx = np.array([a for a, _ in listed])
        b_idx = np.array([b for _, b in listed])
        same = self.task_set_of[a_idx] == self.task_set_of[b_idx]
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


def _rows(values: FloatArray, masks: NDArray[Any], first: list[int]) -> Rows:
    return lambda i, j: (values[first[i:j]], masks[first[i:j]])


_riders: ContextVar[tuple[BootstrapEngine, ...]] = ContextVar("riders", default=())


@contextmanager
def shared_weights(riders: Sequence[BootstrapEngine]) -> Iterator[None]:
    """Within: an engine's Poisson pass over the riders' tasks, seed and B resamples their models too (the
    weights drawn once for both); a rider's own :meth:`BootstrapEngine.models` then reads its means."""
    token = _riders.set(tuple(riders))
    try:
        yield
    finally:
        _riders.reset(token)
