"""Which tasks moved: the task-level story behind each model's change against a baseline.

For every model in both runs, over the tasks it has a score on in both (its *shared* tasks, as
:func:`leaderboard.stats.comparison.compare` counts them):

* a task *moved* when ``score_PR − score_base`` is beyond the project's one tie rule
  (:func:`~leaderboard.stats.ties.tie_tolerance`: ``math.isclose``, rel 1e-9, abs 1e-12);
  it *dropped* (0/1 scores: *newly failing*) or *gained* (*newly passing*);
* a model has *0/1 scores* when every score it has on either side, every trial included, is 0 or 1.
  A task's score is then the share of its trials that passed, so with trials a flip may be
  1 → 0.67 (one trial of three failed);
* a move is *flaky* when the model ran the task more than once on either side (epochs, repeats,
  the ``trial`` field) and those trials disagree (beyond the tie rule). When no task of the model
  has several trials on either side, nothing is claimed: ``flaky`` is None;
* the tasks the model has a score on only in this run, or only in the baseline, are named.

Scores are those of the leaderboard: trials averaged per task, failed calls left out
(:mod:`leaderboard.trials`). The computation is vectorised over (models x tasks) cells; the only
Python loop is over the models compared. Everything is a function of the two sets of records, not
of their order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter, itemgetter

import numpy as np
from numpy.typing import NDArray

from ..records import EvalRun
from ..run_columns import RunColumns
from .resampling import FloatArray
from .ties import tie_tolerance


@dataclass(frozen=True)
class Moves:
    """The tasks whose score moved one way, largest move first (equal moves by task id).

    ``flaky`` is None when the model has no task with several trials on either side.
    """

    task_ids: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    base: tuple[float, ...] = ()
    pr: tuple[float, ...] = ()
    flaky: tuple[bool, ...] | None = None

    def __len__(self) -> int:
        return len(self.task_ids)

    @property
    def flaky_count(self) -> int | None:
        return None if self.flaky is None else sum(self.flaky)


@dataclass(frozen=True)
class ModelTaskChanges:
    """One model's task-level changes against its baseline scores."""

    model_id: str
    binary: bool  # every score on both sides (each trial) is 0 or 1: drops are "newly failing"
    trials: bool  # some task has several trials on either side: flakiness is known
    n_shared: int
    drops: Moves
    gains: Moves
    only_run: tuple[str, ...]  # tasks with a score in this run only, sorted
    only_baseline: tuple[str, ...]  # tasks with a score in the baseline only, sorted

    @property
    def moved(self) -> int:
        return len(self.drops) + len(self.gains)

    @property
    def flaky_count(self) -> int | None:
        """Moves whose trials disagree on either side (None: no trials, nothing claimed)."""
        if not self.trials:
            return None
        return (self.drops.flaky_count or 0) + (self.gains.flaky_count or 0)

    @property
    def changed(self) -> bool:
        """Some task moved, or is on one side only."""
        return bool(self.moved or self.only_run or self.only_baseline)


@dataclass(frozen=True)
class TaskChanges:
    """Every model in both runs (sorted by id)."""

    models: tuple[ModelTaskChanges, ...]

    def of(self, model_id: str) -> ModelTaskChanges:
        for m in self.models:
            if m.model_id == model_id:
                return m
        raise KeyError(model_id)

    @property
    def changed(self) -> tuple[ModelTaskChanges, ...]:
        return tuple(m for m in self.models if m.changed)


@dataclass(frozen=True)
class _Side:
    """One side's cells: mean score (NaN absent), category index, several trials, trials disagree."""

    scores: FloatArray
    category: NDArray[np.int64]
    several: NDArray[np.bool_]
    disagree: NDArray[np.bool_]
    nonbinary: NDArray[np.bool_]  # per model: a score other than 0 or 1


def _names(runs: Sequence[EvalRun], field: str) -> set[str]:
    """The distinct values of one id field (of the columns' names, those some record has)."""
    if isinstance(runs, RunColumns):
        names, codes = getattr(runs, "categories" if field == "category" else field + "s"), getattr(runs, field)
        used = np.bincount(codes, minlength=len(names)) > 0
        return {names[k] for k in np.flatnonzero(used).tolist()}
    return set(map(attrgetter(field if field == "category" else field + "_id"), runs))


