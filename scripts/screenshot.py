"""Render PR comments as GitHub does and screenshot them for the README and for review.

    python scripts/screenshot.py            # writes docs/*.png

    python scripts/screenshot.py history    # only the history's: docs/comment-history.png, docs/summary-chart.png

Three comments: the bundled example (collapsed, as a reviewer first sees it, and with
every <details> opened), SWE-bench Verified from ../shared/realdata (12 models whose ids
share long prefixes, the top two one instance apart), and a synthetic 60-model suite.
Markdown -> HTML with cmark-gfm (GitHub's engine, its tag filter on), styled like a
GitHub comment, photographed by headless Chromium (Debian's `chromium`); the blank
space below the comment is cropped when Pillow is installed. The job summary's Mermaid chart is drawn by
mermaid.min.js (the npm package ``mermaid``) when MERMAID_JS names that file: GitHub draws it in the page.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import cmarkgfm
import numpy as np
from cmarkgfm.cmark import Options

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from leaderboard import EvalRun, analyse, load_runs  # noqa: E402
from leaderboard.baseline import Baseline  # noqa: E402
from leaderboard.config import read_config  # noqa: E402
from leaderboard.pipeline import Options as RunOptions  # noqa: E402
from leaderboard.pipeline import evaluate, run  # noqa: E402
from leaderboard.report.baseline import describe_markdown  # noqa: E402
from leaderboard.report.comparison import comment_section  # noqa: E402
from leaderboard.report.composite import ACCURACY_HEADING, composite_section, composite_verdict  # noqa: E402
from leaderboard.report.document import Commit, comment_body, summary_markdown  # noqa: E402
from leaderboard.report.plan import Compared, plan  # noqa: E402
from leaderboard.report.task_changes import comment_section as tasks_section  # noqa: E402
from leaderboard.report.task_changes import required_markdown  # noqa: E402
from leaderboard.required import check_required  # noqa: E402
from leaderboard.stats.comparison import compare  # noqa: E402
from leaderboard.stats.history import Earlier, coverage_of, run_scores  # noqa: E402
from leaderboard.stats.task_changes import task_changes  # noqa: E402

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


MERMAID_BLOCK = re.compile(
    r'<pre lang="mermaid"><code>(.*?)</code></pre>|<pre><code class="language-mermaid">(.*?)</code></pre>', re.S
)


def shoot(body: str, name: str, *, expanded: bool = False, height: int = 4000, mermaid: str | None = None) -> Path:
    html = alerts(cmarkgfm.github_flavored_markdown_to_html(body, options=Options.CMARK_OPT_UNSAFE))
    if expanded:
        html = html.replace("<details>", "<details open>")
    script = ""
    if mermaid is not None:  # drawn in the page, as GitHub does (the text stays escaped: Mermaid reads textContent)
        html = MERMAID_BLOCK.sub(lambda m: f"<pre class='mermaid'>{m[1] or m[2]}</pre>", html)
        script = (
            f"<script src='{Path(mermaid).as_uri()}'></script>"
            "<script>mermaid.initialize({startOnLoad: true, theme: 'default'});</script>"
        )
    page = (
        f"<!doctype html><html><head><meta charset='utf-8'><style>{CSS}</style></head><body>"
        "<div class='comment'><div class='header'><b>github-actions</b> <span>bot</span> commented</div>"
        f"<div class='body'>{html}</div></div>{script}</body></html>"
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
                "--allow-file-access-from-files", "--virtual-time-budget=10000",
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


def body_for(runs_path: Path, title: str) -> str:
    board = analyse(load_runs([str(runs_path)]))
    return comment_body(
        board,
        key="leaderboard",
        title=title,
        run_url="https://github.com/org/repo/actions/runs/1",
        commit=Commit("3f2a9c1d5e7b8a6c4d2e0f1a3b5c7d9e1f2a4b6c", "https://github.com/org/repo/commit/3f2a9c1"),
    ).text


def synthetic(models: int, tasks: int) -> list[EvalRun]:
    rng = np.random.default_rng(7)
    skill = np.sort(rng.uniform(0.45, 0.75, models))[::-1]
    return [
        EvalRun(
            f"vendor-{m % 7}/model-{m:02d}-instruct",
            f"task-{t:03d}",
            "acc",
            float(rng.random() < skill[m]),
            f"area-{t % 6}",
        )
        for m in range(models)
        for t in range(tasks)
    ]


def with_baseline() -> str:
    """The example against itself as the base branch's artifact, two models changed by the PR."""
    base = load_runs([str(ROOT / "examples" / "mteb-eng-v2-sample.jsonl")])
    moved = {"intfloat/e5-base-v2": -0.02, "BAAI/bge-large-en-v1.5": +0.025}
    pr = [replace(r, score=min(1.0, max(0.0, r.score + moved.get(r.model_id, 0.0)))) for r in base]
    board = analyse(pr)
    comparison = compare(base, pr, b=board.b, alpha=board.alpha, seed=board.seed)
    origin = Baseline(
        runs=tuple(base), origin="artifact", branch="main", sha="9f8e7d6c5b4a39281706f5e4d3c2b1a098765432",
        sha_url="https://github.com/org/repo/commit/9f8e7d6", run_id=118, run_url="https://github.com/org/repo/actions/runs/118",
        created_at=datetime(2026, 11, 29, tzinfo=UTC), is_merge_base=True, age_days=1.0, artifact="eval-results",
    )  # fmt: skip
    section = comment_section(comparison, describe_markdown(origin))
    moved_tasks = tasks_section(task_changes(base, pr), comparison)
    return comment_body(
        board, key="leaderboard", title="Model leaderboard", run_url="https://github.com/org/repo/actions/runs/1",
        commit=Commit("3f2a9c1d5e7b8a6c4d2e0f1a3b5c7d9e1f2a4b6c", "https://github.com/org/repo/commit/3f2a9c1"),
        sections=[section, moved_tasks],
    ).text  # fmt: skip


