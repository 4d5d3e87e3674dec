"""Both sides of a comparison on one axis: each side's score matrix, aligned over the union of the tasks, and
the clusters and weights of the tasks, which are this run's (a pull request may regroup or reweigh them)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ..records import EvalRun
from ..trials import collapse_trials
from .clustering import ClusterBy, Grouping, cluster_of, onehot_of
from .matrix import ScoreMatrix, score_matrix
from .resampling import FloatArray
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
    this_run = [r for r in runs if not r.failed and r.score is not None]
    base_scored = [r for r in baseline_runs if not r.failed and r.score is not None]
    shared_at = np.flatnonzero(shared.any(axis=0)).tolist()
    shared_tasks = [tasks[k] for k in shared_at]
    onehot: Grouping | None = None
    relabelled = 0
    if cluster_by != "none":
        label = cluster_of(this_run, cluster_by)
        names = sorted(set(label.values())) or [""]
        at = {c: k for k, c in enumerate(names)}
        # A task only in the baseline is never shared: it sums into no cluster, whichever it is given.
        onehot = onehot_of(np.array([at[label[t]] if t in label else 0 for t in tasks], dtype=np.int64), len(names))
        attribute = "category" if cluster_by == "category" else "cluster"
        before = {r.task_id: getattr(r, attribute) for r in base_scored}
        relabelled = sum(before.get(t) != label[t] for t in shared_tasks)
    any_weight = any(r.weight != 1.0 for r in this_run)
    tw = task_weights(this_run, tasks) if weights == "apply" and any_weight else None
    reweighted = 0
    if weights == "apply":
        base_weight = {r.task_id: float(r.weight) for r in base_scored}
        weight_of = tw if tw is not None else np.ones(len(tasks))
        reweighted = sum(base_weight.get(tasks[k]) != float(weight_of[k]) for k in shared_at)
    return onehot, tw, relabelled, reweighted
