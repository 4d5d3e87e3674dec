"""Reading harness outputs: time and memory of the lm-evaluation-harness reader against plain json.loads.

    python benchmarks/bench_formats.py                  # 1,000,000 lines (about 0.8 GB of JSON lines)
    python benchmarks/bench_formats.py --lines 100000   # quicker

Target (issue 11): a 1,000,000-line samples file loads in time close to ``json.loads`` of its lines,
and peak memory does not grow with the size of the ``doc``/``resps`` text each line carries.
The lines are shaped as lm_eval 0.4 writes them (the real negotiationtom lines, doc text resized).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_statistics import peak_mib  # one measure of peak memory for every benchmark

from leaderboard import load_runs
from leaderboard.formats import ReadOptions, Session

DATE = "2026-07-08T16-04-34.219874"
TASK = "bench_task"


def write_run(folder: Path, lines: int, doc_bytes: int) -> Path:
    """A results file and a samples file of ``lines`` lines, each with ``doc_bytes`` of doc text."""
    (folder / f"results_{DATE}.json").write_text(
        json.dumps(
            {
                "results": {TASK: {"acc,none": 0.5}},
                "configs": {TASK: {"task": TASK, "metric_list": [{"metric": "acc", "higher_is_better": True}]}},
                "higher_is_better": {TASK: {"acc": True}},
                "versions": {TASK: 0},
                "model_name": "org/model",
            }
        )
    )
    text = ("Background: a negotiation for a camping trip. " * (doc_bytes // 46 + 1))[:doc_bytes]
    samples = folder / f"samples_{TASK}_{DATE}.jsonl"
    with samples.open("w") as out:
        for doc_id in range(lines):
            line = {
                "doc_id": doc_id,
                "doc": json.dumps({"dialogue_id": f"{doc_id}-0", "prompt": text}),
                "target": "3",
                "arguments": {"gen_args_0": {"arg_0": text[: doc_bytes // 2], "arg_1": " 3"}},
                "resps": [[["-10.0", "False"]], [["-17.625", "False"]], [["-21.0", "False"]], [["-17.75", "False"]]],
                "filtered_resps": [["-10.0", "False"], ["-17.625", "False"], ["-21.0", "False"], ["-17.75", "False"]],
                "filter": "none",
                "metrics": ["acc"],
                "doc_hash": "78d0c7332d6aab22db16cd1376eab050f1931d8508d80b728f1c646bc3a5cf6d",
                "prompt_hash": "adf1b4b5beda70ec512d92f8d50d2d8e2f22518eace08914f26abb20347277a7",
                "target_hash": "4e07408562bedb8b60ce05c1decfe3ad16b72230967de01f640b7e4729b49fce",
                "acc": float(doc_id % 3 == 0),
            }
            out.write(json.dumps(line) + "\n")
    return samples


def plain_json(samples: Path) -> None:
    with samples.open(encoding="utf-8") as handle:
        for text in handle:
            json.loads(text)


def reader_only(samples: Path) -> int:
    # As load_runs reads: without the cyclic collector rescanning the records as they pile up.
    gc.disable()
    try:
        return len(Session(ReadOptions()).read(samples, samples.name, []) or [])
    finally:
        gc.enable()


def whole_load(samples: Path) -> int:
    return len(load_runs([str(samples)]))


def timed(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--doc-bytes", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        samples = write_run(folder, args.lines, args.doc_bytes)
        size = samples.stat().st_size / 2**20
        print(f"{args.lines:,} lines, {size:,.0f} MiB, {args.doc_bytes} bytes of doc text a line")
        base = timed(lambda: plain_json(samples), args.repeat)
        read = timed(lambda: reader_only(samples), args.repeat)
        load = timed(lambda: whole_load(samples), args.repeat)
        print(f"json.loads of every line:        {base:6.2f} s")
        print(f"lm-eval reader (records built):  {read:6.2f} s  ({read / base:.2f}x)")
        print(f"load_runs (+ duplicate check):   {load:6.2f} s  ({load / base:.2f}x)")
        print(f"peak memory of load_runs:        {peak_mib(lambda: whole_load(samples)):6.0f} MiB")
        # The same number of lines with 20x the text per line: memory should not follow the text.
        small, large = folder / "small", folder / "large"
        small.mkdir()
        large.mkdir()
        n = min(args.lines, 100_000)
        small_samples = write_run(small, n, args.doc_bytes)
        large_samples = write_run(large, n, args.doc_bytes * 20)
        for label, path in ((f"{args.doc_bytes} B", small_samples), (f"{args.doc_bytes * 20} B", large_samples)):
            mib = path.stat().st_size / 2**20
            print(f"peak memory, {n:,} lines of {label} doc ({mib:,.0f} MiB file): "
                  f"{peak_mib(lambda p=path: whole_load(p)):5.1f} MiB")  # fmt: skip


if __name__ == "__main__":
    main()
