"""The bytes of a JSON-lines file read a block at a time show what the whole bytes show.

The fast path reads a file into one small buffer a block at a time and checks each block there; what it finds
(the lines, colons and strings, or that a byte is one it cannot vouch for) is what :func:`plain_bytes` finds in
the whole file, wherever the blocks happen to end.
"""

from __future__ import annotations

import io
import json

import pytest

from leaderboard.formats import evalrun_fast
from leaderboard.formats.evalrun_fast import _read_plain, plain_bytes


def line(task: str = "t", **fields: object) -> str:
    return json.dumps({"model_id": "m", "task_id": task, "metric_name": "acc", "score": 0.5, **fields})


PLAIN = "\n".join(line(f"t{t}", category=f"c{t % 3}") for t in range(6))
CASES = {
    "plain lines": PLAIN + "\n",
    "no line feed at the end": PLAIN,
    "Windows line ends": PLAIN.replace("\n", "\r\n") + "\r\n",
    "a return that ends no line": PLAIN.replace("}\n", "}\r", 1) + "\n",
    "a return that ends the file": PLAIN + "\r",
    "a tab between fields": PLAIN.replace(", ", ",\t", 1),
    "a comma before a closing brace": PLAIN.replace("}", ", }", 1) + "\n",
    "a comma before a closing brace, blanks between": PLAIN.replace("}", ",  \r\n   }", 2) + "\n",
    "more blanks before a brace than are looked through": PLAIN.replace("}", " " * 70 + "}", 1) + "\n",
    "blanks before a brace, no comma": PLAIN.replace("}", " " * 40 + "}", 3) + "\n",
    "a bracket": PLAIN.replace('"acc"', '"[acc]"', 1) + "\n",
    "a quote left open": PLAIN.replace('"t1"', '"t1', 1) + "\n",
    "a colon in an id": PLAIN.replace('"t2"', '"t:2"', 1) + "\n",
    "an escaped quote": PLAIN.replace('"t2"', '"t\\"2"', 1) + "\n",
    "a lone surrogate escape": PLAIN.replace('"t2"', '"\\ud800"', 1) + "\n",
    "a non-ASCII id": PLAIN.replace('"t3"', '"caf\u00e9"', 1) + "\n",
    "a non-ASCII id, Windows line ends": PLAIN.replace('"t3"', '"caf\u00e9"', 1).replace("\n", "\r\n"),
    "a byte-order mark": "\ufeff" + PLAIN + "\n",
    "nothing": "",
}


@pytest.mark.parametrize("block", [1, 2, 3, 7, 64, 1 << 18])
@pytest.mark.parametrize("case", list(CASES))
def test_bytes_read_a_block_at_a_time_show_what_the_whole_bytes_show(
    monkeypatch: pytest.MonkeyPatch, case: str, block: int
) -> None:
    data = CASES[case].encode("utf-8")
    monkeypatch.setattr(evalrun_fast, "_BLOCK", block)
    assert _read_plain(io.BytesIO(data), len(data)) == plain_bytes(data)


@pytest.mark.parametrize("block", [3, 1 << 18])
def test_a_file_over_the_bytes_left_is_not_read_whole(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    data = (PLAIN + "\n").encode()
    monkeypatch.setattr(evalrun_fast, "_BLOCK", block)
    assert _read_plain(io.BytesIO(data), len(data) - 1) is None
    assert _read_plain(io.BytesIO(data), len(data)) == plain_bytes(data) is not None
