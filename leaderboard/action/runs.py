"""The workflow's runs on a branch and their artifacts, through GitHub's API, within a deadline.

What :class:`~leaderboard.action.artifact.ArtifactLookup` (the baseline) and the history
(:mod:`leaderboard.action.history`) both list: the pull request's base branch (from the event, else
``GET /pulls/N``), the workflow whose runs upload the artifact, one page of its successful runs on the
branch (a fork's or a pull request's runs dropped), and a run's unexpired artifact of the name asked for.

Every call goes through the client of :func:`~leaderboard.action.github_api.make_client` (its timeouts and
its retry rules), and none starts after ``DEADLINE``. What goes wrong on GitHub's side raises
:class:`~leaderboard.action.download.Missing`, which says why and how to fix it.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import requests
from github import Github, GithubException

from ..stats.history import TIMED_OUT
from . import github_api
from .deadline import DeadlineExceeded, time_limit
from .download import RETRY_FIX, Missing
from .github_api import message
from .settings import Settings

RUNS_PER_PAGE = 30  # runs looked at per list request (one page, never more)
DEADLINE = 30.0  # no GitHub call starts after this many seconds (each ends within 25 s: github_api)
PR_EVENTS = ("pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment")

PERMISSION_FIX = (
    "give the job `permissions: actions: read` (besides `contents: read` and `pull-requests: write`); "
    "a pull request from a fork gets a read-only token, which still reads artifacts when the workflow asks for "
    "`actions: read` but cannot write the comment: use the `workflow_run` recipe in docs/inputs.md"
)
# A commit SHA (SHA-1 or SHA-256 repositories): what may go into a link target.
_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")

T = TypeVar("T")


@dataclass(frozen=True)
class Pull:
    base_ref: str
    base_sha: str | None
    head_sha: str | None


@dataclass(frozen=True)
class WorkflowRun:
    """The fields of a workflow run (REST ``workflow_run`` object) that matter here."""

    id: int
    head_sha: str
    head_branch: str | None
    event: str
    conclusion: str | None
    created_at: datetime | None
    artifacts_url: str
    head_repository: str | None

    @staticmethod
    def parse(data: Mapping[str, Any], api_repo_url: str) -> WorkflowRun | None:
        """The run, or None when its id is not a number or its ``head_sha`` not a commit SHA.

        Its addresses are not taken from the answer: the artifacts are listed under the API's own
        address and the run is linked from GITHUB_SERVER_URL, whatever ``artifacts_url`` and
        ``html_url`` say (a link target from an answer could end the link and write markup).
        """
        run_id, sha = data.get("id"), data.get("head_sha")
        if not isinstance(run_id, int) or isinstance(run_id, bool) or not is_sha(sha):
            return None
        assert isinstance(sha, str)
        head_repo = data.get("head_repository")
        return WorkflowRun(
            id=run_id,
            head_sha=sha,
            head_branch=_str(data.get("head_branch")),
            event=_str(data.get("event")) or "",
            conclusion=_str(data.get("conclusion")),
            created_at=_time(data.get("run_started_at") or data.get("created_at")),
            artifacts_url=f"{api_repo_url}/actions/runs/{run_id}/artifacts",
            head_repository=_str(head_repo.get("full_name")) if isinstance(head_repo, Mapping) else None,
        )


@dataclass(frozen=True)
class RunArtifact:
    id: int
    name: str
    size: int | None
    expired: bool
    download_url: str


def is_sha(value: object) -> bool:
    return isinstance(value, str) and _SHA.fullmatch(value) is not None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def workflow_file(workflow_ref: str | None) -> str | None:
    """``x.yml`` from GITHUB_WORKFLOW_REF ``owner/repo/.github/workflows/x.yml@refs/heads/main``."""
    if not workflow_ref:
        return None
    path = workflow_ref.split("@", 1)[0]
    name = path.rsplit("/", 1)[-1]
    return name if name.endswith((".yml", ".yaml")) else None


class RunListing:
    """GitHub's calls for one pull request's base branch: its runs and their artifacts, within the deadline."""

    def __init__(
        self,
        settings: Settings,
        client: Github | None,
        number: int | None,
        now: datetime,
        payload: Mapping[str, Any],
        clock: Callable[[], float],
    ) -> None:
        self.settings = settings
        self.name = settings.baseline_artifact
        self.now = now
        self.payload = payload
        self.clock = clock
        self.deadline = clock() + DEADLINE
        self.number = number
        if number is None:
            raise Missing(
                f"this run is not about a pull request (event `{settings.event_name or 'unknown'}`), so there is "
                "no base branch to compare with",
                "run the action on `pull_request`, or pass `pr-number`",
                quiet=True,
            )
        if client is None:
            raise Missing("input `github-token` is empty, so the artifact cannot be looked up",
                           "leave `github-token` at its default (`${{ github.token }}`)")  # fmt: skip
        if not settings.repository:
            raise Missing("GITHUB_REPOSITORY is not set", "run the action in a GitHub Actions workflow")
        self.gh = client
        self.repository = settings.repository
        self.repo_url = f"{settings.api_url.rstrip('/')}/repos/{settings.repository}"

    # -- calls ------------------------------------------------------------------------------

    def _call(self, what: str, fn: Callable[[], T], fix: str = PERMISSION_FIX) -> T:
        """One GitHub call; a refusal, a rate limit, an outage or the deadline become :class:`Missing`."""
        if self.clock() > self.deadline:
            raise Missing(f"GitHub has not answered in time (gave up before {what})", RETRY_FIX, skip=TIMED_OUT)
        limit = github_api.CALL_LIMIT
        try:
            with time_limit(limit):
                return fn()
        except DeadlineExceeded as exc:
            raise Missing(f"{what} failed (no complete answer within {limit:g} s)", RETRY_FIX, skip=TIMED_OUT) from exc
        except ValueError as exc:  # JSONDecodeError: a truncated or garbled answer
            raise Missing(f"{what} failed (GitHub's answer was not valid JSON)", RETRY_FIX) from exc
        except GithubException as exc:
            detail = f"HTTP {exc.status}: {message(exc)}"
            if github_api.rate_limit_wait(exc.status, exc.headers, message(exc)) is not None:
                kind = github_api.rate_limit_text(exc.status, exc.headers, message(exc))
                raise Missing(
                    f"GitHub's {kind} stopped {what} ({detail}), not a permission problem", RETRY_FIX
                ) from exc
            if exc.status in (401, 403):
                raise Missing(f"GitHub refused {what} ({detail})", fix, denied=True) from exc
            if exc.status == 404:
                raise Missing(f"GitHub found nothing for {what} ({detail})", fix, denied=True) from exc
            raise Missing(f"{what} failed ({detail})", RETRY_FIX) from exc
        except requests.RequestException as exc:
            raise Missing(f"{what} failed ({type(exc).__name__})", RETRY_FIX) from exc

    def _get(
        self, what: str, url: str, params: dict[str, Any], fix: str = PERMISSION_FIX, requester: Any = None
    ) -> Any:
        """One GET through PyGithub's requester: exactly one request (no pagination, no lazy completion)."""
        via = requester or self.gh.requester
        return self._call(what, lambda: via.requestJsonAndCheck("GET", url, parameters=params)[1], fix)

    def _workflow(self) -> str | int:
        """The workflow whose base-branch runs upload the artifact.

        On ``workflow_run`` that is the workflow that triggered this one (the fork recipe: this
        workflow only comments); otherwise this workflow, from GITHUB_WORKFLOW_REF.
        """
        if self.settings.event_name == "workflow_run":
            triggering = self.payload.get("workflow_run")
            if isinstance(triggering, Mapping) and isinstance(triggering.get("workflow_id"), int):
                return int(triggering["workflow_id"])
        name = workflow_file(self.settings.workflow_ref)
        if name is None:
            raise Missing(
                "GITHUB_WORKFLOW_REF does not name this workflow's file, so its runs cannot be listed",
                "run the action in a GitHub Actions workflow (GitHub and GHES 3.9+ set GITHUB_WORKFLOW_REF)",
            )
        return name

    def _pull(self) -> Pull:
        """The base branch and SHAs: from the event when it carries the PR, else ``GET /pulls/N``."""
        pr = self.payload.get("pull_request") if self.settings.event_name in PR_EVENTS else None
        if isinstance(pr, Mapping) and pr.get("number") in (None, self.number):
            base, head = pr.get("base"), pr.get("head")
            if isinstance(base, Mapping) and isinstance(head, Mapping) and _str(base.get("ref")):
                return Pull(str(base["ref"]), _str(base.get("sha")), _str(head.get("sha")))
        assert self.number is not None
        number = self.number
        data = self._get(
            f"reading pull request #{number}", f"{self.repo_url}/pulls/{number}", {},
            fix="give the job `permissions: pull-requests: read` (or write) and check `pr-number`",
        )  # fmt: skip
        base = data.get("base") if isinstance(data, Mapping) else None
        head = data.get("head") if isinstance(data, Mapping) else None
        base = base if isinstance(base, Mapping) else {}
        head = head if isinstance(head, Mapping) else {}
        if not _str(base.get("ref")):
            raise Missing(f"pull request #{number} has no base branch in GitHub's answer", RETRY_FIX)
        return Pull(str(base["ref"]), _str(base.get("sha")), _str(head.get("sha")))

    def base_branch(self) -> str:
        """The pull request's base branch (from the event, else ``GET /pulls/N``)."""
        return self._pull().base_ref

    def recent_runs(self, branch: str, limit: int) -> list[WorkflowRun]:
        """The newest ``limit`` successful runs of the workflow on ``branch``, newest first (one page).

        The page asks for more than ``limit`` (at most 100, GitHub's largest): runs that are not the base
        branch's (a fork's, a pull request's) are dropped from it.
        """
        per_page = min(100, max(RUNS_PER_PAGE, 2 * limit))
        return self._runs(self._workflow(), branch, None, per_page=per_page)[:limit]

    def _runs(
        self, workflow: str | int, branch: str, head_sha: str | None, *, per_page: int = RUNS_PER_PAGE
    ) -> list[WorkflowRun]:
        """One page of the workflow's successful runs on ``branch`` (at ``head_sha``), newest first.

        Runs of another repository's head (a fork's PR whose branch has the base branch's name) and
        runs for pull requests are not the base branch's: they are dropped, whatever the filter.
        """
        params: dict[str, Any] = {"branch": branch, "status": "success", "per_page": per_page}
        if head_sha:
            params["head_sha"] = head_sha
        wf = urllib.parse.quote(str(workflow), safe="")
        url = f"{self.repo_url}/actions/workflows/{wf}/runs"
        data = self._get(f"listing the runs of workflow {workflow} on {branch}", url, params)
        items = data.get("workflow_runs") if isinstance(data, Mapping) else None
        runs = [WorkflowRun.parse(item, self.repo_url) for item in items or [] if isinstance(item, Mapping)]
        return [
            r
            for r in runs
            if r is not None
            and r.conclusion == "success"
            and r.head_branch == branch
            and r.event not in PR_EVENTS
            and (r.head_repository is None or r.head_repository.lower() == self.repository.lower())
            and (head_sha is None or r.head_sha == head_sha)
        ]

    def artifact_of(self, run: WorkflowRun) -> tuple[RunArtifact | None, bool]:
        """The run's unexpired artifact of that name (None if none), and whether an expired one was seen."""
        data = self._get(
            f"listing the artifacts of run {run.id}", run.artifacts_url, {"name": self.name, "per_page": 10}
        )
        expired = False
        for item in (data.get("artifacts") if isinstance(data, Mapping) else None) or []:
            if not isinstance(item, Mapping) or item.get("name") != self.name or not isinstance(item.get("id"), int):
                continue
            expires = _time(item.get("expires_at"))
            if item.get("expired") or (expires is not None and expires <= self.now):
                expired = True
                continue
            url = f"{self.repo_url}/actions/artifacts/{item['id']}/zip"  # never an address from the answer
            size = item.get("size_in_bytes")
            return RunArtifact(int(item["id"]), self.name, size if isinstance(size, int) else None, False, url), expired
        return None, expired
