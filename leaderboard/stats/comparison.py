"""This run against a baseline: each model compared with its own baseline scores.

A model in both is compared over the tasks it ran on both sides (its *shared* tasks),
with the leaderboard's own rule for a pair (the paired-difference kernel, ``stats/paired.py``):

* Δ is the mean over the shared tasks of ``score_PR − score_base``;
* its interval is the paired percentile bootstrap of that mean on the exact multinomial
  draw of the one engine: ``resampling.keyed_rng(seed, sorted shared task ids)`` and
  ``resampled_means``, so the resamples depend on the seed and the task set alone. Two-sided
  at 1 - alpha per model; in the one-sided families below (and the gate) each end is a one-sided
  1 - alpha / m bound over the m models of the family (the two-sided 1 - 2 alpha / m interval):
  Bonferroni, so that all the upper bounds hold at once with probability >= 1 - alpha (and all the
  lower ones), the family-wise level of the verdicts beside them (stats/family.py). Where the
  resamples cannot resolve that level the end is the t-interval's (``paired.t_hull``);
* p is the exact paired permutation test (``significance.sign_flip_test``) of the per-task
  differences, a difference within ``math.isclose`` (rel 1e-9, abs 1e-12) being 0;
* the change is *detected* only when the CI excludes 0, p <= alpha and there are at least
  ``min_tasks(alpha)`` shared tasks; then it is ``improved`` or, downwards, ``regressed``,
  unless the CI's upper end is not below ``-tolerance``: ``within tolerance``. A model with no
  change detected has its CI reach 0 (``paired.reaching_zero``): no interval says more than its verdict.

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
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from ..records import EvalRun, Reason, Why
from ..run_columns import RunColumns
from .bootstrap import BootstrapEngine
from .clustering import CLUSTER_BY, ClusterBy, Grouping
from .comparison_result import CategoryChange, Comparison, ModelChange, Verdict, interval_alpha
from .comparison_sides import aligned, side_matrix, this_runs_design
from .family import (
    CORRECTIONS,
    DEFAULT_CORRECTION,
    Correction,
    family_members,
)
from .matrix import ScoreMatrix
from .paired import (
    DECIDED,
    ClusterFigures,
    cluster_figures,
    clustered_p,
    decide,
    differences,
    excludes_zero,
    reaching_zero,
    reason_codes,
    sign_flip,
    t_hull,
    weighted_hull,
)
from .parameters import check_resamples
from .power import ClusterTest, Detectable, detectable_for, typical
from .resampling import EXACT_LIMIT, FloatArray, encode_ids, keyed_rng, percentile_interval, resampled_means
from .significance import METHOD_NAMES, min_tasks
from .ties import TIE_ABS_TOL
from .weights import TASK_WEIGHTS, TaskWeights, normalised

# The result's types live in their own module; the library's callers import them from here.
__all__ = ["CategoryChange", "Comparison", "ModelChange", "Verdict", "compare", "interval_alpha", "poisson_riders"]


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
    riders: Sequence[BootstrapEngine] = (),
) -> tuple[FloatArray, ...]:
    """Per model over its shared tasks: (delta, base mean, PR mean, bootstrap CI low, high, spread of the differences).

    The interval is the paired percentile bootstrap on the exact multinomial draw keyed by the shared
    task set, above EXACT_LIMIT shared tasks the Poisson bootstrap the leaderboard gives such a pair, of
    the weighted means when task weights are applied (then widened where needed to the HC2 t-interval);
    NaN with clustering: the CR2 interval replaces it.
    """
    count = shared.shape[0]
    tw_row = tw if tw is not None else np.ones(len(tasks))
    delta, base_mean, pr_mean, lo, hi, sd = (np.full(count, np.nan) for _ in range(6))
    encoded = encode_ids(tasks)
    for members in _task_sets(shared):
        columns = np.flatnonzero(shared[members[0]])
        size = columns.size
        block = np.ix_(np.asarray(members, dtype=np.intp), columns)
        values = raw[block]
        w = tw_row[columns]
        delta[members] = (values * w).sum(axis=1) / w.sum()
        base_mean[members] = (bs[block] * w).sum(axis=1) / w.sum()
        pr_mean[members] = (ps[block] * w).sum(axis=1) / w.sum()
        if onehot is None:  # else the CR2 interval, below
            lo[members], hi[members] = _interval(
                values, ps[block], bs[block], w if tw is not None else None, delta[members], tasks, encoded, columns,
                b, alpha, seed, riders,
            )  # fmt: skip
        if size > 1:
            tied = diffs[block]
            centred = tied - (tied.sum(axis=1) / size)[:, None]
            sd[members] = np.sqrt((centred * centred).sum(axis=1) / (size - 1))

    return delta, base_mean, pr_mean, lo, hi, sd


def _task_sets(shared: NDArray[np.bool_]) -> list[list[int]]:
    """Models with the same shared tasks, together: they share one draw (one resampled_means call per task set)."""
    groups: dict[bytes, list[int]] = {}
    for k in range(shared.shape[0]):
        if shared[k].any():
            groups.setdefault(np.packbits(shared[k]).tobytes(), []).append(k)
    return list(groups.values())


def _interval(
    values: FloatArray,
    pr: FloatArray,
    base: FloatArray,
    w: FloatArray | None,
    delta: FloatArray,
    tasks: Sequence[str],
    encoded: Sequence[bytes],
    columns: NDArray[np.intp],
    b: int,
    alpha: float,
    seed: int,
    riders: Sequence[BootstrapEngine] = (),
) -> tuple[FloatArray, FloatArray]:
    """The bootstrap interval of rows sharing one task set (``values`` their differences over ``columns``);
    with task weights ``w``, of the weighted mean, widened where needed to the HC2 t-interval."""
    if columns.size > EXACT_LIMIT:
        resampled = _poisson_shifts(pr, base, tasks, columns, b, seed, w, riders)
    elif w is None:
        resampled = resampled_means(values, int(b), keyed_rng(seed, [encoded[t] for t in columns]))
    else:
        # The weights ride along on the same resamples: numerator and denominator of each weighted mean.
        both = resampled_means(
            np.vstack([values * w, w[None, :]]), int(b), keyed_rng(seed, [encoded[t] for t in columns])
        )
        resampled = both[:-1] / both[-1]
    lo, hi = percentile_interval(resampled, alpha)
    if w is None:
        return t_hull(values, np.ones(values.shape), delta, lo, hi, alpha, int(b))
    return weighted_hull(values * w, np.broadcast_to(w, values.shape), delta, lo, hi, alpha)


def _poisson_shifts(
    pr: FloatArray,
    base: FloatArray,
    tasks: Sequence[str],
    columns: NDArray[np.intp],
    b: int,
    seed: int,
    w: FloatArray | None = None,
    riders: Sequence[BootstrapEngine] = (),
) -> FloatArray:
    """Resampled changes (rows, b) over more than EXACT_LIMIT shared tasks: as the leaderboard resamples a pair
    of models on so many tasks (the Poisson bootstrap, each model's resampled (weighted) mean, their
    difference), with each model's PR and baseline scores as the pair. An exact draw of a million tasks would
    take seconds. A rider built ahead for these very rows (:func:`poisson_riders`) is the engine when given:
    the leaderboard's pass may have resampled it already."""
    matrix = _poisson_matrix(pr, base, tasks, columns)
    engine = next((r for r in riders if _rides_for(r, matrix, int(b), seed, w)), None)
    theta = (engine or BootstrapEngine(matrix, int(b), seed, w)).models()
    rows = len(pr)
    return np.asarray(theta[:rows] - theta[rows:], dtype=np.float64)


