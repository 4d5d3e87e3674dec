"""Which tasks moved, at size: 50 models x 10,000 tasks with half of the tasks flipped.

    python benchmarks/bench_task_changes.py [--repeat 3]

The whole action run (``leaderboard.action.main.main``, in process, baseline files in the
workspace, ``comment: off``) is timed twice per repetition: as it is, and with the task-level
section switched off (``task_changes`` stubbed out), so the difference is what the section costs
end to end: the computation, the three documents' sections and the JSON report's every flip.
Then the comment section's size against its share, and the number of flips in the report.
Medians of ``--repeat`` runs of each (alternating), wall clock and the process's CPU time (the
fairer figure on a machine shared with other jobs).
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import importlib  # noqa: E402

from leaderboard.report.document import comment_length  # noqa: E402
from leaderboard.report.task_changes import COMMENT_SECTION_LIMIT  # noqa: E402

action = importlib.import_module("leaderboard.action.main")  # the module (the package exports the function)
MODELS, TASKS = 50, 10_000


def write(path: Path, scores: np.ndarray) -> None:
    lines = [
        f'{{"model_id": "org/model-{m:02d}", "task_id": "repo{t % 40:02d}__task-{t:05d}", "metric_name": '
        f'"resolved", "category": "repo{t % 40:02d}", "score": {scores[m, t]:.1f}}}'
        for m in range(scores.shape[0])
        for t in range(scores.shape[1])
    ]
    path.write_text("\n".join(lines) + "\n")


def run_once(ws: Path, runner: Path, *, section: bool) -> tuple[float, float]:
    """(wall-clock s, CPU s of this process) of one whole action run."""
    output = runner / "output"
    output.write_text("")
    env = {
        "INPUT_RUNS": "results/*.jsonl",
        "INPUT_BASELINE": "baseline/*.jsonl",
        "INPUT_COMMENT": "off",
        "GITHUB_WORKSPACE": str(ws),
        "GITHUB_OUTPUT": str(output),
        "GITHUB_EVENT_NAME": "push",
    }
    saved = action.task_changes
    if not section:
        action.task_changes = lambda *args, **kwargs: None  # type: ignore[assignment]
    try:
        start, cpu = time.perf_counter(), time.process_time()
        with redirect_stdout(io.StringIO()):
            code = action.main(env)
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    finally:
        action.task_changes = saved
    assert code == 0, code
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    base = (rng.random((MODELS, TASKS)) < 0.5).astype(float)
    flip = rng.random((MODELS, TASKS)) < 0.5  # half of each model's tasks flip
    pr = np.where(flip, 1.0 - base, base)
    with tempfile.TemporaryDirectory() as tmp:
        ws, runner = Path(tmp) / "ws", Path(tmp) / "runner"
        for d in (ws / "results", ws / "baseline", runner):
            d.mkdir(parents=True)
        write(ws / "baseline" / "base.jsonl", base)
        write(ws / "results" / "pr.jsonl", pr)
        times: dict[bool, list[float]] = {True: [], False: []}
        cpus: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(args.repeat):
            for section in (False, True):
                wall, cpu = run_once(ws, runner, section=section)
                times[section].append(wall)
                cpus[section].append(cpu)
        with_section, without = statistics.median(times[True]), statistics.median(times[False])
        cpu_with, cpu_without = statistics.median(cpus[True]), statistics.median(cpus[False])
        comment = (ws / ".leaderboard" / "leaderboard" / "comment.md").read_text()
        report = json.loads((ws / ".leaderboard" / "leaderboard" / "report.json").read_text())
        markdown = (ws / ".leaderboard" / "leaderboard" / "leaderboard.md").read_text()
    section = comment[comment.index("#### Which tasks moved") :]
    section = section[: section.index("### Leaderboard")] if "### Leaderboard" in section else section
    flips = sum(len(m["dropped"]) + len(m["gained"]) for m in report["baseline"]["task_changes"]["models"])
    print(f"{MODELS} models x {TASKS:,} tasks, {int(flip.sum()):,} flips; medians of {args.repeat}")
    print("| | wall clock | CPU (this process) |")
    print("|---|---:|---:|")
    print(f"| whole run without the section | {without:.2f} s | {cpu_without:.2f} s |")
    print(f"| whole run with it | {with_section:.2f} s | {cpu_with:.2f} s |")
    print(f"| difference | {with_section - without:+.2f} s | {cpu_with - cpu_without:+.2f} s |")
    each = ", ".join(f"{a - b:+.2f}" for a, b in zip(times[True], times[False], strict=True))
    print(f"| each run, with − without | {each} s |")
    print(f"| comment: section | {comment_length(section):,} of {COMMENT_SECTION_LIMIT:,} UTF-16 units |")
    print(f"| comment: whole | {comment_length(comment):,} of 65,536 |")
    print(f"| report: flips | {flips:,} |")
    print(f"| leaderboard.md | {len(markdown.encode()) / 1e6:.1f} MB |")


if __name__ == "__main__":
    main()
