"""This run against a baseline: each model compared with its own baseline scores.

A model in both is compared over the tasks it ran on both sides (its *shared* tasks),
with the leaderboard's own rule for a pair (the paired-difference kernel, ``stats/paired.py``):

* Δ is the mean over the shared tasks of ``score_PR − score_base``;
* its interval is the paired percentile bootstrap of that mean on the exact multinomial
  draw of the one engine: ``resampling.keyed_rng(seed, sorted shared task ids)`` and
  ``resampled_means``, so the resamples depend on the seed and the task set alone. Two-sided
  at 1 - alpha per model; in the one-sided families below (and the gate) each end is a one-sided
  1 - alpha bound (the two-sided 1 - 2 alpha interval), the level of the one-sided test it sits
  beside: a two-sided 95% interval held a regression to a 97.5% bound and cost the gate power;
* p is the exact paired permutation test (``significance.sign_flip_test``) of the per-task
  differences, a difference within ``math.isclose`` (rel 1e-9, abs 1e-12) being 0;
* the change is *detected* only when the CI excludes 0, p <= alpha and there are at least
  ``min_tasks(alpha)`` shared tasks; then it is ``improved`` or, downwards, ``regressed``,
  unless the CI's upper end is not below ``-tolerance``: ``within tolerance``.

With the default correction (``holm``), and whenever the gate is on (``fail_on_regression``),
the models compared are families (stats/family.py): a drop is tested one-sided, Holm-adjusted
over the models compared, so the gate fails falsely at most alpha of the time however many
models there are; a rise the same way, as a family of its own. ``correction="none"`` without
the gate keeps the per-model, two-sided view.

Everything is a function of the two sets of records, not of their order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from ..records import EvalRun, Reason, Why
from ..run_columns import RunColumns
from ..trials import collapse_trials
from .bootstrap import BootstrapEngine
from .clustering import CLUSTER_BY, ClusterBy, Grouping, cluster_of, onehot_of
from .family import (
    CORRECTIONS,
    DEFAULT_CORRECTION,
    Correction,
    family_members,
)
from .matrix import ScoreMatrix, score_matrix
from .paired import (
    DECIDED,
    ClusterFigures,
    cluster_figures,
    clustered_p,
    decide,
    differences,
    excludes_zero,
    reason_codes,
    sign_flip,
    weighted_hull,
)
from .parameters import check_resamples
from .power import Detectable, detectable_for, typical
from .resampling import EXACT_LIMIT, FloatArray, encode_ids, keyed_rng, percentile_interval, resampled_means
from .significance import METHOD_NAMES, min_tasks
from .ties import TIE_ABS_TOL
from .weights import TASK_WEIGHTS, TaskWeights, normalised, task_weights

Verdict = Literal["regressed", "within tolerance", "improved", "no detectable change", "unchanged"]


def interval_alpha(alpha: float, one_sided: bool) -> float:
    """The two-sided interval whose ends are one-sided 1 - alpha bounds when ``one_sided`` (capped at 1: the median)."""
    return min(2.0 * alpha, 1.0) if one_sided else alpha


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
    # The CI's ends are one-sided 1 - alpha bounds (the one-sided families, the gate), not a two-sided interval.
    one_sided_bounds: bool = False

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
        """The two-sided alpha of the CIs: alpha, or 2 alpha when each end is a one-sided 1 - alpha bound."""
        return interval_alpha(self.alpha, self.one_sided)

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


def _check(b: int, alpha: float, tolerance: float, correction: str) -> None:
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, got {correction!r}")
    if isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b < 1:
        raise ValueError(f"b (the number of bootstrap resamples) must be a positive integer, got {b!r}")
    if not (isinstance(alpha, (int, float)) and 0.0 < alpha < 1.0):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    check_resamples(int(b), float(alpha), name="b")
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not 0.0 <= tolerance <= 1.0:
        raise ValueError(f"tolerance must be a number from 0 to 1 (score units), got {tolerance!r}")


def _listed(runs: Sequence[EvalRun]) -> Sequence[EvalRun]:
    """The runs as a list, or as columns when they are: the score matrix reads columns as they are."""
    return runs if isinstance(runs, RunColumns) else list(runs)


def _side(runs: Sequence[EvalRun]) -> ScoreMatrix | None:
    # Like the leaderboard: trials averaged per task and failed calls dropped first, so tasks are the cases.
    scored = collapse_trials(runs)
    return score_matrix(scored) if scored else None


def _aligned(
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


def _this_runs_design(
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


def _shifts(
    bs: FloatArray,
    ps: FloatArray,
    shared: NDArray[np.bool_],
    raw: FloatArray,
    diffs: FloatArray,
    tasks: Sequence[str],
    tw: FloatArray | None,
    b: int,
    alpha: float,
    seed: int,
    onehot: Grouping | None,
) -> tuple[FloatArray, ...]:
    """Per model over its shared tasks: (delta, base mean, PR mean, bootstrap CI low, high, spread of the differences).

    The interval is the paired percentile bootstrap on the exact multinomial draw keyed by the shared
    task set, above EXACT_LIMIT shared tasks the Poisson bootstrap the leaderboard gives such a pair
    (NaN with clustering: the CR2 interval replaces it).
    """
    count = shared.shape[0]
    n = shared.sum(axis=1)
    tw_row = tw if tw is not None else np.ones(len(tasks))
    delta, base_mean, pr_mean, lo, hi, sd = (np.full(count, np.nan) for _ in range(6))
    encoded = encode_ids(tasks)
    # Models with the same shared tasks share one keyed draw: one resampled_means call per task set.
    groups: dict[bytes, list[int]] = {}
    for k in range(count):
        if n[k] > 0:
            groups.setdefault(np.packbits(shared[k]).tobytes(), []).append(k)
    for members in groups.values():
        columns = np.flatnonzero(shared[members[0]])
        size = columns.size
        block = np.ix_(np.asarray(members, dtype=np.intp), columns)
        values = raw[block]
        w = tw_row[columns]
        delta[members] = (values * w).sum(axis=1) / w.sum()
        base_mean[members] = (bs[block] * w).sum(axis=1) / w.sum()
        pr_mean[members] = (ps[block] * w).sum(axis=1) / w.sum()
        if onehot is not None:
            pass  # the CR2 interval, below
        elif tw is None and size > EXACT_LIMIT:
            lo[members], hi[members] = percentile_interval(
                _poisson_shifts(ps[block], bs[block], tasks, columns, b, seed), alpha
            )
        elif tw is None:
            rng = keyed_rng(seed, [encoded[t] for t in columns])
            lo[members], hi[members] = percentile_interval(resampled_means(values, int(b), rng), alpha)
        else:
            rng = keyed_rng(seed, [encoded[t] for t in columns])
            both = resampled_means(np.vstack([values * w, w[None, :]]), int(b), rng)
            b_lo, b_hi = percentile_interval(both[:-1] / both[-1], alpha)
            # As the leaderboard's weighted interval: widened where needed to the HC2 t-interval.
            sizes_w = np.broadcast_to(w, values.shape)
            lo[members], hi[members] = weighted_hull(values * w, sizes_w, delta[members], b_lo, b_hi, alpha)
        if size > 1:
            tied = diffs[block]
            centred = tied - (tied.sum(axis=1) / size)[:, None]
            sd[members] = np.sqrt((centred * centred).sum(axis=1) / (size - 1))

    return delta, base_mean, pr_mean, lo, hi, sd


def _poisson_shifts(
    pr: FloatArray, base: FloatArray, tasks: Sequence[str], columns: NDArray[np.intp], b: int, seed: int
) -> FloatArray:
    """Resampled changes (rows, b) over more than EXACT_LIMIT shared tasks: as the leaderboard resamples a pair
    of models on so many tasks (the Poisson bootstrap, each model's resampled mean, their difference), with
    each model's PR and baseline scores as the pair. An exact draw of a million tasks would take seconds."""
    rows = len(pr)
    names = tuple(f"{side} {k}" for side in ("pr", "base") for k in range(rows))
    scores = np.vstack([pr, base])
    matrix = ScoreMatrix(
        names, tuple(tasks[k] for k in columns.tolist()) if columns.size != len(tasks) else tuple(tasks), scores,
        np.ones(scores.shape, dtype=bool), np.zeros(scores.shape, dtype=np.int64), ("",), False,
    )  # fmt: skip
    theta = BootstrapEngine(matrix, int(b), seed).models()
    return np.asarray(theta[:rows] - theta[rows:], dtype=np.float64)


def compare(
    baseline_runs: Sequence[EvalRun],
    runs: Sequence[EvalRun],
    *,
    b: int,
    alpha: float,
    seed: int,
    tolerance: float = 0.0,
    correction: Correction = DEFAULT_CORRECTION,
    fail_on_regression: bool = False,
    cluster_by: ClusterBy = "none",
    weights: TaskWeights = "ignore",
    min_effect: float | None = None,
) -> Comparison:
    """Compare each model of ``runs`` with the same model in ``baseline_runs`` (matched by model_id).

    ``correction="holm"`` (the default) or ``fail_on_regression`` (the gate is on: its pass/fail is
    a claim about every model at once) makes drops and rises one-sided families, Holm-adjusted over
    the models compared (the module docstring). Both sides are validated like the leaderboard's
    input (``InvalidEvalRuns``).
    """
    _check(b, alpha, tolerance, correction)
    if cluster_by not in CLUSTER_BY:
        raise ValueError(f"cluster_by must be one of {', '.join(CLUSTER_BY)}, got {cluster_by!r}")
    if weights not in TASK_WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(TASK_WEIGHTS)}, got {weights!r}")
    if fail_on_regression:
        correction = "holm"
    base, pr = _side(_listed(baseline_runs)), _side(_listed(runs))
    base_models = set(base.model_ids) if base else set()
    pr_models = set(pr.model_ids) if pr else set()
    base_tasks = set(base.task_ids) if base else set()
    pr_tasks = set(pr.task_ids) if pr else set()
    models = sorted(base_models & pr_models)
    # Both sides with the same tasks (ids sorted in a matrix): no million-id union to sort.
    tasks = list(pr.task_ids) if base and pr and base.task_ids == pr.task_ids else sorted(base_tasks | pr_tasks)
    bs, bp, _ = _aligned(base, models, tasks)
    ps, pp, pc = _aligned(pr, models, tasks)
    count = len(models)
    rows = np.arange(count)
    # The PR's row of each model above its baseline's: the kernel's differences are PR - base.
    paired = differences(
        np.vstack([np.where(pp, ps, 0.0), np.where(bp, bs, 0.0)]), np.vstack([pp, bp]), rows, count + rows
    )
    shared, raw, diffs = paired.shared, paired.raw, paired.tied
    n = shared.sum(axis=1)
    unchanged = (n > 0) & ~(diffs != 0).any(axis=1)
    onehot, tw, relabelled, reweighted = _this_runs_design(baseline_runs, runs, tasks, shared, cluster_by, weights)
    tw = normalised(tw) if tw is not None else None  # only the ratios matter; no product or sum overflows
    tw_row = tw if tw is not None else np.ones(len(tasks))
    two_sided = correction == "none"
    ci_alpha = interval_alpha(alpha, not two_sided)
    delta, base_mean, pr_mean, lo, hi, sd = _shifts(bs, ps, shared, raw, diffs, tasks, tw, b, ci_alpha, seed, onehot)
    flipped = diffs * tw_row
    # What each model's test flips: its per-task (weighted) differences, or their sums per cluster.
    tested_rows = flipped
    cluster: ClusterFigures | None = None
    if onehot is not None:
        sizes = onehot.sums(np.where(shared, tw_row, 0.0))
        tested_rows = onehot.sums(flipped)
        cluster = cluster_figures(onehot.sums(np.where(shared, raw, 0.0) * tw_row), tested_rows, sizes, ci_alpha)
        lo, hi = cluster.ci_lo, cluster.ci_hi
    member = (n > 0) & family_members(np.count_nonzero(tested_rows, axis=1), 2.0 * alpha)  # one-sided: 1 / 2^k <= alpha
    p, method = sign_flip(tested_rows)
    if cluster is not None:
        # One-sided, p / 2 meets alpha / m: the two-sided p must reach 2 alpha / m.
        level = alpha if two_sided else 2.0 * alpha / max(1, int(member.sum()))
        p, method = clustered_p(p, method, cluster.t_p, np.count_nonzero(tested_rows, axis=1), member, level)
    tie_free = np.where(unchanged | (np.abs(delta) <= TIE_ABS_TOL), 0.0, delta)
    decisions = decide(
        p, member, alpha, correction, one_sided_rows=None if two_sided else tested_rows, down=tie_free < 0
    )
    p, adjusted = decisions.p, decisions.adjusted
    units = cluster.clusters if cluster is not None else n
    # The interval must exclude 0 on the side the mean (and a one-sided p) points to.
    codes = reason_codes(n, units, excludes_zero(lo, hi, tie_free), adjusted, alpha, unchanged)
    fewest = min_tasks(alpha)
    categories = pr.categories if pr else ()

    changes = []
    for k, model in enumerate(models):
        shared_k, code = int(n[k]), int(codes[k])
        d, ci_lo, ci_hi, p_k, adj_k = float(delta[k]), float(lo[k]), float(hi[k]), float(p[k]), float(adjusted[k])
        test = METHOD_NAMES[int(method[k])] if two_sided else f"one-sided {METHOD_NAMES[int(method[k])]}"
        verdict: Verdict = "no detectable change"
        if code == Why.NO_SHARED:
            p_k, adj_k = math.nan, math.nan
        elif code == Why.UNCHANGED:
            verdict, d, ci_lo, ci_hi = "unchanged", 0.0, 0.0, 0.0
        elif code == DECIDED:
            verdict = "improved" if ci_lo > TIE_ABS_TOL else "regressed" if ci_hi < -tolerance else "within tolerance"
        reason = None
        if code != DECIDED:
            reason = Reason(
                Why(code), float(alpha), units=int(units[k]), fewest=fewest, clustered=cluster is not None,
                one_sided=not two_sided, test=int(method[k]), p=adj_k, holm=bool(member[k]) and not two_sided,
            )  # fmt: skip
        row_shared = shared[k]
        cats = pc[k, row_shared]
        sums = np.bincount(cats, weights=raw[k, row_shared], minlength=len(categories))
        counts = np.bincount(cats, minlength=len(categories))
        own_base, own_pr = bs[k, bp[k]], ps[k, pp[k]]
        changes.append(
            ModelChange(
                model_id=model,
                verdict=verdict,
                n_shared=shared_k,
                base_mean=float(base_mean[k]),
                pr_mean=float(pr_mean[k]),
                delta=d,
                ci_lo=ci_lo,
                ci_hi=ci_hi,
                p_value=p_k,
                p_adjusted=adj_k,
                test=test,
                reason=reason,
                tasks_needed=None,
                base_mean_all=float(np.mean(own_base)),
                pr_mean_all=float(np.mean(own_pr)),
                base_tasks=int(own_base.size),
                pr_tasks=int(own_pr.size),
                categories=tuple(
                    CategoryChange(categories[c], int(counts[c]), 0.0 if unchanged[k] else float(sums[c] / counts[c]))
                    for c in np.flatnonzero(counts)
                ),
                n_clusters=int(units[k]) if cluster is not None else None,
                one_sided_bounds=not two_sided,
            )
        )
    return Comparison(
        models=tuple(changes),
        new_models=tuple(sorted(pr_models - base_models)),
        removed_models=tuple(sorted(base_models - pr_models)),
        tasks_added=tuple(sorted(pr_tasks - base_tasks)),
        tasks_dropped=tuple(sorted(base_tasks - pr_tasks)),
        alpha=float(alpha),
        b=int(b),
        seed=int(seed),
        tolerance=float(tolerance),
        correction=correction,
        cluster_by=cluster_by,
        clusters=0 if onehot is None else onehot.count,
        task_weights=weights,
        relabelled=relabelled,
        reweighted=reweighted,
        family=int(member.sum()) if not two_sided else 1,
        level=decisions.level,
        detectable=_detectable(
            models,
            tested_rows,
            sizes if cluster is not None else np.where(shared, tw_row, 0.0),
            n,
            sd,
            cluster,
            decisions.level,
            two_sided,
            seed,
            min_effect,
        ),
    )


def _detectable(
    models: Sequence[str],
    tested_rows: FloatArray,
    sizes: FloatArray,
    n: NDArray[np.int64],
    sd: FloatArray,
    cluster: ClusterFigures | None,
    level: float,
    two_sided: bool,
    seed: int,
    min_effect: float | None,
) -> Detectable | None:
    """The typical model's (the median spread's) minimum detectable change at ``level``, from its own units."""
    units = cluster.clusters if cluster is not None else n
    spread = cluster.sd if cluster is not None else sd
    k = typical(units, spread)
    if k is None:
        return None
    # The units are the shared tasks (sized by their weight: a shift of x moves w d by w x) or clusters.
    on = sizes[k] > 0
    values, unit_sizes = tested_rows[k][on], sizes[k][on]
    found = detectable_for(
        values, unit_sizes, level, two_sided=two_sided, seed=seed, pair=(models[k],), sd=float(spread[k]),
        unit="task" if cluster is None else "cluster", min_effect=min_effect,
    )  # fmt: skip
    if cluster is not None and np.isfinite(cluster.df[k]):
        return replace(found, df=float(np.min(cluster.df[np.isfinite(cluster.df)])))
    return found
