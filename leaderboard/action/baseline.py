"""Where the action's baseline comes from: EvalRun files in the workspace, or the base branch's artifact.

``baseline`` names files, loaded and checked like ``runs``. ``baseline-artifact`` names an
artifact that this workflow uploads on the PR's base branch, found by
:class:`~leaderboard.action.artifact.ArtifactLookup`. Nothing here fails the step: what goes
wrong on GitHub's side is a :class:`~leaderboard.baseline.NoBaseline` that says why and how to fix
it. Only ``baseline`` files with problems raise :class:`~leaderboard.validation.InvalidEvalRuns`
(each message starting "baseline: "), which the action reports like problems in ``runs``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from github import Github

from ..baseline import Baseline, NoBaseline, load_baseline_files
from .artifact import ArtifactLookup
from .download import RETRY_FIX, Missing
from .settings import Settings


def resolve_baseline(
    settings: Settings,
    client: Github | None,
    pull_request_number: int | None,
    now: datetime,
    *,
    payload: Mapping[str, Any] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Baseline | NoBaseline | None:
    """The baseline the inputs ask for; None when neither ``baseline`` nor ``baseline-artifact`` is set.

    ``client`` is the GitHub client (None without a token); ``now`` an aware datetime (ages);
    ``payload`` the event (read from ``settings.event_path`` when not given).
    Raise :class:`InvalidEvalRuns` (messages prefixed "baseline: ") for invalid ``baseline`` files.
    """
    if settings.baseline:
        return load_baseline_files(settings.baseline, settings.workspace, settings.read_options)
    if not settings.baseline_artifact:
        return None
    if payload is None:
        payload = _read_event(settings.event_path)
    try:
        return ArtifactLookup(settings, client, pull_request_number, now, payload, clock).find()
    except Missing as missing:
        return missing.outcome
    except Exception as exc:  # the promise: nothing in the lookup fails the step
        return NoBaseline(f"looking up the baseline failed unexpectedly ({type(exc).__name__})", RETRY_FIX)


def _read_event(path: str | None) -> Mapping[str, Any]:
    if not path:
        return {}
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # main() has already warned about it
    return payload if isinstance(payload, dict) else {}
