"""The artifact's download: from GitHub's short-lived storage, without credentials, bounded.

``GET /actions/artifacts/{id}/zip`` (made with the token) answers 302 to storage; the storage
URL is fetched here by a plain HTTP session that sends no ``Authorization`` (nor a ``.netrc``
one), with timeouts, a size cap and a deadline on the whole download.
"""

from __future__ import annotations

import os
from pathlib import Path

import requests
import urllib3

from ..baseline import NoBaseline
from ..stats.history import MISSING, OVER_BUDGET, TIMED_OUT, SkipReason
from . import github_api
from .deadline import DeadlineExceeded, time_limit

MAX_ZIP_BYTES = 64 * 1024 * 1024  # the artifact's zip as downloaded
DOWNLOAD_TIMEOUT = (5.0, 30.0)  # connect, read (seconds) for the storage download
DOWNLOAD_DEADLINE = 60.0  # seconds for the whole download
STORAGE_RETRIES = 2  # a 5xx or a dropped connection from the artifact's storage is tried again, as API reads are
RETRY_FIX = "re-run the job; if it keeps happening, check https://www.githubstatus.com (or your GHES instance)"


class Missing(Exception):
    """Control flow: looking for the baseline (or downloading it) ends with a NoBaseline saying why.

    ``skip``: how the history counts a run whose artifact this stopped (the words are the documents').
    """

    def __init__(
        self, reason: str, fix: str, quiet: bool = False, *, denied: bool = False, skip: SkipReason = MISSING
    ) -> None:
        super().__init__(reason)
        self.outcome = NoBaseline(reason, fix, quiet)
        self.denied = denied  # GitHub refused the token (401, 403 or 404 without a rate limit)
        self.skip = skip


class _NoCredentials(requests.auth.AuthBase):
    """Sends nothing: no Authorization header, and (being set) keeps requests from reading ``.netrc``."""

    def __call__(self, r: requests.PreparedRequest) -> requests.PreparedRequest:
        r.headers.pop("Authorization", None)
        return r


def fetch_without_credentials(url: str, target: Path, *, limit: int = MAX_ZIP_BYTES) -> None:
    """Download ``url`` to ``target`` with no credentials, within ``limit`` bytes and DOWNLOAD_DEADLINE.

    The storage URL is signed by GitHub and lives a minute; it must not receive the token. A plain
    ``requests`` session is used, with ``trust_env`` off so that no ``.netrc`` entry is sent either
    (on a redirect too); proxies and CA bundle are still taken from the environment. A 5xx or a
    dropped connection is tried again (STORAGE_RETRIES times, as the API's reads are). The deadline
    is on the whole download, by the wall clock: a storage trickling a byte a second ends there.
    """
    fix = RETRY_FIX
    deadline = DOWNLOAD_DEADLINE
    with requests.Session() as session:
        session.trust_env = False
        session.auth = _NoCredentials()
        session.proxies.update(requests.utils.get_environ_proxies(url))
        retry = urllib3.Retry(
            total=STORAGE_RETRIES,
            backoff_factor=0.5,
            backoff_max=github_api.RETRY_WAIT,
            status_forcelist=list(range(500, 600)),
            allowed_methods=frozenset({"GET"}),
            raise_on_status=False,  # the last answer is looked at below
            retry_after_max=int(github_api.RETRY_WAIT),
        )
        adapter = requests.adapters.HTTPAdapter(max_retries=retry)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
        if bundle:
            session.verify = bundle
        try:
            with time_limit(deadline):
                _stream(session, url, target, limit)
        except DeadlineExceeded as exc:
            raise Missing(f"the artifact's download took more than {deadline:g} s", fix, skip=TIMED_OUT) from exc
        except requests.RequestException as exc:
            raise Missing(f"downloading the artifact from its storage failed ({type(exc).__name__})", fix) from exc


def _stream(session: requests.Session, url: str, target: Path, limit: int) -> None:
    fix = RETRY_FIX
    with session.get(url, stream=True, timeout=DOWNLOAD_TIMEOUT, allow_redirects=True) as response:
        if response.status_code != 200:
            raise Missing(f"the artifact's storage answered HTTP {response.status_code}", fix)
        declared = response.headers.get("Content-Length")
        if declared and declared.isdigit() and int(declared) > limit:
            raise Missing(f"the artifact's zip is {declared} bytes, more than the {limit} allowed",
                          "upload only the EvalRun files in it", skip=OVER_BUDGET)  # fmt: skip
        size = 0
        with open(target, "wb") as out:
            for chunk in response.iter_content(chunk_size=256 * 1024):
                size += len(chunk)
                if size > limit:
                    raise Missing(f"the artifact's zip is more than the {limit} bytes allowed",
                                  "upload only the EvalRun files in it", skip=OVER_BUDGET)  # fmt: skip
                out.write(chunk)
