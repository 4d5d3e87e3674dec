"""Step outputs of bounded size: a JSON list or object made from the data is cut to OUTPUT_CAP bytes.

GitHub keeps at most 1 MB of a job's outputs, and a value passed to a script through ``env:``
at about 128 KiB; a list of every failure of a large suite exceeds both. Each list output below
is therefore cut to its first items that fit in OUTPUT_CAP bytes (still valid JSON, in the same
order), and its companion ``<name>-omitted`` says how many items were left out ("0": none). The
JSON report has every item.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

OUTPUT_CAP = 64 * 1024  # bytes of one list output: four of them stay far below the job's 1 MB
CAPPED = ("disqualified", "regressed-models", "newly-failing", "required-failed", "flaky-tasks")
SUFFIX = "-omitted"


def _fit(items: list[Any], cap: int, encode: Any) -> int:
    """How many of ``items``, from the first, fit in ``cap`` bytes once written as a JSON list."""
    used = 2  # the brackets
    for i, item in enumerate(items):
        size = len(encode(item).encode()) + (2 if i else 0)  # ", " between items
        if used + size > cap:
            return i
        used += size
    return len(items)


def capped(value: str, cap: int = OUTPUT_CAP) -> tuple[str, int]:
    """``value`` (a JSON list or object) cut to ``cap`` bytes, and how many items were left out."""
    if len(value.encode()) <= cap:
        return value, 0
    data = json.loads(value)
    if isinstance(data, list):
        kept = _fit(data, cap, lambda item: json.dumps(item, ensure_ascii=False))
        return json.dumps(data[:kept], ensure_ascii=False), len(data) - kept
    if isinstance(data, dict):
        pairs = list(data.items())
        # Each pair as written inside the object: "key": value.
        kept = _fit(pairs, cap, lambda kv: json.dumps(dict([kv]), ensure_ascii=False)[1:-1])
        return json.dumps(dict(pairs[:kept]), ensure_ascii=False), len(pairs) - kept
    raise ValueError(f"not a JSON list or object: {value[:40]!r}")


def with_caps(outputs: Mapping[str, str], cap: int = OUTPUT_CAP) -> dict[str, str]:
    """``outputs`` with each list output cut to ``cap`` bytes and its ``-omitted`` count beside it."""
    result = dict(outputs)
    for name in CAPPED:
        if name in outputs:
            result[name], left_out = capped(outputs[name], cap)
            result[name + SUFFIX] = str(left_out)
    return result
