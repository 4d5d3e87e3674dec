"""Hostile workspaces and GitHub failures, end to end through entrypoint.py (issue 8).

Every failure after the inputs are read turns the PR's leaderboard comment into the
"latest run rejected" notice; files are written only inside the workspace.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import time
from pathlib import Path

import pytest
from conftest import EXAMPLE
from fakegithub import Fault
from runner_env import runner_env
from test_action import assert_no_secret, run_action

from leaderboard.action.main import main

main_module = importlib.import_module("leaderboard.action.main")  # the package exports main, the function

RECORD = {"model_id": "m", "task_id": "t", "metric_name": "acc", "score": 0.5}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "workspace"
    (ws / "results").mkdir(parents=True)
    shutil.copy(EXAMPLE, ws / "results" / "mteb.jsonl")
    return ws


def with_leaderboard_comment(ws: Path, fake) -> dict[str, object]:
    """A first, valid run: the PR has its leaderboard comment."""
    assert run_action(ws, fake.url).code == 0
    (comment,) = fake.thread()
    assert "| Rank | Model |" in comment["body"]
    return comment


def assert_rejected_notice(fake, comment_id: object) -> str:
    (comment,) = fake.thread()
    assert comment["id"] == comment_id
    assert "The latest eval run was rejected" in comment["body"] and "| Rank | Model |" not in comment["body"]
    return str(comment["body"])


def errors(result) -> list[str]:
    return [a for a in result.annotations if a.startswith("::error")]


# --- files are written only inside the workspace --------------------------------------------


def test_an_output_directory_that_links_out_of_the_workspace_is_refused_by_name(workspace: Path, fake_github) -> None:
    comment = with_leaderboard_comment(workspace, fake_github)
    outside = workspace.parent / "elsewhere"
    outside.mkdir()
    (outside / "report.json").write_text("precious")
    target = workspace / ".leaderboard" / "leaderboard"
    for f in target.iterdir():
        f.unlink()
    target.rmdir()
    target.symlink_to(outside, target_is_directory=True)
    result = run_action(workspace, fake_github.url)
    assert result.code == 1 and (outside / "report.json").read_text() == "precious"
    assert sorted(p.name for p in outside.iterdir()) == ["report.json"]
    (error,) = errors(result)
    assert error.startswith("::error file=.leaderboard/leaderboard,") and "is a symbolic link" in error
    assert "writing the output files" in assert_rejected_notice(fake_github, comment["id"])


def test_an_output_file_that_is_a_symlink_is_refused_and_its_target_untouched(workspace: Path, fake_github) -> None:
    assert run_action(workspace, fake_github.url).code == 0
    target = workspace.parent / "notes.md"
    target.write_text("mine")
    md = workspace / ".leaderboard" / "leaderboard" / "leaderboard.md"
    md.unlink()
    md.symlink_to(target)
    result = run_action(workspace, fake_github.url)
    assert result.code == 1 and target.read_text() == "mine"
    (error,) = errors(result)
    assert error.startswith("::error file=.leaderboard/leaderboard/leaderboard.md,")


def test_an_output_file_hard_linked_elsewhere_is_replaced_not_written_through(workspace: Path, fake_github) -> None:
    assert run_action(workspace, fake_github.url).code == 0
    target = workspace.parent / "notes.md"
    target.write_text("mine")
    md = workspace / ".leaderboard" / "leaderboard" / "leaderboard.md"
    md.unlink()
    os.link(target, md)
    assert run_action(workspace, fake_github.url).code == 0
    assert target.read_text() == "mine" and "| Rank | Model |" in md.read_text()


def test_an_output_directory_that_is_a_file_fails_naming_it_and_replaces_the_comment(
    workspace: Path, fake_github
) -> None:
    comment = with_leaderboard_comment(workspace, fake_github)
    for f in (workspace / ".leaderboard" / "leaderboard").iterdir():
        f.unlink()
    (workspace / ".leaderboard" / "leaderboard").rmdir()
    (workspace / ".leaderboard").rmdir()
    (workspace / ".leaderboard").write_text("a file where the output directory should go")
    result = run_action(workspace, fake_github.url)
    assert result.code == 1 and "Traceback" not in result.stdout + result.stderr
    (error,) = errors(result)
    assert error.startswith("::error file=.leaderboard,") and "exists and is not a directory" in error
    assert_rejected_notice(fake_github, comment["id"])


def test_comment_keys_that_differ_only_by_slash_and_hyphen_write_different_directories(
    workspace: Path, fake_github
) -> None:
    a = run_action(workspace, fake_github.url, comment_key="a/b")
    b = run_action(workspace, fake_github.url, comment_key="a-b")
    assert (a.code, b.code) == (0, 0)
    assert (a.outputs["report"], b.outputs["report"]) == (
        ".leaderboard/a+b/report.json",
        ".leaderboard/a-b/report.json",
    )
    assert (workspace / a.outputs["report"]).is_file() and (workspace / b.outputs["report"]).is_file()


# --- every failure after the inputs are read replaces the stale leaderboard -----------------


@pytest.mark.parametrize(
    "line",
    [
        json.dumps(RECORD)[:-1] + ', "latency_ns": ' + "9" * 5000 + "}",
        "[" * 100_000 + "]" * 100_000,
        json.dumps(RECORD)[:-4] + "1" + "0" * 399 + "}",
    ],
    ids=["5000-digit-integer", "100000-nested-arrays", "400-digit-score"],
)
def test_input_that_used_to_crash_is_a_rejection_at_file_and_line(workspace: Path, fake_github, line: str) -> None:
    comment = with_leaderboard_comment(workspace, fake_github)
    (workspace / "results" / "zz.jsonl").write_text(json.dumps({**RECORD, "task_id": "u"}) + "\n" + line + "\n")
    result = run_action(workspace, fake_github.url)
    assert result.code == 1 and "Traceback" not in result.stdout + result.stderr
    (error,) = errors(result)
    assert error.startswith("::error file=results/zz.jsonl,line=2,")
    assert "results/zz.jsonl" in assert_rejected_notice(fake_github, comment["id"])


def test_an_unexpected_error_replaces_the_comment_with_the_reason(
    workspace: Path, fake_github, tmp_path: Path, monkeypatch, capsys
) -> None:
    comment = with_leaderboard_comment(workspace, fake_github)

    def out_of_memory(*args: object, **kwargs: object) -> None:
        raise MemoryError("Unable to allocate 74.5 GiB")

    monkeypatch.setattr(main_module, "run", out_of_memory)
    runner = tmp_path / "in-process"
    runner.mkdir()
    event = runner / "event.json"
    event.write_text(json.dumps({"number": 7, "pull_request": {"number": 7}}))
    env = runner_env(
        workspace=str(workspace), event_path=str(event), output=str(runner / "out"), summary=str(runner / "sum"),
        api_url=fake_github.url,
    )  # fmt: skip
    assert main(env) == 1
    stdout = capsys.readouterr().out
    assert "::error title=Leaderboard not made::leaderboard-action failed unexpectedly: MemoryError" in stdout
    body = assert_rejected_notice(fake_github, comment["id"])
    assert "making the leaderboard (not in the data)" in body and "MemoryError" in body


def test_a_rejection_that_cannot_reach_github_says_the_comment_was_left_stale(workspace: Path, fake_github) -> None:
    comment = with_leaderboard_comment(workspace, fake_github)
    (workspace / "results" / "bad.jsonl").write_text(json.dumps({**RECORD, "score": 7}) + "\n")
    fake_github.faults.append(Fault("GET", r".*/comments", 502, times=100))
    result = run_action(workspace, fake_github.url)
    assert result.code == 1
    assert any("was left as it was and is now stale" in e for e in errors(result))
    assert fake_github.thread()[0]["body"] == comment["body"]


# --- GitHub's answers ---------------------------------------------------------------------


def test_bad_credentials_fail_the_step_naming_the_token_input(workspace: Path, fake_github) -> None:
    fake_github.tokens.clear()  # GitHub knows no such token: 401 "Bad credentials"
    result = run_action(workspace, fake_github.url)
    assert result.code == 1
    (error,) = errors(result)
    assert "does not accept the token (HTTP 401: Bad credentials)" in error and "`github-token`" in error
    assert "pull-requests: write" not in error
    assert_no_secret(result)


def test_a_comment_deleted_while_the_action_ran_is_created_again(workspace: Path, fake_github) -> None:
    comment = with_leaderboard_comment(workspace, fake_github)
    (workspace / "results" / "more.jsonl").write_text(json.dumps({**RECORD, "model_id": "new"}) + "\n")
    fake_github.faults.append(
        Fault("PATCH", rf".*/comments/{comment['id']}", 404, message="Not Found", on_hit=fake_github.thread().clear)
    )
    result = run_action(workspace, fake_github.url)
    assert result.code == 0 and not errors(result) and "Re-created" in result.stdout
    (again,) = fake_github.thread()
    assert again["id"] != comment["id"] and "`new`" in again["body"]
    assert result.outputs["comment-id"] == str(again["id"])


def test_a_pull_request_github_cannot_find_is_an_error_not_a_permission_hint(workspace: Path, fake_github) -> None:
    fake_github.faults.append(Fault("GET", r".*/issues/7/comments", 404, message="Not Found"))
    result = run_action(workspace, fake_github.url)
    assert result.code == 1
    (error,) = errors(result)
    assert "found no pull request #7 in octo/evals" in error and "pull-requests: write" not in error


def test_a_token_no_http_header_can_carry_is_an_input_error_and_never_printed(workspace: Path, fake_github) -> None:
    token = "ghp_ŧøķëñ"
    result = run_action(workspace, fake_github.url, github_token=token)
    assert result.code == 1 and fake_github.requests == []
    assert errors(result) == [
        "::error title=Invalid input::input 'github-token' holds characters no GitHub token has "
        "(spaces, control or non-ASCII characters)"
    ]
    assert token not in result.stdout.replace(f"::add-mask::{token}", "") + result.stderr


# --- rendering and inputs -----------------------------------------------------------------


def test_cross_references_in_the_title_are_neutralised(workspace: Path, fake_github) -> None:
    result = run_action(workspace, fake_github.url, title="Fixes #123 and org/repo#5 cc @octocat GH-9")
    assert result.code == 0
    heading = fake_github.thread()[0]["body"].split("\n")[2]
    assert heading == ("## Fixes \\#&#8203;123 and org/repo\\#&#8203;5 cc @&#8203;octocat GH&#8203;\\-9")


def test_pr_number_with_an_underscore_is_refused_not_read_as_another_pr(workspace: Path, fake_github) -> None:
    result = run_action(workspace, fake_github.url, event="workflow_dispatch", payload={}, pr_number="1_0")
    assert result.code == 1 and fake_github.requests == []
    assert errors(result) == [
        "::error title=Invalid input::input 'pr-number' must be a positive integer (or empty), got '1_0'"
    ]


def test_a_fifo_in_the_results_is_refused_by_name_and_the_step_ends(workspace: Path, fake_github) -> None:
    os.mkfifo(workspace / "results" / "pipe.jsonl")
    start = time.perf_counter()
    result = run_action(workspace, fake_github.url)
    assert result.code == 1 and time.perf_counter() - start < 30
    (error,) = errors(result)
    assert error.startswith("::error file=results/pipe.jsonl,") and "FIFO" in error


def test_a_symlink_loop_in_the_results_ends_with_no_error(workspace: Path, fake_github) -> None:
    (workspace / "results" / "l1").symlink_to(".")
    result = run_action(workspace, fake_github.url, runs="results/**/*.jsonl")
    assert result.code == 0 and not errors(result)
    assert (result.outputs["models"], result.outputs["tasks"]) == ("6", "41")


def test_the_same_file_named_twice_is_read_once(workspace: Path, fake_github) -> None:
    (workspace / "results" / "link.jsonl").symlink_to("mteb.jsonl")
    result = run_action(workspace, fake_github.url, runs="results/mteb.jsonl\nresults/../results/mteb.jsonl\nresults/*")
    assert result.code == 0 and not errors(result)
