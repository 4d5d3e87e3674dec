"""What a release pushes, decided before anything is pushed (used by .github/workflows/release.yml).

    python scripts/release_tags.py check --tag v1.2.3 [--owner OWNER]
    python scripts/release_tags.py image-tags --version 1.2.3 --existing FILE
    python scripts/release_tags.py major-tag --version 1.2.3 --existing FILE
    python scripts/release_tags.py notes --version 1.2.3
    python scripts/release_tags.py dev-action

`check` refuses a tag that disagrees with the package's version, with action.yml's pinned image or with the
changelog's latest section. `image-tags` prints the image tags to push given the tags the registry already
has (one per line in FILE): `X.Y.Z` always (refused when it exists: a published version is never
overwritten), `X.Y` and `X` only when no newer version holds them, so a patch to an old line does not
move the newest line's tags. `major-tag` prints the git tag to move (`vX`) on the same rule, or nothing.
`notes` prints the changelog's section for the version. `dev-action` rewrites
.github/actions/leaderboard-dev/action.yml from action.yml (run it after changing action.yml). Only the
standard library: it runs before any install.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGE_NAME = "leaderboard-action"
_VERSION = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)")
# "## [1.2.3] - 2026-12-01" (Keep a Changelog); "## [Unreleased]" is not a version.
_SECTION = re.compile(r"^## \[?([^\]\s]+)\]?(?:\s+-\s+(\S+))?.*$", re.MULTILINE)


class ReleaseError(Exception):
    """A release that must not go ahead; the message says why."""


@dataclass(frozen=True, order=True)
class Version:
    major: int
    minor: int
    patch: int

    @classmethod
    def parse(cls, text: str) -> Version:
        match = _VERSION.fullmatch(text)
        if match is None:
            raise ReleaseError(f"{text!r} is not a version X.Y.Z (digits, no leading zeros)")
        return cls(*(int(part) for part in match.groups()))

    @classmethod
    def from_tag(cls, tag: str) -> Version:
        if not tag.startswith("v"):
            raise ReleaseError(f"{tag!r} is not a release tag vX.Y.Z")
        return cls.parse(tag[1:])

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"


def versions_in(tags: Iterable[str], prefix: str = "") -> set[Version]:
    """The full X.Y.Z versions among tags (moving tags such as `1`, `1.2`, `latest` are not versions)."""
    found = set()
    for tag in tags:
        tag = tag.strip()
        if tag.startswith(prefix) and _VERSION.fullmatch(tag[len(prefix) :]):
            found.add(Version.parse(tag[len(prefix) :]))
    return found


def image_tags(version: Version, existing: Iterable[str]) -> list[str]:
    """Tags to push for version, given the registry's tags; refuses to overwrite an existing X.Y.Z."""
    published = versions_in(existing)
    if version in published:
        raise ReleaseError(f"the image {version} is already published; a published version is never overwritten")
    tags = [str(version)]
    if all(v < version for v in published if (v.major, v.minor) == (version.major, version.minor)):
        tags.append(f"{version.major}.{version.minor}")
    if all(v < version for v in published if v.major == version.major):
        tags.append(f"{version.major}")
    return tags


def major_tag(version: Version, existing_git_tags: Iterable[str]) -> str | None:
    """`vX` when version is the newest X.*.* release among the git tags (its own tag aside), else None."""
    others = versions_in(existing_git_tags, prefix="v") - {version}
    if all(v < version for v in others if v.major == version.major):
        return f"v{version.major}"
    return None


def package_version(root: Path = ROOT) -> str:
    """`__version__` of leaderboard/__init__.py, read without importing the package (or numpy)."""
    tree = ast.parse((root / "leaderboard" / "__init__.py").read_text())
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    raise ReleaseError("leaderboard/__init__.py has no literal __version__")


def action_image(root: Path = ROOT) -> str:
    """`runs.image` of action.yml, read as text: the file is flat enough, and no YAML parser is installed yet."""
    match = re.search(
        r"^runs:\n(?:[ \t]+.*\n)*?[ \t]+image:[ \t]*['\"]?([^'\"\s]+)", (root / "action.yml").read_text(), re.M
    )
    if match is None:
        raise ReleaseError("action.yml has no runs.image")
    return match.group(1)


DEV_ACTION = Path(".github") / "actions" / "leaderboard-dev" / "action.yml"
_DEV_HEADER = """\
# Generated from /action.yml by `python scripts/release_tags.py dev-action`: do not edit by hand.
# The action built from this checkout's Dockerfile, which this repository's own workflows run so that a
# change is tested before it is released. Elsewhere: uses: org/leaderboard-action/.github/actions/leaderboard-dev@<ref>
"""
_DEV_RUNS = """\
runs:
  using: docker
  # Relative to this file. The runner builds it with the Dockerfile's directory, the repository root, as the
  # context (actions/runner: Path.Combine(actionDirectory, image), context Directory.GetParent(dockerfile)).
  image: ../../../Dockerfile
"""


