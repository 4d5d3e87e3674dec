"""The one path from loaded records to everything the documents say, shared by the library, the CLI and the action.

:func:`run` takes the caller's options and the loaded inputs (the runs, the configuration, the
baseline's runs) and returns one frozen :class:`Outcome`: the leaderboard, its composite ranking,
the required tasks' check, the comparison with the baseline and the tasks behind it, with the
statistics' parameters in force. The CLI and the action only read their inputs, call it, render
and publish, so they cannot disagree on the same files and options.

An option left None is not given: the configuration's ``statistics`` block decides, else the
default of :mod:`leaderboard.options`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .composite import CompositeBoard, rank
from .config import Config
from .options import (
    DEFAULT_ALPHA,
    DEFAULT_CLUSTER_BY,
    DEFAULT_RANK_BY,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    DEFAULT_TASK_WEIGHTS,
)
from .records import EvalRun
from .required import DEFAULT_REQUIRED_SCORE, RequiredCheck, check_required
from .run_columns import RunColumns
from .stats.aggregation import Leaderboard, RankBy, analyse, min_resamples
from .stats.bootstrap import BootstrapEngine, shared_weights
from .stats.clustering import ClusterBy
from .stats.comparison import Comparison, compare, poisson_riders
from .stats.family import DEFAULT_CORRECTION, Correction
from .stats.history import Earlier, History, run_scores, summarise
from .stats.task_changes import TaskChanges, task_changes
from .stats.weights import TaskWeights
from .trials import DEFAULT_FAILED_CALLS, FailedCalls, Failures, failures
from .validation import InvalidEvalRuns, Problem

__all__ = [
    "BaselineProblems",
    "Options",
    "Outcome",
    "Parameters",
    "evaluate",
    "parameters",
    "run",
]


@dataclass(frozen=True)
class Parameters:
    """The statistics' parameters in force: the caller's, else the configuration's, else the defaults."""

    b: int
    alpha: float
    seed: int
    pairs: bool
    correction: Correction = DEFAULT_CORRECTION
    cluster_by: ClusterBy = DEFAULT_CLUSTER_BY
    task_weights: TaskWeights = DEFAULT_TASK_WEIGHTS
    failed_calls: FailedCalls = DEFAULT_FAILED_CALLS


@dataclass(frozen=True)
class Options:
    """What the caller asked for; None: not given (the configuration decides, else the default)."""

    b: int | None = None
    alpha: float | None = None
    seed: int | None = None
    correction: Correction | None = None
    cluster_by: ClusterBy | None = None
    task_weights: TaskWeights | None = None
    failed_calls: FailedCalls | None = None
    rank_by: RankBy = DEFAULT_RANK_BY
    regression_tolerance: float = 0.0
    fail_on_regression: bool = False
    required_tasks: tuple[str, ...] = ()  # task-id globs; empty: no check
    required_score: float = DEFAULT_REQUIRED_SCORE
    min_effect: float | None = None  # a difference worth detecting: the tasks that detect it are sized


@dataclass(frozen=True)
class Outcome:
    """Everything the documents, the outputs and the gates are made from."""

    parameters: Parameters
    board: Leaderboard
    composite: CompositeBoard | None  # with a configuration
    required: RequiredCheck | None  # with required tasks
    comparison: Comparison | None  # with a baseline
    changes: TaskChanges | None  # the tasks behind each model's change (with a baseline)
    failures: Failures  # calls left out as failed, counted in every document
    earlier: Earlier | None = None  # the earlier runs asked for (None: history not asked for)
    history: History | None = None  # their summary with this run (None: not asked for, or none read)
    fail_on_regression: bool = False  # the regression gate is on: the documents say whether the check passes
    unit_scores: bool = False  # every score is in [0, 1]: the documents may show percentages

    @property
    def top_model(self) -> str:
        """The top-ranked model: after disqualification when there is a configuration."""
        if self.composite is not None:
            return self.composite.top_model
        return self.board.rows[0].model_id if self.board.rows else ""


class BaselineProblems(InvalidEvalRuns):
    """The comparison found the baseline's runs invalid (the runs themselves were valid)."""


def parameters(
    config: Config | None,
    *,
    b: int | None,
    alpha: float | None,
    seed: int | None,
    correction: Correction | None = None,
    cluster_by: ClusterBy | None = None,
    task_weights: TaskWeights | None = None,
    failed_calls: FailedCalls | None = None,
) -> Parameters:
    """Resolve the parameters; a resample count too small for the level is a problem at its key."""
    stats = config.statistics if config is not None else None
    from_config_alpha = stats is not None and stats.confidence is not None and alpha is None
    if alpha is None:
        # Rounded: 1 - 0.95 is 0.050000000000000044 in binary, and the level is printed.
        alpha = (
            round(1.0 - stats.confidence, 12) if stats is not None and stats.confidence is not None else DEFAULT_ALPHA
        )
    from_config_b = b is None and stats is not None and stats.resamples is not None
    if b is None:
        b = stats.resamples if stats is not None and stats.resamples is not None else DEFAULT_RESAMPLES
    if seed is None:
        seed = stats.seed if stats is not None and stats.seed is not None else DEFAULT_SEED
    enabled = stats.enabled if stats is not None and stats.enabled is not None else True
    if b < min_resamples(alpha):
        message = (
            f"{b} resamples are too few at confidence {1 - alpha:g}: at least {min_resamples(alpha)} "
            "(20 / alpha: 10 resamples beyond each end of the interval)"
        )
        if config is not None and (from_config_b or from_config_alpha):
            key = "statistics.resamples" if from_config_b else "statistics.confidence"
            raise InvalidEvalRuns([config.problem(key, message)])
        raise InvalidEvalRuns([Problem(message=message, field="resamples")])
    return Parameters(
        b=b,
        alpha=alpha,
        seed=seed,
        pairs=enabled,
        correction=correction or (stats.correction if stats else None) or DEFAULT_CORRECTION,
        cluster_by=cluster_by or (stats.cluster_by if stats else None) or DEFAULT_CLUSTER_BY,
        task_weights=task_weights or (stats.task_weights if stats else None) or DEFAULT_TASK_WEIGHTS,
        failed_calls=failed_calls or (stats.failed_calls if stats else None) or DEFAULT_FAILED_CALLS,
    )


