"""Data made for the tests and the benchmarks alike, so that a benchmark measures what a test specifies.

The tests import this module by name (``tests/`` is on pytest's path); a benchmark or a script adds
``tests/`` to ``sys.path`` first, as ``benchmarks/bench_baseline.py`` does for the fake GitHub. Nothing
here imports pytest.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

from leaderboard import EvalRun
from leaderboard.stats.significance import _exact, quantised, scaled_rows

DROPPING = "20251124_mini-v1.16.0_claude-opus-4-5-20251101"  # the SWE-bench model made to drop 3 points


# --- suites ---------------------------------------------------------------------------------------


def rounded_suite(models: int, tasks: int, categories: int = 4, seed: int = 0) -> list[EvalRun]:
    """Models of spread skill on tasks of spread difficulty, scores rounded to 2 decimals (many ties), the tasks
    dealt round-robin into ``categories``: the benchmarks' 50 x 10,000 shape."""
    rng = np.random.default_rng(seed)
    skill, difficulty = rng.random(models), rng.random(tasks)
    noise = 0.1 * rng.standard_normal((models, tasks))
    scores = np.round(np.clip(0.5 + 0.3 * (skill[:, None] - difficulty[None, :]) + noise, 0, 1), 2)
    return [
        EvalRun(f"model-{m:02d}", f"task-{t:05d}", "accuracy", float(scores[m, t]), f"cat-{t % categories}")
        for m in range(models)
        for t in range(tasks)
    ]


def equal_models_a_failing_the_hardest(seed: int, n: int = 200, share: float = 0.3) -> list[EvalRun]:
    """Two models of the same skill; A's calls fail (``error`` set, no score) on the hardest ``share`` of tasks."""
    rng = np.random.default_rng(seed)
    difficulty = rng.uniform(0.0, 1.0, n)
    hardest = difficulty >= np.quantile(difficulty, 1.0 - share)
    runs = []
    for model in ("A", "B"):
        scores = np.clip(1.0 - difficulty + rng.normal(0.0, 0.1, n), 0.0, 1.0)
        for t in range(n):
            if model == "A" and hardest[t]:
                runs.append(EvalRun(model, f"t{t:03d}", "acc", None, error="timeout"))
            else:
                runs.append(EvalRun(model, f"t{t:03d}", "acc", float(scores[t])))
    return runs


def spread_suite(
    models: int, tasks: int, seed: int | np.random.Generator, *, binary: bool = False, trials: int = 1
) -> list[EvalRun]:
    """True means evenly over 0.40-0.80 (the large-suite design): 0/1 scores drawn at those means, or each task
    shifting every model alike plus noise, clipped to [0, 1]; ``trials`` scores per model and task."""
    rng = np.random.default_rng(seed)  # a Generator is used as it is: a benchmark draws suite after suite
    means = np.linspace(0.40, 0.80, models)
    shape = (models, tasks, trials)
    if binary:
        scores = (rng.random(shape) < means[:, None, None]).astype(float)
    else:
        task = rng.normal(0.0, 0.1, tasks)
        scores = np.clip(means[:, None, None] + task[None, :, None] + 0.15 * rng.standard_normal(shape), 0.0, 1.0)
    return [
        EvalRun(f"m{m:02d}", f"t{t:05d}", "score", float(scores[m, t, k]), **({"trial": k} if trials > 1 else {}))
        for m in range(models)
        for t in range(tasks)
        for k in range(trials)
    ]


# --- sign-flip p-values ---------------------------------------------------------------------------


def differences(kind: str, k: int, rng: np.random.Generator, shift: float | None = None) -> np.ndarray:
    """k non-zero per-task differences of one kind, centred near ``shift`` (drawn from 0-0.15 when None);
    rounding to 0.1 makes some 0, so more are drawn."""
    if shift is None:
        shift = float(rng.uniform(0.0, 0.15))
    size = 3 * k
    if kind == "continuous":
        d = rng.normal(shift, 0.2, size)
    elif kind == "rounded":
        d = np.round(rng.normal(shift, 0.2, size) * 10) / 10
    elif kind == "rubric":
        d = rng.choice([-1.0, -0.5, 0.5, 1.0], size, p=[0.25 - shift, 0.25 - shift, 0.25 + shift, 0.25 + shift])
    else:  # heavy tails: a few differences dominate
        d = rng.standard_t(2, size) * 0.1 + shift
    return np.asarray(d[d != 0][:k])


def exact_p(d: np.ndarray) -> float:
    """The exact enumeration of significance.py run past its usual limit (meet in the middle)."""
    q = quantised(scaled_rows(d[None, :]))
    return float(_exact(q, (np.sign(d).astype(np.int64) * q).sum(axis=1))[0])


# --- files ----------------------------------------------------------------------------------------


def raw_zip(members: list[tuple[str, int, bytes, int, int]]) -> bytes:
    """A zip written by hand, so that its headers can say anything: (name, method, data, declared size, CRC)."""
    out, central = bytearray(), bytearray()
    for name, method, data, size, crc in members:
        encoded = name.encode()
        offset = len(out)
        out += struct.pack("<4s5H3L2H", b"PK\x03\x04", 63, 0, method, 0, 0, crc, len(data), size, len(encoded), 0)
        out += encoded + data
        central += struct.pack(
            "<4s6H3L5H2L", b"PK\x01\x02", 63, 63, 0, method, 0, 0, crc, len(data), size, len(encoded), 0, 0, 0, 0,
            0, offset,
        )  # fmt: skip
        central += encoded
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(central), len(out), 0)
    return bytes(out + central + end)


def swebench_with_a_drop(source: Path, path: Path) -> Path:
    """SWE-bench Verified (``source``) with 15 of one model's resolved instances turned unresolved (a 3-point
    drop), written to ``path``."""
    lines, turned = [], 0
    for line in source.read_text().splitlines():
        record = json.loads(line)
        if record["model_id"] == DROPPING and record["score"] == 1.0 and turned < 15:
            record["score"], turned = 0.0, turned + 1
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n")
    return path
