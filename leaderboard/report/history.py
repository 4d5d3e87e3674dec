"""The history in words: trend sparklines, a Mermaid chart, the noise line, flaky marks and the coverage lines.

Numbers come from :mod:`leaderboard.stats.history`; here they only become text. Means are shown in points
(a mean of 0.749 is 74.9 pts) with one decimal, more where two different values would print alike.

Everything from the data is escaped: ids and commit names in Markdown as code spans
(:func:`~leaderboard.report.markdown.md_code`), in the Mermaid chart by :func:`chart_text`, which leaves
nothing that could end a string, a statement or the fenced block, nor start a directive, a comment, an
entity code or markup.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence

from ..stats.history import (
    EXPIRED,
    INVALID,
    MIN_FLAKY_RUNS,
    MIN_NOISE_RUNS,
    MISSING,
    OVER_BUDGET,
    OVER_LIMIT,
    TIMED_OUT,
    Coverage,
    FlakyTask,
    History,
    Noise,
    Outside,
    Point,
    Series,
    SkipReason,
)
from .formatting import DASH, MINUS, decimals_for, in_percent, magnitude_text, shorten
from .markdown import md_code, md_text, visible

SPARKS = "▁▂▃▄▅▆▇█"
GAP = "·"  # a run without the model
# A sparkline spans at least this many points: a 0.2-point wobble is drawn nearly flat, not floor to ceiling.
MIN_SPAN_PTS = 1.0
# A task that also flips on the base branch with nothing changed (the trials' own mark is ↻).
FLAKY_MARK = "⇄"
# Emoji squares and the colours the chart's lines are given in the same order: Mermaid's xychart draws no
# legend, so the legend under the chart names each line by its square.
PALETTE = (
    ("🟦", "#55acee"),
    ("🟥", "#dd2e44"),
    ("🟩", "#78b159"),
    ("🟧", "#f4900c"),
    ("🟪", "#aa8ed6"),
    ("🟨", "#fdcb58"),
    ("🟫", "#c1694f"),
    ("⬛", "#31373d"),
)
MAX_CHART_LINES = len(PALETTE)
TOP_CHARTED = 3  # the top models of the ranking always charted (when they have every run)
CHART_LABEL_WIDTH = 40
# Flaky tasks in the ``flaky-tasks`` output, highest rate first (the JSON report has all of them).
MAX_FLAKY_OUTPUT = 100

SKIP_WORDS: Mapping[SkipReason, str] = {
    EXPIRED: "expired",
    MISSING: "missing",
    INVALID: "invalid",
    OVER_BUDGET: "over the byte budget",
    OVER_LIMIT: "over the limit on runs",
    TIMED_OUT: "not read in time",
}


def where_text(branch: str | None) -> str:
    """Where the earlier runs ran: ``on `main``` (the base branch), or ``in the earlier runs`` (files given)."""
    return f"on {md_code(branch, table=False)}" if branch is not None else "in the earlier runs"


def _after_runs(branch: str | None) -> str:
    """After "earlier runs": `` on `main``` for the base branch, nothing for files given."""
    return f" {where_text(branch)}" if branch is not None else ""


def pts(value: float) -> float:
    return value * 100.0


def _pts_text(values: Sequence[float]) -> list[str]:
    """Each value in points at one decimal, more where two different values would print alike."""
    shown = [pts(v) for v in values]
    d = decimals_for(shown, base=1, limit=4)
    return [DASH if math.isnan(v) else f"{v:.{d}f}".replace("-", MINUS) for v in shown]


def sparkline(means: Sequence[float], *, min_span: float = MIN_SPAN_PTS) -> str:
    """One block per run (``GAP`` where the model is absent), scaled to the series' own range in points.

    The scale spans at least ``min_span`` points, centred on the series, so a constant series is a flat
    line of ``▄`` and a small wobble stays small.
    """
    values = [pts(v) for v in means]
    known = [v for v in values if not math.isnan(v)]
    if not known:
        return GAP * len(values)
    low, high = min(known), max(known)
    if high - low < min_span:
        middle = (low + high) / 2.0
        low, high = middle - min_span / 2.0, middle + min_span / 2.0
    top = len(SPARKS) - 1
    out = []
    for v in values:
        if math.isnan(v):
            out.append(GAP)
            continue
        # Halves round down: the middle of the scale is ▄, the lower of the two middle blocks.
        level = math.ceil((v - low) / (high - low) * top - 0.5)
        out.append(SPARKS[min(top, max(0, level))])
    return "".join(out)


def range_text(means: Sequence[float]) -> str:
    """``71.2–74.9`` (lowest to highest, in points), one value when they print alike; ``—`` with none."""
    known = [v for v in means if not math.isnan(v)]
    if not known:
        return DASH
    low, high = _pts_text([min(known), max(known)])
    return low if low == high else f"{low}–{high}"


def trend_cell(series: Series | None) -> str:
    """The comment's trend column: ``▂▃▃▅▆▆▇ 71.2–74.9``; ``—`` for a model with no series."""
    if series is None or all(p is None for p in series.points):
        return DASH
    return f"{sparkline(series.means)} {range_text(series.means)}"


