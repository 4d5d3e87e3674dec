"""The plain-text view of a document, for a terminal: the same words and tables, no markup.

The CLI prints it when it writes to a terminal; piped, or with ``--comment``, it prints the markdown.
It is made from the markdown, so it cannot say anything the documents do not: collapsed blocks are
opened under their summary line, small print loses its tags, tables are padded to line up, and code
spans, emphasis and escapes are dropped.
"""

from __future__ import annotations

import html
import re
import unicodedata

_COMMENT = re.compile(r"<!--.*?-->", re.S)
_SUMMARY = re.compile(r"<details><summary>(.*?)</summary>", re.S)
_TAG = re.compile(r"</?(?:details|summary|sub|code|br|b|i|em|strong)\s*/?>")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|:<>~])")
_SEPARATOR = re.compile(r"^\|(?:\s*:?-+:?\s*\|)+\s*$")
_CELL = re.compile(r"(?<!\\)\|")


def _width(text: str) -> int:
    """Columns a terminal gives ``text``: wide (East Asian) characters take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _inline(text: str) -> str:
    text = text.replace("<br>", "\n")
    text = _TAG.sub("", text)
    text = _LINK.sub(r"\1 (\2)", text)
    text = text.replace("**", "").replace("`", "")
    return html.unescape(_ESCAPE.sub(r"\1", text))


def _table(lines: list[str]) -> list[str]:
    rows = [
        [_inline(c.strip()) for c in _CELL.split(line.strip())[1:-1]] for line in lines if not _SEPARATOR.match(line)
    ]
    columns = max(len(r) for r in rows)
    rows = [r + [""] * (columns - len(r)) for r in rows]
    widths = [max(_width(r[k]) for r in rows) for k in range(columns)]
    out = []
    for i, row in enumerate(rows):
        out.append("  ".join(cell + " " * (widths[k] - _width(cell)) for k, cell in enumerate(row)).rstrip())
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def plain_text(markdown: str) -> str:
    """``markdown`` (a document of :mod:`leaderboard.report.document`) as plain text."""
    text = _COMMENT.sub("", markdown)
    text = _SUMMARY.sub(lambda m: f"▸ {m.group(1)}", text)
    text = text.replace("</details>", "")
    text = text.replace("> [!NOTE]\n> ", "Note: ").replace("> [!WARNING]\n> ", "Warning: ")
    text = text.replace("> [!CAUTION]\n> ", "Caution: ")
    out: list[str] = []
    table: list[str] = []
    for line in text.split("\n"):
        if line.startswith("|"):
            table.append(line)
            continue
        if table:
            out.extend(_table(table))
            table = []
        heading = re.match(r"^#{1,6} (.*)$", line)
        out.append(_inline(heading.group(1)).upper() if heading else _inline(line))
    if table:
        out.extend(_table(table))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n") + "\n"
