"""The verdict's set for the best: does it hold the true best, how large is it, before and after.

    python benchmarks/bench_best.py               # every scenario, REPS replications each
    python benchmarks/bench_best.py --reps 50     # quicker
    python benchmarks/bench_best.py --only realdata

"Before" is the top group read from all-pairs Holm (the models no pair decision puts anything
ahead of); "after" is the confidence set for the best (stats/best.py: each model against the
other M - 1, one-sided at alpha / (M - 1)). Both come from the same analysis of each replication.
Every rate is printed with its Monte Carlo SE, every mean size with its SE.

* simulated: continuous scores, a per-task difficulty shared by every model plus noise; true
  means spread evenly below the best (10 x 200, 30 x 500, 50 x 200). P(the set holds the true
  best), mean size of the set, and P(every rank range holds its true rank).
* equal: every model has the same true mean, the least favourable case for the guarantee (each
  model is a best, so P(m00 is left out) is at most alpha by the argument of stats/best.py).
* far-below: the example (6 models) and the example with 9 models far below: the top group.
* realdata: MTEB (eng v2) and SWE-bench Verified: the top group on the data, and its mean size on
  bootstrap worlds (tasks resampled; the true best is the data's leader).
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from leaderboard import EvalRun, analyse, load_runs  # noqa: E402
from leaderboard.stats.analysis import Leaderboard  # noqa: E402

REALDATA = next(
    (p for p in (ROOT.parent / "shared" / "realdata", ROOT.parent.parent / "shared" / "realdata") if p.exists()),
    ROOT.parent / "shared" / "realdata",
)
EXAMPLE = ROOT / "examples" / "mteb-eng-v2-sample.jsonl"


def rate(hits: int, reps: int) -> str:
    p = hits / reps
    return f"{100 * p:.1f}% (SE {100 * math.sqrt(max(p * (1 - p), 1e-12) / reps):.1f})"


def mean_se(values: list[float]) -> str:
    v = np.asarray(values, dtype=float)
    return f"{v.mean():.2f} (SE {v.std(ddof=1) / math.sqrt(v.size) if v.size > 1 else 0.0:.2f})"


def records(scores: np.ndarray) -> list[EvalRun]:
    return [
        EvalRun(f"m{m:02d}", f"t{t:05d}", "acc", float(scores[m, t]))
        for m in range(scores.shape[0])
        for t in range(scores.shape[1])
    ]


def holm_top(board: Leaderboard) -> set[str]:
    """The top group as all-pairs Holm reads it: no significant pair puts another model ahead."""
    table = board.pairs
    behind = set(table.b[table.significant].tolist())
    return {i for k, i in enumerate(table.ranked_ids) if k not in behind}


def simulated(models: int, tasks: int, reps: int, spread: float) -> None:
    hold_before = hold_after = ranks_hold = 0
    size_before: list[float] = []
    size_after: list[float] = []
    truth = 0.60 - spread * np.arange(models) / (models - 1)  # m00 is the true best (one of them when spread = 0)
    for rep in range(reps):
        rng = np.random.default_rng(10_000 * models + rep)
        difficulty = rng.normal(0.0, 0.15, tasks)
        scores = np.clip(truth[:, None] + difficulty[None, :] + rng.normal(0.0, 0.12, (models, tasks)), 0.0, 1.0)
        board = analyse(records(scores), seed=rep)
        before, after = holm_top(board), set(board.top_group)
        hold_before += "m00" in before
        hold_after += "m00" in after
        size_before.append(len(before))
        size_after.append(len(after))
        true_rank = {f"m{m:02d}": m + 1 for m in range(models)}
        ranks_hold += all(
            r.rank_lo is not None and r.rank_hi is not None and r.rank_lo <= true_rank[r.model_id] <= r.rank_hi
            for r in board.rows
        )
    print(
        f"  {models} x {tasks}, means {truth[0]:.2f} to {truth[-1]:.2f}: holds the best: before "
        f"{rate(hold_before, reps)}, after {rate(hold_after, reps)}; size: before {mean_se(size_before)}, after "
        f"{mean_se(size_after)}; every rank range holds: {rate(ranks_hold, reps)}",
        flush=True,
    )


def far_below() -> None:
    runs = load_runs([str(EXAMPLE)])
    weakest = [r for r in runs if r.model_id == "sentence-transformers/all-MiniLM-L6-v2"]
    rng = np.random.default_rng(0)
    extra = [
        replace(r, model_id=f"far-below-{k}", score=float(np.clip((r.score or 0.0) * 0.5 + rng.normal(0, 0.05), 0, 1)))
        for k in range(9)
        for r in weakest
    ]
    for label, rs in (("6 models", runs), ("15 models", runs + extra)):
        board = analyse(rs)
        print(f"  example, {label}: before {sorted(holm_top(board))}, after {list(board.top_group)}", flush=True)


def realdata(reps: int) -> None:
    for name in ("mteb_eng_v2.jsonl", "swebench_verified.jsonl"):
        path = REALDATA / name
        if not path.exists():
            print(f"  {name}: not found")
            continue
        runs = load_runs([str(path)])
        board = analyse(runs)
        leader = board.rows[0].model_id
        print(
            f"  {name} ({board.n_models} x {board.n_tasks}): top group before {len(holm_top(board))}, after "
            f"{len(board.top_group)} {list(board.top_group)}",
            flush=True,
        )
        by_task: dict[str, list[EvalRun]] = {}
        for r in runs:
            by_task.setdefault(r.task_id, []).append(r)
        tasks = sorted(by_task)
        before: list[float] = []
        after: list[float] = []
        held = 0
        for rep in range(reps):
            rng = np.random.default_rng(rep)
            drawn = rng.integers(0, len(tasks), len(tasks))
            world = [replace(r, task_id=f"{tasks[t]}#{k}") for k, t in enumerate(drawn) for r in by_task[tasks[t]]]
            b = analyse(world, seed=rep)
            before.append(len(holm_top(b)))
            after.append(len(b.top_group))
            held += leader in b.top_group
        print(
            f"    bootstrap worlds ({reps}): size before {mean_se(before)}, after {mean_se(after)}; holds the "
            f"data's leader {rate(held, reps)}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--only", choices=("simulated", "equal", "far-below", "realdata"))
    args = parser.parse_args()
    if args.only in (None, "far-below"):
        print("far-below:")
        far_below()
    if args.only in (None, "simulated"):
        print("simulated:")
        for models, tasks, spread in ((10, 200, 0.10), (30, 500, 0.15), (50, 200, 0.20)):
            simulated(models, tasks, args.reps, spread)
    if args.only in (None, "equal"):
        print("equal (the least favourable case: every model is a best; the rate is for m00):")
        for models, tasks in ((10, 200), (50, 200)):
            simulated(models, tasks, args.reps, 0.0)
    if args.only in (None, "realdata"):
        print("realdata:")
        realdata(max(20, args.reps // 4))


if __name__ == "__main__":
    main()
