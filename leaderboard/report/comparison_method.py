"""How the comparison with the baseline decides a change, in words: the paragraph of the "How to read this"
block (the test, its level and family, the interval, the smallest change the suite detects)."""

from __future__ import annotations

from ..stats.comparison import Comparison
from ..stats.parameters import min_resamples
from ..stats.significance import min_tasks
from .comparison import interval_confidence
from .markdown import md_code
from .reasons import detectable_sentence


def _count(n: int) -> str:
    return f"{n:,}"


def rule_text(comparison: Comparison) -> str:
    """How a change is decided, for the method block (no markup: it sits in a paragraph of its own)."""
    confidence = f"{(1.0 - comparison.alpha) * 100:.6g}%"
    tolerance = (
        f", and by more than the tolerance: the CI's upper {'bound' if comparison.one_sided else 'end'} below "
        f"−{comparison.tolerance:g}"
        if comparison.tolerance > 0
        else ""
    )
    clustered = comparison.cluster_by != "none"
    name = (
        "cluster sign-flip test (the CR2 t-test where too few clusters leave it short of the level)"
        if clustered
        else "paired permutation test (exact or Monte Carlo)"
    )
    unit = "clusters" if clustered else "tasks"
    if comparison.one_sided:
        if comparison.family:
            over = (
                f"after Holm's step-down over the {_count(comparison.family)} "
                f"model{'s' if comparison.family != 1 else ''} that can reach it"
            )
        else:
            over = f"(no model shares enough {unit} for the test to reach it)"
        test = (
            f"the {name}, one-sided in the direction of Δ, gives p ≤ {comparison.alpha:g} {over} (drops and "
            f"rises each a family: the chance of any false regression is at most {comparison.alpha:g}, and of "
            "any false improvement too)"
        )
    else:
        test = f"the {name} gives p ≤ {comparison.alpha:g} (two-sided, each model on its own: per-model claims)"
    power = (
        f" {detectable_sentence(comparison.detectable, 'change', name=lambda m: md_code(m, table=False))}"
        if comparison.detectable is not None
        else ""
    )
    if comparison.relabelled:
        power += (
            f" {_count(comparison.relabelled)} shared task{'s are' if comparison.relabelled != 1 else ' is'} in "
            f"another {'category' if comparison.cluster_by == 'category' else 'cluster'} in the baseline: this "
            "run's clusters are used."
        )
    if comparison.reweighted:
        power += (
            f" {_count(comparison.reweighted)} shared task{'s have' if comparison.reweighted != 1 else ' has'} "
            "another weight in the baseline: this run's weights are used."
        )
    if clustered:
        ci = f"CR2 cluster-robust CI over {comparison.clusters:,} clusters (by {comparison.cluster_by})"
    else:
        ci = f"paired bootstrap CI ({comparison.b} resamples, seed {comparison.seed})"
    excludes = "the CI excludes 0"
    if comparison.one_sided and comparison.family > 1:
        # Each bound at alpha / m (Bonferroni): the family's bounds hold together at 1 - alpha, as its verdicts do.
        each = f"{(1.0 - comparison.ci_alpha / 2.0) * 100:.6g}%"
        ci = (
            f"{ci}, each end a one-sided {each} bound ({comparison.alpha:g} / {_count(comparison.family)}"
            f"{_t_hull(comparison)}): simultaneous over the {_count(comparison.family)} models, all the upper "
            f"bounds hold at once with probability at least {confidence}, and all the lower bounds"
        )
        excludes = "the CI excludes 0 on Δ's side (a drop's upper bound below 0, a rise's lower bound above 0)"
    elif comparison.one_sided:
        # The bound sits at the one-sided test's level: the two-sided interval at 1 - 2 alpha.
        ci = f"{ci}, each end a one-sided {confidence} bound (the two-sided {interval_confidence(comparison)} interval)"
        excludes = "the CI excludes 0 on Δ's side (a drop's upper bound below 0, a rise's lower bound above 0)"
    else:
        ci = f"{confidence} {ci}"
    return (
        f"**The baseline comparison**: Δ = this run − baseline, the mean over the tasks the model ran in both; "
        f"{ci}, ends rounded outward. A change is detected when {excludes}, {test} and the model shares "
        f"at least {min_tasks(comparison.alpha)} {unit}; a drop is a regression when it is detected{tolerance}; "
        f"with no change detected the CI reaches 0 (widened to it where the test, which decides, does not confirm "
        f"what the CI alone would). Means are over the shared tasks.{power}"
    )


def _t_hull(comparison: Comparison) -> str:
    """Where the resamples cannot resolve a bound's level, the t-interval widens it (``paired.t_hull``)."""
    if comparison.cluster_by != "none" or comparison.b >= min_resamples(comparison.ci_alpha):
        return ""
    return f", widened to the t-interval's where {_count(comparison.b)} resamples cannot resolve it"
