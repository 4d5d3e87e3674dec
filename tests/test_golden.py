"""Golden documents: the exact comment body and JSON report for the cases users meet most.

A change that moves any of these bytes must be deliberate: regenerate with
``UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py`` and review the diff in its commit.
The CLI makes each case; the action's bodies for the same data are compared with the CLI's in
``test_golden_action``-style tests below, so the two entry points cannot drift.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLE, ROOT, SWEBENCH
from generators import swebench_with_a_drop

GOLDEN = ROOT / "tests" / "golden" / "documents"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
AGENT = ROOT / "examples" / "agent-suite"


def cases(tmp: Path) -> dict[str, list[str]]:
    return {
        "example": [str(EXAMPLE)],
        "swebench": [str(SWEBENCH)],
        "baseline-gate": [
            str(swebench_with_a_drop(SWEBENCH, tmp / "head.jsonl")), "--baseline", str(SWEBENCH),
            "--fail-on-regression",
        ],
        "required": [str(EXAMPLE), "--required-tasks", "ArguAna,STS1*", "--required-score", "0.6"],
        "composite": [str(AGENT / "runs.jsonl"), "--config", str(AGENT / "leaderboard.yml")],
        "cluster-category": [str(EXAMPLE), "--cluster-by", "category"],
    }  # fmt: skip


def cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "leaderboard", *args], capture_output=True, text=True, cwd=cwd, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


def stable(text: str, tmp: Path) -> str:
    """The documents name the files they read: the temporary folder and the checkout are made fixed."""
    return text.replace(str(tmp), "$TMP").replace(str(ROOT), "$REPO").replace(str(ROOT.parent), "$WORK")


@pytest.mark.parametrize("case", ["example", "swebench", "baseline-gate", "required", "composite", "cluster-category"])
def test_the_cli_documents_are_the_golden_ones(case: str, tmp_path: Path) -> None:
    if not SWEBENCH.exists():
        pytest.skip("../shared is not beside the repository")
    comment, report = tmp_path / "comment.md", tmp_path / "report.json"
    done = cli([*cases(tmp_path)[case], "--comment", str(comment), "--json", str(report)], cwd=ROOT)
    assert done.returncode in (0, 1), done.stderr
    produced = {
        f"{case}.comment.md": stable(comment.read_text(), tmp_path),
        f"{case}.report.json": stable(report.read_text(), tmp_path),
        f"{case}.stdout.md": stable(done.stdout, tmp_path),
        f"{case}.exit": f"{done.returncode}\n",
    }
    for name, text in produced.items():
        path = GOLDEN / name
        if UPDATE:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        assert path.read_text() == text, f"{name} moved: review it, then UPDATE_GOLDEN=1"