def _poisson_matrix(pr: FloatArray, base: FloatArray, tasks: Sequence[str], columns: NDArray[np.intp]) -> ScoreMatrix:
    """The matrix :func:`_poisson_shifts` resamples: the PR's rows above the baseline's, over the shared ``columns``."""
    rows = len(pr)
    names = tuple(f"{side} {k}" for side in ("pr", "base") for k in range(rows))
    scores = np.vstack([pr, base])
    matrix = ScoreMatrix(
        names, tuple(tasks[k] for k in columns.tolist()) if columns.size != len(tasks) else tuple(tasks), scores,
        np.ones(scores.shape, dtype=bool), np.zeros(scores.shape, dtype=np.int64), ("",), False,
    )  # fmt: skip
    return matrix


def _rides_for(rider: BootstrapEngine, matrix: ScoreMatrix, b: int, seed: int, w: FloatArray | None) -> bool:
    """The rider resamples this very matrix with these B, seed and task weights: the same resampled means."""
    if (rider.b, rider.seed) != (b, seed) or (rider.weight is None) != (w is None):
        return False
    if rider.weight is not None and w is not None and not np.array_equal(rider.weight, w):
        return False
    return rider.matrix.task_ids == matrix.task_ids and np.array_equal(rider.matrix.scores, matrix.scores)


