"""Both sides of a comparison on one axis: each side's score matrix, aligned over the union of the tasks, and
the clusters and weights of the tasks, which are this run's (a pull request may regroup or reweigh them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import repeat

import numpy as np
from numpy.typing import NDArray

from ..records import EvalRun
from ..run_columns import RunColumns
from ..trials import collapse_trials
from .clustering import ClusterBy, Grouping, cluster_of, onehot_of
from .matrix import ScoreMatrix, score_matrix
from .resampling import FloatArray
from .task_columns import first_everywhere, first_of_each, in_order, last_of_each
from .weights import TaskWeights, task_weights


def side_matrix(runs: Sequence[EvalRun]) -> ScoreMatrix | None:
    """One side's score matrix (None: no scored record), as the leaderboard makes it: trials averaged per
    task and failed calls dropped first, so that tasks are the cases."""
    scored = collapse_trials(runs)
    return score_matrix(scored) if scored else None


def aligned(
    side: ScoreMatrix | None, models: Sequence[str], tasks: Sequence[str]
) -> tuple[FloatArray, NDArray[np.bool_], NDArray[np.int64]]:
    """(scores, present, category index) of ``models`` over ``tasks``, NaN / False / -1 where absent."""
    shape = (len(models), len(tasks))
    scores, present = np.full(shape, np.nan), np.zeros(shape, dtype=bool)
    categories = np.full(shape, -1, dtype=np.int64)
    if side is None or not models:
        return scores, present, categories
    m_of = {m: i for i, m in enumerate(side.model_ids)}
    rows = np.array([m_of[m] for m in models], dtype=np.intp)
    known: slice | list[int]
    if tuple(side.task_ids) == tuple(tasks):
        # Both runs have the same tasks (the common case): every column is its own, found without a lookup.
        known, columns = slice(None), np.arange(len(tasks), dtype=np.intp)
    else:
        t_of = {t: i for i, t in enumerate(side.task_ids)}
        known = [k for k, t in enumerate(tasks) if t in t_of]
        columns = np.array([t_of[tasks[k]] for k in known], dtype=np.intp)
    scores[:, known] = side.scores[np.ix_(rows, columns)]
    present[:, known] = side.present[np.ix_(rows, columns)]
    categories[:, known] = side.category_index[np.ix_(rows, columns)]
    return scores, present, categories


def this_runs_design(
    baseline_runs: Sequence[EvalRun],
    runs: Sequence[EvalRun],
    tasks: Sequence[str],
    shared: NDArray[np.bool_],
    cluster_by: ClusterBy,
    weights: TaskWeights,
) -> tuple[Grouping | None, FloatArray | None, int, int]:
    """(each task's cluster, each task's weight when applied, shared tasks relabelled, shared tasks reweighted)."""
    # A task's cluster and weight are this run's, as the leaderboard reads them: a PR may regroup or
    # reweigh tasks (or add clusters the base branch never recorded), and only shared tasks enter the
    # test, so the baseline's labels are not needed; how many shared tasks they differ on is said.
    if cluster_by == "none" and weights != "apply":
        return None, None, 0, 0  # neither read: no record is needed (nor built, when the runs are columns)
    this_run, base_scored = _scored(runs), _scored(baseline_runs)
    shared_at = np.flatnonzero(shared.any(axis=0))
    onehot: Grouping | None = None
    relabelled = 0
    if cluster_by != "none":
        attribute = "category" if cluster_by == "category" else "cluster"
        label = _this_runs_labels(this_run, cluster_by, tasks)
        onehot = _grouping(label)
        # The baseline's label of a task is its last record's (it is not checked: only this run's is used).
        same = _same_labels(label, _last_labels(base_scored, attribute, tasks))
        relabelled = int(np.count_nonzero(~same[shared_at]))
    if isinstance(this_run, RunColumns):
        any_weight = bool(np.any(this_run.weight != 1.0))
    else:
        any_weight = any(r.weight != 1.0 for r in this_run)
    tw = task_weights(this_run, tasks) if weights == "apply" and any_weight else None
    reweighted = 0
    if weights == "apply":
        weight_of = tw if tw is not None else np.ones(len(tasks))
        reweighted = int(np.count_nonzero(_last_weights(base_scored, tasks)[shared_at] != weight_of[shared_at]))
    return onehot, tw, relabelled, reweighted


# Each task's label as codes into names (-1: the task has no record on that side).
Labels = tuple[tuple[str | None, ...], NDArray[np.int64]]


def _scored(runs: Sequence[EvalRun]) -> Sequence[EvalRun]:
    """The records with a score (columns hold scored records only: they stay columns)."""
    return runs if isinstance(runs, RunColumns) else [r for r in runs if not r.failed and r.score is not None]


def _this_runs_labels(runs: Sequence[EvalRun], cluster_by: ClusterBy, tasks: Sequence[str]) -> Labels:
    """Each task's cluster in this run, one per task (else the problems at the records, from cluster_of)."""
    if isinstance(runs, RunColumns) and cluster_by == "category":
        first = first_everywhere(runs.task, len(runs.tasks))
        if np.array_equal(runs.category, runs.category[first]):
            found, at = first_of_each(runs.task)
            return runs.categories, np.asarray(in_order(runs.tasks, found, runs.category[at], tasks, -1), np.int64)
    # Records, or columns a task of which has two categories (cluster_of names every record), or under
    # cluster-by: cluster, which columns never carry (cluster_of names every record as having none).
    return _from_dict(cluster_of(runs, cluster_by), tasks)


