"""From calls to scores: several trials of a task become one score, failed calls none.

The leaderboard's statistics resample tasks (cases), the unit of generalisation: a
task run three times is still one task. So the trials of a (model, task) are averaged
*before* the matrix is built, and every interval, pair and test sees one value per
(model, task). Resampling trials instead would answer "does the ranking hold if the same
questions are asked again?" and report it as "does it hold on other tasks like these?",
shrinking every interval by a factor the data does not support.

A failed call (``error`` set) says nothing about how well the model answers: it counts
toward the error rate (see :mod:`leaderboard.composite`) and is left out of accuracy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Literal

from .records import EvalRun
from .run_columns import RunColumns
from .validation import validate_runs

# How the leaderboard scores a failed call: 0 (a wrong answer: a model that fails the hard tasks is not
# ahead for it), or left out (the comparison is then on the calls that completed).
FailedCalls = Literal["zero", "exclude"]
FAILED_CALLS: tuple[FailedCalls, ...] = ("zero", "exclude")
DEFAULT_FAILED_CALLS: FailedCalls = "zero"


def _plain(runs: Sequence[EvalRun]) -> bool:
    """Every record has no trial and no failure: one call, one score, the common case that needs no work.

    Checked column by column (``map`` and ``set`` run in C): this is on every analysis' path.
    """
    if set(map(type, runs)) != {EvalRun}:
        return False  # validate_runs names what is wrong
    errors = list(map(attrgetter("error"), runs))
    # Every one the bool False: an error of 0 equals False but is invalid, not "no error".
    return set(map(attrgetter("trial"), runs)) <= {None} and set(map(type, errors)) <= {bool} and not any(errors)


def collapse_trials(runs: Sequence[EvalRun], failed: FailedCalls = "exclude") -> Sequence[EvalRun]:
    """One record per (model, task): the mean score of its trials.

    ``failed="exclude"``: failed calls are dropped; a (model, task) whose every trial failed has no
    score (as if not run). ``"zero"``: a failed call is a trial scored 0. Input without trials or
    failures is returned as it is, the same object.
    Raises :class:`~leaderboard.validation.InvalidEvalRuns` for invalid records, including
    the same (model, task, trial) twice.
    """
    if isinstance(runs, RunColumns) or _plain(runs):
        return runs  # columns hold plain records only
    validate_runs(runs)
    groups: dict[tuple[str, str], list[EvalRun]] = {}
    for run in runs:
        if run.failed and failed == "zero":
            run = replace(run, score=0.0, error=False)
        if not run.failed and run.score is not None:
            groups.setdefault((run.model_id, run.task_id), []).append(run)
    out = []
    for members in groups.values():
        first = members[0]
        if len(members) == 1 and first.trial is None:
            out.append(first)
            continue
        # fsum: the mean does not depend on the order the trials were read in.
        mean = math.fsum(r.score for r in members if r.score is not None) / len(members)
        out.append(replace(first, score=mean, trial=None))
    return out


@dataclass(frozen=True)
class Failures:
    """The calls left out of the scores as failed: counted, so that none vanishes without a word.

    ``by_model``: (model, failed calls), most first; ``unranked``: models with no completed
    call at all, which the leaderboard therefore cannot rank (none when failures are scored 0);
    ``scored``: how the leaderboard scored them.
    """

    calls: int = 0
    by_model: tuple[tuple[str, int], ...] = ()
    unranked: tuple[str, ...] = ()
    scored: FailedCalls = "exclude"


def failures(runs: Sequence[EvalRun], scored: FailedCalls = "exclude") -> Failures:
    """Count the failed calls of ``runs`` (checked column by column first: the common case has none)."""
    if isinstance(runs, RunColumns):
        return Failures(scored=scored)  # plain records: no call failed
    errors = list(map(attrgetter("error"), runs))
    if set(map(type, errors)) <= {bool} and not any(errors):
        return Failures(scored=scored)
    failed: dict[str, int] = {}
    completed: set[str] = set()
    for run in runs:
        if run.failed:
            failed[run.model_id] = failed.get(run.model_id, 0) + 1
        else:
            completed.add(run.model_id)
    by_model = tuple(sorted(failed.items(), key=lambda item: (-item[1], item[0])))
    unranked = tuple(sorted(set(failed) - completed)) if scored == "exclude" else ()
    return Failures(sum(failed.values()), by_model, unranked, scored)
