"""The verdict (which model is best, and is it clearly best?) and the line of what was compared."""

from __future__ import annotations

from collections.abc import Sequence

from ..records import PairwiseDiff
from ..stats.analysis import Leaderboard
from ..stats.ties import TIE_ABS_TOL
from .formatting import count, difference, no_interval
from .markdown import confidence_label, md_code
from .protocol import Commit

TOP_GROUP_NAMED = 5
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
    """One sentence: which model is best, and is it clearly best? Full ids."""
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
    d, lo, hi = oriented(second, first)
    if second.n_shared == 0:
        gap = f"the top two ({inline(first)} and {inline(rows[1].model_id)}) share no task, so they cannot be compared"
    else:
        shown, ci, _ = difference(d, lo, hi, second.significant, missing="")
        bounds = f"{level} CI {ci}" if ci else no_interval(second.n_clusters)
        evidence = f"({bounds}, {count(second.n_shared, 'shared task')})"
        if d < 0:
            # Ranked first on its own tasks, behind on the ones they share (the two ran different sets).
            gap = f"is behind {inline(rows[1].model_id)} on the tasks both ran: {shown} {evidence}"
        else:
            gap = f"leads {inline(rows[1].model_id)} by {shown} {evidence}"
    top = board.top_group
    if top == (first,):
        return f"**{inline(first)} is best**, significantly ahead of every other model: it {gap}."
    if first not in top:
        ahead = [p.model_a for p in board.resolution()[1] if p.significant and p.model_a != first]
        return (
            f"{inline(first)} ranks first by {board.rank_by}, but {_names(ahead[:TOP_GROUP_NAMED])} "
            "is significantly ahead of it on mean score."
        )
    named = list(top[:TOP_GROUP_NAMED])
    more = len(top) - len(named)
    group = _names(named) if not more else ", ".join(inline(i) for i in named) + f" and {more} more"
    tied = f"**No clear winner**: {group} are statistically tied for first"
    if second.n_shared == 0:
        return f"{tied}; {gap}."
    if abs(second.mean_diff) <= TIE_ABS_TOL:
        return f"{tied}, the top two with the same mean on the {count(second.n_shared, 'task')} they share."
    if second.clusters_needed is not None and second.n_clusters is not None:
        if second.clusters_needed <= second.n_clusters:
            resolve = (
                f"their {second.n_clusters:,} shared clusters are not enough to separate the top two at this level"
            )
        else:
            resolve = (
                f"about {second.clusters_needed:,} clusters of ~{cluster_size(second)} tasks would separate the "
                f"top two (they share {second.n_clusters:,} clusters)"
            )
    elif second.tasks_needed is not None and second.n_clusters is None and second.tasks_needed <= second.n_shared:
        resolve = f"their {second.n_shared:,} shared tasks are not enough to separate the top two at this level"
    elif second.tasks_needed is not None and second.n_clusters is None:
        resolve = (
            f"about {second.tasks_needed:,} shared tasks would separate the top two (they share {second.n_shared:,})"
        )
    else:
        many = second.n_shared if second.n_clusters is None else second.n_clusters
        units = count(many, "shared task" if second.n_clusters is None else "shared cluster")
        resolve = f"their {units} {'does' if many == 1 else 'do'} not separate the top two at this level"
    if set(top) == {first, rows[1].model_id}:
        # Two: name each once.
        return f"**No clear winner**: {inline(first)} {gap}, too close to call: {resolve}."
    return f"{tied}; {inline(first)} {gap}; {resolve}."


def cluster_size(pair: PairwiseDiff) -> str:
    """The pair's observed mean cluster size, as "~12" reads."""
    return f"{pair.n_shared / max(1, pair.n_clusters or 1):.3g}"


def info_line(board: Leaderboard, commit: Commit | None) -> str:
    parts = [count(board.n_models, "model"), count(board.n_tasks, "task"), count(board.n_runs, "run")]
    if commit is not None:
        short = md_code(commit.sha[:7])
        parts.append(f"commit [{short}]({commit.url})" if commit.url else f"commit {short}")
    settings = f"{confidence_label(board.alpha)} CI, {board.b:,} resamples, seed {board.seed}"
    if board.pairs_computed and len(board.rows) > 1:
        settings += ", family-wise (Holm)" if board.correction == "holm" else ", per-pair claims (no correction)"
    if board.clustering is not None:
        settings += f", clustered by {board.clustering.by} ({board.clustering.count:,} clusters)"
    if board.task_weights == "apply" and board.weights_ignored:
        settings += ", task weights applied"
    parts.append(settings)
    return "<sub>" + " · ".join(parts) + "</sub>"
