"""Render the example's PR comment as GitHub does and screenshot it for the README.

    python scripts/screenshot.py            # writes docs/comment.png

Markdown -> HTML with cmark-gfm (GitHub's engine, its tag filter on), styled like
a GitHub comment, photographed by headless Chromium (Debian's `chromium`).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import cmarkgfm
from cmarkgfm.cmark import Options

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from leaderboard import analyse, load_runs  # noqa: E402
from leaderboard.report.document import comment_body  # noqa: E402

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
.markdown-alert { border-left: .25em solid #0969da; padding: .5rem 1rem; margin-bottom: 16px; }
"""


def main() -> None:
    runs = load_runs([str(ROOT / "examples" / "mteb-eng-v2-sample.jsonl")])
    board = analyse(runs)
    body = comment_body(
        board, key="leaderboard", title="Model leaderboard", run_url="https://github.com/org/repo/actions/runs/1"
    ).text
    html = cmarkgfm.github_flavored_markdown_to_html(body, options=Options.CMARK_OPT_UNSAFE)
    page = (
        f"<!doctype html><html><head><meta charset='utf-8'><style>{CSS}</style></head><body>"
        "<div class='comment'><div class='header'><b>github-actions</b> <span>bot</span> commented</div>"
        f"<div class='body'>{html}</div></div></body></html>"
    )
    docs = ROOT / "docs"
    with tempfile.TemporaryDirectory() as profile:
        html_file = Path(profile) / "comment.html"
        html_file.write_text(page, encoding="utf-8")
        subprocess.run(
            [
                "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--hide-scrollbars", f"--user-data-dir={profile}", "--window-size=960,1900",
                f"--screenshot={docs / 'comment.png'}", html_file.as_uri(),
            ],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
    print(f"wrote {docs / 'comment.png'}")


if __name__ == "__main__":
    main()
