"""The base branch's earlier runs for the history: the baseline's lookup and download, N times, bounded.

The workflow's newest successful runs on the PR's base branch (:meth:`ArtifactLookup.recent_runs`), newest
first; from each, the artifact ``baseline-artifact`` names, downloaded and read as the baseline is
(:meth:`ArtifactLookup.download`: without credentials, capped, a hostile archive refused) and reduced at
once to its score matrix (:func:`~leaderboard.stats.history.run_scores`), so one run's records at a time
are held. Bounded in runs (the input, at most ``MAX_HISTORY_RUNS``), in zip bytes over all runs
(``MAX_HISTORY_ZIP_BYTES``) and in wall time (``HISTORY_DEADLINE``: no run is started after it). A run that
cannot be read is skipped and counted by reason; nothing here fails the step.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from github import Github

from ..records import EvalRun
from ..stats.history import (
    EXPIRED,
    MISSING,
    OVER_BUDGET,
    TIMED_OUT,
    Earlier,
    RunScores,
    SkipReason,
    coverage_of,
    run_scores,
)
from .artifact import ArtifactLookup
from .download import MAX_ZIP_BYTES, Missing
from .settings import Settings

HISTORY_DEADLINE = 90.0  # seconds for the whole history: no run's lookup starts after it
MAX_HISTORY_ZIP_BYTES = 4 * MAX_ZIP_BYTES  # the artifacts' zips together, as listed


@dataclass(frozen=True)
class HistoryLookup:
    """The earlier runs (None: history off, or not about a pull request) and a line per run skipped."""

    earlier: Earlier | None
    notes: tuple[str, ...] = ()


def resolve_history(
    settings: Settings,
    client: Github | None,
    pull_request_number: int | None,
    now: datetime,
    *,
    payload: Mapping[str, Any],
    clock: Callable[[], float] = time.monotonic,
    known: Mapping[int, Sequence[EvalRun]] | None = None,
) -> HistoryLookup:
    """The earlier runs ``history`` asks for; never raises. ``known``: run id → records already downloaded
    (the baseline's), read from there rather than downloaded again."""
    wanted = settings.history
    if wanted == 0 or not settings.baseline_artifact or pull_request_number is None:
        return HistoryLookup(None)
    try:
        return _read(settings, client, pull_request_number, now, payload, clock, known or {})
    except Exception as exc:  # the promise: nothing in the history fails the step
        failed = f"looking up the history failed unexpectedly ({type(exc).__name__})"
        return HistoryLookup(Earlier((), coverage_of(wanted, 0, 0, {}, failed=failed)), (failed,))


def _read(
    settings: Settings,
    client: Github | None,
    number: int,
    now: datetime,
    payload: Mapping[str, Any],
    clock: Callable[[], float],
    known: Mapping[int, Sequence[EvalRun]],
) -> HistoryLookup:
    wanted = settings.history
    branch: str | None = None
    try:
        lookup = ArtifactLookup(settings, client, number, now, payload, clock)
        lookup.deadline = clock() + HISTORY_DEADLINE
        branch = lookup.base_branch()
        runs = lookup.recent_runs(branch, wanted)
    except Missing as missing:
        reason = missing.outcome.reason
        coverage = coverage_of(wanted, 0, 0, {}, denied=missing.denied, failed=None if missing.denied else reason)
        return HistoryLookup(Earlier((), coverage, branch), (f"history: {reason}",))
    skipped: dict[SkipReason, int] = {}
    notes: list[str] = []
    read: list[RunScores] = []
    budget = MAX_HISTORY_ZIP_BYTES

    def skip(reason: SkipReason, run_sha: str, why: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1
        notes.append(f"history: the run at {run_sha[:7]} skipped: {why}")

    for run in runs:  # newest first: the budgets keep the runs nearest this one
        date = run.created_at.isoformat().replace("+00:00", "Z") if run.created_at is not None else None
        if run.id in known:
            read.append(run_scores(run.head_sha, date, known[run.id]))
            continue
        if clock() > lookup.deadline:
            skip(TIMED_OUT, run.head_sha, f"not started within {HISTORY_DEADLINE:g} s")
            continue
        try:
            artifact, expired = lookup.artifact_of(run)
            if artifact is None:
                skip(EXPIRED if expired else MISSING, run.head_sha, "its artifact has expired" if expired else
                     f"no artifact `{settings.baseline_artifact}`")  # fmt: skip
                continue
            size = artifact.size or 0
            if size > budget:
                skip(OVER_BUDGET, run.head_sha, f"{size:,} bytes, more than the {budget:,} left")
                budget = 0
                continue
            budget -= size
            records, _ = lookup.download(artifact, branch)
        except Missing as missing:
            skip(missing.skip, run.head_sha, missing.outcome.reason)
            continue
        read.append(run_scores(run.head_sha, date, records))
    read.reverse()  # oldest first, as the summary reads them
    coverage = coverage_of(wanted, len(runs), len(read), skipped)
    return HistoryLookup(Earlier(tuple(read), coverage, branch), tuple(notes))
