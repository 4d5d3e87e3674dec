"""Finding the baseline artifact that this workflow uploaded on the PR's base branch.

1. the PR's base branch and base/head SHAs, from the event (``pull_request``) or ``GET /pulls/N``;
2. the merge-base, from ``GET /compare/{base}...{head}``;
3. the workflow's successful runs on the base branch at the merge-base (``head_sha`` filter),
   then, only if none of them has the artifact, the newest ones (one page; :mod:`leaderboard.action.runs`
   lists them);
4. each candidate run's artifacts of that name (at most ``MAX_ARTIFACT_LOOKUPS`` runs), expired ones skipped;
5. ``GET /actions/artifacts/{id}/zip`` with the token, which answers 302 to short-lived storage; the
   redirect is not followed by the GitHub client: :mod:`leaderboard.action.download` fetches it
   without credentials;
6. the zip unpacked with :func:`leaderboard.archive.extract_named` and its EvalRun and harness files loaded.

GitHub's calls are :class:`~leaderboard.action.runs.RunListing`'s (the client's timeouts and retry rules,
one deadline). What goes wrong on GitHub's side raises :class:`Missing`, which the
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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..archive import UnsafeArchive, extract_named
from ..baseline import Baseline, NoBaseline
from ..formats import Session
from ..formats.detect import detect
from ..formats.evalrun import FORMATS
from ..loading import load_runs
from ..records import EvalRun
from ..stats.history import EXPIRED, INVALID, OVER_BUDGET
from ..validation import InvalidEvalRuns
from . import github_api
from .download import MAX_ZIP_BYTES, RETRY_FIX, Missing, fetch_without_credentials
from .runs import PERMISSION_FIX, Pull, RunArtifact, RunListing, WorkflowRun, is_sha

STALE_DAYS = 14  # a baseline older than this is said to be old
MAX_ARTIFACT_LOOKUPS = 5  # runs whose artifacts are asked for, at most

UPLOAD_FIX = (
    "upload the EvalRun files on the base branch from this workflow: run it on `push` to `{branch}` and add "
    "an `actions/upload-artifact` step with `name: {artifact}` (see the README's baseline example)"
)
# What may go into a link target: a commit SHA (SHA-1 or SHA-256 repositories), an https server
# address as GITHUB_SERVER_URL gives it, an owner/name. Nothing that could end the link: no `)`,
# space, `<`, quote or backslash.
_SERVER_URL = re.compile(r"https://[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~-]+)*")
_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


class ArtifactLookup(RunListing):
    """The baseline: the run at the merge-base (else the newest) with the artifact, downloaded and read."""

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

    def _merge_base(self, pull: Pull) -> tuple[str | None, list[str]]:
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

    def _pick(self, workflow: str | int, branch: str, merge_base: str | None) -> tuple[WorkflowRun, RunArtifact, str]:
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

    def download(self, artifact: RunArtifact, branch: str) -> tuple[Sequence[EvalRun], tuple[str, ...]]:
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
