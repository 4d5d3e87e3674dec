"""Where the baseline comes from: ``baseline`` files, or the base branch's artifact found through the
(fake) GitHub API by the real PyGithub client. The end-to-end tests run ``entrypoint.py`` once each."""

from __future__ import annotations

import json
import re
import shutil
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import EXAMPLE, ROOT
from fakegithub import FakeGitHub, Fault
from runner_env import TOKEN
from test_action import Result, assert_no_secret, run_action
from test_archive import make_zip

from leaderboard.action import download
from leaderboard.action.artifact import MAX_ARTIFACT_LOOKUPS, ArtifactLookup
from leaderboard.action.baseline import resolve_baseline
from leaderboard.action.download import Missing, fetch_without_credentials
from leaderboard.action.github_api import make_client
from leaderboard.action.runs import DEADLINE, workflow_file
from leaderboard.action.settings import parse_settings
from leaderboard.baseline import Baseline, NoBaseline, age_text, describe
from leaderboard.report.baseline import describe_markdown

ARTIFACT = "eval-results"
BASE, HEAD, MERGE_BASE, NEWER, OLDER = ("b" * 40, "h" * 40, "a1b2c3d" + "0" * 33, "e" * 40, "0" * 40)
PAYLOAD = {
    "number": 7,
    "pull_request": {"number": 7, "base": {"ref": "main", "sha": BASE}, "head": {"ref": "feature", "sha": HEAD}},
}
RECORDS = EXAMPLE.read_text().count("\n")
GOOD = make_zip({"results/mteb.jsonl": EXAMPLE.read_text()})


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "workspace"
    (ws / "results").mkdir(parents=True)
    shutil.copy(EXAMPLE, ws / "results" / "mteb.jsonl")
    return ws


