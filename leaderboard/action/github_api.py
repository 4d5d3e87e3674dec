"""The sticky PR comment, kept through PyGithub.

PyGithub is configured deliberately (see :func:`make_client`): reads and
idempotent writes are retried on 5xx with backoff, a POST never is (a retried
create can post the comment twice), rate limits are waited out only up to a
bound, and requests are not paced beyond GitHub's advice for writes. A create
that fails mid-flight is followed by a look for the marker before any second
try, so no duplicate appears. Only comments written by the token's own
identity are ever edited or deleted.
"""

from __future__ import annotations

import email.utils
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import requests
import urllib3
from github import Auth, Github, GithubException, GithubRetry, RateLimitExceededException
from github.IssueComment import IssueComment
from github.Requester import Requester

from ..report.document import marker, same_content
from .deadline import DeadlineExceeded, time_limit
from .redact import redacted

# The identity behind the workflow's GITHUB_TOKEN (for which GET /user answers 403).
ACTIONS_BOT = "github-actions[bot]"
REQUEST_TIMEOUT = 5  # seconds per HTTP request; GitHub answers these calls in well under one
# The comparison of a base and a head far apart may take GitHub about ten seconds to compute.
COMPARE_TIMEOUT = 15
# The REST version every request names: the answers' shapes stay those this code was written against.
API_VERSION = "2022-11-28"
# GitHub's advice on a secondary rate limit without Retry-After: wait at least a minute.
SECONDARY_WAIT = 60.0
RETRY_WAIT = 5.0  # longest wait PyGithub's retry may make between tries (rate limit or backoff)
# No call starts after DEADLINE seconds, and one call lasts at most 3 tries x 5 s + 2 waits
# x 5 s, so the whole update ends within 30 + 25 s: under a minute, as promised.
DEADLINE = 30.0
CREATE_ATTEMPTS = 3
WRITE_SPACING = 1.0  # GitHub asks for a second between content-changing requests
MAX_WAIT = 20.0  # longest wait between our own create attempts (never past the deadline)
# Wall time one call may take, its retries and waits included (3 tries x 5 s + 2 waits x 5 s): a server
# trickling its answer a byte at a time never trips the per-read timeout, this ends it (deadline.py).
CALL_LIMIT = 25.0
# Answers 202 ("still processing") and 301 (moved) PyGithub follows for one request: it follows
# both without bound (a 202 every 2 s forever, a 301 loop until RecursionError).
MAX_HOPS = 3


class CommentRefused(Exception):
    """GitHub refused access (403/404): typically a read-only token on a fork's PR, or no such PR."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


class TokenRejected(Exception):
    """GitHub does not accept the token at all (401 Bad credentials): no permission would help."""


class GitHubUnavailable(Exception):
    """GitHub kept failing (5xx, rate limits, network) until the deadline."""


class RateLimited(GitHubUnavailable):
    """GitHub's rate limit (primary or secondary) stopped a call: a matter of time, not of permission."""


@dataclass(frozen=True)
class CommentOutcome:
    action: str  # "created", "updated", "recreated" (deleted meanwhile), "unchanged", or "absent" (nothing to update)
    comment_id: int | None = None
    url: str | None = None
    duplicates_deleted: int = 0


