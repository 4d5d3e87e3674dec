"""The comment thread against a fake GitHub REST API, driven by the real PyGithub client."""

from __future__ import annotations

import re
import time

import pytest
from fakegithub import BOT, Fault, primary_rate_limit, secondary_rate_limit

from leaderboard.action.github_api import (
    CommentRefused,
    CommentThread,
    GitHubUnavailable,
    RateLimited,
    TokenRejected,
    make_client,
)
from leaderboard.report.document import marker

REPO, PR, KEY = "octo/evals", 7, "leaderboard"
BODY = marker(KEY) + "\n## Leaderboard\n\n| a |\n|---|\n| 1 |\n"


def thread(fake, token: str = "test-token", key: str = KEY) -> CommentThread:
    return CommentThread(make_client(token, fake.url), REPO, PR, key, sleep=lambda _: None)


def writes(fake) -> list[str]:
    return fake.writes()


def test_creates_one_comment_after_reading_every_page(fake_github) -> None:
    for i in range(230):
        fake_github.add_comment(REPO, PR, f"review note {i}", login="reviewer")
    outcome = thread(fake_github).upsert(BODY)
    assert outcome.action == "created" and outcome.url.endswith(f"#issuecomment-{outcome.comment_id}")
    assert [(r.method, r.path, r.query.get("page", ["1"])[0]) for r in fake_github.requests] == [
        ("POST", "/graphql", "1"),
        ("GET", f"/repos/{REPO}/issues/{PR}/comments", "1"),
        ("GET", f"/repos/{REPO}/issues/{PR}/comments", "2"),
        ("GET", f"/repos/{REPO}/issues/{PR}/comments", "3"),
        ("POST", f"/repos/{REPO}/issues/{PR}/comments", "1"),
    ]
    assert all(r.query.get("per_page") == ["100"] for r in fake_github.calls("GET")[1:])


def test_finds_its_comment_on_the_last_page_and_edits_it(fake_github) -> None:
    for i in range(150):
        fake_github.add_comment(REPO, PR, f"note {i}", login="reviewer")
    own = fake_github.add_comment(REPO, PR, marker(KEY) + "\nold")
    outcome = thread(fake_github).upsert(BODY)
    assert (outcome.action, outcome.comment_id) == ("updated", own["id"])
    assert writes(fake_github) == [f"PATCH /repos/{REPO}/issues/comments/{own['id']}"]
    assert own["body"] == BODY


def test_an_unchanged_body_is_not_sent_again(fake_github) -> None:
    thread(fake_github).upsert(BODY)
    outcome = thread(fake_github).upsert(BODY)
    assert outcome.action == "unchanged" and len(writes(fake_github)) == 1


def test_the_workflow_token_is_the_actions_bot(fake_github) -> None:
    assert thread(fake_github).identity() == BOT
    assert [r.path for r in fake_github.requests] == ["/graphql"]


def test_a_personal_token_is_its_user(fake_github) -> None:
    fake_github.tokens["pat"] = "alice"
    assert thread(fake_github, token="pat").identity() == "alice"


def test_a_github_app_token_is_the_apps_bot_and_leaves_the_actions_bots_comment_alone(fake_github) -> None:
    fake_github.tokens["ghs_app"] = "evals-app[bot]"
    theirs = fake_github.add_comment(REPO, PR, marker(KEY) + "\nby the workflow token")
    ours = fake_github.add_comment(REPO, PR, marker(KEY) + "\nold", login="evals-app[bot]")
    outcome = thread(fake_github, token="ghs_app").upsert(BODY)
    assert (outcome.action, outcome.comment_id) == ("updated", ours["id"])
    assert theirs["body"].endswith("by the workflow token")


def test_a_bot_login_without_the_bot_suffix_in_graphql_finds_its_comment_by_the_accounts_id(fake_github) -> None:
    fake_github.graphql_bot_suffix = False
    ours = fake_github.add_comment(REPO, PR, marker(KEY) + "\nold")
    outcome = thread(fake_github).upsert(BODY)
    assert (outcome.action, outcome.comment_id) == ("updated", ours["id"]) and len(fake_github.thread()) == 1


