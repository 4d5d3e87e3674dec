"""Numbers written as text (CSV cells, action inputs, CLI options): plain decimal only.

Python's ``int`` and ``float`` accept more than people mean: ``"0_1"`` (underscore
separators), ``"٠.٥"`` (Arabic-Indic digits), surrounding whitespace, ``"infinity"``.
Each would silently turn a typo into a different number, so text is checked against
the JSON number grammar (a leading ``+`` allowed) with ASCII digits before converting.
"""

from __future__ import annotations

import re

DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INTEGER = re.compile(r"[+-]?[0-9]+")
# Longer integers would make int() refuse ("Exceeds the limit (4300 digits)") or be a typo anyway.
MAX_INTEGER_DIGITS = 100


def parse_decimal(text: str) -> float | None:
    """The value of plain decimal text (``0.5``, ``1``, ``2e-3``), else None."""
    if not DECIMAL.fullmatch(text):
        return None
    return float(text)


def parse_integer(text: str) -> int | None:
    """The value of plain integer text (ASCII digits, optional sign), else None."""
    if not _INTEGER.fullmatch(text) or len(text) > MAX_INTEGER_DIGITS:
        return None
    return int(text)
