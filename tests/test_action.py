"""End to end: ``python entrypoint.py`` as the runner starts it, against the fake GitHub API."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import EXAMPLE, ROOT
from fakegithub import Fault
from runner_env import TOKEN, runner_env

from leaderboard.report.document import COMMENT_LIMIT, marker

REPO, PR = "octo/evals", 7


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str

    @property
    def annotations(self) -> list[str]:
        return [line for line in self.stdout.splitlines() if line.startswith(("::error", "::warning", "::notice"))]


def read_outputs(path: Path) -> dict[str, str]:
    outputs: dict[str, str] = {}
    lines = path.read_text().splitlines() if path.exists() else []
    i = 0
    while i < len(lines):
        if "<<" in lines[i]:
            name, delimiter = lines[i].split("<<", 1)
            end = lines.index(delimiter, i + 1)
            outputs[name] = "\n".join(lines[i + 1 : end])
            i = end + 1
        else:
            name, value = lines[i].split("=", 1)
            outputs[name] = value
            i += 1
    return outputs


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "workspace"
    (ws / "results").mkdir(parents=True)
    shutil.copy(EXAMPLE, ws / "results" / "mteb.jsonl")
    return ws


def run_action(
    ws: Path, api_url: str, event: str = "pull_request", payload: dict | None = None, **inputs: str
) -> Result:
    runner = ws.parent / "runner"
    runner.mkdir(exist_ok=True)
    event_path = runner / "event.json"
    event_path.write_text(
        json.dumps(payload if payload is not None else {"number": PR, "pull_request": {"number": PR}})
    )
    output, summary = runner / "output", runner / "summary"
    for f in (output, summary):
        f.write_text("")
    env = runner_env(
        workspace=str(ws), event_path=str(event_path), output=str(output), summary=str(summary),
        api_url=api_url, event=event, **inputs,
    )  # fmt: skip
    env.update({"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    done = subprocess.run(
        [sys.executable, str(ROOT / "entrypoint.py")], env=env, cwd=ws, capture_output=True, text=True, timeout=120
    )
    return Result(done.returncode, done.stdout, done.stderr, read_outputs(output), summary.read_text())


def assert_no_secret(result: Result) -> None:
    for text in (result.stdout.replace(f"::add-mask::{TOKEN}", ""), result.stderr, result.summary, str(result.outputs)):
        assert TOKEN not in text


def test_a_valid_run_posts_one_comment_and_sets_every_output(workspace: Path, fake_github) -> None:
    result = run_action(workspace, fake_github.url)
    assert result.code == 0, result.stdout + result.stderr
    (comment,) = fake_github.thread()
    assert comment["body"].startswith(marker("leaderboard") + "\n\n## Model leaderboard\n")
    assert "| Rank | Model | Mean | 95% CI | vs next | Win rate | Tasks |" in comment["body"]
    assert "[Workflow run](https://github.com/octo/evals/actions/runs/4242)" in comment["body"]
    out = result.outputs
    assert out["report"] == ".leaderboard/leaderboard/report.json" and (workspace / out["report"]).is_file()
    assert out["markdown"] == ".leaderboard/leaderboard/leaderboard.md" and (workspace / out["markdown"]).is_file()
    assert (out["top-model"], out["models"], out["tasks"]) == ("Qwen/Qwen3-Embedding-0.6B", "6", "41")
    assert out["comment-id"] == str(comment["id"]) and out["comment-url"] == comment["html_url"]
    assert "| Rank | Model |" in result.summary and "Traceback" not in result.stderr
    # What was posted is what the action wrote beside the report, to the byte.
    assert (workspace / ".leaderboard/leaderboard/comment.md").read_text(encoding="utf-8") == comment["body"]
    assert_no_secret(result)


def test_the_token_is_masked_before_anything_else(workspace: Path, fake_github) -> None:
    result = run_action(workspace, fake_github.url)
    assert result.stdout.splitlines()[0] == f"::add-mask::{TOKEN}"


def test_a_second_run_on_the_same_input_writes_nothing(workspace: Path, fake_github) -> None:
    run_action(workspace, fake_github.url)
    body = fake_github.thread()[0]["body"]
    again = run_action(workspace, fake_github.url, GITHUB_RUN_ID="4243")
    assert again.code == 0 and "Unchanged leaderboard comment" in again.stdout
    assert fake_github.thread()[0]["body"] == body
    assert fake_github.writes() == ["POST /repos/octo/evals/issues/7/comments"]
    assert again.outputs["comment-id"] == str(fake_github.thread()[0]["id"])


def test_the_comment_does_not_depend_on_record_or_file_order(workspace: Path, fake_github, tmp_path: Path) -> None:
    run_action(workspace, fake_github.url)
    first = fake_github.thread()[0]["body"]
    lines = (workspace / "results" / "mteb.jsonl").read_text().splitlines(keepends=True)
    (workspace / "results" / "mteb.jsonl").unlink()
    (workspace / "results" / "b.jsonl").write_text("".join(reversed(lines[::2])))
    (workspace / "results" / "a.jsonl").write_text("".join(lines[1::2]))
    assert run_action(workspace, fake_github.url).code == 0
    assert fake_github.thread()[0]["body"] == first


def test_invalid_scores_fail_the_step_with_an_annotation_per_problem(workspace: Path, fake_github) -> None:
    bad = workspace / "results" / "bad.jsonl"
    rows = [
        {"model_id": "m", "task_id": "t1", "metric_name": "acc", "score": 1.5},
        {"model_id": "m", "task_id": "t2", "metric_name": "acc", "score": 0.5},
        {"model_id": "m", "task_id": "t2", "metric_name": "acc", "score": 0.6},
    ]
    bad.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    result = run_action(workspace, fake_github.url)
    assert result.code == 1 and "Traceback" not in result.stdout + result.stderr
    assert result.annotations == [
        "::error file=results/bad.jsonl,line=1,title=Invalid EvalRun%3A score::1.5 is outside [0, 1]; "
        "normalise the metric to a fraction upstream",
        "::error file=results/bad.jsonl,line=3,title=Invalid EvalRun%3A task_id::duplicate (model_id, task_id) = "
        "('m', 't2'); first seen at results/bad.jsonl:2",
    ]
    assert "eval run rejected" in result.summary and "`results/bad.jsonl`" in result.summary
    assert fake_github.thread() == []  # no leaderboard comment yet: none is created for a rejection


def test_a_rejected_run_replaces_the_stale_leaderboard_in_the_comment(workspace: Path, fake_github) -> None:
    run_action(workspace, fake_github.url)
    (workspace / "results" / "bad.jsonl").write_text(
        '{"model_id": "m", "task_id": "t", "metric_name": "a", "score": 7}\n'
    )
    result = run_action(workspace, fake_github.url)
    assert result.code == 1
    (comment,) = fake_github.thread()
    assert "The latest eval run was rejected" in comment["body"] and "| Rank |" not in comment["body"]
    assert result.outputs["comment-id"] == str(comment["id"])


def test_a_push_writes_the_summary_and_no_comment(workspace: Path, fake_github) -> None:
    result = run_action(workspace, fake_github.url, event="push", payload={"ref": "refs/heads/main"})
    assert result.code == 0 and fake_github.requests == []
    assert "| Rank | Model |" in result.summary and result.outputs["comment-id"] == ""
    assert any(a.startswith("::notice") for a in result.annotations)


def test_pr_number_input_serves_workflow_dispatch(workspace: Path, fake_github) -> None:
    result = run_action(workspace, fake_github.url, event="workflow_dispatch", payload={}, pr_number="7")
    assert result.code == 0 and len(fake_github.thread()) == 1


def test_comment_off_writes_no_comment(workspace: Path, fake_github) -> None:
    result = run_action(workspace, fake_github.url, comment="off")
    assert result.code == 0 and fake_github.requests == []


def test_a_read_only_token_is_a_warning_that_explains_the_fix(workspace: Path, fake_github) -> None:
    fake_github.faults.append(Fault("POST", r".*/comments", 403, message="Resource not accessible by integration"))
    result = run_action(workspace, fake_github.url)
    assert result.code == 0
    (warning,) = [a for a in result.annotations if a.startswith("::warning")]
    assert "pull-requests: write" in warning and "workflow_run" in warning
    assert "| Rank | Model |" in result.summary and result.outputs["comment-id"] == ""


def test_a_github_outage_fails_the_step_with_one_clear_error(workspace: Path, fake_github) -> None:
    fake_github.faults.append(Fault("GET", r".*/comments", 502, times=100))
    result = run_action(workspace, fake_github.url)
    assert result.code == 1 and "Traceback" not in result.stdout + result.stderr
    (error,) = [a for a in result.annotations if a.startswith("::error")]
    assert "could not update the PR comment" in error
    assert "| Rank | Model |" in result.summary


def test_an_invalid_input_fails_naming_it(workspace: Path, fake_github) -> None:
    result = run_action(workspace, fake_github.url, alpha="1.5", bootstrap_samples="many")
    assert result.code == 1
    assert [a.split("::")[2].split(" must")[0] for a in result.annotations] == [
        "input 'alpha'",
        "input 'bootstrap-samples'",
    ]


def test_a_path_outside_the_workspace_is_refused(workspace: Path, fake_github) -> None:
    (workspace.parent / "secret.jsonl").write_text(EXAMPLE.read_text())
    result = run_action(workspace, fake_github.url, runs="../secret.jsonl")
    assert result.code == 1 and "outside the workspace" in result.stdout


def test_an_unexpected_failure_is_one_error_line_and_a_traceback_only_when_debugging(
    workspace: Path, fake_github, tmp_path: Path
) -> None:
    not_a_file = tmp_path / "summary-is-a-directory"
    not_a_file.mkdir()
    quiet = run_action(workspace, fake_github.url, GITHUB_STEP_SUMMARY=str(not_a_file))
    assert quiet.code == 1 and "Traceback" not in quiet.stdout + quiet.stderr
    (error,) = [a for a in quiet.annotations if a.startswith("::error")]
    assert "failed unexpectedly: IsADirectoryError" in error
    loud = run_action(workspace, fake_github.url, GITHUB_STEP_SUMMARY=str(not_a_file), RUNNER_DEBUG="1")
    assert loud.code == 1 and "Traceback" in loud.stderr


def test_a_huge_leaderboard_still_fits_in_one_comment_and_says_where_the_rest_is(workspace: Path, fake_github) -> None:
    rows = [
        {"model_id": f"org-{m:02d}/model-with-a-long-name-{m}", "task_id": f"task-{t}", "metric_name": "acc",
         "score": ((m * 7 + t * 13) % 100) / 100, "category": f"c{t % 5}"}
        for m in range(200) for t in range(20)
    ]  # fmt: skip
    (workspace / "results" / "mteb.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    result = run_action(workspace, fake_github.url, bootstrap_samples="400")
    assert result.code == 0, result.stdout
    (comment,) = fake_github.thread()
    assert len(comment["body"]) <= COMMENT_LIMIT and "Not shown here" in comment["body"]
    assert "job summary" in comment["body"]
    # The summary has what the comment points to: every model and the leader against all of them.
    assert "org-" in result.summary and result.summary.count("\n| ") > comment["body"].count("\n| ")
    assert "**The leader against every model**" in comment["body"]


def test_the_action_never_prints_the_token_even_when_it_fails(workspace: Path, fake_github) -> None:
    fake_github.faults.append(Fault("GET", r".*/comments", 500, times=100, message=f"echo {TOKEN}"))
    result = run_action(workspace, fake_github.url)
    assert result.code == 1
    assert_no_secret(result)


def commands_obeyed(stdout: str) -> list[str]:
    """The workflow commands the runner would run: none between stop-commands and its token."""
    obeyed, stopped = [], None
    for line in stdout.splitlines():
        if stopped is not None:
            if line == f"::{stopped}::":
                stopped = None
            continue
        if line.startswith("::stop-commands::"):
            stopped = line.split("::")[2]
        elif line.startswith("::"):
            obeyed.append(line)
    return obeyed


def test_data_cannot_inject_workflow_commands_into_the_log(workspace: Path, fake_github) -> None:
    evil = {"model_id": "evil\n::warning::injected", "task_id": "t", "metric_name": "acc", "score": 0.5}
    (workspace / "results" / "evil.jsonl").write_text(json.dumps(evil) + "\n")
    (workspace / "results" / "x\n::notice::injected.jsonl").write_text('{"model_id": 1}\n')
    result = run_action(workspace, fake_github.url)
    assert result.code == 1
    obeyed = commands_obeyed(result.stdout)
    assert obeyed and not [c for c in obeyed if "injected" in c.split("::")[2:3][0]]
    assert all(c.startswith(("::add-mask::", "::error ")) for c in obeyed)


def test_two_comment_keys_keep_two_comments(workspace: Path, fake_github) -> None:
    assert run_action(workspace, fake_github.url, comment_key="cpu").code == 0
    assert run_action(workspace, fake_github.url, comment_key="gpu/a100").code == 0
    bodies = [c["body"].split("\n", 1)[0] for c in fake_github.thread()]
    assert bodies == [marker("cpu"), marker("gpu/a100")]
    assert (workspace / ".leaderboard" / "gpu+a100" / "report.json").is_file()
