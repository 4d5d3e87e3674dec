"""Every score of a suite as a (models x tasks) matrix: the one input the engine, the rows and the comparison read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..limits import MAX_ID_LENGTH
from ..records import EvalRun
from ..run_columns import RunColumns
from ..validation import encodable, validate_runs
from .resampling import FloatArray


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


def _cells(shape: tuple[int, int], cell: NDArray[np.int64], values: FloatArray) -> FloatArray:
    out = np.ones(shape)
    out.flat[cell] = values
    return out


def row_sums(values: FloatArray, mask: NDArray[np.bool_]) -> FloatArray:
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


def _columns_matrix(runs: RunColumns) -> ScoreMatrix:
    """The matrix of records the loader read as columns: checked as they were read, ids sorted, no pair twice."""
    shape = (len(runs.models), len(runs.tasks))
    cell = runs.cell_codes()
    values = np.full(shape, np.nan)
    values.flat[cell] = runs.score
    category_index = np.full(shape, -1, dtype=np.int64)
    # Only the categories some record has: a code column may index a longer list after a merge.
    used = np.unique(runs.category)
    category_index.flat[cell] = np.searchsorted(used, runs.category)
    weights = runs.weight
    return ScoreMatrix(
        model_ids=runs.models,
        task_ids=runs.tasks,
        scores=values,
        present=~np.isnan(values),
        category_index=category_index,
        categories=tuple(runs.categories[k] for k in used),
        weights_ignored=bool(np.any(weights != 1.0)),
        weights=None if bool(np.all(weights == 1.0)) else _cells(shape, cell, weights),
    )
