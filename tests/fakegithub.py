"""A fake GitHub REST API on 127.0.0.1, enough of it for the PR-comment calls.

It is driven by the real PyGithub client (through GITHUB_API_URL / base_url),
so the tests see the HTTP that is really sent: paths, methods, pagination with
Link headers, status codes and bodies as GitHub's documentation gives them.
"""

from __future__ import annotations

import json
import re
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

BOT = "github-actions[bot]"
COMMENT_LIMIT = 65536
GHES_PREFIX = "/api/v3"  # GitHub Enterprise Server serves the REST API under it
GHES_GRAPHQL = "/api/graphql"  # and GraphQL beside it (github.com: /graphql)
API_VERSIONS = ("2022-11-28",)  # the REST versions GitHub accepts; another is answered 400


def user_id(login: str) -> int:
    """An account's id, the same in REST's ``user.id`` and GraphQL's ``databaseId``."""
    return 10_000 + zlib.crc32(login.encode()) % 10**7


@dataclass
class Fault:
    """Answer matching requests with ``status`` (``times`` times); ``after`` does the work first."""

    method: str
    path: str  # a regex matched against the path
    status: int  # 0: no answer of its own (a delay, then the real answer)
    times: int = 1
    headers: dict[str, str] = field(default_factory=dict)
    message: str = "Server Error"
    after: bool = False
    delay: float = 0.0  # seconds to hang before answering
    on_hit: Callable[[], None] | None = None  # what else happens meanwhile (a comment deleted by someone)
    body: Any = None  # the answer's body instead of {"message": message}: JSON, or bytes sent as they are


SECONDARY_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out "
    "to GitHub Support for help, please include the request ID 0000:1111:2222:3333:4444."
)


def secondary_rate_limit(method: str, path: str, times: int = 10) -> Fault:
    """GitHub's secondary rate limit as documented: 403, the message, requests left, no Retry-After."""
    headers = {"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "4987", "X-RateLimit-Used": "13",
               "X-RateLimit-Reset": str(int(time.time()) + 3000), "X-RateLimit-Resource": "core"}  # fmt: skip
    return Fault(method, path, 403, times=times, headers=headers, message=SECONDARY_MESSAGE)


def primary_rate_limit(method: str, path: str, status: int = 403, times: int = 10) -> Fault:
    """GitHub's primary rate limit: 403 or 429, no requests left until X-RateLimit-Reset (in an hour)."""
    headers = {"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Used": "5000",
               "X-RateLimit-Reset": str(int(time.time()) + 3600), "X-RateLimit-Resource": "core"}  # fmt: skip
    message = "API rate limit exceeded for installation ID 1234567."
    return Fault(method, path, status, times=times, headers=headers, message=message)


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any
    authorization: str | None
    api_version: str | None = None  # the X-GitHub-Api-Version header sent


