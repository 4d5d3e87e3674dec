"""Every document made from an analysis: the PR comment, the job summary, the markdown file, the CLI output.

One builder, so they cannot drift. The document reads verdict first:

1. the title, then one sentence that answers "which model is best, and is it clearly
   best?" with full ids, then a line of what was compared (models, tasks, commit, settings);
2. sections handed in by the caller (the baseline comparison, the composite ranking);
3. the leaderboard: the top 10 rows in the open, the rest in ``<details>``;
4. pairwise comparisons in ``<details>``: the leader against every model, then neighbours,
   then the other pairs;
5. categories as rows in ``<details>``; the notes.

A size limit (GitHub refuses a comment over 65,536 characters) is met by keeping what
fits, in priority order: the verdict, the top rows, the leader against every model (never
less than against the second), then the other rows, neighbours, categories and other pairs, each
added only if it fits. Whatever was left out is named, with where to find it. Tables
are never cut inside: rows are pre-rendered and whole rows are kept or left.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..records import LeaderboardRow, PairwiseDiff
from ..stats.analysis import Leaderboard
from ..stats.clustering import FEW_DF, LARGEST_SHARE_WARNING
from ..stats.significance import min_tasks
from ..stats.ties import TIE_ABS_TOL
from ..validation import Problem
from .formatting import (
    DASH,
    EXTENDED,
    count,
    decimals_for,
    difference,
    interval,
    labels,
    number,
    p_value,
    rank_range,
    tasks_cell,
)
from .markdown import confidence_label, leaderboard_table, md_code, md_text, pairwise_table, truncate
from .reasons import detectable_sentence, needed_words, reason_text

COMMENT_LIMIT = 65_536
SUMMARY_LIMIT = 1024 * 1024  # bytes GitHub accepts in one step's summary
MARKER_PREFIX = "<!-- leaderboard-action:"
# What a comment key may be: it goes into the marker (an HTML comment) and a directory name.
COMMENT_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,99}")
RUN_LINK_PREFIX = "<sub>[Workflow run]("
MAX_PROBLEMS_SHOWN = 50
TOP_ROWS = 10
PAIRS_SHOWN = 1000  # in a document without a size limit; the JSON report has every pair
TOP_GROUP_NAMED = 5
FEW_CATEGORY_TASKS = 5
CATEGORY_MODELS = 3
TITLE_WIDTH = 200
CELL_WIDTH = 300
CHECK, TIED = "✓", "≈"
# Never "#1" in rendered text: GitHub links it to issue 1.
ORDINAL = ("1st", "2nd", "3rd")


def marker(key: str) -> str:
    """The hidden first line that ties a comment to its ``comment-key``."""
    return f"{MARKER_PREFIX}{key} -->"


def comment_length(text: str) -> int:
    """Length as GitHub's limit counts it, conservatively: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def summary_length(text: str) -> int:
    return len(text.encode("utf-8"))


def same_content(a: str, b: str) -> bool:
    """Equal but for the workflow-run link, which every run changes."""

    def strip(body: str) -> str:
        lines = body.rstrip("\n").split("\n")
        return "\n".join(line for line in lines if not line.startswith(RUN_LINK_PREFIX))

    return strip(a) == strip(b)


@dataclass(frozen=True)
class Commit:
    """The commit the leaderboard describes (the PR's head), linked where the server is known."""

    sha: str
    url: str | None = None


@dataclass(frozen=True)
class Composed:
    text: str
    shown_models: int
    pairwise: bool  # any pairwise comparison shown
    categories: bool
    leader_pairs: int = 0
    neighbour_pairs: int = 0
    other_pairs: int = 0


# --- the pieces ---------------------------------------------------------------------------------


def _inline(text: str) -> str:
    """An id in running text (outside a table)."""
    return md_code(text, table=False)


def _oriented(pair: PairwiseDiff, first: str) -> tuple[float, float, float]:
    """The pair's difference, CI ends, as ``first`` minus the other model."""
    if pair.model_a == first:
        return pair.mean_diff, pair.ci_lo, pair.ci_hi
    return -pair.mean_diff, -pair.ci_hi, -pair.ci_lo


