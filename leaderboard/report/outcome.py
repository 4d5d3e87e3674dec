"""The pull request's outcome in one line, first in every document: did it regress, does the check fail?

A reviewer reads the first line and stops. With a baseline or required tasks it answers the pull
request's question ("❌ 1 regression — this check fails", "✅ No regressions across 12 models"),
and when a gate is on it always says whether the check passes. Without either, there is no
outcome line: the leaderboard's verdict leads.
"""

from __future__ import annotations

import math

from ..pipeline import Outcome
from ..required import RequiredCheck
from ..stats.comparison import Comparison, ModelChange
from ..stats.task_changes import TaskChanges
from .formatting import count, delta_text
from .markdown import md_code
from .required_tasks import required_markdown

NAMED = 3  # regressed models named in the line; the comparison's table has every one


def _model(change: ModelChange, changes: TaskChanges | None) -> str:
    words = f"{md_code(change.model_id, table=False)} {delta_text(change.delta)}"
    if changes is not None:
        try:
            moved = changes.of(change.model_id)
        except KeyError:
            return words
        if moved.drops:
            failing = "newly failing" if moved.binary else "tasks lower"
            words += f" ({len(moved.drops):,} {failing} of {change.n_shared:,})"
    return words


def _regressions(comparison: Comparison, changes: TaskChanges | None, gate: bool) -> str:
    regressed = comparison.regressions
    named = ", ".join(_model(m, changes) for m in regressed[:NAMED])
    more = f" and {len(regressed) - NAMED:,} more" if len(regressed) > NAMED else ""
    verdict = " — this check fails" if gate else ""
    return f"❌ **{count(len(regressed), 'regression')}**{verdict}: {named}{more}."


def _calm(comparison: Comparison, gate: bool) -> str:
    compared = [m for m in comparison.models if m.n_shared > 0 and not math.isnan(m.delta)]
    passes = " — this check passes" if gate else ""
    if not compared:
        return f"➖ **Nothing compared with the baseline**: no model shares a task with it{passes}."
    improved = comparison.improvements
    if improved:
        named = ", ".join(f"{md_code(m.model_id, table=False)} {delta_text(m.delta)}" for m in improved[:NAMED])
        more = f" and {len(improved) - NAMED:,} more" if len(improved) > NAMED else ""
        return f"✅ **No regressions** across {count(len(compared), 'model')}; improved: {named}{more}{passes}."
    largest = max(compared, key=lambda m: (abs(m.delta), m.model_id))
    if largest.delta == 0:
        size = "every score the same"
    else:
        noise = "within the tolerance" if largest.verdict == "within tolerance" else "within noise"
        size = f"largest change {delta_text(largest.delta)}, {noise}"
    return f"✅ **No regressions** across {count(len(compared), 'model')} ({size}){passes}."


def _required(check: RequiredCheck) -> str:
    if check.passed:
        return required_markdown(check)
    return (
        f"❌ **{count(len(check.failures), 'required-task failure')}** in "
        f"{count(len(check.failed_models), 'model')} — this check fails."
    )


def outcome_line(outcome: Outcome) -> str | None:
    """The first line of every document, or None when there is no baseline and no required task."""
    parts: list[str] = []
    gate = outcome.fail_on_regression
    if outcome.required is not None and not outcome.required.passed:
        parts.append(_required(outcome.required))
    if outcome.comparison is not None:
        if outcome.comparison.regressions:
            parts.append(_regressions(outcome.comparison, outcome.changes, gate))
        else:
            parts.append(_calm(outcome.comparison, gate))
    if outcome.required is not None and outcome.required.passed:
        parts.append(_required(outcome.required))
    if not parts:
        return None
    # The worst first: a failure is never read after a pass.
    return "<br>".join(parts) if len(parts) > 1 else parts[0]