def poisson_riders(
    baseline_runs: Sequence[EvalRun],
    runs: Sequence[EvalRun],
    *,
    b: int,
    seed: int,
    cluster_by: ClusterBy = "none",
    weights: TaskWeights = "ignore",
) -> tuple[BootstrapEngine, ...]:
    """The engines :func:`compare` will resample its task sets of more than EXACT_LIMIT shared tasks with, built
    ahead: within ``bootstrap.shared_weights`` the leaderboard's pass over the same tasks resamples them too,
    and ``compare(..., riders=...)`` reads their means instead of drawing the same weights again.

    Only what compare itself computes (the same sides, alignment, shared tasks and weights); none with clusters
    (the CR2 interval is not resampled) or invalid runs (compare reports them).
    """
    if cluster_by != "none":
        return ()
    base, pr = side_matrix(_listed(baseline_runs)), side_matrix(_listed(runs))
    if base is None or pr is None:
        return ()
    models = sorted(set(base.model_ids) & set(pr.model_ids))
    tasks = list(pr.task_ids) if base.task_ids == pr.task_ids else sorted(set(base.task_ids) | set(pr.task_ids))
    bs, bp, _ = aligned(base, models, tasks)
    ps, pp, _ = aligned(pr, models, tasks)
    shared = pp & bp  # as paired.differences finds them
    if not (shared.sum(axis=1) > EXACT_LIMIT).any():
        return ()
    _, tw, _, _ = this_runs_design(baseline_runs, runs, tasks, shared, cluster_by, weights)
    tw = normalised(tw) if tw is not None else None
    riders = []
    for members in _task_sets(shared):
        columns = np.flatnonzero(shared[members[0]])
        if columns.size > EXACT_LIMIT:
            block = np.ix_(np.asarray(members, dtype=np.intp), columns)
            w = tw[columns] if tw is not None else None
            riders.append(BootstrapEngine(_poisson_matrix(ps[block], bs[block], tasks, columns), int(b), seed, w))
    return tuple(riders)


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
    riders: Sequence[BootstrapEngine] = (),
) -> Comparison:
    """Compare each model of ``runs`` with the same model in ``baseline_runs`` (matched by model_id).

    ``correction="holm"`` (the default) or ``fail_on_regression`` (the gate is on: its pass/fail is
    a claim about every model at once) makes drops and rises one-sided families, Holm-adjusted over
    the models compared (the module docstring). Both sides are validated like the leaderboard's
    input (``InvalidEvalRuns``). ``riders``: engines :func:`poisson_riders` built ahead (any that match a
    task set's rows are used; the results are the same bits either way).
    """
    _check(b, alpha, tolerance, correction)
    if cluster_by not in CLUSTER_BY:
        raise ValueError(f"cluster_by must be one of {', '.join(CLUSTER_BY)}, got {cluster_by!r}")
    if weights not in TASK_WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(TASK_WEIGHTS)}, got {weights!r}")
    if fail_on_regression:
        correction = "holm"
    base, pr = side_matrix(_listed(baseline_runs)), side_matrix(_listed(runs))
    base_models = set(base.model_ids) if base else set()
    pr_models = set(pr.model_ids) if pr else set()
    # Both sides with the same tasks (ids sorted in a matrix): no million-id sets to build, sort or subtract.
    same_tasks = base is not None and pr is not None and base.task_ids == pr.task_ids
    base_tasks = set(base.task_ids) if base and not same_tasks else set()
    pr_tasks = set(pr.task_ids) if pr and not same_tasks else set()
    models = sorted(base_models & pr_models)
    tasks = list(pr.task_ids) if pr is not None and same_tasks else sorted(base_tasks | pr_tasks)
    bs, bp, _ = aligned(base, models, tasks)
    ps, pp, pc = aligned(pr, models, tasks)
    count = len(models)
    rows = np.arange(count)
    # The PR's row of each model above its baseline's: the kernel's differences are PR - base.
    paired = differences(
        np.vstack([np.where(pp, ps, 0.0), np.where(bp, bs, 0.0)]), np.vstack([pp, bp]), rows, count + rows
    )
    shared, raw, diffs = paired.shared, paired.raw, paired.tied
    n = shared.sum(axis=1)
    unchanged = (n > 0) & ~(diffs != 0).any(axis=1)
    onehot, tw, relabelled, reweighted = this_runs_design(baseline_runs, runs, tasks, shared, cluster_by, weights)
    tw = normalised(tw) if tw is not None else None  # only the ratios matter; no product or sum overflows
    tw_row = tw if tw is not None else np.ones(len(tasks))
    two_sided = correction == "none"
    flipped = diffs * tw_row
    # What each model's test flips: its per-task (weighted) differences, or their sums per cluster.
    tested_rows = flipped if onehot is None else onehot.sums(flipped)
    member = (n > 0) & family_members(np.count_nonzero(tested_rows, axis=1), 2.0 * alpha)  # one-sided: 1 / 2^k <= alpha
    # Each bound at alpha / m (Bonferroni over the family): all of them hold at once (stats/family.py).
    ci_alpha = interval_alpha(alpha, not two_sided, 1 if two_sided else int(member.sum()))
    delta, base_mean, pr_mean, lo, hi, sd = _shifts(
        bs, ps, shared, raw, diffs, tasks, tw, b, ci_alpha, seed, onehot, riders
    )
    cluster: ClusterFigures | None = None
    if onehot is not None:
        sizes = onehot.sums(np.where(shared, tw_row, 0.0))
        cluster = cluster_figures(onehot.sums(np.where(shared, raw, 0.0) * tw_row), tested_rows, sizes, ci_alpha)
        lo, hi = cluster.ci_lo, cluster.ci_hi
    p, method = sign_flip(tested_rows)
    # One-sided, p / 2 meets alpha / m: the two-sided p must reach 2 alpha / m.
    reach = alpha if two_sided else 2.0 * alpha / max(1, int(member.sum()))
    if cluster is not None:
        p, method = clustered_p(p, method, cluster.t_p, np.count_nonzero(tested_rows, axis=1), member, reach)
    tie_free = np.where(unchanged | (np.abs(delta) <= TIE_ABS_TOL), 0.0, delta)
    decisions = decide(
        p, member, alpha, correction, one_sided_rows=None if two_sided else tested_rows, down=tie_free < 0
    )
    p, adjusted = decisions.p, decisions.adjusted
    units = cluster.clusters if cluster is not None else n
    # The interval must exclude 0 on the side the mean (and a one-sided p) points to.
    codes = reason_codes(n, units, excludes_zero(lo, hi, tie_free), adjusted, alpha, unchanged)
    lo, hi = reaching_zero(lo, hi, codes == DECIDED)
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
                family=1 if two_sided else int(member.sum()),
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
            ClusterTest(reach, fewest),
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
    clusters: ClusterTest,
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
        clusters=None if cluster is None else clusters,
    )  # fmt: skip
    if cluster is not None and np.isfinite(cluster.df[k]):
        return replace(found, df=float(np.min(cluster.df[np.isfinite(cluster.df)])))
    return found
