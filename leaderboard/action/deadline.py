"""Whole-request deadlines: a wall-clock limit on a block of network calls.

Socket timeouts bound each read, not a request: a server that sends one byte a second never
trips a 5 s read timeout, and a loop that checks the clock between 256 KiB chunks waits for a
chunk that takes days. :func:`time_limit` arms a real-time interval timer (``SIGALRM``) whose
handler raises :class:`DeadlineExceeded` in the blocked call, whatever it is blocked on.

The exception is not an ``OSError``: requests and urllib3 would take an ``OSError`` for a
network failure and retry or wrap it; this one ends the call. Signals reach only the main
thread, so elsewhere (a test harness's worker thread, a platform without ``setitimer``) the
block runs with only its per-read timeouts.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class DeadlineExceeded(Exception):
    """A block under :func:`time_limit` ran past its limit."""


def _expire(signum: int, frame: FrameType | None) -> None:
    raise DeadlineExceeded


def available() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`DeadlineExceeded` in the block once ``seconds`` of wall time have passed.

    Inside another limit's block the outer limit stands alone (re-arming it afterwards could fire
    it again while its exception is on its way out).
    """
    if seconds <= 0:
        raise DeadlineExceeded
    if not available() or signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        yield
        return
    previous = signal.signal(signal.SIGALRM, _expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
