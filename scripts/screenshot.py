"""Render PR comments as GitHub does and screenshot them for the README and for review.

    python scripts/screenshot.py                  # writes docs/comment*.png
    python scripts/screenshot.py history          # only docs/comment-history.png
    python scripts/screenshot.py --out /tmp/shots # elsewhere (to compare a change's before and after)

Each comment is the CLI's ``--comment`` body, so it is byte for byte what the action posts:
a baseline where one model of SWE-bench Verified drops 3 points with the gate on (the
README's picture, collapsed as a reviewer first sees it, and expanded), the same with
nothing changed, the bundled example, failing required tasks, and the composite ranking.
SWE-bench comes from ../shared/realdata (or LEADERBOARD_REALDATA); without it those are skipped.
The history's comment is the action's, made in process from the base runs the history tests build
(``tests/history_runs.py``): ten earlier runs on `main`, one expired and one with a model renamed.
Markdown -> HTML with cmark-gfm (GitHub's engine, its tag filter on), styled like a
GitHub comment, photographed by headless Chromium (Debian's `chromium`); the blank
space below the comment is cropped when Pillow is installed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import cmarkgfm
from cmarkgfm.cmark import Options

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the data the tests make

from generators import swebench_with_a_drop  # noqa: E402
from history_runs import records  # noqa: E402

from leaderboard import EvalRun  # noqa: E402
from leaderboard.baseline import Baseline  # noqa: E402
from leaderboard.pipeline import Options as RunOptions  # noqa: E402
from leaderboard.pipeline import run  # noqa: E402
from leaderboard.report.baseline import describe_markdown  # noqa: E402
from leaderboard.report.comparison import TITLE  # noqa: E402
from leaderboard.report.document import Commit, comment_body  # noqa: E402
from leaderboard.report.plan import Compared, plan  # noqa: E402
from leaderboard.stats.history import EXPIRED, Earlier, coverage_of, run_scores  # noqa: E402

# ../shared/realdata beside the repository, or where LEADERBOARD_REALDATA says.
REALDATA = Path(os.environ.get("LEADERBOARD_REALDATA") or ROOT.parent / "shared" / "realdata")
CSS = """
body { margin: 0; background: #fff; }
.comment { width: 920px; margin: 16px; border: 1px solid #d0d7de; border-radius: 6px;
  font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; color: #1f2328; }
.header { background: #f6f8fa; border-bottom: 1px solid #d0d7de; padding: 8px 16px; color: #59636e;
  border-radius: 6px 6px 0 0; }
.header b { color: #1f2328; }
.body { padding: 16px; }
h2 { font-size: 1.5em; border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; margin-top: 0; }
h3 { font-size: 1.25em; margin: 24px 0 16px; }
table { border-collapse: collapse; margin-bottom: 16px; display: block; overflow: auto; }
th, td { border: 1px solid #d1d9e0; padding: 6px 13px; }
th { font-weight: 600; }
tr:nth-child(2n) { background: #f6f8fa; }
code { font: 85% ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #818b981f;
  padding: .2em .4em; border-radius: 6px; }
ul { padding-left: 2em; }
sub { color: #59636e; }
a { color: #0969da; text-decoration: none; }
details { margin-bottom: 16px; }
summary { cursor: pointer; font-weight: 600; }
.markdown-alert { border-left: .25em solid #0969da; padding: .5rem 1rem; margin-bottom: 16px; }
.markdown-alert p { margin: 0; }
.markdown-alert-title { font-weight: 500; margin-bottom: 4px !important; }
.markdown-alert-note { border-left-color: #0969da; }
.markdown-alert-note .markdown-alert-title { color: #0969da; }
.markdown-alert-warning { border-left-color: #9a6700; }
.markdown-alert-warning .markdown-alert-title { color: #9a6700; }
.markdown-alert-caution { border-left-color: #cf222e; }
.markdown-alert-caution .markdown-alert-title { color: #cf222e; }
"""
# GitHub renders "> [!NOTE]" blockquotes as alerts; cmark-gfm leaves the marker as text.
ALERT = re.compile(r"<blockquote>\n<p>\[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]\n(.*?)</blockquote>", re.S)


def alerts(html: str) -> str:
    return ALERT.sub(
        lambda m: (
            f"<div class='markdown-alert markdown-alert-{m[1].lower()}'>"
            f"<p class='markdown-alert-title'>{m[1].title()}</p><p>{m[2]}</div>"
        ),
        html,
    )


OUT = ROOT / "docs"


def shoot(body: str, name: str, *, expanded: bool = False, height: int = 4000) -> Path:
    html = alerts(cmarkgfm.github_flavored_markdown_to_html(body, options=Options.CMARK_OPT_UNSAFE))
    if expanded:
        html = html.replace("<details>", "<details open>")
    page = (
        f"<!doctype html><html><head><meta charset='utf-8'><style>{CSS}</style></head><body>"
        "<div class='comment'><div class='header'><b>github-actions</b> <span>bot</span> commented</div>"
        f"<div class='body'>{html}</div></div></body></html>"
    )
    out = OUT / name
    with tempfile.TemporaryDirectory() as profile:
        html_file = Path(profile) / "comment.html"
        html_file.write_text(page, encoding="utf-8")
        subprocess.run(
            [
                "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--hide-scrollbars", f"--user-data-dir={profile}", f"--window-size=960,{height}",
                f"--screenshot={out}", html_file.as_uri(),
            ],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
    _crop(out)
    print(f"wrote {out}")
    return out


def _crop(path: Path) -> None:
    try:
        from PIL import Image, ImageChops
    except ImportError:  # optional: without Pillow the picture keeps its blank bottom
        return
    image = Image.open(path).convert("RGB")
    box = ImageChops.difference(image, Image.new("RGB", image.size, (255, 255, 255))).getbbox()
    if box:
        image.crop((0, 0, image.width, min(image.height, box[3] + 16))).save(path)


EXAMPLE = ROOT / "examples" / "mteb-eng-v2-sample.jsonl"
AGENT = ROOT / "examples" / "agent-suite"


def comment(*args: str) -> str:
    """The comment the action would post for these CLI arguments."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "comment.md"
        subprocess.run(
            [sys.executable, "-m", "leaderboard", *args, "--comment", str(out)], cwd=ROOT, capture_output=True,
            timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        return out.read_text(encoding="utf-8").replace(str(REALDATA.parent), "…")


EARLIER_RUNS = 10
EXPIRED_RUN = 6  # oldest first: its artifact has expired, so the history reads nine runs
RENAMED_RUN = 4  # org/beta ran as org/beta-v2: its stretch with the same id starts after this run
SERVER = "https://github.com/org/repo"


def evalruns(lines: str) -> list[EvalRun]:
    return [EvalRun(**json.loads(line)) for line in lines.splitlines()]


def with_history() -> str:
    """The action's comment for the pull request's run of the history tests' suite, against the newest of ten
    earlier runs on `main`, with the other runs as its history."""
    earlier = [evalruns(records(k, renamed=k == RENAMED_RUN)) for k in range(EARLIER_RUNS)]
    read = tuple(
        run_scores(f"{k + 1:x}" * 40, f"2026-11-{20 + k}T08:00:00Z", e)
        for k, e in enumerate(earlier)
        if k != EXPIRED_RUN
    )
    history = Earlier(read, coverage_of(EARLIER_RUNS, EARLIER_RUNS, len(read), {EXPIRED: 1}), "main")
    base = earlier[-1]
    outcome = run(RunOptions(), evalruns(records(EARLIER_RUNS, pull_request=True)), baseline=base, history=history)
    sha = f"{EARLIER_RUNS:x}" * 40
    origin = Baseline(
        runs=tuple(base), origin="artifact", branch="main", sha=sha, sha_url=f"{SERVER}/commit/{sha}", run_id=118,
        run_url=f"{SERVER}/actions/runs/118", is_merge_base=True, age_days=1.0, artifact="eval-results",
    )  # fmt: skip
    sections = plan(outcome, baseline=Compared(describe_markdown(origin), TITLE))
    return comment_body(
        outcome.board, key="leaderboard", title="Evals", run_url=f"{SERVER}/actions/runs/119",
        commit=Commit("3f2a9c1d5e7b8a6c4d2e0f1a3b5c7d9e1f2a4b6c", f"{SERVER}/commit/3f2a9c1"),
        sections=sections.comment, framing=sections.framing,
    ).text  # fmt: skip


def history_shots() -> None:
    shoot(with_history(), "comment-history.png", height=3000)


def comments() -> None:
    swebench = REALDATA / "swebench_verified.jsonl"
    if swebench.exists():
        with tempfile.TemporaryDirectory() as tmp:
            head = swebench_with_a_drop(swebench, Path(tmp) / "head.jsonl")
            gate = comment(
                str(head), "--baseline", str(swebench), "--fail-on-regression", "--title", "SWE-bench Verified"
            )
        shoot(gate, "comment.png", height=1600)
        shoot(gate, "comment-expanded.png", expanded=True, height=16000)
        green = comment(
            str(swebench), "--baseline", str(swebench), "--fail-on-regression", "--title", "SWE-bench Verified"
        )
        shoot(green, "comment-green.png", height=1200)
    shoot(comment(str(EXAMPLE)), "comment-example.png", height=1200)
    required = comment(str(EXAMPLE), "--required-tasks", "ArguAna,STS1*", "--required-score", "0.6")
    shoot(required, "comment-required.png", height=1400)
    composite = comment(str(AGENT / "runs.jsonl"), "--config", str(AGENT / "leaderboard.yml"))
    shoot(composite, "comment-composite.png", height=1600)


def main() -> None:
    global OUT
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", nargs="?", choices=("all", "history"), default="all")
    parser.add_argument("--out", type=Path, default=OUT, help="the folder the pictures go to (default: docs/)")
    args = parser.parse_args()
    OUT = args.out
    OUT.mkdir(parents=True, exist_ok=True)
    if args.mode == "all":
        comments()
    history_shots()


if __name__ == "__main__":
    main()
