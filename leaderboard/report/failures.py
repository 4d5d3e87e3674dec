"""The failed calls, scored 0 or left out of the scores, as each document and the log say it."""

from __future__ import annotations

from collections.abc import Callable

from ..trials import Failures
from ..validation import printable
from .formatting import count
from .markdown import md_code, truncate

# Models named in the note; the JSON report's ``failures`` has every one.
NAMED = 5
ID_WIDTH = 60


def _named(ids: list[str], name: Callable[[str], str]) -> str:
    shown = [name(i) for i in ids[:NAMED]]
    more = len(ids) - NAMED
    return ", ".join(shown) + (f" and {more:,} more" if more > 0 else "")


def _note(f: Failures, name: Callable[[str], str]) -> str | None:
    if not f.calls:
        return None
    models = [f"{name(m)} {n:,}" for m, n in f.by_model[:NAMED]]
    more = len(f.by_model) - NAMED
    treated = (
        "scored 0 (`failed-calls: zero`: a model that fails the hard tasks is not ranked ahead for it)"
        if f.scored == "zero"
        else "left out of the scores (`failed-calls: exclude`: each model is scored on the calls that completed)"
    )
    text = (
        f"{count(f.calls, 'failed call')} (`error` set) {'is' if f.calls == 1 else 'are'} {treated}; a composite "
        f"counts them in its error rate. Failed calls by model: {', '.join(models)}"
        + (f" and {count(more, 'more model')}" if more > 0 else "")
        + "."
    )
    if f.unranked:
        n = len(f.unranked)
        text += (
            f" {count(n, 'model')} had no completed call and {'is' if n == 1 else 'are'} not ranked: "
            f"{_named(list(f.unranked), name)}."
        )
    return text


def failures_markdown(f: Failures) -> str | None:
    """The note for the comment, the job summary and the markdown file (None: no call failed)."""
    return _note(f, lambda i: md_code(truncate(i, ID_WIDTH), table=False))


def failures_line(f: Failures) -> str | None:
    """The note for the log: ids on one line, escapes shown."""
    note = _note(f, printable)
    return None if note is None else note.replace("`", "")


def failures_dict(f: Failures) -> dict[str, object]:
    """The JSON report's ``failures``."""
    return {"calls": f.calls, "scored": f.scored, "by_model": dict(f.by_model), "unranked_models": list(f.unranked)}
