from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from leaderboard import EvalRun
from leaderboard.records import PairwiseDiff
from leaderboard.report.reasons import reason_text
from leaderboard.stats.comparison import ModelChange

ROOT = Path(__file__).resolve().parent.parent
REALDATA = ROOT.parent / "shared" / "realdata"
FORMATS = ROOT.parent / "shared" / "formats"
EXAMPLE = ROOT / "examples" / "mteb-eng-v2-sample.jsonl"


def run(model: str, task: str, score: float, category: str = "general", weight: float = 1.0) -> EvalRun:
    return EvalRun(model, task, "acc", score, category, weight)


def words(decided: PairwiseDiff | ModelChange) -> str | None:
    """A pair's or a model change's reason in the documents' words (None when it was decided)."""
    return reason_text(decided.reason) if decided.reason is not None else None


def demo_suite(seed: int = 0, models: int = 3, tasks: int = 12) -> list[EvalRun]:
    """The specification's demo: a few models with distinct skill on a dozen tasks."""
    rng = np.random.default_rng(seed)
    skill = np.linspace(0.8, 0.2, models)
    out = []
    for m in range(models):
        for t in range(tasks):
            score = float(np.clip(skill[m] + 0.1 * rng.standard_normal(), 0, 1))
            out.append(run(f"model-{m}", f"task-{t:02d}", score, ["math", "code", "safety"][t % 3]))
    return out


def realdata(name: str) -> Path:
    path = REALDATA / name
    if not path.exists():
        pytest.skip(f"{path} is not here (../shared beside the repo)")
    return path


def shared_format(name: str) -> Path:
    """A real harness output file from ../shared/formats."""
    path = FORMATS / name
    if not path.exists():
        pytest.skip(f"{path} is not here (../shared beside the repo)")
    return path


@pytest.fixture
def fake_github():
    from fakegithub import FakeGitHub

    fake = FakeGitHub().start()
    yield fake
    fake.stop()


SWEBENCH = REALDATA / "swebench_verified.jsonl"