def test_viewer_is_a_user_in_graphql_whatever_the_token_and_no_other_accounts_comment_is_taken(fake_github) -> None:
    """GraphQL types ``viewer`` as User: a token's kind cannot be read from it, and is not needed."""
    fake_github.graphql_bot_suffix = False  # the app's login "evals-app", REST's "evals-app[bot]"
    fake_github.tokens["ghs_app"] = "evals-app[bot]"
    person = fake_github.add_comment(REPO, PR, marker(KEY) + "\nby a person", login="evals-app")
    workflow = fake_github.add_comment(REPO, PR, marker(KEY) + "\nby the workflow token")
    ours = fake_github.add_comment(REPO, PR, marker(KEY) + "\nold", login="evals-app[bot]")
    outcome = thread(fake_github, token="ghs_app").upsert(BODY)
    assert (outcome.action, outcome.comment_id) == ("updated", ours["id"])
    assert person["body"].endswith("by a person") and workflow["body"].endswith("by the workflow token")
    assert writes(fake_github) == [f"PATCH /repos/{REPO}/issues/comments/{ours['id']}"]


def test_without_graphql_get_user_answers_and_its_403_means_the_actions_bot(fake_github) -> None:
    fake_github.graphql_status = 404
    fake_github.tokens["pat"] = "alice"
    fake_github.user_status = 200
    assert thread(fake_github, token="pat").identity() == "alice"
    fake_github.user_status = 403
    assert thread(fake_github).identity() == BOT
    assert [r.path for r in fake_github.requests] == ["/graphql", "/user", "/graphql", "/user"]


def test_another_users_comment_with_the_marker_is_never_touched(fake_github) -> None:
    forged = fake_github.add_comment(REPO, PR, marker(KEY) + "\nforged by someone", login="mallory")
    outcome = thread(fake_github).upsert(BODY)
    assert outcome.action == "created" and outcome.comment_id != forged["id"]
    assert forged["body"] == marker(KEY) + "\nforged by someone"
    assert writes(fake_github) == [f"POST /repos/{REPO}/issues/{PR}/comments"]


def test_a_comment_of_another_key_is_left_alone(fake_github) -> None:
    other = fake_github.add_comment(REPO, PR, marker("gpu") + "\nthe GPU board")
    assert thread(fake_github).upsert(BODY).action == "created"
    assert other["body"].endswith("the GPU board") and len(fake_github.thread()) == 2


def test_duplicates_from_a_race_are_reduced_to_the_oldest(fake_github) -> None:
    first = fake_github.add_comment(REPO, PR, marker(KEY) + "\none")
    second = fake_github.add_comment(REPO, PR, marker(KEY) + "\ntwo")
    third = fake_github.add_comment(REPO, PR, marker(KEY) + "\nthree")
    outcome = thread(fake_github).upsert(BODY)
    assert (outcome.action, outcome.comment_id, outcome.duplicates_deleted) == ("updated", first["id"], 2)
    assert sorted(writes(fake_github)) == sorted([
        f"DELETE /repos/{REPO}/issues/comments/{second['id']}",
        f"DELETE /repos/{REPO}/issues/comments/{third['id']}",
        f"PATCH /repos/{REPO}/issues/comments/{first['id']}",
    ])  # fmt: skip
    assert [c["body"] for c in fake_github.thread()] == [BODY]


def test_a_500_then_ok_on_a_read_is_retried(fake_github) -> None:
    fake_github.faults.append(Fault("GET", rf"/repos/{REPO}/issues/{PR}/comments", 500))
    assert thread(fake_github).upsert(BODY).action == "created"
    assert len(fake_github.calls("GET")) == 2  # the failed list, its retry


def test_a_create_whose_answer_was_lost_is_not_repeated(fake_github) -> None:
    fake_github.faults.append(Fault("POST", rf"/repos/{REPO}/issues/{PR}/comments", 502, after=True))
    outcome = thread(fake_github).upsert(BODY)
    assert outcome.action == "created" and len(fake_github.thread()) == 1
    assert writes(fake_github) == [f"POST /repos/{REPO}/issues/{PR}/comments"]


def test_a_create_that_failed_is_tried_again_after_looking(fake_github) -> None:
    fake_github.faults.append(Fault("POST", rf"/repos/{REPO}/issues/{PR}/comments", 503))
    outcome = thread(fake_github).upsert(BODY)
    assert outcome.action == "created" and len(fake_github.thread()) == 1
    assert writes(fake_github).count(f"POST /repos/{REPO}/issues/{PR}/comments") == 2


