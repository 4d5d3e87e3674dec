"""The comparison with a baseline: time, and what it finds on real data.

    python benchmarks/bench_comparison.py

For the real MTEB(eng, v2) (15 models x 41 tasks) and SWE-bench Verified (12 models x 500 tasks)
data of ../shared/realdata (skipped when absent), and synthetic suites of 500 models x 50 tasks and
50 models x 10,000 tasks: the time of ``compare`` (median of 5) at B = 500 and B = 1000, and of the
section's markdown; then, on MTEB, the verdicts when one model's scores drop by 0.02 (with and
without per-task noise) and the false "detected" rate when every model is re-measured with noise.
"""

from __future__ import annotations

import dataclasses
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from leaderboard import EvalRun, load_runs  # noqa: E402
from leaderboard.report.comparison import comparison_markdown  # noqa: E402
from leaderboard.stats.comparison import compare  # noqa: E402

REALDATA = ROOT.parent / "shared" / "realdata"


def timed(fn: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def moved(runs: list[EvalRun], by: float, noise: float, models: set[str] | None, seed: int = 0) -> list[EvalRun]:
    rng = np.random.default_rng(seed)
    out = []
    for r in runs:
        if models is None or r.model_id in models:
            r = dataclasses.replace(r, score=float(np.clip(r.score + by + noise * rng.standard_normal(), 0, 1)))
        out.append(r)
    return out


def synthetic(models: int, tasks: int, seed: int = 0) -> list[EvalRun]:
    rng = np.random.default_rng(seed)
    scores = rng.uniform(0.2, 0.8, (models, tasks))
    return [EvalRun(f"m{m:04d}", f"t{t:05d}", "acc", float(scores[m, t])) for m in range(models) for t in range(tasks)]


def main() -> None:
    cases: list[tuple[str, list[EvalRun]]] = []
    for name in ("mteb_eng_v2.jsonl", "swebench_verified.jsonl"):
        if (REALDATA / name).exists():
            cases.append((name, load_runs([str(REALDATA / name)])))
    cases += [("synthetic 500 x 50", synthetic(500, 50)), ("synthetic 50 x 10,000", synthetic(50, 10_000))]
    print("| data | models x tasks | compare, B = 500 | compare, B = 1000 | markdown |")
    print("|---|---|---:|---:|---:|")
    for name, runs in cases:
        pr = moved(runs, 0.0, 0.01, None)  # every model re-measured: no "unchanged" shortcut
        models = len({r.model_id for r in runs})
        tasks = len({r.task_id for r in runs})
        t500 = timed(lambda runs=runs, pr=pr: compare(runs, pr, b=500, alpha=0.05, seed=0))
        t1000 = timed(lambda runs=runs, pr=pr: compare(runs, pr, b=1000, alpha=0.05, seed=0))
        c = compare(runs, pr, b=1000, alpha=0.05, seed=0)
        tmd = timed(lambda c=c: comparison_markdown(c, "", limit=24_000))
        print(f"| {name} | {models} x {tasks} | {t500 * 1000:.0f} ms | {t1000 * 1000:.0f} ms | {tmd * 1000:.0f} ms |")

    if not (REALDATA / "mteb_eng_v2.jsonl").exists():
        return
    mteb = load_runs([str(REALDATA / "mteb_eng_v2.jsonl")])
    target = {"intfloat/e5-base-v2"}
    for noise in (0.0, 0.01, 0.02, 0.04):
        c = compare(mteb, moved(mteb, -0.02, noise, target), b=1000, alpha=0.05, seed=0)
        m = next(x for x in c.models if x.model_id in target)
        print(
            f"MTEB, e5-base-v2 scores -0.02 (noise sd {noise}): {m.verdict}, delta {m.delta:+.4f} "
            f"[{m.ci_lo:+.4f}, {m.ci_hi:+.4f}], p = {m.p_value:.3g}, tasks needed {m.tasks_needed}"
        )
    for correction in ("none", "holm"):
        detected = 0
        compared = 0
        for seed in range(40):
            c = compare(mteb, moved(mteb, 0.0, 0.01, None, seed=seed), b=500, alpha=0.05, seed=seed,
                        correction=correction)  # type: ignore[arg-type]  # fmt: skip
            detected += sum(m.significant for m in c.models)
            compared += len(c.models)
        print(
            f"MTEB re-measured with noise sd 0.01, no true change, correction {correction}: "
            f"{detected} of {compared} model comparisons detected a change ({detected / compared:.1%})"
        )


if __name__ == "__main__":
    main()
