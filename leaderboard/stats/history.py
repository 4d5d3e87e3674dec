"""How each model has moved over earlier runs on the base branch, and which tasks flip with nothing changed.

The input is the earlier runs (oldest first, each its commit, date and records) and this run. Scores are
those of the leaderboard: trials averaged per task, failed calls left out (:mod:`leaderboard.trials`).

* **Series.** Each model's mean over its own tasks in every run (the earlier runs, then this run), with an
  interval at ``alpha``: Wilson's score interval (continuity-corrected, as the leaderboard gives a model whose
  scores are all 0/1, unclustered) or, for other scores, the t interval ``mean ± t(n−1) · sd / √n``. Not the
  leaderboard's percentile bootstrap: a bootstrap per run and model costs ~0.1 s a run at 50 × 2,000, the t
  interval microseconds, and at the task counts a suite has the two agree to the third decimal. Neither
  clustering nor task weights are applied to the history's intervals.
* **Unchanged id.** A model's id is taken to stand for unchanged weights and prompt only over its *stable
  stretch*: the newest unbroken run of earlier runs that all have the id, ending at the newest earlier run.
  A model renamed (or missing) in some run starts its stretch again after that run; an id absent from the
  newest earlier run has no stretch. Noise, the range check and flakiness read the stable stretch alone.
* **Run-to-run noise** ("±x pts run to run"): the root mean square of the model's consecutive changes over
  its stable stretch, each change the mean over the tasks both runs scored of (later − earlier): the
  comparison's own Δ (:mod:`leaderboard.stats.comparison`), so the two sit side by side on one scale. Under
  pure noise of SD σ per run it is about √2·σ, the spread of a change between two runs with nothing changed;
  a slow drift adds little to it. Needs ``MIN_NOISE_RUNS`` runs (two changes). The SD and range of the
  means over the stretch come with it.
* **Outside the range.** This run's mean is above the highest (below the lowest) mean of the stable stretch,
  beyond the tie tolerance. With exchangeable runs a new run lands outside the range of k earlier runs with
  chance 2 / (k + 1) (``Outside.chance``): outside is unusual, not proof.
* **Flaky tasks.** For each model with a stable stretch of two runs or more, a task *flips* between two
  consecutive runs of the stretch that both scored it when the score changed beyond the project's tie rule
  (:func:`~leaderboard.stats.aggregation.tie_tolerance`). For 0/1 scores that is pass ↔ fail; for other
  scores any change at all: the same model on the same task should score the same, and a judge or sampling
  that does not is what flakiness is. ``FlakyTask.mean_change`` says how large the changes were. A task's
  flip rate is its flips over its transitions, summed over the models (a model's transitions on a task are
  the consecutive pairs of its stretch that both scored it): with one model, changes / (runs − 1).

Vectorised over (models × tasks); the only Python loops are over runs. Memory: two runs' matrices and two
(models × tasks) counters at a time, whatever the number of runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from ..records import EvalRun
from ..trials import collapse_trials
from .clustering import t_quantile, wilson
from .matrix import ScoreMatrix, score_matrix
from .resampling import FloatArray
from .ties import tie_tolerance

# Runs of a stable stretch needed for the noise and the range check: two changes, a range of three means.
MIN_NOISE_RUNS = 3
# Runs of a stable stretch needed for flakiness: one transition.
MIN_FLAKY_RUNS = 2
# The most earlier runs a summary reads (the action's input and the CLI's files are held to it).
MAX_HISTORY_RUNS = 100

CiMethod = Literal["Wilson", "t"]

# Why a run was not read: a code set by the reader where it skips the run (the words are report/history.py's).
SkipReason = Literal["expired", "missing", "invalid", "over-budget", "over-limit", "timed-out"]
EXPIRED: SkipReason = "expired"
MISSING: SkipReason = "missing"
INVALID: SkipReason = "invalid"
OVER_BUDGET: SkipReason = "over-budget"
OVER_LIMIT: SkipReason = "over-limit"
TIMED_OUT: SkipReason = "timed-out"
SKIP_REASONS: tuple[SkipReason, ...] = (EXPIRED, MISSING, INVALID, OVER_BUDGET, OVER_LIMIT, TIMED_OUT)

# Why there is no history at all (None: there is some).
NoHistory = Literal["off", "first-run", "no-permission", "lookup-failed", "all-expired", "none-read"]


@dataclass(frozen=True)
class RunScores:
    """One run reduced to what the history reads: its commit (a SHA, or the name it was given), its date
    (ISO 8601, None when unknown), how many records it had, and its score matrix (None: no scored record).

    A reader makes one per run as it loads it (:func:`run_scores`), so ten runs' records are never held
    at once: a matrix is 8 bytes a cell, a record a few hundred.
    """

    commit: str
    date: str | None
    records: int
    matrix: ScoreMatrix | None


def run_scores(commit: str, date: str | None, records: Sequence[EvalRun]) -> RunScores:
    """The run's scores as the leaderboard has them: trials averaged, failed calls left out.

    Raises :class:`~leaderboard.validation.InvalidEvalRuns` for invalid records (a reader loads them first).
    """
    scored = collapse_trials(records)
    return RunScores(commit, date, len(records), score_matrix(scored) if scored else None)


@dataclass(frozen=True)
class Coverage:
    """How much of the history asked for was read, and why the rest was not.

    ``wanted``: runs asked for; ``found``: earlier runs that exist (at most ``wanted``); ``read``: runs read;
    ``skipped``: (reason, count) for each reason in ``SKIP_REASONS`` order, counts above 0; ``denied``: the
    token may not list runs or artifacts; ``failed``: why listing the earlier runs failed otherwise (a rate
    limit, an outage), None when it did not.
    """

    wanted: int
    found: int
    read: int
    skipped: tuple[tuple[SkipReason, int], ...] = ()
    denied: bool = False
    failed: str | None = None

    @property
    def partial(self) -> bool:
        return 0 < self.read < self.found

    @property
    def missing_reason(self) -> NoHistory | None:
        """Why there is no history, or None when at least one run was read."""
        if self.wanted == 0:
            return "off"
        if self.read > 0:
            return None
        if self.denied:
            return "no-permission"
        if self.failed is not None:
            return "lookup-failed"
        if self.found == 0:
            return "first-run"
        if dict(self.skipped).get(EXPIRED, 0) == self.found:
            return "all-expired"
        return "none-read"


def coverage_of(
    wanted: int,
    found: int,
    read: int,
    skipped: Mapping[SkipReason, int],
    *,
    denied: bool = False,
    failed: str | None = None,
) -> Coverage:
    """A :class:`Coverage` with the skipped counts in their fixed order (no zero count kept)."""
    unknown = set(skipped) - set(SKIP_REASONS)
    if unknown:
        raise ValueError(f"unknown skip reasons: {', '.join(sorted(unknown))}")
    ordered = tuple((r, skipped[r]) for r in SKIP_REASONS if skipped.get(r, 0) > 0)
    return Coverage(wanted, found, read, ordered, denied, failed)


@dataclass(frozen=True)
class Earlier:
    """The earlier runs a reader loaded (oldest first), how much of what was asked for that is, and where
    they ran: the base branch's name, or None for runs given as files (the CLI's ``--history``)."""

    runs: tuple[RunScores, ...]
    coverage: Coverage
    branch: str | None = None


@dataclass(frozen=True)
class Point:
    """A model's mean in one run with its interval (``ci_method`` says which); NaN interval with one task."""

    mean: float
    ci_lo: float
    ci_hi: float
    tasks: int
    ci_method: CiMethod


