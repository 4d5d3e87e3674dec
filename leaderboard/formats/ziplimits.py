"""Reading zip members with limits, Zstandard-compressed ones included.

Inspect's ``.eval`` logs are zips, and since inspect_ai 0.3.206 their members are compressed with
Zstandard (zip method 93), which Python's ``zipfile`` reads only from 3.14 on. ``zipfile`` still
parses the central directory; the members are decompressed here, by method, with the output capped
as it is produced: the sizes an archive declares are never trusted, so an archive bomb stops at the
cap with an error instead of filling the runner's memory.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import zstandard

STORED, DEFLATED, ZSTANDARD = 0, 8, 93
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_CHUNK = 1 << 20


@dataclass(frozen=True)
class ZipLimits:
    """How much one archive may hold: beyond it, reading stops with :class:`ZipLimitError`."""

    members: int = 100_000
    member_bytes: int = 512 * 2**20
    total_bytes: int = 4 * 2**30


class ZipLimitError(Exception):
    """The archive is past a limit, or cannot be read; the message says which and why."""


class BoundedZip:
    """A zip archive whose members are read whole, each within :class:`ZipLimits`."""

    def __init__(self, path: Path, limits: ZipLimits | None = None) -> None:
        self.limits = limits or ZipLimits()
        self._read_total = 0
        self._handle = path.open("rb")
        try:
            self._zip = zipfile.ZipFile(self._handle)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
            self._handle.close()
            raise ZipLimitError(f"not a readable zip archive ({exc})") from None
        infos = self._zip.infolist()
        if len(infos) > self.limits.members:
            self.close()
            raise ZipLimitError(f"the archive has {len(infos)} members, more than the limit of {self.limits.members}")
        self._infos = {info.filename: info for info in infos}

    def __enter__(self) -> BoundedZip:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._zip.close()
        self._handle.close()

    def names(self) -> list[str]:
        return list(self._infos)

    def read(self, name: str) -> bytes:
        """The member's bytes, decompressed within the limits; CRC-checked."""
        info = self._infos[name]
        if info.flag_bits & 0x1:
            raise ZipLimitError(f"{name} is encrypted")
        cap = min(self.limits.member_bytes, self.limits.total_bytes - self._read_total)
        self._handle.seek(info.header_offset)
        header = self._handle.read(_LOCAL_HEADER.size)
        if len(header) != _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
            raise ZipLimitError(f"{name}: bad local header")
        fields = _LOCAL_HEADER.unpack(header)
        self._handle.seek(fields[10] + fields[11], io.SEEK_CUR)  # past the name and the extra field
        raw = self._handle.read(info.compress_size)
        if len(raw) != info.compress_size:
            raise ZipLimitError(f"{name}: the archive is truncated")
        data = _decompress(name, info.compress_type, raw, cap, self.limits)
        self._read_total += len(data)
        if zlib.crc32(data) != info.CRC:
            raise ZipLimitError(f"{name}: CRC mismatch, the archive is damaged")
        return data


def _too_big(name: str, cap: int, limits: ZipLimits) -> ZipLimitError:
    which = (
        f"one member may hold {limits.member_bytes} bytes"
        if cap >= limits.member_bytes
        else f"the archive may hold {limits.total_bytes} bytes in all"
    )
    return ZipLimitError(f"{name} decompresses past the limit ({which}): refused as a possible archive bomb")


def _decompress(name: str, method: int, raw: bytes, cap: int, limits: ZipLimits) -> bytes:
    if method == STORED:
        if len(raw) > cap:
            raise _too_big(name, cap, limits)
        return raw
    if method == DEFLATED:
        inflater = zlib.decompressobj(-15)
        try:
            out = inflater.decompress(raw, cap + 1)
        except zlib.error as exc:
            raise ZipLimitError(f"{name}: damaged deflate data ({exc})") from None
        if len(out) > cap:
            raise _too_big(name, cap, limits)
        return out
    if method == ZSTANDARD:
        parts: list[bytes] = []
        size = 0
        try:
            with zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True) as reader:
                while chunk := reader.read(min(_CHUNK, cap + 1 - size)):
                    parts.append(chunk)
                    size += len(chunk)
                    if size > cap:
                        raise _too_big(name, cap, limits)
        except zstandard.ZstdError as exc:
            raise ZipLimitError(f"{name}: damaged Zstandard data ({exc})") from None
        return b"".join(parts)
    raise ZipLimitError(f"{name}: compression method {method} is not supported (stored, deflate and zstd are)")