def _names(ids: Sequence[str]) -> str:
    shown = [_inline(i) for i in ids]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def verdict(board: Leaderboard) -> str:
    """One sentence: which model is best, and is it clearly best? Full ids."""
    rows = board.rows
    if not rows:
        return "_No eval runs: nothing to rank._"
    first = rows[0].model_id
    if len(rows) == 1:
        return f"{_inline(first)} is the only model: there is nothing to compare it with."
    if not board.pairs_computed:
        return f"{_inline(first)} ranks first; pairwise comparisons were not computed."
    level = confidence_label(board.alpha)
    second = board.pair(1, 2)
    d, lo, hi = _oriented(second, first)
    if second.n_shared == 0:
        gap = (
            f"the top two ({_inline(first)} and {_inline(rows[1].model_id)}) share no task, so they cannot be compared"
        )
    else:
        shown, ci, _ = difference(d, lo, hi, second.significant)
        evidence = f"({level} CI {ci}, {count(second.n_shared, 'shared task')})"
        if d < 0:
            # Ranked first on its own tasks, behind on the ones they share (the two ran different sets).
            gap = f"is behind {_inline(rows[1].model_id)} on the tasks both ran: {shown} {evidence}"
        else:
            gap = f"leads {_inline(rows[1].model_id)} by {shown} {evidence}"
    top = board.top_group
    if top == (first,):
        return f"**{_inline(first)} is best**, significantly ahead of every other model: it {gap}."
    if first not in top:
        ahead = [p.model_a for p in board.resolution()[1] if p.significant and p.model_a != first]
        return (
            f"{_inline(first)} ranks first by {board.rank_by}, but {_names(ahead[:TOP_GROUP_NAMED])} "
            "is significantly ahead of it on mean score."
        )
    named = list(top[:TOP_GROUP_NAMED])
    more = len(top) - len(named)
    group = _names(named) if not more else ", ".join(_inline(i) for i in named) + f" and {more} more"
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
                f"about {second.clusters_needed:,} clusters of ~{_cluster_size(second)} tasks would separate the "
                f"top two (they share {second.n_clusters:,} clusters)"
            )
    elif second.tasks_needed is not None and second.n_clusters is None and second.tasks_needed <= second.n_shared:
        resolve = f"their {second.n_shared:,} shared tasks are not enough to separate the top two at this level"
    elif second.tasks_needed is not None and second.n_clusters is None:
        resolve = (
            f"about {second.tasks_needed:,} shared tasks would separate the top two (they share {second.n_shared:,})"
        )
    else:
        resolve = "too few shared tasks to say how many would separate the top two"
    if set(top) == {first, rows[1].model_id}:
        # Two: name each once.
        return f"**No clear winner**: {_inline(first)} {gap}, too close to call: {resolve}."
    return f"{tied}; {_inline(first)} {gap}; {resolve}."


def _cluster_size(pair: PairwiseDiff) -> str:
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


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


@dataclass(frozen=True)
class _Pieces:
    """Every table row pre-rendered once; documents are slices of these."""

    row_head: str
    rows: list[str]
    leader_head: str
    leader: list[str]
    neighbour_head: str
    neighbours: list[str]
    other_head: str
    others: list[str]
    categories: str
    extended: bool


def _ranking(board: Leaderboard, label: dict[str, str]) -> tuple[str, list[str]]:
    """The leaderboard table's head and its rows, one per model."""
    rows = board.rows
    decimals = decimals_for(r.mean_score for r in rows)
    most = max(r.tasks_completed for r in rows)
    head = "\n".join(
        [
            _row(["Rank", "Model", "Mean", f"{confidence_label(board.alpha)} CI", "vs next", "Win rate", "Tasks"]),
            "|:---:|:------|-----:|:------:|------:|-----:|-----:|",
        ]
    )
    lines = []
    for k, r in enumerate(rows):
        vs_next = DASH
        if board.pairs_computed and k + 1 < len(rows):
            pair = board.pair(k + 1, k + 2)
            d, lo, hi = _oriented(pair, r.model_id)
            if pair.n_shared:
                shown, _, _ = difference(d, lo, hi, pair.significant)
                vs_next = f"{shown} {CHECK if pair.significant else TIED}"
        ci = r.ci_note or interval(r.mean_ci_lo, r.mean_ci_hi, decimals)
        cells = [rank_range(r.rank_lo, r.rank_hi, k + 1), md_code(label[r.model_id]), number(r.mean_score, decimals)]
        lines.append(_row([*cells, ci, vs_next, number(r.win_rate), tasks_cell(r.tasks_completed, most)]))
    return head, lines


