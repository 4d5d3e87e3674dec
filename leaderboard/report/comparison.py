"""The comparison with the baseline as a markdown section (its JSON is :mod:`.comparison_json`, its method
paragraph :mod:`.comparison_method`).

Numbers follow the documents' rules (:mod:`leaderboard.report.formatting`), three decimals, signed Δ:

* a CI's ends are rounded *outward* (the low end down, the high end up), so the printed interval
  always contains the computed one;
* a detected change never prints an end of 0 or of the wrong sign: when three decimals would, the
  interval is printed with as many more as it takes (at most 12; a detected change's CI is at least
  1e-12 away from 0);
* a change not detected prints its interval, which reaches 0 (the statistics widen it where the
  bootstrap alone would exclude 0 and the test does not confirm the change: no number says more than
  the verdict); were one to exclude 0, the verdict would say in words that the test did not confirm it.

Only what changed is in the open: regressions, changes within the tolerance and improvements have
rows; the models with no detectable change are counted and their rows collapsed.

Every id is shown through :func:`~leaderboard.report.markdown.md_code`, as a label of
:func:`~leaderboard.report.formatting.labels` (whole up to 48 characters, never two alike).
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence

from ..records import Why
from ..stats.comparison import Comparison, ModelChange
from ..validation import printable
from .formatting import (
    DASH,
    count,
    delta_unit,
    difference,
    labels,
    no_interval,
    number,
    score_format,
    signed,
)
from .markdown import md_code
from .reasons import p_text, reason_text

TITLE = "Compared with the base branch"
QUIET_ROWS = 30  # rows with no detectable change shown in the comment (every change is shown)
LISTED_IDS = 20  # new / removed models, added / dropped tasks named in a line
COMMENT_SECTION_LIMIT = 24_000  # the section's share of the comment; the leaderboard below fits the rest
SUMMARY_SECTION_LIMIT = 256 * 1024

MARKS = {
    "regressed": "❌ **regressed**",
    "within tolerance": "⚠️ lower, within the tolerance",
    "improved": "✅ **improved**",
    "no detectable change": "➖ no detectable change",
    "unchanged": "= unchanged",
}
_ORDER = {"regressed": 0, "within tolerance": 1, "improved": 2, "no detectable change": 3, "unchanged": 4}


def utf16_length(text: str) -> int:
    """Length as GitHub's comment limit counts it: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


# --- numbers ------------------------------------------------------------------------------------


def shown_interval(change: ModelChange) -> tuple[str, str, bool]:
    """(Δ, ``[lo, hi]``, extended) as printed; see the module's rules. Dashes with no shared task.

    Without an interval (one cluster) the interval is "": the caller says why, in its own words.
    """
    if change.n_shared == 0 or math.isnan(change.delta):
        return DASH, DASH, False
    return difference(change.delta, change.ci_lo, change.ci_hi, change.significant, missing="")


def interval_name(alpha: float, one_sided: bool, family: int = 1) -> str:
    """ "95% CI", or "one-sided 95% bounds" when each end is a one-sided bound at the test's level, "simultaneous
    one-sided 95% bounds" when a family's bounds (each at alpha / family) hold together at that level."""
    confidence = f"{(1.0 - alpha) * 100:.6g}%"
    if not one_sided:
        return f"{confidence} CI"
    return f"{'simultaneous ' if family > 1 else ''}one-sided {confidence} bounds"


def interval_confidence(comparison: Comparison) -> str:
    """The two-sided confidence of the interval shown ("90%" when its ends are one-sided 95% bounds)."""
    return f"{(1.0 - comparison.ci_alpha) * 100:.6g}%"


def _mean(value: float) -> str:
    return number(value)


def _count(n: int) -> str:
    return f"{n:,}"


def verdict_text(change: ModelChange, tolerance: float) -> str:
    """The verdict with its mark, and why no change was detected."""
    if change.verdict == "no detectable change":
        if change.n_shared == 0:
            return "➖ not compared: no shared tasks"
        reason = reason_text(change.reason) if change.reason else "not significant"
        if shown_interval(change)[2] and change.reason is not None and change.reason.why is Why.TEST:
            return f"{MARKS[change.verdict]}: the test did not confirm it ({reason})"
        return f"{MARKS[change.verdict]} ({reason})"
    if change.verdict == "within tolerance":
        return f"{MARKS[change.verdict]} ({tolerance:g})"
    return MARKS[change.verdict]


