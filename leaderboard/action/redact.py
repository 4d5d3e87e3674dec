"""Secrets kept out of everything the action writes: the comment, the summary, the files, the outputs.

A secret can reach a document by many paths (a server's error message that echoes the token,
an exception's text, a file name); rather than clean each path, every place that writes or
publishes text passes it through :func:`redacted`, and the log through the runner's mask and
the action's own stream filter (:func:`log_redacted`). The secrets are those registered by :func:`hidden` for the
duration of a run.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from collections.abc import Iterator
from typing import TextIO

MASK = "(redacted)"  # plain text in every format: `***` would be emphasis in markdown
_secrets: list[str] = []
_pattern: re.Pattern[str] | None = None
# A secret is found escaped too: markdown puts a backslash before `_` or `-` (``ghs\_abc``), and
# JSON doubles that backslash; so up to two backslashes may stand before each of its characters.
_ESCAPES = r"\\{0,2}"


def _compile() -> None:
    global _pattern
    alternatives = sorted(("".join(_ESCAPES + re.escape(c) for c in s) for s in set(_secrets)), key=len, reverse=True)
    _pattern = re.compile("|".join(alternatives)) if alternatives else None


@contextlib.contextmanager
def hidden(*secrets: str) -> Iterator[None]:
    """Within this block, :func:`redacted` replaces each of ``secrets`` (empty ones ignored)."""
    added = [s for s in secrets if s]
    _secrets.extend(added)
    _compile()
    try:
        yield
    finally:
        for s in added:
            _secrets.remove(s)
        _compile()


def redacted(text: str) -> str:
    """``text`` with every registered secret, plain or escaped, replaced by ``(redacted)``."""
    return text if _pattern is None else _pattern.sub(MASK, text)


class RedactingWriter:
    """A text stream that replaces the registered secrets in what it passes on.

    Text arrives in pieces (a report is streamed), and a secret may be split between two: the
    last ``len(secret) - 1`` characters are held back until more text or :meth:`close` comes.
    """

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner
        self._held = ""
        self._keep = 3 * max((len(s) for s in _secrets), default=1) - 1  # a secret escaped is up to 3x long

    def write(self, text: str) -> int:
        if not _secrets:
            self._inner.write(text)
            return len(text)
        pending = redacted(self._held + text)
        cut = max(0, len(pending) - self._keep)
        self._inner.write(pending[:cut])
        self._held = pending[cut:]
        return len(text)

    def close(self) -> None:
        """Write what is held back (the stream itself stays open: its owner closes it)."""
        self._inner.write(self._held)
        self._held = ""


class _LogRedactor(io.TextIOBase):
    """A stream that replaces the token, so that no message (a server's echo included) can show it."""

    def __init__(self, inner: TextIO, secret: str) -> None:
        self._inner = inner
        self._secret = secret

    def write(self, text: str) -> int:
        self._inner.write(text.replace(self._secret, "***"))
        return len(text)

    def flush(self) -> None:
        self._inner.flush()


@contextlib.contextmanager
def log_redacted(token: str) -> Iterator[None]:
    """Within this block, the token is replaced in whatever reaches stdout and stderr (the step's log)."""
    if not token:
        yield
        return
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _LogRedactor(sys.stdout, token), _LogRedactor(sys.stderr, token)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout, sys.stderr = saved