def _pieces(board: Leaderboard) -> _Pieces:
    rows = board.rows
    label = labels([r.model_id for r in rows])
    level = confidence_label(board.alpha)
    extended = False

    def model(i: str) -> str:
        return md_code(label[i])

    row_head, row_lines = _ranking(board, label)
    p_head = "p (Holm)" if board.correction == "holm" else "p"

    def decision(pair: PairwiseDiff) -> str:
        if pair.significant:
            return f"{CHECK} yes"
        reason = reason_text(pair.reason) if pair.reason else "not significant"
        if pair.clusters_needed is not None and pair.n_shared and pair.n_clusters is not None:
            if pair.clusters_needed <= pair.n_clusters:
                reason += f"; {pair.n_clusters:,} shared clusters not enough"
            else:
                reason += f"; ~{pair.clusters_needed:,} clusters of ~{_cluster_size(pair)} tasks would tell"
        elif pair.n_shared and pair.n_clusters is None:
            words = needed_words(pair.tasks_needed, pair.n_shared, short=True)
            if words:
                reason += f"; {words}"
        return f"no: {reason}"

    leader_head = "\n".join(
        [
            _row(["Rank", "Model", "Δ (leader − model)", f"{level} CI", p_head, "Significant", "Shared"]),
            "|:---:|:------|------:|:------:|----:|:------|-----:|",
        ]
    )
    leader_lines: list[str] = []
    neighbour_lines: list[str] = []
    other_lines: list[str] = []
    if board.pairs_computed and len(rows) > 1:
        first = rows[0].model_id
        for j in range(2, len(rows) + 1):
            pair = board.pair(1, j)
            d, lo, hi = _oriented(pair, first)
            shown, ci, ext = difference(d, lo, hi, pair.significant)
            extended |= ext
            leader_lines.append(
                _row(
                    [
                        rank_range(rows[j - 1].rank_lo, rows[j - 1].rank_hi, j),
                        model(rows[j - 1].model_id),
                        shown,
                        ci,
                        p_value(pair.p_adjusted, board.alpha),
                        decision(pair),
                        str(pair.n_shared),
                    ]
                )
            )

        def pair_line(i: int, j: int) -> str:
            nonlocal extended
            pair = board.pair(i, j)
            d, lo, hi = _oriented(pair, rows[i - 1].model_id)
            shown, ci, ext = difference(d, lo, hi, pair.significant)
            extended |= ext
            higher, lower = model(rows[i - 1].model_id), model(rows[j - 1].model_id)
            cells = [higher, lower, shown, ci, p_value(pair.p_adjusted, board.alpha)]
            return _row([f"{i} v {j}", *cells, decision(pair)])

        neighbour_lines = [pair_line(i, i + 1) for i in range(2, len(rows))]
        budget = max(0, PAIRS_SHOWN - len(leader_lines) - len(neighbour_lines))
        others = ((i, j) for i in range(2, len(rows) + 1) for j in range(i + 2, len(rows) + 1))
        other_lines = [pair_line(i, j) for i, j in itertools.islice(others, budget)]
    pair_head = [
        _row(["Ranks", "Higher", "Lower", "Δ mean", f"{level} CI", p_head, "Significant"]),
        "|:---:|:------|:------|------:|:------:|----:|:------|",
    ]
    return _Pieces(
        row_head=row_head,
        rows=row_lines,
        leader_head=leader_head,
        leader=leader_lines,
        neighbour_head="\n".join(pair_head),
        neighbours=neighbour_lines,
        other_head="\n".join(pair_head),
        others=other_lines,
        categories=_categories(board, label),
        extended=extended,
    )


