"""The leaderboard's tables, pre-rendered row by row so that the size fitting keeps or leaves whole rows."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from ..records import LeaderboardRow, PairwiseDiff, Why
from ..stats.analysis import Leaderboard
from .formatting import (
    DASH,
    decimals_for,
    delta_unit,
    difference,
    interval,
    labels,
    no_interval,
    number,
    p_value,
    rank_range,
    tasks_cell,
)
from .markdown import confidence_label, md_code
from .reasons import no_best_words, reason_text
from .verdict import ORDINAL, inline, oriented

PAIRS_SHOWN = 1000  # in a document without a size limit; the JSON report has every pair
FEW_CATEGORY_TASKS = 5
CATEGORY_MODELS = 3
CHECK, TIED = "✓", "≈"


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


@dataclass(frozen=True)
class Pieces:
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


def ranking(board: Leaderboard, label: dict[str, str]) -> tuple[str, list[str]]:
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
            d, lo, hi = oriented(pair, r.model_id)
            if pair.n_shared:
                shown, _, _ = difference(d, lo, hi, pair.significant)
                vs_next = f"{shown} {CHECK if pair.significant else TIED}"
        ci = r.ci_note or interval(r.mean_ci_lo, r.mean_ci_hi, decimals)
        cells = [rank_range(r.rank_lo, r.rank_hi, k + 1), md_code(label[r.model_id]), number(r.mean_score, decimals)]
        lines.append(_row([*cells, ci, vs_next, number(r.win_rate), tasks_cell(r.tasks_completed, most)]))
    return head, lines


def table_pieces(board: Leaderboard) -> Pieces:
    rows = board.rows
    label = labels([r.model_id for r in rows])
    level = confidence_label(board.alpha)
    extended = False

    def model(i: str) -> str:
        return md_code(label[i])

    row_head, row_lines = ranking(board, label)
    p_head = "p (Holm)" if board.correction == "holm" else "p"

    def decision(pair: PairwiseDiff) -> str:
        if pair.significant:
            return f"{CHECK} yes"
        reason = reason_text(pair.reason) if pair.reason else "not significant"
        if (pair.ci_lo > 0 or pair.ci_hi < 0) and pair.reason is not None and pair.reason.why is Why.TEST:
            # The interval alone would say yes: say in words that the test did not confirm it.
            reason = f"the test did not confirm it ({reason})"
        return f"no: {reason}"

    leader_head = "\n".join(
        [
            _row(
                ["Rank", "Model", f"Δ (leader − model){delta_unit()}", f"{level} CI", p_head, "Significant", "Shared"]
            ),
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
            d, lo, hi = oriented(pair, first)
            shown, ci, ext = difference(d, lo, hi, pair.significant, missing=no_interval(pair.n_clusters))
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
            d, lo, hi = oriented(pair, rows[i - 1].model_id)
            shown, ci, ext = difference(d, lo, hi, pair.significant, missing=no_interval(pair.n_clusters))
            extended |= ext
            higher, lower = model(rows[i - 1].model_id), model(rows[j - 1].model_id)
            cells = [higher, lower, shown, ci, p_value(pair.p_adjusted, board.alpha)]
            return _row([f"{i} v {j}", *cells, decision(pair)])

        neighbour_lines = [pair_line(i, i + 1) for i in range(2, len(rows))]
        budget = max(0, PAIRS_SHOWN - len(leader_lines) - len(neighbour_lines))
        others = ((i, j) for i in range(2, len(rows) + 1) for j in range(i + 2, len(rows) + 1))
        other_lines = [pair_line(i, j) for i, j in itertools.islice(others, budget)]
    pair_head = [
        _row(["Ranks", "Higher", "Lower", f"Δ mean{delta_unit()}", f"{level} CI", p_head, "Significant"]),
        "|:---:|:------|:------|------:|:------:|----:|:------|",
    ]
    return Pieces(
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
    level = confidence_label(board.alpha)
    lines = [
        "Columns "
        + ", ".join(f"{ORDINAL[k]}: {inline(label[r.model_id])}" for k, r in enumerate(top))
        + f"; each the model's mean over the category's tasks with its {level} CI.",
        "",
        _row(["Category", "Tasks", "Best", *ORDINAL[: len(top)]]),
        "|:------|-----:|:------|" + "-----:|" * len(top),
    ]
    tested = {t.category: t for t in board.category_best}
    for c in board.categories:
        n = board.category_tasks.get(c, 0)
        tasks = f"{n} ⚠" if n < FEW_CATEGORY_TASKS else str(n)
        scored = [r for r in board.rows if c in r.categories]
        best = max(scored, key=lambda r: round(r.categories[c], 9), default=None)
        best_cell = DASH
        claim = tested.get(c)
        if claim is not None and best is not None:
            best_cell = (
                f"{md_code(label[claim.leader])} {number(best.categories[c])}"
                if claim.named and claim.leader is not None
                else no_best_words(claim.why)
            )
        elif best is not None:
            top_mean = round(best.categories[c], 9)
            # Naming one of several equal bests alone would say it beat the others.
            tied = sum(1 for r in scored if round(r.categories[c], 9) == top_mean) - 1
            best_cell = f"{md_code(label[best.model_id])} {number(best.categories[c])}"
            best_cell += f" (tied with {tied} more)" if tied else ""
        cells = [_category_cell(r, c) for r in top]
        lines.append(_row([md_code(c), tasks, best_cell, *cells]))
    return "\n".join(lines)


def _category_cell(row: LeaderboardRow, category: str) -> str:
    """A model's category mean with its interval, or why it has none ("n=1": one task; "all equal")."""
    if category not in row.categories:
        return DASH
    mean = number(row.categories[category])
    if category in row.category_ci:
        return f"{mean} {interval(*row.category_ci[category])}"
    return f"{mean} ({row.category_ci_notes.get(category, 'no interval')})"