def ago(days: float) -> str:
    return (datetime.now(UTC) - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_with_artifact(ws: Path, fake: FakeGitHub, **inputs: str) -> Result:
    inputs.setdefault("baseline_artifact", ARTIFACT)
    inputs.setdefault("history", "0")  # these tests count the baseline's own requests
    payload = json.loads(inputs.pop("payload")) if "payload" in inputs else PAYLOAD
    event = inputs.pop("event", "pull_request")
    return run_action(ws, fake.url if "api" not in inputs else inputs.pop("api"), event, payload, **inputs)


def baseline_gets(fake: FakeGitHub) -> list[str]:
    """The API requests of the baseline lookup (the comment's own requests left out)."""
    return [
        r.path.split("/octo/evals", 1)[-1]
        for r in fake.api_calls()
        if r.method == "GET" and "/comments" not in r.path and r.path not in ("/user", "/api/v3/user")
    ]


def artifact_id(fake: FakeGitHub, run: dict, name: str = ARTIFACT) -> int:
    return next(a["id"] for a in fake.artifacts if a["workflow_run"]["id"] == run["id"] and a["name"] == name)


def assert_storage_never_saw_the_token(fake: FakeGitHub) -> None:
    for path, headers in fake.storage_requests:
        assert "Authorization" not in {k.title() for k in headers}, path
        assert TOKEN not in json.dumps(headers) + path


def test_the_run_at_the_merge_base_wins_over_newer_runs_and_expired_failed_and_fork_runs_are_skipped(
    workspace: Path, fake_github: FakeGitHub
) -> None:
    fake_github.merge_bases[(BASE, HEAD)] = MERGE_BASE
    fake_github.add_run(NEWER, created_at=ago(0.2), artifacts={ARTIFACT: GOOD})  # newest on main, not the merge-base
    fake_github.add_run(MERGE_BASE, created_at=ago(1), conclusion="failure", artifacts={ARTIFACT: GOOD})
    fake_github.add_run(  # a fork's PR from a branch it named "main": not the base branch
        MERGE_BASE, created_at=ago(0.5), event="pull_request", head_repo="mallory/evals",
        artifacts={ARTIFACT: make_zip({"evil.jsonl": '{"model_id": "m", "task_id": "t", "metric_name": "a"}\n'})},
    )  # fmt: skip
    expired = fake_github.add_run(MERGE_BASE, created_at=ago(2), artifacts={ARTIFACT: GOOD}, expired=True)
    chosen = fake_github.add_run(MERGE_BASE, created_at=ago(3), artifacts={ARTIFACT: GOOD, "logs": b"not this"})
    fake_github.add_run(MERGE_BASE, created_at=ago(1.5), branch="feature", artifacts={ARTIFACT: GOOD})

    result = run_with_artifact(workspace, fake_github)

    assert result.code == 0, result.stdout + result.stderr
    assert (
        f"Baseline: main @ a1b2c3d, run {chosen['id']}, 3 days old (artifact 'eval-results', {RECORDS} records)."
        in (result.stdout)
    )
    assert "merge-base" not in result.stdout and "::warning" not in result.stdout
    assert result.outputs["baseline-sha"] == MERGE_BASE
    assert (result.outputs["regressions"], result.outputs["improvements"], result.outputs["regressed-models"]) == (
        "0", "0", "[]",
    )  # fmt: skip
    assert "<details><summary>Compared with the base branch: No detectable change" in result.summary
    assert f"[`a1b2c3d`](https://github.com/octo/evals/commit/{MERGE_BASE})" in result.summary
    assert f"[run {chosen['id']}](https://github.com/octo/evals/actions/runs/{chosen['id']})" in result.summary
    # The requests, in order: compare, the merge-base's runs, two runs' artifacts (expired, then chosen), the zip.
    gets = baseline_gets(fake_github)
    assert gets == [
        f"/compare/{BASE}...{HEAD}",
        "/actions/workflows/leaderboard.yml/runs",
        f"/actions/runs/{expired['id']}/artifacts",
        f"/actions/runs/{chosen['id']}/artifacts",
        f"/actions/artifacts/{artifact_id(fake_github, chosen)}/zip",
    ]
    runs_query = next(r.query for r in fake_github.api_calls() if r.path.endswith("/runs"))
    assert runs_query == {"branch": ["main"], "status": ["success"], "per_page": ["30"], "head_sha": [MERGE_BASE]}
    assert all(r.authorization == f"token {TOKEN}" for r in fake_github.api_calls())
    (storage,) = fake_github.storage_requests
    assert storage[0].startswith(f"/storage/artifacts/{artifact_id(fake_github, chosen)}.zip?sig=")
    assert_storage_never_saw_the_token(fake_github)
    assert_no_secret(result)
    assert len(fake_github.thread()) == 1  # the comment's life goes on as before


def test_a_harness_log_in_the_artifact_is_read_by_its_content(workspace: Path, fake_github: FakeGitHub) -> None:
    log = (
        ROOT
        / "examples"
        / "formats"
        / "inspect_ai"
        / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
    )
    shutil.copy(log, workspace / "results" / log.name)
    fake_github.merge_bases[(BASE, HEAD)] = MERGE_BASE
    archive = make_zip({f"logs/{log.name}": log.read_bytes()})  # an Inspect log: a zip in the zip
    fake_github.add_run(MERGE_BASE, created_at=ago(1), artifacts={ARTIFACT: archive})

    result = run_with_artifact(workspace, fake_github, runs=f"results/{log.name}")

    assert result.code == 0, result.stdout
    assert "Baseline: main @ a1b2c3d" in result.stdout and "no baseline" not in result.stdout.lower()
    assert result.outputs["baseline-sha"] == MERGE_BASE


def test_without_a_run_at_the_merge_base_the_newest_successful_run_serves_and_is_said_not_to_be_it(
    workspace: Path, fake_github: FakeGitHub
) -> None:
    fake_github.merge_bases[(BASE, HEAD)] = MERGE_BASE
    fake_github.add_run(NEWER, created_at=ago(0.1), conclusion="failure", artifacts={ARTIFACT: GOOD})
    fake_github.add_run(NEWER, created_at=ago(0.2), conclusion=None, artifacts={ARTIFACT: GOOD})  # still running
    fake_github.add_run(NEWER, created_at=ago(20), artifacts={ARTIFACT: GOOD})
    fake_github.add_run(OLDER, created_at=ago(40), artifacts={ARTIFACT: GOOD})

    result = run_with_artifact(workspace, fake_github)

    assert result.code == 0, result.stdout
    assert "Baseline: main @ eeeeeee" in result.stdout and "20 days old" in result.stdout
    assert "Not the merge-base (a1b2c3d): no successful run of the workflow at the merge-base" in result.stdout
    assert "Older than 14 days." in result.stdout
    assert "⚠️ Not the merge\\-base" in result.summary and "⚠️ Older than 14 days" in result.summary
    assert result.outputs["baseline-sha"] == NEWER
    assert [g.rsplit("/", 1)[-1] for g in baseline_gets(fake_github)] == [
        f"{BASE}...{HEAD}", "runs", "runs", "artifacts", "zip",
    ]  # fmt: skip
    assert_storage_never_saw_the_token(fake_github)


@pytest.mark.parametrize(
    ("archive", "why"),
    [
        (make_zip({"results/ok.jsonl": EXAMPLE.read_text(), "../../outside.jsonl": "{}\n"}), "'..' in the path"),
        (
            make_zip({"results/ok.jsonl": EXAMPLE.read_text()}, links={"results/x.jsonl": "/etc/passwd"}),
            "symbolic link",
        ),
    ],
    ids=["dot-dot", "symlink"],
)
def test_an_archive_with_a_path_out_or_a_link_is_refused_and_the_step_goes_on_without_a_baseline(
    workspace: Path, fake_github: FakeGitHub, archive: bytes, why: str
) -> None:
    fake_github.merge_bases[(BASE, HEAD)] = MERGE_BASE
    fake_github.add_run(MERGE_BASE, created_at=ago(1), artifacts={ARTIFACT: archive})

    result = run_with_artifact(workspace, fake_github)

    assert result.code == 0, result.stdout
    (warning,) = [a for a in result.annotations if a.startswith("::warning")]
    assert warning.startswith("::warning title=No baseline::No baseline: artifact `eval-results` was refused")
    assert why in warning and "Fix: upload the EvalRun files as plain files" in warning
    assert "**No baseline:**" in result.summary and result.outputs["baseline-sha"] == ""
    assert not list(workspace.parent.rglob("outside.jsonl"))
    assert len(fake_github.thread()) == 1


def test_a_token_without_actions_read_means_no_baseline_with_the_fix_and_the_step_does_not_fail(
    workspace: Path, fake_github: FakeGitHub
) -> None:
    fake_github.merge_bases[(BASE, HEAD)] = MERGE_BASE
    fake_github.add_run(MERGE_BASE, created_at=ago(1), artifacts={ARTIFACT: GOOD})
    fake_github.faults.append(
        Fault("GET", r"/repos/octo/evals/actions/.*", 403, times=10, message="Resource not accessible by integration")
    )

    result = run_with_artifact(workspace, fake_github)

    assert result.code == 0 and "Traceback" not in result.stdout + result.stderr
    (warning,) = [a for a in result.annotations if a.startswith("::warning")]
    assert "GitHub refused listing the runs of workflow leaderboard.yml on main (HTTP 403: Resource not" in warning
    assert "permissions: actions: read" in warning
    assert "permissions: actions: read" in result.summary.replace("\\", "")
    assert fake_github.storage_requests == [] and len(fake_github.thread()) == 1
    assert (result.outputs["baseline-sha"], result.outputs["regressions"]) == ("", "0")


def test_nothing_on_the_base_branch_means_no_baseline_saying_how_to_upload_it(
    workspace: Path, fake_github: FakeGitHub
) -> None:
    fake_github.merge_bases[(BASE, HEAD)] = MERGE_BASE
    fake_github.add_run(NEWER, created_at=ago(1), branch="other", artifacts={ARTIFACT: GOOD})

    result = run_with_artifact(workspace, fake_github)

    assert result.code == 0
    (warning,) = [a for a in result.annotations if a.startswith("::warning")]
    assert "no successful run of `leaderboard.yml` on `main` was found" in warning
    assert "`actions/upload-artifact`" in warning and "`name: eval-results`" in warning


def test_only_expired_artifacts_mean_no_baseline_that_says_they_expired(workspace: Path, fake_github) -> None:
    fake_github.merge_bases[(BASE, HEAD)] = MERGE_BASE
    fake_github.add_run(NEWER, created_at=ago(100), artifacts={ARTIFACT: GOOD}, expired=True)

    result = run_with_artifact(workspace, fake_github)

    assert result.code == 0
    (warning,) = [a for a in result.annotations if a.startswith("::warning")]
    assert "no unexpired artifact `eval-results` in the 1 most recent successful run(s)" in warning
    assert "1 of them only expired ones" in warning and "retention-days" in warning


def test_github_enterprise_server_is_reached_under_its_api_prefix(workspace: Path, fake_github) -> None:
    fake_github.ghes = True
    fake_github.merge_bases[(BASE, HEAD)] = MERGE_BASE
    fake_github.add_run(MERGE_BASE, created_at=ago(1), artifacts={ARTIFACT: GOOD})

    result = run_with_artifact(
        workspace, fake_github, api=f"{fake_github.url}/api/v3", GITHUB_SERVER_URL="https://ghe.example"
    )

    assert result.code == 0, result.stdout
    assert result.outputs["baseline-sha"] == MERGE_BASE
    assert f"(https://ghe.example/octo/evals/commit/{MERGE_BASE})" in result.summary
    lookups = [r.path for r in fake_github.api_calls() if "/actions/" in r.path or "/compare/" in r.path]
    assert len(lookups) == 4 and all(p.startswith("/api/v3/repos/octo/evals/") for p in lookups)
    assert_storage_never_saw_the_token(fake_github)


def test_on_workflow_run_the_pr_is_read_from_the_api_and_the_triggering_workflows_runs_are_searched(
    workspace: Path, fake_github
) -> None:
    fake_github.add_pull(7, "main", BASE, HEAD)
    fake_github.merge_bases[(BASE, HEAD)] = MERGE_BASE
    run = fake_github.add_run(MERGE_BASE, created_at=ago(1), workflow="eval.yml", workflow_id=99,
                              artifacts={ARTIFACT: GOOD})  # fmt: skip
    payload = {"workflow_run": {"id": 1, "workflow_id": 99, "event": "pull_request", "pull_requests": []}}

    result = run_with_artifact(
        workspace, fake_github, event="workflow_run", payload=json.dumps(payload), pr_number="7",
        GITHUB_WORKFLOW_REF="octo/evals/.github/workflows/comment.yml@refs/heads/main",
    )  # fmt: skip

    assert result.code == 0, result.stdout
    assert f"run {run['id']}" in result.stdout and result.outputs["baseline-sha"] == MERGE_BASE
    assert baseline_gets(fake_github)[:3] == ["/pulls/7", f"/compare/{BASE}...{HEAD}", "/actions/workflows/99/runs"]


def test_baseline_files_are_loaded_from_the_workspace_without_a_request(workspace: Path, fake_github) -> None:
    (workspace / "baseline").mkdir()
    (workspace / "baseline" / "main.jsonl").write_text(EXAMPLE.read_text())

    result = run_action(workspace, fake_github.url, baseline="baseline/*.jsonl")

    assert result.code == 0, result.stdout
    assert f"Baseline: {RECORDS} records from baseline/main.jsonl." in result.stdout
    assert "<summary>Compared with the baseline: No detectable change" in result.summary
    assert result.outputs["baseline-sha"] == ""
    assert baseline_gets(fake_github) == []


def test_invalid_baseline_files_fail_the_step_like_invalid_runs_and_say_they_are_the_baseline(
    workspace: Path, fake_github
) -> None:
    (workspace / "baseline").mkdir()
    (workspace / "baseline" / "bad.jsonl").write_text(
        '{"model_id": "m", "task_id": "t", "metric_name": "acc", "score": 1.5}\n'
    )

    result = run_action(workspace, fake_github.url, baseline="baseline/*.jsonl, baseline/missing.csv")

    assert result.code == 1 and "Traceback" not in result.stdout + result.stderr
    assert result.annotations == [
        "::error file=baseline/bad.jsonl,line=1,title=Invalid EvalRun%3A score::baseline: 1.5 is outside [0, 1]; "
        "normalise the metric to a fraction upstream",
        "::error file=baseline/missing.csv,title=Invalid EvalRun::baseline: cannot read the file: "
        "No such file or directory",
    ]
    assert "eval run rejected" in result.summary and "baseline: 1.5 is outside" in result.summary


# --- in-process: resolve_baseline with the real PyGithub client against the fake ------------------


def settings_for(fake: FakeGitHub, **env: str):
    return parse_settings(
        {
            "INPUT_RUNS": "r.jsonl",
            "INPUT_BASELINE-ARTIFACT": ARTIFACT,
            "GITHUB_REPOSITORY": "octo/evals",
            "GITHUB_API_URL": fake.url,
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_WORKFLOW_REF": "octo/evals/.github/workflows/leaderboard.yml@refs/pull/7/merge",
            **env,
        }
    )


def test_lookups_are_bounded_when_no_run_has_the_artifact(fake_github: FakeGitHub) -> None:
    fake_github.merge_bases[(BASE, HEAD)] = MERGE_BASE
    for i in range(40):
        fake_github.add_run(f"{i:040x}", created_at=ago(1 + i), artifacts={"other": GOOD})
    outcome = resolve_baseline(
        settings_for(fake_github), make_client(TOKEN, fake_github.url), 7, datetime.now(UTC), payload=PAYLOAD
    )
    assert isinstance(outcome, NoBaseline)
    assert f"in the {MAX_ARTIFACT_LOOKUPS} most recent successful run(s)" in outcome.reason
    gets = baseline_gets(fake_github)
    assert len(gets) == 3 + MAX_ARTIFACT_LOOKUPS  # compare, 2 run lists, the artifact lookups
    assert all(r.query.get("per_page") in (["30"], ["10"], ["1"]) for r in fake_github.api_calls())


def test_no_pull_request_or_no_token_is_no_baseline_without_a_request(fake_github: FakeGitHub) -> None:
    settings = settings_for(fake_github)
    now = datetime.now(UTC)
    no_pr = resolve_baseline(settings, make_client(TOKEN, fake_github.url), None, now, payload={})
    no_token = resolve_baseline(settings, None, 7, now, payload=PAYLOAD)
    assert isinstance(no_pr, NoBaseline) and "not about a pull request" in no_pr.reason
    assert isinstance(no_token, NoBaseline) and "github-token" in no_token.reason
    assert fake_github.requests == []
    assert resolve_baseline(settings_for(fake_github, **{"INPUT_BASELINE-ARTIFACT": ""}), None, 7, now) is None


def test_an_unknown_merge_base_falls_back_to_the_newest_run_and_says_so(fake_github: FakeGitHub) -> None:
    run = fake_github.add_run(NEWER, created_at=ago(2), artifacts={ARTIFACT: GOOD})  # compare answers 404
    outcome = resolve_baseline(
        settings_for(fake_github), make_client(TOKEN, fake_github.url), 7, datetime.now(UTC), payload=PAYLOAD
    )
    assert isinstance(outcome, Baseline) and outcome.run_id == run["id"] and outcome.is_merge_base is None
    assert outcome.notes[0].startswith("merge-base unknown: GitHub found nothing for comparing")
    assert len(outcome.runs) == RECORDS and outcome.files == ("results/mteb.jsonl",)
    assert outcome.age_days is not None and 1.99 < outcome.age_days < 2.01


def test_the_download_is_capped_while_streaming(fake_github: FakeGitHub, tmp_path: Path) -> None:
    fake_github.add_run(NEWER, created_at=ago(1), artifacts={ARTIFACT: GOOD})
    url = f"{fake_github.url}/storage/artifacts/{fake_github.artifacts[0]['id']}.zip?sig=x"
    fetch_without_credentials(url, tmp_path / "ok.zip")
    assert (tmp_path / "ok.zip").read_bytes() == GOOD
    with pytest.raises(Missing, match=r"is \d+ bytes, more than the 100 allowed"):  # as declared
        fetch_without_credentials(url, tmp_path / "big.zip", limit=100)
    fake_github.storage_without_length = True
    with pytest.raises(Missing, match="more than the 100 bytes allowed"):  # as counted while streaming
        fetch_without_credentials(url, tmp_path / "big.zip", limit=100)
    assert_storage_never_saw_the_token(fake_github)


def test_the_storage_never_gets_a_netrc_password(
    fake_github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".netrc").write_text("machine 127.0.0.1 login user password netrc-secret\n")
    (tmp_path / ".netrc").chmod(0o600)
    monkeypatch.setenv("NETRC", str(tmp_path / ".netrc"))
    monkeypatch.setenv("HOME", str(tmp_path))
    fake_github.add_run(NEWER, created_at=ago(1), artifacts={ARTIFACT: GOOD})
    fetch_without_credentials(
        f"{fake_github.url}/storage/artifacts/{fake_github.artifacts[0]['id']}.zip?sig=x", tmp_path / "a.zip"
    )
    ((_, headers),) = fake_github.storage_requests
    assert "Authorization" not in headers


def test_the_workflow_file_comes_from_github_workflow_ref() -> None:
    assert workflow_file("octo/evals/.github/workflows/eval.yml@refs/heads/main") == "eval.yml"
    assert workflow_file("octo/evals/.github/workflows/a.b.yaml@refs/pull/7/merge") == "a.b.yaml"
    assert workflow_file("") is None and workflow_file("octo/evals/dynamic/x@refs/heads/main") is None


def test_ages_read_naturally() -> None:
    assert [age_text(d) for d in (0.01, 0.5, 1, 1.04, 3.25, 20)] == [
        "less than an hour old", "12 hours old", "1 day old", "1 day old", "3.2 days old", "20 days old",
    ]  # fmt: skip


def test_a_push_with_baseline_artifact_set_says_quietly_that_there_is_nothing_to_compare(
    workspace: Path, fake_github
) -> None:
    result = run_action(
        workspace, fake_github.url, event="push", payload={"ref": "refs/heads/main"}, baseline_artifact=ARTIFACT
    )
    assert result.code == 0 and fake_github.requests == []
    assert "No baseline: this run is not about a pull request (event `push`)" in result.stdout
    assert not [a for a in result.annotations if a.startswith("::warning")]


def test_a_5xx_is_retried_as_the_comment_calls_are(fake_github: FakeGitHub) -> None:
    fake_github.merge_bases[(BASE, HEAD)] = MERGE_BASE
    fake_github.add_run(MERGE_BASE, created_at=ago(1), artifacts={ARTIFACT: GOOD})
    fake_github.faults.append(Fault("GET", r".*/actions/workflows/.*/runs", 502, times=1))
    outcome = resolve_baseline(
        settings_for(fake_github), make_client(TOKEN, fake_github.url), 7, datetime.now(UTC), payload=PAYLOAD
    )
    assert isinstance(outcome, Baseline) and outcome.is_merge_base
    assert sum(r.path.endswith("/runs") for r in fake_github.api_calls()) == 2


def test_a_rate_limit_or_an_outage_is_no_baseline_that_says_to_re_run(fake_github: FakeGitHub) -> None:
    fake_github.merge_bases[(BASE, HEAD)] = MERGE_BASE
    fake_github.add_run(MERGE_BASE, created_at=ago(1), artifacts={ARTIFACT: GOOD})
    reset = str(int(datetime.now(UTC).timestamp()) + 3600)
    fake_github.faults.append(
        Fault("GET", r".*/runs", 403, times=5, message="API rate limit exceeded",
              headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset})
    )  # fmt: skip
    client = make_client(TOKEN, fake_github.url)
    limited = resolve_baseline(settings_for(fake_github), client, 7, datetime.now(UTC), payload=PAYLOAD)
    assert isinstance(limited, NoBaseline) and "rate limit" in limited.reason and "re-run" in limited.fix
    fake_github.faults[:] = [Fault("GET", r".*/artifacts", 503, times=10)]
    down = resolve_baseline(settings_for(fake_github), client, 7, datetime.now(UTC), payload=PAYLOAD)
    assert isinstance(down, NoBaseline) and "listing the artifacts of run" in down.reason and "re-run" in down.fix


