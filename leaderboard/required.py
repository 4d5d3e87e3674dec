"""Required tasks: every model must score at least a threshold on each task matching a glob.

``required-tasks`` (CLI ``--required-tasks``) is a newline- or comma-separated list of task-id
globs (:func:`fnmatch.fnmatchcase`: ``*``, ``?``, ``[seq]``; case-sensitive; ``[[]`` matches a
literal ``[``). A task is *required* when its id, in this run, matches one of them. Every model in
the run must then score at least ``required-score`` (default 1) on each required task:

* the score is the leaderboard's: the mean of the task's completed trials, failed calls left out;
  a score within the tie rule of the threshold (``math.isclose``) meets it;
* a required task the model has no score on (not run, or every call failed) is a failure too;
* a pattern that matches no task of the run is an error naming it once (a typo must not pass silently);
* patterns are read in NFC, as ids are kept: one copied from NFD text ("café" decomposed) matches.

This does not depend on a baseline.
"""

from __future__ import annotations

import bisect
import fnmatch
import math
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter

import numpy as np

from .formats.evalrun_records import canonical
from .records import EvalRun
from .stats.aggregation import tie_tolerance

DEFAULT_REQUIRED_SCORE = 1.0


class UnmatchedPatterns(ValueError):
    """Some required-task patterns match no task of the run."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = tuple(patterns)
        named = ", ".join(repr(p) for p in self.patterns)
        super().__init__(f"required-tasks pattern{'s' if len(self.patterns) != 1 else ''} {named} match no task")


@dataclass(frozen=True, order=True)
class RequiredFailure:
    """A model below the threshold on a required task; ``score`` None: no score.

    ``ran`` tells the two kinds of no score apart: False, the model has no record of the task (not
    run); True, every call of it failed.
    """

    model_id: str
    task_id: str
    score: float | None
    ran: bool = True

    @property
    def why(self) -> str:
        """The score in words: ``score 0.5``, ``not run``, ``no score: every call failed``."""
        if self.score is not None:
            return f"score {self.score:.6g}"
        return "no score: every call failed" if self.ran else "not run"


@dataclass(frozen=True)
class RequiredCheck:
    patterns: tuple[str, ...]
    threshold: float
    tasks: tuple[str, ...]  # the required tasks, sorted
    models: tuple[str, ...]  # every model of the run, sorted
    failures: tuple[RequiredFailure, ...]  # by model, then task

    @property
    def passed(self) -> bool:
        return not self.failures

    @property
    def failed_models(self) -> tuple[str, ...]:
        return tuple(sorted({f.model_id for f in self.failures}))


def split_patterns(text: str) -> tuple[str, ...]:
    """Newline- or comma-separated globs, blanks around each removed, empty ones dropped."""
    return tuple(p.strip() for p in re.split(r"[\n,]", text) if p.strip())


GLOB = re.compile(r"[*?[]")  # fnmatch's only special characters; "]" is special only after "["
LAST_GLOB = re.compile(r".*[*?[\]]", re.DOTALL)  # up to the last one (a class ends at a "]")


@dataclass(frozen=True)
class TaskIndex:
    """Task ids sorted as written and reversed, to find the ids with a literal prefix or suffix by bisection."""

    ids: tuple[str, ...]  # sorted
    present: frozenset[str]
    reversed_ids: tuple[str, ...]  # each id reversed, sorted

    @classmethod
    def of(cls, task_ids: Iterable[str]) -> TaskIndex:
        unique = set(task_ids)
        return cls(tuple(sorted(unique)), frozenset(unique), tuple(sorted(t[::-1] for t in unique)))

    def candidates(self, pattern: str) -> Sequence[str]:
        """The ids that can match a glob: those with its literal head, or with its literal tail (the fewer)."""
        head = pattern[: m.start()] if (m := GLOB.search(pattern)) else pattern
        tail = pattern[m.end() :] if (m := LAST_GLOB.match(pattern)) else pattern
        lo, hi = _starting(self.ids, head)
        if not tail or hi - lo <= (span := _starting(self.reversed_ids, tail[::-1]))[1] - span[0]:
            return self.ids[lo:hi]
        return [t[::-1] for t in self.reversed_ids[span[0] : span[1]]]


def _starting(ordered: Sequence[str], head: str) -> tuple[int, int]:
    """The slice of sorted strings that start with ``head`` (cutting sorted strings keeps their order)."""
    if not head:
        return 0, len(ordered)
    k = len(head)
    lo = bisect.bisect_left(ordered, head)
    return lo, bisect.bisect_right(ordered, head, lo, key=lambda t: t[:k])


def matching(task_ids: Iterable[str], patterns: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the task ids matching any pattern, sorted; the patterns matching none, each once, in order).

    A pattern without a glob character is a set lookup; a glob is matched only against the ids
    sharing its literal head or tail (found by bisection), so thousands of patterns against a
    hundred thousand ids cost about the ids they can match, not patterns × ids. Only a glob with
    a wildcard at both ends (``*x*``) is tried on every id.
    """
    index = TaskIndex.of(task_ids)
    required: set[str] = set()
    unmatched = []
    for pattern in dict.fromkeys(patterns):
        if GLOB.search(pattern) is None:
            hits: Collection[str] = (pattern,) if pattern in index.present else ()
        else:
            hits = list(filter(re.compile(fnmatch.translate(pattern), re.DOTALL).match, index.candidates(pattern)))
        if not hits:
            unmatched.append(pattern)
        required.update(hits)
    return tuple(sorted(required)), tuple(unmatched)


