"""Which PR an event is about."""

from __future__ import annotations

from leaderboard.action.event import pull_request_number


def test_pull_request_events_name_their_pr() -> None:
    payload = {"number": 5, "pull_request": {"number": 5}}
    assert pull_request_number("pull_request", payload) == 5
    assert pull_request_number("pull_request_target", payload) == 5


def test_an_issue_comment_on_a_pr_names_the_pr() -> None:
    assert pull_request_number("issue_comment", {"issue": {"number": 9, "pull_request": {"url": "u"}}}) == 9


def test_an_issue_comment_on_a_plain_issue_names_no_pr() -> None:
    assert pull_request_number("issue_comment", {"issue": {"number": 9}}) is None


def test_a_push_names_no_pr() -> None:
    assert pull_request_number("push", {"ref": "refs/heads/main"}) is None


def test_a_same_repo_workflow_run_names_its_pr() -> None:
    assert pull_request_number("workflow_run", {"workflow_run": {"pull_requests": [{"number": 3}]}}) == 3
    assert pull_request_number("workflow_run", {"workflow_run": {"pull_requests": []}}) is None


def test_the_pr_number_input_wins() -> None:
    assert pull_request_number("workflow_dispatch", {}, override=11) == 11
    assert pull_request_number("pull_request", {"pull_request": {"number": 5}}, override=11) == 11