def test_no_lookup_call_starts_after_the_deadline(fake_github: FakeGitHub) -> None:
    fake_github.merge_bases[(BASE, HEAD)] = MERGE_BASE
    fake_github.add_run(MERGE_BASE, created_at=ago(1), artifacts={ARTIFACT: GOOD})
    ticks = iter([0.0, 1.0, DEADLINE + 1])  # start, compare, then the run list: too late
    outcome = resolve_baseline(
        settings_for(fake_github), make_client(TOKEN, fake_github.url), 7, datetime.now(UTC), payload=PAYLOAD,
        clock=lambda: next(ticks),
    )  # fmt: skip
    assert isinstance(outcome, NoBaseline) and "has not answered in time" in outcome.reason
    assert [r.path.rsplit("/", 1)[-1] for r in fake_github.api_calls()] == [f"{BASE}...{HEAD}"]


def test_a_storage_that_hangs_is_no_baseline_within_the_timeout(
    fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(download, "DOWNLOAD_TIMEOUT", (1.0, 0.3))
    fake_github.merge_bases[(BASE, HEAD)] = MERGE_BASE
    fake_github.add_run(MERGE_BASE, created_at=ago(1), artifacts={ARTIFACT: GOOD})
    fake_github.faults.append(Fault("GET", r"/storage/.*", 200, delay=2.0, after=True, times=10))
    outcome = resolve_baseline(
        settings_for(fake_github), make_client(TOKEN, fake_github.url), 7, datetime.now(UTC), payload=PAYLOAD
    )
    assert isinstance(outcome, NoBaseline)
    assert outcome.reason.startswith("downloading the artifact from its storage failed (")
    storage = [r for r in fake_github.requests if r.path.startswith("/storage/")]
    assert len(storage) == 1 + download.STORAGE_RETRIES  # tried again, as API reads are


# --- Issue 17: hostile and malformed answers, slow storage, odd archives ------------------------


def lookup(fake: FakeGitHub, **env: str) -> Baseline | NoBaseline | None:
    return resolve_baseline(
        settings_for(fake, **env), make_client(TOKEN, fake.url), 7, datetime.now(UTC), payload=PAYLOAD
    )


def with_merge_base_run(fake: FakeGitHub, archive: bytes = GOOD) -> dict:
    fake.merge_bases[(BASE, HEAD)] = MERGE_BASE
    return fake.add_run(MERGE_BASE, created_at=ago(1), artifacts={ARTIFACT: archive})


@pytest.mark.parametrize("answer", [{}, [], [{"merge_base_commit": {"sha": MERGE_BASE}}],
                                    {"merge_base_commit": {"sha": "a1b2c3d) ![x](https://evil.example/x.png"}}],
                         ids=["empty-object", "list", "list-of-objects", "not-a-sha"])  # fmt: skip
def test_a_malformed_compare_answer_leaves_the_merge_base_unknown_and_the_newest_run_serves(
    fake_github: FakeGitHub, answer: object
) -> None:
    run = with_merge_base_run(fake_github)
    fake_github.faults.append(Fault("GET", r".*/compare/.*", 200, body=answer))
    outcome = lookup(fake_github)
    assert isinstance(outcome, Baseline) and outcome.run_id == run["id"] and outcome.is_merge_base is None
    assert outcome.notes == ("merge-base unknown: GitHub's answer to the comparison names no merge-base commit",)


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        (Fault("GET", r".*/runs", 200, times=5, body=b'{"total_count": 3, "workflow_runs": [{"id": 1, "head_'),
         "listing the runs of workflow leaderboard.yml on main failed (GitHub's answer was not valid JSON)"),
        (Fault("GET", r".*/runs", 200, times=5, body=[1, 2]), "no successful run of `leaderboard.yml` on `main`"),
        (Fault("GET", r".*/runs", 301, times=5, headers={"Location": "http://evil.example/runs"}),
         "HTTP 301: Github server redirected from host 127.0.0.1 to evil.example"),
        (Fault("GET", r".*/runs", 301, times=50, headers={"Location": "{api}/repos/octo/evals/actions/other"}),
         "HTTP 301: GitHub answered 301 (moved) 4 times in a row"),
        (Fault("GET", r".*/pulls/7", 200, times=5, body=["not", "a", "pull"]),
         "pull request #7 has no base branch in GitHub's answer"),
    ],
    ids=["truncated-run-list", "run-list-is-a-list", "301-to-another-host", "301-loop", "pull-is-a-list"],
)  # fmt: skip
def test_a_malformed_lookup_answer_is_no_baseline_with_its_reason(
    fake_github: FakeGitHub, fault: Fault, said: str
) -> None:
    with_merge_base_run(fake_github)
    back = f"{fake_github.url}/repos/octo/evals/actions/workflows/leaderboard.yml/runs"
    fault.headers = {k: v.replace("{api}", fake_github.url) for k, v in fault.headers.items()}
    fake_github.faults += [fault, Fault("GET", r".*/actions/other", 301, times=50, headers={"Location": back})]
    fake_github.add_pull(7, "main", BASE, HEAD)
    payload = {"workflow_run": {"workflow_id": 161335}} if "pulls" in fault.path else PAYLOAD
    outcome = resolve_baseline(
        settings_for(fake_github, GITHUB_EVENT_NAME="workflow_run" if "pulls" in fault.path else "pull_request"),
        make_client(TOKEN, fake_github.url), 7, datetime.now(UTC), payload=payload,
    )  # fmt: skip
    assert isinstance(outcome, NoBaseline), outcome
    assert said in outcome.reason
    assert len(fake_github.api_calls()) < 12


