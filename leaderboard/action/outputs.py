"""The files the action leaves for later steps, written only inside the workspace.

The workspace holds the pull request's checkout, so anything in it may be planted:
a ``.leaderboard/<key>`` that is a link to a directory elsewhere, a ``leaderboard.md``
that is a link (or a hard link) to another file. Each directory is therefore opened
relative to its parent with ``O_NOFOLLOW``, a link is refused by name, and each file
is written to a fresh temporary name and renamed into place, which replaces a link
rather than writing through it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
from collections.abc import Callable, Mapping, Sequence
from typing import TextIO, cast

from .redact import RedactingWriter, redacted

# A file's content: the text, or a function that writes it (a report of a gigabyte is streamed, not held).
Content = str | Callable[[TextIO], None]

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


class OutputRefused(Exception):
    """An output path cannot be written safely; ``path`` is relative to the workspace."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def key_directory(key: str) -> str:
    """The directory name for a ``comment-key``: one key, one directory, and no two keys share one.

    ``/`` becomes ``+``, a character no key may contain, so the mapping is injective
    (``a/b`` → ``a+b``, ``a-b`` → ``a-b``) and the result is a single path segment.
    """
    return key.replace("/", "+")


def _refusal(parent: int, name: str, wanted: str) -> str:
    """Why ``name`` (in the directory ``parent``) cannot serve as ``wanted``."""
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except OSError as exc:
        return f"cannot be used: {exc.strerror or exc}"
    if stat.S_ISLNK(info.st_mode):
        return (
            "is a symbolic link: the action writes only inside the workspace and never through a link, "
            "so it refuses to use it; remove the link"
        )
    return f"exists and is not {wanted}; remove it or choose another comment-key"


def _open_directory(parent: int, name: str, shown: str) -> int:
    try:
        os.mkdir(name, 0o777, dir_fd=parent)
    except FileExistsError:
        pass  # an existing directory is reused; anything else there is refused just below
    except OSError as exc:
        raise OutputRefused(shown, f"cannot create the directory: {exc.strerror or exc}") from exc
    try:
        return os.open(name, _DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)
    except OSError as exc:
        raise OutputRefused(shown, _refusal(parent, name, "a directory")) from exc


def _write_file(directory: int, name: str, text: Content, shown: str) -> None:
    def write(fd: int) -> None:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            # Every file is a document: no secret is written, whatever path it took into the text.
            if isinstance(text, str):
                handle.write(redacted(text))
            else:
                writer = RedactingWriter(handle)
                text(cast(TextIO, writer))
                writer.close()

    _replace_file(directory, name, shown, write)


def _replace_file(directory: int, name: str, shown: str, write: Callable[[int], None]) -> None:
    """``name`` in ``directory`` replaced by what ``write`` puts into a new file descriptor: only a regular
    file (or nothing) there, written beside it under a random name and renamed, following no link."""
    try:
        info: os.stat_result | None = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise OutputRefused(shown, _refusal(directory, name, "a regular file"))
    temporary = f".{name}.{secrets.token_hex(8)}.tmp"
    try:
        fd = os.open(
            temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=directory
        )
        write(fd)
        # A rename replaces the name: a hard link elsewhere keeps its old content.
        os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary, dir_fd=directory)
        raise OutputRefused(shown, f"cannot write the file: {exc.strerror or exc}") from exc


def _open_inside(workspace: str, directories: Sequence[str]) -> tuple[int, str]:
    """``workspace/<directories...>`` opened (created where missing) following no link, and its shown path."""
    try:
        fd = os.open(workspace, _DIRECTORY)
    except OSError as exc:
        raise OutputRefused(".", f"cannot open the workspace: {exc.strerror or exc}") from exc
    shown: list[str] = []
    try:
        for name in directories:
            shown.append(name)
            child = _open_directory(fd, name, "/".join(shown))
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd, "/".join(shown)


def write_inside(workspace: str, directories: Sequence[str], files: Mapping[str, Content]) -> None:
    """Create ``workspace/<directories...>`` and write ``files`` there, following no link on the way."""
    fd, shown = _open_inside(workspace, directories)
    try:
        for name, text in files.items():
            _write_file(fd, name, text, f"{shown}/{name}" if shown else name)
    finally:
        os.close(fd)


def copy_inside(workspace: str, relative: str, source: str) -> None:
    """Copy the file ``source`` (written outside the workspace) to ``workspace/relative``, following no link.

    ``relative`` is a path the workflow chose (the ``export-parquet`` input): its folders are created
    or reused as :func:`write_inside` does, and one that leaves the workspace is refused by name.
    """
    parts = relative.replace("\\", "/").split("/")
    if relative.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise OutputRefused(relative, "must be a relative path inside the workspace, without '.' or '..' parts")
    *folders, name = parts
    fd, _ = _open_inside(workspace, folders)
    try:
        _copy_file(fd, name, source, relative)
    finally:
        os.close(fd)


def _copy_file(directory: int, name: str, source: str, shown: str) -> None:
    def write(fd: int) -> None:
        with os.fdopen(fd, "wb") as out, open(source, "rb") as data:
            shutil.copyfileobj(data, out)

    _replace_file(directory, name, shown, write)
