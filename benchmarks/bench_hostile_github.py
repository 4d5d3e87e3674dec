"""Time and memory of issue 17's resource cases: archive bombs in an Inspect log, and GitHub (or its
artifact storage) answering slowly, never settling, or asking for an hour.

    python benchmarks/bench_hostile_github.py            # everything, with the action's real limits (~2 min)
    python benchmarks/bench_hostile_github.py bombs      # only the bombs

Bombs: each case is one ``load_runs`` of a ``.eval`` log in a fresh process, whose peak resident
memory (``ru_maxrss``) is printed beside that of a process that only imports the package. A member
inflating to 2 GiB is written with honest sizes, with lying ones (declaring 1,000 bytes), and
declaring just under the 512 MiB member limit; deflate and Zstandard alike.

GitHub: the fake GitHub of the tests (tests/fakegithub.py) driven by the real PyGithub, with the
action's own limits (25 s a call, 60 s a download): wall time until each case ends, and how.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import zstandard

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the fake GitHub and the hand-written zips

from generators import raw_zip  # noqa: E402

GIB = 2**30
CHUNK = 2**20


def zeros(total: int) -> Iterator[bytes]:
    block = bytes(CHUNK)
    for _ in range(total // CHUNK):
        yield block


def deflated(total: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    return b"".join(packer.compress(b) for b in zeros(total)) + packer.flush()


def zstd(total: int) -> bytes:
    packer = zstandard.ZstdCompressor(level=3).compressobj()
    return b"".join(packer.compress(b) for b in zeros(total)) + packer.flush()


def crc_of_zeros(total: int) -> int:
    crc = 0
    for block in zeros(total):
        crc = zlib.crc32(block, crc)
    return crc


def eval_log(method: int, sample: bytes, declared: int, crc: int) -> bytes:
    header = json.dumps({"eval": {"model": "m", "task": "t", "scorers": [{"name": "s"}]}}).encode()
    return raw_zip([
        ("header.json", 0, header, len(header), zlib.crc32(header)),
        ("samples/1_epoch_1.json", method, sample, declared, crc),
    ])  # fmt: skip


PROBE = """
import resource, sys
from leaderboard import InvalidEvalRuns, load_runs
if sys.argv[1] != "-":
    try:
        load_runs([sys.argv[1]])
        print("loaded")
    except InvalidEvalRuns as exc:
        print(str(exc.problems[0])[-100:])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def peak(path: str) -> tuple[float, str, float]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PROBE, path], capture_output=True, text=True, cwd=ROOT, check=True)
    lines = done.stdout.strip().splitlines()
    return int(lines[-1]) / 1024, (lines[0] if len(lines) > 1 else ""), time.perf_counter() - start


def bombs() -> None:
    size = 2 * GIB
    print("| bomb (a member inflating to 2 GiB) | peak RSS | wall | outcome |\n|---|---|---|---|")
    idle, _, _ = peak("-")
    print(f"| (a process that only imports the package) | {idle:,.0f} MiB | | |")
    crc = crc_of_zeros(size)
    streams = {"deflate": (8, deflated(size)), "zstd": (93, zstd(size))}
    with tempfile.TemporaryDirectory() as tmp:
        for method_name, (method, data) in streams.items():
            for how, declared in (("honest sizes", size), ("declaring 1,000 bytes", 1000),
                                  ("declaring 511 MiB", 511 * 2**20)):  # fmt: skip
                path = Path(tmp) / f"{method_name}-{declared}.eval"
                path.write_bytes(eval_log(method, data, declared, crc))
                rss, outcome, wall = peak(str(path))
                print(f"| {method_name}, {len(data):,} bytes compressed, {how} | {rss:,.0f} MiB | {wall:.1f} s | "
                      f"{outcome} |", flush=True)  # fmt: skip