class FakeGitHub:
    def __init__(self) -> None:
        self.tokens: dict[str, str] = {"test-token": BOT}
        self.user_status = 403  # GET /user with the workflow token
        self.graphql_status = 200
        self.graphql_bot_suffix = True  # whether GraphQL writes a bot's login with "[bot]"
        # GitHub Enterprise Server: REST only under /api/v3, GraphQL at /api/graphql (github.com: / and /graphql)
        self.ghes = False
        self.comments: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self.faults: list[Fault] = []
        self.requests: list[Request] = []
        # Actions (workflow runs and their artifacts), pulls and compare: the baseline lookup.
        self.runs: list[dict[str, Any]] = []
        self.artifacts: list[dict[str, Any]] = []
        self.blobs: dict[int, bytes] = {}  # artifact id -> its zip, served by the fake storage
        self.pulls: dict[tuple[str, int], dict[str, Any]] = {}
        self.merge_bases: dict[tuple[str, str], str] = {}  # (base sha, head sha) -> merge-base sha
        self.storage_requests: list[tuple[str, dict[str, str]]] = []  # (path, headers) the storage saw
        self.storage_without_length = False  # answer without Content-Length (the body ends with the connection)
        # (path regex, seconds per byte): answers to matching paths are sent one byte at a time
        self.trickle: list[tuple[str, float]] = []
        self._next_id = 1000
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    # --- test-facing helpers ----------------------------------------------------------------

    def start(self) -> FakeGitHub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def add_comment(self, repo: str, number: int, body: str, login: str = BOT) -> dict[str, Any]:
        with self._lock:
            return self._create(repo, number, body, login)

    def thread(self, repo: str = "octo/evals", number: int = 7) -> list[dict[str, Any]]:
        return self.comments.get((repo, number), [])

    def calls(self, method: str | None = None) -> list[Request]:
        return [r for r in self.requests if method is None or r.method == method]

    def add_pull(self, number: int, base_ref: str, base_sha: str, head_sha: str, repo: str = "octo/evals") -> None:
        self.pulls[(repo, number)] = {"base": {"ref": base_ref, "sha": base_sha}, "head": {"sha": head_sha}}

    def add_run(
        self,
        head_sha: str,
        *,
        created_at: str,
        branch: str = "main",
        conclusion: str | None = "success",
        event: str = "push",
        workflow: str = "leaderboard.yml",
        workflow_id: int = 161335,
        repo: str = "octo/evals",
        head_repo: str | None = None,
        artifacts: dict[str, bytes] | None = None,
        expired: bool = False,
    ) -> dict[str, Any]:
        """A workflow run (GitHub's ``workflow_run`` shape) and its artifacts (name -> zip bytes)."""
        with self._lock:
            self._next_id += 1
            run_id = 30000 + self._next_id
            run = {
                "id": run_id, "name": "Eval", "node_id": f"WFR_{run_id}", "head_branch": branch, "head_sha": head_sha,
                "path": f".github/workflows/{workflow}", "display_title": "Eval", "run_number": self._next_id,
                "event": event, "status": "completed" if conclusion else "in_progress", "conclusion": conclusion,
                "workflow_id": workflow_id, "check_suite_id": run_id + 1, "url": f"/repos/{repo}/actions/runs/{run_id}",
                "html_url": f"https://github.com/{repo}/actions/runs/{run_id}", "pull_requests": [],
                "created_at": created_at, "updated_at": created_at, "run_attempt": 1, "run_started_at": created_at,
                "repository": {"id": 1, "full_name": repo, "name": repo.split("/")[1]},
                "head_repository": {"id": 1 if head_repo is None else 2, "full_name": head_repo or repo,
                                    "name": (head_repo or repo).split("/")[1]},
                "head_commit": {"id": head_sha, "tree_id": "0" * 40, "message": "eval", "timestamp": created_at},
            }  # fmt: skip
            self.runs.append(run)
            for name, blob in (artifacts or {}).items():
                self._next_id += 1
                artifact_id = 50000 + self._next_id
                self.artifacts.append({
                    "id": artifact_id, "node_id": f"MDg6QXJ0aWZhY3Qx{artifact_id}", "name": name,
                    "size_in_bytes": len(blob), "expired": expired, "digest": None,
                    "created_at": created_at, "updated_at": created_at,
                    "expires_at": "2026-01-01T00:00:00Z" if expired else "2027-02-28T00:00:00Z",
                    "workflow_run": {"id": run_id, "repository_id": 1, "head_repository_id": 1,
                                     "head_branch": branch, "head_sha": head_sha},
                    "_repo": repo,
                })  # fmt: skip
                self.blobs[artifact_id] = blob
            return run

    def api_calls(self) -> list[Request]:
        """Requests to the API (the storage is not the API)."""
        return [r for r in self.requests if not r.path.startswith("/storage/")]

    def writes(self) -> list[str]:
        """The requests that change something (a GraphQL query is a POST that does not)."""
        return [
            f"{r.method} {r.path}"
            for r in self.requests
            if r.method in ("POST", "PATCH", "DELETE") and r.path not in ("/graphql", GHES_GRAPHQL)
        ]

    # --- the API ---------------------------------------------------------------------------

    def _create(self, repo: str, number: int, body: str, login: str) -> dict[str, Any]:
        self._next_id += 1
        cid = self._next_id
        stamp = f"2026-11-29T12:{(cid // 60) % 60:02d}:{cid % 60:02d}Z"
        comment = {
            "id": cid,
            "node_id": f"IC_{cid}",
            "url": f"{self.url}/repos/{repo}/issues/comments/{cid}",
            "html_url": f"https://github.com/{repo}/pull/{number}#issuecomment-{cid}",
            "issue_url": f"{self.url}/repos/{repo}/issues/{number}",
            "body": body,
            "user": {
                "login": login,
                "id": user_id(login),
                "type": "Bot" if login.endswith("[bot]") else "User",
            },
            "created_at": stamp,
            "updated_at": stamp,
            "author_association": "NONE",
        }
        self.comments.setdefault((repo, number), []).append(comment)
        return comment

    def _find(self, repo: str, cid: int) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
        for (r, _), thread in self.comments.items():
            for c in thread:
                if r == repo and c["id"] == cid:
                    return thread, c
        return None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, payload: Any = None, headers: dict[str, str] | None = None) -> None:
                binary = isinstance(payload, bytes)
                data = payload if binary else b"" if payload is None else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/zip" if binary else "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                interval = next((t for pattern, t in fake.trickle if re.fullmatch(pattern, self._path)), None)
                if interval is None:
                    self.wfile.write(data)
                    return
                try:  # a slow server: the whole answer, a byte at a time
                    for i in range(len(data)):
                        self.wfile.write(data[i : i + 1])
                        self.wfile.flush()
                        time.sleep(interval)
                except OSError:  # the client gave up
                    self.close_connection = True

            def _handle(self, method: str) -> None:
                parts = urlsplit(self.path)
                self._path = parts.path
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                auth = self.headers.get("Authorization")
                version = self.headers.get("X-GitHub-Api-Version")
                with fake._lock:
                    fake.requests.append(Request(method, parts.path, parse_qs(parts.query), body, auth, version))
                    fault = next(
                        (
                            f
                            for f in fake.faults
                            if f.times > 0 and f.method == method and re.fullmatch(f.path, parts.path)
                        ),
                        None,
                    )
                    if fault is not None:
                        fault.times -= 1
                        if fault.on_hit is not None:
                            fault.on_hit()
                if fault is not None and fault.delay:
                    time.sleep(fault.delay)  # outside the lock: other requests go on
                with fake._lock:
                    answer = self._answer(method, parts, body, auth, fault)
                if answer is not None:  # sent outside the lock: a slow answer holds up no other request
                    try:
                        self._send(*answer)
                    except OSError:  # the client gave up waiting (a fault's delay)
                        self.close_connection = True

            def _answer(
                self, method: str, parts: Any, body: Any, auth: str | None, fault: Fault | None
            ) -> tuple[int, Any, dict[str, str]] | None:
                faulty = None if fault is None or fault.status == 0 else (
                    fault.status, {"message": fault.message} if fault.body is None else fault.body, fault.headers
                )  # fmt: skip
                if faulty is not None and fault is not None and not fault.after:
                    return faulty
                if parts.path.startswith("/storage/"):  # blob storage: signed URL, no token expected
                    fake.storage_requests.append((self.path, dict(self.headers.items())))
                    m = re.fullmatch(r"/storage/artifacts/(\d+)\.zip", parts.path)
                    blob = fake.blobs.get(int(m.group(1))) if m and "sig=" in parts.query else None
                    if blob is None:
                        return 403, {"message": "AuthenticationFailed"}, {}
                    if fake.storage_without_length:
                        self.send_response(200)
                        self.send_header("Content-Type", "application/zip")
                        self.send_header("Connection", "close")
                        self.end_headers()
                        self.close_connection = True
                        self.wfile.write(blob)
                        return None
                    return 200, blob, {}
                path, api = parts.path, fake.url
                if fake.ghes:  # nothing but the API's prefixes answers on an Enterprise Server
                    if path == GHES_GRAPHQL:
                        path = "/graphql"
                    elif path.startswith(GHES_PREFIX + "/"):
                        path, api = path.removeprefix(GHES_PREFIX), fake.url + GHES_PREFIX
                    else:
                        return 404, {"message": "Not Found"}, {}
                elif path.startswith("/api/"):  # api.github.com has no /api/v3 nor /api/graphql
                    return 404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}, {}
                version = self.headers.get("X-GitHub-Api-Version")
                if version is not None and version not in API_VERSIONS:
                    return 400, {"message": f"API version {version} is not supported."}, {}
                token = (auth or "").split(" ", 1)[-1]
                login = fake.tokens.get(token)
                if login is None:
                    return 401, {"message": "Bad credentials"}, {}
                self.api = api
                answer = self._route(method, path, parse_qs(parts.query), body, login)
                return faulty if faulty is not None else answer  # after: the work was done, the answer is lost

            def _route(
                self, method: str, path: str, query: dict[str, list[str]], body: Any, login: str
            ) -> tuple[int, Any, dict[str, str]]:
                if method == "POST" and path == "/graphql":
                    if fake.graphql_status != 200:
                        return fake.graphql_status, {"message": "Not Found"}, {}
                    if "viewer" not in str((body or {}).get("query")):
                        return 200, {"errors": [{"message": "unsupported query"}]}, {}
                    is_bot = login.endswith("[bot]")
                    shown = login if fake.graphql_bot_suffix or not is_bot else login.removesuffix("[bot]")
                    # The schema types viewer as User (non-null), whatever kind of account the token is.
                    viewer = {"__typename": "User", "login": shown, "databaseId": user_id(login)}
                    return 200, {"data": {"viewer": viewer}}, {}
                if method == "GET" and path == "/user":
                    if fake.user_status != 200:
                        return fake.user_status, {"message": "Resource not accessible by integration"}, {}
                    return 200, {"login": login, "id": user_id(login), "type": "User"}, {}
                if method == "GET" and (actions := self._actions(path, query)) is not None:
                    return actions
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/(\d+)/comments", path)
                if m:
                    repo, number = m.group(1), int(m.group(2))
                    if method == "GET":
                        per_page = min(100, int(query.get("per_page", ["30"])[0]))
                        page = int(query.get("page", ["1"])[0])
                        thread = fake.comments.get((repo, number), [])
                        last = max(1, -(-len(thread) // per_page))
                        items = thread[(page - 1) * per_page : page * per_page]
                        links = []
                        base = f"{fake.url}{path}?per_page={per_page}"
                        if page < last:
                            links.append(f'<{base}&page={page + 1}>; rel="next"')
                            links.append(f'<{base}&page={last}>; rel="last"')
                        if page > 1:
                            links.append(f'<{base}&page=1>; rel="first"')
                            links.append(f'<{base}&page={page - 1}>; rel="prev"')
                        return 200, items, ({"Link": ", ".join(links)} if links else {})
                    if method == "POST":
                        text = (body or {}).get("body", "")
                        if len(text) > COMMENT_LIMIT:
                            return 422, {
                                "message": "Validation Failed",
                                "errors": [{"resource": "IssueComment", "code": "custom", "field": "body",
                                            "message": "body is too long (maximum is 65536 characters)"}],
                            }, {}  # fmt: skip
                        return 201, fake._create(repo, number, text, login), {}
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/comments/(\d+)", path)
                if m:
                    found = fake._find(m.group(1), int(m.group(2)))
                    if found is None:
                        return 404, {"message": "Not Found"}, {}
                    thread, comment = found
                    if method == "PATCH":
                        text = (body or {}).get("body", "")
                        if len(text) > COMMENT_LIMIT:
                            return 422, {"message": "Validation Failed"}, {}
                        comment["body"] = text
                        comment["updated_at"] = "2026-11-29T13:00:00Z"
                        return 200, comment, {}
                    if method == "DELETE":
                        thread.remove(comment)
                        return 204, None, {}
                return 404, {"message": "Not Found", "path": path}, {}

            def _page(self, items: list[Any], query: dict[str, list[str]]) -> list[Any]:
                per_page = min(100, int(query.get("per_page", ["30"])[0]))
                page = int(query.get("page", ["1"])[0])
                return items[(page - 1) * per_page : page * per_page]

            def _actions(self, path: str, query: dict[str, list[str]]) -> tuple[int, Any, dict[str, str]] | None:
                """GET of pulls, compare, workflow runs, run artifacts, artifact zip; None for other paths."""
                api = self.api
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/pulls/(\d+)", path)
                if m:
                    pull = fake.pulls.get((m.group(1), int(m.group(2))))
                    if pull is None:
                        return 404, {"message": "Not Found"}, {}
                    number = int(m.group(2))
                    return 200, {"id": number, "number": number, "state": "open", "title": "PR",
                                 "url": f"{api}/repos/{m.group(1)}/pulls/{number}",
                                 "html_url": f"https://github.com/{m.group(1)}/pull/{number}",
                                 "base": {"label": "octo:" + pull["base"]["ref"], **pull["base"]},
                                 "head": {"label": "octo:feature", "ref": "feature", **pull["head"]}}, {}  # fmt: skip
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/compare/([^/.]+)\.\.\.([^/.]+)", path)
                if m:
                    base, head = m.group(2), m.group(3)
                    merge_base = fake.merge_bases.get((base, head))
                    if merge_base is None:
                        return 404, {"message": "Not Found"}, {}
                    commit = {
                        "sha": merge_base,
                        "url": f"{api}/repos/{m.group(1)}/commits/{merge_base}",
                        "html_url": f"https://github.com/{m.group(1)}/commit/{merge_base}",
                        "commit": {"message": "base", "tree": {"sha": "0" * 40}},
                        "parents": [],
                    }
                    return 200, {"url": f"{api}/repos/{m.group(1)}/compare/{base}...{head}",
                                 "html_url": f"https://github.com/{m.group(1)}/compare/{base}...{head}",
                                 "base_commit": {**commit, "sha": base}, "merge_base_commit": commit,
                                 "status": "diverged", "ahead_by": 2, "behind_by": 1, "total_commits": 2,
                                 "commits": [], "files": []}, {}  # fmt: skip
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/actions/workflows/([^/]+)/runs", path)
                if m:
                    repo, workflow = m.group(1), m.group(2)
                    status = query.get("status", [None])[0]
                    conclusions = {"success", "failure", "neutral", "cancelled", "skipped", "timed_out",
                                   "action_required", "stale"}  # fmt: skip
                    runs = [
                        r for r in fake.runs
                        if r["repository"]["full_name"] == repo
                        and workflow in (str(r["workflow_id"]), r["path"].rsplit("/", 1)[-1])
                        and ("branch" not in query or r["head_branch"] == query["branch"][0])
                        and ("head_sha" not in query or r["head_sha"] == query["head_sha"][0])
                        and ("event" not in query or r["event"] == query["event"][0])
                        and (status is None or r["conclusion" if status in conclusions else "status"] == status)
                    ]  # fmt: skip
                    runs.sort(key=lambda r: (r["created_at"], r["id"]), reverse=True)
                    shown = [
                        {**r, "url": f"{api}{r['url']}", "artifacts_url": f"{api}{r['url']}/artifacts",
                         "workflow_url": f"{api}/repos/{repo}/actions/workflows/{r['workflow_id']}"}
                        for r in self._page(runs, query)
                    ]  # fmt: skip
                    return 200, {"total_count": len(runs), "workflow_runs": shown}, {}
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/actions/runs/(\d+)/artifacts", path)
                if m:
                    repo, run_id = m.group(1), int(m.group(2))
                    if not any(r["id"] == run_id and r["repository"]["full_name"] == repo for r in fake.runs):
                        return 404, {"message": "Not Found"}, {}
                    found = [
                        a for a in fake.artifacts
                        if a["workflow_run"]["id"] == run_id and ("name" not in query or a["name"] == query["name"][0])
                    ]  # fmt: skip
                    found.sort(key=lambda a: (a["created_at"], a["id"]), reverse=True)  # GitHub: newest first
                    shown = [
                        {**{k: v for k, v in a.items() if k != "_repo"},
                         "url": f"{api}/repos/{repo}/actions/artifacts/{a['id']}",
                         "archive_download_url": f"{api}/repos/{repo}/actions/artifacts/{a['id']}/zip"}
                        for a in self._page(found, query)
                    ]  # fmt: skip
                    return 200, {"total_count": len(found), "artifacts": shown}, {}
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/actions/artifacts/(\d+)/zip", path)
                if m:
                    artifact = next(
                        (a for a in fake.artifacts if a["id"] == int(m.group(2)) and a["_repo"] == m.group(1)), None
                    )
                    if artifact is None:
                        return 404, {"message": "Not Found"}, {}
                    if artifact["expired"]:
                        return 410, {"message": "Artifact has expired"}, {}
                    location = f"{fake.url}/storage/artifacts/{artifact['id']}.zip?sig=signed-{artifact['id']}&se=60"
                    return 302, None, {"Location": location}
                return None

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_PATCH(self) -> None:
                self._handle("PATCH")

            def do_DELETE(self) -> None:
                self._handle("DELETE")

        return Handler
