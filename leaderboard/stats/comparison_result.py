"""What a comparison with the baseline returns: each model's change (:class:`ModelChange`) and the whole
(:class:`Comparison`), numbers and reason codes only; :mod:`leaderboard.stats.comparison` computes them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..records import Reason
from .clustering import ClusterBy
from .family import DEFAULT_CORRECTION, Correction, simultaneous
from .power import Detectable
from .weights import TaskWeights

Verdict = Literal["regressed", "within tolerance", "improved", "no detectable change", "unchanged"]


def interval_alpha(alpha: float, one_sided: bool, family: int = 1) -> float:
    """The two-sided alpha of an interval whose ends are one-sided 1 - alpha / ``family`` bounds when ``one_sided``
    (Bonferroni over the family; capped at 1: the median), else alpha."""
    return min(2.0 * simultaneous(alpha, family), 1.0) if one_sided else alpha


@dataclass(frozen=True)
class CategoryChange:
    """Mean Δ over a model's shared tasks in one category (the category as this run gives it)."""

    category: str
    n_shared: int
    delta: float


@dataclass(frozen=True)
class ModelChange:
    """One model, baseline against this run.

    ``base_mean``/``pr_mean`` are over the shared tasks (their difference is ``delta``);
    ``base_mean_all``/``pr_mean_all`` over each side's own tasks (``base_tasks``/``pr_tasks``).
    ``test`` says how p was computed (``significance.METHOD_NAMES``, "one-sided ..." when the
    comparison is family-wise: then p is for a change in the direction of ``delta``), ``p_value``
    is its p, ``p_adjusted`` the one compared with alpha (Holm-adjusted over the models compared
    when the comparison is family-wise). ``reason`` says why no change was detected (a code with its numbers,
    (None when one was); ``tasks_needed`` and ``clusters_needed`` are deprecated and always None
    (a post-hoc power figure that did not come true; ``Comparison.detectable`` replaces them).
    With no shared task, ``delta``, the means over shared tasks, the CI and p are NaN.
    """

    model_id: str
    verdict: Verdict
    n_shared: int
    base_mean: float
    pr_mean: float
    delta: float
    ci_lo: float
    ci_hi: float
    p_value: float
    p_adjusted: float
    test: str
    reason: Reason | None
    tasks_needed: int | None
    base_mean_all: float
    pr_mean_all: float
    base_tasks: int
    pr_tasks: int
    categories: tuple[CategoryChange, ...] = ()
    # With cluster-by on: the clusters the model shares with its baseline (None otherwise).
    n_clusters: int | None = None
    clusters_needed: int | None = None
    # The CI's ends are one-sided 1 - alpha / family bounds (the one-sided families, the gate), not a two-sided
    # interval; ``family`` models' bounds hold at once with probability >= 1 - alpha (1: per model).
    one_sided_bounds: bool = False
    family: int = 1

    @property
    def significant(self) -> bool:
        """A change was detected (up or down, within the tolerance or not)."""
        return self.verdict in ("regressed", "within tolerance", "improved")

    @property
    def regressed(self) -> bool:
        """Significantly worse, by more than the tolerance: what fails the gate."""
        return self.verdict == "regressed"


@dataclass(frozen=True)
class Comparison:
    """Every model in both runs (sorted by id), and what is only on one side."""

    models: tuple[ModelChange, ...]
    new_models: tuple[str, ...]
    removed_models: tuple[str, ...]
    tasks_added: tuple[str, ...]
    tasks_dropped: tuple[str, ...]
    alpha: float
    b: int
    seed: int
    tolerance: float
    correction: Correction = DEFAULT_CORRECTION
    # The regression family: models whose one-sided test can reach alpha (1 when per model), and
    # the level a model not flagged is held to; the typical model's minimum detectable drop at that
    # level (two-sided change when per model).
    family: int = 1
    level: float = 0.05
    detectable: Detectable | None = None
    cluster_by: ClusterBy = "none"  # on: the test flips clusters, the CI is CR2's
    clusters: int = 0
    task_weights: TaskWeights = "ignore"
    # Shared tasks whose cluster (or, applied, weight) differs in the baseline: this run's is used.
    relabelled: int = 0
    reweighted: int = 0

    @property
    def one_sided(self) -> bool:
        """Drops and rises tested one-sided, each a family Holm-adjusted over the models compared."""
        return self.correction != "none"

    @property
    def ci_alpha(self) -> float:
        """The two-sided alpha of the CIs: alpha, or 2 alpha / family when each end is a one-sided 1 - alpha / family
        bound (all the family's bounds on one side hold at once with probability >= 1 - alpha)."""
        return interval_alpha(self.alpha, self.one_sided, self.family)

    def having(self, verdict: Verdict) -> tuple[ModelChange, ...]:
        return tuple(m for m in self.models if m.verdict == verdict)

    @property
    def regressions(self) -> tuple[ModelChange, ...]:
        """The models that fail the gate, worst Δ first."""
        return tuple(sorted(self.having("regressed"), key=lambda m: (m.delta, m.model_id)))

    @property
    def improvements(self) -> tuple[ModelChange, ...]:
        return tuple(sorted(self.having("improved"), key=lambda m: (-m.delta, m.model_id)))

    def count(self, verdict: Verdict) -> int:
        return len(self.having(verdict))
