"""Task weights applied to runs held as columns: ``compare`` and ``analyse`` with ``weights="apply"``.

    python benchmarks/bench_weights_columns.py [tasks ...]

2 models x N tasks per side (default N = 100,000 and 1,000,000), built as
:class:`~leaderboard.run_columns.RunColumns` (what the fast readers give), every task weighted 1 to 4:
the median of 3 cold runs (fresh columns each time, the analysis cache forgotten) of ``compare`` and
``analyse`` at B = 500, with weights ignored and applied, and whether any record object was built.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from leaderboard import analyse  # noqa: E402
from leaderboard.run_columns import RunColumns  # noqa: E402
from leaderboard.stats import cache  # noqa: E402
from leaderboard.stats.comparison import compare  # noqa: E402


def side(tasks: int, shift: float, seed: int) -> RunColumns:
    rng = np.random.default_rng(seed)
    models = 2
    task = np.tile(np.arange(tasks, dtype=np.int64), models)
    weight = (np.arange(tasks) % 4 + 1.0)[task]
    score = np.clip(np.round(rng.random(models * tasks) * (1 - shift) + shift * (task % 2), 3), 0.0, 1.0)
    return RunColumns(
        ("model-a", "model-b"), tuple(f"task-{t:07d}" for t in range(tasks)), ("acc",), ("general",), ("x.jsonl",),
        np.repeat(np.arange(models, dtype=np.int64), tasks), task, np.zeros(models * tasks, dtype=np.int64),
        np.zeros(models * tasks, dtype=np.int64), np.zeros(models * tasks, dtype=np.int64),
        np.arange(1, models * tasks + 1, dtype=np.int64), score, weight,
    )  # fmt: skip


def timed(make: Callable[[], tuple[RunColumns, ...]], fn: Callable[..., object], repeat: int = 3) -> tuple[float, bool]:
    times, built = [], False
    for _ in range(repeat):
        args = make()
        cache.forget()
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
        built = built or any("records" in vars(a) for a in args)
    return statistics.median(times), built


def main(sizes: list[int]) -> None:
    for tasks in sizes:
        for weights in ("ignore", "apply"):
            t_cmp, built_cmp = timed(
                lambda n=tasks: (side(n, 0.0, 1), side(n, 0.1, 2)),
                lambda base, pr, w=weights: compare(base, pr, b=500, alpha=0.05, seed=0, weights=w),
            )
            t_ana, built_ana = timed(
                lambda n=tasks: (side(n, 0.1, 2),),
                lambda pr, w=weights: analyse(pr, b=500, seed=0, weights=w),
            )
            print(
                f"2 x {tasks:>9,} tasks  weights={weights:<6}  compare {t_cmp:6.2f} s"
                f"{' (records built)' if built_cmp else ''}  analyse {t_ana:6.2f} s"
                f"{' (records built)' if built_ana else ''}",
                flush=True,
            )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [100_000, 1_000_000])
