"""The statistics' reasons and figures in words: why a pair is not separated, what would separate it, what a suite
can resolve.

The statistics return numbers and codes (:class:`~leaderboard.records.Reason`,
:class:`~leaderboard.stats.power.Detectable`); every document and the JSON report word them here, so
one sentence reads the same wherever it appears.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..records import Reason, Why
from ..stats.clustering import FEW_DF
from ..stats.power import Detectable

# How each sign-flip method (significance.METHOD_NAMES' order) is named in a reason.
TEST_WORDS = ("no test", "exact test", "exact McNemar test", "Monte Carlo test", "normal-approximation test")


def p_text(p: float, alpha: float) -> str:
    """p to 3 significant digits, more where that would print it on the other side of ``alpha``.

    A reason reads "p = 0.05" beside "not significant" when p is 0.05004: the words would contradict
    the decision they explain.
    """
    digits = 3
    text = f"{p:.{digits}g}"
    while math.isfinite(p) and (float(text) <= alpha) != (p <= alpha) and digits < 17:
        digits += 1
        text = f"{p:.{digits}g}"
    return text


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
    return f"{test} p = {p_text(reason.p, alpha)}"


def needed_words(needed: int | None, n_shared: int, what: str = "tell", *, short: bool = False) -> str | None:
    """ "about N tasks would <what>" ("~N tasks would <what>" when ``short``), or None with no estimate.

    An estimate at or below the tasks already shared is never printed: the pair is not separated
    at that size, which the estimate (a normal approximation of average power) does not undo.
    """
    if needed is None:
        return None
    if needed <= n_shared:
        if short:
            return f"{n_shared:,} shared tasks not enough"
        return f"its {n_shared:,} shared tasks are not enough at this level"
    if needed > 10**9:
        return f"more than a billion tasks would {what}"
    return f"{'~' if short else 'about '}{needed:,} tasks would {what}"


def detectable_sentence(d: Detectable, what: str = "difference", *, name: Callable[[str], str]) -> str:
    """What the suite can resolve at the level in force, in one sentence, naming the pair it is computed for
    (``name`` shows a model id in the document's markup)."""
    if d.unit == "cluster" and d.reachable and not d.df >= FEW_DF and not d.exact:
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
            f"level ({d.level:.3g}{sides}): a sign-flip test needs at least {d.fewest:,} {d.unit}s "
            "to reach it."
        )
    units = "per-task differences" if d.unit == "task" else "per-cluster differences"
    whose = " vs ".join(name(m) for m in d.pair)
    typical = "pair" if len(d.pair) == 2 else "model"
    how = (
        f"the exact power of the McNemar test at that {typical}'s discordant share"
        if d.exact
        else f"the power of the test run here, simulated from that {typical}'s {units}"
    )
    sentence = (
        f"With {d.n_shared:,} shared {d.unit}s this suite detects a {what} of about ±{d.difference:.3g} with "
        f"{d.power:.0%} power at this level ({d.level:.3g}{sides}) for the typical {typical}, {whose} (the "
        f"median spread of {units}; {how})."
    )
    if d.min_effect is not None and d.units_for_effect is not None:
        count = "more than 10,000,000" if d.units_for_effect < 0 else f"about {d.units_for_effect:,}"
        sentence += f" A {what} of ±{d.min_effect:.3g} (min-effect) would need {count} {d.unit}s like these."
    return sentence
