"""The history's section of each document: the trend table, the chart, the range sentences, the flaky tasks.

The numbers are :class:`~leaderboard.stats.history.History`'s; the words are :mod:`leaderboard.report.history`'s.
What each document shows, within its budget:

* the comment: the trend (sparkline and range) and the run-to-run noise of the top models and of every
  model the comparison found changed, at most ``COMMENT_ROWS``; a few range sentences and flaky tasks;
* the job summary: the Mermaid chart, then up to ``SUMMARY_ROWS`` rows and every sentence;
* ``leaderboard.md``: the chart and every row.

No history at all is one line; a history that is off (or not asked for) is nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ..required import RequiredCheck
from ..stats.history import Earlier, History
from .history import (
    no_history_line,
    noise_amount,
    outside_sentence,
    partial_history_line,
    rate_text,
    required_flaky_sentence,
    trend_cell,
    trend_chart,
    where_text,
)
from .markdown import md_code

Kind = Literal["comment", "summary", "full"]
COMMENT_ROWS = 12  # models in the comment's trend table (the top ones, then the changed ones)
TOP_ROWS = 5  # the top models of the ranking the comment always shows
SUMMARY_ROWS = 200
COMMENT_SENTENCES = 5  # range sentences and flaky tasks named in the comment
SUMMARY_SENTENCES = 50
SUMMARY_FLAKY = 20  # flaky tasks named in the job summary (the JSON report and the output list them)
ELSEWHERE = {
    "comment": "the job summary and the JSON report (`report` output, key `history`) have every one",
    "summary": "the JSON report (`report` output, key `history`) has every one",
    "full": "",
}


def _limit(kind: Kind, comment: int, summary: int) -> int | None:
    return comment if kind == "comment" else summary if kind == "summary" else None


def _rows(history: History, ranked: Sequence[str], changed: Sequence[str], kind: Kind) -> list[str]:
    """The models shown, in ranking order: in the comment the top ones and the changed ones."""
    known = [m for m in ranked if history.series_of(m) is not None]
    if kind != "comment":
        return known
    wanted = set(known[:TOP_ROWS]) | set(changed)
    return [m for m in known if m in wanted][:COMMENT_ROWS]


def _cut(items: list[str], limit: int | None) -> tuple[list[str], int]:
    return (items, 0) if limit is None else (items[:limit], max(0, len(items) - limit))


def _more(left: int, what: str, kind: Kind) -> str:
    if left <= 0:
        return ""
    elsewhere = ELSEWHERE[kind]
    return f"…and {left:,} more {what}{': ' + elsewhere if elsewhere else ''}."


def _table(history: History, models: Sequence[str]) -> str:
    runs = len(history.runs)
    lines = [
        f"| Model | Mean by run ({runs:,} earlier → this run), pts | Run to run |",
        "|:------|:------|:------|",
    ]
    for model in models:
        series = history.series_of(model)
        noise = noise_amount(series.noise if series is not None else None)
        lines.append(f"| {md_code(model)} | {trend_cell(series)} | {noise} |")
    return "\n".join(lines)


def _flaky_lines(history: History, branch: str | None, limit: int | None, kind: Kind) -> list[str]:
    if not history.flaky:
        return []
    named = [f"{md_code(f.task_id, table=False)} {rate_text(f.rate)}" for f in history.flaky]
    shown, left = _cut(named, limit)
    more = f" and {left:,} more: {ELSEWHERE[kind]}" if left else ""
    return [
        f"**Flaky {where_text(branch)}:** {len(history.flaky):,} of the {history.observed_tasks:,} tasks compared "
        f"from run to run flip with the model id unchanged (flip rate): {', '.join(shown)}{more}."
    ]


def _required_lines(
    history: History, required: RequiredCheck | None, branch: str | None, limit: int | None, kind: Kind
) -> list[str]:
    if required is None:
        return []
    tasks = set(required.tasks)
    lines = [required_flaky_sentence(f, branch) for f in history.flaky if f.task_id in tasks]
    shown, left = _cut([f"⚠️ {line[0].upper()}{line[1:]}." for line in lines], limit)
    return [*shown, _more(left, "flaky required tasks", kind)]


def history_section(
    kind: Kind,
    earlier: Earlier | None,
    history: History | None,
    *,
    ranked: Sequence[str],
    changed: Sequence[str] = (),
    required: RequiredCheck | None = None,
) -> str:
    """The section for ``kind`` ('' when history was not asked for or is off)."""
    if earlier is None:
        return ""
    branch = earlier.branch
    if history is None:
        return no_history_line(earlier.coverage, branch) or ""
    parts = [f"### Trend {where_text(branch)}"]
    if (partial := partial_history_line(earlier.coverage, branch)) is not None:
        parts.append(partial)
    if kind != "comment" and (chart := trend_chart(history, ranked, changed, branch=branch)):
        parts.append(chart)
    models, left = _cut(_rows(history, ranked, changed, kind), _limit(kind, COMMENT_ROWS, SUMMARY_ROWS))
    if models:
        parts.append(_table(history, models))
    hidden = len([m for m in ranked if history.series_of(m) is not None]) - len(models)
    parts.append(_more(hidden if kind == "comment" else left, "models", kind))
    sentences = [s for m in ranked if (series := history.series_of(m)) and (s := outside_sentence(series, branch))]
    shown, left = _cut(sentences, _limit(kind, COMMENT_SENTENCES, SUMMARY_SENTENCES))
    parts.extend(shown)
    parts.append(_more(left, "models outside their range", kind))
    sentences_limit = _limit(kind, COMMENT_SENTENCES, SUMMARY_SENTENCES)
    parts.extend(_required_lines(history, required, branch, sentences_limit, kind))
    parts.extend(_flaky_lines(history, branch, _limit(kind, COMMENT_SENTENCES, SUMMARY_FLAKY), kind))
    return "\n\n".join(p for p in parts if p)