def github_cases() -> None:
    from datetime import UTC, datetime

    from fakegithub import FakeGitHub, Fault

    from leaderboard.action.baseline import resolve_baseline
    from leaderboard.action.github_api import CommentThread, GitHubUnavailable, make_client
    from leaderboard.action.settings import parse_settings
    from leaderboard.baseline import NoBaseline

    def thread(fake: FakeGitHub) -> CommentThread:
        return CommentThread(make_client("test-token", fake.url), "octo/evals", 7, "leaderboard")

    def upsert(fake: FakeGitHub) -> str:
        try:
            return thread(fake).upsert("<!-- leaderboard -->\nbody").action
        except GitHubUnavailable as exc:
            return f"GitHubUnavailable: {exc}"

    def lookup(fake: FakeGitHub) -> str:
        sha = "a" * 40
        fake.merge_bases[("b" * 40, "c" * 40)] = sha
        blob = (ROOT / "tests" / "golden").exists() and (ROOT / "examples" / "mteb-eng-v2-sample.jsonl").read_bytes()
        import io
        import zipfile

        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("results/a.jsonl", blob or b"")
        fake.add_run(sha, created_at="2026-11-30T00:00:00Z", artifacts={"eval-results": buffer.getvalue()})
        settings = parse_settings({
            "INPUT_RUNS": "r.jsonl", "INPUT_BASELINE-ARTIFACT": "eval-results", "GITHUB_REPOSITORY": "octo/evals",
            "GITHUB_API_URL": fake.url, "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_WORKFLOW_REF": "octo/evals/.github/workflows/leaderboard.yml@refs/pull/7/merge",
        })  # fmt: skip
        payload = {"pull_request": {"number": 7, "base": {"ref": "main", "sha": "b" * 40}, "head": {"sha": "c" * 40}}}
        outcome = resolve_baseline(settings, make_client("test-token", fake.url), 7, datetime.now(UTC), payload=payload)
        return f"no baseline: {outcome.reason}" if isinstance(outcome, NoBaseline) else "baseline found"

    def trickled_comments(fake: FakeGitHub) -> None:
        for i in range(3):
            fake.add_comment("octo/evals", 7, f"review note {i}", login="reviewer")
        fake.trickle.append((r".*/comments", 1.0))

    cases: list[tuple[str, Callable[[FakeGitHub], None], Callable[[FakeGitHub], str]]] = [
        ("comments list (3 comments) at 1 byte/s", trickled_comments, upsert),
        ("the comment's create at 1 byte/s, then the list looked at again",
         lambda f: f.trickle.append((r".*/comments", 1.0)), upsert),
        ("comments list answering 202 forever", lambda f: f.faults.append(Fault("GET", ".*/comments", 202, 10**6)),
         upsert),
        ("comments list 403 + Retry-After: 3600",
         lambda f: f.faults.append(Fault("GET", ".*/comments", 403, 10**6, {"Retry-After": "3600"})), upsert),
        ("comments list 429 + Retry-After: 3600",
         lambda f: f.faults.append(Fault("GET", ".*/comments", 429, 10**6, {"Retry-After": "3600"})), upsert),
        ("comments list 503 + Retry-After: 3600",
         lambda f: f.faults.append(Fault("GET", ".*/comments", 503, 10**6, {"Retry-After": "3600"})), upsert),
        ("run list answering 202 forever", lambda f: f.faults.append(Fault("GET", ".*/runs", 202, 10**6)), lookup),
        ("artifact storage at 1 byte/s", lambda f: f.trickle.append((r"/storage/.*", 1.0)), lookup),
    ]  # fmt: skip
    print("\n| GitHub case | wall until it ends | outcome |\n|---|---|---|")
    for name, arrange, act in cases:
        fake = FakeGitHub().start()
        try:
            arrange(fake)
            start = time.perf_counter()
            outcome = act(fake)
            print(f"| {name} | {time.perf_counter() - start:.1f} s | {outcome[:120]} |", flush=True)
        finally:
            fake.stop()


def main() -> None:
    which = sys.argv[1:] or ["bombs", "github"]
    if "bombs" in which:
        bombs()
    if "github" in which:
        github_cases()
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\n(peak RSS of this benchmark's own process: {own:,.0f} MiB)")


if __name__ == "__main__":
    main()
