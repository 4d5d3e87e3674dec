"""Which pull request a run is about: a pure function of the event and the inputs."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any


def pull_request_number(event_name: str, payload: Mapping[str, Any], override: int | None = None) -> int | None:
    """The PR to comment on, or None (a push, a schedule, an issue comment on a plain issue).

    ``override`` (the ``pr-number`` input) wins: it serves ``workflow_run`` from a
    fork and ``workflow_dispatch``, where the event names no PR or the wrong one.
    """
    if override is not None:
        return override
    if event_name in ("pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment"):
        pr = payload.get("pull_request")
        number = pr.get("number") if isinstance(pr, Mapping) else payload.get("number")
        return number if isinstance(number, int) else None
    if event_name == "issue_comment":
        issue = payload.get("issue")
        if isinstance(issue, Mapping) and issue.get("pull_request") and isinstance(issue.get("number"), int):
            return int(issue["number"])
        return None
    if event_name == "workflow_run":
        # Same-repository PRs are listed; a fork's PR is not (pass pr-number from an artifact).
        run = payload.get("workflow_run")
        prs = run.get("pull_requests") if isinstance(run, Mapping) else None
        if isinstance(prs, list) and prs and isinstance(prs[0], Mapping) and isinstance(prs[0].get("number"), int):
            return int(prs[0]["number"])
    return None


_SHA = re.compile(r"[0-9a-f]{7,64}")


def head_sha(payload: Mapping[str, Any], fallback: str | None) -> str | None:
    """The commit the results describe.

    On ``pull_request`` GITHUB_SHA is a merge commit nobody pushed: the PR's head is the
    commit a reviewer knows. On ``workflow_run``, the triggering run's head. Else GITHUB_SHA.
    """
    pr = payload.get("pull_request")
    run = payload.get("workflow_run")
    candidates = [
        pr.get("head", {}).get("sha") if isinstance(pr, Mapping) and isinstance(pr.get("head"), Mapping) else None,
        run.get("head_sha") if isinstance(run, Mapping) else None,
        fallback,
    ]
    return next((c for c in candidates if isinstance(c, str) and _SHA.fullmatch(c)), None)
