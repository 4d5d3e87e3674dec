"""The statistics' reasons and figures in words: why a pair is not separated, what would separate it, what a suite
can resolve.

The statistics return numbers and codes (:class:`~leaderboard.records.Reason`,
:class:`~leaderboard.stats.power.Detectable`); every document and the JSON report word them here, so
one sentence reads the same wherever it appears.
"""

from __future__ import annotations

from collections.abc import Callable

from ..records import Reason, Why
from ..stats.analysis import Leaderboard
from ..stats.categories import MIN_TASKS, NoBest
from ..stats.clustering import FEW_DF
from ..stats.power import Detectable
from .formatting import magnitude_text, p_value

# How each sign-flip method (significance.METHOD_NAMES' order) is named in a reason.
# Indexed by significance.METHOD_NAMES' codes; 3 and 4 (the Monte Carlo and normal tiers) are no longer made.
TEST_WORDS = (
    "no test",
    "exact test",
    "exact McNemar test",
    "Monte Carlo test",
    "normal-approximation test",
    "saddlepoint test",
    "CR2 t-test",
)


def p_text(p: float, alpha: float) -> str:
    """ "p = 0.052" or "p < 0.001", rounded as every table prints p (:func:`~leaderboard.report.formatting.p_value`)."""
    shown = p_value(p, alpha)
    return f"p {shown}" if shown.startswith("<") else f"p = {shown}"


def reason_text(reason: Reason) -> str:
    """Why a pair is not significant, or no change against the baseline was detected, in the tables' words."""
    why, alpha = reason.why, reason.alpha
    if why is Why.NO_SHARED:
        return "no shared tasks"
    if why is Why.UNCHANGED:
        return "the same score on every shared task"
    if why is Why.CI_INCLUDES_0:
        return "CI includes 0"
    if why is Why.TOO_FEW and reason.clustered:
        return f"too few shared clusters ({reason.units} < {reason.fewest}): " + (
            f"the comparison asks for as many as a two-sided cluster sign-flip test needs at {alpha:g}"
            if reason.one_sided
            else f"no cluster sign-flip test can reach alpha = {alpha:g}"
        )
    if why is Why.TOO_FEW:
        return f"too few shared tasks ({reason.units} < {reason.fewest})"
    sides = " one-sided" if reason.one_sided else ""
    if reason.holm:
        test = f"Holm-adjusted{sides}"
    else:
        test = f"cluster {TEST_WORDS[reason.test]}" if reason.clustered else TEST_WORDS[reason.test]
        test = f"one-sided {test}" if reason.one_sided else test
    return f"{test} {p_text(reason.p, alpha)}"


def detectable_sentence(d: Detectable, what: str = "difference", *, name: Callable[[str], str]) -> str:
    """What the suite can resolve at the level in force, in one sentence, naming the pair it is computed for
    (``name`` shows a model id in the document's markup)."""
    if d.unit == "cluster" and d.reachable and not d.df >= FEW_DF and not d.exact and not d.t_test:
        # At a handful of effective df the few sign patterns and t quantiles leave far larger differences
        # unresolved than any figure from the typical pair's spread says.
        return (
            f"With {d.n_shared:,} shared clusters and effective df as low as {d.df:.3g}, no "
            f"figure of the {what} this suite detects holds."
        )
    sides = "" if d.two_sided else " one-sided"
    if not d.reachable:
        return (
            f"With {d.n_shared:,} shared {d.unit}s this suite cannot detect a {what} of any size at this "
            f"level ({d.level:.3g}{sides}): {'a sign-flip test' if d.unit == 'task' else 'a clustered claim'} "
            f"needs at least {d.fewest:,} {d.unit}s "
            "to reach it."
        )
    units = "per-task differences" if d.unit == "task" else "per-cluster differences"
    whose = " vs ".join(name(m) for m in d.pair)
    typical = "pair" if len(d.pair) == 2 else "model"
    how = (
        f"the exact power of the McNemar test at that {typical}'s discordant share"
        if d.exact
        else f"the power of the CR2 t-test at its Bell-McCaffrey df, simulated from that {typical}'s {units}"
        if d.t_test
        else f"the power of the test run here, simulated from that {typical}'s {units}"
    )
    sentence = (
        f"With {d.n_shared:,} shared {d.unit}s this suite detects a {what} of about "
        f"±{magnitude_text(d.difference)} with "
        f"{d.power:.0%} power at this level ({d.level:.3g}{sides}) for the typical {typical}, {whose} (the "
        f"median spread of {units}; {how})."
    )
    if d.min_effect is not None and d.units_for_effect is not None:
        count = "more than 10,000,000" if d.units_for_effect < 0 else f"about {d.units_for_effect:,}"
        sentence += (
            f" A {what} of ±{magnitude_text(d.min_effect)} (min-effect) would need {count} {d.unit}s like these."
        )
    return sentence


def best_set_sentence(board: Leaderboard) -> str:
    """How the verdict and the top group (the confidence set for the best) were made, with its guarantee."""
    best = board.best
    if best is None or not best.family or best.comparisons < 2:
        return ""
    return (
        f" The verdict and the top group (best rank 1) are a {1 - best.alpha:.0%} confidence set for the best: a "
        f"model is left out when another is ahead of it one-sided at {best.per_comparison:.3g} (alpha over its "
        f"{best.comparisons:,} comparisons, Bonferroni), so the set holds the best model with probability at least "
        f"{1 - best.alpha:.0%}, however many models rank far below."
    )


def no_best_words(why: NoBest | None) -> str:
    """A category row's Best cell when its comparisons name no winner."""
    if why is NoBest.FEW_TASKS:
        return f"no winner named (< {MIN_TASKS} tasks)"
    if why is NoBest.ONE_MODEL:
        return "one model"
    if why is NoBest.FEW_CLUSTERS:
        return "no winner named (too few clusters)"
    return "no clear best"


def category_best_sentence(board: Leaderboard) -> str | None:
    """How a category's Best was decided, when the table names or withholds one."""
    tested = [t for t in board.category_best if t.why is not NoBest.ONE_MODEL]
    if not tested:
        return None
    level = tested[0].level
    family = board.correction != "none"
    return (
        f"**Best** in a category: the model with the top mean there, named only when it is ahead of every other "
        f"model in the category on the category's tasks, each one-sided at {level:.3g}"
        + (
            " (alpha over every comparison of the categories' leaders, Bonferroni: the chance of any false name "
            f"in the table is at most {board.alpha:g})"
            if family
            else " (each comparison on its own)"
        )
        + (
            " (the category's clusters the units: the cluster sign-flip test, or the CR2 t-test where it cannot "
            "reach that level)"
            if any(t.clusters for t in tested)
            else ""
        )
        + f"; with fewer than {MIN_TASKS} tasks no winner is named. Otherwise the row says no clear best."
    )
