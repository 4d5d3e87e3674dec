"""Time and memory of the hostile inputs of issue 8 that used to hang, loop or blow up.

    python benchmarks/bench_hostile.py            # every case
    python benchmarks/bench_hostile.py composite  # issue 17's composite section at 60 x 40

Each case builds its workspace in a temporary directory, loads it as the action does
(``load_runs`` with the workspace as root) and prints the wall time, the peak of Python
allocations (tracemalloc) and what came out: how many problems, and the first one.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from leaderboard import InvalidEvalRuns, limits, load_runs

RECORD = {"model_id": "m", "task_id": "t", "metric_name": "acc", "score": 0.5}


def write_jsonl(path: Path, records: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")


def measure(name: str, build: Callable[[Path], tuple[list[str], Path | None]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        patterns, root = build(Path(tmp))
        tracemalloc.start()
        start = time.perf_counter()
        try:
            runs = load_runs(patterns, root=root)
            outcome = f"loaded {len(runs):,} records"
        except InvalidEvalRuns as exc:
            first = str(exc.problems[0])
            first = first.replace(tmp + "/", "")
            outcome = f"{len(exc.problems)} problem(s): {first[:110]}"
        elapsed = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    print(f"| {name} | {elapsed * 1000:,.1f} ms | {peak / 2**20:,.1f} MiB | {outcome} |", flush=True)


def fifo(tmp: Path) -> tuple[list[str], Path]:
    write_jsonl(tmp / "results" / "a.jsonl", [RECORD])
    os.mkfifo(tmp / "results" / "b.jsonl")
    return ["results/*.jsonl"], tmp


def device(tmp: Path) -> tuple[list[str], None]:
    (tmp / "z.jsonl").symlink_to("/dev/zero")  # the CLI has no workspace: the link is followed, the device refused
    return [str(tmp / "z.jsonl")], None


def loops(tmp: Path) -> tuple[list[str], Path]:
    for i in range(16):
        write_jsonl(tmp / "results" / f"r{i}.jsonl", [{**RECORD, "task_id": f"t{i}"}])
    (tmp / "results" / "l1").symlink_to(".")
    (tmp / "results" / "l2").symlink_to(".")
    return ["results/**/*.jsonl"], tmp


def one_loop_old_glob() -> None:
    """What glob.glob (the old expansion) returns for one loop and one file: each path a duplicate."""
    with tempfile.TemporaryDirectory() as tmp:
        write_jsonl(Path(tmp) / "results" / "a.jsonl", [RECORD])
        (Path(tmp) / "results" / "l1").symlink_to(".")
        start = time.perf_counter()
        paths = glob.glob(f"{tmp}/results/**/*.jsonl", recursive=True)
        elapsed = time.perf_counter() - start
    print(f"| (before) glob.glob, 1 loop, 1 file | {elapsed * 1000:,.1f} ms | — | {len(paths)} paths to one file |")


def two_loops_old_glob(cap: float = 10.0) -> None:
    """The old expansion with two loops: the paths multiply at each level until ELOOP."""
    with tempfile.TemporaryDirectory() as tmp:
        write_jsonl(Path(tmp) / "results" / "a.jsonl", [RECORD])
        (Path(tmp) / "results" / "l1").symlink_to(".")
        (Path(tmp) / "results" / "l2").symlink_to(".")
        code = f"import glob; print(len(glob.glob({tmp + '/results/**/*.jsonl'!r}, recursive=True)))"
        start = time.perf_counter()
        try:
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=cap)
            outcome = f"{done.stdout.strip()} paths to one file"
        except subprocess.TimeoutExpired:
            outcome = f"still walking after {cap:g} s (killed)"
        elapsed = time.perf_counter() - start
    print(f"| (before) glob.glob, 2 loops, 1 file | {elapsed * 1000:,.0f} ms | — | {outcome} |", flush=True)


def same_file_many_paths(tmp: Path) -> tuple[list[str], Path]:
    write_jsonl(tmp / "results" / "a.jsonl", [RECORD])
    (tmp / "results" / "link.jsonl").symlink_to("a.jsonl")
    return ["results/a.jsonl", "results/../results/a.jsonl", "results/*.jsonl"], tmp


def link_to_big_directory(tmp: Path) -> tuple[list[str], Path]:
    outside = tmp / "etc"
    for i in range(1250):
        (outside / f"d{i % 50}").mkdir(parents=True, exist_ok=True)
        (outside / f"d{i % 50}" / f"f{i}.conf").write_text("x")
    write_jsonl(tmp / "ws" / "results" / "a.jsonl", [RECORD])
    (tmp / "ws" / "results" / "etc").symlink_to(outside)
    return ["results/**/*"], tmp / "ws"


def huge_id(tmp: Path) -> tuple[list[str], Path]:
    write_jsonl(tmp / "r.jsonl", [{**RECORD, "model_id": "x" * 10_000_000}, {**RECORD, "model_id": "y"}])
    return ["r.jsonl"], tmp


def fifty_mib_ids(tmp: Path) -> tuple[list[str], Path]:
    write_jsonl(tmp / "r.jsonl", [{**RECORD, "model_id": f"{i}" + "x" * 2**20} for i in range(50)])
    return ["r.jsonl"], tmp


def ids_at_the_bound(tmp: Path) -> tuple[list[str], Path]:
    n = limits.MAX_ID_LENGTH
    write_jsonl(
        tmp / "r.jsonl",
        [{**RECORD, "model_id": f"{m:03d}".ljust(n, "m"), "task_id": f"{t:05d}".ljust(n, "t")}
         for m in range(20) for t in range(1000)],
    )  # fmt: skip
    return ["r.jsonl"], tmp


def over_the_size_bound(tmp: Path) -> tuple[list[str], Path]:
    with (tmp / "big.jsonl").open("wb") as handle:
        handle.truncate(limits.MAX_INPUT_BYTES + 1)  # sparse: nothing is really written, nothing is read
    return ["big.jsonl"], tmp


def deep_nesting(tmp: Path) -> tuple[list[str], Path]:
    (tmp / "r.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    return ["r.jsonl"], tmp


def long_integer(tmp: Path) -> tuple[list[str], Path]:
    (tmp / "r.jsonl").write_text(json.dumps(RECORD)[:-1] + ', "n": ' + "9" * 5000 + "}\n")
    return ["r.jsonl"], tmp


def composite_sizes(models: int = 60, categories: int = 40) -> None:
    """Issue 17 item 18: every model lacks a third of 40 weighted categories with 190-character names."""
    from leaderboard import EvalRun, analyse
    from leaderboard.composite import rank
    from leaderboard.config import parse_config
    from leaderboard.report.composite import composite_section
    from leaderboard.report.document import comment_body, comment_length

    names = [f"category-{c:02d}-" + "n" * 180 for c in range(categories)]
    runs = [
        EvalRun(f"org/model-{m:02d}-" + "v" * 80, f"t{c}-{k}", "acc", ((m + c + k) % 7) / 7, category=names[c])
        for m in range(models) for c in range(categories) if (m + c) % 3 for k in range(2)
    ]  # fmt: skip
    start = time.perf_counter()
    board = analyse(runs, b=500)
    weights = ", ".join(f"{json.dumps(c)}: 1" for c in board.categories)
    result = rank(runs, board, parse_config(f"metrics: {{weights: {{{weights}}}}}", "c.yml"))
    section = composite_section(result)
    body = comment_body(board, key="k", title="t", run_url=None, sections=[section]).text
    elapsed = time.perf_counter() - start
    print(
        f"| {models} models × {categories} weighted categories, {len(result.unknown)} unknown "
        f"| {elapsed * 1000:,.0f} ms "
        f"| — | composite section {comment_length(section):,} characters, comment "
        f"{comment_length(body):,} of 65,536 |"
    )


def main() -> None:
    if sys.argv[1:] == ["composite"]:
        composite_sizes()
        return
    print(f"Bounds: id {limits.MAX_ID_LENGTH} characters, input {limits.MAX_INPUT_BYTES:,} bytes, "
          f"bootstrap samples {limits.MAX_BOOTSTRAP_SAMPLES:,}.\n")  # fmt: skip
    print("| Case | Time | Peak (tracemalloc) | Outcome |")
    print("|---|---:|---:|---|")
    measure("FIFO named b.jsonl beside a.jsonl", fifo)
    measure("character device named z.jsonl", device)
    one_loop_old_glob()
    two_loops_old_glob()
    measure("two symlink loops, 16 files, results/**/*.jsonl", loops)
    measure("one file by 4 paths (link, ../, glob)", same_file_many_paths)
    measure("results/**/* through a link to a 1,250-file directory", link_to_big_directory)
    measure("one 10 MB model id", huge_id)
    measure("50 model ids of 1 MiB", fifty_mib_ids)
    measure("20 models × 1,000 tasks, ids of exactly 512", ids_at_the_bound)
    measure("a file 1 byte over the input bound (sparse)", over_the_size_bound)
    measure("100,000 nested [", deep_nesting)
    measure("a 5,000-digit integer in an ignored field", long_integer)
    composite_sizes()


if __name__ == "__main__":
    main()
