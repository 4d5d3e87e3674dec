"""The data shapes: what goes into the leaderboard and what comes out."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from types import MappingProxyType

# One shared empty mapping: a fresh dict per record would cost ~64 bytes on each of millions.
_NO_METRICS: Mapping[str, float] = MappingProxyType({})


def _no_metrics() -> Mapping[str, float]:
    return _NO_METRICS


@dataclass(frozen=True, order=True, slots=True)
class Source:
    """Where a record came from, so every problem can point at it."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class EvalRun:
    """One model's score on one task, as the eval runner emits it.

    The optional fields describe the call itself: its price and latency, whether
    it failed (``error``: True or a short reason; a failed call may have no ``score``), extra
    per-call ``metrics``, and which ``trial`` of the (model, task) it is when a task was run
    more than once. ``cluster`` names the task's family, read by ``cluster-by: cluster``: tasks of one
    family are not independent evidence, so the statistics resample families rather than tasks.
    """

    model_id: str
    task_id: str
    metric_name: str
    score: float | None
    category: str = "general"
    weight: float = 1.0
    cost_usd: float | None = None
    latency_ms: float | None = None
    error: bool | str = False
    # Not hashed: a mapping has no hash, and the other fields identify a record anyway.
    metrics: Mapping[str, float] = field(default_factory=_no_metrics, hash=False)
    trial: int | str | None = None
    # The task's family: a passage, a repository; the same for every model that ran the task.
    cluster: str | None = None
    # Provenance is not part of a record's identity: the same run read from
    # another file is the same run.
    source: Source | None = field(default=None, compare=False, repr=False)

    @property
    def failed(self) -> bool:
        """The call failed (``error`` is True or a reason): it counts toward the error rate alone."""
        return is_failure(self.error)


# What a CSV cell or a harness writes for "no error": never a reason for a failure.
NO_ERROR = frozenset({"", "0", "false"})


def is_failure(error: object) -> bool:
    """``error`` says the call failed: True, or a reason ("timeout"); ``0``, ``false`` and empty text say it did not."""
    if isinstance(error, str):
        return error.lower() not in NO_ERROR
    return error is True


@dataclass(frozen=True)
class LeaderboardRow:
    """A model's summary: mean with its bootstrap CI, win-rate and category means.

    ``rank_lo``/``rank_hi`` are its rank range from the pairwise decisions (best rank:
    1 + models significantly ahead; worst: M - models significantly behind), None when
    pairs were not computed. ``ci_note`` says why the CI tells nothing ("n=1", "all
    equal"), None when it does.
    """

    model_id: str
    mean_score: float
    mean_ci_lo: float
    mean_ci_hi: float
    win_rate: float
    tasks_completed: int
    categories: Mapping[str, float] = field(default_factory=dict)
    category_tasks: Mapping[str, int] = field(default_factory=dict)
    # Each category mean's interval, where it has one; else why not ("n=1", "all equal") in category_ci_notes.
    category_ci: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    category_ci_notes: Mapping[str, str] = field(default_factory=dict)
    ci_note: str | None = None
    rank_lo: int | None = None
    rank_hi: int | None = None
    # How the CI was made, so the report can name it: "percentile bootstrap", "Wilson", "CR2 t" or "clustered Wilson".
    ci_method: str = "percentile bootstrap"

    @property
    def in_top_group(self) -> bool:
        """No model is significantly ahead of this one."""
        return self.rank_lo == 1


class Why(IntEnum):
    """Why a paired difference is not significant (against a baseline: why no change was detected)."""

    NO_SHARED = 1  # no task on both sides
    TOO_FEW = 2  # fewer shared units (tasks, or clusters) than any sign-flip test can reach alpha with
    CI_INCLUDES_0 = 3  # the interval does not exclude 0 (on the side the mean points to, one-sided)
    TEST = 4  # the sign-flip test's p (Holm-adjusted when in the family) is above alpha
    UNCHANGED = 5  # the same score on every shared task (a baseline comparison)


@dataclass(frozen=True, slots=True)
class Reason:
    """A :class:`Why` with the numbers a sentence about it needs (``leaderboard.report.reasons`` words it).

    ``units`` and ``fewest`` (TOO_FEW): the shared tasks, or clusters when ``clustered``, and the fewest
    that can reach ``alpha``; ``test`` (TEST): how p was computed (``significance.METHOD_NAMES``'s index),
    ``p`` the p compared with ``alpha``, ``holm`` whether it is Holm-adjusted over a family; ``one_sided``:
    the comparison tests drops and rises one-sided.
    """

    why: Why
    alpha: float
    units: int = 0
    fewest: int = 0
    clustered: bool = False
    one_sided: bool = False
    test: int = 0
    p: float = math.nan
    holm: bool = False


@dataclass(frozen=True, slots=True)
class PairwiseDiff:
    """Paired comparison of ``score_a - score_b`` over the tasks both models ran.

    ``model_a`` has the higher mean (to the tie tolerance; then the smaller id).
    ``significant`` is the one decision every view reads: the bootstrap CI excludes 0
    *and* the exact paired permutation test gives p <= alpha (Holm-adjusted over the family
    by default; raw with ``correction="none"``). ``reason`` says why it is not significant
    (a :class:`Reason`; None when it is); ``p_value`` is the test's raw p, ``p_adjusted`` the one compared with
    alpha; ``tasks_needed`` and ``clusters_needed`` are deprecated and always None (a post-hoc
    power figure that did not come true; the leaderboard's ``detectable()`` replaces them).
    With no shared task ``mean_diff``, ``ci_lo``, ``ci_hi`` and the p-values are NaN.
    """

    model_a: str
    model_b: str
    n_shared: int
    mean_diff: float
    ci_lo: float
    ci_hi: float
    significant: bool
    p_value: float = math.nan
    p_adjusted: float = math.nan
    test: str = "none"
    reason: Reason | None = None
    tasks_needed: int | None = None
    # With clustering: the clusters of the shared tasks (clusters_needed: deprecated, always None).
    n_clusters: int | None = None
    clusters_needed: int | None = None
