"""Earlier runs for the history's tests: four models on 40 tasks of 0/1 scores, three tasks that flip
from run to run with nothing changed, and the run of a pull request in which one model drops."""

from __future__ import annotations

import json

MODELS = ("org/alpha", "org/beta", "org/gamma", "org/delta")
TASKS = tuple(f"t{k:02d}" for k in range(40))
FLAKY = ("t03", "t17", "t29")  # alternate between pass and fail from run to run
DROPPED = ("t01", "t02", "t03", "t04", "t05")  # what org/alpha newly fails in the pull request


def score(k: int, model: int, task: int) -> float:
    """Run ``k``'s score: fixed per (model, task), except the flaky tasks, which alternate by run."""
    if TASKS[task] in FLAKY:
        return float((k + model) % 2 == 0)
    return 1.0 if (task + model) % 3 else 0.0


def records(k: int, *, renamed: bool = False, pull_request: bool = False) -> str:
    """Run ``k`` as EvalRun JSON lines; ``renamed``: org/beta under another id; ``pull_request``: the PR's run."""
    lines = []
    for m, model in enumerate(MODELS):
        model_id = "org/beta-v2" if renamed and model == "org/beta" else model
        for t, task in enumerate(TASKS):
            value = score(k, m, t)
            if pull_request and model == "org/alpha" and task in DROPPED:
                value = 0.0
            record = {"model_id": model_id, "task_id": task, "metric_name": "acc", "score": value, "category": "qa"}
            lines.append(json.dumps(record))
    return "\n".join(lines) + "\n"
