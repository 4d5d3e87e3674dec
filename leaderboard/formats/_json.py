"""JSON as the harnesses write it: bare NaN/Infinity tokens, JSON lines under a .json name, big documents.

Python's ``json`` reads the non-standard ``NaN``, ``Infinity`` and ``-Infinity`` tokens, so every
reader parses with it and then judges the values (a NaN score is "unscored", an infinite one is off
the 0-1 scale); nothing here rejects them at the parser.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

# Enough of a file to tell its format: the harnesses put their telling keys first, and a
# line of JSON lines that is longer than this is still recognised by the key scanner.
SNIFF_BYTES = 64 * 1024
_WS = " \t\r\n"


@dataclass(frozen=True)
class Shape:
    """What the start of a file says about it."""

    kind: Literal["lines", "object", "array", "other"]
    keys: frozenset[str]  # top-level keys; for an array, those of its first element


def sniff(head: str, complete: bool) -> Shape:
    """The shape of a JSON or JSON-lines text of which ``head`` is the start (all of it when ``complete``)."""
    text = head.lstrip("\ufeff" + _WS)
    if not text or text[0] not in "{[":
        return Shape("other", frozenset())
    end = text.find("\n")
    if text[0] == "{" and (end != -1 or complete):
        first = text if end == -1 else text[:end]
        try:
            value = json.loads(first)
        except ValueError:
            value = None
        if isinstance(value, dict):
            rest = "" if end == -1 else text[end:].strip()
            return Shape("lines" if rest else "object", frozenset(value))
    if text[0] == "[":
        return Shape("array", frozenset(_scan_keys(text, in_array=True)))
    return Shape("object", frozenset(_scan_keys(text, in_array=False)))


def _scan_keys(text: str, *, in_array: bool) -> list[str]:
    """Keys of the top-level object (or of an array's first element) in a possibly truncated text.

    A character scan, so that a document of any size is told by its first kilobytes without
    parsing the (possibly huge) values between its keys.
    """
    target = 2 if in_array else 1
    stack: list[str] = []
    keys: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                break  # the head ends inside a string
            k = j + 1
            while k < n and text[k] in _WS:
                k += 1
            if len(stack) == target and stack[-1] == "{" and k < n and text[k] == ":":
                with contextlib.suppress(ValueError):
                    keys.append(json.loads(text[i : j + 1]))
            i = j + 1
            continue
        if c in "{[":
            stack.append(c)
        elif c in "}]":
            if stack:
                stack.pop()
            if len(stack) < target and in_array and len(stack) == 1:
                break  # the first element is over
            if not stack:
                break
        i += 1
    return keys


def read_head(path: Path) -> tuple[bytes, bool]:
    """The first bytes of a file, and whether they are all of it."""
    with path.open("rb") as handle:
        head = handle.read(SNIFF_BYTES + 1)
    return head[:SNIFF_BYTES], len(head) <= SNIFF_BYTES


def json_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of each non-blank line, one at a time: memory stays that of one line."""
    # newline="" keeps a lone "\r" inside a JSON string from being taken for a line break.
    with path.open(encoding="utf-8-sig", newline="") as handle:
        for number, text in enumerate(handle, start=1):
            if text.strip():
                yield number, text


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WS:
        pos += 1
    return pos


def elements_with_lines(text: str, path: Sequence[str]) -> Iterator[tuple[int, Any]]:
    """(line, element) of the array found at ``path`` (keys from the top), each decoded once.

    The document must be well-formed JSON (parse it first: a broken one is reported where it
    breaks). An absent key or a value that is not an array yields nothing.
    """
    decoder = json.JSONDecoder()
    pos = _skip_ws(text, 0)
    for key in path:
        if pos >= len(text) or text[pos] != "{":
            return
        found = -1
        pos = _skip_ws(text, pos + 1)
        while text[pos] != "}":
            name, pos = decoder.raw_decode(text, pos)
            pos = _skip_ws(text, _skip_ws(text, pos) + 1)  # past the ':'
            if name == key:
                found = pos  # the last of repeated keys, as json.loads keeps
            _, pos = decoder.raw_decode(text, pos)
            pos = _skip_ws(text, pos)
            if text[pos] == ",":
                pos = _skip_ws(text, pos + 1)
        if found < 0:
            return
        pos = found
    if pos >= len(text) or text[pos] != "[":
        return
    line, last = 1, 0
    pos = _skip_ws(text, pos + 1)
    while text[pos] != "]":
        line += text.count("\n", last, pos)
        last = pos
        value, pos = decoder.raw_decode(text, pos)
        yield line, value
        pos = _skip_ws(text, pos)
        if text[pos] == ",":
            pos = _skip_ws(text, pos + 1)


class BrokenJson(ValueError):
    """A JSON text that does not parse, with the line where it breaks."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


def located_array(text: str, path: Sequence[str]) -> list[tuple[int, Any]]:
    """:func:`elements_with_lines` as a list, decoding each element once; a broken text raises BrokenJson."""
    try:
        return list(elements_with_lines(text, path))
    except (ValueError, IndexError) as walk_error:
        try:
            json.loads(text)
        except ValueError as exc:
            raise BrokenJson(f"invalid JSON: {exc}", getattr(exc, "lineno", None)) from None
        raise BrokenJson(f"invalid JSON: {walk_error}", None) from None