# --- the Mermaid chart ----------------------------------------------------------------------------

# Characters that mean something in Mermaid's xychart grammar or in what renders it: the string's quote,
# the markdown-string and fence backtick, the comment and directive %, the entity-code #, markup <>&.
_CHART_SWAP = str.maketrans({'"': "'", "`": "'", "%": "％", "#": "＃", "<": "‹", ">": "›", "&": "＆"})


def chart_text(text: str, width: int = CHART_LABEL_WIDTH) -> str:
    """``text`` as the inside of a Mermaid string: visible, without a character that could break out.

    Lossy on purpose: the legend under the chart names each line by its whole id.
    """
    shown = visible(text)  # line breaks, controls, bidi and odd spaces become \\x.. escapes (one line)
    shown = shown.translate(_CHART_SWAP)
    shown = re.sub(r"\s", " ", shorten(shown, width))
    return shown or " "


def _x_labels(history: History) -> list[str]:
    """One category per run: the commit (a SHA shortened to 7), then ``this run``; never two alike."""
    labels = []
    for run in history.runs:
        commit = run.commit
        short = commit[:7] if re.fullmatch(r"[0-9a-f]{40}(?:[0-9a-f]{24})?", commit) else chart_text(commit, 16)
        labels.append(short)
    labels.append("this run")
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return out


def chart_models(
    history: History, ranked: Sequence[str], changed: Iterable[str], *, top: int = TOP_CHARTED
) -> tuple[list[str], list[str], list[str]]:
    """(charted, with a run missing, over the cap): the top ``top`` of ``ranked`` and every ``changed``
    model, in ranking order; a line needs a mean in every run, and a chart tells at most MAX_CHART_LINES apart.
    """
    wanted = set(ranked[:top]) | set(changed)
    order = [m for m in ranked if m in wanted] + sorted(wanted - set(ranked))
    charted: list[str] = []
    gaps: list[str] = []
    over: list[str] = []
    for model in order:
        series = history.series_of(model)
        if series is None or any(p is None for p in series.points):
            gaps.append(model)
        elif len(charted) < MAX_CHART_LINES:
            charted.append(model)
        else:
            over.append(model)
    return charted, gaps, over