@dataclass(frozen=True)
class Noise:
    """What the model's mean does from run to run with its id unchanged (over ``runs`` earlier runs).

    ``rms_change`` is the "±" (root mean square of the consecutive paired changes); ``largest_change``
    the largest of them in absolute value; ``sd`` the SD of the means (n − 1); ``low``/``high`` their range.
    """

    runs: int
    rms_change: float
    largest_change: float
    sd: float
    low: float
    high: float


@dataclass(frozen=True)
class Outside:
    """This run's mean is ``direction`` the range ``low``–``high`` of ``runs`` earlier runs' means."""

    direction: Literal["above", "below"]
    mean: float
    low: float
    high: float
    runs: int

    @property
    def chance(self) -> float:
        """How often a run lands outside the range of ``runs`` exchangeable earlier runs: 2 / (runs + 1)."""
        return 2.0 / (self.runs + 1)


@dataclass(frozen=True)
class Series:
    """A model across the runs: ``points[k]`` is earlier run k (oldest first), the last this run; None: absent.

    ``stable_runs``: the length of its stable stretch (the module docstring), 0 when the newest earlier
    run does not have the id.
    """

    model_id: str
    points: tuple[Point | None, ...]
    stable_runs: int
    noise: Noise | None
    outside: Outside | None

    @property
    def means(self) -> tuple[float, ...]:
        """The means, NaN where the model is absent."""
        return tuple(math.nan if p is None else p.mean for p in self.points)

    @property
    def current(self) -> Point | None:
        return self.points[-1]


@dataclass(frozen=True)
class FlakyTask:
    """A task that changed score between consecutive runs with the model's id unchanged.

    ``rate`` = ``flips`` / ``transitions`` over the ``models`` counted; ``flipped_on`` names those on which it
    flipped at least once; ``mean_change`` is the mean absolute change of its flips (1.0 for pass ↔ fail).
    """

    task_id: str
    flips: int
    transitions: int
    rate: float
    mean_change: float
    flipped_on: tuple[str, ...]