SWE_REGRESSED = "20251124_mini-v1.16.0_claude-opus-4-5-20251101"
SWE_IMPROVED = "20250807_mini-v1.7.0_gpt-5"
SWE_FLAKY = "20251118_mini-v1.15.0_gemini-3-pro-preview-20251118"


def swebench_flips(base: list[EvalRun]) -> list[EvalRun]:
    """The PR's run: one model loses 14 instances and gains 3, one gains 12, one is re-run three times on
    20 instances, of which it now passes some in only one or two trials (flaky flips)."""
    rng = np.random.default_rng(16)
    out: list[EvalRun] = []
    by_model: dict[str, list[EvalRun]] = {}
    for r in base:
        by_model.setdefault(r.model_id, []).append(r)
    for model, records in sorted(by_model.items()):
        records = sorted(records, key=lambda r: r.task_id)
        passed = [k for k, r in enumerate(records) if r.score == 1.0]
        failed = [k for k, r in enumerate(records) if r.score == 0.0]
        flip: set[int] = set()
        if model == SWE_REGRESSED:
            flip = set(rng.choice(passed, 14, replace=False)) | set(rng.choice(failed, 3, replace=False))
        elif model == SWE_IMPROVED:
            flip = set(rng.choice(failed, 12, replace=False))
        rerun = set(rng.choice(len(records), 20, replace=False)) if model == SWE_FLAKY else set()
        for k, r in enumerate(records):
            score = 1.0 - r.score if k in flip else r.score
            if k in rerun:
                trials = [score, score, score]
                trials[int(rng.integers(3))] = 1.0 - score if rng.random() < 0.6 else score
                out += [replace(r, score=t, trial=n) for n, t in enumerate(trials)]
            else:
                out.append(replace(r, score=score))
    return out


def with_task_changes(swebench: Path) -> str:
    """SWE-bench Verified against itself as the base branch, with flips: which tasks moved, and required tasks."""
    base = load_runs([str(swebench)])
    pr = swebench_flips(base)
    board = analyse(pr)
    comparison = compare(base, pr, b=board.b, alpha=board.alpha, seed=board.seed)
    origin = Baseline(
        runs=tuple(base), origin="artifact", branch="main", sha="9f8e7d6c5b4a39281706f5e4d3c2b1a098765432",
        sha_url="https://github.com/org/repo/commit/9f8e7d6", run_id=118, run_url="https://github.com/org/repo/actions/runs/118",
        created_at=datetime(2026, 11, 29, tzinfo=UTC), is_merge_base=True, age_days=1.0, artifact="eval-results",
    )  # fmt: skip
    required = check_required(pr, ["astropy__astropy-12907", "django__django-11099", "django__django-12754"])
    sections = [
        required_markdown(required),
        comment_section(comparison, describe_markdown(origin)),
        tasks_section(task_changes(base, pr), comparison),
    ]
    return comment_body(
        board, key="leaderboard", title="SWE-bench Verified", run_url="https://github.com/org/repo/actions/runs/1",
        commit=Commit("3f2a9c1d5e7b8a6c4d2e0f1a3b5c7d9e1f2a4b6c", "https://github.com/org/repo/commit/3f2a9c1"),
        sections=sections,
    ).text  # fmt: skip