class FakeTime:
    """A clock that only moves when the code under test sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.waits: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


def test_a_rate_limited_create_waits_as_retry_after_says(fake_github) -> None:
    fake_github.faults.append(
        Fault("POST", rf"/repos/{REPO}/issues/{PR}/comments", 403, headers={"Retry-After": "7"},
              message="You have exceeded a secondary rate limit")
    )  # fmt: skip
    t = FakeTime()
    thread = CommentThread(make_client("test-token", fake_github.url), REPO, PR, KEY, sleep=t.sleep, clock=t.clock)
    assert thread.upsert(BODY).action == "created" and t.waits == [7.0]


def test_writes_are_a_second_apart(fake_github) -> None:
    for text in ("one", "two", "three"):
        fake_github.add_comment(REPO, PR, marker(KEY) + "\n" + text)
    t = FakeTime()
    thread = CommentThread(make_client("test-token", fake_github.url), REPO, PR, KEY, sleep=t.sleep, clock=t.clock)
    thread.upsert(BODY)  # two deletes and an edit
    assert len(fake_github.writes()) == 3 and t.waits == [1.0, 1.0]


@pytest.mark.parametrize("status", [403, 404])
def test_a_refused_write_is_a_refusal_not_a_crash(fake_github, status: int) -> None:
    fake_github.faults.append(
        Fault("POST", rf"/repos/{REPO}/issues/{PR}/comments", status, message="Resource not accessible by integration")
    )
    with pytest.raises(CommentRefused, match=f"HTTP {status}"):
        thread(fake_github).upsert(BODY)


def test_bad_credentials_are_a_rejected_token_not_a_permission_problem(fake_github) -> None:
    with pytest.raises(TokenRejected, match="HTTP 401: Bad credentials"):
        thread(fake_github, token="revoked-token").upsert(BODY)
    assert fake_github.writes() == []


def test_a_comment_deleted_between_listing_and_editing_is_created_again_once(fake_github) -> None:
    old = fake_github.add_comment(REPO, PR, marker(KEY) + "\nold table\n")
    deleted = fake_github.comments[(REPO, PR)].clear  # by someone, after the action listed it
    fake_github.faults.append(
        Fault("PATCH", rf"/repos/{REPO}/issues/comments/{old['id']}", 404, message="Not Found", on_hit=deleted)
    )
    outcome = thread(fake_github).upsert(BODY)
    assert outcome.action == "recreated"
    (comment,) = fake_github.thread()
    assert comment["body"] == BODY and comment["id"] == outcome.comment_id != old["id"]
    assert fake_github.writes() == [
        f"PATCH /repos/{REPO}/issues/comments/{old['id']}",
        f"POST /repos/{REPO}/issues/{PR}/comments",
    ]


def test_a_rejection_notice_for_a_comment_deleted_meanwhile_creates_nothing(fake_github) -> None:
    old = fake_github.add_comment(REPO, PR, marker(KEY) + "\nold table\n")
    fake_github.faults.append(Fault("PATCH", rf"/repos/{REPO}/issues/comments/{old['id']}", 404, message="Not Found"))
    assert thread(fake_github).replace_existing(BODY).action == "absent"
    assert [w.split()[0] for w in fake_github.writes()] == ["PATCH"]


def test_a_duplicate_already_deleted_by_someone_else_is_not_an_error(fake_github) -> None:
    fake_github.add_comment(REPO, PR, marker(KEY) + "\nfirst\n")
    extra = fake_github.add_comment(REPO, PR, marker(KEY) + "\nsecond\n")
    fake_github.faults.append(
        Fault("DELETE", rf"/repos/{REPO}/issues/comments/{extra['id']}", 404, message="Not Found")
    )
    assert thread(fake_github).upsert(BODY).action == "updated"


def test_a_body_over_the_limit_is_rejected_by_github_with_422(fake_github) -> None:
    with pytest.raises(GitHubUnavailable, match=r"too long|Validation Failed"):
        thread(fake_github).upsert(BODY + "x" * 65_536)
    assert fake_github.thread() == []


def test_persistent_server_errors_end_in_a_clear_error_within_a_minute(fake_github) -> None:
    fake_github.faults.append(Fault("GET", r".*/comments", 500, times=100))
    start = time.monotonic()
    with pytest.raises(GitHubUnavailable, match="listing the PR's comments failed"):
        thread(fake_github).upsert(BODY)
    assert time.monotonic() - start < 60
    assert len(fake_github.calls("GET")) == 3  # the list and two retries


def test_a_hanging_api_ends_in_a_clear_error_within_a_minute(fake_github) -> None:
    fake_github.faults.append(Fault("GET", r".*/comments", 200, times=100, delay=7))
    start = time.monotonic()
    with pytest.raises(GitHubUnavailable, match="listing the PR's comments failed"):
        thread(fake_github).upsert(BODY)
    assert time.monotonic() - start < 60


def test_an_unreachable_api_is_a_clear_error(fake_github) -> None:
    url = fake_github.url
    fake_github.stop()
    t = CommentThread(make_client("test-token", url), REPO, PR, KEY, sleep=lambda _: None)
    with pytest.raises(GitHubUnavailable):
        t.upsert(BODY)


def test_replace_existing_never_creates(fake_github) -> None:
    assert thread(fake_github).replace_existing(BODY).action == "absent"
    assert writes(fake_github) == []


def test_the_token_goes_only_in_the_authorization_header(fake_github) -> None:
    thread(fake_github).upsert(BODY)
    for r in fake_github.requests:
        assert r.authorization in ("token test-token", "Bearer test-token")
        assert "test-token" not in r.path + str(r.query) + str(r.body)


# --- Issue 17: answers that never end, never settle, or ask for an hour ---------------------------


def test_a_comments_list_trickling_a_byte_at_a_time_ends_at_the_call_limit_not_per_read(
    fake_github, monkeypatch: pytest.MonkeyPatch
) -> None:
    import leaderboard.action.github_api as github_api

    monkeypatch.setattr(github_api, "CALL_LIMIT", 1.5)
    for i in range(3):
        fake_github.add_comment(REPO, PR, f"review note {i}", login="reviewer")
    fake_github.trickle.append((r".*/comments", 0.05))  # each read gets a byte well within the 5 s read timeout
    start = time.monotonic()
    with pytest.raises(GitHubUnavailable, match=r"listing the PR's comments failed: no complete answer within 1.5 s"):
        thread(fake_github).upsert(BODY)
    assert time.monotonic() - start < 5
    assert writes(fake_github) == []


def test_a_comments_list_answering_202_forever_is_given_up_after_a_few_tries(
    fake_github, monkeypatch: pytest.MonkeyPatch
) -> None:
    import github.Consts

    from leaderboard.action.github_api import MAX_HOPS

    monkeypatch.setattr(github.Consts, "PROCESSING_202_WAIT_TIME", 0.01)  # PyGithub's 2 s between tries
    fake_github.faults.append(Fault("GET", r".*/comments", 202, times=1000, body={}))
    with pytest.raises(GitHubUnavailable, match=r"HTTP 202: GitHub answered 202 \(still processing\) 4 times"):
        thread(fake_github).upsert(BODY)
    assert len(fake_github.calls("GET")) == MAX_HOPS + 1
    assert writes(fake_github) == []


def test_a_redirect_loop_on_the_comments_list_is_an_error_not_a_recursion_error(fake_github) -> None:
    comments = f"/repos/{REPO}/issues/{PR}/comments"
    fake_github.faults += [
        Fault("GET", comments, 301, times=1000, headers={"Location": f"{fake_github.url}/moved"}),
        Fault("GET", "/moved", 301, times=1000, headers={"Location": f"{fake_github.url}{comments}"}),
    ]
    with pytest.raises(GitHubUnavailable, match=r"HTTP 301: GitHub answered 301 \(moved\)"):
        thread(fake_github).upsert(BODY)
    assert len(fake_github.calls("GET")) < 10


def test_a_redirect_to_another_host_is_an_error_and_the_token_stays_home(fake_github) -> None:
    fake_github.faults.append(
        Fault("GET", r".*/comments", 301, times=10, headers={"Location": "http://evil.example/steal"})
    )
    with pytest.raises(GitHubUnavailable, match=r"HTTP 301: Github server redirected from host 127.0.0.1 to evil"):
        thread(fake_github).upsert(BODY)


@pytest.mark.parametrize("status", [403, 429, 503])
def test_a_retry_after_of_an_hour_is_not_waited_out_but_said(fake_github, status: int) -> None:
    fake_github.faults.append(Fault("GET", r".*/comments", status, times=10, headers={"Retry-After": "3600"}))
    start = time.monotonic()
    with pytest.raises(GitHubUnavailable, match=r"asked to wait 3600 s, longer than the 5 s waited out"):
        thread(fake_github).upsert(BODY)
    assert time.monotonic() - start < 5
    assert len(fake_github.calls("GET")) == 1  # no retry either: GitHub asked for an hour


def test_a_short_retry_after_is_waited_out_and_the_read_retried(fake_github) -> None:
    fake_github.faults.append(Fault("GET", r".*/comments", 429, times=1, headers={"Retry-After": "1"}))
    assert thread(fake_github).upsert(BODY).action == "created"
    assert len(fake_github.calls("GET")) == 2


def test_a_truncated_comments_list_is_an_error_not_a_json_traceback(fake_github) -> None:
    fake_github.faults.append(Fault("GET", r".*/comments", 200, times=10, body=b'[{"id": 1, "body": "<!-- lea'))
    with pytest.raises(GitHubUnavailable, match="listing the PR's comments failed: GitHub's answer was not valid JSON"):
        thread(fake_github).upsert(BODY)
    assert writes(fake_github) == []


# --- rate limits are not refusals ------------------------------------------------------------

COMMENTS = rf"/repos/{REPO}/issues/{PR}/comments"
CALLS = {  # each call the comment thread makes, and a comment of ours already there where it needs one
    "viewer": ("POST", r"/graphql", False),
    "list": ("GET", COMMENTS, False),
    "create": ("POST", COMMENTS, False),
    "edit": ("PATCH", rf"/repos/{REPO}/issues/comments/\d+", True),
}


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("limit", ["secondary", "primary 403", "primary 429"])
def test_a_rate_limit_on_any_comment_call_is_a_rate_limit_not_a_refusal(fake_github, call: str, limit: str) -> None:
    method, path, existing = CALLS[call]
    if existing:
        fake_github.add_comment(REPO, PR, marker(KEY) + "\nold")
    fault = (
        secondary_rate_limit(method, path)
        if limit == "secondary"
        else primary_rate_limit(method, path, status=int(limit.split()[1]))
    )
    fake_github.faults.append(fault)
    start = time.monotonic()
    with pytest.raises(RateLimited, match=f"GitHub's {limit.split()[0]} rate limit stopped .*not a permission problem"):
        thread(fake_github).upsert(BODY)
    assert time.monotonic() - start < 5  # GitHub asks for a minute or more: not waited out, not hammered
    assert [r.method for r in fake_github.calls(method) if re.fullmatch(path, r.path)] == [method]


def test_a_rate_limit_is_told_by_pygithubs_own_exception_too(fake_github) -> None:
    from github import RateLimitExceededException

    from leaderboard.action.github_api import _rate_limit_wait

    assert _rate_limit_wait(RateLimitExceededException(403, {"message": "slow down"}, {})) is not None
    assert _rate_limit_wait(RateLimitExceededException(403, {"message": "Resource not accessible"}, {})) is not None


def test_a_permission_refusal_with_requests_left_is_still_a_refusal(fake_github) -> None:
    refusal = secondary_rate_limit("POST", COMMENTS)
    refusal.message = "Resource not accessible by integration"
    fake_github.faults.append(refusal)
    with pytest.raises(CommentRefused, match="HTTP 403: Resource not accessible by integration"):
        thread(fake_github).upsert(BODY)


# --- what every request says, and GitHub Enterprise Server ----------------------------------


def test_every_request_names_the_rest_api_version(fake_github) -> None:
    fake_github.add_comment(REPO, PR, marker(KEY) + "\nold")
    thread(fake_github).upsert(BODY)
    assert fake_github.requests and {r.api_version for r in fake_github.requests} == {"2022-11-28"}


def test_an_api_version_github_does_not_know_is_answered_400(fake_github) -> None:
    import requests

    answer = requests.get(f"{fake_github.url}/user", headers={"X-GitHub-Api-Version": "1999-01-01"}, timeout=5)
    assert answer.status_code == 400


def test_on_enterprise_server_graphql_is_beside_the_rest_prefix(fake_github) -> None:
    fake_github.ghes = True
    fake_github.user_status = 200  # were GraphQL missed, GET /user would give a wrong identity
    fake_github.tokens["pat"] = "alice"
    client = make_client("pat", f"{fake_github.url}/api/v3")
    outcome = CommentThread(client, REPO, PR, KEY, sleep=lambda _: None).upsert(BODY)
    assert outcome.action == "created" and fake_github.thread()[0]["user"]["login"] == "alice"
    assert [r.path for r in fake_github.requests] == [
        "/api/graphql",
        f"/api/v3/repos/{REPO}/issues/{PR}/comments",
        f"/api/v3/repos/{REPO}/issues/{PR}/comments",
    ]


def test_enterprise_server_answers_nothing_outside_its_api_prefix(fake_github) -> None:
    fake_github.ghes = True
    with pytest.raises(CommentRefused, match="HTTP 404"):
        thread(fake_github).upsert(BODY)  # the client pointed at the host without /api/v3