def retry_after(value: str | None) -> float | None:
    """A ``Retry-After`` header in seconds (delta-seconds or an HTTP date); None if absent or unreadable."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - time.time())


class _BoundedRetry(GithubRetry):
    """GithubRetry, except that a ``Retry-After`` longer than RETRY_WAIT is not waited out at all.

    urllib3 sleeps whatever ``Retry-After`` says (up to six hours) on a 429 or 503, and
    GithubRetry does so on a 403: a rate limit that long is given up on at once, as an error that
    says so, instead of a job hanging for an hour.
    """

    def increment(self, method: Any = None, url: Any = None, response: Any = None, *args: Any, **kwargs: Any) -> Any:
        if response is None:
            return super().increment(method, url, response, *args, **kwargs)
        headers = dict(response.headers)
        wait = retry_after(response.headers.get("Retry-After"))
        if wait is None and response.status == 403:
            # The body can be read once: it is read here, and GithubRetry (which would read it
            # again) is bypassed. A 403 that is no rate limit is not retried, as GithubRetry does.
            try:
                data: Any = json.loads(self.get_content(response, url or ""))
            except Exception:  # the body is only a detail of the error
                data = {"message": str(response.reason or "")}
            wait = rate_limit_wait(response.status, headers, _body_message(data))
            if wait is None:
                raise Requester.createException(response.status, headers, data)
            if wait > RETRY_WAIT:
                raise GithubException(response.status, data, headers)
            retry = urllib3.util.Retry.increment(self, method, url, response, *args, **kwargs)
            retry.get_backoff_time = lambda: wait  # type: ignore[method-assign]
            return retry
        if wait is not None and wait > RETRY_WAIT:
            try:
                data = json.loads(self.get_content(response, url or ""))
            except Exception:  # the body is only a detail of the error
                data = {"message": f"rate limited, retry after {wait:g} s"}
            raise GithubException(response.status, data, headers)
        return super().increment(method, url, response, *args, **kwargs)


def _bound_hops(requester: Requester) -> None:
    """Make PyGithub give up after MAX_HOPS answers of 202 or 301 to one request.

    PyGithub follows both by calling its private ``__requestRaw`` again (a 202 after sleeping 2 s);
    that method is wrapped on this client's requester, and refuses the hop past MAX_HOPS. Its
    refusal of a 301 to another host (a RuntimeError) becomes a GithubException as well. Should
    a PyGithub release rename the method, the call's CALL_LIMIT still ends the loop.
    """
    inner = getattr(requester, "_Requester__requestRaw", None)
    if inner is None:
        return
    state = threading.local()

    def request_raw(cnx: Any, verb: str, url: str, *args: Any, **kwargs: Any) -> Any:
        hops: list[str] | None = getattr(state, "hops", None)
        top = hops is None
        if hops is None:
            hops = state.hops = []
        elif len(hops) > MAX_HOPS:
            status, what = (202, "202 (still processing)") if url == hops[-1] else (301, "301 (moved)")
            raise GithubException(status, {"message": f"GitHub answered {what} {len(hops)} times in a row"}, None)
        hops.append(url)
        try:
            return inner(cnx, verb, url, *args, **kwargs)
        except RuntimeError as exc:  # "Github server redirected from host … to …"
            if not top or isinstance(exc, RecursionError):
                raise
            raise GithubException(301, {"message": str(exc)}, None) from exc
        finally:
            if top:
                state.hops = None

    setattr(requester, "_Requester__requestRaw", request_raw)  # noqa: B010 - a mangled name mypy cannot see


def make_client(token: str, api_url: str) -> Github:
    retry = _BoundedRetry(
        total=2,
        backoff_factor=0.5,
        status_forcelist=list(range(500, 600)),
        # No POST: a create retried after a lost response would post a second comment.
        allowed_methods=frozenset({"GET", "HEAD", "OPTIONS", "PATCH", "PUT", "DELETE"}),
        secondary_rate_wait=RETRY_WAIT,
        max_rate_limit_wait=RETRY_WAIT,
        backoff_max=RETRY_WAIT,
        retry_after_max=int(RETRY_WAIT),
    )
    client = Github(
        auth=Auth.Token(token),
        base_url=api_url.rstrip("/"),
        api_version=API_VERSION,
        timeout=REQUEST_TIMEOUT,
        per_page=100,
        retry=retry,
        lazy=True,  # no GET of the repository or the issue: their URLs are all we need
        # Reads are not paced; writes are paced by CommentThread itself, because PyGithub's
        # pacing takes every POST for a write, the read-only GraphQL query included.
        seconds_between_requests=None,
        seconds_between_writes=None,
    )
    _bound_hops(client.requester)
    return client


def slow_requester(client: Github, timeout: float = COMPARE_TIMEOUT) -> Requester:
    """The client's requester with a longer read timeout, for a call GitHub may take seconds to answer."""
    requester = Requester(**{**client.requester.kwargs, "timeout": timeout})
    _bound_hops(requester)
    return requester


def _body_message(data: Any) -> str:
    return str(data.get("message") or "") if isinstance(data, dict) else ""


