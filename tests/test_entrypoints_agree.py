"""The CLI and the action, given the same data and options, write the same comment body, byte for byte.

Both are run as users run them: ``python -m leaderboard ... --comment`` in the workspace, and
``entrypoint.py`` with the runner's environment against the fake GitHub API. The action is run
without a workflow run id, so that neither body carries a run link (the CLI has no run to link).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLE, ROOT
from test_action import run_action

AGENT = ROOT / "examples" / "agent-suite"
CASES: dict[str, tuple[list[str], dict[str, str]]] = {
    # name: (the CLI's arguments after the runs, the action's inputs)
    "example": ([], {}),
    "baseline": (["--baseline", "base/base.jsonl"], {"baseline": "base/base.jsonl"}),
    "required": (
        ["--required-tasks", "ArguAna,STS1*", "--required-score", "0.6"],
        {"required_tasks": "ArguAna,STS1*", "required_score": "0.6"},
    ),
    "cluster-by": (["--cluster-by", "category", "--seed", "3"], {"cluster_by": "category", "seed": "3"}),
}


def raised(path: Path) -> Path:
    """The example with its leader's scores 0.05 higher: against it, the leader has regressed."""
    records = [json.loads(line) for line in EXAMPLE.read_text().splitlines() if line.strip()]
    leader = max({r["model_id"] for r in records}, key=lambda m: sum(r["score"] for r in records if r["model_id"] == m))
    for r in records:
        if r["model_id"] == leader:
            r["score"] = min(1.0, r["score"] + 0.05)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "workspace"
    (ws / "results").mkdir(parents=True)
    shutil.copy(EXAMPLE, ws / "results" / "mteb.jsonl")
    raised(ws / "base" / "base.jsonl")
    return ws


def cli_comment(ws: Path, arguments: list[str]) -> str:
    out = ws.parent / "cli-comment.md"
    done = subprocess.run(
        [sys.executable, "-m", "leaderboard", "results/mteb.jsonl", *arguments, "--comment", str(out)],
        cwd=ws, capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode in (0, 1) and out.exists(), done.stderr
    return out.read_text(encoding="utf-8")


@pytest.mark.parametrize("case", list(CASES))
def test_the_cli_and_the_action_write_the_same_comment(case: str, workspace: Path, fake_github) -> None:
    arguments, inputs = CASES[case]
    cli = cli_comment(workspace, arguments)
    result = run_action(workspace, fake_github.url, runs="results/mteb.jsonl", GITHUB_RUN_ID="", **inputs)
    assert result.code in (0, 1), result.stdout + result.stderr
    (posted,) = fake_github.thread()
    assert posted["body"] == cli


def test_the_composite_configuration_gives_the_same_comment(workspace: Path, fake_github) -> None:
    shutil.copy(AGENT / "runs.jsonl", workspace / "results" / "mteb.jsonl")
    shutil.copy(AGENT / "leaderboard.yml", workspace / "leaderboard.yml")
    cli = cli_comment(workspace, ["--config", "leaderboard.yml"])
    result = run_action(workspace, fake_github.url, runs="results/mteb.jsonl", config="leaderboard.yml",
                        GITHUB_RUN_ID="")  # fmt: skip
    assert result.code == 0, result.stdout + result.stderr
    (posted,) = fake_github.thread()
    assert posted["body"] == cli