def with_composite() -> str:
    """The agent suite ranked by its configuration: the composite, DISQUALIFIED rows, the too-close sentence."""
    suite = ROOT / "examples" / "agent-suite"
    config = read_config(suite / "leaderboard.yml")
    board, result = evaluate(load_runs([str(suite / "runs.jsonl")]), config)
    assert result is not None
    return comment_body(
        board, key="leaderboard", title="Agent suite", run_url=None,
        sections=[composite_section(result), ACCURACY_HEADING], lead=composite_verdict(result),
    ).text  # fmt: skip


def history_runs(base: list[EvalRun], runs: int = 10) -> list[list[EvalRun]]:
    """Earlier runs on main, oldest first: the same results re-run, 4% of the instances redrawn each time
    (agents are not deterministic), one model renamed in one run, one model improving slowly."""
    rng = np.random.default_rng(26)
    tasks = sorted({r.task_id for r in base})
    flaky = set(rng.choice(tasks, len(tasks) // 25, replace=False).tolist())
    out = []
    for k in range(runs):
        run_k = []
        for r in base:
            score = r.score
            if r.task_id in flaky:
                score = float(rng.random() < 0.5)
            elif r.model_id == SWE_IMPROVED and score == 0.0 and rng.random() < 0.01 * (runs - k):
                score = 1.0  # it was better before: the steady drift a trend shows
            model = r.model_id + "-rerun" if k == 4 and r.model_id == SWE_FLAKY else r.model_id
            run_k.append(replace(r, model_id=model, score=score))
        out.append(run_k)
    return out


def with_history(swebench: Path) -> tuple[str, str]:
    """SWE-bench Verified with ten earlier runs on main (one expired): the comment and the job summary."""
    base = load_runs([str(swebench)])
    earlier = history_runs(base)
    pr = swebench_flips(earlier[-1])
    runs = tuple(run_scores(f"{k:x}" * 40, f"2026-11-{20 + k}T08:00:00Z", e)
                 for k, e in enumerate(earlier) if k != 6)  # fmt: skip
    history = Earlier(runs, coverage_of(10, 10, 9, {"expired": 1}), "main")
    outcome = run(RunOptions(), pr, baseline=earlier[-1], history=history)
    origin = Baseline(
        runs=tuple(earlier[-1]), origin="artifact", branch="main", sha="9f8e7d6c5b4a39281706f5e4d3c2b1a098765432",
        sha_url="https://github.com/org/repo/commit/9f8e7d6", run_id=118, run_url="https://github.com/org/repo/actions/runs/118",
        created_at=datetime(2026, 11, 29, tzinfo=UTC), is_merge_base=True, age_days=1.0, artifact="eval-results",
    )  # fmt: skip
    sections = plan(outcome, baseline=Compared(describe_markdown(origin)))
    commit = Commit("3f2a9c1d5e7b8a6c4d2e0f1a3b5c7d9e1f2a4b6c", "https://github.com/org/repo/commit/3f2a9c1")
    comment = comment_body(
        outcome.board, key="leaderboard", title="SWE-bench Verified", run_url="https://github.com/org/repo/actions/runs/1",
        commit=commit, sections=sections.comment,
    ).text  # fmt: skip
    summary = summary_markdown(outcome.board, title="SWE-bench Verified", commit=commit, sections=sections.summary)
    return comment, summary.text


def history_shots() -> None:
    swebench = REALDATA / "swebench_verified.jsonl"
    if not swebench.exists():
        print(f"no {swebench}: no history screenshots")
        return
    comment, summary = with_history(swebench)
    shoot(comment, "comment-history.png", height=3000)
    mermaid = os.environ.get("MERMAID_JS")
    if mermaid:
        chart = summary.split("### Trend on", 1)[1]
        shoot("### Trend on" + chart.split("\n| Rank |", 1)[0], "summary-chart.png", height=1600, mermaid=mermaid)


def main() -> None:
    if sys.argv[1:] == ["history"]:
        history_shots()
        return
    example = body_for(ROOT / "examples" / "mteb-eng-v2-sample.jsonl", "Model leaderboard")
    shoot(example, "comment.png", height=1400)
    shoot(example, "comment-expanded.png", expanded=True)
    swebench = REALDATA / "swebench_verified.jsonl"
    if swebench.exists():
        shoot(body_for(swebench, "SWE-bench Verified"), "comment-swebench.png", height=1600)
        flips = with_task_changes(swebench)
        shoot(flips, "comment-task-changes.png", height=2600)
        shoot(flips, "comment-task-changes-expanded.png", expanded=True, height=16000)
    shoot(with_baseline(), "comment-baseline.png", height=2200)
    shoot(with_composite(), "comment-composite.png", height=2200)
    board = analyse(synthetic(60, 200))
    body = comment_body(board, key="leaderboard", title="Synthetic suite: 60 models", run_url=None).text
    shoot(body, "comment-60-models.png", height=1600)
    history_shots()


if __name__ == "__main__":
    main()
