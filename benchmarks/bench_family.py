"""Claims about the whole table (issue 14): family-wise level, gate, power, rank-range coverage.

    python benchmarks/bench_family.py              # every scenario, REPS replications each
    python benchmarks/bench_family.py --reps 100   # quicker
    python benchmarks/bench_family.py --only gate  # one group: table, gate, power, ranks, realdata

Every rate is printed with its Monte Carlo standard error sqrt(p(1-p)/reps). Each scenario goes
through the library with its defaults (B = 500, alpha 0.05, the default correction), the gate
with ``fail_on_regression=True`` as the action passes it when ``fail-on-regression: true``.

* table: P(any pair significant) among equal models (20 x 200 binary and continuous, 5 x 50);
  a significant pair is what shrinks a rank range or the top group.
* gate: 20 models re-run unchanged (every task a fresh draw of the same model), n = 20, 50, 200,
  1,000 tasks, binary / continuous / 3 trials per task: P(the gate fails).
* power: one of 20 models drops 5 points at n = 2,000 binary tasks: P(it is flagged regressed);
  10 models 2 points apart at n = 1,000: P(every rank range holds its true rank), mean width,
  for the default and for ``correction="none"``.
* realdata: the rank column on MTEB (15 x 41) and SWE-bench Verified (12 x 500), per pair and
  family-wise.
"""

from __future__ import annotations

import argparse
import inspect
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from leaderboard import EvalRun, analyse, load_runs  # noqa: E402
from leaderboard.stats.comparison import compare  # noqa: E402

# ../shared beside the repository (the main checkout), or two levels up (a worktree under wt/).
REALDATA = next(
    (p for p in (ROOT.parent / "shared" / "realdata", ROOT.parent.parent / "shared" / "realdata") if p.exists()),
    ROOT.parent / "shared" / "realdata",
)
GATE_ON = {"fail_on_regression": True} if "fail_on_regression" in inspect.signature(compare).parameters else {}


def rate(hits: int, reps: int) -> str:
    p = hits / reps
    return f"{100 * p:.1f}% (SE {100 * math.sqrt(max(p * (1 - p), 1e-12) / reps):.1f}, {hits}/{reps})"


def records(scores: np.ndarray, prefix: str = "m", trials: int = 1) -> list[EvalRun]:
    """(models, tasks[, trials]) scores as EvalRuns."""
    out = []
    for m in range(scores.shape[0]):
        for t in range(scores.shape[1]):
            if trials == 1:
                out.append(EvalRun(f"{prefix}{m:02d}", f"t{t:05d}", "acc", float(scores[m, t])))
            else:
                out.extend(
                    EvalRun(f"{prefix}{m:02d}", f"t{t:05d}", "acc", float(scores[m, t, k]), trial=k)
                    for k in range(trials)
                )
    return out


def task_probabilities(
    rng: np.random.Generator, models: int, tasks: int, skill: np.ndarray | None = None
) -> np.ndarray:
    """P(correct) of each model on each task: a logistic in task difficulty and model skill."""
    difficulty = rng.normal(0.0, 1.5, tasks)
    base = np.zeros(models) if skill is None else skill
    return 1.0 / (1.0 + np.exp(difficulty[None, :] - base[:, None]))


