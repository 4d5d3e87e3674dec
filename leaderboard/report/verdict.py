"""The verdict (which model is best, and is it clearly best?) and the line of what was compared."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..records import PairwiseDiff
from ..stats.analysis import Leaderboard
from ..stats.clustering import FEW_DF
from ..stats.ties import TIE_ABS_TOL
from .formatting import POINTS, count, difference, in_percent, magnitude_text, no_interval
from .markdown import confidence_label, md_code
from .protocol import Commit

# Ids named in the verdict, the first thing a reviewer reads: the top two (the gap it gives is theirs);
# the table's rank ranges show who else is tied.
TOP_GROUP_NAMED = 2
# Never "#1" in rendered text: GitHub links it to issue 1.
ORDINAL = ("1st", "2nd", "3rd")


def inline(text: str) -> str:
    """An id in running text (outside a table)."""
    return md_code(text, table=False)


def oriented(pair: PairwiseDiff, first: str) -> tuple[float, float, float]:
    """The pair's difference, CI ends, as ``first`` minus the other model."""
    if pair.model_a == first:
        return pair.mean_diff, pair.ci_lo, pair.ci_hi
    return -pair.mean_diff, -pair.ci_hi, -pair.ci_lo


def _names(ids: Sequence[str]) -> str:
    shown = [inline(i) for i in ids]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def verdict(board: Leaderboard) -> str:
    """One sentence: which model is best, and is it clearly best? Full ids, at most two of a tied group."""
    rows = board.rows
    if not rows:
        return "_No eval runs: nothing to rank._"
    first = rows[0].model_id
    if len(rows) == 1:
        return f"{inline(first)} is the only model: there is nothing to compare it with."
    if not board.pairs_computed:
        return f"{inline(first)} ranks first; pairwise comparisons were not computed."
    level = confidence_label(board.alpha)
    second = board.pair(1, 2)
    d, _, _ = oriented(second, first)
    # The gap's interval as the confidence set for the best reads it (stats/best.py), a family of its own: the
    # pair table's may reach 0 where the set puts the first ahead.
    own_lo, own_hi = board.best.gap if board.best is not None else (second.ci_lo, second.ci_hi)
    lo, hi = (own_lo, own_hi) if second.model_a == first else (-own_hi, -own_lo)
    if second.n_shared == 0:
        gap = f"the top two ({inline(first)} and {inline(rows[1].model_id)}) share no task, so they cannot be compared"
    else:
        shown, ci, _ = difference(d, lo, hi, lo > 0 or hi < 0, missing="")
        shown += POINTS if in_percent() else ""
        bounds = f"{level} CI {ci}" if ci else no_interval(second.n_clusters)
        # On the shared tasks, which the table's means (over each model's own tasks) need not be: said.
        footing = f"on the {count(second.n_shared, 'task')} both ran ({bounds})"
        if d < 0:
            # Ranked first on its own tasks, behind on the ones they share (the two ran different sets).
            gap = f"is behind {inline(rows[1].model_id)} by {shown[1:]} {footing}"
            apart = f"the first is behind the second by {shown[1:]} {footing}"
        else:
            gap = f"leads {inline(rows[1].model_id)} by {shown} {footing}"
            apart = f"the top two are {shown[1:] if shown[0] == '+' else shown} apart {footing}"
    top = board.top_group
    if top == (first,):
        return f"**{inline(first)} is best**, significantly ahead of every other model: it {gap}."
    if first not in top:
        ahead = board.best.ahead_of(first) if board.best is not None else None
        return (
            f"{inline(first)} ranks first by {board.rank_by}, but {inline(ahead or top[0])} "
            "is significantly ahead of it on mean score on the tasks both ran."
        )
    named = list(top[:TOP_GROUP_NAMED])
    more = len(top) - len(named)
    group = _names(named) if not more else ", ".join(inline(i) for i in named) + f" and {count(more, 'other model')}"
    tied = f"**No clear winner**: {group} are statistically tied for first"
    if second.n_shared == 0:
        return f"{tied}; {gap}."
    if abs(second.mean_diff) <= TIE_ABS_TOL:
        return f"{tied}, the top two with the same mean on the {count(second.n_shared, 'task')} they share."
    resolve = resolution(board)
    if set(top) == {first, rows[1].model_id}:
        # Two: name each once.
        return f"**No clear winner**: {inline(first)} {gap}, too close to call: {resolve}."
    return f"{tied}: {apart}; {resolve}."


def resolution(board: Leaderboard) -> str:
    """Why a gap stays unresolved, in what the suite can detect (never a post-hoc count of tasks)."""
    d = board.detectable()
    unit = "cluster" if board.clustering is not None else "task"
    if d is None or math.isnan(d.difference) or not d.reachable:
        return f"this suite has too few shared {unit}s to resolve a gap this small"
    if d.unit == "cluster" and not d.df >= FEW_DF and not d.t_test:
        return "this suite has too few effective clusters to resolve a gap this small"
    return f"this suite cannot resolve a gap this small; it detects about ±{magnitude_text(d.difference)}"


def info_line(board: Leaderboard, commit: Commit | None) -> str:
    """One line of context: what was compared, and at which commit (the settings are in the method block)."""
    parts = [f"{count(board.n_models, 'model')} × {count(board.n_tasks, 'task')}", count(board.n_runs, "run")]
    if commit is not None:
        short = md_code(commit.sha[:7])
        parts.append(f"commit [{short}]({commit.url})" if commit.url else f"commit {short}")
    return "<sub>" + " · ".join(parts) + "</sub>"