# --- the section --------------------------------------------------------------------------------


def ordered(comparison: Comparison) -> list[ModelChange]:
    """Regressions (worst first), then within the tolerance, improvements (best first), the rest."""

    def key(m: ModelChange) -> tuple[int, int, float, str]:
        rank = _ORDER[m.verdict]
        delta = -m.delta if m.verdict == "improved" else m.delta
        return (rank, int(m.n_shared == 0), 0.0 if math.isnan(delta) else delta, m.model_id)

    return sorted(comparison.models, key=key)


def headline(comparison: Comparison) -> str:
    """ "2 models regressed, 1 improved, 12 no detectable change." or "No detectable change in any of 15 models.\""""
    if not comparison.models:
        return "No model is in both the baseline and this run: nothing was compared."
    # A model in both runs but with no task in both (the tasks renamed) was not compared at all.
    idle = not_compared(comparison)
    total = len(comparison.models) - idle
    if total == 0:
        which = "the one model" if idle == 1 else f"any of the {_count(idle)} models"
        return f"No task is in both the baseline and this run for {which} in both: nothing was compared."
    left_out = f" ({_count(idle)} more not compared: no shared tasks)" if idle else ""
    counts = [
        (comparison.count("regressed"), "regressed"),
        (comparison.count("improved"), "improved"),
        (comparison.count("within tolerance"), "lower within the tolerance"),
        (comparison.count("no detectable change") - idle + comparison.count("unchanged"), "no detectable change"),
    ]
    if sum(n for n, _ in counts[:3]) == 0:
        some = "the one model" if total == 1 else f"any of {_count(total)} models"
        return f"No detectable change in {some}{left_out}."
    parts = [(n, what) for n, what in counts if n]
    words = [f"{count(parts[0][0], 'model')} {parts[0][1]}"] + [f"{_count(n)} {what}" for n, what in parts[1:]]
    if counts[0][0]:
        words[0] = f"**{words[0]}**"
    return ", ".join(words) + left_out + "."


def not_compared(comparison: Comparison) -> int:
    """Models in both runs that share no task with their baseline: in the table, but not compared."""
    return sum(m.n_shared == 0 for m in comparison.models)


def _tasks_cell(change: ModelChange) -> str:
    if change.base_tasks == change.n_shared and change.pr_tasks == change.n_shared:
        return _count(change.n_shared)
    return f"{_count(change.n_shared)} (base {_count(change.base_tasks)}, PR {_count(change.pr_tasks)})"


def table(changes: Sequence[ModelChange], comparison: Comparison, noise: Mapping[str, str] | None = None) -> str:
    """The models' rows; ``noise``: model id → its run-to-run noise on the base branch, shown under its Δ."""
    label = labels([m.model_id for m in changes])
    bounds = interval_name(comparison.alpha, comparison.one_sided, comparison.family)
    lines = [
        f"| Model | Base | PR | Δ{delta_unit()} [{bounds}] | Verdict | Tasks |",
        "|-------|-----:|---:|:------:|---------|------:|",
    ]
    for m in changes:
        delta, ci, _ = shown_interval(m)
        cell = (
            delta if m.verdict == "unchanged" or delta == DASH else f"{delta} {ci or f'({no_interval(m.n_clusters)})'}"
        )
        if noise and m.model_id in noise:
            cell += f"<br><sub>{noise[m.model_id]}</sub>"
        lines.append(
            f"| {md_code(label[m.model_id])} | {_mean(m.base_mean)} | {_mean(m.pr_mean)} | {cell} | "
            f"{verdict_text(m, comparison.tolerance)} | {_tasks_cell(m)} |"
        )
    return "\n".join(lines)


def _ids_line(what: str, label: str, ids: Sequence[str]) -> str:
    named = labels(ids[:LISTED_IDS])
    shown = ", ".join(md_code(named[i], table=False) for i in ids[:LISTED_IDS])
    more = f" and {_count(len(ids) - LISTED_IDS)} more" if len(ids) > LISTED_IDS else ""
    return f"- {count(len(ids), what)} {label}: {shown}{more}."


