"""The last analysis' preparation, kept for the next call on the same records.

The specification's ``aggregate()`` then ``pairwise_diffs()`` on the same list would otherwise
build the matrix and resample every model twice. One entry, for the same record objects in the
same order and the same parameters. The records are held, so none is freed while the entry is kept
(no other record can take its place), and they are frozen; identity is checked, not equality:
records equal by value can still differ in what validation refuses (``True`` and ``1`` are equal).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass

from ..records import EvalRun
from ..run_columns import RunColumns
from ..trials import FailedCalls, collapse_trials
from .bootstrap import BootstrapEngine
from .clustering import ClusterBy
from .design import Design, task_design
from .matrix import ScoreMatrix, score_matrix
from .resampling import FloatArray
from .weights import TaskWeights


@dataclass(frozen=True)
class Prepared:
    """The score matrix, its design, its engine and the models' resampled means.

    With clustering the models' intervals are CR2's, not resampled: ``theta`` is None then.
    """

    matrix: ScoreMatrix
    design: Design
    engine: BootstrapEngine
    theta: FloatArray | None


@dataclass(frozen=True)
class _Entry:
    parameters: tuple[object, ...]
    runs: Sequence[EvalRun]  # a tuple of the records, or the columns themselves
    prepared: Prepared | None


_last: _Entry | None = None


def forget() -> None:
    """Drop the kept preparation (a benchmark timing a cold analysis calls this)."""
    global _last
    _last = None


def _same(kept: Sequence[EvalRun], runs: Sequence[EvalRun]) -> bool:
    """The very records analysed last (columns: the very columns, never read record by record)."""
    if isinstance(kept, RunColumns) or isinstance(runs, RunColumns):
        return kept is runs
    return len(kept) == len(runs) and all(map(operator.is_, kept, runs))


def prepared(
    runs: Sequence[EvalRun],
    b: int,
    seed: int,
    cluster_by: ClusterBy,
    weights: TaskWeights,
    failed: FailedCalls = "zero",
) -> Prepared | None:
    """The preparation of ``runs`` for these parameters (None with no scored record), made once per records."""
    global _last
    parameters: tuple[object, ...] = (b, seed, cluster_by, weights, failed)
    last = _last
    if last is not None and last.parameters == parameters and _same(last.runs, runs):
        return last.prepared
    # Trials averaged and failed calls scored 0 (or dropped) first, so everything below resamples tasks (cases).
    scored = collapse_trials(runs, failed)
    result: Prepared | None = None
    if scored:
        matrix = score_matrix(scored)
        design = task_design(runs, matrix, cluster_by, weights)
        engine = BootstrapEngine(matrix, b, seed, design.weight)
        result = Prepared(matrix, design, engine, engine.models() if design.cluster is None else None)
    _last = _Entry(parameters, runs if isinstance(runs, RunColumns) else tuple(runs), result)
    return result
