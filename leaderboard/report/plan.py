"""The one section plan: which sections each document shows beside the leaderboard, in what order, within what budget.

Every document (the PR comment, the job summary, ``leaderboard.md``, the CLI's ``--comment`` and its
markdown) is the verdict, the line of what was compared, then these sections, then the leaderboard
(:mod:`leaderboard.report.document`). The order, once:

1. the required tasks' verdict (a failing required task outranks everything);
2. the comparison with the baseline (or why there is none);
3. the tasks behind each model's change;
4. the composite ranking, then the heading of the accuracy leaderboard under it;
5. in the comment only: what the reading left out (unscored samples, averaged trials);
6. the calls left out as failed.

The budget: the comment's sections are the shortest (the comment has a hard limit and the sections
are never dropped for size), the summary's fit within its share of the summary's limit, the full
markdown's have no limit. The JSON report's parts come from the same outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ..pipeline import Outcome
from ..required import required_dict
from ..stats.comparison import Comparison
from ..stats.task_changes import TaskChanges
from . import comparison as compared
from . import task_changes as tasks
from .comparison_json import comparison_dict, no_baseline_dict
from .comparison_method import rule_text
from .composite import ACCURACY_HEADING, composite_dict, composite_method, composite_section, composite_verdict
from .document import Framing
from .failures import failures_dict, failures_markdown
from .history import history_dict, noise_cell
from .history_section import history_section
from .markdown import md_code, md_text
from .outcome import outcome_line
from .required_tasks import REQUIRED_COMMENT_LIMIT, required_markdown

Kind = Literal["comment", "summary", "full"]
KINDS: tuple[Kind, ...] = ("comment", "summary", "full")
BASELINE_TITLE = "Compared with the baseline"
FILES_NAMED = 5  # baseline files named in the documents; the JSON report's source has every one

_COMPARISON: Mapping[Kind, Callable[..., str]] = {
    "comment": compared.comment_section,
    "summary": compared.summary_section,
    "full": compared.full_section,
}
_TASKS: Mapping[Kind, Callable[[TaskChanges, Comparison | None, tasks.OnBase | None], str]] = {
    "comment": tasks.comment_section,
    "summary": tasks.summary_section,
    "full": tasks.full_section,
}
_REQUIRED_ROWS: Mapping[Kind, int | None] = {"comment": REQUIRED_COMMENT_LIMIT, "summary": None, "full": None}


@dataclass(frozen=True)
class Compared:
    """A baseline that was compared: how the documents name it, under which title, and the report's ``source``."""

    described: str  # markdown
    title: str = BASELINE_TITLE
    source: Mapping[str, object] | None = None


@dataclass(frozen=True)
class Missing:
    """A baseline asked for and not found: the documents say why (markdown) and the fix."""

    described: str  # markdown
    reason: str
    fix: str


@dataclass(frozen=True)
class Plan:
    """The sections of each document, in order, what frames every document (the outcome line, the lead that
    replaces the verdict, the method block) and the report's parts."""

    comment: tuple[str, ...]
    summary: tuple[str, ...]
    full: tuple[str, ...]
    framing: Framing
    report: Mapping[str, dict[str, object] | None]  # write_json's keyword arguments


def files_described(files: Sequence[str], records: int) -> str:
    """The baseline read from files, named as an artifact's is: ``**Baseline:** `a.jsonl` (6,000 records).``"""
    named = ", ".join(md_code(f, table=False) for f in files[:FILES_NAMED])
    more = len(files) - FILES_NAMED
    if more > 0:
        named += f" and {more:,} more file{'s' if more != 1 else ''}"
    return f"**Baseline:** {named} ({records:,} records)."


