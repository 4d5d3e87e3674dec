"""Inspect logs that are archive bombs: refused before their memory is spent (issue 17)."""

from __future__ import annotations

import json
import tracemalloc
import zlib
from pathlib import Path

import pytest
import zstandard
from generators import raw_zip

from leaderboard.formats.ziplimits import BoundedZip, ZipLimitError, ZipLimits

MiB = 2**20


def deflated(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    return packer.compress(data) + packer.flush()


def packed(method: int, data: bytes) -> bytes:
    return deflated(data) if method == 8 else zstandard.ZstdCompressor().compress(data)


def bomb(tmp_path: Path, method: int, real: int, declared: int) -> Path:
    zeros = bytes(real)
    path = tmp_path / "bomb.eval"
    path.write_bytes(raw_zip([("samples/1_epoch_1.json", method, packed(method, zeros), declared, zlib.crc32(zeros))]))
    return path


def read_peak(path: Path, limits: ZipLimits | None = None) -> tuple[str, float]:
    tracemalloc.start()
    try:
        with BoundedZip(path, limits) as archive, pytest.raises(ZipLimitError) as refused:
            archive.read("samples/1_epoch_1.json")
        return str(refused.value), tracemalloc.get_traced_memory()[1] / MiB
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("method", [8, 93], ids=["deflate", "zstd"])
def test_a_member_declaring_more_than_the_limit_is_refused_before_a_byte_is_inflated(
    tmp_path: Path, method: int
) -> None:
    path = tmp_path / "bomb.eval"  # its data is not even compressed data: it is never looked at
    path.write_bytes(raw_zip([("samples/1_epoch_1.json", method, b"\xff" * 100, 2**31, 0)]))
    message, peak = read_peak(path)
    assert message == (
        "samples/1_epoch_1.json decompresses past the limit (one member may hold 536870912 bytes): "
        "refused as a possible archive bomb"
    )
    assert peak < 1


@pytest.mark.parametrize("method", [8, 93], ids=["deflate", "zstd"])
def test_a_member_inflating_past_what_its_header_declares_is_stopped_at_the_declared_size(
    tmp_path: Path, method: int
) -> None:
    message, peak = read_peak(bomb(tmp_path, method, real=64 * MiB, declared=1000))
    assert message == (
        "samples/1_epoch_1.json decompresses past the 1000 bytes its header declares: "
        "refused as a possible archive bomb"
    )
    assert peak < 4  # one chunk, not the 64 MiB it would inflate to


@pytest.mark.parametrize("method", [8, 93], ids=["deflate", "zstd"])
def test_a_member_declaring_just_under_the_limit_never_holds_more_than_the_limit(tmp_path: Path, method: int) -> None:
    limits = ZipLimits(member_bytes=8 * MiB)
    message, peak = read_peak(bomb(tmp_path, method, real=64 * MiB, declared=8 * MiB), limits)
    assert "past the 8388608 bytes its header declares" in message
    assert peak < 8 + 4  # the declared 8 MiB and a chunk: no second copy


@pytest.mark.parametrize("size", [0, 1, MiB - 1, MiB, MiB + 1, 3 * MiB + 17])
@pytest.mark.parametrize("method", [0, 8, 93], ids=["stored", "deflate", "zstd"])
def test_honest_members_read_back_exactly_whatever_their_size(tmp_path: Path, method: int, size: int) -> None:
    data = json.dumps(["x" * 7] * (size // 8 + 1)).encode()[:size]
    path = tmp_path / "ok.eval"
    stored = data if method == 0 else packed(method, data)
    path.write_bytes(raw_zip([("a.json", method, stored, len(data), zlib.crc32(data))]))
    with BoundedZip(path) as archive:
        assert bytes(archive.read("a.json")) == data


def test_a_member_shorter_than_it_declares_is_damaged(tmp_path: Path) -> None:
    data = b"x" * 5000
    path = tmp_path / "short.eval"
    path.write_bytes(raw_zip([("a.json", 8, deflated(data), 6000, zlib.crc32(data))]))
    with BoundedZip(path) as archive, pytest.raises(ZipLimitError, match="CRC mismatch"):
        archive.read("a.json")
