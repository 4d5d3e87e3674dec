"""The PR comment's body: a marked, size-bounded markdown document.

GitHub refuses a comment body over 65,536 characters. The body degrades in
whole sections, never inside a table: first the pairwise table goes, then the
category means, then rows from the bottom of the leaderboard; each time it
says what is missing and where to find it. The job summary uses the same
steps under its own 1 MiB limit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..statistics import Leaderboard
from ..validation import Problem
from .markdown import (
    categories_table,
    confidence_label,
    full_ids,
    leaderboard_table,
    md_code,
    md_text,
    notes,
    pairwise_table,
    ranks_of,
    selected_pairs,
    truncate,
)

COMMENT_LIMIT = 65_536
SUMMARY_LIMIT = 1024 * 1024  # bytes GitHub accepts in one step's summary
MARKER_PREFIX = "<!-- leaderboard-action:"
RUN_LINK_PREFIX = "<sub>[Workflow run]("
MAX_PROBLEMS_SHOWN = 50


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
class Composed:
    text: str
    shown_models: int
    pairwise: bool
    categories: bool


def _footer(board: Leaderboard) -> str:
    return (
        f"<sub>{confidence_label(board.alpha)} CI · {board.b} bootstrap resamples · seed {board.seed} · "
        f"{board.n_models} models · {board.n_tasks} tasks · {board.n_runs} runs</sub>"
    )


def _document(
    board: Leaderboard,
    *,
    head: Sequence[str],
    tail: Sequence[str],
    shown: int,
    pairwise: bool,
    categories: bool,
    ids: bool,
    elsewhere: str,
) -> str:
    parts = list(head)
    rows = board.rows[:shown]
    parts.append(leaderboard_table(rows, board.alpha))
    if ids and full_ids(rows):
        parts.append("Full model ids:\n\n" + full_ids(rows))
    missing = []
    if shown < len(board.rows):
        missing.append(f"{len(board.rows) - shown} more models (ranks {shown + 1}–{len(board.rows)})")
    if categories:
        parts.append("### Mean by category\n\n" + categories_table(rows, board.categories))
    elif board.categories:
        missing.append("the category means")
    if pairwise and board.pairs:
        listed = selected_pairs(board)
        parts.append("### Pairwise differences\n\n" + pairwise_table(listed, board.alpha, ranks=ranks_of(board.rows)))
        if len(listed) < len(board.pairs):
            missing.append(f"{len(board.pairs) - len(listed)} of the {len(board.pairs)} pairs")
    elif board.pairs:
        missing.append(f"the pairwise table ({len(board.pairs)} pairs)")
    if missing:
        parts.append(f"> [!NOTE]\n> Too large to show here: {', '.join(missing)}. {elsewhere}")
    parts.append("\n".join(f"- {note}" for note in notes(board)))
    parts.append(_footer(board))
    parts.extend(tail)
    return "\n\n".join(parts) + "\n"


def compose(
    board: Leaderboard,
    *,
    head: Sequence[str],
    tail: Sequence[str] = (),
    limit: int,
    measure: Callable[[str], int],
    elsewhere: str,
) -> Composed:
    """The fullest document that fits ``limit``: whole sections dropped, then bottom rows."""
    n = len(board.rows)
    if n == 0:
        text = "\n\n".join([*head, "_No eval runs: nothing to rank._", *tail]) + "\n"
        return Composed(text, 0, False, False)

    def build(shown: int, pairwise: bool, categories: bool, ids: bool = True) -> str:
        return _document(
            board, head=head, tail=tail, shown=shown, pairwise=pairwise, categories=categories, ids=ids,
            elsewhere=elsewhere,
        )  # fmt: skip

    for pairwise, categories in ((True, True), (False, True), (False, False)):
        text = build(n, pairwise, categories)
        if measure(text) <= limit:
            return Composed(text, n, pairwise, categories)
    for ids in (True, False):
        # Rows only make the document longer, so the largest count that fits is found by bisection.
        lo, hi = 0, n - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if measure(build(mid, False, False, ids)) <= limit:
                lo = mid
            else:
                hi = mid - 1
        if lo >= 1:
            return Composed(build(lo, False, False, ids), lo, False, False)
    text = "\n\n".join([*head, f"The leaderboard is too large to show here. {elsewhere}", *tail]) + "\n"
    return Composed(text, 0, False, False)


TITLE_WIDTH = 200
CELL_WIDTH = 300


def _head(key: str | None, title: str) -> list[str]:
    head = [marker(key)] if key is not None else []
    if title:
        head.append(f"## {md_text(truncate(title, TITLE_WIDTH))}")
    return head


def _run_link(run_url: str | None) -> list[str]:
    return [f"{RUN_LINK_PREFIX}{run_url})</sub>"] if run_url else []


def comment_body(
    board: Leaderboard, *, key: str, title: str, run_url: str | None, sections: Sequence[str] = ()
) -> Composed:
    """The PR comment. ``sections`` (markdown blocks: the baseline comparison, the composite ranking)
    come right under the title, before the leaderboard, and are never dropped for size."""
    return compose(
        board,
        head=[*_head(key, title), *sections],
        tail=_run_link(run_url),
        limit=COMMENT_LIMIT,
        measure=comment_length,
        elsewhere="The job summary of the workflow run has the rest; the JSON report (the `report` output) has all.",
    )


def summary_markdown(board: Leaderboard, *, title: str, sections: Sequence[str] = ()) -> Composed:
    # Keep a little room for the lines the action itself appends to the summary.
    return compose(
        board,
        head=[*_head(None, title), *sections],
        limit=SUMMARY_LIMIT - 16_384,
        measure=summary_length,
        elsewhere="The JSON report (the `report` output) has everything.",
    )


def full_markdown(board: Leaderboard, *, title: str, sections: Sequence[str] = ()) -> str:
    """Everything, for the markdown file: no limit applies to a file."""
    return compose(board, head=[*_head(None, title), *sections], limit=2**62, measure=len, elsewhere="").text


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
            *_head(key, title),
            f"> [!CAUTION]\n> **The latest eval run was rejected**: {count} problem{'s' if count != 1 else ''} "
            f"{what}. No leaderboard is shown until a run succeeds.",
            problems_markdown(problems, limit=shown),
            *_run_link(run_url),
        ]
        body = "\n\n".join(parts) + "\n"
        if comment_length(body) <= COMMENT_LIMIT or shown == 0:
            return body
        shown //= 2