def _names(ids: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(md_code(i, table=False) for i in ids[:limit])
    return shown + (f" and {len(ids) - limit:,} more" if len(ids) > limit else "")


def trend_chart(history: History, ranked: Sequence[str], changed: Iterable[str], *, branch: str | None) -> str:
    """A Mermaid ``xychart-beta`` of each charted model's mean by run (in points), with its legend.

    ``ranked``: this run's model ids in rank order; ``changed``: the models the comparison found changed.
    Empty text when no model can be charted (none has a mean in every run).
    """
    charted, gaps, over = chart_models(history, ranked, changed)
    if not charted or not history.runs:
        return ""
    lines = {m: [pts(p.mean) for p in _points(history, m)] for m in charted}
    values = [v for series in lines.values() for v in series]
    low = max(0.0, math.floor(min(values)) - 1.0)
    high = min(100.0, math.ceil(max(values)) + 1.0)
    palette = ", ".join(colour for _, colour in PALETTE[: len(charted)])
    axis = ", ".join(f'"{label}"' for label in _x_labels(history))
    on = f" on {branch}" if branch is not None else ""
    title = chart_text(f"Mean score by run{on} (pts)", 80)
    body = [
        "```mermaid",
        f'%%{{init: {{"themeVariables": {{"xyChart": {{"plotColorPalette": "{palette}"}}}}}}}}%%',
        "xychart-beta",
        f'  title "{title}"',
        f"  x-axis [{axis}]",
        f'  y-axis "mean (pts)" {low:g} --> {high:g}',
    ]
    for model in charted:
        data = ", ".join(f"{v:.2f}" for v in lines[model])
        body.append(f'  line "{chart_text(model)}" [{data}]')
    body.append("```")
    legend = " · ".join(f"{PALETTE[k][0]} {md_code(m, table=False)}" for k, m in enumerate(charted))
    out = "\n".join(body) + "\n\n" + legend
    notes = []
    if gaps:
        notes.append(f"not charted, a run missing: {_names(gaps)}")
    if over:
        notes.append(f"not charted, over the {MAX_CHART_LINES} lines a chart tells apart: {_names(over)}")
    if notes:
        text = "; ".join(notes)
        out += "\n\n" + text[0].upper() + text[1:] + "."
    return out


def _points(history: History, model: str) -> list[Point]:
    series = history.series_of(model)
    assert series is not None
    return [p for p in series.points if p is not None]


# --- words ----------------------------------------------------------------------------------------


def _pts_amount(value: float) -> str:
    """A positive amount of points: one decimal, more (up to three) until it is not shown as 0."""
    for d in (1, 2, 3):
        text = f"{pts(value):.{d}f}"
        if float(text) != 0.0:
            return text
    return f"{pts(value):.3f}"


def noise_cell(noise: Noise | None) -> str | None:
    """Under a comparison's Δ, in its units (``±0.8 pts run to run``; ``±0.008`` in fractions); None without one."""
    if noise is None:
        return None
    if noise.rms_change == 0.0:
        return "the same every run"
    if in_percent():  # the Δ beside it is in points
        return f"±{magnitude_text(noise.rms_change)} run to run"
    for d in (3, 4, 5, 6):
        text = f"{noise.rms_change:.{d}f}"
        if float(text) != 0.0:
            break
    return f"±{text} run to run"


def noise_amount(noise: Noise | None) -> str:
    """The noise alone, for a table's column: ``±0.8 pts``, ``none`` (the same mean every run), ``—`` unknown."""
    if noise is None:
        return DASH
    return "none" if noise.rms_change == 0.0 else f"±{_pts_amount(noise.rms_change)} pts"


def outside_sentence(series: Series, branch: str | None) -> str | None:
    """Says, for a model whose id did not change, that this run's mean is outside the range of its earlier runs."""
    out = series.outside
    if out is None:
        return None
    mean, low, high = _pts_text([out.mean, out.low, out.high])
    # 2 / (k + 1), in lowest terms.
    chance = f"2 runs in {out.runs + 1}" if out.runs % 2 == 0 else f"1 run in {(out.runs + 1) // 2}"
    return (
        f"{md_code(series.model_id, table=False)} scores {mean} pts, {out.direction} the {low}–{high} of its "
        f"last {out.runs} runs {where_text(branch)} with the same id "
        f"(with nothing changed, {chance} would land outside that range)."
    )


def flaky_mark(rate: float | None) -> str:
    """The mark after a moved task that also flips on the base branch (empty otherwise)."""
    return f" {FLAKY_MARK}" if rate is not None else ""


def rate_text(rate: float) -> str:
    """A flip rate as a percentage: ``30%``, ``<1%`` below one, ``100%`` only when it is."""
    if rate >= 1.0:
        return "100%"
    if rate < 0.01:
        return "<1%"
    return f"{min(99, round(rate * 100))}%"


def flaky_count_sentence(flaky: int, moved: int, branch: str | None) -> str:
    """``4 of the 15 also flip on `main` with nothing changed`` (``flaky`` of the ``moved`` tasks)."""
    where = where_text(branch)
    if moved == 1:
        return f"it {'also flips' if flaky else 'does not flip'} {where} with nothing changed"
    if flaky == 0:
        return f"none of the {moved:,} flips {where} with nothing changed"
    verb = "flips" if flaky == 1 else "flip"
    return f"{flaky:,} of the {moved:,} also {verb} {where} with nothing changed"


def flaky_legend(branch: str | None) -> str:
    return f"{FLAKY_MARK} also flips {where_text(branch)} with nothing changed (the same model id)"


def required_flaky_sentence(task: FlakyTask, branch: str | None) -> str:
    """A required task that is flaky, said so."""
    return (
        f"the required task {md_code(task.task_id, table=False)} is flaky: it flips "
        f"{where_text(branch)} with nothing changed ({task.flips:,} of {task.transitions:,} "
        f"run-to-run comparisons, {rate_text(task.rate)})"
    )


def no_history_line(coverage: Coverage, branch: str | None) -> str | None:
    """The one line for no history at all, by reason; None when there is some (or history is off)."""
    reason = coverage.missing_reason
    where = where_text(branch)
    if reason is None or reason == "off":
        return None
    if reason == "first-run":
        return f"No history: no earlier run of this workflow {where} to compare with yet."
    if reason == "no-permission":
        return (
            f"No history: the token may not read this workflow's runs {where} "
            "(give the job `permissions: actions: read`)."
        )
    if reason == "lookup-failed":
        return f"No history: listing this workflow's earlier runs {where} failed ({md_text(coverage.failed or '')})."
    if reason == "all-expired":
        return f"No history: the artifacts of all {coverage.found:,} earlier runs{_after_runs(branch)} have expired."
    runs = f"{coverage.found:,} earlier runs{_after_runs(branch)}"
    return f"No history: none of the {runs} could be read ({_skips(coverage)})."


def _skips(coverage: Coverage) -> str:
    return ", ".join(f"{n:,} {SKIP_WORDS[reason]}" for reason, n in coverage.skipped) or "no reason given"


def partial_history_line(coverage: Coverage, branch: str | None) -> str | None:
    """``History: read 8 of 10 earlier runs on `main`: 2 expired.``; None when every run found was read."""
    if coverage.read == 0 or (coverage.read >= coverage.found and coverage.found >= coverage.wanted):
        return None
    text = f"History: read {coverage.read:,} of {coverage.found:,} earlier runs{_after_runs(branch)}"
    if coverage.read < coverage.found:
        text += f": {_skips(coverage)}"
    if coverage.found < coverage.wanted:
        text += f" (only {coverage.found:,} of the {coverage.wanted:,} asked for exist)"
    return text + "."


def flaky_tasks_output(history: History | None, limit: int = MAX_FLAKY_OUTPUT) -> str:
    """The ``flaky-tasks`` output: a JSON object of task id → flip rate, highest rate first, at most ``limit``."""
    flaky = history.flaky[:limit] if history is not None else ()
    return json.dumps({f.task_id: f.rate for f in flaky}, ensure_ascii=False)


def history_dict(history: History | None, coverage: Coverage) -> dict[str, object]:
    """The JSON report's ``history`` section (docs/report-schema.md, "History")."""
    out: dict[str, object] = {
        "coverage": {
            "wanted": coverage.wanted,
            "found": coverage.found,
            "read": coverage.read,
            "skipped": dict(coverage.skipped),
            "no_history": coverage.missing_reason,
            "lookup_failed": coverage.failed,
        },
        "min_noise_runs": MIN_NOISE_RUNS,
        "min_flaky_runs": MIN_FLAKY_RUNS,
    }
    if history is None:
        return {**out, "runs": [], "series": [], "flaky_tasks": [], "observed_tasks": 0}
    out["alpha"] = history.alpha
    out["runs"] = [
        {
            "commit": run.commit,
            "date": run.date,
            "records": run.records,
            "models": 0 if run.matrix is None else len(run.matrix.model_ids),
            "tasks": 0 if run.matrix is None else len(run.matrix.task_ids),
        }
        for run in history.runs
    ]
    out["series"] = [_series_dict(s) for s in history.series]
    out["flaky_tasks"] = [
        {
            "task_id": f.task_id,
            "flips": f.flips,
            "transitions": f.transitions,
            "rate": f.rate,
            "mean_change": f.mean_change,
            "flipped_on": list(f.flipped_on),
        }
        for f in history.flaky
    ]
    out["observed_tasks"] = history.observed_tasks
    return out


def _number(value: float) -> float | None:
    return None if math.isnan(value) else value


def _series_dict(series: Series) -> dict[str, object]:
    noise = series.noise
    out = series.outside
    return {
        "model_id": series.model_id,
        "stable_runs": series.stable_runs,
        "points": [
            None
            if p is None
            else {
                "mean": p.mean,
                "ci_lo": _number(p.ci_lo),
                "ci_hi": _number(p.ci_hi),
                "tasks": p.tasks,
                "ci_method": p.ci_method,
            }
            for p in series.points
        ],
        "noise": None
        if noise is None
        else {
            "runs": noise.runs,
            "rms_change": noise.rms_change,
            "largest_change": noise.largest_change,
            "sd": noise.sd,
            "low": noise.low,
            "high": noise.high,
        },
        "outside": None if out is None else _outside_dict(out),
    }


def _outside_dict(out: Outside) -> dict[str, object]:
    return {"direction": out.direction, "mean": out.mean, "low": out.low, "high": out.high, "runs": out.runs,
            "chance": out.chance}  # fmt: skip