def _last_labels(runs: Sequence[EvalRun], attribute: str, tasks: Sequence[str]) -> Labels:
    """Each task's ``attribute`` on its last record."""
    if isinstance(runs, RunColumns):
        found, at = last_of_each(runs.task)
        if attribute == "category":
            return runs.categories, np.asarray(in_order(runs.tasks, found, runs.category[at], tasks, -1), np.int64)
        none = np.zeros(found.size, dtype=np.int64)  # columns carry no cluster: None on every record
        return (None,), np.asarray(in_order(runs.tasks, found, none, tasks, -1), np.int64)
    return _from_dict({r.task_id: getattr(r, attribute) for r in runs}, tasks)


def _from_dict(label: Mapping[str, str | None], tasks: Sequence[str]) -> Labels:
    names = tuple(dict.fromkeys(label.values()))
    at = {n: k for k, n in enumerate(names)}
    return names, np.array([at[label[t]] if t in label else -1 for t in tasks], dtype=np.int64)


def _grouping(label: Labels) -> Grouping:
    """The tasks grouped by this run's clusters, numbered in sorted order; a task only in the baseline is never
    shared: it sums into no cluster, whichever it is given (the first)."""
    names, codes = label
    used = np.unique(codes[codes >= 0]).tolist()
    ordered = sorted(str(names[k]) for k in used) or [""]
    at = {c: k for k, c in enumerate(ordered)}
    lookup = np.zeros(len(names) + 1, dtype=np.int64)  # code -1 reads the last: cluster 0
    lookup[used] = [at[str(names[k])] for k in used]
    return onehot_of(lookup[codes], len(ordered))


def _same_labels(a: Labels, b: Labels) -> NDArray[np.bool_]:
    """Each task has the same label on both sides (-1, no record, is None's equal on neither side)."""
    space = {n: k for k, n in enumerate(dict.fromkeys((*a[0], *b[0])))}
    into_a = np.array([*(space[n] for n in a[0]), -1], dtype=np.int64)[a[1]]
    into_b = np.array([*(space[n] for n in b[0]), -2], dtype=np.int64)[b[1]]
    return np.asarray(into_a == into_b)


def _last_weights(runs: Sequence[EvalRun], tasks: Sequence[str]) -> FloatArray:
    """Each task's weight on its last record (NaN: no record, unequal to any weight)."""
    if isinstance(runs, RunColumns):
        found, at = last_of_each(runs.task)
        return np.asarray(in_order(runs.tasks, found, runs.weight[at], tasks, np.nan), dtype=np.float64)
    weight = {r.task_id: float(r.weight) for r in runs}
    return np.array(list(map(weight.get, tasks, repeat(np.nan))), dtype=np.float64)
