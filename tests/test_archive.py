"""Unpacking an archive someone else made: refused as a whole at the first doubt, within limits."""

from __future__ import annotations

import io
import stat
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leaderboard.archive import ArchiveLimits, UnsafeArchive, extract_named, safe_extract


def make_zip(
    files: dict[str, bytes | str] | None = None, *, links: dict[str, str] | None = None, dirs: tuple[str, ...] = ()
) -> bytes:
    """A zip with ``files`` (name -> content), Unix symbolic ``links`` (name -> target) and ``dirs``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in dirs:
            info = zipfile.ZipInfo(name.rstrip("/") + "/")
            info.create_system = 3
            info.external_attr = (stat.S_IFDIR | 0o755) << 16 | 0x10
            archive.writestr(info, b"")
        for name, content in (files or {}).items():
            archive.writestr(name, content)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.create_system = 3
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return buffer.getvalue()


def everything_under(path: Path) -> list[str]:
    return sorted(p.relative_to(path).as_posix() for p in path.rglob("*"))


def test_a_plain_archive_is_unpacked_in_its_folders(tmp_path: Path) -> None:
    data = make_zip({"a.jsonl": "{}\n", "sub/dir/b.csv": "x\n"}, dirs=("sub",))
    written = safe_extract(data, tmp_path / "out")
    assert [p.relative_to(tmp_path / "out").as_posix() for p in written] == ["a.jsonl", "sub/dir/b.csv"]
    assert (tmp_path / "out" / "sub" / "dir" / "b.csv").read_text() == "x\n"


def test_a_path_to_the_zip_serves_as_well_as_its_bytes(tmp_path: Path) -> None:
    (tmp_path / "a.zip").write_bytes(make_zip({"a.json": "[]"}))
    assert [p.name for p in safe_extract(tmp_path / "a.zip", tmp_path / "out")] == ["a.json"]


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("../escape.jsonl", "'..' in the path"),
        ("results/../../escape.jsonl", "'..' in the path"),
        ("results\\..\\..\\escape.jsonl", "'..' in the path"),
        ("/etc/escape.jsonl", "absolute path"),
        ("\\\\server\\share\\escape.jsonl", "absolute path"),
        ("C:/escape.jsonl", "absolute path"),
    ],
)
def test_a_member_that_climbs_out_refuses_the_whole_archive_before_anything_is_written(
    tmp_path: Path, name: str, why: str
) -> None:
    data = make_zip({"fine.jsonl": "{}\n", name: "{}\n"})
    with pytest.raises(UnsafeArchive, match=why):
        safe_extract(data, tmp_path / "out")
    assert everything_under(tmp_path) == []  # not even the fine member


@pytest.mark.parametrize("target", ["/etc/passwd", "../../outside", "fine.jsonl"])
def test_a_symbolic_link_refuses_the_archive(tmp_path: Path, target: str) -> None:
    with pytest.raises(UnsafeArchive, match="symbolic link"):
        safe_extract(make_zip({"fine.jsonl": "{}\n"}, links={"link.jsonl": target}), tmp_path / "out")
    assert everything_under(tmp_path) == []


def test_too_many_files_or_too_many_bytes_refuse_the_archive(tmp_path: Path) -> None:
    many = make_zip({f"f{i}.jsonl": "{}\n" for i in range(11)})
    with pytest.raises(UnsafeArchive, match="more than 10 files"):
        safe_extract(many, tmp_path / "a", ArchiveLimits(max_files=10))
    big = make_zip({"a.jsonl": "x" * 600, "b.jsonl": "y" * 600})
    with pytest.raises(UnsafeArchive, match="more than 1000 bytes"):
        safe_extract(big, tmp_path / "b", ArchiveLimits(max_total_bytes=1000))
    assert everything_under(tmp_path) == []


def test_a_zip_bomb_is_refused_from_its_headers_without_inflating_it(tmp_path: Path) -> None:
    bomb = make_zip({"zeros.jsonl": b"\0" * (64 * 1024 * 1024)})
    assert len(bomb) < 200_000
    with pytest.raises(UnsafeArchive, match="bytes unpacked"):
        safe_extract(bomb, tmp_path / "out", ArchiveLimits(max_total_bytes=1024 * 1024))


def test_a_member_larger_than_its_header_says_is_stopped_while_writing(tmp_path: Path) -> None:
    data = bytearray(make_zip({"a.jsonl": "x" * 5000}))
    # Forge the sizes in the central directory (not the local header): the check sees 10 bytes.
    central = data.rfind(b"PK\x01\x02")
    data[central + 24 : central + 28] = (10).to_bytes(4, "little")
    with pytest.raises(UnsafeArchive):
        safe_extract(bytes(data), tmp_path / "out", ArchiveLimits(max_total_bytes=1000))
    assert not any(p.stat().st_size > 1000 for p in (tmp_path / "out").rglob("*") if p.is_file())


def test_two_members_with_one_name_refuse_the_archive(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a.jsonl", "first")
        archive.writestr("A.jsonl", "second")
    with pytest.raises(UnsafeArchive, match="same name twice"):
        safe_extract(buffer.getvalue(), tmp_path / "out")


def test_something_that_is_not_a_zip_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UnsafeArchive, match="not a readable zip"):
        safe_extract(b"<html>Sign in</html>", tmp_path / "out")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.lists(st.sampled_from(["a", "b.jsonl", "..", ".", "", "C:", "~", "\\", "/", "..\\x", " ", "a/../.."]),
                 min_size=1, max_size=5).map("/".join),
        min_size=1, max_size=4, unique=True,
    )
)  # fmt: skip
def test_whatever_the_names_nothing_is_written_outside_the_destination(tmp_path: Path, names: list[str]) -> None:
    out = tmp_path / f"case-{abs(hash(tuple(names)))}" / "out"
    try:
        data = make_zip(dict.fromkeys(names, "x"))
    except (ValueError, IndexError):  # zipfile itself refuses the name
        return
    try:
        written = safe_extract(data, out)
    except UnsafeArchive:
        written = []
    for path in out.parent.rglob("*"):
        assert path == out or path.resolve().is_relative_to(out.resolve()), path
    assert all(p.resolve().is_relative_to(out.resolve()) for p in written)


def test_members_whose_names_the_file_system_cannot_hold_are_written_under_short_names(tmp_path: Path) -> None:
    long_name = "results/" + "m" * 300 + ".jsonl"  # one component past 255 bytes
    deep = "/".join(["d" * 200] * 25) + "/x.csv"  # a 5 KB path, past PATH_MAX
    written = extract_named(make_zip({long_name: "a\n", deep: "b\n", "ok.json": "c\n"}), tmp_path)
    assert sorted(written.values()) == sorted([long_name, deep, "ok.json"])
    by_member = {member: path for path, member in written.items()}
    assert by_member["ok.json"] == tmp_path / "ok.json"
    assert by_member[long_name].suffix == ".jsonl" and by_member[deep].suffix == ".csv"  # still read by name
    assert by_member[long_name].read_text() == "a\n" and by_member[deep].read_text() == "b\n"
    assert all(len(p.name) <= 255 and p.is_relative_to(tmp_path) for p in written)
