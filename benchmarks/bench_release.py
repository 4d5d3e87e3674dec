"""The time to the first comment: building the action's image in the job, against running the prebuilt one.

    DOCKER_HOST=... python benchmarks/bench_release.py [--reps 2] [--base IMAGE]

Both start from a Docker daemon with no image and no layer cache, as a fresh runner does:

- **cold build**: the base image loaded from a `docker save` archive (the stand-in for pulling it), then
  `docker build --no-cache` of the Dockerfile (its pip install downloads the pinned wheels from the
  package index), then the run;
- **prebuilt**: the action's image loaded from a `docker save` archive (the stand-in for a pull), then
  the run.

The run is the container started as the runner starts it (scripts/container_e2e.py's `docker run`),
posting its comment to the fake GitHub API; it ends when the comment is written. Two artifacts: the bundled
example (6 models x 41 tasks) and 50 models x 10,000 tasks (500,000 records). Prints each phase's time,
the archive sizes (and their gzip sizes, about what a pull transfers) and the image's size.

Needs a running Docker daemon (scripts/container-test.sh starts one and the stand-in base on a machine
without a registry; pass --base to choose the base image).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests"))

from container_e2e import docker_run  # noqa: E402
from fakegithub import FakeGitHub  # noqa: E402

IMAGE = "leaderboard-action:bench"
STANDIN = "leaderboard-action-base:bookworm-standin"
BASE_LAYERS: set[str] = set()


def docker(*args: str, quiet: bool = True) -> str:
    done = subprocess.run(["docker", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"docker {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def timed(*args: str) -> float:
    start = time.perf_counter()
    docker(*args)
    return time.perf_counter() - start


def forget(image: str, base: str | None = None) -> None:
    """Remove the image (and the base) with their layers; `--no-cache` keeps builds off any other layer."""
    subprocess.run(["docker", "rmi", "-f", image], capture_output=True)
    if base is None:
        return
    subprocess.run(["docker", "rmi", "-f", base], capture_output=True)
    left = docker("images", "-q").split()
    layers = set()
    for other in left:
        layers |= set(json.loads(docker("image", "inspect", "--format", "{{json .RootFS.Layers}}", other)) or [])
    if layers & BASE_LAYERS:
        raise SystemExit(
            f"other images ({' '.join(left)}) hold the base's layers, so loading it would cost nothing: remove them"
        )


def gzip_size(path: Path) -> int:
    size = 0
    with path.open("rb") as raw:
        compressor = gzip.compress
        while block := raw.read(1 << 24):
            size += len(compressor(block, compresslevel=6))
    return size


def write_big_artifact(path: Path, models: int = 50, tasks: int = 10_000) -> None:
    rng = np.random.default_rng(0)
    skill = np.linspace(0.55, 0.75, models)
    scores = np.clip(skill[:, None] + 0.15 * rng.standard_normal((models, tasks)), 0, 1)
    with path.open("w") as out:
        for m in range(models):
            for t in range(tasks):
                record = {"model_id": f"model-{m:02d}", "task_id": f"task-{t:05d}", "metric_name": "acc"}
                out.write(json.dumps({**record, "score": round(float(scores[m, t]), 4)}) + "\n")


def first_comment(base: Path, artifact: Path) -> float:
    """One run of the action on a workspace holding only artifact; seconds until it exits with its comment."""
    shutil.rmtree(base, ignore_errors=True)
    for d in ("workspace/results", "commands", "workflow"):
        (base / d).mkdir(parents=True)
    (base / "workflow" / "event.json").write_text(json.dumps({"number": 7, "pull_request": {"number": 7}}))
    shutil.copy(artifact, base / "workspace" / "results" / "runs.jsonl")
    fake = FakeGitHub().start()
    try:
        start = time.perf_counter()
        code, log = docker_run(IMAGE, base, fake.url, "results/*.jsonl")
        elapsed = time.perf_counter() - start
        comments = fake.thread("octo/evals", 7)
    finally:
        fake.stop()
    if code != 0 or len(comments) != 1 or "| Rank | Model |" not in comments[0]["body"]:
        raise SystemExit(f"the run did not write its comment (exit {code}):\n{log[-2000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--base", help="base image (default: the Dockerfile's, else the local stand-in)")
    args = parser.parse_args()
    dockerfile_base = next(
        line.split("=", 1)[1] for line in (ROOT / "Dockerfile").read_text().splitlines() if line.startswith("ARG BASE")
    )
    base_image = args.base or dockerfile_base
    if subprocess.run(["docker", "image", "inspect", base_image], capture_output=True).returncode != 0:
        base_image = STANDIN
    build_args = [] if base_image == dockerfile_base else ["--build-arg", f"BASE_IMAGE={base_image}"]
    build = ["build", "--no-cache", "--network", "host", *build_args, "-t", IMAGE, str(ROOT)]

    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
        work = Path(tmp)
        base_tar, image_tar = work / "base.tar", work / "image.tar"
        example, big = ROOT / "examples" / "mteb-eng-v2-sample.jsonl", work / "big.jsonl"
        write_big_artifact(big)
        docker("save", "-o", str(base_tar), base_image)
        BASE_LAYERS.update(json.loads(docker("image", "inspect", "--format", "{{json .RootFS.Layers}}", base_image)))
        forget(IMAGE)
        docker(*build)
        docker("save", "-o", str(image_tar), IMAGE)
        size = int(docker("image", "inspect", "--format", "{{.Size}}", IMAGE).strip())
        base_size = int(docker("image", "inspect", "--format", "{{.Size}}", base_image).strip())
        print(f"base {base_image}")
        mib = 2**20
        print(f"image {size / mib:.0f} MiB ({(size - base_size) / mib:.0f} MiB over the base's {base_size / mib:.0f})")
        for name, tar in (("base", base_tar), ("image", image_tar)):
            print(f"{name} archive {tar.stat().st_size / 2**20:.0f} MiB, gzip {gzip_size(tar) / 2**20:.0f} MiB")
        print(f"50 x 10,000 artifact {big.stat().st_size / 2**20:.0f} MiB")

        rows: list[tuple[str, int, str, float, float]] = []
        for rep in range(args.reps):
            forget(IMAGE, base_image)
            setup = timed("load", "-i", str(base_tar))
            setup += timed(*build)
            for label, artifact in (("example", example), ("50 x 10,000", big)):
                rows.append(("cold build", rep, label, setup, first_comment(work / "run", artifact)))
            forget(IMAGE, base_image)
            setup = timed("load", "-i", str(image_tar))
            for label, artifact in (("example", example), ("50 x 10,000", big)):
                rows.append(("prebuilt", rep, label, setup, first_comment(work / "run", artifact)))
        # Leave the daemon as it was found: the base (the stand-in included) and the image present.
        docker("load", "-i", str(base_tar))

    header = "| Image | Artifact | Image ready (archive loaded; built) | Run to the comment | Time to the first comment"
    print(f"\n{header} |")
    print("|---|---|---:|---:|---:|")
    for kind in ("cold build", "prebuilt"):
        for label in ("example", "50 x 10,000"):
            mine = [r for r in rows if r[0] == kind and r[2] == label]
            setups, runs, totals = (
                [f(r) for r in mine] for f in (lambda r: r[3], lambda r: r[4], lambda r: r[3] + r[4])
            )
            print(f"| {kind} | {label} | {span(setups)} | {span(runs)} | {span(totals)} |")
    return 0


def span(values: list[float]) -> str:
    low, high = min(values), max(values)
    return f"{low:.1f} s" if f"{low:.1f}" == f"{high:.1f}" else f"{low:.1f}–{high:.1f} s"


if __name__ == "__main__":
    sys.exit(main())