def equal_models(kind: str, models: int, tasks: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "binary":
        p = task_probabilities(rng, models, tasks)
        return (rng.random(p.shape) < p).astype(float)
    centre = rng.uniform(0.2, 0.8, tasks)
    return np.clip(centre[None, :] + 0.15 * rng.standard_normal((models, tasks)), 0.0, 1.0)


def scenario_table(reps: int) -> None:
    for kind, models, tasks in (("binary", 20, 200), ("continuous", 20, 200), ("binary", 5, 50)):
        rng = np.random.default_rng(1)
        hits = 0
        for _ in range(reps):
            board = analyse(records(equal_models(kind, models, tasks, rng)))
            hits += bool(board.pairs.significant.any())
        print(f"table  {models} equal models x {tasks} {kind} tasks: P(any pair significant) = {rate(hits, reps)}")


def rerun(kind: str, p: np.ndarray, rng: np.random.Generator, trials: int = 1) -> np.ndarray:
    """One fresh run of every model on every task: binary draws, continuous noise, or trials of draws."""
    if kind == "continuous":
        return np.clip(p + 0.1 * rng.standard_normal(p.shape), 0.0, 1.0)
    shape = p.shape if trials == 1 else (*p.shape, trials)
    q = p if trials == 1 else p[..., None]
    return (rng.random(shape) < q).astype(float)


def scenario_gate(reps: int) -> None:
    for kind, trials in (("binary", 1), ("continuous", 1), ("binary", 3)):
        for n in (20, 50, 200, 1000):
            rng = np.random.default_rng(2)
            fails = 0
            for _ in range(reps):
                p = task_probabilities(rng, 20, n, rng.normal(0, 1, 20))
                base = records(rerun(kind, p, rng, trials), trials=trials)
                pr = records(rerun(kind, p, rng, trials), trials=trials)
                fails += bool(compare(base, pr, b=500, alpha=0.05, seed=0, **GATE_ON).regressions)
            label = f"{kind}{' x3 trials' if trials > 1 else ''}"
            print(f"gate   20 unchanged models, {n:>4} tasks, {label}: P(gate fails) = {rate(fails, reps)}")


def scenario_power(reps: int) -> None:
    rng = np.random.default_rng(3)
    found = 0
    for _ in range(reps):
        p = task_probabilities(rng, 20, 2000, rng.normal(0, 1, 20))
        base = rerun("binary", p, rng)
        # Its mean drops by exactly 5 points, in proportion on every task (a clipped p - 0.05 would
        # drop it less: many tasks have p < 0.05).
        dropped = p.copy()
        dropped[0] = p[0] * (1.0 - 0.05 / p[0].mean())
        pr = rerun("binary", dropped, rng)
        result = compare(records(base), records(pr), b=500, alpha=0.05, seed=0, **GATE_ON)
        found += any(m.model_id == "m00" for m in result.regressions)
    print(f"power  one of 20 models drops 5 points, 2,000 binary tasks: P(flagged regressed) = {rate(found, reps)}")
    for correction in ("default", "none"):
        rng = np.random.default_rng(4)
        covered, widths = 0, []
        for _ in range(reps):
            # Binary tasks, true means 0.02 apart: P(model k solves task t) = base_t + 0.02 (9 - k).
            base = rng.uniform(0.2, 0.6, 1000)
            p = base[None, :] + 0.02 * (9 - np.arange(10))[:, None]
            scores = (rng.random(p.shape) < p).astype(float)
            kwargs = {} if correction == "default" else {"correction": "none"}
            board = analyse(records(scores), **kwargs)  # type: ignore[arg-type]
            truth = {f"m{k:02d}": k + 1 for k in range(10)}
            ok = all(row.rank_lo <= truth[row.model_id] <= row.rank_hi for row in board.rows)  # type: ignore[operator]
            covered += ok
            widths.append(np.mean([row.rank_hi - row.rank_lo + 1 for row in board.rows]))  # type: ignore[operator]
        print(
            f"ranks  10 models 0.02 apart, 1,000 binary tasks, correction {correction}: P(every rank range holds its "
            f"true rank) = {rate(covered, reps)}, mean width {np.mean(widths):.2f} ranks"
        )


def scenario_realdata() -> None:
    for name in ("mteb_eng_v2.jsonl", "swebench_verified.jsonl"):
        path = REALDATA / name
        if not path.exists():
            print(f"realdata {name}: absent, skipped")
            continue
        runs = load_runs([str(path)])
        default, per_pair = analyse(runs), analyse(runs, correction="none")
        print(f"realdata {name}: rank range per pair -> default ({default.correction})")
        for a, b in zip(per_pair.rows, default.rows, strict=True):
            print(f"  {a.model_id:<48} {a.rank_lo}-{a.rank_hi:<4} -> {b.rank_lo}-{b.rank_hi}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--only", choices=("table", "gate", "power", "realdata"))
    args = parser.parse_args()
    groups: dict[str, Callable[[], None]] = {
        "table": lambda: scenario_table(args.reps),
        "gate": lambda: scenario_gate(args.reps),
        "power": lambda: scenario_power(args.reps),
        "realdata": scenario_realdata,
    }
    for name, run in groups.items():
        if args.only in (None, name):
            start = time.perf_counter()
            run()
            print(f"({name}: {time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
