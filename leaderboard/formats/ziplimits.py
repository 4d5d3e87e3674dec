"""Reading zip members with limits, Zstandard-compressed ones included.

Inspect's ``.eval`` logs are zips, and since inspect_ai 0.3.206 their members are compressed with
Zstandard (zip method 93), which Python's ``zipfile`` reads only from 3.14 on. ``zipfile`` still
parses the central directory; the members are decompressed here, by method, a chunk at a time with
the output capped as it is produced, so an archive bomb stops with an error instead of filling the
runner's memory. The sizes an archive declares are used only to refuse sooner: a member declaring
more than the limit is refused before a byte is inflated, and one inflating past what it declares
(a header that lies) as soon as it does.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, cast

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

    def read(self, name: str) -> bytearray:
        """The member's bytes, decompressed within the limits; CRC-checked.

        Refused before a byte is inflated when its header declares more than the limit, and as
        soon as it produces more than its header declares (a header that lies about a bomb): the
        memory used is at most the smaller of the two, plus one chunk. Compressed data is read a
        chunk at a time, so a member's compressed size does not count either.
        """
        info = self._infos[name]
        if info.flag_bits & 0x1:
            raise ZipLimitError(f"{name} is encrypted")
        cap = min(self.limits.member_bytes, self.limits.total_bytes - self._read_total)
        if info.file_size > cap:
            raise _too_big(name, cap, self.limits)
        self._handle.seek(info.header_offset)
        header = self._handle.read(_LOCAL_HEADER.size)
        if len(header) != _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
            raise ZipLimitError(f"{name}: bad local header")
        fields = _LOCAL_HEADER.unpack(header)
        self._handle.seek(fields[10] + fields[11], io.SEEK_CUR)  # past the name and the extra field
        source = _Window(self._handle, info.compress_size, name)
        data = _decompress(name, info.compress_type, source, info.file_size)
        if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
            raise ZipLimitError(f"{name}: CRC mismatch, the archive is damaged")
        self._read_total += len(data)
        return data


class _Window:
    """The member's compressed bytes, read from the archive a chunk at a time (a file-like ``read``)."""

    def __init__(self, handle: BinaryIO, size: int, name: str) -> None:
        self._handle, self._left, self._name = handle, size, name

    def read(self, size: int = -1) -> bytes:
        want = self._left if size < 0 else min(size, self._left)
        chunk = self._handle.read(want) if want else b""
        if len(chunk) != want:
            raise ZipLimitError(f"{self._name}: the archive is truncated")
        self._left -= len(chunk)
        return chunk


def _too_big(name: str, cap: int, limits: ZipLimits) -> ZipLimitError:
    which = (
        f"one member may hold {limits.member_bytes} bytes"
        if cap >= limits.member_bytes
        else f"the archive may hold {limits.total_bytes} bytes in all"
    )
    return ZipLimitError(f"{name} decompresses past the limit ({which}): refused as a possible archive bomb")


def _lying(name: str, declared: int) -> ZipLimitError:
    return ZipLimitError(
        f"{name} decompresses past the {declared} bytes its header declares: refused as a possible archive bomb"
    )


def _decompress(name: str, method: int, source: _Window, declared: int) -> bytearray:
    """At most ``declared`` bytes (the caller has checked it against the limits) and one more to tell."""
    out = bytearray()
    if method == STORED:
        while chunk := source.read(_CHUNK):
            out += chunk
            if len(out) > declared:
                raise _lying(name, declared)
        return out
    if method == DEFLATED:
        inflater = zlib.decompressobj(-15)
        try:
            while not inflater.eof:
                feed = inflater.unconsumed_tail or source.read(_CHUNK)
                # max_length bounds what one call may produce (a 1 MiB chunk of a bomb inflates to 1 GiB),
                # and a chunk at a time keeps a whole second copy from ever being made.
                piece = inflater.decompress(feed, min(_CHUNK, declared + 1 - len(out)))
                out += piece
                if len(out) > declared:
                    raise _lying(name, declared)
                if not (piece or feed):  # the data ended before the deflate stream did
                    break
        except zlib.error as exc:
            raise ZipLimitError(f"{name}: damaged deflate data ({exc})") from None
        return out
    if method == ZSTANDARD:
        try:
            stream = cast(BinaryIO, source)  # it has the one method stream_reader calls: read(size)
            with zstandard.ZstdDecompressor().stream_reader(stream, read_across_frames=True) as reader:
                while chunk := reader.read(min(_CHUNK, declared + 1 - len(out))):
                    out += chunk
                    if len(out) > declared:
                        raise _lying(name, declared)
        except zstandard.ZstdError as exc:
            raise ZipLimitError(f"{name}: damaged Zstandard data ({exc})") from None
        return out
    raise ZipLimitError(f"{name}: compression method {method} is not supported (stored, deflate and zstd are)")