def check_required(
    runs: Sequence[EvalRun], patterns: Sequence[str], threshold: float = DEFAULT_REQUIRED_SCORE
) -> RequiredCheck:
    """Every model of ``runs`` against the required tasks. Raises :class:`UnmatchedPatterns`.

    ``runs`` are expected valid (the leaderboard checks them first).
    """
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0.0 <= threshold <= 1.0:
        raise ValueError(f"the required score must be a number from 0 to 1, got {threshold!r}")
    patterns = tuple(map(canonical, patterns))
    models = tuple(sorted(set(map(attrgetter("model_id"), runs))))
    all_tasks = sorted(set(map(attrgetter("task_id"), runs)))
    tasks, unmatched = matching(all_tasks, patterns)
    if unmatched:
        raise UnmatchedPatterns(unmatched)
    t_of = {t: i for i, t in enumerate(tasks)}
    m_of = {m: i for i, m in enumerate(models)}
    sums = np.zeros((len(models), len(tasks)))
    counts = np.zeros((len(models), len(tasks)), dtype=np.int64)
    ran = np.zeros((len(models), len(tasks)), dtype=bool)
    rows: list[int] = []
    columns: list[int] = []
    values: list[float] = []
    for r in runs:
        column = t_of.get(r.task_id)
        if column is None:
            continue
        ran[m_of[r.model_id], column] = True
        if r.score is None or r.failed:
            continue
        rows.append(m_of[r.model_id])
        columns.append(column)
        values.append(float(r.score))
    if values:
        np.add.at(sums, (np.array(rows), np.array(columns)), np.array(values))
        np.add.at(counts, (np.array(rows), np.array(columns)), 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
        limit = np.full_like(scores, float(threshold))
        meets = scores >= limit - tie_tolerance(scores, limit)
    failures = tuple(
        RequiredFailure(models[i], tasks[j], None if math.isnan(scores[i, j]) else float(scores[i, j]), bool(ran[i, j]))
        for i, j in zip(*np.nonzero(~meets), strict=True)
    )
    return RequiredCheck(patterns, float(threshold), tasks, models, failures)


def failure_dict(failure: RequiredFailure) -> dict[str, object]:
    return {"model": failure.model_id, "task": failure.task_id, "score": failure.score}


def required_dict(check: RequiredCheck) -> dict[str, object]:
    """The JSON report's ``required``."""
    return {
        "patterns": list(check.patterns),
        "required_score": check.threshold,
        "tasks": list(check.tasks),
        "models": len(check.models),
        "failures": len(check.failures),
        "failed": [failure_dict(f) for f in check.failures],
    }
