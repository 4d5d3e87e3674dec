"""Task weights, applied when asked (``task-weights: apply``).

A weight belongs to a task, not to a model's run of it: the weighted mean of two models
is comparable only when each task counts the same for both. So with weights applied, a
task's weight must be the same on every record of it (else a problem at the record).

What changes with weights applied (win-rate stays a share of tasks):

* each model's mean is sum w y / sum w over its tasks, category means likewise;
* the bootstrap resamples tasks as before and multiplies each resampled task's weight in
  (the resampled statistic is the weighted mean of the resample);
* the sign-flip test flips w x d, each task's weighted difference;
* tasks needed is sized on Kish's effective number of tasks, (sum w)^2 / sum w^2.

Weights matter only by their ratios, so the statistics take them scaled by the power of two that
brings the largest into [1/2, 1) (:func:`normalised`): exact in binary floating point (every mean
is the same to the last bit), and weights of 1e-12 or 1e308 neither underflow a product nor
overflow a sum.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ..records import EvalRun, Source
from ..run_columns import RunColumns
from ..validation import InvalidEvalRuns, Problem, shown
from .task_columns import first_everywhere, first_of_each, in_order

FloatArray = NDArray[np.float64]

TaskWeights = Literal["ignore", "apply"]
TASK_WEIGHTS: tuple[TaskWeights, ...] = ("ignore", "apply")


def task_weights(runs: Sequence[EvalRun], task_ids: Sequence[str]) -> FloatArray:
    """Each task's weight (in ``task_ids`` order); one task with two weights is a problem at its record."""
    if isinstance(runs, RunColumns):
        return _columns_weights(runs, task_ids)
    seen: dict[str, tuple[float, EvalRun]] = {}
    problems: list[Problem] = []
    for index, run in enumerate(runs):
        first = seen.setdefault(run.task_id, (float(run.weight), run))
        if first[0] != float(run.weight):
            where = {"file": run.source.file, "line": run.source.line} if run.source else {"index": index}
            at = str(first[1].source) if first[1].source else "another record"
            problems.append(_two_weights(run.task_id, float(run.weight), first[0], at, where))
    if problems:
        raise InvalidEvalRuns(problems)
    return np.array([seen[t][0] if t in seen else 1.0 for t in task_ids], dtype=np.float64)


def _columns_weights(runs: RunColumns, task_ids: Sequence[str]) -> FloatArray:
    """:func:`task_weights` of runs held as columns: each task's first weight, and the same problems at the same
    places (every record differing from its task's first, in the records' order), with no record built."""
    first = first_everywhere(runs.task, len(runs.tasks))
    differ = np.flatnonzero(runs.weight != runs.weight[first])
    problems: list[Problem] = []
    for i, j in zip(differ.tolist(), first[differ].tolist(), strict=True):  # the error path: a problem each
        at = str(Source(runs.files[int(runs.file[j])], int(runs.line[j])))
        where = {"file": runs.files[int(runs.file[i])], "line": int(runs.line[i])}
        problems.append(
            _two_weights(runs.tasks[int(runs.task[i])], float(runs.weight[i]), float(runs.weight[j]), at, where)
        )
    if problems:
        raise InvalidEvalRuns(problems)
    found, once = first_of_each(runs.task)
    return np.asarray(in_order(runs.tasks, found, runs.weight[once], task_ids, 1.0), dtype=np.float64)


def _two_weights(task: str, weight: float, first: float, at: str, where: dict[str, Any]) -> Problem:
    return Problem(
        message=(
            f"task {shown(task)} has weight {weight:g} here but {first:g} at {at}: with "
            "task-weights: apply a task's weight must be the same for every model"
        ),
        field="weight",
        **where,
    )


def normalised(weights: FloatArray) -> FloatArray:
    """``weights`` times the power of two that brings the largest into [1/2, 1) (unchanged when all are 0)."""
    top = float(np.max(weights)) if weights.size else 0.0
    if not (top > 0.0 and np.isfinite(top)):
        return weights
    return np.asarray(np.ldexp(weights, -np.frexp(top)[1]), dtype=np.float64)


def kish(weights: FloatArray, mask: NDArray[np.bool_]) -> FloatArray:
    """Kish's effective number of tasks of each row's masked weights: (sum w)^2 / sum w^2."""
    w = np.where(mask, weights, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(w.sum(axis=1) ** 2 / (w * w).sum(axis=1), dtype=np.float64)
