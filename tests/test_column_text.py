"""Tables of millions of rows written a column at a time: the same text as formatting each value on its own."""

from __future__ import annotations

import io
import json
import math
import random

import numpy as np

from leaderboard.report.json_report import CompactRows, _write_head
from leaderboard.report.task_changes import OnBase, _table, _three_decimals
from leaderboard.stats.task_changes import Moves

# Halves at the third decimal (ties, and a hair either side), zeros of both signs, non-finite, large and tiny.
AWKWARD = [0.0, -0.0, 0.0005, 0.0015, 0.0025, 2.675, -2.675, 999.9995, -999.9995, 999.9994999, 1234.5675, 1e20,
           5e-324, -1e-9, math.nan, math.inf, -math.inf]  # fmt: skip


def awkward_values() -> np.ndarray:
    rng = np.random.default_rng(0)
    halves = (rng.integers(-2_000_000, 2_000_000, 20_000) + 0.5) / 1000
    return np.concatenate([
        np.array(AWKWARD), halves, np.nextafter(halves, 3000.0), np.nextafter(halves, -3000.0),
        rng.uniform(-1, 1, 20_000), 10.0 ** rng.uniform(-12, 12, 20_000),
    ])  # fmt: skip


def test_three_decimals_are_pythons_own_for_every_value() -> None:
    values = awkward_values()
    head, tail = _three_decimals(values)
    assert [h + t for h, t in zip(head, tail, strict=True)] == [f"{v:.3f}" for v in values.tolist()]


def test_three_decimals_put_the_sign_and_the_suffix_asked_for() -> None:
    head, tail = _three_decimals(np.array([-0.25, 0.5, -1234.5678]), negative="−", positive="+", suffix=" |")
    assert [h + t for h, t in zip(head, tail, strict=True)] == ["−0.250 |", "+0.500 |", "−1234.568 |"]


def reference_table(moves: Moves) -> str:
    """The table as it was written one row at a time (values apart at 3 decimals, else more; Δ likewise)."""
    from leaderboard.report.task_changes import _base_mark, _cell, _delta, _mark, _values

    lines = ["| Task | Category | Base → PR | Δ |", "|:-----|:---------|:---------:|--:|"]
    for k in range(len(moves)):
        task = _cell(moves.task_ids[k]) + _mark(bool(moves.flaky and moves.flaky[k]))
        task += _base_mark(moves.task_ids[k], ON_BASE)
        lines.append(
            f"| {task} | {_cell(moves.categories[k])} | {_values(moves.base[k], moves.pr[k])} "
            f"| {_delta(moves.pr[k] - moves.base[k])} |"
        )
    return "\n".join(lines)


ON_BASE = OnBase({"u|3": 0.25, "t2": 0.5}, "main")


def test_a_table_of_moves_reads_as_one_formatted_a_row_at_a_time() -> None:
    rng = random.Random(1)
    values = awkward_values()[:2_000].tolist()
    values = [v for v in values if math.isfinite(v)]
    for plain in (True, False):
        n = len(values)
        ids = tuple(f"t{k}" if plain else f"u|{k}" for k in range(n))
        pr = tuple(v + rng.choice([1e-4, -1e-7, 0.3, -0.0011, 2e-13]) for v in values)
        flaky = tuple(rng.random() < 0.2 for _ in range(n))
        moves = Moves(ids, tuple(rng.choice(["a|b", "`c`", "general"]) for _ in range(n)), tuple(values), pr, flaky)
        assert _table(moves, None, ON_BASE) == reference_table(moves)


HOSTILE = ["t", 'a, "b', "\\", '\\"', 'x"', ', "', '], ["', "ü", "\x00", "\u2028", "", "null"]


def test_compact_rows_are_each_rows_json_one_a_line_whatever_the_strings() -> None:
    rng = random.Random(2)
    n = 300
    ids = tuple(rng.choice(HOSTILE) + str(rng.randint(0, 3)) for _ in range(n))
    categories = tuple(rng.choice(['a"b', "\\", "c"]) for _ in range(n))
    numbers = tuple(rng.choice([0.0, -0.0, 1.0, 0.1, 1e-7, 1e300, rng.random()]) for _ in range(n))
    flags = tuple(rng.choice([True, False, None]) for _ in range(n))
    out = io.StringIO()
    _write_head(
        {"rows": CompactRows((ids, categories, numbers, np.array(numbers), flags)), "empty": CompactRows(((),))}, out
    )
    text = out.getvalue() + "\n}"
    lines = text.split("\n")  # not splitlines: U+2028 in a string is no line break of JSON
    assert lines[1:3] == [
        '  "rows": [',
        f"    {json.dumps([ids[0], categories[0], numbers[0], numbers[0], flags[0]], ensure_ascii=False)},",
    ]
    assert len(lines) == n + 5 and lines[-2] == '  "empty": []'
    assert json.loads(text)["rows"] == [list(row) for row in zip(ids, categories, numbers, numbers, flags, strict=True)]
