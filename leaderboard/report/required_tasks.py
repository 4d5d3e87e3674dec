"""The required tasks' verdict as markdown (a table of the failures, or one line when all pass) and as the
action's outputs.

The rule sentence names the patterns; thousands of them must not push the failures and the leaderboard out
of the comment, so it names at most :data:`PATTERNS_SHOWN` within :data:`PATTERNS_LIMIT` UTF-16 units and
says how many more there are and where they are listed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..required import RequiredCheck, RequiredFailure, failure_dict
from .comparison import utf16_length
from .formatting import count
from .markdown import md_code
from .task_changes import _n, _value

REQUIRED_TITLE = "Required tasks"
REQUIRED_COMMENT_LIMIT = 6_000
REQUIRED_ELSEWHERE = "the `required-failed` output and the JSON report (key `required`) list every one"
PATTERNS_SHOWN = 10
PATTERNS_LIMIT = 1_000


def _score(failure: RequiredFailure) -> str:
    if failure.score is None:
        return "no score: every call failed" if failure.ran else "not run"
    return _value(failure.score)


def _patterns(patterns: Sequence[str]) -> str:
    """The first patterns (within :data:`PATTERNS_SHOWN` and :data:`PATTERNS_LIMIT`), then how many more."""
    shown: list[str] = []
    used = 0
    for pattern in patterns[:PATTERNS_SHOWN]:
        code = md_code(pattern, table=False)
        used += utf16_length(code) + 2
        if used > PATTERNS_LIMIT:
            break
        shown.append(code)
    rest = len(patterns) - len(shown)
    if not rest:
        return ", ".join(shown)
    if not shown:
        return f"{count(rest, 'pattern')} too long to show here (the JSON report lists every one)"
    return (
        ", ".join(shown)
        + f" and {_n(rest)} more {'pattern' if rest == 1 else 'patterns'} (the JSON report lists every one)"
    )


def required_markdown(
    check: RequiredCheck, *, limit: int | None = REQUIRED_COMMENT_LIMIT, elsewhere: str = REQUIRED_ELSEWHERE
) -> str:
    """The required tasks' verdict: failures as a table (model, task, score), or one line when all pass."""
    patterns = _patterns(check.patterns)
    n_tasks = len(check.tasks)
    tasks = "the 1 task" if n_tasks == 1 else f"each of the {_n(n_tasks)} tasks"
    rule = f"every model must score at least {_value(check.threshold)} on {tasks} matching {patterns}"
    if check.passed:
        return f"✅ **{REQUIRED_TITLE}**: all {count(len(check.models), 'model')} pass ({rule})."
    n = len(check.failures)
    # The outcome line above says that it fails; here the rule and the failures.
    head = f"**{REQUIRED_TITLE}**: {rule}."

    def text(rows: int) -> str:
        lines = ["| Model | Task | Score |", "|:------|:-----|------:|"]
        lines += [f"| {md_code(f.model_id)} | {md_code(f.task_id)} | {_score(f)} |" for f in check.failures[:rows]]
        more = f"\n\n…and {_n(n - rows)} more: {elsewhere}." if rows < n else ""
        return f"{head}\n\n" + "\n".join(lines) + more

    if limit is None or utf16_length(text(n)) <= limit:
        return text(n)
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if utf16_length(text(mid)) <= limit:
            lo = mid
        else:
            hi = mid - 1
    return text(lo)


def required_outputs(check: RequiredCheck | None) -> dict[str, str]:
    """The ``required-failures`` and ``required-failed`` outputs (0 and [] without required tasks)."""
    failures = check.failures if check is not None else ()
    return {
        "required-failures": str(len(failures)),
        "required-failed": json.dumps([failure_dict(f) for f in failures], ensure_ascii=False),
    }
