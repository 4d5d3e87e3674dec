"""Render PR comments as GitHub does and screenshot them for the README and for review.

    python scripts/screenshot.py            # writes docs/comment*.png

Each comment is the CLI's ``--comment`` body, so it is byte for byte what the action posts:
a baseline where one model of SWE-bench Verified drops 3 points with the gate on (the
README's picture, collapsed as a reviewer first sees it, and expanded), the same with
nothing changed, the bundled example, failing required tasks, and the composite ranking.
SWE-bench comes from ../shared/realdata (or LEADERBOARD_REALDATA); without it those are skipped.
Markdown -> HTML with cmark-gfm (GitHub's engine, its tag filter on), styled like a
GitHub comment, photographed by headless Chromium (Debian's `chromium`); the blank
space below the comment is cropped when Pillow is installed.
"""

from __future__ import annotations

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


def shoot(body: str, name: str, *, expanded: bool = False, height: int = 4000) -> Path:
    html = alerts(cmarkgfm.github_flavored_markdown_to_html(body, options=Options.CMARK_OPT_UNSAFE))
    if expanded:
        html = html.replace("<details>", "<details open>")
    page = (
        f"<!doctype html><html><head><meta charset='utf-8'><style>{CSS}</style></head><body>"
        "<div class='comment'><div class='header'><b>github-actions</b> <span>bot</span> commented</div>"
        f"<div class='body'>{html}</div></div></body></html>"
    )
    out = ROOT / "docs" / name
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


def main() -> None:
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


if __name__ == "__main__":
    main()
