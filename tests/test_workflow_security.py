"""Every workflow here and every example a user copies: no output pasted into a script, every
third-party action pinned by commit SHA, and Dependabot keeping those pins current."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from conftest import ROOT

WORKFLOWS = sorted([*(ROOT / ".github" / "workflows").glob("*.yml"), *(ROOT / "docs" / "workflows").glob("*.yml")])
README = ROOT / "README.md"
USES = re.compile(r"^\s*(?:- )?uses:\s*(?P<ref>[^\s#]+)(?:\s+#\s*(?P<comment>.*))?$")
SHA = re.compile(r"[0-9a-f]{40}")
PLACEHOLDER = "org/leaderboard-action@v1"  # the user docs' stand-in for this action's own name


def readme_blocks() -> list[tuple[str, str]]:
    """The YAML examples of the README and the docs pages: (a name for the test id, the block's text)."""
    out = []
    for page in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        blocks = re.findall(r"```ya?ml\n(.*?)```", page.read_text(), flags=re.S)
        name = page.relative_to(ROOT).as_posix()
        out.extend((f"{name}#{i}", block) for i, block in enumerate(blocks))
    return out


SOURCES = [(p.relative_to(ROOT).as_posix(), p.read_text()) for p in WORKFLOWS] + readme_blocks()
IDS = [name for name, _ in SOURCES]


def scripts(node: Any) -> Iterator[str]:
    """Every ``run:`` value anywhere in a parsed workflow (steps of every job, composite actions)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "run" and isinstance(value, str):
                yield value
            else:
                yield from scripts(value)
    elif isinstance(node, list):
        for item in node:
            yield from scripts(item)


def test_there_are_workflows_and_readme_examples_to_check() -> None:
    assert len(WORKFLOWS) >= 6 and sum(name.startswith(("README", "docs/")) for name in IDS) >= 3


@pytest.mark.parametrize(("name", "text"), SOURCES, ids=IDS)
def test_no_step_output_is_pasted_into_a_script(name: str, text: str) -> None:
    """``${{ steps.x.outputs.y }}`` in ``run:`` is substituted before the shell reads the script: an output
    made from data (a model id) would run as code. Outputs go through ``env:``."""
    pasted = [
        script for script in scripts(yaml.safe_load(text)) if re.search(r"\$\{\{[^}]*\boutputs\b[^}]*\}\}", script)
    ]
    assert pasted == [], name


def test_a_script_with_a_pasted_output_is_found() -> None:
    workflow = 'jobs:\n  j:\n    steps:\n      - run: echo "${{ steps.board.outputs.top-model }}"\n'
    assert list(scripts(yaml.safe_load(workflow))) == ['echo "${{ steps.board.outputs.top-model }}"']


@pytest.mark.parametrize(("name", "text"), SOURCES, ids=IDS)
def test_every_third_party_action_is_pinned_by_commit_sha_with_its_version_said(name: str, text: str) -> None:
    for line in text.splitlines():
        match = USES.match(line)
        if match is None:
            continue
        ref, comment = match["ref"], match["comment"] or ""
        if ref.startswith("./"):
            continue  # this checkout's own action
        if ref == PLACEHOLDER:
            assert "placeholder" in comment, f"{name}: {line.strip()} must say it is a placeholder"
            continue
        version = ref.partition("@")[2]
        assert SHA.fullmatch(version), f"{name}: {line.strip()} is not pinned by a full commit SHA"
        assert re.fullmatch(r"v\d+(\.\d+)*", comment), f"{name}: {line.strip()} does not say its version"


def test_dependabot_keeps_the_pinned_actions_current() -> None:
    config = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text())
    ecosystems = {u["package-ecosystem"]: u for u in config["updates"]}
    assert config["version"] == 2 and ecosystems["github-actions"]["directory"] == "/"
    assert "pip" in ecosystems  # the image's requirements.txt, pinned with hashes
