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
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

BOT = "github-actions[bot]"
COMMENT_LIMIT = 65536


@dataclass
class Fault:
    """Answer matching requests with ``status`` (``times`` times); ``after`` does the work first."""

    method: str
    path: str  # a regex matched against the path
    status: int
    times: int = 1
    headers: dict[str, str] = field(default_factory=dict)
    message: str = "Server Error"
    after: bool = False
    delay: float = 0.0  # seconds to hang before answering
    on_hit: Callable[[], None] | None = None  # what else happens meanwhile (a comment deleted by someone)


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any
    authorization: str | None


class FakeGitHub:
    def __init__(self) -> None:
        self.tokens: dict[str, str] = {"test-token": BOT}
        self.user_status = 403  # GET /user with the workflow token
        self.graphql_status = 200
        self.graphql_bot_suffix = True  # whether GraphQL writes a bot's login with "[bot]"
        self.comments: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self.faults: list[Fault] = []
        self.requests: list[Request] = []
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

    def writes(self) -> list[str]:
        """The requests that change something (a GraphQL query is a POST that does not)."""
        return [
            f"{r.method} {r.path}"
            for r in self.requests
            if r.method in ("POST", "PATCH", "DELETE") and r.path != "/graphql"
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
                "id": abs(hash(login)) % 10**6,
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
                data = b"" if payload is None else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method: str) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                auth = self.headers.get("Authorization")
                with fake._lock:
                    fake.requests.append(Request(method, parts.path, parse_qs(parts.query), body, auth))
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
                    if fault is not None and not fault.after:
                        return self._send(fault.status, {"message": fault.message}, fault.headers)
                    token = (auth or "").split(" ", 1)[-1]
                    login = fake.tokens.get(token)
                    if login is None:
                        return self._send(401, {"message": "Bad credentials"})
                    status, payload, headers = self._route(method, parts.path, parse_qs(parts.query), body, login)
                    if fault is not None:  # the work was done, but the answer is lost
                        return self._send(fault.status, {"message": fault.message}, fault.headers)
                    return self._send(status, payload, headers)

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
                    return 200, {"data": {"viewer": {"__typename": "Bot" if is_bot else "User", "login": shown}}}, {}
                if method == "GET" and path == "/user":
                    if fake.user_status != 200:
                        return fake.user_status, {"message": "Resource not accessible by integration"}, {}
                    return 200, {"login": login, "id": 1, "type": "User"}, {}
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

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_PATCH(self) -> None:
                self._handle("PATCH")

            def do_DELETE(self) -> None:
                self._handle("DELETE")

        return Handler