def plan(outcome: Outcome, *, baseline: Compared | Missing | None = None, left_out: str | None = None) -> Plan:
    """The sections of every document for ``outcome``; ``left_out``: the reading's note on what it left out."""
    return Plan(
        comment=_sections("comment", outcome, baseline, left_out),
        summary=_sections("summary", outcome, baseline, left_out),
        full=_sections("full", outcome, baseline, left_out),
        framing=Framing(
            outcome=outcome_line(outcome),
            lead=composite_verdict(outcome.composite) if outcome.composite is not None else None,
            method=_method(outcome),
        ),
        report={
            "baseline": _baseline_dict(outcome, baseline),
            "composite": composite_dict(outcome.composite) if outcome.composite is not None else None,
            "required": required_dict(outcome.required) if outcome.required is not None else None,
            "failures": failures_dict(outcome.failures),
            "history": history_dict(outcome.history, outcome.earlier.coverage) if outcome.earlier is not None else None,
        },
    )


def _method(outcome: Outcome) -> tuple[str, ...]:
    out: list[str] = []
    if outcome.composite is not None:
        out.append(composite_method(outcome.composite))
    if outcome.comparison is not None:
        out.append(rule_text(outcome.comparison))
        if outcome.changes is not None and (words := tasks.legend(outcome.changes)) is not None:
            out.append(words)
    return tuple(out)


def _sections(
    kind: Kind, outcome: Outcome, baseline: Compared | Missing | None, left_out: str | None
) -> tuple[str, ...]:
    parts: list[str] = []
    if outcome.required is not None and not outcome.required.passed:
        parts.append(required_markdown(outcome.required, limit=_REQUIRED_ROWS[kind]))
    if isinstance(baseline, Missing):
        parts.append(compared.no_baseline_markdown(baseline.described))
    elif outcome.comparison is not None:
        described = baseline or Compared("")
        noise, on_base = _from_history(outcome)
        # A comparison always has the outcome line (outcome_line), which says what the headline would.
        section = _COMPARISON[kind](
            outcome.comparison, described.described, title=described.title, noise=noise, stated=False
        )
        parts.append(section)
        if outcome.changes is not None:
            parts.append(_TASKS[kind](outcome.changes, outcome.comparison, on_base))
    changed = [m.model_id for m in outcome.comparison.models if m.significant] if outcome.comparison else []
    ranked = [r.model_id for r in outcome.board.rows]
    parts.append(
        history_section(
            kind, outcome.earlier, outcome.history, ranked=ranked, changed=changed, required=outcome.required
        )
    )
    parts = [p for p in parts if p]
    if outcome.composite is not None:
        parts.extend([composite_section(outcome.composite), ACCURACY_HEADING])
    if kind == "comment" and left_out:
        parts.append(md_text(left_out))
    if (failed := failures_markdown(outcome.failures)) is not None:
        parts.append(failed)
    return tuple(parts)


def _from_history(outcome: Outcome) -> tuple[dict[str, str] | None, tasks.OnBase | None]:
    """Each changed model's run-to-run noise on the base branch (under its Δ, in the Δ's units) and the flaky
    tasks to mark; None without a history."""
    history, earlier = outcome.history, outcome.earlier
    if history is None or earlier is None:
        return None, None
    # Beside a change only: an unchanged model's 0.000 needs no scale.
    moved = {m.model_id for m in outcome.comparison.models if m.verdict != "unchanged"} if outcome.comparison else set()
    noise = {
        s.model_id: text for s in history.series if s.model_id in moved and (text := noise_cell(s.noise)) is not None
    }
    return noise, tasks.OnBase(history.flaky_rates, earlier.branch)


def _baseline_dict(outcome: Outcome, baseline: Compared | Missing | None) -> dict[str, object] | None:
    if isinstance(baseline, Missing):
        return no_baseline_dict(baseline.reason, baseline.fix)
    if outcome.comparison is None:
        return None
    out = comparison_dict(outcome.comparison)
    if isinstance(baseline, Compared) and baseline.source is not None:
        out["source"] = dict(baseline.source)
    if outcome.changes is not None:
        out["task_changes"] = tasks.task_changes_dict(outcome.changes)
    return out