def evaluate(
    runs: Sequence[EvalRun],
    config: Config | None = None,
    *,
    b: int | None = None,
    alpha: float | None = None,
    seed: int | None = None,
    rank_by: RankBy = "mean",
    correction: Correction | None = None,
    cluster_by: ClusterBy | None = None,
    task_weights: TaskWeights | None = None,
    failed_calls: FailedCalls | None = None,
) -> tuple[Leaderboard, CompositeBoard | None]:
    """The leaderboard of ``runs`` and, with a configuration, its composite ranking.

    ``correction``, ``cluster_by``, ``task_weights`` (and ``b``, ``alpha``, ``seed``) None: the
    configuration's ``statistics`` block decides, else the default.
    """
    options = Options(
        b=b, alpha=alpha, seed=seed, rank_by=rank_by, correction=correction, cluster_by=cluster_by,
        task_weights=task_weights, failed_calls=failed_calls,
    )  # fmt: skip
    p = _resolved(options, config)
    board = _board(runs, p, options.rank_by)
    return board, (rank(runs, board, config) if config is not None else None)


def run(
    options: Options,
    runs: Sequence[EvalRun],
    *,
    config: Config | None = None,
    baseline: Sequence[EvalRun] | None = None,
    history: Earlier | None = None,
) -> Outcome:
    """The leaderboard of ``runs`` and all that goes with it, in the one order both entry points share.

    The required tasks are checked before the comparison, so a glob matching no task
    (:class:`~leaderboard.required.UnmatchedPatterns`) stops the run before it is computed.
    The comparison uses the leaderboard's parameters (which the configuration may have set).
    ``history``: the earlier runs a reader loaded, summarised with this run at the leaderboard's level.
    Raises :class:`InvalidEvalRuns` (:class:`BaselineProblems` for the baseline's runs).
    """
    p = _resolved(options, config)
    riders = _riders(baseline, runs, p) if baseline is not None else ()
    # The comparison's large task sets draw the leaderboard's very Poisson weights: drawn once, in its pass.
    with shared_weights(riders):
        board = _board(runs, p, options.rank_by, options.min_effect)
    composite = rank(runs, board, config) if config is not None else None
    required = check_required(runs, options.required_tasks, options.required_score) if options.required_tasks else None
    comparison = changes = None
    if baseline is not None:
        try:
            comparison = compare(
                baseline, runs, b=p.b, alpha=p.alpha, seed=p.seed, tolerance=options.regression_tolerance,
                correction=p.correction, fail_on_regression=options.fail_on_regression, cluster_by=p.cluster_by,
                weights=p.task_weights, min_effect=options.min_effect, riders=riders,
            )  # fmt: skip
        except InvalidEvalRuns as exc:
            raise BaselineProblems(exc.problems) from exc
        changes = task_changes(baseline, runs, models=[m.model_id for m in comparison.models])
    summary = None
    if history is not None and history.runs:
        summary = summarise(history.runs, run_scores("this run", None, runs), alpha=p.alpha)
    return Outcome(
        p,
        board,
        composite,
        required,
        comparison,
        changes,
        failures(runs, p.failed_calls),
        history,
        summary,
        fail_on_regression=options.fail_on_regression,
        unit_scores=_unit_scores(runs),
    )


def _unit_scores(runs: Sequence[EvalRun]) -> bool:
    """Every score is in [0, 1]; columns are asked as columns, never turned into records."""
    if isinstance(runs, RunColumns):
        return bool(((runs.score >= 0.0) & (runs.score <= 1.0)).all())
    return all(0.0 <= r.score <= 1.0 for r in runs if r.score is not None)


def _riders(baseline: Sequence[EvalRun], runs: Sequence[EvalRun], p: Parameters) -> tuple[BootstrapEngine, ...]:
    """The comparison's engines built ahead; none when its sides are invalid: the comparison says why, after the
    leaderboard has checked this run's records."""
    try:
        return poisson_riders(baseline, runs, b=p.b, seed=p.seed, cluster_by=p.cluster_by, weights=p.task_weights)
    except InvalidEvalRuns:
        return ()


def _resolved(options: Options, config: Config | None) -> Parameters:
    return parameters(
        config, b=options.b, alpha=options.alpha, seed=options.seed, correction=options.correction,
        cluster_by=options.cluster_by, task_weights=options.task_weights, failed_calls=options.failed_calls,
    )  # fmt: skip


def _board(runs: Sequence[EvalRun], p: Parameters, rank_by: RankBy, min_effect: float | None = None) -> Leaderboard:
    return analyse(
        runs, b=p.b, alpha=p.alpha, seed=p.seed, rank_by=rank_by, pairs=p.pairs, correction=p.correction,
        cluster_by=p.cluster_by, weights=p.task_weights, failed_calls=p.failed_calls, min_effect=min_effect,
    )  # fmt: skip
