"""Run the built image exactly as the runner runs a Docker action, against the fake GitHub API.

    python scripts/container_e2e.py IMAGE

The runner mounts the workspace at /github/workspace (the working directory),
its file-command directory at /github/file_commands and the event at
/github/workflow/event.json, and passes inputs as INPUT_<NAME> with hyphens
kept. The fake API listens on the host's loopback; the container shares the
host network, so GITHUB_API_URL reaches it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fakegithub import FakeGitHub  # noqa: E402
from runner_env import TOKEN, runner_env  # noqa: E402


def docker_run(image: str, base: Path, api_url: str, runs: str, **inputs: str) -> tuple[int, str]:
    (base / "commands" / "output").write_text("")
    (base / "commands" / "summary").write_text("")
    env = runner_env(
        workspace="/github/workspace", event_path="/github/workflow/event.json",
        output="/github/file_commands/output", summary="/github/file_commands/summary", api_url=api_url,
        runs=runs, CI="true", **inputs,
    )  # fmt: skip
    command = ["docker", "run", "--rm", "--network", "host", "--workdir", "/github/workspace"]
    command += ["-v", f"{base / 'workspace'}:/github/workspace", "-v", f"{base / 'commands'}:/github/file_commands"]
    command += ["-v", f"{base / 'workflow'}:/github/workflow"]
    for name in env:
        command += ["-e", name]  # by name, as the runner does: values come from the environment
    client_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "DOCKER_HOST": os.environ.get("DOCKER_HOST", "")}
    done = subprocess.run([*command, image], env={**env, **client_env}, capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout + done.stderr


def main() -> int:
    image = sys.argv[1]
    fake = FakeGitHub().start()
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for d in ("workspace/results", "commands", "workflow"):
            (base / d).mkdir(parents=True)
        (base / "workflow" / "event.json").write_text(json.dumps({"number": 7, "pull_request": {"number": 7}}))
        shutil.copy(ROOT / "examples" / "mteb-eng-v2-sample.jsonl", base / "workspace" / "results" / "mteb.jsonl")

        code, log = docker_run(image, base, fake.url, "results/*.jsonl")
        print(log)
        comments = fake.thread("octo/evals", 7)
        outputs = (base / "commands" / "output").read_text()
        if code != 0:
            failures.append(f"valid run exited {code}")
        if len(comments) != 1 or "| Rank | Model |" not in comments[0]["body"]:
            failures.append(f"expected one leaderboard comment, found {len(comments)}")
        if "report=.leaderboard/leaderboard/report.json" not in outputs:
            failures.append(f"outputs missing the report path: {outputs!r}")
        if not (base / "workspace" / ".leaderboard" / "leaderboard" / "report.json").is_file():
            failures.append("the JSON report was not written into the workspace")
        if TOKEN in log.replace(f"::add-mask::{TOKEN}", ""):
            failures.append("the token appeared in the log")

        code, log = docker_run(image, base, fake.url, "results/*.jsonl")
        if (
            code != 0
            or len(fake.thread("octo/evals", 7)) != 1
            or fake.writes() != ["POST /repos/octo/evals/issues/7/comments"]
        ):
            failures.append(f"a second identical run wrote again: {fake.writes()}")

        (base / "workspace" / "results" / "bad.jsonl").write_text(
            '{"model_id": "m", "task_id": "t", "metric_name": "acc", "score": 1.5}\n'
        )
        code, log = docker_run(image, base, fake.url, "results/*.jsonl")
        print(log)
        if code != 1 or "::error file=results/bad.jsonl,line=1," not in log or "Traceback" in log:
            failures.append(f"invalid data: exit {code}, annotations missing or a traceback shown")
        if "rejected" not in fake.thread("octo/evals", 7)[0]["body"]:
            failures.append("the comment was not marked as rejected")

        # A harness's own output, Zstandard-compressed zip members included: the image has the reader's deps.
        shutil.copytree(ROOT / "examples" / "formats" / "inspect_ai", base / "workspace" / "inspect_logs")
        code, log = docker_run(image, base, fake.url, "inspect_logs/**", comment="off")
        print(log)
        if code != 0 or "inspect ×2 (10 records, metric match)" not in log or "1 unscored sample" not in log:
            failures.append(f"Inspect logs (one with zstd members): exit {code}, or the read summary is missing")
    fake.stop()
    for failure in failures:
        print(f"CONTAINER TEST FAILED: {failure}")
    if not failures:
        print(
            "container test passed: built image ran as the runner runs it; one comment; annotations on bad data; "
            "Inspect logs read"
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
