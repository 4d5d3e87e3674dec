"""GitHub's real answers, end to end: rate limits told from refusals on every call, and a token that
GitHub's own message echoes kept out of every document and output."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLE
from fakegithub import FakeGitHub, Fault, primary_rate_limit, secondary_rate_limit
from runner_env import TOKEN
from test_action import run_action
from test_archive import make_zip

from leaderboard.action.redact import RedactingWriter, hidden, redacted
from leaderboard.report.document import marker

ARTIFACT = "eval-results"
BASE, HEAD, MERGE_BASE = "b" * 40, "c" * 40, "a" * 40
PAYLOAD = {
    "number": 7,
    "pull_request": {"number": 7, "base": {"ref": "main", "sha": BASE}, "head": {"ref": "feature", "sha": HEAD}},
}
GOOD = make_zip({"results/mteb.jsonl": EXAMPLE.read_text()})
COMMENTS = r"/repos/octo/evals/issues/7/comments"
FORK_TEXT = ("fork", "pull-requests: write", "actions: read")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "workspace"
    (ws / "results").mkdir(parents=True)
    shutil.copy(EXAMPLE, ws / "results" / "mteb.jsonl")
    return ws


def with_baseline(fake: FakeGitHub) -> None:
    fake.merge_bases[(BASE, HEAD)] = MERGE_BASE
    fake.add_run(MERGE_BASE, created_at="2026-11-28T10:00:00Z", artifacts={ARTIFACT: GOOD})
    fake.add_pull(7, "main", BASE, HEAD)


def documents(ws: Path) -> str:
    directory = ws / ".leaderboard" / "leaderboard"
    return "".join(p.read_text() for p in sorted(directory.iterdir()))


def limit_fault(kind: str, method: str, path: str) -> Fault:
    if kind == "secondary":
        return secondary_rate_limit(method, path)
    return primary_rate_limit(method, path, status=int(kind.split()[1]))


# --- the comment ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["secondary", "primary 403", "primary 429"])
def test_a_rate_limit_on_the_first_comment_is_an_error_that_says_so_not_the_fork_advice(
    workspace: Path, fake_github: FakeGitHub, kind: str
) -> None:
    fake_github.faults.append(limit_fault(kind, "POST", COMMENTS))
    result = run_action(workspace, fake_github.url)
    assert result.code == 1 and fake_github.thread() == []
    (error,) = [a for a in result.annotations if a.startswith("::error")]
    assert f"GitHub's {kind.split()[0]} rate limit stopped creating the comment" in error
    assert "not a permission problem" in error and not any(text in error for text in FORK_TEXT)
    assert not [a for a in result.annotations if a.startswith("::warning")]
    assert result.outputs["comment-id"] == "" and "| Rank | Model |" in result.summary


def test_a_rate_limit_on_editing_a_comment_says_the_comment_still_shows_an_earlier_run(
    workspace: Path, fake_github: FakeGitHub
) -> None:
    old = fake_github.add_comment("octo/evals", 7, marker("leaderboard") + "\nan earlier run")
    fake_github.faults.append(secondary_rate_limit("PATCH", r"/repos/octo/evals/issues/comments/\d+"))
    result = run_action(workspace, fake_github.url)
    assert result.code == 1 and old["body"].endswith("an earlier run")
    (error,) = [a for a in result.annotations if a.startswith("::error")]
    assert "secondary rate limit stopped editing comment" in error and "still shows an earlier run" in error


def test_a_rate_limit_on_listing_the_comments_of_a_rejected_run_says_the_comment_is_stale(
    workspace: Path, fake_github: FakeGitHub
) -> None:
    fake_github.add_comment("octo/evals", 7, marker("leaderboard") + "\nan earlier run")
    (workspace / "results" / "bad.jsonl").write_text('{"model_id": "m"}\n')
    fake_github.faults.append(secondary_rate_limit("GET", COMMENTS))
    result = run_action(workspace, fake_github.url)
    assert result.code == 1
    (error,) = [a for a in result.annotations if a.startswith("::error") and "rate limit" in a]
    assert "listing the PR's comments" in error and "is now stale" in error
    assert not any(text in error for text in FORK_TEXT)


# --- the baseline lookup -------------------------------------------------------------------------

LOOKUPS = {  # every call of the lookup: (method, path)
    "pull": ("GET", r"/repos/octo/evals/pulls/7"),
    "runs": ("GET", r"/repos/octo/evals/actions/workflows/[^/]+/runs"),
    "artifacts": ("GET", r"/repos/octo/evals/actions/runs/\d+/artifacts"),
    "download": ("GET", r"/repos/octo/evals/actions/artifacts/\d+/zip"),
}


@pytest.mark.parametrize("call", sorted(LOOKUPS))
@pytest.mark.parametrize("kind", ["secondary", "primary 429"])
def test_a_rate_limit_in_the_baseline_lookup_is_no_baseline_that_says_rate_limit(
    workspace: Path, fake_github: FakeGitHub, call: str, kind: str
) -> None:
    with_baseline(fake_github)
    fake_github.faults.append(limit_fault(kind, *LOOKUPS[call]))
    # workflow_dispatch with pr-number: the PR's branch and SHAs come from GET /pulls/7
    result = run_action(workspace, fake_github.url, "workflow_dispatch", {}, baseline_artifact=ARTIFACT, pr_number="7")
    assert result.code == 0, result.stdout
    (warning,) = [a for a in result.annotations if a.startswith("::warning")]
    assert f"GitHub's {kind.split()[0]} rate limit stopped" in warning and "not a permission problem" in warning
    assert "permissions" not in warning and "fork" not in warning
    assert result.outputs["baseline-sha"] == "" and len(fake_github.thread()) == 1


def test_a_rate_limit_on_the_comparison_leaves_the_merge_base_unknown_and_says_why(
    workspace: Path, fake_github: FakeGitHub
) -> None:
    with_baseline(fake_github)
    fake_github.faults.append(secondary_rate_limit("GET", r"/repos/octo/evals/compare/.*"))
    result = run_action(workspace, fake_github.url, "pull_request", PAYLOAD, baseline_artifact=ARTIFACT)
    assert result.code == 0 and result.outputs["baseline-sha"] == MERGE_BASE
    report = json.loads((workspace / ".leaderboard" / "leaderboard" / "report.json").read_text())
    (note,) = report["baseline"]["source"]["notes"]
    assert note.startswith("merge-base unknown: GitHub's secondary rate limit stopped comparing")


# --- the token, whatever path it took ------------------------------------------------------------


def test_a_token_echoed_by_githubs_refusal_is_in_no_document_or_output(
    workspace: Path, fake_github: FakeGitHub
) -> None:
    with_baseline(fake_github)
    echo = f"Bad request for token {TOKEN}: Resource not accessible by integration"
    fake_github.faults.append(Fault("GET", r"/repos/octo/evals/actions/.*", 403, times=10, message=echo))
    result = run_action(workspace, fake_github.url, "pull_request", PAYLOAD, baseline_artifact=ARTIFACT)
    assert result.code == 0
    (comment,) = fake_github.thread()
    assert "Resource not accessible by integration" in comment["body"]  # the reason is said, the token is not
    for text in (comment["body"], result.summary, json.dumps(result.outputs), documents(workspace), result.stdout):
        shown = text.replace(f"::add-mask::{TOKEN}", "").replace("\\", "")  # markdown's and JSON's escapes
        assert TOKEN not in shown
    assert "for token (redacted)" in comment["body"]


def test_a_secret_split_between_two_writes_is_still_redacted() -> None:
    out = io.StringIO()
    with hidden("s3cret-token"):
        writer = RedactingWriter(out)
        for piece in ("abc s3cr", "et-tok", "en def s3cret-", "token", "!"):
            writer.write(piece)
        writer.close()
        assert redacted("x s3cret-token y") == "x (redacted) y"
        assert redacted("`s3cret\\-token` and \\\\s3cret\\\\-token") == "`(redacted)` and (redacted)"  # markdown, JSON
    assert out.getvalue() == "abc (redacted) def (redacted)!"
    assert redacted("x s3cret-token y") == "x s3cret-token y"  # only within the run that hid it


# --- the fake answers as GitHub does ---------------------------------------------------------------


def test_a_comparison_github_takes_seconds_to_compute_still_gives_the_merge_base(
    workspace: Path, fake_github: FakeGitHub
) -> None:
    with_baseline(fake_github)
    # Longer than a plain read's timeout (5 s), within the comparison's.
    fake_github.faults.append(Fault("GET", r"/repos/octo/evals/compare/.*", 0, times=3, delay=7.0))
    result = run_action(workspace, fake_github.url, "pull_request", PAYLOAD, baseline_artifact=ARTIFACT)
    assert result.code == 0 and result.outputs["baseline-sha"] == MERGE_BASE
    report = json.loads((workspace / ".leaderboard" / "leaderboard" / "report.json").read_text())
    assert report["baseline"]["source"]["is_merge_base"] is True and report["baseline"]["source"]["notes"] == []


def test_a_runs_artifacts_are_listed_newest_first(fake_github: FakeGitHub) -> None:
    from leaderboard.action.github_api import make_client

    run = fake_github.add_run(MERGE_BASE, created_at="2026-11-28T10:00:00Z", artifacts={ARTIFACT: GOOD})
    older = dict(fake_github.artifacts[-1], id=1, created_at="2026-11-27T10:00:00Z")
    newer = dict(fake_github.artifacts[-1], id=2, created_at="2026-11-29T10:00:00Z")
    fake_github.artifacts += [older, newer]
    url = f"{fake_github.url}/repos/octo/evals/actions/runs/{run['id']}/artifacts"
    _, listed = make_client(TOKEN, fake_github.url).requester.requestJsonAndCheck("GET", url)
    assert [a["created_at"][:10] for a in listed["artifacts"]] == ["2026-11-29", "2026-11-28", "2026-11-27"]


# --- what is said about forks is true ---------------------------------------------------------------


def test_the_fork_advice_says_a_fork_token_reads_artifacts_and_only_the_comment_is_blocked() -> None:
    """GitHub gives a fork's pull request a read-only token, `actions: read` included when asked for."""
    from conftest import ROOT

    from leaderboard.action.artifact import PERMISSION_FIX

    texts = [
        ROOT / "README.md",
        ROOT / "action.yml",
        *(ROOT / "docs").rglob("*.*"),
        *(ROOT / "leaderboard").rglob("*.py"),
    ]
    for path in texts:
        text = " ".join(path.read_text(errors="replace").split())
        assert "cannot read artifacts" not in text and "can't read artifacts" not in text, path
    assert "still reads artifacts" in PERMISSION_FIX and "cannot write the comment" in PERMISSION_FIX
