"""Which tasks moved, as markdown and as the JSON report's fields (the required tasks: :mod:`.required_tasks`).

Task changes: one collapsed ``<details>`` block per model with a task change, in the comparison's
order (regressions first, worst first; then drops within the tolerance, improvements, the rest).
Its summary line gives the counts first ("12 newly failing, 5 newly passing of 500 shared tasks;
3 of the 17 flip between trials"); inside, for 0/1 scores the task ids grouped by category, for
other scores the largest drops and gains with base → PR values; then the tasks on one side only.

Each document shows as much as it can: the comment at most ``COMMENT`` of each list and blocks
within ``COMMENT_SECTION_LIMIT`` (then one line per model, then a count), the job summary more,
``leaderboard.md`` everything; what is left out is counted and pointed at where it is. The JSON
report has every task.

Every id is shown whole through :func:`~leaderboard.report.markdown.md_code` (markdown) or
:func:`html_code` (inside ``<summary>``, where GitHub reads HTML, not markdown).
"""

from __future__ import annotations

import html
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress

import numpy as np
from numpy.typing import NDArray

from ..stats.comparison import Comparison, ModelChange
from ..stats.resampling import FloatArray
from ..stats.task_changes import ModelTaskChanges, Moves, TaskChanges
from .comparison import MARKS, ordered, utf16_length
from .formatting import DASH, MAX_DECIMALS, MINUS, count
from .history import FLAKY_MARK as FLAKY_ON_BASE
from .history import flaky_count_sentence, flaky_legend, flaky_mark
from .json_report import CompactRows, interleaved
from .markdown import md_code, visible

TITLE = "#### Which tasks moved"
FLAKY = "↻"
COMMENT_SECTION_LIMIT = 12_000  # UTF-16 units of the comment for this section
SUMMARY_SECTION_LIMIT = 192 * 1024  # bytes of the job summary


@dataclass(frozen=True)
class Detail:
    """How much of each list a document shows (None: all)."""

    ids: int | None  # task ids per direction, 0/1 scores
    rows: int | None  # rows per table, other scores
    one_side: int | None  # tasks only in one run


COMMENT = Detail(ids=30, rows=10, one_side=20)
SUMMARY = Detail(ids=1_000, rows=200, one_side=1_000)
FULL = Detail(ids=None, rows=None, one_side=None)

COMMENT_ELSEWHERE = (
    "the job summary and `leaderboard.md` (the `markdown` output) list more, "
    "the JSON report (`report` output, key `baseline.task_changes`) every task"
)
SUMMARY_ELSEWHERE = (
    "`leaderboard.md` (the `markdown` output) and the JSON report (key `baseline.task_changes`) list every task"
)


def html_code(text: str) -> str:
    """``text`` as ``<code>`` in HTML (a ``<summary>``): escaped, hidden characters shown.

    GitHub links no mention or reference inside ``<code>``; ``visible`` keeps line breaks,
    bidi and zero-width characters from hiding or reordering anything.
    """
    return f"<code>{html.escape(visible(text), quote=True)}</code>" if text else DASH


# Task ids recur in every model's lists: each is escaped once.
_inline = lru_cache(maxsize=1 << 16)(lambda text: md_code(text, table=False))
_cell = lru_cache(maxsize=1 << 16)(md_code)


def _n(k: int) -> str:
    return f"{k:,}"


def _value(x: float) -> str:
    text = f"{x:.3f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _delta(d: float) -> str:
    """Signed, with as many decimals (up to 12) as it takes not to print 0 for a move."""
    decimals = 3
    # A move of at least 0.001 never rounds to 0 at 3 decimals: the loop is for the smaller ones.
    while abs(d) < 0.001 and decimals < MAX_DECIMALS and round(abs(d), decimals) == 0:
        decimals += 1
    text = f"{abs(d):.{decimals}f}"
    return f"{MINUS if d < 0 else '+'}{text}"


def _values(base: float, pr: float) -> str:
    """base → PR, each with enough decimals to differ."""
    shown_base, shown_pr = f"{base:.3f}", f"{pr:.3f}"
    decimals = 3
    while decimals < MAX_DECIMALS and shown_base == shown_pr:
        decimals += 1
        shown_base, shown_pr = f"{base:.{decimals}f}", f"{pr:.{decimals}f}"
    return f"{shown_base} → {shown_pr}"


