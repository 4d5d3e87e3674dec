"""The comment protocol: the marker that finds the comment again, the size limits and how they are measured."""

from __future__ import annotations

from dataclasses import dataclass

from ..options import COMMENT_KEY

__all__ = [
    "COMMENT_KEY",
    "COMMENT_LIMIT",
    "RUN_LINK_PREFIX",
    "SUMMARY_LIMIT",
    "Commit",
    "comment_length",
    "marker",
    "same_content",
    "summary_length",
]

COMMENT_LIMIT = 65_536
SUMMARY_LIMIT = 1024 * 1024  # bytes GitHub accepts in one step's summary
MARKER_PREFIX = "<!-- leaderboard-action:"
RUN_LINK_PREFIX = "<sub>[Workflow run]("


def marker(key: str) -> str:
    """The hidden first line that ties a comment to its ``comment-key``."""
    return f"{MARKER_PREFIX}{key} -->"


def comment_length(text: str) -> int:
    """Length as GitHub's limit counts it, conservatively: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def summary_length(text: str) -> int:
    return len(text.encode("utf-8"))


def same_content(a: str, b: str) -> bool:
    """Equal but for the workflow-run link, which every run changes."""

    def strip(body: str) -> str:
        lines = body.rstrip("\n").split("\n")
        return "\n".join(line for line in lines if not line.startswith(RUN_LINK_PREFIX))

    return strip(a) == strip(b)


@dataclass(frozen=True)
class Commit:
    """The commit the leaderboard describes (the PR's head), linked where the server is known."""

    sha: str
    url: str | None = None
