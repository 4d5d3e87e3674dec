"""Releases: one version everywhere, the image tags a release may push, and the release workflow's shape."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

import leaderboard

sys.path.insert(0, str(ROOT / "scripts"))

import check_dist
import release_tags
from release_tags import ReleaseError, Version, image_tags, major_tag

VERSION = leaderboard.__version__
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
CHANGELOG = (ROOT / "CHANGELOG.md").read_text()
RELEASE = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())


# --- one version everywhere


def test_action_yml_runs_the_published_image_of_the_packages_version() -> None:
    assert ACTION["runs"] == {"using": "docker", "image": f"docker://ghcr.io/org/leaderboard-action:{VERSION}"}


def test_the_image_owner_is_the_readmes_action_owner() -> None:
    readme_owners = set(re.findall(r"uses: ([\w.-]+)/leaderboard-action@v1\b", (ROOT / "README.md").read_text()))
    assert readme_owners == {ACTION["runs"]["image"].removeprefix("docker://ghcr.io/").split("/")[0]}


def test_the_changelogs_latest_version_is_the_packages_and_is_dated() -> None:
    sections = release_tags.changelog_versions(CHANGELOG)
    assert sections[0][0] == VERSION
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", sections[0][1] or "")
    assert CHANGELOG.index("## [Unreleased]") < CHANGELOG.index(f"## [{VERSION}]")


def test_the_cli_prints_the_version() -> None:
    done = subprocess.run([sys.executable, "-m", "leaderboard", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == f"leaderboard {VERSION}\n"


def test_pyproject_takes_the_version_from_the_package() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject and 'version = { attr = "leaderboard.__version__" }' in pyproject
    assert release_tags.package_version() == VERSION


def test_the_release_check_passes_for_this_version_and_owner() -> None:
    assert release_tags.check(f"v{VERSION}", owner="org") == []
    assert release_tags.check(f"v{VERSION}", owner="Org") == []  # image names are lower case


def copy_of_release_files(tmp_path: Path) -> Path:
    for name in ("action.yml", "CHANGELOG.md", "leaderboard/__init__.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def test_the_release_check_names_every_disagreement(tmp_path: Path) -> None:
    root = copy_of_release_files(tmp_path)
    problems = release_tags.check("v9.9.9", owner="someone", root=root)
    assert len(problems) == 3
    assert "leaderboard/__init__.py is at" in problems[0]
    assert "must run docker://ghcr.io/someone/leaderboard-action:9.9.9" in problems[1]
    assert "latest section is" in problems[2]


def test_the_release_check_refuses_an_undated_changelog_section(tmp_path: Path) -> None:
    root = copy_of_release_files(tmp_path)
    text = CHANGELOG.replace(f"## [{VERSION}] - ", f"## [{VERSION}] - TBD ", 1)
    (root / "CHANGELOG.md").write_text(text)
    assert release_tags.check(f"v{VERSION}", owner=None, root=root) == [
        f"CHANGELOG.md's section {VERSION} has no release date (## [{VERSION}] - YYYY-MM-DD)"
    ]


@pytest.mark.parametrize("tag", ["1.0.0", "v1.0", "v01.0.0", "v1.0.0-rc1", "v1.0.0 "])
def test_only_vX_Y_Z_tags_are_releases(tag: str) -> None:
    with pytest.raises(ReleaseError):
        Version.from_tag(tag)


def test_the_release_notes_are_the_versions_section_alone() -> None:
    notes = release_tags.changelog_notes(CHANGELOG, VERSION)
    assert notes.startswith("The first release") and not re.search(r"^## ", notes, re.M)
    assert "[Unreleased]:" not in notes and "0.1.0" not in notes


def test_the_notes_of_an_older_version_stop_before_the_link_references() -> None:
    notes = release_tags.changelog_notes(CHANGELOG, "0.1.0")
    assert notes.rstrip().endswith("never printed.") and "https://" not in notes


# --- image tags: X.Y.Z never overwritten, X.Y and X only forward


def test_a_first_release_pushes_version_minor_and_major() -> None:
    assert image_tags(Version(1, 0, 0), []) == ["1.0.0", "1.0", "1"]


def test_a_new_patch_moves_its_minor_and_major() -> None:
    existing = ["1.0.0", "1.0", "1", "1.1.0", "1.1", "sha-0123abc", "latest"]
    assert image_tags(Version(1, 1, 1), existing) == ["1.1.1", "1.1", "1"]


def test_a_patch_to_an_older_line_moves_only_its_minor() -> None:
    assert image_tags(Version(1, 0, 1), ["1.0.0", "1.1.0", "1.0", "1.1", "1"]) == ["1.0.1", "1.0"]


def test_a_patch_to_an_older_major_leaves_the_newer_majors_alone() -> None:
    assert image_tags(Version(1, 2, 4), ["1.2.3", "2.0.0", "1", "2"]) == ["1.2.4", "1.2", "1"]


def test_an_existing_version_is_never_overwritten() -> None:
    with pytest.raises(ReleaseError, match="already published"):
        image_tags(Version(1, 0, 0), ["1.0.0", "1.0", "1"])


def test_the_cli_refuses_an_existing_version_with_an_annotation(tmp_path: Path) -> None:
    existing = tmp_path / "tags"
    existing.write_text("1.0.0\n1.0\n1\n")
    script = ROOT / "scripts" / "release_tags.py"
    run = [sys.executable, str(script), "image-tags", "--version", "1.0.0", "--existing", str(existing)]
    done = subprocess.run(run, capture_output=True, text=True)
    assert done.returncode == 1 and done.stdout.startswith("::error title=Release refused::the image 1.0.0 is")
    run[4] = "1.0.1"
    assert subprocess.run(run, capture_output=True, text=True).stdout.split() == ["1.0.1", "1.0", "1"]


def test_the_major_git_tag_moves_to_the_newest_release_of_its_major() -> None:
    assert major_tag(Version(1, 2, 0), ["v1", "v1.0.0", "v1.1.0", "v1.2.0"]) == "v1"
    assert major_tag(Version(1, 0, 5), ["v1", "v1.0.4", "v1.1.0", "v1.0.5"]) is None
    assert major_tag(Version(1, 3, 0), ["v2.0.0", "v1.2.0"]) == "v1"


# --- the action built from source, for this repository's workflows


def test_the_dev_action_is_action_yml_with_the_dockerfile() -> None:
    dev_path = ROOT / release_tags.DEV_ACTION
    assert dev_path.read_text() == release_tags.dev_action((ROOT / "action.yml").read_text()), (
        "run: python scripts/release_tags.py dev-action"
    )
    dev = yaml.safe_load(dev_path.read_text())
    assert dev["inputs"] == ACTION["inputs"] and dev["outputs"] == ACTION["outputs"]
    assert dev["runs"] == {"using": "docker", "image": "../../../Dockerfile"}
    assert (dev_path.parent / dev["runs"]["image"]).resolve() == ROOT / "Dockerfile"


def test_this_repositorys_workflows_run_the_dockerfile_not_the_published_image() -> None:
    for path in (ROOT / ".github" / "workflows").glob("*.yml"):
        for job in yaml.safe_load(path.read_text())["jobs"].values():
            assert all(step.get("uses") != "./" for step in job.get("steps", [])), path.name


# --- the release workflow


def test_the_release_runs_on_version_tags_only() -> None:
    assert RELEASE[True] == {"push": {"tags": ["v[0-9]+.[0-9]+.[0-9]+"]}}  # YAML reads `on` as True


def test_every_release_job_has_least_privilege() -> None:
    assert RELEASE["permissions"] == {}
    perms = {name: job["permissions"] for name, job in RELEASE["jobs"].items()}
    assert perms == {
        "check": {"contents": "read"},
        "dist": {"contents": "read"},
        "image": {"contents": "read", "packages": "write"},
        "pypi": {"id-token": "write"},
        "release": {"contents": "write"},
    }


def test_nothing_is_published_before_the_checks_and_vx_moves_last() -> None:
    jobs = RELEASE["jobs"]
    assert jobs["dist"]["needs"] == "check" and jobs["image"]["needs"] == "check"
    assert set(jobs["pypi"]["needs"]) == {"dist", "image"} and set(jobs["release"]["needs"]) == {"image", "pypi"}
    assert "bash .ci/run" in [s.get("run") for s in jobs["check"]["steps"]]


def test_the_image_is_pushed_for_both_platforms_with_the_computed_tags() -> None:
    pushes = [s for s in RELEASE["jobs"]["image"]["steps"] if s.get("with", {}).get("push")]
    assert len(pushes) == 1
    assert pushes[0]["with"]["platforms"] == "linux/amd64,linux/arm64"
    assert pushes[0]["with"]["tags"] == "${{ steps.tags.outputs.list }}"


def test_pypi_is_published_by_trusted_publishing() -> None:
    steps = RELEASE["jobs"]["pypi"]["steps"]
    (publish,) = [s for s in steps if str(s.get("uses", "")).startswith("pypa/gh-action-pypi-publish@")]
    assert steps[-1] == publish == {"uses": publish["uses"]}  # no password: the OIDC token


# --- the image's inputs are pinned


def test_the_base_image_is_pinned_by_digest() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^ARG BASE_IMAGE=python:3\.11-slim-bookworm@sha256:[0-9a-f]{64}$", dockerfile, re.M)
    assert re.search(r"^FROM \$\{BASE_IMAGE\}$", dockerfile, re.M)


def test_every_requirement_is_pinned_with_hashes_and_installed_by_them() -> None:
    blocks = re.findall(r"^([A-Za-z0-9][^ ]*) \\\n((?:    --hash=sha256:[0-9a-f]{64}(?: \\)?\n)+)",
                        (ROOT / "requirements.txt").read_text(), re.M)  # fmt: skip
    names = {b[0].split("==")[0].lower() for b in blocks}
    assert all("==" in b[0] for b in blocks) and {"numpy", "pygithub", "pyyaml", "zstandard"} <= names
    assert "--require-hashes" in (ROOT / "Dockerfile").read_text()


# --- the wheel check itself


def test_the_wheel_check_names_a_missing_subpackage_and_stray_files(tmp_path: Path) -> None:
    wheel = tmp_path / f"leaderboard_action-{VERSION}-py3-none-any.whl"
    dist_info = f"leaderboard_action-{VERSION}.dist-info/"
    with zipfile.ZipFile(wheel, "w") as z:
        for name in check_dist.source_files():
            if not name.startswith("leaderboard/stats/"):
                z.writestr(name, "")
        z.writestr("tests/test_cli.py", "")
        z.writestr(dist_info + "METADATA", f"Name: leaderboard-action\nVersion: {VERSION}\n\n")
        z.writestr(dist_info + "entry_points.txt", "")
    problems = check_dist.check_wheel(wheel, VERSION)
    assert any("lacks" in p and "leaderboard/stats/aggregation.py" in p for p in problems)
    assert any("outside leaderboard/" in p and "tests/test_cli.py" in p for p in problems)
    assert any("no `leaderboard` command" in p for p in problems)