@dataclass(frozen=True)
class History:
    """The summary: the earlier runs read (oldest first), each model's series, the flaky tasks.

    ``series`` is sorted by model id; ``flaky`` by rate (highest first), then flips, then task id;
    ``observed_tasks`` counts the tasks with at least one transition (the flaky tasks are among them).
    """

    runs: tuple[RunScores, ...]
    series: tuple[Series, ...]
    flaky: tuple[FlakyTask, ...]
    observed_tasks: int
    alpha: float

    def series_of(self, model_id: str) -> Series | None:
        for s in self.series:
            if s.model_id == model_id:
                return s
        return None

    @property
    def flaky_rates(self) -> dict[str, float]:
        """Task id → flip rate, for the flaky tasks: what "which tasks moved" marks."""
        return {f.task_id: f.rate for f in self.flaky}


@dataclass(frozen=True)
class _Run:
    """One run's matrix and its per-model means and intervals."""

    matrix: ScoreMatrix
    means: FloatArray
    lo: FloatArray
    hi: FloatArray
    tasks: NDArray[np.int64]
    binary: NDArray[np.bool_]


def _prepared(scores: RunScores, alpha: float) -> _Run | None:
    matrix = scores.matrix
    if matrix is None:
        return None
    present = matrix.present
    n = present.sum(axis=1)
    filled = np.where(present, matrix.scores, 0.0)
    means = filled.sum(axis=1) / np.maximum(n, 1)
    binary = np.asarray(((filled == 0.0) | (filled == 1.0)).all(axis=1))
    lo = np.full(means.shape, np.nan)
    hi = np.full(means.shape, np.nan)
    if binary.any():
        z = np.full(int(binary.sum()), NormalDist().inv_cdf(1.0 - alpha / 2.0))
        lo[binary], hi[binary] = wilson(means[binary], n[binary].astype(np.float64), z)
    other = ~binary & (n >= 2)
    if other.any():
        resid = np.where(present[other], matrix.scores[other] - means[other, None], 0.0)
        df = (n[other] - 1).astype(np.float64)
        se = np.sqrt((resid * resid).sum(axis=1) / df / n[other])
        half = t_quantile(1.0 - alpha / 2.0, df) * se
        lo[other] = np.maximum(means[other] - half, 0.0)
        hi[other] = np.minimum(means[other] + half, 1.0)
    return _Run(matrix, means, lo, hi, n.astype(np.int64), binary)


def _positions(ids: tuple[str, ...], universe: NDArray[np.object_]) -> NDArray[np.intp]:
    """Where each id (sorted, all in ``universe``) stands in the sorted ``universe``."""
    return np.searchsorted(universe, np.array(ids, dtype=object)).astype(np.intp)


def _shared(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.object_]]:
    """Indices into ``a`` and ``b`` (both sorted, distinct) of the ids they share, and those ids."""
    common, ia, ib = np.intersect1d(
        np.array(a, dtype=object), np.array(b, dtype=object), assume_unique=True, return_indices=True
    )
    return ia.astype(np.intp), ib.astype(np.intp), common


def _stretches(runs: Sequence[_Run | None], models: NDArray[np.object_]) -> NDArray[np.int64]:
    """Per model of ``models``: how many of the newest runs in a row have its id (its stable stretch)."""
    stretch = np.zeros(models.size, dtype=np.int64)
    alive = np.ones(models.size, dtype=bool)
    for run in reversed(runs):
        has = np.zeros(models.size, dtype=bool)
        if run is not None:
            has[_positions(run.matrix.model_ids, models)] = True
        alive &= has
        stretch += alive
    return stretch