def changes_lines(comparison: Comparison) -> list[str]:
    """New and removed models, added and dropped tasks: one line each, when there are any."""
    lines = []
    if comparison.new_models:
        lines.append(_ids_line("new model", "(not in the baseline, so not compared)", comparison.new_models))
    if comparison.removed_models:
        lines.append(_ids_line("model", "only in the baseline (not in this run)", comparison.removed_models))
    if comparison.tasks_added:
        lines.append(_ids_line("task", "added (not in the baseline)", comparison.tasks_added))
    if comparison.tasks_dropped:
        lines.append(_ids_line("task", "dropped (only in the baseline)", comparison.tasks_dropped))
    return lines


def categories_block(changes: Sequence[ModelChange]) -> str:
    """Δ per model and category in a ``<details>`` block, categories in rows ('' when no model changed)."""
    rows = [m for m in changes if m.verdict != "unchanged" and m.n_shared > 0]
    if not rows or not any(m.categories for m in rows):
        return ""
    label = labels([m.model_id for m in rows])
    lines = [f"| Model | Category | Δ{delta_unit()} | Shared tasks |", "|:------|:---------|-----:|-----:|"]
    for m in rows:
        # The largest moves first: a category that did not move at all is left to the JSON report.
        moved = sorted((c for c in m.categories if c.delta != 0), key=lambda c: (-abs(c.delta), c.category))
        for c in moved:
            lines.append(
                f"| {md_code(label[m.model_id])} | {md_code(c.category)} | {signed(c.delta)} | {c.n_shared:,} |"
            )
    if len(lines) == 2:
        return ""
    return (
        "<details><summary>Δ by category (the categories that moved; mean over the shared tasks of each)"
        "</summary>\n\n" + "\n".join(lines) + "\n\n</details>"
    )


def _build(
    comparison: Comparison,
    baseline_md: str,
    title: str,
    *,
    changed: int,
    quiet: int,
    categories: str,
    elsewhere: str,
    noise: Mapping[str, str] | None = None,
    stated: bool = True,
) -> str:
    rows = ordered(comparison)
    detected = [m for m in rows if m.significant]
    rest = [m for m in rows if not m.significant]
    lines = changes_lines(comparison)
    missing = []
    if changed < len(detected):
        missing.append(f"{_count(len(detected) - changed)} more with a detected change")
    if quiet < len(rest):
        missing.append(f"{_count(len(rest) - quiet)} more with no detectable change")
    more = f"{' and '.join(missing)}{': ' + elsewhere if elsewhere else '.'}" if missing else ""
    quiet_block = ""
    if rest[:quiet]:
        which = "model" if len(rest) == 1 else "models"
        quiet_block = (
            f"<details><summary>{_count(len(rest))} {which} with no detectable change</summary>\n\n"
            + table(rest[:quiet], comparison, noise)
            + "\n\n</details>"
        )
    if not detected:
        # Nothing changed: the whole section is one collapsed line, so the answer above stays short.
        # The <summary> is the headline: the body does not say it again.
        body = [baseline_md, table(rest[:quiet], comparison, noise) if rest[:quiet] else "", more]
        body += ["\n".join(lines)] if lines else []
        summary = f"{html.escape(title, quote=False)}: {_summary_words(comparison)}"
        return f"<details><summary>{summary}</summary>\n\n" + "\n\n".join(p for p in body if p) + "\n\n</details>"
    # With the outcome line above (every document's first line), the counts are said there and in the table.
    parts = [f"### {title}", baseline_md, headline(comparison) if stated else _not_compared_line(comparison)]
    if detected[:changed]:
        parts.append(table(detected[:changed], comparison, noise))
    parts.append(quiet_block)
    parts.append(more)
    if lines:
        parts.append("\n".join(lines))
    if categories != "none":
        block = categories_block(detected[:changed])
        if block:
            parts.append(block)
    return "\n\n".join(p for p in parts if p)


def _not_compared_line(comparison: Comparison) -> str:
    """What the headline says beyond the outcome line: the models that share no task with their baseline."""
    idle = not_compared(comparison)
    if not idle:
        return ""
    share = "shares" if idle == 1 else "share"
    return f"{count(idle, 'model')} in both runs {share} no task with the baseline: not compared."


def _summary_words(comparison: Comparison) -> str:
    """The green case's one line (HTML: a ``<summary>`` reads no markdown)."""
    return headline(comparison).replace("**", "").removesuffix(".")