def counts_text(m: ModelTaskChanges) -> str:
    """ "12 newly failing, 5 newly passing of 500 shared tasks; 3 of the 17 flip between trials"."""
    down, up = ("newly failing", "newly passing") if m.binary else ("lower", "higher")
    parts = [f"{_n(len(m.drops))} {down}, {_n(len(m.gains))} {up} of {count(m.n_shared, 'shared task')}"]
    if m.n_shared == 0:
        parts = ["no shared task"]
    flaky = m.flaky_count
    if flaky is not None and m.moved:
        parts.append(f"{_n(flaky)} of the {_n(m.moved)} flip between trials")
    sides = []
    if m.only_run:
        sides.append(f"{_n(len(m.only_run))} only in this run")
    if m.only_baseline:
        sides.append(f"{_n(len(m.only_baseline))} only in the baseline")
    if sides:
        parts.append(", ".join(sides))
    return "; ".join(parts)


def _mark(flaky: bool) -> str:
    return f" {FLAKY}" if flaky else ""


@dataclass(frozen=True)
class OnBase:
    """The tasks that flip on the base branch with nothing changed (task id → flip rate), and where they ran
    (the branch; None: earlier runs given as files). A moved task among them is marked and counted apart."""

    rates: Mapping[str, float]
    branch: str | None


def _base_mark(task_id: str, on_base: OnBase | None) -> str:
    return flaky_mark(on_base.rates.get(task_id)) if on_base is not None else ""


def _grouped(
    moves: Moves, limit: int | None, *, binary_values: bool, on_base: OnBase | None = None
) -> tuple[list[str], int]:
    """0/1 flips as one line per category (most flips first), ids in task order; (lines, ids shown).

    Only the ids shown are formatted: the order is found by numpy over all of them.
    """
    totals = Counter(moves.categories)
    groups = sorted(totals, key=lambda c: (-totals[c], c))
    rank = {c: k for k, c in enumerate(groups)}
    n = len(moves)
    ranks = np.fromiter(map(rank.__getitem__, moves.categories), dtype=np.int64, count=n)
    # Task order within a category (the moves come largest first; for 0/1 scores all but trials tie).
    by_task = sorted(range(n), key=moves.task_ids.__getitem__)
    position = np.empty(n, dtype=np.int64)
    position[by_task] = np.arange(n)
    order = np.lexsort((position, ranks))
    shown = order if limit is None else order[:limit]
    flaky = moves.flaky
    lines: list[str] = []
    cells: list[str] = []
    current = None
    for k in shown.tolist():
        category = moves.categories[k]
        if category != current:
            if cells:
                lines.append(_category_line(current or "", cells, totals))
            current, cells = category, []
        cell = _inline(moves.task_ids[k]) + _mark(bool(flaky and flaky[k])) + _base_mark(moves.task_ids[k], on_base)
        if binary_values and not (moves.base[k] in (0.0, 1.0) and moves.pr[k] in (0.0, 1.0)):
            cell += f" ({_values(moves.base[k], moves.pr[k])})"
        cells.append(cell)
    if cells:
        lines.append(_category_line(current or "", cells, totals))
    return lines, len(shown)


def _category_line(category: str, cells: list[str], totals: Counter[str]) -> str:
    total = totals[category]
    of = f"{_n(len(cells))} of {_n(total)}" if len(cells) < total else _n(total)
    return f"- {_inline(category)} ({of}): " + ", ".join(cells)


def _plain_cells(texts: Sequence[str]) -> bool:
    """Every text is its own code span in a table (``md_code`` would fence it with one backtick and change
    nothing): not empty, printable ASCII, no backtick or pipe, no space first. Checked over all at once in C
    (joined by spaces: a text that starts with one shows as two spaces, or a space first; so does a double
    space inside one, which is then taken the slow way, as is any text that is not plain)."""
    flat = " ".join(texts)
    return (
        all(texts) and flat.isascii() and flat.isprintable() and "`" not in flat and "|" not in flat
        and not flat.startswith(" ") and "  " not in flat
    )  # fmt: skip


def _thousandths(values: FloatArray) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """``round(|v| × 1000)`` as Python's ``f"{v:.3f}"`` rounds it, and where that is known without formatting.

    ``|v| × 1000`` in floating point is within a ten-billionth of the exact product below 10^6, so it
    rounds as the exact value does unless it is that near a half; those (a tie is rounded on the exact
    binary value), NaN, infinities and |v| ≥ 1000 are left to Python (units 0, known False).
    """
    scaled = np.abs(values) * 1000.0
    with np.errstate(invalid="ignore"):
        known = (scaled < 999_999.0) & (np.abs(scaled - np.floor(scaled) - 0.5) > 1e-6)
    return np.where(known, np.rint(scaled), 0.0).astype(np.int64), known


