"""Whole-process time and memory of the ``leaderboard`` CLI at many models (the JSON report written).

    python benchmarks/bench_scale.py                  # every case
    python benchmarks/bench_scale.py --case 1000x5    # one

Each case writes a synthetic EvalRun JSONL file, then runs ``leaderboard FILE --json
report.json`` as a separate process, exactly as a user would, and reads its wall time and
peak resident memory (``ru_maxrss`` of the child). Targets:

* issue 6: 1,000 models x 5 tasks and 300 models x 41 tasks, each within 10 s and 1 GiB;
* issue 8: 150 models x 10 tasks at 100,000 resamples and 3,000 models x 2 tasks at the
  defaults, each within 60 s and 1 GiB (memory independent of pairs x resamples);
* issue 17: 3,000 models x 2 tasks through the action itself (``entrypoint.py`` as the runner
  starts it, comment off: every document, the JSON report and the log), comfortably under a minute.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CASES = {
    # name: (models, tasks, binary scores, bootstrap resamples, seconds allowed)
    "1000x5": (1000, 5, False, 500, 10),
    "300x41": (300, 41, False, 500, 10),
    "300x41-binary": (300, 41, True, 500, 10),
    "150x10-b100000": (150, 10, False, 100_000, 60),
    "3000x2": (3000, 2, False, 500, 60),
    "3000x2-action": (3000, 2, False, 500, 60),
}


def write_suite(path: Path, models: int, tasks: int, binary: bool) -> None:
    rng = np.random.default_rng(0)
    skill = rng.uniform(0.3, 0.7, models)
    difficulty = rng.uniform(0.0, 1.0, tasks)
    p = np.clip(0.5 * skill[:, None] + 0.5 * difficulty[None, :], 0, 1)
    scores = (
        (rng.random((models, tasks)) < p).astype(float)
        if binary
        else np.clip(p + rng.normal(0, 0.1, (models, tasks)), 0, 1)
    )
    with path.open("w") as f:
        for m in range(models):
            for t in range(tasks):
                record = {"model_id": f"org/model-{m:04d}", "task_id": f"task-{t:03d}", "metric_name": "acc"}
                f.write(json.dumps({**record, "score": float(scores[m, t]), "category": f"cat-{t % 7}"}) + "\n")


def _action(tmp: Path, data: Path, b: int) -> tuple[list[str], dict[str, str], Path]:
    """entrypoint.py with the environment a runner gives it: the inputs' defaults, no PR comment."""
    from leaderboard.action.settings import DEFAULTS

    workspace, runner = tmp / "workspace", tmp / "runner"
    (workspace / "results").mkdir(parents=True)
    runner.mkdir()
    data.rename(workspace / "results" / data.name)
    (runner / "event.json").write_text(json.dumps({"number": 7, "pull_request": {"number": 7}}))
    inputs = {**DEFAULTS, "runs": "results/*.jsonl", "comment": "off", "bootstrap-samples": str(b), "github-token": ""}
    env = {f"INPUT_{k.upper()}": v for k, v in inputs.items()}
    env.update(
        PATH=os.environ.get("PATH", "/usr/bin:/bin"), PYTHONPATH=str(ROOT), GITHUB_ACTIONS="true",
        GITHUB_EVENT_NAME="pull_request", GITHUB_EVENT_PATH=str(runner / "event.json"), GITHUB_REPOSITORY="o/r",
        GITHUB_WORKSPACE=str(workspace), GITHUB_OUTPUT=str(runner / "output"),
        GITHUB_STEP_SUMMARY=str(runner / "summary"),
    )  # fmt: skip
    for f in ("output", "summary"):
        (runner / f).write_text("")
    return [sys.executable, str(ROOT / "entrypoint.py")], env, workspace / ".leaderboard/leaderboard/report.json"


def run_case(name: str, tmp: Path) -> dict[str, object]:
    models, tasks, binary, b, allowed = CASES[name]
    data = tmp / f"{name}.jsonl"
    write_suite(data, models, tasks, binary)
    report = tmp / f"{name}.json"
    command = [sys.executable, "-m", "leaderboard", str(data), "--json", str(report), "--b", str(b)]
    env = None
    if name.endswith("-action"):
        command, env, report = _action(tmp, data, b)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    before, cpu_before = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, check=False, env=env)
    seconds = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak_kib, cpu = usage.ru_maxrss, usage.ru_utime + usage.ru_stime - cpu_before
    if done.returncode != 0:
        raise SystemExit(f"{name}: exit {done.returncode}: {(done.stdout + done.stderr).decode()[-2000:]}")
    pairs = models * (models - 1) // 2
    return {
        "case": name,
        "pairs": pairs,
        "b": b,
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu, 2),  # user + system: less sensitive than the wall time to a shared machine
        "peak_mib": round(max(peak_kib, before) / 1024, 1) if peak_kib > before else "n/a (below an earlier case)",
        "report_mib": round(report.stat().st_size / 2**20, 1),
        "markdown_mib": round(len(done.stdout) / 2**20, 2),
        "within_target": seconds <= allowed,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", choices=sorted(CASES), action="append")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, numpy {np.__version__}")
    # ru_maxrss of children is the largest child so far: run the cases in a fresh process each.
    if args.case and len(args.case) == 1:
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(run_case(args.case[0], Path(tmp))))
        return
    for name in args.case or list(CASES):
        out = subprocess.run(
            [sys.executable, __file__, "--case", name], stdout=subprocess.PIPE, text=True, check=True
        ).stdout
        print(out.strip().splitlines()[-1], flush=True)


if __name__ == "__main__":
    main()