def message(exc: GithubException) -> str:
    data = exc.data
    if isinstance(data, dict) and data.get("message"):
        return str(data["message"])
    return str(exc.data or "")


def rate_limit_wait(status: int, headers: Any, message: str) -> float | None:
    """Seconds GitHub asks to wait when an answer is a rate limit, else None (a refusal, an error).

    GitHub's documented signs: 429; or 403 with ``Retry-After``, with ``X-RateLimit-Remaining: 0``
    (the primary limit), or with the message of a secondary limit, which comes with requests left
    and no ``Retry-After`` (then the advice is to wait at least a minute).
    """
    if status not in (403, 429):
        return None
    lower = {str(k).lower(): str(v) for k, v in dict(headers or {}).items()}
    if "retry-after" in lower:
        wait = retry_after(lower["retry-after"])
        return SECONDARY_WAIT if wait is None else wait
    if lower.get("x-ratelimit-remaining") == "0":
        try:
            return max(0.0, float(lower.get("x-ratelimit-reset", "0")) - time.time())
        except ValueError:
            return SECONDARY_WAIT
    if status == 429 or Requester.isRateLimitError(message.lower()):
        return SECONDARY_WAIT
    return None


def rate_limit_text(status: int, headers: Any, message: str) -> str:
    """Which limit it is, in words: "primary rate limit" or "secondary rate limit"."""
    lower = {str(k).lower(): str(v) for k, v in dict(headers or {}).items()}
    primary = lower.get("x-ratelimit-remaining") == "0" or Requester.isPrimaryRateLimitError(message)
    return "primary rate limit" if primary else "secondary rate limit"


def _rate_limit_wait(exc: GithubException) -> float | None:
    """Seconds to wait when the failure is a rate limit, else None."""
    wait = rate_limit_wait(exc.status, exc.headers, message(exc))
    if wait is None and isinstance(exc, RateLimitExceededException):
        return SECONDARY_WAIT
    return wait


def _rate_limited(what: str, exc: GithubException) -> RateLimited:
    kind = rate_limit_text(exc.status, exc.headers, message(exc))
    asked = _asked_wait(exc) or f" (GitHub asks to wait {_rate_limit_wait(exc) or 0.0:.0f} s or more)"
    return RateLimited(
        f"GitHub's {kind} stopped {what}: HTTP {exc.status}: {message(exc)}{asked}; "
        "this is not a permission problem: re-run the job later"
    )


def _asked_wait(exc: GithubException) -> str:
    """ "(GitHub asked to wait 3600 s, longer than the 5 s waited out)", or ""."""
    headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
    wait = retry_after(headers.get("retry-after"))
    if wait is None or wait <= RETRY_WAIT:
        return ""
    return f" (GitHub asked to wait {wait:g} s, longer than the {RETRY_WAIT:g} s waited out)"


def _refusal(exc: GithubException) -> CommentRefused | TokenRejected | None:
    """The refusal this failure is (a rate limit never is one), or None."""
    if exc.status == 401:
        return TokenRejected(f"HTTP 401: {message(exc)}")
    if exc.status in (403, 404) and _rate_limit_wait(exc) is None:
        return CommentRefused(exc.status, message(exc))
    return None