def comparison_markdown(
    comparison: Comparison,
    baseline_description_md: str,
    *,
    title: str = TITLE,
    quiet_rows: int | None = QUIET_ROWS,
    limit: int | None = None,
    measure: Callable[[str], int] = utf16_length,
    elsewhere: str = "",
    noise: Mapping[str, str] | None = None,
    stated: bool = True,
) -> str:
    """The section: title, the baseline (``describe_markdown``), a headline, the table, the rest.

    ``stated=False``: the document's outcome line already gives the counts, so the open section does not
    repeat them in a headline (only the models that share no task, which the outcome line does not name).
    Every detected change has a row; at most ``quiet_rows`` models with none do (None: all).
    With a ``limit`` (in ``measure`` units) the category block goes first, then the quiet rows,
    then rows of detected changes from the bottom; what is left out is counted and pointed at
    ``elsewhere``.
    """
    detected = sum(m.significant for m in comparison.models)
    quiet = len(comparison.models) - detected if quiet_rows is None else quiet_rows

    def build(changed: int, quiet_shown: int, categories: str) -> str:
        return _build(
            comparison, baseline_description_md, title,
            changed=changed, quiet=quiet_shown, categories=categories, elsewhere=elsewhere, noise=noise,
            stated=stated,
        )  # fmt: skip

    text = build(detected, quiet, "shown")
    if limit is None or measure(text) <= limit:
        return text
    for changed, quiet_shown, categories in ((detected, quiet, "none"), (detected, 0, "none")):
        text = build(changed, quiet_shown, categories)
        if measure(text) <= limit:
            return text
    lo, hi = 0, detected
    while lo < hi:  # rows only lengthen the section: the most that fit, by bisection
        mid = (lo + hi + 1) // 2
        if measure(build(mid, 0, "none")) <= limit:
            lo = mid
        else:
            hi = mid - 1
    return build(lo, 0, "none")


def no_baseline_markdown(baseline_description_md: str, *, title: str = TITLE) -> str:
    """The section when no baseline was found: why, and the fix (``describe_markdown`` of a NoBaseline)."""
    return f"### {title}\n\n{baseline_description_md}\n\nNothing was compared; this does not fail the step."


# --- the section in each document -----------------------------------------------------------------


def comment_section(
    comparison: Comparison,
    baseline_description_md: str,
    *,
    title: str = TITLE,
    noise: Mapping[str, str] | None = None,
    stated: bool = True,
) -> str:
    """The section for the PR comment: every detected change, 30 other models, within its share of the limit."""
    return comparison_markdown(
        comparison, baseline_description_md, title=title, limit=COMMENT_SECTION_LIMIT, measure=utf16_length,
        noise=noise, stated=stated,
        elsewhere="the job summary lists every model; the JSON report (`report` output, key `baseline`) has "
        "every number.",
    )  # fmt: skip


def summary_section(
    comparison: Comparison,
    baseline_description_md: str,
    *,
    title: str = TITLE,
    noise: Mapping[str, str] | None = None,
    stated: bool = True,
) -> str:
    """The section for the job summary: every model, within its share of the summary's limit."""
    return comparison_markdown(
        comparison, baseline_description_md, title=title, quiet_rows=None, limit=SUMMARY_SECTION_LIMIT, noise=noise,
        stated=stated, measure=lambda text: len(text.encode()),
        elsewhere="the JSON report (`report` output, key `baseline`) has them.",
    )  # fmt: skip


def full_section(
    comparison: Comparison,
    baseline_description_md: str,
    *,
    title: str = TITLE,
    noise: Mapping[str, str] | None = None,
    stated: bool = True,
) -> str:
    """The section for the markdown file and the CLI: everything."""
    return comparison_markdown(
        comparison, baseline_description_md, title=title, quiet_rows=None, noise=noise, stated=stated
    )


def gate_line(change: ModelChange, alpha: float) -> str:
    """One line for the log and the gate's error: id (on one line), Δ, CI, tasks, test and p (in score units,
    as the JSON report: the same line from the CLI and the action)."""
    with score_format(False):
        delta, ci, _ = shown_interval(change)
    ci = ci.replace("\u00a0", " ")  # a log line: a plain space
    adjusted = f" (Holm-adjusted {p_text(change.p_adjusted, alpha)})" if change.p_adjusted != change.p_value else ""

    name = interval_name(alpha, change.one_sided_bounds, change.family)
    bounds = f"{name} {ci}" if ci else no_interval(change.n_clusters)
    return (
        f"{printable(change.model_id)}: Δ {delta}, {bounds}, over {change.n_shared} "
        f"shared tasks, {change.test} {p_text(change.p_value, alpha)}{adjusted}"
    )