def _categories(board: Leaderboard, label: dict[str, str]) -> str:
    """Categories as rows: tasks, the best model in it, and the top models' means."""
    if not board.categories or not board.rows:
        return ""
    top = board.rows[:CATEGORY_MODELS]
    lines = [
        "Columns " + ", ".join(f"{ORDINAL[k]}: {_inline(label[r.model_id])}" for k, r in enumerate(top)) + ".",
        "",
        _row(["Category", "Tasks", "Best", *ORDINAL[: len(top)]]),
        "|:------|-----:|:------|" + "-----:|" * len(top),
    ]
    for c in board.categories:
        n = board.category_tasks.get(c, 0)
        tasks = f"{n} ⚠" if n < FEW_CATEGORY_TASKS else str(n)
        scored = [r for r in board.rows if c in r.categories]
        best = max(scored, key=lambda r: round(r.categories[c], 9), default=None)
        best_cell = DASH
        if best is not None:
            top_mean = round(best.categories[c], 9)
            # Naming one of several equal bests alone would say it beat the others.
            tied = sum(1 for r in scored if round(r.categories[c], 9) == top_mean) - 1
            best_cell = f"{md_code(label[best.model_id])} {number(best.categories[c])}"
            best_cell += f" (tied with {tied} more)" if tied else ""
        cells = [number(r.categories[c]) if c in r.categories else DASH for r in top]
        lines.append(_row([md_code(c), tasks, best_cell, *cells]))
    return "\n".join(lines)


def pairs_note(board: Leaderboard) -> str:
    """The significance rule, and how many pairs were tested at what level."""
    table = board.pairs
    level = f"alpha = {board.alpha:g} per pair"
    p = "p"
    if board.correction == "holm":
        level = (
            f"family-wise alpha = {board.alpha:g} (Holm's step-down over the {table.family:,} pairs whose test "
            f"can reach {board.alpha:g})"
        )
        p = "a Holm-adjusted p"
    if board.clustering is not None:
        return (
            f"Pairwise: {table.tested:,} pair{'s' if table.tested != 1 else ''} tested at {level}; "
            f"{int(table.significant.sum()):,} significant. "
            "Significant means the CR2 cluster-robust CI of the mean difference excludes 0 and the cluster "
            f"sign-flip test (each cluster's summed difference flips sign) gives {p} <= {board.alpha:g}. "
            f"Below {min_tasks(board.alpha)} shared clusters no sign-flip test can reach {board.alpha:g}: "
            "nothing is significant."
        )
    return (
        f"Pairwise: {table.tested:,} pair{'s' if table.tested != 1 else ''} tested at {level}; "
        f"{int(table.significant.sum()):,} significant. "
        "Significant means the paired bootstrap CI of the per-task difference excludes 0 and the exact "
        f"paired permutation test (sign flips; McNemar for 0/1 scores) gives {p} <= {board.alpha:g}. "
        f"Below {min_tasks(board.alpha)} shared tasks no sign-flip test can reach {board.alpha:g}. "
        '"Tasks would tell" is a normal-approximation estimate at the level in force for the pair '
        + (
            "(with Holm, alpha / (m − r) once r of the m pairs are separated)."
            if board.correction == "holm"
            else f"({board.alpha:g}: each pair on its own)."
        )
    )