def summarise(history: Sequence[RunScores], current: RunScores, *, alpha: float = 0.05) -> History:
    """The history summary of ``history`` (earlier runs, oldest first) followed by this run, ``current``."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if len(history) > MAX_HISTORY_RUNS:
        raise ValueError(f"at most {MAX_HISTORY_RUNS} earlier runs are summarised, got {len(history)}")
    runs = [_prepared(h, alpha) for h in history]
    now = _prepared(current, alpha)
    every = [r for r in (*runs, now) if r is not None]
    models = np.unique(np.array([m for r in every for m in r.matrix.model_ids], dtype=object))
    tasks = np.unique(np.array([t for r in runs if r is not None for t in r.matrix.task_ids], dtype=object))
    n_runs = len(runs)
    stretch = _stretches(runs, models)
    first_stable = n_runs - stretch  # index of the first run of each model's stretch

    means = np.full((n_runs + 1, models.size), np.nan)
    # Consecutive paired changes: changes[k] is run k → k + 1 (NaN outside a model's stretch).
    changes = np.full((max(n_runs - 1, 0), models.size), np.nan)
    flips = np.zeros((models.size, tasks.size), dtype=np.int32)
    transitions = np.zeros((models.size, tasks.size), dtype=np.int32)
    moved = np.zeros(tasks.size)  # summed absolute change of the flips, per task
    for k, run in enumerate((*runs, now)):
        if run is not None:
            means[k, _positions(run.matrix.model_ids, models)] = run.means
    for k in range(n_runs - 1):
        a, b = runs[k], runs[k + 1]
        if a is None or b is None:
            continue
        ma, mb, shared_models = _shared(a.matrix.model_ids, b.matrix.model_ids)
        gm = _positions(tuple(shared_models), models)
        keep = first_stable[gm] <= k
        ma, mb, gm = ma[keep], mb[keep], gm[keep]
        if gm.size == 0:
            continue
        ta, tb, shared_tasks = _shared(a.matrix.task_ids, b.matrix.task_ids)
        gt = _positions(tuple(shared_tasks), tasks)
        before = a.matrix.scores[np.ix_(ma, ta)]
        after = b.matrix.scores[np.ix_(mb, tb)]
        both = a.matrix.present[np.ix_(ma, ta)] & b.matrix.present[np.ix_(mb, tb)]
        with np.errstate(invalid="ignore"):
            diff = np.where(both, after - before, 0.0)
            changed = both & (np.abs(diff) > tie_tolerance(before, after))
        counted = both.sum(axis=1)
        changes[k, gm] = np.where(counted > 0, diff.sum(axis=1) / np.maximum(counted, 1), np.nan)
        flips[np.ix_(gm, gt)] += changed
        transitions[np.ix_(gm, gt)] += both
        moved[gt] += np.where(changed, np.abs(diff), 0.0).sum(axis=0)

    # rows[k, m]: model m's row in run k's matrix, -1 where absent.
    rows = np.full((n_runs + 1, models.size), -1, dtype=np.intp)
    for k, run in enumerate((*runs, now)):
        if run is not None:
            rows[k, _positions(run.matrix.model_ids, models)] = np.arange(len(run.matrix.model_ids))
    series = tuple(
        _series(str(models[m]), m, (*runs, now), rows[:, m], means, changes, int(stretch[m]))
        for m in range(models.size)
    )
    flip_total = flips.sum(axis=0)
    transition_total = transitions.sum(axis=0)
    flaky = []
    for t in np.flatnonzero(flip_total > 0):
        on = tuple(str(models[m]) for m in np.flatnonzero(flips[:, t]))
        rate = float(flip_total[t] / transition_total[t])
        flaky.append(FlakyTask(str(tasks[t]), int(flip_total[t]), int(transition_total[t]), rate,
                               float(moved[t] / flip_total[t]), on))  # fmt: skip
    flaky.sort(key=lambda f: (-f.rate, -f.flips, f.task_id))
    return History(tuple(history), series, tuple(flaky), int(np.count_nonzero(transition_total)), alpha)


def _point(run: _Run | None, i: int) -> Point | None:
    if run is None or i < 0:
        return None
    method: CiMethod = "Wilson" if run.binary[i] else "t"
    return Point(float(run.means[i]), float(run.lo[i]), float(run.hi[i]), int(run.tasks[i]), method)


def _series(
    model_id: str,
    m: int,
    runs: Sequence[_Run | None],
    rows: NDArray[np.intp],
    means: FloatArray,
    changes: FloatArray,
    stretch: int,
) -> Series:
    """``runs``: the earlier runs then this run; ``rows``: the model's row in each (-1: absent)."""
    points = tuple(_point(run, int(i)) for run, i in zip(runs, rows, strict=True))
    n_runs = len(runs) - 1
    noise = outside = None
    if stretch >= MIN_NOISE_RUNS:
        window = means[n_runs - stretch : n_runs, m]
        steps = changes[n_runs - stretch : n_runs - 1, m]
        steps = steps[~np.isnan(steps)]
        low, high = float(window.min()), float(window.max())
        if steps.size:
            noise = Noise(stretch, float(np.sqrt(np.mean(steps * steps))), float(np.abs(steps).max()),
                          float(window.std(ddof=1)), low, high)  # fmt: skip
        mean = means[n_runs, m]
        if not math.isnan(mean):
            if mean - high > float(tie_tolerance(np.array(mean), np.array(high))):
                outside = Outside("above", float(mean), low, high, stretch)
            elif low - mean > float(tie_tolerance(np.array(mean), np.array(low))):
                outside = Outside("below", float(mean), low, high, stretch)
    return Series(model_id, points, stretch, noise, outside)