def test_malformed_lookup_answers_leave_the_leaderboard_comment_a_leaderboard(
    workspace: Path, fake_github: FakeGitHub
) -> None:
    with_merge_base_run(fake_github)
    fake_github.faults += [
        Fault("GET", r".*/compare/.*", 200, body=[]),
        Fault("GET", r".*/runs", 200, times=5, body=b'{"workflow_runs": [{"id": 3'),
    ]
    first = run_with_artifact(workspace, fake_github, baseline_artifact="")  # the PR's leaderboard, before
    assert first.code == 0 and len(fake_github.thread()) == 1

    result = run_with_artifact(workspace, fake_github)

    assert result.code == 0 and "Traceback" not in result.stdout + result.stderr
    assert "failed unexpectedly" not in result.stdout
    (warning,) = [a for a in result.annotations if a.startswith("::warning")]
    assert "not valid JSON" in warning
    (comment,) = fake_github.thread()
    assert "## " in comment["body"] and "rejected" not in comment["body"].lower()
    assert "**No baseline:**" in comment["body"]


def test_a_lookup_answering_202_forever_is_given_up_after_a_few_tries(
    fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    import github.Consts

    monkeypatch.setattr(github.Consts, "PROCESSING_202_WAIT_TIME", 0.01)
    with_merge_base_run(fake_github)
    fake_github.faults += [Fault("GET", r".*/compare/.*", 202, times=100, body={}),
                           Fault("GET", r".*/runs", 202, times=100, body={})]  # fmt: skip
    outcome = lookup(fake_github)
    assert isinstance(outcome, NoBaseline)
    assert outcome.reason == (
        "listing the runs of workflow leaderboard.yml on main failed (HTTP 202: GitHub answered 202 "
        "(still processing) 4 times in a row)"
    )
    assert len(fake_github.api_calls()) == 2 * 4


def test_a_run_list_trickling_a_byte_at_a_time_ends_at_the_call_limit(
    fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from leaderboard.action import github_api

    monkeypatch.setattr(github_api, "CALL_LIMIT", 1.0)
    with_merge_base_run(fake_github)
    fake_github.trickle.append((r".*/runs", 0.02))
    started = time.monotonic()
    outcome = lookup(fake_github)
    assert isinstance(outcome, NoBaseline)
    assert outcome.reason.endswith("on main failed (no complete answer within 1 s)")
    assert time.monotonic() - started < 5


def test_a_storage_trickling_a_byte_at_a_time_ends_at_the_download_deadline(
    fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(download, "DOWNLOAD_DEADLINE", 1.0)
    with_merge_base_run(fake_github)
    fake_github.trickle.append((r"/storage/.*", 0.01))  # a byte per 10 ms: no read ever times out
    started = time.monotonic()
    outcome = lookup(fake_github)
    assert isinstance(outcome, NoBaseline) and outcome.reason == "the artifact's download took more than 1 s"
    assert time.monotonic() - started < 5


def test_a_transient_503_from_the_storage_is_retried_like_the_apis(fake_github: FakeGitHub) -> None:
    with_merge_base_run(fake_github)
    fake_github.faults.append(Fault("GET", r"/storage/.*", 503, times=1, message="Server Busy"))
    outcome = lookup(fake_github)
    assert isinstance(outcome, Baseline) and len(outcome.runs) == RECORDS
    assert sum(r.path.startswith("/storage/") for r in fake_github.requests) == 2
    assert_storage_never_saw_the_token(fake_github)


def test_a_member_name_too_long_for_the_file_system_is_still_read_and_named_as_in_the_archive(
    fake_github: FakeGitHub,
) -> None:
    name = "results/" + "m" * 250 + ".jsonl"  # a 256-byte file name: ENAMETOOLONG on disk
    with_merge_base_run(fake_github, make_zip({name: EXAMPLE.read_text()}))
    outcome = lookup(fake_github)
    assert isinstance(outcome, Baseline), outcome
    assert outcome.files == (name,) and len(outcome.runs) == RECORDS


def test_an_unrelated_zip_beside_the_evalrun_files_is_ignored(fake_github: FakeGitHub) -> None:
    transcripts = make_zip({"transcript-1.txt": "user: hi\nassistant: hello\n"})
    with_merge_base_run(fake_github, make_zip({"results/mteb.jsonl": EXAMPLE.read_text(),
                                               "logs/raw-transcripts.zip": transcripts}))  # fmt: skip
    outcome = lookup(fake_github)
    assert isinstance(outcome, Baseline), outcome
    assert outcome.files == ("results/mteb.jsonl",) and len(outcome.runs) == RECORDS


def test_invalid_data_in_the_artifact_names_the_files_and_a_true_fix(fake_github: FakeGitHub) -> None:
    bad = '{"model_id": "m", "task_id": "t", "metric_name": "acc", "score": 7}\n'
    with_merge_base_run(fake_github, make_zip({"results/mteb.jsonl": EXAMPLE.read_text(), "extra/old.jsonl": bad}))
    outcome = lookup(fake_github)
    assert isinstance(outcome, NoBaseline)
    assert "(1 problem(s): extra/old.jsonl:1: score: 7 is outside [0, 1]" in outcome.reason
    assert outcome.fix.startswith("fix or leave out those files in the artifact `eval-results` uploaded on `main`")
    assert "fails the base branch's own run" not in outcome.fix


def test_a_csv_of_200000_columns_each_twice_in_the_artifact_is_no_baseline_that_names_the_header(
    fake_github: FakeGitHub,
) -> None:
    extra = ",".join(f"x{i}" for i in range(200_000))
    wide = f"model_id,task_id,metric_name,score,{extra},{extra}\nm,t,acc,0.5\n"
    with_merge_base_run(fake_github, make_zip({"results/mteb.jsonl": EXAMPLE.read_text(), "results/wide.csv": wide}))
    outcome = lookup(fake_github)
    assert isinstance(outcome, NoBaseline)
    assert "(1 problem(s): results/wide.csv:1: the header row names the column(s) x0, x1, " in outcome.reason
    assert "and 199,990 others more than once" in outcome.reason
    assert len(outcome.reason) < 500


HOSTILE_URL = (
    "https://github.com/octo/evals/actions/runs/1) ![x](https://evil.example/x.png) [click](https://evil.example"
)


def test_run_addresses_from_the_api_never_reach_a_link_and_a_non_hex_sha_is_not_a_baseline(
    fake_github: FakeGitHub,
) -> None:
    chosen = fake_github.add_run(NEWER, created_at=ago(2), artifacts={ARTIFACT: GOOD})
    chosen["html_url"] = HOSTILE_URL
    chosen["artifacts_url"] = "https://evil.example/artifacts"
    fake_github.add_run("e" * 39 + ") [x](https://evil.example)", created_at=ago(1), artifacts={ARTIFACT: GOOD})
    outcome = lookup(fake_github)
    assert isinstance(outcome, Baseline) and outcome.sha == NEWER
    assert outcome.run_url == f"https://github.com/octo/evals/actions/runs/{chosen['id']}"
    assert outcome.sha_url == f"https://github.com/octo/evals/commit/{NEWER}"
    html = gfm(describe_markdown(outcome))
    assert "evil" not in html and "<img" not in html
    assert re.findall(r'href="([^"]*)"', html) == [outcome.sha_url, outcome.run_url]


def test_a_server_url_that_could_end_a_link_gives_no_links(fake_github: FakeGitHub) -> None:
    with_merge_base_run(fake_github)
    outcome = lookup(fake_github, GITHUB_SERVER_URL="https://github.com/x) ![x](https://evil.example/x.png")
    assert isinstance(outcome, Baseline) and outcome.sha_url is None and outcome.run_url is None
    html = gfm(describe_markdown(outcome))
    assert "href" not in html and "<img" not in html and "a1b2c3d" in html


def gfm(markdown: str) -> str:
    import cmarkgfm
    from cmarkgfm.cmark import Options

    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def test_no_baseline_shows_its_code_spans_as_code_and_the_status_page_as_a_link() -> None:
    outcome = NoBaseline("no successful run of `leaderboard.yml` on `main` was found", download.RETRY_FIX)
    markdown = describe_markdown(outcome)
    html = gfm(markdown)
    assert "<code>leaderboard.yml</code>" in html and "<code>main</code>" in html and "`" not in html
    assert '<a href="https://www.githubstatus.com">githubstatus.com</a>' in html
    assert "&#8203;" not in markdown.split("**Fix:**")[1].split("(or")[0]  # the link is whole


@pytest.mark.parametrize(
    "value",
    ["x` ![i](https://evil.example/i.png) `", "@octocat", "[a](https://evil.example)", "<img src=x>", "a`b",
     "https://evil.example/x", "octo/evals#1", "`", "```"],
)  # fmt: skip
def test_values_inside_a_no_baseline_reason_make_no_markup(value: str) -> None:
    outcome = NoBaseline(f"GitHub refused listing the runs on `{value}` (HTTP 403: {value})", f"see `{value}`")
    html = gfm(describe_markdown(outcome))
    assert set(re.findall(r"<(/?[a-z]+)", html)) <= {"p", "/p", "strong", "/strong", "code", "/code"}
    outside_code = re.sub(r"<code>.*?</code>", "", html, flags=re.S)
    assert "@octocat" not in outside_code.replace("@&#8203;octocat", "").replace("@\u200boctocat", "")


def test_an_unexpected_failure_in_the_lookup_is_no_baseline_not_a_failed_step(
    fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: object, pull: object) -> None:
        raise KeyError("surprise")

    monkeypatch.setattr(ArtifactLookup, "_merge_base", broken)
    outcome = lookup(fake_github)
    assert isinstance(outcome, NoBaseline)
    assert outcome.reason == "looking up the baseline failed unexpectedly (KeyError)"


def test_the_baseline_line_counts_its_records_with_thousands_separators() -> None:
    from leaderboard import EvalRun

    runs = tuple(EvalRun("m", f"t{k}", "acc", 1.0) for k in range(6000))
    origin = Baseline(
        runs=runs, origin="artifact", branch="main", sha="9f8e7d6c5b4a39281706f5e4d3c2b1a098765432",
        sha_url=None, run_id=118, run_url=None, created_at=datetime(2026, 11, 29, tzinfo=UTC),
        is_merge_base=True, age_days=1.0, artifact="eval-results",
    )  # fmt: skip
    assert "eval-results`, 6,000 records)." in describe_markdown(origin)
    assert "'eval-results', 6,000 records)." in describe(origin)