def cluster_notes(board: Leaderboard) -> list[str]:
    """How many clusters the statistics treated as units, with a warning when they are few or unequal;
    without clustering, the categories' design effect (issue 15)."""
    out: list[str] = []
    c = board.clustering
    if c is not None:
        df = f"{c.min_df:.3g}" if math.isfinite(c.min_df) else "none"
        out.append(
            f"**Clustered by {c.by}**: {c.count:,} clusters of {board.n_tasks:,} tasks (largest "
            f"{md_code(c.largest)}, {c.largest_share:.0%} of tasks). Each model's CI is the CR2 cluster-robust "
            "t-interval with Bell-McCaffrey degrees of freedom (Wilson's with the design-effect-adjusted n for "
            f"0/1 scores); pairs and the baseline flip clusters, not tasks. Smallest effective df: {df}."
        )
        if c.warns:
            why = []
            if c.largest_share > LARGEST_SHARE_WARNING:
                why.append(f"the largest cluster holds {c.largest_share:.0%} of the tasks")
            if not c.min_df >= FEW_DF:
                why.append(f"the effective degrees of freedom are {df} (< {FEW_DF})")
            out.append(
                f"⚠ Few effective clusters: {' and '.join(why)}; intervals are wide and few differences can be "
                "significant — that is the suite's resolution, not noise in the numbers."
            )
    elif board.design is not None:
        d = board.design
        icc = f"{d.icc_lo:.2f}" if round(d.icc_lo, 2) == round(d.icc_hi, 2) else f"{d.icc_lo:.2f}-{d.icc_hi:.2f}"
        line = (
            f"Design effect of the {d.categories:,} categories: {d.design_effect:.2g} (intra-category correlation "
            f"of scores {icc})"
        )
        if d.warns:
            line += (
                f": if tasks in a category are related, the intervals are about {math.sqrt(d.design_effect):.2g}x "
                "too narrow and some differences not real; set `cluster-by: category` (CLI `--cluster-by "
                "category`) to treat each category as one unit."
            )
        else:
            line += ": below 2, treating tasks as independent costs little."
        out.append(line)
    return out


def scope_line(board: Leaderboard) -> str | None:
    """Under the leaderboard: how far its claims hold together, and what the suite can resolve."""
    if not board.pairs_computed or len(board.rows) < 2:
        return None
    table = board.pairs
    if board.correction == "holm":
        scope = (
            "Rank ranges, the top group, the verdict, vs next and every pairwise decision hold together: the "
            f"chance of any false claim in this table is at most {board.alpha:g} (Holm's step-down over "
            f"{count(table.family, 'pair')})."
            if table.family
            else f"No pair's test can reach {board.alpha:g} at this size, so no pair is separated and every rank "
            "range is the whole table."
        )
    else:
        scope = (
            f"Per-pair claims (`pairwise-correction: none`): each pair is tested at {board.alpha:g} on its own, so "
            f'among {count(table.tested, "pair")} some false "significant" is expected; rank ranges and the top '
            "group are per pair too."
        )
    power = board.detectable()
    level = f" {detectable_sentence(power)}" if power is not None else ""
    if power is not None and power.unit == "cluster" and not power.df >= FEW_DF:
        level = level.removesuffix(".") + " (see ⚠ Few effective clusters below)."
    return f"<sub>{scope}{level}</sub>"


def notes(board: Leaderboard, *, extended: bool) -> list[str]:
    """What a reader must know to read the numbers right."""
    level = confidence_label(board.alpha)
    if board.clustering is not None:
        mean = f"**Mean** over each model's tasks with a {level} cluster-robust CI (rounded outward). "
    else:
        mean = f"**Mean** over each model's tasks with a {level} percentile bootstrap CI ({board.b:,} resamples, "
        mean += "rounded outward)"
        mean += "; 0/1 scores: Wilson's score interval. " if board.binary_models else ". "
    out = [
        mean + "`n=1` / `all equal`: a CI from one task or equal scores tells nothing. "
        "**Rank** is a range: 1 + the models significantly ahead, to M − the models significantly behind. "
        f"**vs next**: the gap in mean to the next row on the tasks both ran, {CHECK} significant, "
        f"{TIED} not. **Tasks** `40/41`: fewer than the most-covered model.",
        "**Win rate**: share of a model's tasks on which it has the top score; ties each win."
        + (
            f" {board.all_tied_tasks:,} of {board.n_tasks:,} tasks were tied by every model that ran them "
            "(e.g. none solved them): each counts as a win for all of them."
            if board.all_tied_tasks
            else ""
        ),
    ]
    if board.pairs_computed and len(board.pairs):
        out.append(pairs_note(board))
    out.extend(cluster_notes(board))
    if extended:
        out.append(
            f"{EXTENDED} The {'cluster-robust' if board.clustering is not None else 'bootstrap'} interval "
            "excluded 0 but the exact test did not confirm the difference: "
            "the interval is shown extended to 0."
        )
    if any(n < FEW_CATEGORY_TASKS for n in board.category_tasks.values()):
        out.append(f"⚠ A category with fewer than {FEW_CATEGORY_TASKS} tasks: its means say little.")
    if board.weights_ignored and board.task_weights == "apply":
        out.append(
            "**Task weights applied**: means, intervals and tests weigh each task by its weight (Kish's effective "
            "number of tasks sizes tasks needed); win rate is still a share of tasks."
        )
    elif board.weights_ignored:
        out.append(
            "Some runs carry a weight other than 1.0: weights were ignored, every task counts equally "
            "(`task-weights: apply` applies them)."
        )
    return out


