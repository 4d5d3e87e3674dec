"""Regenerate examples/agent-suite/runs.jsonl: a small agent-style suite with cost, latency, errors and trials.

Five simulated models on 24 tasks, 3 trials each (deterministic: seeded). The suite is built
so that the example configuration shows each behaviour of the composite ranking: two models
too close to call on accuracy (price and speed decide), one below the accuracy floor, one
whose calls fail too often, and one with no prices (its cost cannot be checked).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "examples" / "agent-suite" / "runs.jsonl"
TASKS = 24
TRIALS = 3
CATEGORIES = ("search", "tools", "code")
# model: (accuracy, $ per call or None, median latency ms, error rate)
MODELS = {
    "sim_frontier": (0.86, 0.0120, 2600.0, 0.0),
    "sim_small": (0.82, 0.0015, 700.0, 0.0),
    "sim_tiny": (0.50, 0.0002, 90.0, 0.0),
    "sim_flaky": (0.80, 0.0030, 1200.0, 0.15),
    "sim_local": (0.74, None, 1500.0, 0.0),
}


def main() -> None:
    rng = np.random.default_rng(14)
    difficulty = rng.uniform(-0.15, 0.15, TASKS)
    lines = []
    for model, (accuracy, price, latency, errors) in MODELS.items():
        for t in range(TASKS):
            for trial in range(1, TRIALS + 1):
                record: dict[str, object] = {
                    "model_id": model,
                    "task_id": f"agent-{t:02d}",
                    "metric_name": "task_success",
                    "category": CATEGORIES[t % 3],
                    "trial": trial,
                    "latency_ms": round(float(latency * rng.lognormal(0.0, 0.35)), 1),
                }
                if price is not None:
                    record["cost_usd"] = round(float(price * rng.uniform(0.7, 1.3)), 6)
                if rng.random() < errors:
                    record["error"] = "timeout"
                else:
                    p = float(np.clip(accuracy - difficulty[t], 0.0, 1.0))
                    record["score"] = float(rng.random() < p)
                    record["metrics"] = {"tool_calls": int(rng.integers(1, 8))}
                lines.append(json.dumps(record))
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
