"""Finding the baseline artifact that this workflow uploaded on the PR's base branch.

1. the PR's base branch and base/head SHAs, from the event (``pull_request``) or ``GET /pulls/N``;
2. the merge-base, from ``GET /compare/{base}...{head}``;
3. the workflow's successful runs on the base branch at the merge-base (``head_sha`` filter),
   then, only if none of them has the artifact, the newest ones (one page of ``RUNS_PER_PAGE``);
4. each candidate run's artifacts of that name (at most ``MAX_ARTIFACT_LOOKUPS`` runs), expired ones skipped;
5. ``GET /actions/artifacts/{id}/zip`` with the token, which answers 302 to short-lived storage; the
   redirect is not followed by the GitHub client: :mod:`leaderboard.action.download` fetches it
   without credentials;
6. the zip unpacked with :func:`leaderboard.archive.extract_named` and its EvalRun and harness files loaded.

GitHub's calls go through the client of :func:`~leaderboard.action.github_api.make_client` (its
timeouts and its retry rules). What goes wrong on GitHub's side raises :class:`Missing`, which the
caller turns into a :class:`~leaderboard.baseline.NoBaseline` that says why and how to fix it.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import re
import tempfile
import urllib.parse
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import requests
from github import Github, GithubException

from ..archive import UnsafeArchive, extract_named
from ..baseline import Baseline, NoBaseline
from ..formats import Session
from ..formats.detect import detect
from ..formats.evalrun import FORMATS
from ..loading import load_runs
from ..records import EvalRun
from ..stats.history import EXPIRED, INVALID, OVER_BUDGET, TIMED_OUT
from ..validation import InvalidEvalRuns
from . import github_api
from .deadline import DeadlineExceeded, time_limit
from .download import MAX_ZIP_BYTES, RETRY_FIX, Missing, fetch_without_credentials
from .github_api import message
from .settings import Settings

STALE_DAYS = 14  # a baseline older than this is said to be old
RUNS_PER_PAGE = 30  # runs looked at per list request (one page, never more)
MAX_ARTIFACT_LOOKUPS = 5  # runs whose artifacts are asked for, at most
DEADLINE = 30.0  # no GitHub call starts after this many seconds (each ends within 25 s: github_api)
PR_EVENTS = ("pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment")

PERMISSION_FIX = (
    "give the job `permissions: actions: read` (besides `contents: read` and `pull-requests: write`); "
    "a pull request from a fork gets a read-only token, which still reads artifacts when the workflow asks for "
    "`actions: read` but cannot write the comment: use the `workflow_run` recipe in docs/inputs.md"
)
UPLOAD_FIX = (
    "upload the EvalRun files on the base branch from this workflow: run it on `push` to `{branch}` and add "
    "an `actions/upload-artifact` step with `name: {artifact}` (see the README's baseline example)"
)
# What may go into a link target: a commit SHA (SHA-1 or SHA-256 repositories), an https server
# address as GITHUB_SERVER_URL gives it, an owner/name. Nothing that could end the link: no `)`,
# space, `<`, quote or backslash.
_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_SERVER_URL = re.compile(r"https://[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~-]+)*")
_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")

T = TypeVar("T")


@dataclass(frozen=True)
class _Pull:
    base_ref: str
    base_sha: str | None
    head_sha: str | None


@dataclass(frozen=True)
class _Run:
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
    def parse(data: Mapping[str, Any], api_repo_url: str) -> _Run | None:
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
        return _Run(
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
class _Artifact:
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


# --- the artifact lookup ---------------------------------------------------------------------


class ArtifactLookup:
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

    # -- steps ------------------------------------------------------------------------------

    def find(self) -> Baseline | NoBaseline:
        workflow = self._workflow()
        pull = self._pull()
        merge_base, notes = self._merge_base(pull)
        run, artifact, why_not = self._pick(workflow, pull.base_ref, merge_base)
        is_merge_base = None if merge_base is None else run.head_sha == merge_base
        if merge_base is not None and not is_merge_base:
            notes.append(
                f"not the merge-base ({merge_base[:7]}): {why_not}; this is the newest successful run on "
                f"{pull.base_ref} with the artifact"
            )
        runs, files = self.download(artifact, pull.base_ref)
        age = None if run.created_at is None else max(0.0, (self.now - run.created_at).total_seconds() / 86400)
        if age is not None and age > STALE_DAYS:
            notes.append(f"older than {STALE_DAYS} days")
        server = self.settings.server_url.rstrip("/")
        linked = _SERVER_URL.fullmatch(server) is not None and _REPOSITORY.fullmatch(self.repository) is not None
        return Baseline(
            runs=tuple(runs),
            origin="artifact",
            branch=pull.base_ref,
            sha=run.head_sha,
            sha_url=f"{server}/{self.repository}/commit/{run.head_sha}" if linked else None,
            run_id=run.id,
            run_url=f"{server}/{self.repository}/actions/runs/{run.id}" if linked else None,
            created_at=run.created_at,
            is_merge_base=is_merge_base,
            age_days=age,
            notes=tuple(notes),
            artifact=artifact.name,
            files=files,
        )

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

    def _pull(self) -> _Pull:
        """The base branch and SHAs: from the event when it carries the PR, else ``GET /pulls/N``."""
        pr = self.payload.get("pull_request") if self.settings.event_name in PR_EVENTS else None
        if isinstance(pr, Mapping) and pr.get("number") in (None, self.number):
            base, head = pr.get("base"), pr.get("head")
            if isinstance(base, Mapping) and isinstance(head, Mapping) and _str(base.get("ref")):
                return _Pull(str(base["ref"]), _str(base.get("sha")), _str(head.get("sha")))
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
        return _Pull(str(base["ref"]), _str(base.get("sha")), _str(head.get("sha")))

    def _merge_base(self, pull: _Pull) -> tuple[str | None, list[str]]:
        """The merge-base of the PR (GitHub's compare API), or None with a note saying why not."""
        if not (pull.base_sha and pull.head_sha):
            return None, ["merge-base unknown (the pull request's SHAs are not known)"]
        base_sha, head_sha = (urllib.parse.quote(sha, safe="") for sha in (pull.base_sha, pull.head_sha))
        try:
            data = self._get(
                "comparing the base and head commits", f"{self.repo_url}/compare/{base_sha}...{head_sha}",
                {"per_page": 1}, requester=github_api.slow_requester(self.gh),
            )  # fmt: skip
        except Missing as missing:  # the newest run on the base branch still serves
            return None, [f"merge-base unknown: {missing.outcome.reason}"]
        commit = data.get("merge_base_commit") if isinstance(data, Mapping) else None
        sha = commit.get("sha") if isinstance(commit, Mapping) else None
        if not is_sha(sha):
            return None, ["merge-base unknown: GitHub's answer to the comparison names no merge-base commit"]
        assert isinstance(sha, str)
        return sha, []

    def base_branch(self) -> str:
        """The pull request's base branch (from the event, else ``GET /pulls/N``)."""
        return self._pull().base_ref

    def recent_runs(self, branch: str, limit: int) -> list[_Run]:
        """The newest ``limit`` successful runs of the workflow on ``branch``, newest first (one page).

        The page asks for more than ``limit`` (at most 100, GitHub's largest): runs that are not the base
        branch's (a fork's, a pull request's) are dropped from it.
        """
        per_page = min(100, max(RUNS_PER_PAGE, 2 * limit))
        return self._runs(self._workflow(), branch, None, per_page=per_page)[:limit]

    def _runs(
        self, workflow: str | int, branch: str, head_sha: str | None, *, per_page: int = RUNS_PER_PAGE
    ) -> list[_Run]:
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
        runs = [_Run.parse(item, self.repo_url) for item in items or [] if isinstance(item, Mapping)]
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

    def artifact_of(self, run: _Run) -> tuple[_Artifact | None, bool]:
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
            return _Artifact(int(item["id"]), self.name, size if isinstance(size, int) else None, False, url), expired
        return None, expired

    def _pick(self, workflow: str | int, branch: str, merge_base: str | None) -> tuple[_Run, _Artifact, str]:
        """The run at the merge-base with the artifact, else the newest with it; and why not the merge-base."""
        looked: set[int] = set()
        expired = 0
        seen_runs = 0
        why_not = "no successful run of the workflow at the merge-base"
        for head_sha in ([merge_base] if merge_base else []) + [None]:
            if len(looked) >= MAX_ARTIFACT_LOOKUPS:
                break
            runs = self._runs(workflow, branch, head_sha)
            seen_runs += len(runs)
            if head_sha is not None and runs:
                why_not = "the merge-base's run has no unexpired artifact of that name"
            for run in runs:
                if run.id in looked:
                    continue
                if len(looked) >= MAX_ARTIFACT_LOOKUPS:
                    break
                looked.add(run.id)
                artifact, was_expired = self.artifact_of(run)
                expired += was_expired
                if artifact is not None:
                    return run, artifact, why_not
        wf = f"`{workflow}`" if isinstance(workflow, str) else f"workflow {workflow}"
        fix = UPLOAD_FIX.format(branch=branch, artifact=self.name)
        if not seen_runs:
            raise Missing(f"no successful run of {wf} on `{branch}` was found", fix)
        detail = f"; {expired} of them only expired ones" if expired else ""
        raise Missing(
            f"no unexpired artifact `{self.name}` in the {len(looked)} most recent successful run(s) of {wf} on "
            f"`{branch}`{detail}",
            fix if not expired else fix + ", and run it again (its artifacts expired: raise `retention-days`)",
        )

    def download(self, artifact: _Artifact, branch: str) -> tuple[Sequence[EvalRun], tuple[str, ...]]:
        if artifact.size is not None and artifact.size > MAX_ZIP_BYTES:
            raise Missing(
                f"artifact `{artifact.name}` is {artifact.size} bytes, more than the {MAX_ZIP_BYTES} allowed",
                "upload only the EvalRun files in it",
                skip=OVER_BUDGET,
            )
        what = f"downloading artifact `{artifact.name}` ({artifact.id})"

        def redirect() -> tuple[int, dict[str, Any], str]:
            # follow_302_redirect=False (the default): the token goes to GitHub's API only.
            return self.gh.requester.requestJson("GET", artifact.download_url)

        status, headers, body = self._call(what, redirect)
        location = {k.lower(): v for k, v in headers.items()}.get("location")
        location = urllib.parse.urljoin(artifact.download_url, location) if location else None
        if status == 410:
            raise Missing(
                f"artifact `{artifact.name}` has expired",
                UPLOAD_FIX.format(branch=branch, artifact=artifact.name),
                skip=EXPIRED,
            )
        if github_api.rate_limit_wait(status, headers, _json_message(body)) is not None:
            kind = github_api.rate_limit_text(status, headers, _json_message(body))
            raise Missing(f"GitHub's {kind} stopped {what} (HTTP {status}: {_json_message(body)}), not a permission "
                          "problem", RETRY_FIX)  # fmt: skip
        if status in (401, 403, 404):
            raise Missing(f"GitHub refused {what} (HTTP {status}: {_json_message(body)})", PERMISSION_FIX)
        if status not in (301, 302, 303, 307, 308) or not location:
            raise Missing(f"{what}: GitHub answered HTTP {status} without a download address", RETRY_FIX)
        with tempfile.TemporaryDirectory(prefix="leaderboard-baseline-") as tmp:
            archive = Path(tmp) / "artifact.zip"
            fetch_without_credentials(location, archive)
            unpacked = Path(tmp) / "unpacked"
            unpacked.mkdir()
            try:
                written = extract_named(archive, unpacked)
            except UnsafeArchive as exc:
                raise Missing(
                    f"artifact `{artifact.name}` was refused: {exc}",
                    "upload the EvalRun files as plain files (actions/upload-artifact with a `path:` of the files)",
                    skip=INVALID,  # a hostile or broken archive, a bomb's unpacked bytes included
                ) from exc
            # A member is written under its own name unless that is too long for the file system
            # (then under a short one): the names said are always the archive's.
            names = {p.relative_to(unpacked).as_posix(): member for p, member in written.items()}
            # EvalRun files by name, a harness's own files (Inspect .eval, OpenAI evals .log) by content;
            # anything else (a zip of transcripts, a README) is ignored.
            relative = sorted(
                p.relative_to(unpacked).as_posix() for p in written if p.suffix.lower() in FORMATS or _harness_file(p)
            )
            if not relative:
                raise Missing(
                    f"artifact `{artifact.name}` holds no eval results (EvalRun .json, .jsonl, .csv or harness files)",
                    "upload the EvalRun files themselves with actions/upload-artifact",
                    skip=INVALID,
                )
            try:
                session = Session(self.settings.read_options)  # read as `runs` is: same format, metric, filter
                runs = load_runs([glob.escape(r) for r in relative], root=unpacked, session=session)
            except InvalidEvalRuns as exc:
                problems = [
                    dataclasses.replace(p, file=names.get(p.file, p.file)) if p.file else p for p in exc.problems
                ]
                first = "; ".join(str(p) for p in problems[:3])
                raise Missing(
                    f"artifact `{artifact.name}` holds invalid EvalRun data ({len(problems)} problem(s): {first})",
                    f"fix or leave out those files in the artifact `{artifact.name}` uploaded on `{branch}`: every "
                    ".json, .jsonl and .csv file in it, and every harness file, is read as the baseline",
                    skip=INVALID,
                ) from exc
        return runs, tuple(sorted(names[r] for r in relative))


def _harness_file(path: Path) -> bool:
    """Whether a file the artifact holds is a harness's output, by its content.

    A zip is taken for an Inspect log only when it has an Inspect log's header member: an unrelated
    zip beside the EvalRun files (``logs/raw-transcripts.zip``) is not eval results and is ignored.
    """
    kind = detect(path)
    if kind != "inspect" or path.suffix.lower() == ".json":
        return kind is not None
    try:
        with zipfile.ZipFile(path) as archive:
            members = set(archive.namelist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return False
    return "header.json" in members or "_journal/start.json" in members


def _json_message(body: str) -> str:
    try:
        data = json.loads(body)
    except (ValueError, TypeError):
        return ""
    return str(data.get("message", "")) if isinstance(data, dict) else ""
