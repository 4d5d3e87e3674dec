"""The baseline a run is compared with, as the CLI and the action both know it: loaded, or why not.

Where it comes from is the caller's business: ``baseline`` files are loaded here like ``runs``;
the action may instead find the base branch's artifact (:mod:`leaderboard.action.artifact`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime

from .formats import ReadOptions, Session
from .loading import load_runs
from .records import EvalRun
from .validation import InvalidEvalRuns


@dataclass(frozen=True)
class Baseline:
    """A baseline was found and loaded."""

    runs: tuple[EvalRun, ...]
    origin: str  # "files" | "artifact"
    branch: str | None = None
    sha: str | None = None
    sha_url: str | None = None
    run_id: int | None = None
    run_url: str | None = None
    created_at: datetime | None = None
    is_merge_base: bool | None = None
    age_days: float | None = None
    notes: tuple[str, ...] = ()
    artifact: str | None = None  # the artifact's name (origin "artifact")
    files: tuple[str, ...] = ()  # the EvalRun files the runs came from (workspace- or archive-relative)

    @property
    def short_sha(self) -> str | None:
        return self.sha[:7] if self.sha else None


@dataclass(frozen=True)
class NoBaseline:
    """No baseline: the comment says why and how to fix it; the step does not fail."""

    reason: str
    fix: str
    quiet: bool = False  # nothing is wrong (a push has no base to compare with): a log line, not a warning


def load_baseline_files(patterns: tuple[str, ...], workspace: str, options: ReadOptions | None = None) -> Baseline:
    """``baseline`` files, loaded like ``runs`` (same format, metric, filter); problems say they are the baseline's."""
    try:
        runs = load_runs(patterns, root=workspace, session=Session(options))
    except InvalidEvalRuns as exc:
        raise about_baseline(exc) from exc
    files = tuple(sorted({r.source.file for r in runs if r.source is not None}))
    return Baseline(runs=tuple(runs), origin="files", files=files)


def about_baseline(exc: InvalidEvalRuns) -> InvalidEvalRuns:
    """The same problems, each message starting with "baseline: "."""
    return InvalidEvalRuns(
        [
            p if p.message.startswith("baseline: ") else dataclasses.replace(p, message=f"baseline: {p.message}")
            for p in exc.problems
        ]
    )


def describe(baseline: Baseline | NoBaseline) -> str:
    """One line for the log and the job summary (plain text; the caller escapes it for markdown)."""
    if isinstance(baseline, NoBaseline):
        return f"No baseline: {baseline.reason}. Fix: {baseline.fix}."
    if baseline.origin == "files":
        more = len(baseline.files) - 5
        shown = ", ".join(baseline.files[:5]) + (f" and {more} more" if more > 0 else "")
        return f"Baseline: {len(baseline.runs):,} records from {shown}."
    parts = [f"Baseline: {baseline.branch} @ {baseline.short_sha}"]
    if baseline.run_id is not None:
        parts.append(f", run {baseline.run_id}")
    if baseline.age_days is not None:
        parts.append(f", {age_text(baseline.age_days)}")
    parts.append(f" (artifact {baseline.artifact!r}, {len(baseline.runs):,} records)")
    text = "".join(parts) + "."
    if baseline.notes:
        text += " " + " ".join(f"{n[0].upper()}{n[1:]}." for n in baseline.notes)
    return text


def age_text(days: float) -> str:
    if days < 1 / 24:
        return "less than an hour old"
    if days < 1:
        hours = round(days * 24)
        return f"{hours} hour{'s' if hours != 1 else ''} old"
    whole = round(days, 1)
    return f"{whole:g} day{'s' if whole != 1 else ''} old"
