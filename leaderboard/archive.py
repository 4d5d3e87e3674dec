"""Unpacking a zip archive that someone else made, within limits.

An archive is refused as a whole, before anything is written, when a member's
name is absolute or climbs out (``..``), when a member is a link (or anything
but a plain file or a directory), when it is encrypted, when two members have
the same name, or when the files or their total size exceed the limits. While
writing, the bytes actually produced are counted too, so a member that holds
more than its header declares cannot fill the disk.

A member whose name the file system cannot hold (a component over 255 bytes, a path over 1 KiB)
is written under a short name made from a hash of its own, keeping its suffix, so that it is
still read, by name or by content; :func:`extract_named` says which file holds which member.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MAX_FILES = 1_000
MAX_TOTAL_BYTES = 256 * 1024 * 1024
_CHUNK = 1024 * 1024
NAME_MAX = 255  # bytes in one path component (Linux and macOS file systems)
PATH_BUDGET = 1024  # bytes of a member's path below the destination (PATH_MAX is 4096)
LONG_NAMES = "long-names~"  # where members with names too long for the file system are written


class UnsafeArchive(ValueError):
    """The archive was refused; the message says why (and names the member)."""


@dataclass(frozen=True)
class ArchiveLimits:
    max_files: int = MAX_FILES
    max_total_bytes: int = MAX_TOTAL_BYTES


def _member_path(info: zipfile.ZipInfo) -> PurePosixPath:
    """The member's relative path, or :class:`UnsafeArchive`."""
    raw = info.orig_filename  # as stored, before zipfile's own clean-up of the name
    name = raw.replace("\\", "/")
    if not name or "\0" in name:
        raise UnsafeArchive(f"member {raw!r}: empty name or NUL byte")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise UnsafeArchive(f"member {raw!r}: absolute path")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise UnsafeArchive(f"member {raw!r}: '..' in the path")
    if not parts:
        raise UnsafeArchive(f"member {raw!r}: no file name")
    return PurePosixPath(*parts)


def _kind(info: zipfile.ZipInfo) -> str:
    """ "dir", "file", or the reason it is neither."""
    file_type = stat.S_IFMT(info.external_attr >> 16)
    if info.create_system == 3 and file_type:  # Unix attributes with the type bits set
        if file_type == stat.S_IFLNK:
            return "a symbolic link"
        if file_type == stat.S_IFDIR:
            return "dir"
        if file_type != stat.S_IFREG:
            return "not a regular file"
    return "dir" if info.is_dir() else "file"


def check_members(
    archive: zipfile.ZipFile, limits: ArchiveLimits = ArchiveLimits()
) -> list[tuple[zipfile.ZipInfo, PurePosixPath]]:
    """The archive's files with their safe relative paths; raise :class:`UnsafeArchive` on any doubt."""
    files: list[tuple[zipfile.ZipInfo, PurePosixPath]] = []
    seen: set[str] = set()
    total = 0
    for info in archive.infolist():
        path = _member_path(info)
        kind = _kind(info)
        if kind == "dir":
            continue
        if kind != "file":
            raise UnsafeArchive(f"member {info.orig_filename!r}: {kind}")
        if info.flag_bits & 0x1:
            raise UnsafeArchive(f"member {info.orig_filename!r}: encrypted")
        key = path.as_posix().casefold()
        if key in seen:
            raise UnsafeArchive(f"member {info.orig_filename!r}: the same name twice")
        seen.add(key)
        files.append((info, path))
        total += info.file_size
        if len(files) > limits.max_files:
            raise UnsafeArchive(f"more than {limits.max_files} files")
        if total > limits.max_total_bytes:
            raise UnsafeArchive(f"more than {limits.max_total_bytes} bytes unpacked")
    return files


def _disk_path(relative: PurePosixPath) -> PurePosixPath:
    """Where a member is written: its own path when the file system can hold it, else a short one."""
    fits = all(len(part.encode("utf-8", "surrogatepass")) <= NAME_MAX for part in relative.parts)
    if fits and len(relative.as_posix().encode("utf-8", "surrogatepass")) <= PATH_BUDGET:
        return relative
    digest = hashlib.sha256(relative.as_posix().encode("utf-8", "surrogatepass")).hexdigest()[:20]
    suffix = relative.suffix if len(relative.suffix) <= 16 else ""
    return PurePosixPath(LONG_NAMES, digest + suffix)


def safe_extract(
    data: bytes | os.PathLike[str] | str,
    destination: str | os.PathLike[str],
    limits: ArchiveLimits = ArchiveLimits(),
) -> list[Path]:
    """Unpack the zip ``data`` (its bytes, or a path to it) under ``destination``; the files written, sorted.

    Raise :class:`UnsafeArchive` when the archive is refused (nothing is written then, or, if a
    member lies about its size while being written, what was written is left for the caller's
    temporary directory to remove) and when it is not a zip archive at all.
    """
    return sorted(extract_named(data, destination, limits))


def extract_named(
    data: bytes | os.PathLike[str] | str,
    destination: str | os.PathLike[str],
    limits: ArchiveLimits = ArchiveLimits(),
) -> dict[Path, str]:
    """As :func:`safe_extract`; each file written with the member's name in the archive (``/``-separated)."""
    root = Path(destination).resolve()
    source = io.BytesIO(data) if isinstance(data, bytes) else data
    try:
        with zipfile.ZipFile(source) as archive:
            members = check_members(archive, limits)
            written: dict[Path, str] = {}
            budget = limits.max_total_bytes
            for info, relative in members:
                target = root.joinpath(*_disk_path(relative).parts)
                if not target.resolve().is_relative_to(root):  # belt and braces: the checks above forbid it
                    raise UnsafeArchive(f"member {info.orig_filename!r}: resolves outside the destination")
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as member, open(target, "xb") as out:
                    while chunk := member.read(_CHUNK):
                        budget -= len(chunk)
                        if budget < 0:
                            raise UnsafeArchive(f"more than {limits.max_total_bytes} bytes unpacked")
                        out.write(chunk)
                written[target] = relative.as_posix()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as exc:
        raise UnsafeArchive(f"not a readable zip archive: {exc}") from exc
    except (FileExistsError, NotADirectoryError, IsADirectoryError) as exc:
        raise UnsafeArchive(f"member names collide with each other: {exc.filename}") from exc
    return written
