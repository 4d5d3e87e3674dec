"""GitHub-flavoured markdown: escaping and the tables every document is made of.

Every string that comes from the data (model ids, task ids, categories) goes
through :func:`md_code`: it is shown as a code span, inside which GitHub makes
no links, mentions, issue references, emphasis or HTML, and the characters that
could still break out (a table pipe, a backtick run, a line break, control and
bidi characters) are escaped.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence

from ..records import LeaderboardRow, PairwiseDiff
from .formatting import no_interval
from .reasons import reason_text

MODEL_WIDTH = 20
ELLIPSIS = "…"
DASH = "—"


def truncate(text: str, width: int = MODEL_WIDTH) -> str:
    """At most ``width`` characters, the last an ellipsis when anything was cut."""
    return text if len(text) <= width else text[: width - 1] + ELLIPSIS


def _visible(ch: str) -> str:
    # Line breaks would end the table row; control, format (bidi overrides, zero-width)
    # and separator characters could hide or reorder text. Show them as escapes instead.
    if ch == " ":
        return " "
    category = unicodedata.category(ch)
    # Every other space (a tab, a no-break space) too: two ids must never look alike.
    if category in ("Cc", "Cf", "Zl", "Zp", "Zs", "Cs", "Co", "Cn"):
        code = ord(ch)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
    return ch


def visible(text: str) -> str:
    """``text`` with every character that could hide, reorder or break a line shown as an escape."""
    # isprintable() is False exactly for the categories escaped (Other and Separator but the ASCII
    # space): most ids have none, and a million of them are then checked in C, not per character.
    if text.isprintable():
        return text
    return "".join(_visible(ch) for ch in text)


def md_code(text: str, *, table: bool = True) -> str:
    """``text`` as an inline code span, safe inside a GFM table cell (``table=False``: in running text,
    where GitHub would show the pipe's escape as written)."""
    shown = visible(text)
    if table:
        shown = shown.replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", shown)), default=0) if "`" in shown else 0
    fence = "`" * (longest + 1)
    # A space on each side keeps a leading/trailing backtick off the fence; CommonMark strips
    # exactly one each side, so it does not show. An all-space span keeps its spaces.
    if (
        shown.startswith("`")
        or shown.endswith("`")
        or (shown.startswith(" ") and shown.endswith(" ") and shown.strip())
    ):
        shown = f" {shown} "
    if not shown:
        return DASH
    return f"{fence}{shown}{fence}"


ZWSP = "&#8203;"  # a zero-width space: invisible, but it ends a mention or a reference


def md_text(text: str) -> str:
    """Free text (a title) made inert: markdown escaped, mentions and cross-references broken.

    GitHub links ``@name``, ``#123``, ``org/repo#5`` and ``GH-123`` in rendered text (escaping
    does not stop it) and leaves a back-reference on the issue named; a zero-width space
    after the sigil stops both, and the text still reads the same.
    """
    shown = "".join(_visible(ch) for ch in text)
    shown = re.sub(r"([\\`*_{}\[\]()<>#+\-.!|~:&])", r"\\\1", shown)
    # Likewise a URL ("scheme://", "www.") in plain text, which may name an issue or a PR.
    return re.sub(r"[@#]|\b(?:GH|www)(?=\\[-.])|:(?=//)", lambda m: m.group(0) + ZWSP, shown, flags=re.IGNORECASE)


def confidence_label(alpha: float) -> str:
    """'95%' for alpha 0.05, '90%' for 0.1, '97.5%' for 0.025."""
    return f"{(1.0 - alpha) * 100:.6g}%"


def _num(value: float) -> str:
    if math.isnan(value):
        return DASH
    text = f"{value:.2f}"
    return "0.00" if text == "-0.00" else text


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def leaderboard_table(rows: Sequence[LeaderboardRow], alpha: float = 0.05, *, limit: int | None = None) -> str:
    """The ranked table: ``| Rank | Model | Mean | NN% CI | Win rate | Tasks |``."""
    lines = [
        _row(["Rank", "Model", "Mean", f"{confidence_label(alpha)} CI", "Win rate", "Tasks"]),
        "|-----:|-------|-----:|:------:|-----:|-----:|",
    ]
    for rank, row in enumerate(rows[:limit] if limit is not None else rows, start=1):
        lines.append(
            _row(
                [
                    str(rank),
                    md_code(truncate(row.model_id)),
                    _num(row.mean_score),
                    row.ci_note or f"{_num(row.mean_ci_lo)}-{_num(row.mean_ci_hi)}",
                    _num(row.win_rate),
                    str(row.tasks_completed),
                ]
            )
        )
    return "\n".join(lines)


def verdict(pair: PairwiseDiff) -> str:
    """The pair's one decision, with the reason when it is not significant."""
    if pair.significant:
        return "**yes**"
    return f"no: {reason_text(pair.reason)}" if pair.reason else "no"


def _ranked(model_id: str, ranks: Mapping[str, int] | None) -> str:
    shown = md_code(truncate(model_id))
    return f"{shown} ({ranks[model_id]})" if ranks and model_id in ranks else shown


def pairwise_table(
    pairs: Sequence[PairwiseDiff], alpha: float = 0.05, *, ranks: Mapping[str, int] | None = None
) -> str:
    """Every pair: shared tasks, mean difference (A − B), its CI and the verdict.

    With ``ranks``, each model is followed by its rank, which tells apart ids cut alike.
    """
    lines = [
        _row(["Model A", "Model B", "Shared", "Δ mean (A − B)", f"{confidence_label(alpha)} CI", "Significant"]),
        "|---------|---------|-------:|-------:|:------:|:-----------:|",
    ]
    for pair in pairs:
        ci = DASH if pair.n_shared == 0 else f"[{_num(pair.ci_lo)}, {_num(pair.ci_hi)}]"
        if pair.n_shared and (math.isnan(pair.ci_lo) or math.isnan(pair.ci_hi)):
            ci = no_interval(pair.n_clusters)
        lines.append(
            _row(
                [
                    _ranked(pair.model_a, ranks),
                    _ranked(pair.model_b, ranks),
                    str(pair.n_shared),
                    _num(pair.mean_diff),
                    ci,
                    verdict(pair),
                ]
            )
        )
    return "\n".join(lines)
