"""The baseline lookup: requests, time and the unpack + load of a large artifact.

    python benchmarks/bench_baseline.py

Runs resolve_baseline with the real PyGithub client against tests/fakegithub.py (127.0.0.1), for the
real SWE-bench Verified data of ../shared/realdata as the artifact (when present) and a synthetic
1,000,000-record artifact; prints the requests made and the time taken.
"""

from __future__ import annotations

import io
import json
import sys
import time
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from fakegithub import FakeGitHub  # noqa: E402

from leaderboard.action.baseline import resolve_baseline  # noqa: E402
from leaderboard.action.github_api import make_client  # noqa: E402
from leaderboard.action.settings import parse_settings  # noqa: E402
from leaderboard.baseline import Baseline  # noqa: E402

BASE, HEAD, MERGE_BASE = "b" * 40, "c" * 40, "a" * 40
PAYLOAD = {"number": 7, "pull_request": {"number": 7, "base": {"ref": "main", "sha": BASE}, "head": {"sha": HEAD}}}


def zipped(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def synthetic(records: int) -> bytes:
    models = 50
    lines = (
        json.dumps(
            {
                "model_id": f"org/model-{i % models}",
                "task_id": f"task-{i // models}",
                "metric_name": "acc",
                "score": ((i * 7919) % 1000) / 1000,
            }
        )
        for i in range(records)
    )
    return ("\n".join(lines) + "\n").encode()


def measure(label: str, blob: bytes, newer_runs: int) -> None:
    fake = FakeGitHub().start()
    try:
        fake.merge_bases[(BASE, HEAD)] = MERGE_BASE
        now = datetime.now(UTC)
        stamp = (now - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        for i in range(newer_runs):
            fake.add_run(f"{i:040x}", created_at=stamp, artifacts={"eval": blob})
        fake.add_run(MERGE_BASE, created_at=(now - timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                     artifacts={"eval": blob})  # fmt: skip
        settings = parse_settings(
            {"INPUT_RUNS": "r.jsonl", "INPUT_BASELINE-ARTIFACT": "eval", "GITHUB_REPOSITORY": "octo/evals",
             "GITHUB_API_URL": fake.url, "GITHUB_EVENT_NAME": "pull_request",
             "GITHUB_WORKFLOW_REF": "octo/evals/.github/workflows/leaderboard.yml@refs/pull/7/merge"}
        )  # fmt: skip
        started = time.perf_counter()
        outcome = resolve_baseline(settings, make_client("test-token", fake.url), 7, now, payload=PAYLOAD)
        elapsed = time.perf_counter() - started
        assert isinstance(outcome, Baseline), outcome
        api = [f"{r.method} {r.path.split('/octo/evals', 1)[-1]}" for r in fake.api_calls()]
        print(
            f"{label}: zip {len(blob) / 2**20:.1f} MiB, {len(outcome.runs):,} records, "
            f"merge-base {outcome.is_merge_base}"
        )
        print(f"  {len(api)} API requests + {len(fake.storage_requests)} storage download; {elapsed:.2f} s")
        for line in api:
            print(f"    {line}")
    finally:
        fake.stop()


def main() -> None:
    real = ROOT.parent / "shared" / "realdata"
    if (real / "swebench_verified.jsonl").exists():
        files = {f"results/{p.name}": p.read_bytes() for p in sorted(real.glob("*.jsonl"))}
        measure("real data (mteb_eng_v2 + swebench_verified)", zipped(files), newer_runs=12)
    raw = synthetic(1_000_000)
    measure(f"synthetic 1,000,000 records ({len(raw) / 2**20:.0f} MiB unpacked)", zipped({"r.jsonl": raw}), 0)


if __name__ == "__main__":
    main()
