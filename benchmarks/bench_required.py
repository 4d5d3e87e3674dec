"""Required-task patterns at size: 6,000 patterns against 120,000 task ids.

    python benchmarks/bench_required.py [--patterns 6000] [--repeat 1] [--only literal,prefix]

Task ids are ``suite-SSSS/item-JJJ`` (6,000 suites of 20 items). Each mix has one pattern more
that matches nothing (it must be reported) and times :func:`leaderboard.required.matching`, the
step that decides which tasks are required and which patterns match no task:

* ``literal``: whole task ids (no glob character), as a list copied from a spreadsheet;
* ``prefix``: ``suite-SSSS/*``, one per suite;
* ``suffix``: ``?uite-SSSS/item-000``, a glob first and the rest literal;
* ``mixed``: 5,000 whole ids and 1,000 ``suite-SSSS/item-0*``;
* ``overlap``: ``suite-*/item-JJJ`` and ``suite-SSSS/*`` together, every id matched many times.

Medians of ``--repeat`` runs, wall clock and the process's CPU time (the fairer figure on a
machine shared with other jobs); then the counts, which must not change between versions.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from leaderboard.required import matching  # noqa: E402

SUITES, ITEMS = 6_000, 20


def ids() -> list[str]:
    return [f"suite-{s:04d}/item-{j:03d}" for s in range(SUITES) for j in range(ITEMS)]


def mixes(n: int) -> dict[str, Callable[[], list[str]]]:
    step = max(1, SUITES // n)
    return {
        "literal": lambda: [f"suite-{(k * step) % SUITES:04d}/item-{k % ITEMS:03d}" for k in range(n)],
        "prefix": lambda: [f"suite-{(k * step) % SUITES:04d}/*" for k in range(n)],
        "suffix": lambda: [f"?uite-{(k * step) % SUITES:04d}/item-000" for k in range(n)],
        "mixed": lambda: [
            *(f"suite-{(k * step) % SUITES:04d}/item-{k % ITEMS:03d}" for k in range(n * 5 // 6)),
            *(f"suite-{(k * step) % SUITES:04d}/item-0*" for k in range(n // 6)),
        ],
        "overlap": lambda: [
            *(f"suite-*/item-{k % ITEMS:03d}" for k in range(ITEMS)),
            *(f"suite-{(k * step) % SUITES:04d}/*" for k in range(n - ITEMS)),
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--patterns", type=int, default=6_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    tasks = ids()
    chosen = set(args.only.split(",")) if args.only else None
    print(f"{len(tasks):,} task ids, {args.patterns:,} patterns + 1 matching nothing")
    for name, make in mixes(args.patterns).items():
        if chosen is not None and name not in chosen:
            continue
        patterns = [*make(), "suite-9999/typo"]
        walls, cpus = [], []
        for _ in range(args.repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            required, unmatched = matching(tasks, patterns)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
        print(
            f"{name:>8}: {statistics.median(walls):8.3f} s wall, {statistics.median(cpus):8.3f} s CPU; "
            f"{len(required):,} required, unmatched {list(unmatched)}",
            flush=True,
        )


if __name__ == "__main__":
    main()
