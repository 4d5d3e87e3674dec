"""The comparison's large task sets resampled in the leaderboard's Poisson pass: the weights drawn once, the
documents the same bytes as when each draws its own."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from leaderboard import cli, pipeline
from leaderboard.stats import bootstrap, cache
from leaderboard.stats.resampling import EXACT_LIMIT

TASKS = EXACT_LIMIT + 300


def suite(path: Path, noise_seed: int, weighted: bool, missing: int = 0) -> Path:
    """Three models on more than EXACT_LIMIT tasks, the last missing every seventh task (every model the first
    ``missing`` tasks), with task weights when ``weighted``."""
    rng = np.random.default_rng(noise_seed)
    weight = np.random.default_rng(1).uniform(0.5, 3.0, TASKS)
    with path.open("w") as out:
        for m in range(3):
            for t in range(TASKS):
                if (m == 2 and t % 7 == 0) or t < missing:
                    continue
                record = {
                    "model_id": f"model-{m}", "task_id": f"task-{t:05d}", "metric_name": "acc",
                    "score": float(np.clip(0.4 + 0.1 * m + rng.normal(0, 0.2), 0, 1)), "category": f"cat-{t % 3}",
                }  # fmt: skip
                if weighted:
                    record["weight"] = float(weight[t])
                out.write(json.dumps(record) + "\n")
    return path


def documents(tmp: Path, weighted: bool, missing: int = 0) -> dict[str, bytes]:
    """The comment and the JSON report of the CLI on a suite and a baseline missing the first ``missing`` tasks."""
    runs, base = suite(tmp / "runs.jsonl", 1, weighted), suite(tmp / "base.jsonl", 2, weighted, missing)
    comment, report = tmp / "comment.md", tmp / "report.json"  # the same paths: the documents name them
    args = [str(runs), "--baseline", str(base), "--b", "400", "--comment", str(comment), "--json", str(report)]
    if weighted:
        args += ["--task-weights", "apply"]
    cache.forget()  # each run resamples afresh
    assert cli.main(args) in (0, 1)
    return {"comment": comment.read_bytes(), "report": report.read_bytes()}


@pytest.mark.parametrize("missing", [0, 5])
@pytest.mark.parametrize("weighted", [False, True])
def test_the_fused_pass_writes_the_very_documents_of_separate_draws(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, weighted: bool, missing: int
) -> None:
    fused = documents(tmp_path, weighted, missing)
    monkeypatch.setattr(pipeline, "_riders", lambda *_: ())
    separate = documents(tmp_path, weighted, missing)
    assert fused["report"] == separate["report"]
    assert fused["comment"] == separate["comment"]


@pytest.mark.parametrize(("missing", "saved"), [(0, 400), (5, 0)])
@pytest.mark.parametrize("weighted", [False, True])
def test_the_comparison_draws_no_poisson_weights_of_its_own_over_the_leaderboards_tasks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, weighted: bool, missing: int, saved: int
) -> None:
    drawn: list[int] = []
    original = bootstrap.poisson_weights

    def counted(keys: np.ndarray, first: int, count: int) -> np.ndarray:
        drawn.append(count)
        return original(keys, first, count)

    monkeypatch.setattr(bootstrap, "poisson_weights", counted)
    documents(tmp_path, weighted, missing)
    fused = sum(drawn)
    drawn.clear()
    monkeypatch.setattr(pipeline, "_riders", lambda *_: ())
    documents(tmp_path, weighted, missing)
    # The comparison draws B resamples per task set of its own (models 0 and 1 share every task, model 2 lacks
    # some); the set that is the leaderboard's tasks rides in the leaderboard's pass, unless the baseline lacks
    # tasks and no shared set is the leaderboard's.
    assert sum(drawn) - fused == saved