def dev_action(action_text: str) -> str:
    """action.yml with the Dockerfile instead of the published image, and a name that says so."""
    head, sep, _ = action_text.partition("\nruns:\n")
    if not sep:
        raise ReleaseError("action.yml has no top-level runs:")
    head = re.sub(r"^name: (.*)$", r"name: \1 (built from source)", head, count=1, flags=re.M)
    return _DEV_HEADER + head + "\n" + _DEV_RUNS


def pinned_image(owner: str, version: str) -> str:
    return f"docker://ghcr.io/{owner.lower()}/{IMAGE_NAME}:{version}"


def changelog_versions(text: str) -> list[tuple[str, str | None]]:
    """(version, date) of every version section, newest first; [Unreleased] left out."""
    return [(m.group(1), m.group(2)) for m in _SECTION.finditer(text) if m.group(1).lower() != "unreleased"]


def changelog_notes(text: str, version: str) -> str:
    """The body of version's section, without its heading or the link references at the end."""
    headings = list(_SECTION.finditer(text))
    for i, heading in enumerate(headings):
        if heading.group(1) == version:
            end = headings[i + 1].start() if i + 1 < len(headings) else len(text)
            body = text[heading.end() : end]
            body = re.sub(r"^\[[^\]]+\]:\s+\S+\s*$", "", body, flags=re.M)
            return body.strip() + "\n"
    raise ReleaseError(f"CHANGELOG.md has no section for {version}")


def check(tag: str, owner: str | None, root: Path = ROOT) -> list[str]:
    """Every disagreement between the tag and the files it releases (empty: go ahead)."""
    version = str(Version.from_tag(tag))
    problems = []
    if (have := package_version(root)) != version:
        problems.append(f"leaderboard/__init__.py is at {have}, the tag at {version}")
    image = action_image(root)
    expected = pinned_image(owner, version) if owner else None
    if expected is not None and image != expected:
        problems.append(f"action.yml runs {image}; a release by {owner} must run {expected}")
    elif not image.endswith(f"/{IMAGE_NAME}:{version}"):
        problems.append(f"action.yml runs {image}, not the {IMAGE_NAME} image {version}")
    changelog = (root / "CHANGELOG.md").read_text()
    sections = changelog_versions(changelog)
    if not sections or sections[0][0] != version:
        problems.append(f"CHANGELOG.md's latest section is {sections[0][0] if sections else 'missing'}, not {version}")
    elif not (sections[0][1] and re.fullmatch(r"\d{4}-\d{2}-\d{2}", sections[0][1])):
        problems.append(f"CHANGELOG.md's section {version} has no release date (## [{version}] - YYYY-MM-DD)")
    elif not changelog_notes(changelog, version).strip():
        problems.append(f"CHANGELOG.md's section {version} is empty")
    return problems


def _read_lines(path: str) -> list[str]:
    text = sys.stdin.read() if path == "-" else Path(path).read_text()
    return [line.strip() for line in text.splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("check")
    p.add_argument("--tag", required=True)
    p.add_argument("--owner", help="the repository owner; action.yml must pin ghcr.io/<owner, lower-cased>")
    for name in ("image-tags", "major-tag"):
        p = sub.add_parser(name)
        p.add_argument("--version", required=True)
        p.add_argument("--existing", required=True, help="file of existing tags, one a line ('-': stdin)")
    p = sub.add_parser("notes")
    p.add_argument("--version", required=True)
    sub.add_parser("dev-action")
    args = parser.parse_args(argv)
    try:
        if args.command == "dev-action":
            (ROOT / DEV_ACTION).write_text(dev_action((ROOT / "action.yml").read_text()))
            return 0
        if args.command == "check":
            problems = check(args.tag, args.owner)
            for problem in problems:
                print(f"::error title=Release refused::{problem}")
            return 1 if problems else 0
        version = Version.parse(args.version)
        if args.command == "image-tags":
            print("\n".join(image_tags(version, _read_lines(args.existing))))
        elif args.command == "major-tag":
            print(major_tag(version, _read_lines(args.existing)) or "")
        else:
            print(changelog_notes((ROOT / "CHANGELOG.md").read_text(), str(version)), end="")
    except ReleaseError as error:
        print(f"::error title=Release refused::{error}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
