"""The one sticky comment written on the pull request, and what the step says when GitHub will not have it.

:class:`~leaderboard.action.github_api.CommentThread` does the calls; this module turns its refusals into one
annotation each with the fix (a read-only token, a pull request it cannot see, a rejected token) and an exit
status: a refusal to write is a warning (the leaderboard is in the job summary), anything else an error.
"""

from __future__ import annotations

from collections.abc import Callable

from github import Github

from .github_api import (
    CommentOutcome,
    CommentRefused,
    CommentThread,
    GitHubUnavailable,
    TokenRejected,
)
from .settings import Settings
from .workflow import annotate

ClientFactory = Callable[[str, str], Github]

REFUSED_HELP = (
    "GitHub refused to write the leaderboard comment ({reason}). The token needs "
    "`permissions: pull-requests: write` in the workflow. A pull request from a fork gets a read-only "
    "token whatever the workflow asks: run this action from a separate `workflow_run` workflow with "
    "`pr-number` set (see the fork recipe in docs/inputs.md). The leaderboard is in this job's summary."
)
NOT_FOUND_HELP = (
    "GitHub found no pull request #{number} in {repository} for this token ({reason}): check `pr-number` "
    "if it is set, and that the token can see the repository. No comment was written."
)
TOKEN_HELP = (
    "GitHub does not accept the token ({reason}): check the `github-token` input (an expired or revoked "
    "token, or a secret that is not set). No comment was written{stale}."
)
STALE = "; a leaderboard comment already on the PR, if any, still shows an earlier run"


def publish(
    settings: Settings,
    number: int,
    client_factory: ClientFactory,
    act: Callable[[CommentThread], CommentOutcome],
    *,
    stale: str,
) -> tuple[CommentOutcome | None, int]:
    """Do ``act`` on the PR's comment thread; (outcome, exit status).

    ``stale`` ends the message of a failure that leaves the comment as it was.
    """
    if not settings.github_token:
        annotate("warning", "input 'github-token' is empty: no PR comment written.", title="Leaderboard comment")
        return None, 0
    if not settings.repository:
        annotate("error", "GITHUB_REPOSITORY is not set: cannot tell which repository the PR is in.")
        return None, 1
    try:
        thread = CommentThread(
            client_factory(settings.github_token, settings.api_url),
            settings.repository,
            number,
            settings.comment_key,
        )
        outcome = act(thread)
    except TokenRejected as exc:
        annotate("error", TOKEN_HELP.format(reason=str(exc), stale=stale), title="Leaderboard comment not written")
        return None, 1
    except CommentRefused as exc:
        if exc.status == 404:
            help_text = NOT_FOUND_HELP.format(number=number, repository=settings.repository, reason=str(exc))
            annotate("error", help_text, title="Leaderboard comment not written")
            return None, 1
        annotate("warning", REFUSED_HELP.format(reason=str(exc)), title="Leaderboard comment not written")
        return None, 0
    except GitHubUnavailable as exc:
        annotate("error", f"could not update the PR comment: {exc}{stale}.", title="GitHub API")
        return None, 1
    what = {
        "created": "Created",
        "updated": "Updated",
        "recreated": "Re-created",
        "unchanged": "Unchanged",
        "absent": "No",
    }[outcome.action]
    print(f"{what} leaderboard comment{f' {outcome.url}' if outcome.url else ''} on PR {number}.")
    if outcome.action == "recreated":
        print("The leaderboard comment was deleted while this run updated it, so it was posted again.")
    if outcome.duplicates_deleted:
        print(f"Deleted {outcome.duplicates_deleted} duplicate leaderboard comment(s) of this action.")
    return outcome, 0
