"""Workflows that use this action give it only inputs it has, and every required one."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import ROOT

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
WORKFLOWS = sorted([*(ROOT / ".github" / "workflows").glob("*.yml"), *(ROOT / "docs" / "workflows").glob("*.yml")])


def our_steps(path: Path) -> list[dict]:
    workflow = yaml.safe_load(path.read_text())
    return [
        step
        for job in workflow["jobs"].values()
        for step in job.get("steps", [])
        if step.get("uses") in ("./", "./.github/actions/leaderboard-dev")
        or str(step.get("uses", "")).startswith("org/leaderboard-action@")
    ]


def test_there_are_workflows_that_use_the_action() -> None:
    assert sum(len(our_steps(p)) for p in WORKFLOWS) >= 3


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_every_with_key_is_an_input_and_every_required_input_is_given(path: Path) -> None:
    required = {name for name, spec in ACTION["inputs"].items() if spec.get("required")}
    for step in our_steps(path):
        given = set(step.get("with", {}))
        assert given <= set(ACTION["inputs"]), given - set(ACTION["inputs"])
        assert required <= given, required - given


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_with_values_are_strings_as_the_runner_passes_them(path: Path) -> None:
    for step in our_steps(path):
        assert all(isinstance(v, str) for v in step.get("with", {}).values())