# --- assembly -----------------------------------------------------------------------------------


def log_text(board: Leaderboard, *, lead: str | None = None) -> str:
    """The verdict and the whole ranking, for the step's log: the comment's own words and numbers."""
    if not board.rows:
        return verdict(board)
    head, lines = _ranking(board, labels([r.model_id for r in board.rows]))
    return "\n\n".join([lead or verdict(board), "\n".join([head, *lines])])


def _details(summary: str, body: str) -> str:
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"


def _assemble(
    board: Leaderboard,
    pieces: _Pieces,
    head: Sequence[str],
    tail: Sequence[str],
    *,
    rows: int,
    leader: int,
    neighbours: int,
    others: int,
    categories: bool,
    elsewhere: str,
) -> str:
    n = len(pieces.rows)
    parts = list(head)
    open_rows = min(TOP_ROWS, rows)
    parts.append("\n".join([pieces.row_head, *pieces.rows[:open_rows]]))
    scope = scope_line(board)
    if scope is not None:
        parts.append(scope)
    if rows > open_rows:
        parts.append(
            _details(
                # Rows, not ranks: a row's rank is a range (row 11 may rank 8–11).
                f"Rows {open_rows + 1}–{rows}" + (f" of {n}" if rows < n else ""),
                "\n".join([pieces.row_head, *pieces.rows[open_rows:rows]]),
            )
        )
    pair_parts = []
    if leader:
        pair_parts.append(
            "**The leader against every model**\n\n" + "\n".join([pieces.leader_head, *pieces.leader[:leader]])
        )
    if neighbours:
        pair_parts.append(
            "**Each model against the next**\n\n" + "\n".join([pieces.neighbour_head, *pieces.neighbours[:neighbours]])
        )
    if others:
        pair_parts.append("**Other pairs**\n\n" + "\n".join([pieces.other_head, *pieces.others[:others]]))
    if pair_parts:
        shown = leader + neighbours + others
        parts.append(
            _details(f"Pairwise comparisons ({shown:,} of {len(board.pairs):,} pairs)", "\n\n".join(pair_parts))
        )
    if categories and pieces.categories:
        parts.append(_details(f"Categories ({len(board.categories)})", pieces.categories))
    missing = []
    if rows < n:
        missing.append(f"{n - rows} more models (rows {rows + 1}–{n})")
    left_pairs = len(board.pairs) - leader - neighbours - others
    if board.pairs_computed and left_pairs > 0:
        missing.append(f"{left_pairs:,} of the {len(board.pairs):,} pairs")
    if not categories and pieces.categories:
        missing.append("the categories")
    if missing:
        parts.append(f"> [!NOTE]\n> Not shown here: {', '.join(missing)}. {elsewhere}")
    parts.append("\n".join(f"- {note}" for note in notes(board, extended=pieces.extended)))
    parts.extend(tail)
    return "\n\n".join(parts) + "\n"


