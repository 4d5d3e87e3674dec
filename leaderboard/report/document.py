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

The pieces live in rooms of their own: :mod:`.protocol` (marker, limits), :mod:`.verdict` (the
first sentence and the line of what was compared), :mod:`.tables` (the pre-rendered rows),
:mod:`.notes` (the notes under the tables); the sections come from :mod:`.plan`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..records import LeaderboardRow, PairwiseDiff
from ..stats.analysis import Leaderboard
from ..validation import Problem
from .formatting import count, labels
from .markdown import leaderboard_table, md_code, md_text, pairwise_table, truncate
from .notes import notes, plain_words, scope_line, settings_line, warnings
from .protocol import (
    COMMENT_KEY,
    COMMENT_LIMIT,
    RUN_LINK_PREFIX,
    SUMMARY_LIMIT,
    Commit,
    comment_length,
    marker,
    same_content,
    summary_length,
)
from .tables import PAIRS_SHOWN, Pieces, ranking, table_pieces
from .verdict import info_line, verdict

# The protocol and the verdict are imported from here by the callers that predate their rooms.
__all__ = [
    "COMMENT_KEY",
    "COMMENT_LIMIT",
    "SUMMARY_LIMIT",
    "Commit",
    "Composed",
    "Framing",
    "comment_body",
    "comment_length",
    "compose",
    "full_markdown",
    "log_text",
    "marker",
    "problems_markdown",
    "rejected_body",
    "render_markdown",
    "render_report",
    "same_content",
    "summary_markdown",
    "verdict",
]

MAX_PROBLEMS_SHOWN = 50
TOP_ROWS = 10
TITLE_WIDTH = 200
CELL_WIDTH = 300
METHOD_PAGE = "`docs/statistics.md`"


@dataclass(frozen=True)
class Framing:
    """What frames each document of one run, from the section plan: ``outcome``, the first line (the pull
    request's outcome; None: no baseline and no required task); ``lead``, the sentence that replaces the
    verdict (a composite ranking's own; None: the verdict); ``method``, the sections' paragraphs for the one
    collapsed "How to read this" block."""

    outcome: str | None = None
    lead: str | None = None
    method: tuple[str, ...] = ()


NO_FRAMING = Framing()


@dataclass(frozen=True)
class Composed:
    text: str
    shown_models: int
    categories: bool
    leader_pairs: int = 0
    neighbour_pairs: int = 0
    other_pairs: int = 0


def log_text(board: Leaderboard, *, framing: Framing = NO_FRAMING) -> str:
    """The verdict and the whole ranking, for the step's log: the comment's own words and numbers."""
    if not board.rows:
        return verdict(board)
    head, lines = ranking(board, labels([r.model_id for r in board.rows]))
    return "\n\n".join([framing.lead or verdict(board), "\n".join([head, *lines])])


def how_to_read(board: Leaderboard, method: Sequence[str], *, extended: bool) -> str:
    """The one collapsed block about method: plain words first, then the method's names and figures."""
    parts = [plain_words(board, compared=any(m.startswith("**The baseline comparison**") for m in method))]
    parts.append(settings_line(board))
    scope = scope_line(board)
    if scope is not None:
        parts.append(scope.removeprefix("<sub>").removesuffix("</sub>"))
    parts.extend(method)
    parts.append("\n".join(f"- {note}" for note in notes(board, extended=extended)))
    parts.append(f"More on the method: {METHOD_PAGE} in the action's repository.")
    return "\n\n".join(parts)


def _details(summary: str, body: str) -> str:
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"


def _assemble(
    board: Leaderboard,
    pieces: Pieces,
    head: Sequence[str],
    tail: Sequence[str],
    *,
    rows: int,
    leader: int,
    neighbours: int,
    others: int,
    categories: bool,
    elsewhere: str,
    method: Sequence[str] = (),
) -> str:
    n = len(pieces.rows)
    parts = list(head)
    open_rows = min(TOP_ROWS, rows)
    parts.append("\n".join([pieces.row_head, *pieces.rows[:open_rows]]))
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
    parts.append(_details("How to read this", how_to_read(board, method, extended=pieces.extended)))
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
    method: Sequence[str] = (),
) -> Composed:
    """The fullest document that fits ``limit``, keeping what fits in priority order."""
    if not board.rows:
        return Composed("\n\n".join([*head, *tail]) + "\n", 0, False)
    pieces = table_pieces(board)
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
            others=c["others"], categories=bool(c["categories"]), elsewhere=elsewhere, method=method,
        )  # fmt: skip

    def done(**counts: int) -> Composed:
        c = {**size, **counts}
        return Composed(text(**counts), c["rows"], bool(c["categories"]), c["leader"], c["neighbours"], c["others"])

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
                return Composed(_without_table(head, tail, limit, measure, elsewhere), 0, False)
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
    framing: Framing,
) -> list[str]:
    head = _title(key, title)
    if framing.outcome:
        head.append(framing.outcome)
    # A warning that changes the answer is read with it, in the same paragraph, never as a footnote.
    head.append(" ".join([framing.lead or verdict(board), *warnings(board)]))
    if board.rows:
        head.append(info_line(board, commit))
    head.extend(sections)
    # A heading, so the table is not read as the last section's (a collapsed section needs none).
    shown = [s for s in sections if not s.startswith("<details>")]
    if shown and board.rows and not sections[-1].startswith("### "):
        head.append("### Leaderboard")
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
    framing: Framing = NO_FRAMING,
    summary: Composed | None = None,
) -> Composed:
    """The PR comment.

    ``sections`` (markdown blocks: the baseline comparison, the composite ranking) come right
    under the verdict, before the leaderboard, and are never dropped for size; ``framing`` gives
    the outcome line above them, the lead that replaces the verdict and the method block. ``summary``:
    the job summary as written (None: none was), so that the comment says truly what it holds.
    """
    return compose(
        board,
        head=_head(key, title, board, commit, sections, framing),
        tail=_run_link(run_url),
        limit=COMMENT_LIMIT,
        measure=comment_length,
        elsewhere=_elsewhere(board, summary),
        method=framing.method,
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
    framing: Framing = NO_FRAMING,
) -> Composed:
    # Keep a little room for the lines the action itself appends to the summary.
    return compose(
        board,
        head=_head(None, title, board, commit, sections, framing),
        method=framing.method,
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
    framing: Framing = NO_FRAMING,
) -> str:
    """Everything, for the markdown file and the CLI: no limit applies to a file."""
    return compose(
        board,
        head=_head(None, title or "", board, commit, sections, framing),
        method=framing.method,
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