class CommentThread:
    """One PR's comments, as seen by one token, for one ``comment-key``."""

    def __init__(
        self,
        gh: Github,
        repository: str,
        number: int,
        key: str,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._gh = gh
        self._issue = gh.get_repo(repository).get_issue(number)
        self._marker = marker(key)
        self._sleep = sleep
        self._clock = clock
        self._deadline = clock() + DEADLINE
        self._identity: str | None = None
        self._identity_id: int | None = None  # the account's id, when GraphQL gave it
        self._last_write: float | None = None

    def _pace_write(self) -> None:
        if self._last_write is not None:
            wait = self._last_write + WRITE_SPACING - self._clock()
            if wait > 0:
                self._sleep(wait)
        self._last_write = self._clock()

    def _write(self, what: str, fn: Callable[[], Any]) -> Any:
        self._pace_write()
        return self._call(what, fn)

    def _call(self, what: str, fn: Callable[[], Any]) -> Any:
        """Run one API call, turning PyGithub's and requests' failures into ours."""
        if self._clock() > self._deadline:
            raise GitHubUnavailable(f"gave up before {what}: GitHub has not answered in time")
        try:
            with time_limit(CALL_LIMIT):
                return fn()
        except GithubException as exc:
            refused = _refusal(exc)
            if refused is not None:
                raise refused from exc
            if _rate_limit_wait(exc) is not None:
                raise _rate_limited(what, exc) from exc
            raise GitHubUnavailable(f"{what} failed: HTTP {exc.status}: {message(exc)}{_asked_wait(exc)}") from exc
        except requests.RequestException as exc:
            # Retries exhausted (RetryError), connection refused, timeout.
            raise GitHubUnavailable(f"{what} failed: {type(exc).__name__}") from exc
        except DeadlineExceeded as exc:
            raise GitHubUnavailable(f"{what} failed: no complete answer within {CALL_LIMIT:g} s") from exc
        except ValueError as exc:  # a body that is not the JSON it claims to be (a truncated answer)
            raise GitHubUnavailable(f"{what} failed: GitHub's answer was not valid JSON") from exc

    def identity(self) -> str:
        """The token's login: the comments of this login, and no one else's, are ours.

        GraphQL's ``viewer`` answers for every kind of token: a person's, the workflow's
        (github-actions[bot]) and a GitHub App's installation token (<app>[bot]), where
        REST ``GET /user`` refuses installation tokens with 403. ``GET /user`` is the
        fallback where GraphQL is unavailable; the Actions bot the last resort.
        """
        if self._identity is None:
            self._identity = self._viewer_login() or self._user_login() or ACTIONS_BOT
        return self._identity

    def _viewer_login(self) -> str | None:
        # The schema types ``viewer`` as a User whatever the token, so its __typename cannot tell a
        # bot: the account's id can, being the REST ``user.id`` of the comments it wrote.
        try:
            with time_limit(CALL_LIMIT):
                _, data = self._gh.requester.graphql_query("query { viewer { login databaseId } }", {})
            viewer = data["data"]["viewer"]
            login, number = viewer["login"], viewer.get("databaseId")
        except GithubException as exc:
            if _rate_limit_wait(exc) is not None:
                raise _rate_limited("asking GitHub who the token is", exc) from exc
            return None
        except (requests.RequestException, DeadlineExceeded, ValueError, LookupError, TypeError, AttributeError):
            return None
        if not isinstance(login, str) or not login:
            return None
        if isinstance(number, int) and not isinstance(number, bool):
            self._identity_id = number
        return login

    def _user_login(self) -> str | None:
        # The expected 403 (an installation token) is not news: keep PyGithub's retry logger quiet.
        quiet = logging.getLogger("github.GithubRetry")
        level = quiet.level
        quiet.setLevel(logging.ERROR)
        try:
            with time_limit(CALL_LIMIT):
                return str(self._gh.get_user().login)
        except DeadlineExceeded as exc:
            raise GitHubUnavailable(f"GET /user failed: no complete answer within {CALL_LIMIT:g} s") from exc
        except ValueError as exc:
            raise GitHubUnavailable("GET /user failed: GitHub's answer was not valid JSON") from exc
        except GithubException as exc:
            if _rate_limit_wait(exc) is not None:
                raise _rate_limited("GET /user", exc) from exc
            if exc.status in (401, 403, 404):
                return None
            raise GitHubUnavailable(f"GET /user failed: HTTP {exc.status}: {message(exc)}") from exc
        except requests.RequestException as exc:
            raise GitHubUnavailable(f"GET /user failed: {type(exc).__name__}") from exc
        finally:
            quiet.setLevel(level)

    def _is_mine(self, comment: IssueComment) -> bool:
        """Written by this identity: the same account id when GraphQL gave it, else the same login.

        The id decides where it is known: GraphQL may give an app's login without the "[bot]" that
        REST writes, and a person may hold that shorter login; only the id is one account's alone.
        """
        me = self.identity()
        user = comment.user
        if user is None:
            return False
        if self._identity_id is not None:
            return bool(user.id == self._identity_id)
        return bool(user.login == me)

    def own_comments(self) -> list[IssueComment]:
        """This key's comments by this identity, oldest first. Others' copies of the marker don't count."""
        self.identity()
        comments = self._call("listing the PR's comments", lambda: list(self._issue.get_comments()))
        mine = [c for c in comments if (c.body or "").split("\n", 1)[0].strip() == self._marker and self._is_mine(c)]
        return sorted(mine, key=lambda c: (c.created_at, c.id))

    def _dedupe(self, mine: list[IssueComment]) -> int:
        """A race left several: keep the oldest, delete the rest (ours alone)."""
        for extra in mine[1:]:
            try:
                self._write(f"deleting duplicate comment {extra.id}", extra.delete)
            except CommentRefused as exc:
                if exc.status != 404:  # 404: someone deleted it first, which is what we wanted
                    raise
        return len(mine) - 1

    def upsert(self, body: str) -> CommentOutcome:
        """Edit this key's comment, or create it; send nothing when the content is unchanged."""
        body = redacted(body)  # whatever path a secret took into the text, it is not posted
        mine = self.own_comments()
        return self._update(mine, body, recreate=True) if mine else self._create(body)

    def replace_existing(self, body: str) -> CommentOutcome:
        """Overwrite this key's comment if there is one; never create one."""
        body = redacted(body)
        mine = self.own_comments()
        return self._update(mine, body) if mine else CommentOutcome("absent")

    def _update(
        self, mine: list[IssueComment], body: str, action: str = "updated", *, recreate: bool = False
    ) -> CommentOutcome:
        """Keep the oldest of our comments (deleting any others) and make it say ``body``.

        A 404 on the edit means the comment was deleted since it was listed: with
        ``recreate`` it is created again, once; otherwise there is nothing left to update.
        """
        deleted = self._dedupe(mine)
        keep = mine[0]
        if same_content(keep.body or "", body):
            return CommentOutcome("unchanged" if action == "updated" else action, keep.id, keep.html_url, deleted)
        try:
            self._write(f"editing comment {keep.id}", partial(keep.edit, body))
        except CommentRefused as exc:
            if exc.status != 404:
                raise
            if not recreate:
                return CommentOutcome("absent", duplicates_deleted=deleted)
            created = self._create(body)
            return CommentOutcome("recreated", created.comment_id, created.url, deleted)
        return CommentOutcome(action, keep.id, keep.html_url, deleted)

    def _create(self, body: str) -> CommentOutcome:
        failure = "out of time"
        limited: GithubException | None = None  # the last failure, when it was a rate limit
        for attempt in range(1, CREATE_ATTEMPTS + 1):
            if self._clock() > self._deadline:
                break
            try:
                self._pace_write()
                with time_limit(CALL_LIMIT):
                    created = self._issue.create_comment(body)
                return CommentOutcome("created", created.id, created.html_url)
            except DeadlineExceeded:
                wait, failure, limited = None, f"no complete answer within {CALL_LIMIT:g} s", None
            except ValueError:
                wait, failure, limited = None, "GitHub's answer was not valid JSON", None
            except GithubException as exc:
                refused = _refusal(exc)
                if refused is not None:
                    raise refused from exc
                if exc.status == 422:
                    raise GitHubUnavailable(f"GitHub rejected the comment: {message(exc)}") from exc
                wait = _rate_limit_wait(exc)
                if wait is not None and wait > MAX_WAIT:  # a minute or more: past what this step waits
                    raise _rate_limited("creating the comment", exc) from exc
                failure = f"HTTP {exc.status}: {message(exc)}"
                limited = exc if wait is not None else None
            except requests.RequestException as exc:
                wait, failure, limited = None, type(exc).__name__, None
            # The create may have gone through before the failure: look before posting again.
            mine = self.own_comments()
            if mine:
                return self._update(mine, body, action="created")
            if attempt < CREATE_ATTEMPTS:
                delay = min(MAX_WAIT, wait if wait is not None else 2.0 ** (attempt - 1))
                if self._clock() + delay > self._deadline:
                    break
                self._sleep(delay)
        if limited is not None:
            raise _rate_limited("creating the comment", limited)
        raise GitHubUnavailable(f"creating the comment failed {CREATE_ATTEMPTS} times; last: {failure}")