def _same_sorted(base: Sequence[EvalRun], pr: Sequence[EvalRun]) -> list[str]:
    """Both sides' task ids when they are columns with the same tasks, every one with a record (the columns'
    names are sorted); empty otherwise, and the ids are gathered from the records."""
    if not (isinstance(base, RunColumns) and isinstance(pr, RunColumns)) or base.tasks != pr.tasks:
        return []
    every = all(bool(np.bincount(side.task, minlength=len(side.tasks)).all()) for side in (base, pr))
    return list(pr.tasks) if every and list(pr.tasks) == sorted(pr.tasks) else []


def _coded(names: Sequence[str], codes: NDArray[np.int64], index: dict[str, int]) -> NDArray[np.int64]:
    """Codes into ``names`` recoded into ``index`` (-1 for a name not in it)."""
    if len(names) == len(index) and tuple(index) == tuple(names):
        return codes  # the same names in the same order (a run with every task): the codes are already these
    return np.array([index.get(n, -1) for n in names], dtype=np.int64)[codes]


def _side(runs: Sequence[EvalRun], m_of: dict[str, int], t_of: dict[str, int], c_of: dict[str, int]) -> _Side:
    if isinstance(runs, RunColumns):
        # Plain records: no failed call, every score present; the codes are recoded, no record is built.
        model = _coded(runs.models, runs.model, m_of)
        task = _coded(runs.tasks, runs.task, t_of)
        category = _coded(runs.categories, runs.category, c_of)
        keep = model >= 0
        return _cells(model[keep], task[keep], category[keep], runs.score[keep], len(m_of), len(t_of))
    n = len(runs)
    scores_col = list(map(attrgetter("score"), runs))
    errors = list(map(attrgetter("error"), runs))
    model = np.fromiter(map(m_of.get, map(attrgetter("model_id"), runs), repeat(-1)), dtype=np.int64, count=n)
    task = np.fromiter(map(t_of.__getitem__, map(attrgetter("task_id"), runs)), dtype=np.int64, count=n)
    category = np.fromiter(map(c_of.__getitem__, map(attrgetter("category"), runs)), dtype=np.int64, count=n)
    # A failed call (error True or a reason) says nothing about the answer: left out, as in the leaderboard.
    if set(map(type, errors)) <= {bool} and not any(errors) and None not in scores_col:
        score = np.array(scores_col, dtype=np.float64)
        keep = model >= 0
    else:
        score = np.array([math.nan if v is None else v for v in scores_col], dtype=np.float64)
        failed = np.fromiter((e is True or isinstance(e, str) for e in errors), dtype=bool, count=n)
        keep = (model >= 0) & ~failed & ~np.isnan(score)
    if not keep.all():
        model, task, category, score = model[keep], task[keep], category[keep], score[keep]
    return _cells(model, task, category, score, len(m_of), len(t_of))


