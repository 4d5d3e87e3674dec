"""The baseline in markdown: where it came from (linked), how old, its notes; or why there is none."""

from __future__ import annotations

import re

from ..baseline import Baseline, NoBaseline, age_text, describe
from .markdown import md_code, md_text

# The only addresses a reason or a fix may show as a link (their label already escaped): every other
# URL in them is text, so that a message from GitHub or a file name cannot put a link in the comment.
LINKS = {"https://www.githubstatus.com": "githubstatus\\.com"}


def describe_markdown(baseline: Baseline | NoBaseline) -> str:
    """The baseline for the job summary: branch, linked short SHA, linked run, age, notes; or why none."""
    if isinstance(baseline, NoBaseline):
        return f"**No baseline:** {rich_text(baseline.reason)}.\n\n**Fix:** {rich_text(baseline.fix)}."
    if baseline.origin == "files":
        return md_text(describe(baseline))
    sha = md_code(baseline.short_sha or "?", table=False)
    branch = md_code(baseline.branch or "?", table=False)
    parts = [f"**Baseline:** {branch} @ [{sha}]({baseline.sha_url})" if baseline.sha_url
             else f"**Baseline:** {branch} @ {sha}"]  # fmt: skip
    if baseline.run_id is not None:
        run = f"run {baseline.run_id}"
        parts.append(f"[{run}]({baseline.run_url})" if baseline.run_url else run)
    if baseline.age_days is not None:
        parts.append(age_text(baseline.age_days))
    text = (
        ", ".join(parts)
        + f" (artifact {md_code(baseline.artifact or '?', table=False)}, {len(baseline.runs):,} records)."
    )
    for note in baseline.notes:
        text += f"\n- ⚠️ {md_text(note[0].upper() + note[1:])}."
    return text


def rich_text(text: str) -> str:
    """A reason or a fix as markdown: its `code spans` as code, LINKS as links, the rest as inert text.

    Every piece goes through :func:`md_code` or :func:`md_text`, so whatever a value inside it
    holds (a backtick in a branch name, a URL in GitHub's message) shows as written and makes
    no markup: at worst an unpaired backtick shows as a backtick.
    """
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an odd number of backticks: the last one is text
        parts[-2:] = [parts[-2] + "`" + parts[-1]]
    return "".join(md_code(part, table=False) if i % 2 else _linked(part) for i, part in enumerate(parts))


def _linked(text: str) -> str:
    pieces = re.split("(" + "|".join(re.escape(url) for url in LINKS) + ")", text)
    return "".join(f"[{LINKS[piece]}]({piece})" if piece in LINKS else md_text(piece) for piece in pieces)
