"""The EvalRun JSON document, read record by record so that each has its line and its own problems.

``json.loads`` would give neither: it reads the whole document before any record can be
checked, and keeps the last of a key written twice without a word. Here the top level (an
array of records, or an object with a ``"runs"`` array) is walked by hand and each record is
decoded on its own by a decoder that notes repeated keys.
"""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

from ..records import EvalRun, Source
from ..validation import Problem, listed, shown
from .evalrun_records import Sink, build


class KeyCheckingDecoder:
    """A JSON decoder that notes duplicate keys (json keeps the last one silently)."""

    def __init__(self) -> None:
        # The repeated keys in the order first repeated: a dict is an ordered set whose membership test
        # is constant time (a list's is linear: quadratic over an object of 200,000 keys written twice).
        self.duplicates: dict[str, None] = {}
        self.decoder = json.JSONDecoder(object_pairs_hook=self._object)

    def _object(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    self.duplicates[key] = None
                seen.add(key)
        return obj

    def duplicate_problem(self, file: str, line: int) -> Problem | None:
        if not self.duplicates:
            return None
        keys = listed([shown(k) for k in self.duplicates])
        self.duplicates.clear()
        return Problem(
            message=f"the JSON object has the key(s) {keys} more than once; which value counts is ambiguous",
            file=file,
            line=line,
        )


def parse_failure(exc: Exception) -> str | None:
    """The message for a value json could not parse, or None for an error that is not about the text."""
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON: {exc.msg} (column {exc.colno})"
    if isinstance(exc, RecursionError):
        return "invalid JSON: nested too deeply (arrays or objects hundreds of levels deep)"
    if isinstance(exc, ValueError) and "digits" in str(exc):
        return f"invalid JSON: an integer with more than {sys.get_int_max_str_digits()} digits"
    return None


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


class ShapeError(Exception):
    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


class JsonDocument:
    """A JSON document read value by value, so each record has its line and its own problems.

    Accepted shapes: a top-level array of records, or an object with a ``"runs"`` array.
    """

    def __init__(self, text: str, name: str, sink: Sink) -> None:
        self.text, self.name, self.sink = text, name, sink
        self.parser = KeyCheckingDecoder()
        self.runs: list[EvalRun] = []
        self._line, self._counted = 1, 0
        self.current = 0  # where the value being parsed starts, for errors without a position

    def line_at(self, pos: int) -> int:
        if pos < self._counted:  # never in practice: offsets only grow
            return self.text.count("\n", 0, pos) + 1
        self._line += self.text.count("\n", self._counted, pos)
        self._counted = pos
        return self._line

    def _expect(self, pos: int, what: str) -> NoReturn:
        raise json.JSONDecodeError(f"Expecting {what}", self.text, pos)

    def _value(self, pos: int) -> tuple[Any, int]:
        self.current = pos
        value, end = self.parser.decoder.raw_decode(self.text, pos)
        duplicate = self.parser.duplicate_problem(self.name, self.line_at(pos))
        if duplicate is not None:
            self.sink.problems.append(duplicate)
        return value, end

    def _records(self, pos: int) -> int:
        """Build the records of the array opening at ``pos``; the offset after it."""
        text = self.text
        pos = _skip_ws(text, pos + 1)
        if text.startswith("]", pos):
            return pos + 1
        while True:
            if pos >= len(text):
                self._expect(pos, "value")
            value, end = self._value(pos)
            run = build(value, Source(self.name, self.line_at(pos)), self.sink)
            if run is not None:
                self.runs.append(run)
            pos = _skip_ws(text, end)
            if text.startswith(",", pos):
                pos = _skip_ws(text, pos + 1)
            elif text.startswith("]", pos):
                return pos + 1
            else:
                self._expect(pos, "',' delimiter")

    def _object(self, pos: int) -> int:
        """Read the top-level object at ``pos``, building the records of its ``"runs"``."""
        text = self.text
        found = False
        pos = _skip_ws(text, pos + 1)
        if text.startswith("}", pos):
            pos += 1
        else:
            while True:
                if not text.startswith('"', pos):
                    self._expect(pos, "property name enclosed in double quotes")
                key, pos = self._value(pos)
                pos = _skip_ws(text, pos)
                if not text.startswith(":", pos):
                    self._expect(pos, "':' delimiter")
                pos = _skip_ws(text, pos + 1)
                if key == "runs" and found:
                    raise ShapeError('the key "runs" appears more than once: which runs count is ambiguous', pos)
                if key == "runs" and text.startswith("[", pos):
                    found = True
                    pos = self._records(pos)
                else:
                    if pos >= len(text):
                        self._expect(pos, "value")
                    _, pos = self._value(pos)
                pos = _skip_ws(text, pos)
                if text.startswith(",", pos):
                    pos = _skip_ws(text, pos + 1)
                elif text.startswith("}", pos):
                    pos += 1
                    break
                else:
                    self._expect(pos, "',' delimiter")
        if not found:
            raise ShapeError('expected a JSON array of records or an object with a "runs" array', 0)
        return pos

    def read(self) -> None:
        text = self.text
        start = _skip_ws(text, 0)
        try:
            if text.startswith("[", start):
                end = self._records(start)
            elif text.startswith("{", start):
                end = self._object(start)
            else:
                if start < len(text):
                    self._value(start)  # a broken document is reported where it breaks
                    raise ShapeError('expected a JSON array of records or an object with a "runs" array', start)
                self._expect(start, "value")
            end = _skip_ws(text, end)
            if end < len(text):
                raise json.JSONDecodeError("Extra data", text, end)
        except json.JSONDecodeError as exc:
            self.sink.problem(f"invalid JSON: {exc.msg} (column {exc.colno})", self.name, exc.lineno)
        except ShapeError as exc:
            self.sink.problem(str(exc), self.name, self.line_at(exc.pos) if exc.pos else 1)
        except (ValueError, RecursionError) as exc:
            message = parse_failure(exc)
            if message is None:
                raise
            self.sink.problem(message, self.name, self.line_at(self.current))