def _cells(
    model: NDArray[np.int64],
    task: NDArray[np.int64],
    category: NDArray[np.int64],
    score: FloatArray,
    n_models: int,
    n_tasks: int,
) -> _Side:
    size = n_models * n_tasks
    cell = model * n_tasks + task
    counts = np.bincount(cell, minlength=size)
    sums = np.bincount(cell, weights=score, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    categories = np.full(size, -1, dtype=np.int64)
    disagree = np.zeros(size, dtype=bool)
    several = counts > 1
    if cell.size and several.any():
        # Sorted by (cell, score): each cell's trials are one run, its lowest first and highest last.
        order = np.lexsort((category, score, cell))
        c, s = cell[order], score[order]
        starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
        ends = np.r_[starts[1:], c.size] - 1
        lo, hi = s[starts], s[ends]
        disagree[c[starts]] = np.abs(hi - lo) > tie_tolerance(hi, lo)
        # One category per cell whatever the record order: the last in sorted order.
        categories[c] = category[order]
    else:
        categories[cell] = category
    nonbinary = np.bincount(model, weights=((score != 0.0) & (score != 1.0)).astype(np.float64), minlength=n_models)
    shape = (n_models, n_tasks)
    return _Side(
        scores=means.reshape(shape),
        category=categories.reshape(shape),
        several=several.reshape(shape),
        disagree=disagree.reshape(shape),
        nonbinary=nonbinary > 0,
    )


def _pick(names: Sequence[str], at: list[int]) -> tuple[str, ...]:
    """``names`` at the positions ``at`` (itemgetter: in C)."""
    if not at:
        return ()
    picked = itemgetter(*at)(names)
    return (picked,) if len(at) == 1 else tuple(picked)


def _moves(
    columns: NDArray[np.intp],
    order_key: FloatArray,
    row: int,
    task_ids: Sequence[str],
    category_names: Sequence[str],
    base: _Side,
    pr: _Side,
    flaky: NDArray[np.bool_] | None,
) -> Moves:
    # Stable: equal moves keep the sorted task order.
    columns = columns[np.argsort(order_key, kind="stable")]
    cats = np.where(pr.category[row, columns] >= 0, pr.category[row, columns], base.category[row, columns])
    return Moves(
        task_ids=_pick(task_ids, columns.tolist()),
        categories=_pick(category_names, cats.tolist()),
        base=tuple(base.scores[row, columns].tolist()),
        pr=tuple(pr.scores[row, columns].tolist()),
        flaky=None if flaky is None else tuple(flaky[row, columns].tolist()),
    )


def _listed(runs: Sequence[EvalRun]) -> Sequence[EvalRun]:
    return runs if isinstance(runs, RunColumns) else list(runs)


def task_changes(
    baseline_runs: Sequence[EvalRun], runs: Sequence[EvalRun], *, models: Sequence[str] | None = None
) -> TaskChanges:
    """The task-level changes of each model in both runs (or of ``models``, each in both).

    The records are expected valid (``compare`` checks them first, raising ``InvalidEvalRuns``).
    """
    base_runs, pr_runs = _listed(baseline_runs), _listed(runs)
    in_both = sorted(_names(base_runs, "model") & _names(pr_runs, "model"))
    chosen = in_both if models is None else sorted(set(models) & set(in_both))
    task_ids = _same_sorted(base_runs, pr_runs) or sorted(_names(base_runs, "task") | _names(pr_runs, "task"))
    category_names = sorted(_names(base_runs, "category") | _names(pr_runs, "category"))
    m_of = {m: i for i, m in enumerate(chosen)}
    t_of = dict(zip(task_ids, range(len(task_ids)), strict=True))  # in C: a million tasks
    c_of = {c: i for i, c in enumerate(category_names)}
    base, pr = _side(base_runs, m_of, t_of, c_of), _side(pr_runs, m_of, t_of, c_of)
    base_present, pr_present = ~np.isnan(base.scores), ~np.isnan(pr.scores)
    shared = base_present & pr_present
    with np.errstate(invalid="ignore"):
        diff = pr.scores - base.scores
        moved = shared & (np.abs(diff) > tie_tolerance(pr.scores, base.scores))
    drops: NDArray[np.bool_] = moved & (diff < 0)
    gains: NDArray[np.bool_] = moved & (diff > 0)
    has_trials: NDArray[np.bool_] = np.asarray((base.several | pr.several).any(axis=1), dtype=bool)
    flaky_cells = base.disagree | pr.disagree
    only_run, only_base = pr_present & ~base_present, base_present & ~pr_present
    out = []
    for k, model in enumerate(chosen):
        flaky = flaky_cells if has_trials[k] else None
        down, up = np.flatnonzero(drops[k]), np.flatnonzero(gains[k])
        out.append(
            ModelTaskChanges(
                model_id=model,
                binary=not (base.nonbinary[k] or pr.nonbinary[k]),
                trials=bool(has_trials[k]),
                n_shared=int(shared[k].sum()),
                drops=_moves(down, diff[k, down], k, task_ids, category_names, base, pr, flaky),
                gains=_moves(up, -diff[k, up], k, task_ids, category_names, base, pr, flaky),
                only_run=_pick(task_ids, np.flatnonzero(only_run[k]).tolist()),
                only_baseline=_pick(task_ids, np.flatnonzero(only_base[k]).tolist()),
            )
        )
    return TaskChanges(models=tuple(out))