@lru_cache(maxsize=8)
def _wholes(sign: str) -> NDArray[np.object_]:
    return np.array([f"{sign}{k}" for k in range(1000)], dtype=object)


@lru_cache(maxsize=8)
def _decimals(suffix: str) -> NDArray[np.object_]:
    return np.array([f".{k:03d}{suffix}" for k in range(1000)], dtype=object)


def _three_decimals(
    values: FloatArray, *, negative: str = "-", positive: str = "", suffix: str = ""
) -> tuple[list[str], list[str]]:
    """Each value as ``f"{v:.3f}"`` writes it, its sign ``negative`` or ``positive``, then ``suffix``: in two
    pieces, up to the point and from it on, taken from tables (formatting a float in Python is most of a
    table's time at millions of rows); the values :func:`_thousandths` leaves to Python, one by one."""
    units, known = _thousandths(values)
    head = np.where(np.signbit(values), _wholes(negative)[units // 1000], _wholes(positive)[units // 1000])
    tail = _decimals(suffix)[units % 1000]
    for k in np.flatnonzero(~known).tolist():
        v = float(values[k])
        text = f"{abs(v):.3f}"
        point = text.find(".") if "." in text else len(text)  # "nan" and "inf" have none
        head[k] = (negative if v < 0 or (v == 0 and math.copysign(1, v) < 0) else positive) + text[:point]
        tail[k] = text[point:] + suffix
    return head.tolist(), tail.tolist()


def _table(moves: Moves, limit: int | None, on_base: OnBase | None = None) -> str:
    """The table of moves, formatted a column at a time (a full document's may have millions of rows)."""
    rows = len(moves) if limit is None else min(limit, len(moves))
    head = "| Task | Category | Base → PR | Δ |\n|:-----|:---------|:---------:|--:|"
    if not rows:
        return head
    task_ids, base, pr = moves.task_ids[:rows], moves.base[:rows], moves.pr[:rows]
    tasks: Sequence[str] = task_ids
    fence = "`" if _plain_cells(task_ids) else ""  # a plain id is its own code span, in backticks
    marked = [*compress(range(rows), moves.flaky or ())]
    if on_base is not None:
        marked += compress(range(rows), map(on_base.rates.__contains__, task_ids))
    if marked or not fence:
        tasks = [f"`{t}`" for t in task_ids] if fence else list(map(_cell, task_ids))
        fence = ""
        for k in sorted(set(marked)):
            tasks[k] += _mark(bool(moves.flaky and moves.flaky[k])) + _base_mark(task_ids[k], on_base)
    b, p = np.asarray(base, dtype=np.float64), np.asarray(pr, dtype=np.float64)
    (b_head, b_tail), (p_head, p_tail) = _three_decimals(b, suffix=" → "), _three_decimals(p, suffix=" | ")
    # Values equal at 3 decimals take more (_values): the whole cell in the first piece.
    (b_units, b_known), (p_units, p_known) = _thousandths(b), _thousandths(p)
    same = (b_units == p_units) & (np.signbit(b) == np.signbit(p)) & b_known & p_known
    unknown = np.flatnonzero(~(b_known & p_known)).tolist()
    for k in [*np.flatnonzero(same).tolist(), *(k for k in unknown if f"{base[k]:.3f}" == f"{pr[k]:.3f}")]:
        b_head[k], b_tail[k], p_head[k], p_tail[k] = _values(base[k], pr[k]), "", "", " | "
    d = p - b
    d_head, d_tail = _three_decimals(d, negative=MINUS, positive="+", suffix=" |")
    # A move under 0.001 (or NaN) takes more decimals (_delta).
    with np.errstate(invalid="ignore"):
        small = np.flatnonzero(~(np.abs(d) >= 0.001)).tolist()
    for k in small:
        d_head[k], d_tail[k] = _delta(float(d[k])), " |"
    # The category cell with the texts on either side: one slot of the join fewer each side.
    cells = {c: f"{fence} | {_cell(c)} | " for c in set(moves.categories[:rows])}
    categories = list(map(cells.__getitem__, moves.categories[:rows]))
    slots = [f"\n| {fence}", tasks, categories, b_head, b_tail, p_head, p_tail, d_head, d_tail]
    return interleaved(slots, rows, head=head)


def _more(left: int, elsewhere: str) -> str:
    return f"…and {_n(left)} more: {elsewhere}." if left > 0 else ""


def _direction(
    m: ModelTaskChanges, moves: Moves, heading: str, detail: Detail, elsewhere: str, on_base: OnBase | None = None
) -> list[str]:
    if not moves:
        return []
    flaky = moves.flaky_count
    flaky_note = f"; {FLAKY} {_n(flaky)} flip between trials" if flaky else ""
    also = sum(1 for t in moves.task_ids if t in on_base.rates) if on_base is not None else 0
    if on_base is not None and also:
        flaky_note += f"; {FLAKY_ON_BASE} {flaky_count_sentence(also, len(moves), on_base.branch)}"
    if m.binary:
        lines, shown = _grouped(moves, detail.ids, binary_values=True, on_base=on_base)
        title = f"**{heading}** ({_n(len(moves))}{flaky_note})"
        return [title, "\n".join(lines), _more(len(moves) - shown, elsewhere)]
    rows = len(moves) if detail.rows is None else min(detail.rows, len(moves))
    largest = f"{'the ' + _n(rows) + ' largest of ' if rows < len(moves) else ''}{_n(len(moves))}"
    title = f"**{heading}** ({largest}{flaky_note})"
    return [title, _table(moves, detail.rows, on_base), _more(len(moves) - rows, elsewhere)]


def _one_side(what: str, ids: Sequence[str], limit: int | None, elsewhere: str) -> str:
    if not ids:
        return ""
    shown = ids if limit is None else ids[:limit]
    names = ", ".join(_inline(t) for t in shown)
    more = f" …and {_n(len(ids) - len(shown))} more: {elsewhere}" if len(shown) < len(ids) else ""
    return f"**{what}** ({_n(len(ids))}): {names}.{more}"


def _verdict(change: ModelChange | None) -> str:
    if change is not None and change.n_shared == 0:
        return "➖ not compared"  # as the comparison's table says: no verdict was reached on no shared task
    return MARKS[change.verdict] if change is not None else ""


def summary_line(m: ModelTaskChanges, change: ModelChange | None) -> str:
    """The ``<summary>`` of a model's block: id, verdict, counts (HTML: no markdown is read there)."""
    verdict = _verdict(change).replace("**", "")
    return f"{html_code(m.model_id)}{' ' + verdict if verdict else ''}: {counts_text(m)}"


def model_block(
    m: ModelTaskChanges, change: ModelChange | None, detail: Detail, elsewhere: str, on_base: OnBase | None = None
) -> str:
    """A model's collapsed block."""
    if m.binary:
        down, up = "Newly failing", "Newly passing"
    else:
        down, up = "Largest drops", "Largest gains"
    parts = [
        *_direction(m, m.drops, down, detail, elsewhere, on_base),
        *_direction(m, m.gains, up, detail, elsewhere, on_base),
        _one_side("Only in this run", m.only_run, detail.one_side, elsewhere),
        _one_side("Only in the baseline", m.only_baseline, detail.one_side, elsewhere),
    ]
    body = "\n\n".join(p for p in parts if p)
    return f"<details><summary>{summary_line(m, change)}</summary>\n\n{body}\n\n</details>"


def _compact_line(m: ModelTaskChanges, change: ModelChange | None) -> str:
    verdict = _verdict(change)
    return f"- {md_code(m.model_id, table=False)}{' ' + verdict if verdict else ''}: {counts_text(m)}"


def _intro(changes: TaskChanges, shown: Sequence[ModelTaskChanges], on_base: OnBase | None = None) -> str:
    changed = changes.changed
    total = len(changes.models)
    if not changed:
        return ""
    intro = f"{count(len(changed), 'model')} of {_n(total)} with a task that moved or is on one side only."
    if on_base is not None and on_base.rates:
        intro += f" <sub>{flaky_legend(on_base.branch)}.</sub>"
    return intro


def legend(changes: TaskChanges) -> str | None:
    """How the moved tasks are counted, for the method block (None when no task moved)."""
    changed = changes.changed
    if not changed:
        return None
    words = []
    if any(m.binary for m in changed):
        words.append("0/1 scores: newly failing = 1 on the base, 0 here (with trials: the share that passed fell)")
    if any(m.trials for m in changed):
        words.append(f"{FLAKY} its trials disagree on one side (flaky)")
    words.append("moves within the tie rule (`math.isclose`) are not moves")
    return f"**Which tasks moved**: {'; '.join(words)}."


def _changes_markdown(
    changes: TaskChanges,
    comparison: Comparison | None,
    *,
    detail: Detail,
    limit: int | None,
    measure: Callable[[str], int],
    elsewhere: str,
    on_base: OnBase | None = None,
) -> str:
    changed = {m.model_id: m for m in changes.changed}
    if not changed:
        return ""
    verdicts = {c.model_id: c for c in comparison.models} if comparison is not None else {}
    order = [c.model_id for c in ordered(comparison)] if comparison is not None else sorted(changed)
    models = [changed[i] for i in order if i in changed] + [changed[i] for i in sorted(changed) if i not in order]
    head = [TITLE, _intro(changes, models, on_base)]
    blocks: dict[int, str] = {}  # rendered when first needed: most never are in a bounded document

    def block(k: int) -> str:
        if k not in blocks:
            blocks[k] = model_block(models[k], verdicts.get(models[k].model_id), detail, elsewhere, on_base)
        return blocks[k]

    def text(full: int, compact: int) -> str:
        parts = [*head, *(block(k) for k in range(full))]
        lines = [_compact_line(m, verdicts.get(m.model_id)) for m in models[full : full + compact]]
        if lines:
            parts.append("\n".join(lines))
        left = len(models) - full - compact
        if left:
            parts.append(f"{count(left, 'more model')} with task changes: {elsewhere}.")
        return "\n\n".join(p for p in parts if p)

    if limit is None:
        return text(len(models), 0)
    # Whole blocks in order while they fit, then one line per model, then a count.
    full = 0
    while full < len(models) and measure(text(full + 1, 0)) <= limit:
        full += 1
    compact = 0
    while full + compact < len(models) and measure(text(full, compact + 1)) <= limit:
        compact += 1
    return text(full, compact)


def comment_section(changes: TaskChanges, comparison: Comparison | None, on_base: OnBase | None = None) -> str:
    return _changes_markdown(
        changes, comparison, detail=COMMENT, limit=COMMENT_SECTION_LIMIT, measure=utf16_length,
        elsewhere=COMMENT_ELSEWHERE, on_base=on_base,
    )  # fmt: skip


def summary_section(changes: TaskChanges, comparison: Comparison | None, on_base: OnBase | None = None) -> str:
    return _changes_markdown(
        changes, comparison, detail=SUMMARY, limit=SUMMARY_SECTION_LIMIT, measure=lambda t: len(t.encode()),
        elsewhere=SUMMARY_ELSEWHERE, on_base=on_base,
    )  # fmt: skip


def full_section(changes: TaskChanges, comparison: Comparison | None, on_base: OnBase | None = None) -> str:
    return _changes_markdown(changes, comparison, detail=FULL, limit=None, measure=len, elsewhere="", on_base=on_base)


# --- the JSON report --------------------------------------------------------------------------------


ROW_COLUMNS = ("task_id", "category", "base", "pr", "delta", "flaky")


def _moves_rows(moves: Moves) -> CompactRows:
    base, pr = np.asarray(moves.base, dtype=np.float64), np.asarray(moves.pr, dtype=np.float64)
    flaky: Sequence[bool | None] = moves.flaky if moves.flaky is not None else (None,) * len(moves)
    return CompactRows((moves.task_ids, moves.categories, base, pr, pr - base, flaky))


def task_changes_dict(changes: TaskChanges) -> dict[str, object]:
    """The JSON report's ``baseline.task_changes``: every model in both runs, every task that moved.

    Each move is a row of ``columns`` (a list per move, one a line: 250,000 of them stay fast to write).
    """
    return {
        "columns": list(ROW_COLUMNS),
        "models": [
            {
                "model_id": m.model_id,
                "scores": "binary" if m.binary else "continuous",
                "trials": m.trials,
                "n_shared": m.n_shared,
                "drops": len(m.drops),
                "gains": len(m.gains),
                "flaky": m.flaky_count,
                "only_in_run": list(m.only_run),
                "only_in_baseline": list(m.only_baseline),
                "dropped": _moves_rows(m.drops),
                "gained": _moves_rows(m.gains),
            }
            for m in changes.models
        ],
    }


def newly_failing(changes: TaskChanges) -> dict[str, int]:
    """The ``newly-failing`` output: per model compared, the tasks that dropped (0/1: newly failing)."""
    return {m.model_id: len(m.drops) for m in changes.models}
