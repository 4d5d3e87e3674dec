"""Which files a run names, and opening each one safely.

Input is untrusted, so nothing here is surprised: a glob never enters a directory twice (a
link to an ancestor cannot loop) nor, with a workspace, walks out of it; a file reached by
two paths is listed once; only regular files are opened (a FIFO would block forever, a
device never end), and a file larger than the bytes left to read is refused by its size.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

from . import limits
from .validation import Problem


def over_budget(what: str) -> str:
    """The message for input past :data:`~leaderboard.limits.MAX_INPUT_BYTES`, starting with ``what``."""
    mib = limits.MAX_INPUT_BYTES / 2**20
    return f"{what}: the input limit is {limits.MAX_INPUT_BYTES:,} bytes ({mib:g} MiB) for all files together"


def file_kind(mode: int) -> str | None:
    """What a non-regular file is, to refuse it by name (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    for test, kind in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return "not a regular file"


def not_regular(kind: str) -> str:
    return f"is {kind}, not a regular file: refused (reading it could block or never end)"


def open_regular(path: Path, name: str, problems: list[Problem], budget: int) -> BinaryIO | None:
    """The file opened for reading, or None with the problem appended: only a regular file of at most
    ``budget`` bytes."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        problems.append(Problem(f"cannot read the file: {exc.strerror or exc}", name))
        return None
    info = os.fstat(fd)
    kind = file_kind(info.st_mode)
    if kind is not None or info.st_size > budget:
        os.close(fd)
        if kind is not None:
            problems.append(Problem(not_regular(kind), name))
        else:
            problems.append(Problem(over_budget(f"is {info.st_size:,} bytes, more than the {budget:,} left"), name))
        return None
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


class _Glob:
    """One pattern expanded like :func:`glob.glob` (``recursive=True``), but safely.

    ``*``, ``?`` and ``[...]`` match within a path segment and skip hidden names, as
    glob does; ``**`` matches any number of directories. Unlike glob, no directory is
    entered twice (a link to an ancestor cannot loop, a link to a sibling is not walked
    again) and, with a workspace, a link to a directory outside it is refused once, by
    its name, instead of being walked.
    """

    def __init__(self, base: Path | None) -> None:
        self.base = base
        self.matches: list[str] = []
        self.problems: list[Problem] = []
        self._entered: set[tuple[int, int]] = set()

    def _name(self, path: str) -> str:
        return _lexical_name(path, self.base)

    def _enter(self, path: str) -> bool:
        """Whether to walk into the directory at ``path``: once each, and never out of the workspace."""
        try:
            info = os.stat(path)
        except OSError:
            return False
        identity = (info.st_dev, info.st_ino)
        if identity in self._entered:
            return False
        if self.base is not None and not _inside(path, self.base):
            self.problems.append(
                Problem(
                    message="is a link to a directory outside the workspace: not followed",
                    file=self._name(path),
                )
            )
            return False
        self._entered.add(identity)
        return True

    def _entries(self, directory: str) -> list[os.DirEntry[str]]:
        try:
            with os.scandir(directory or ".") as it:
                return sorted(it, key=lambda e: e.name)
        except OSError as exc:
            self.problems.append(
                Problem(message=f"cannot list the directory: {exc.strerror or exc}", file=self._name(directory))
            )
            return []

    def expand(self, pattern: str) -> list[str]:
        anchor = os.sep if pattern.startswith(os.sep) else ""
        parts = [p for p in pattern.split(os.sep) if p]
        # The literal directories before the first wildcard are the user's own words: walk from there.
        first = next(i for i, p in enumerate(parts) if glob.has_magic(p))
        directory = os.path.join(anchor, *parts[:first]) if parts[:first] else anchor
        if not os.path.isdir(directory or "."):
            return []
        if self.base is not None and not _inside(directory or ".", self.base):
            self.problems.append(
                Problem(
                    message="is outside the workspace (through a link, or absolute): not searched",
                    file=self._name(directory),
                )
            )
            return []
        self._enter(directory)
        self._walk(directory, parts[first:])
        return self.matches

    def _walk(self, directory: str, parts: list[str]) -> None:
        part, rest = parts[0], parts[1:]
        if part == "**":
            self._recurse(directory, rest)
        elif not glob.has_magic(part):
            child = os.path.join(directory, part)
            if not rest:
                if os.path.lexists(child):
                    self.matches.append(child)
            elif os.path.isdir(child):
                self._walk(child, rest)
        else:
            for entry in self._entries(directory):
                if entry.name.startswith(".") and not part.startswith("."):
                    continue
                if not fnmatch.fnmatchcase(entry.name, part):
                    continue
                child = os.path.join(directory, entry.name)
                if not rest:
                    self.matches.append(child)
                elif _is_dir(entry) and self._enter(child):
                    self._walk(child, rest)

    def _recurse(self, directory: str, rest: list[str]) -> None:
        """``**``: ``rest`` matched in ``directory`` and in every directory under it."""
        if rest:
            self._walk(directory, rest)
        for entry in self._entries(directory):
            if entry.name.startswith("."):
                continue
            child = os.path.join(directory, entry.name)
            is_dir = _is_dir(entry)
            if not rest and not is_dir:
                self.matches.append(child)  # a trailing "**" matches the files too
            if is_dir and self._enter(child):
                if not rest:
                    self.matches.append(child)
                self._recurse(child, rest)


def _inside(path: str, base: Path) -> bool:
    """Whether ``path``, links resolved, is in ``base``. realpath, unlike Path.resolve, does not
    raise on a link loop: the loop stays in the path, and opening it fails with a message."""
    return Path(os.path.realpath(path)).is_relative_to(base)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _lexical_name(path: str, base: Path | None) -> str:
    """``path`` relative to the workspace as written (links not resolved), for messages."""
    if base is not None:
        absolute = os.path.normpath(os.path.join(base, path))
        if Path(absolute).is_relative_to(base):
            return Path(absolute).relative_to(base).as_posix()
    return Path(path).as_posix()


def expand_paths(
    patterns: Iterable[str], *, root: str | os.PathLike[str] | None = None
) -> tuple[list[Path], list[Problem]]:
    """Expand paths and globs into a sorted list of distinct regular files.

    With ``root``, relative patterns are taken from it and anything that resolves
    outside it (``..``, an absolute path, a symlink out) is refused, naming the file.
    A file reached by several paths (a link, ``a/../a``) is listed once, by its first path.
    """
    base = Path(root).resolve() if root is not None else None
    candidates: set[str] = set()
    problems: list[Problem] = []
    literal: dict[str, str] = {}  # path -> the pattern that names it, for messages
    for pattern in patterns:
        full = pattern if base is None or os.path.isabs(pattern) else os.path.join(base, pattern)
        if glob.has_magic(full):
            walker = _Glob(base)
            matches = walker.expand(full)
            problems.extend(walker.problems)
            if not matches and not walker.problems:
                problems.append(Problem(message=f"no file matches {pattern!r}", file=pattern))
            candidates.update(matches)
        else:
            candidates.add(full)
            literal.setdefault(full, pattern)
    found: dict[tuple[int, int] | str, Path] = {}
    for match in sorted(candidates):
        path = Path(match)
        name = _lexical_name(match, base)
        try:
            info: os.stat_result | None = path.stat()
        except OSError:
            info = None  # reading it reports why it cannot be read
        kind = file_kind(info.st_mode) if info is not None else None
        if kind == "a directory" and match not in literal:
            continue  # a wildcard matching a directory is not a request to read it
        if base is not None and not _inside(match, base):
            named = literal.get(match, name)
            problems.append(Problem(message=f"{named!r} resolves outside the workspace and is refused", file=named))
            continue
        if info is None:
            found.setdefault(match, path)
        elif kind == "a directory":
            problems.append(Problem(message="is a directory, not an EvalRun file", file=name))
        elif kind is not None:
            problems.append(Problem(message=not_regular(kind), file=name))
        else:
            found.setdefault((info.st_dev, info.st_ino), path)
    return sorted(found.values(), key=str), problems


def display_name(path: Path, root: str | os.PathLike[str] | None) -> str:
    """The path as a user (and a GitHub annotation) names it: relative to the workspace."""
    if root is not None:
        return _lexical_name(str(path), Path(root).resolve())
    return path.as_posix()