def _largest(low: int, high: int, fits: Callable[[int], bool]) -> int:
    """The largest k in [low, high] with fits(k), given fits is monotone and fits(low)."""
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def compose(
    board: Leaderboard,
    *,
    head: Sequence[str],
    tail: Sequence[str] = (),
    limit: int,
    measure: Callable[[str], int],
    elsewhere: str,
) -> Composed:
    """The fullest document that fits ``limit``, keeping what fits in priority order."""
    if not board.rows:
        return Composed("\n\n".join([*head, *tail]) + "\n", 0, False, False)
    pieces = _pieces(board)
    n = len(pieces.rows)
    size = {
        "rows": n,
        "leader": len(pieces.leader),
        "neighbours": len(pieces.neighbours),
        "others": len(pieces.others),
        "categories": 1 if pieces.categories else 0,
    }

    def text(**counts: int) -> str:
        c = {**size, **counts}
        return _assemble(
            board, pieces, head, tail, rows=c["rows"], leader=c["leader"], neighbours=c["neighbours"],
            others=c["others"], categories=bool(c["categories"]), elsewhere=elsewhere,
        )  # fmt: skip

    def done(**counts: int) -> Composed:
        c = {**size, **counts}
        return Composed(
            text(**counts), c["rows"], bool(c["leader"] + c["neighbours"] + c["others"]), bool(c["categories"]),
            c["leader"], c["neighbours"], c["others"],
        )  # fmt: skip

    if measure(text()) <= limit:
        return done()
    # The core that must stay: the open rows and #1 against every model (at least against #2).
    kept = {"rows": min(TOP_ROWS, n), "leader": size["leader"], "neighbours": 0, "others": 0, "categories": 0}

    def fits(**change: int) -> bool:
        return measure(text(**{**kept, **change})) <= limit

    if not fits():
        kept["leader"] = _largest(min(1, size["leader"]), size["leader"], lambda k: fits(leader=k))
        if not fits():
            kept["rows"] = _largest(1, kept["rows"], lambda k: fits(rows=k))
            if not fits():
                return Composed(_without_table(head, tail, limit, measure, elsewhere), 0, False, False)
        return done(**kept)
    # Then, each only if it fits beside what is kept: the other rows, neighbours, categories, other pairs.
    kept["rows"] = _largest(kept["rows"], n, lambda k: fits(rows=k))
    kept["neighbours"] = _largest(0, size["neighbours"], lambda k: fits(neighbours=k))
    if size["categories"] and fits(categories=1):
        kept["categories"] = 1
    kept["others"] = _largest(0, size["others"], lambda k: fits(others=k))
    return done(**kept)


def _without_table(
    head: Sequence[str], tail: Sequence[str], limit: int, measure: Callable[[str], int], elsewhere: str
) -> str:
    """The head and tail with no table; a section of the head that does not fit either is left out, and said."""
    note = f"The leaderboard is too large to show here. {elsewhere}"
    kept: list[str] = []
    left_out = 0
    for part in head:
        trial = [*kept, part]
        if measure("\n\n".join([*trial, note, *tail]) + "\n") <= limit:
            kept = trial
        else:
            left_out += 1
    if left_out:
        note = f"The leaderboard and {count(left_out, 'section')} above it are too large to show here. {elsewhere}"
    return "\n\n".join([*kept, note, *tail]) + "\n"


def _title(key: str | None, title: str) -> list[str]:
    head = [marker(key)] if key is not None else []
    if title:
        head.append(f"## {md_text(truncate(title, TITLE_WIDTH))}")
    return head


def _head(
    key: str | None,
    title: str,
    board: Leaderboard,
    commit: Commit | None,
    sections: Sequence[str],
    lead: str | None = None,
) -> list[str]:
    head = _title(key, title)
    head.append(lead or verdict(board))
    if board.rows:
        head.append(info_line(board, commit))
    head.extend(sections)
    if sections and board.rows and not sections[-1].startswith("### "):
        head.append("### Leaderboard")  # so the table is not read as the last section's
    return head


def _run_link(run_url: str | None) -> list[str]:
    return [f"{RUN_LINK_PREFIX}{run_url})</sub>"] if run_url else []


def comment_body(
    board: Leaderboard,
    *,
    key: str,
    title: str,
    run_url: str | None,
    sections: Sequence[str] = (),
    commit: Commit | None = None,
    lead: str | None = None,
    summary: Composed | None = None,
) -> Composed:
    """The PR comment.

    ``sections`` (markdown blocks: the baseline comparison, the composite ranking) come right
    under the verdict, before the leaderboard, and are never dropped for size; ``lead``
    replaces the verdict (a composite ranking's own first sentence). ``summary``: the job
    summary as written (None: none was), so that the comment says truly what it holds.
    """
    return compose(
        board,
        head=_head(key, title, board, commit, sections, lead),
        tail=_run_link(run_url),
        limit=COMMENT_LIMIT,
        measure=comment_length,
        elsewhere=_elsewhere(board, summary),
    )


