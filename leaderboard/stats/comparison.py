"""This run against a baseline: each model compared with its own baseline scores.

A model in both is compared over the tasks it ran on both sides (its *shared* tasks),
with the leaderboard's own rule for a pair (``statistics._pair_table``):

* Δ is the mean over the shared tasks of ``score_PR − score_base``;
* its interval is the paired percentile bootstrap of that mean on the exact multinomial
  draw of the one engine: ``resampling.keyed_rng(seed, sorted shared task ids)`` and
  ``resampled_means``, so the resamples depend on the seed and the task set alone;
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

from ..records import EvalRun
from ..trials import collapse_trials
from .aggregation import (
    TEST_WORDS,
    TIE_ABS_TOL,
    ScoreMatrix,
    check_resamples,
    score_matrix,
    tie_tolerance,
)
from .clustering import CLUSTER_BY, ClusterBy, Grouping, cluster_of, cr2, onehot_of, t_interval
from .family import (
    CORRECTIONS,
    DEFAULT_CORRECTION,
    Correction,
    Detectable,
    adjust,
    detectable,
    family_members,
    one_sided,
    step_levels,
    tasks_needed_at,
)
from .resampling import FloatArray, encode_ids, keyed_rng, percentile_interval, resampled_means
from .significance import METHOD_NAMES, min_tasks, p_text, sign_flip_test
from .weights import TASK_WEIGHTS, TaskWeights, normalised, task_weights

Verdict = Literal["regressed", "within tolerance", "improved", "no detectable change", "unchanged"]
VERDICTS: tuple[Verdict, ...] = ("regressed", "within tolerance", "improved", "no detectable change", "unchanged")

# Per-task differences held at once by the test (~32 MiB of float64), whatever models x tasks.
_TEST_CHUNK_ELEMENTS = 1 << 22


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
    when the comparison is family-wise). ``reason`` says why no change was detected
    (None when one was); ``tasks_needed`` is about how many shared tasks would detect a
    change the size of ``delta`` (None when it is 0).
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
    reason: str | None
    tasks_needed: int | None
    base_mean_all: float
    pr_mean_all: float
    base_tasks: int
    pr_tasks: int
    categories: tuple[CategoryChange, ...] = ()
    # Clustered (issue 15): the clusters the model shares with its baseline, and about how many
    # clusters of the observed size would detect a change the size of ``delta`` (None otherwise).
    n_clusters: int | None = None
    clusters_needed: int | None = None

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
    # the level a model not flagged is held to; the suite's minimum detectable drop at that level.
    family: int = 1
    level: float = 0.05
    detectable: Detectable | None = None
    cluster_by: ClusterBy = "none"  # issue 15: the test flips clusters, the CI is CR2's
    clusters: int = 0
    task_weights: TaskWeights = "ignore"
    # Shared tasks whose cluster (or, applied, weight) differs in the baseline: this run's is used.
    relabelled: int = 0
    reweighted: int = 0

    @property
    def one_sided(self) -> bool:
        """Drops and rises tested one-sided, each a family Holm-adjusted over the models compared."""
        return self.correction != "none"

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


def _side(runs: Sequence[EvalRun]) -> ScoreMatrix | None:
    # Like the leaderboard: trials averaged per task and failed calls dropped first (issue 10).
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
    t_of = {t: i for i, t in enumerate(side.task_ids)}
    rows = np.array([m_of[m] for m in models], dtype=np.intp)
    known = [k for k, t in enumerate(tasks) if t in t_of]
    columns = np.array([t_of[tasks[k]] for k in known], dtype=np.intp)
    scores[:, known] = side.scores[np.ix_(rows, columns)]
    present[:, known] = side.present[np.ix_(rows, columns)]
    categories[:, known] = side.category_index[np.ix_(rows, columns)]
    return scores, present, categories


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
    base, pr = _side(list(baseline_runs)), _side(list(runs))
    base_models = set(base.model_ids) if base else set()
    pr_models = set(pr.model_ids) if pr else set()
    base_tasks = set(base.task_ids) if base else set()
    pr_tasks = set(pr.task_ids) if pr else set()
    models = sorted(base_models & pr_models)
    tasks = sorted(base_tasks | pr_tasks)
    bs, bp, _ = _aligned(base, models, tasks)
    ps, pp, pc = _aligned(pr, models, tasks)
    shared = bp & pp
    n = shared.sum(axis=1)
    raw = np.where(shared, ps - bs, 0.0)
    # The one tie rule: near-equal scores are no difference at all.
    with np.errstate(invalid="ignore"):
        tol = tie_tolerance(ps, bs)
        diffs = np.where(shared & ~(np.abs(raw) <= tol), raw, 0.0)
    unchanged = (n > 0) & ~(diffs != 0).any(axis=1)
    # A task's cluster and weight are this run's, as the leaderboard reads them: a PR may regroup or
    # reweigh tasks (or add clusters the base branch never recorded), and only shared tasks enter the
    # test, so the baseline's labels are not needed; how many shared tasks they differ on is said.
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
    tw_row = tw if tw is not None else np.ones(len(tasks))
    reweighted = 0
    if weights == "apply":
        base_weight = {r.task_id: float(r.weight) for r in base_scored}
        reweighted = sum(base_weight.get(tasks[k]) != float(tw_row[k]) for k in shared_at)
    tw_row = normalised(tw_row)  # only the ratios matter; no product or sum overflows

    count = len(models)
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
        rng = keyed_rng(seed, [encoded[t] for t in columns])
        if onehot is not None:
            pass  # the CR2 interval, below
        elif tw is None:
            lo[members], hi[members] = percentile_interval(resampled_means(values, int(b), rng), alpha)
        else:
            both = resampled_means(np.vstack([values * w, w[None, :]]), int(b), rng)
            b_lo, b_hi = percentile_interval(both[:-1] / both[-1], alpha)
            # As the leaderboard's weighted interval: widened where needed to the HC2 t-interval.
            sizes_w = np.broadcast_to(w, values.shape)
            moments = replace(cr2(values * w, sizes_w), mean=delta[members])
            t_lo, t_hi = t_interval(moments, alpha)
            lo[members], hi[members] = np.fmin(b_lo, t_lo), np.fmax(b_hi, t_hi)
        if size > 1:
            tied = diffs[block]
            centred = tied - (tied.sum(axis=1) / size)[:, None]
            sd[members] = np.sqrt((centred * centred).sum(axis=1) / (size - 1))

    p, method = np.ones(count), np.zeros(count, dtype=np.int8)
    flipped = diffs * tw_row
    clusters_shared = np.zeros(count, dtype=np.int64)
    cluster_sd = np.full(count, np.nan)
    cluster_df = np.full(count, np.inf)
    # What each model's test flips: its per-task (weighted) differences, or their sums per cluster.
    tested_rows = flipped
    if onehot is not None:
        sizes = onehot.sums(np.where(shared, tw_row, 0.0))
        moments = cr2(onehot.sums(np.where(shared, raw, 0.0) * tw_row), sizes)
        lo, hi = t_interval(moments, alpha)
        clusters_shared = moments.clusters
        tested_rows = onehot.sums(flipped)
        spread = cr2(tested_rows, sizes)
        # C* = z^2 V C / d^2: tasks_needed's n* with V C in the place of s_d^2 (sized below, at the level in force).
        cluster_sd = np.sqrt(spread.variance * spread.clusters)
        cluster_df = spread.df
        p, method = sign_flip_test(tested_rows)
    else:
        step = max(1, _TEST_CHUNK_ELEMENTS // max(1, len(tasks)))
        for start in range(0, count, step):
            p[start : start + step], method[start : start + step] = sign_flip_test(flipped[start : start + step])

    tie_free = np.where(unchanged | (np.abs(delta) <= TIE_ABS_TOL), 0.0, delta)
    member = (n > 0) & family_members(np.count_nonzero(tested_rows, axis=1), 2.0 * alpha)  # one-sided: 1 / 2^k <= alpha
    level = float(alpha)
    if correction == "none":
        adjusted = p.copy()
        levels = np.full(count, float(alpha))
    else:
        drop, rise = one_sided(tested_rows, p, -1), one_sided(tested_rows, p, +1)
        drop_adjusted, rise_adjusted = adjust(drop, member, "holm"), adjust(rise, member, "holm")
        down = tie_free < 0
        p = np.where(down, drop, rise)
        adjusted = np.where(down, drop_adjusted, rise_adjusted)
        levels = np.where(
            down,
            step_levels(drop_adjusted, member, alpha, "holm"),
            step_levels(rise_adjusted, member, alpha, "holm"),
        )
        level = float(alpha) / max(1, int(member.sum()) - int(np.count_nonzero(member & (drop_adjusted <= alpha))))
    two_sided = correction == "none"
    needed = tasks_needed_at(np.nan_to_num(tie_free), sd, levels, two_sided=two_sided)
    clusters_needed = np.full(count, -1, dtype=np.int64)
    if onehot is not None:
        # Clusters needed, as tasks: that many clusters of the observed mean size.
        per = n / np.maximum(clusters_shared, 1)
        clusters_needed = tasks_needed_at(np.nan_to_num(tie_free), cluster_sd, levels, two_sided=two_sided)
        needed = np.where(clusters_needed >= 0, np.ceil(clusters_needed * per), -1).astype(np.int64)
    fewest = min_tasks(alpha)
    categories = pr.categories if pr else ()

    changes = []
    for k, model in enumerate(models):
        shared_k = int(n[k])
        d, ci_lo, ci_hi, p_k, adj_k = float(delta[k]), float(lo[k]), float(hi[k]), float(p[k]), float(adjusted[k])
        test = METHOD_NAMES[int(method[k])] if two_sided else f"one-sided {METHOD_NAMES[int(method[k])]}"
        verdict: Verdict = "no detectable change"
        reason: str | None
        if shared_k == 0:
            reason, p_k, adj_k = "no shared tasks", math.nan, math.nan
        elif unchanged[k]:
            verdict, reason, d, ci_lo, ci_hi = "unchanged", "the same score on every shared task", 0.0, 0.0, 0.0
        elif onehot is not None and clusters_shared[k] < fewest:
            reason = f"too few shared clusters ({int(clusters_shared[k])} < {fewest}): " + (
                f"no cluster sign-flip test can reach alpha = {alpha:g}"
                if two_sided
                else f"the comparison asks for as many as a two-sided cluster sign-flip test needs at {alpha:g}"
            )
        elif shared_k < fewest:
            reason = f"too few shared tasks ({shared_k} < {fewest})"
        elif not (ci_lo > TIE_ABS_TOL if tie_free[k] > 0 else ci_hi < -TIE_ABS_TOL):
            # The interval must exclude 0 on the side the mean (and a one-sided p) points to.
            reason = "CI includes 0"
        elif not adj_k <= alpha:
            words = TEST_WORDS[int(method[k])] if onehot is None else f"cluster {TEST_WORDS[int(method[k])]}"
            words = words if two_sided else f"one-sided {words}"
            reason = f"{'Holm-adjusted one-sided' if member[k] and not two_sided else words} p = {p_text(adj_k, alpha)}"
        elif ci_lo > TIE_ABS_TOL:
            verdict, reason = "improved", None
        else:
            verdict, reason = ("regressed" if ci_hi < -tolerance else "within tolerance"), None
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
                tasks_needed=int(needed[k]) if needed[k] >= 0 else None,
                base_mean_all=float(np.mean(own_base)),
                pr_mean_all=float(np.mean(own_pr)),
                base_tasks=int(own_base.size),
                pr_tasks=int(own_pr.size),
                categories=tuple(
                    CategoryChange(categories[c], int(counts[c]), 0.0 if unchanged[k] else float(sums[c] / counts[c]))
                    for c in np.flatnonzero(counts)
                ),
                n_clusters=int(clusters_shared[k]) if onehot is not None else None,
                clusters_needed=int(clusters_needed[k]) if onehot is not None and clusters_needed[k] >= 0 else None,
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
        level=level,
        detectable=(
            detectable(n, sd, level, two_sided=two_sided)
            if onehot is None
            else detectable(
                clusters_shared.astype(np.int64), cluster_sd, level, two_sided=two_sided, unit="cluster", df=cluster_df
            )
        ),
    )
