"""The data shapes: what goes into the leaderboard and what comes out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, order=True, slots=True)
class Source:
    """Where a record came from, so every problem can point at it."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class EvalRun:
    """One model's score on one task, as the eval runner emits it."""

    model_id: str
    task_id: str
    metric_name: str
    score: float
    category: str = "general"
    weight: float = 1.0
    # Provenance is not part of a record's identity: the same run read from
    # another file is the same run.
    source: Source | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class LeaderboardRow:
    """A model's summary: mean with its bootstrap CI, win-rate and category means."""

    model_id: str
    mean_score: float
    mean_ci_lo: float
    mean_ci_hi: float
    win_rate: float
    tasks_completed: int
    categories: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class PairwiseDiff:
    """Paired bootstrap of ``score_a - score_b`` over the tasks both models ran.

    With no shared task the difference is undefined: ``mean_diff``, ``ci_lo``
    and ``ci_hi`` are NaN and ``significant`` is False.
    """

    model_a: str
    model_b: str
    n_shared: int
    mean_diff: float
    ci_lo: float
    ci_hi: float
    significant: bool