def _and(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _elsewhere(board: Leaderboard, summary: Composed | None) -> str:
    """Where what a comment leaves out really is: the job summary only for what it holds."""
    n = len(board.rows)
    full = "`leaderboard.md` (the `markdown` output) has every model" + (" and category" if board.categories else "")
    if board.pairs_computed and len(board.pairs) > PAIRS_SHOWN:
        full += f" and {PAIRS_SHOWN:,} of the pairs"
    tail = f"{full}; the JSON report (the `report` output) has everything."
    if summary is None or not summary.shown_models:
        return tail[0].upper() + tail[1:]
    has = ["every model" if summary.shown_models >= n else f"the top {summary.shown_models:,} models"]
    pairs = summary.leader_pairs + summary.neighbour_pairs + summary.other_pairs
    if pairs:
        has.append("every pair" if pairs >= len(board.pairs) else f"{pairs:,} of the {len(board.pairs):,} pairs")
    if board.categories:
        has.append("the categories" if summary.categories else "not the categories")
    return f"The job summary has {_and(has)}; {tail}"


def summary_markdown(
    board: Leaderboard,
    *,
    title: str,
    sections: Sequence[str] = (),
    commit: Commit | None = None,
    lead: str | None = None,
) -> Composed:
    # Keep a little room for the lines the action itself appends to the summary.
    return compose(
        board,
        head=_head(None, title, board, commit, sections, lead),
        limit=SUMMARY_LIMIT - 16_384,
        measure=summary_length,
        elsewhere=(
            "`leaderboard.md` (the `markdown` output) has every model and category; "
            "the JSON report (the `report` output) has everything."
        ),
    )


def full_markdown(
    board: Leaderboard,
    *,
    title: str | None = None,
    sections: Sequence[str] = (),
    commit: Commit | None = None,
    lead: str | None = None,
) -> str:
    """Everything, for the markdown file and the CLI: no limit applies to a file."""
    return compose(
        board,
        head=_head(None, title or "", board, commit, sections, lead),
        limit=2**62,
        measure=len,
        elsewhere=f"The JSON report has all {len(board.pairs):,} pairs.",
    ).text


render_report = full_markdown


def problems_markdown(problems: Sequence[Problem], *, limit: int | None = MAX_PROBLEMS_SHOWN) -> str:
    shown = problems if limit is None else problems[:limit]
    lines = ["| File | Line | Field | Problem |", "|------|-----:|-------|---------|"]
    for p in shown:
        lines.append(
            f"| {md_code(truncate(p.file or '', CELL_WIDTH))} | {p.line if p.line is not None else ''} "
            f"| {md_code(p.field or '')} | {md_code(truncate(p.message, CELL_WIDTH))} |"
        )
    text = "\n".join(lines)
    if len(shown) < len(problems):
        text += f"\n\n…and {len(problems) - len(shown)} more: see the job summary and the step log."
    return text


def rejected_body(
    problems: Sequence[Problem], *, key: str, title: str, run_url: str | None, what: str = "in the EvalRun files"
) -> str:
    """What the sticky comment says when the latest run failed (``what``: where), within the size limit."""
    count = len(problems)
    shown = MAX_PROBLEMS_SHOWN
    while True:
        parts = [
            *_title(key, title),
            f"> [!CAUTION]\n> **The latest eval run was rejected**: {count} problem{'s' if count != 1 else ''} "
            f"{what}. No leaderboard is shown until a run succeeds.",
            problems_markdown(problems, limit=shown),
            *_run_link(run_url),
        ]
        body = "\n\n".join(parts) + "\n"
        if comment_length(body) <= COMMENT_LIMIT or shown == 0:
            return body
        shown //= 2


def render_markdown(
    rows: Sequence[LeaderboardRow] | Leaderboard,
    alpha: float = 0.05,
    *,
    pairs: Sequence[PairwiseDiff] | None = None,
) -> str:
    """The leaderboard table (and, given ``pairs`` or a :class:`Leaderboard`, the other tables)."""
    if isinstance(rows, Leaderboard):
        return full_markdown(rows)
    parts = [leaderboard_table(rows, alpha)]
    if pairs:
        parts.append(pairwise_table(pairs, alpha))
    return "\n\n".join(parts) + "\n"
