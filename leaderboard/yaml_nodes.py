"""A YAML node tree read with each value's line: the configuration's reader of scalars, numbers and mappings.

Nodes are walked rather than loaded into dicts because only nodes know their lines, and because a
mapping's duplicate key, which ``yaml.safe_load`` keeps silently (the last one wins), must be an error.
Numbers must be written in plain decimal: YAML 1.1's octal, hexadecimal, sexagesimal and underscored
forms are refused rather than read as a number nobody wrote.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from .limits import MAX_ID_LENGTH
from .numbers import MAX_INTEGER_DIGITS, parse_decimal
from .validation import Problem, shown

_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
STR = "tag:yaml.org,2002:str"
_NULL = "tag:yaml.org,2002:null"
_WORDS = {_INT: "an integer", _FLOAT: "a number", _BOOL: "a boolean", STR: "a string", _NULL: "null"}


# Numbers as JSON writes them (a leading + allowed): no leading zero, which YAML 1.1 reads as octal.
_PLAIN_DECIMAL = re.compile(r"[+-]?(?:(?:0|[1-9][0-9]*)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_PLAIN_INTEGER = re.compile(r"[+-]?(?:0|[1-9][0-9]*)")


def line_of(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


class NodeReader:
    """Walks the node tree, collecting problems and each key's line."""

    def __init__(self, file: str, loader: yaml.SafeLoader) -> None:
        self.file = file
        self.loader = loader
        self.problems: list[Problem] = []
        self.origins: dict[str, tuple[str | None, int | None]] = {}

    def bad(self, key: str, node: yaml.Node, message: str) -> None:
        self.problems.append(Problem(message=message, file=self.file, line=line_of(node), field=key or None))

    def describe(self, node: yaml.Node) -> str:
        if isinstance(node, yaml.MappingNode):
            return "a mapping"
        if isinstance(node, yaml.SequenceNode):
            return "a list"
        word = _WORDS.get(node.tag, node.tag)
        return f"{word} {shown(node.value, 40)}" if node.tag != _NULL else "null (nothing)"

    def mapping(self, key: str, node: yaml.Node) -> dict[str, yaml.Node] | None:
        """The mapping's entries by key (each key's line noted); None with a problem if not a mapping."""
        if isinstance(node, yaml.ScalarNode) and node.tag == _NULL:
            return {}  # "metrics:" with nothing under it: an empty section
        if not isinstance(node, yaml.MappingNode):
            self.bad(key, node, f"must be a mapping of keys to values, got {self.describe(node)}")
            return None
        out: dict[str, yaml.Node] = {}
        first: dict[str, int] = {}
        for key_node, value_node in node.value:
            if not (isinstance(key_node, yaml.ScalarNode) and key_node.tag == STR):
                self.bad(key, key_node, f"keys must be strings, got {self.describe(key_node)}")
                continue
            name = key_node.value
            dotted = f"{key}.{name}" if key else name
            if name in out:
                self.bad(
                    dotted, key_node, f"is written twice (first at line {first[name]}); which one counts is ambiguous"
                )
                continue
            out[name] = value_node
            first[name] = line_of(key_node)
            self.origins[dotted] = (self.file, line_of(key_node))
        return out

    def scalar(self, key: str, node: yaml.Node, tags: tuple[str, ...], what: str) -> Any:
        """The scalar's value if its type is one of ``tags``, else None with a problem."""
        if not (isinstance(node, yaml.ScalarNode) and node.tag in tags):
            self.bad(key, node, f"must be {what}, got {self.describe(node)}")
            return None
        try:
            return self.loader.construct_object(node)
        except (yaml.YAMLError, ValueError, OverflowError) as exc:
            self.bad(key, node, f"must be {what}, got {shown(node.value, 40)} ({exc})")
            return None

    def numeral(self, key: str, node: yaml.Node, what: str, integer: bool) -> str | None:
        """The text of a number written in plain decimal, else None with a problem.

        YAML 1.1 (PyYAML) reads ``010`` as 8, ``0x10`` as 16, ``1:30`` as 90 and ``1_0`` as 10; each
        is refused (as the action's inputs refuse them) rather than read as a number nobody wrote.
        YAML 1.2's ``1e-3``, which YAML 1.1 leaves a string, is a number when written unquoted.
        """
        numeric = isinstance(node, yaml.ScalarNode) and (
            node.tag in ((_INT,) if integer else (_INT, _FLOAT))
            or (not integer and node.tag == STR and node.style is None and parse_decimal(node.value) is not None)
        )
        if not numeric:
            self.bad(key, node, f"must be {what}, got {self.describe(node)}")
            return None
        text = str(node.value)
        if not (_PLAIN_INTEGER if integer else _PLAIN_DECIMAL).fullmatch(text) or len(text) > MAX_INTEGER_DIGITS:
            try:
                read = f": YAML 1.1 would read it as {shown(self.loader.construct_object(node), 40)}"
            except (yaml.YAMLError, ValueError, OverflowError):
                read = ""
            self.bad(
                key, node,
                f"must be {what} in plain decimal (no leading zero, 0x, 0b, _ or :), got {shown(text, 40)}{read}",
            )  # fmt: skip
            return None
        return text

    def number(self, key: str, node: yaml.Node, valid: Callable[[float], bool], what: str) -> float | None:
        text = self.numeral(key, node, what, integer=False)
        if text is None:
            return None
        number = float(text)  # plain decimal: an overflow is inf, refused below
        if not math.isfinite(number) or not valid(number):
            self.bad(key, node, f"must be {what}, got {shown(text, 40)}")
            return None
        return number

    def integer(self, key: str, node: yaml.Node, valid: Callable[[int], bool], what: str) -> int | None:
        text = self.numeral(key, node, what, integer=True)
        if text is None:
            return None
        value = int(text)
        if not valid(value):
            self.bad(key, node, f"must be {what}, got {shown(text, 40)}")
            return None
        return value

    def boolean(self, key: str, node: yaml.Node) -> bool | None:
        value = self.scalar(key, node, (_BOOL,), "true or false")
        return None if value is None else bool(value)

    def name(self, key: str, node: yaml.Node, what: str = "a non-empty string") -> str | None:
        value = self.scalar(key, node, (STR,), what)
        if value is None:
            return None
        if not value.strip() or value != value.strip() or len(value) > MAX_ID_LENGTH:
            self.bad(key, node, f"must be {what} of at most {MAX_ID_LENGTH} characters, without surrounding spaces")
            return None
        return str(value)

    def names(self, key: str, node: yaml.Node) -> tuple[str, ...] | None:
        """A list of strings (a single string is a list of one)."""
        if isinstance(node, yaml.ScalarNode) and node.tag == STR:
            one = self.name(key, node)
            return None if one is None else (one,)
        if not isinstance(node, yaml.SequenceNode):
            self.bad(key, node, f"must be a list of strings, got {self.describe(node)}")
            return None
        out = [self.name(key, item) for item in node.value]
        return None if any(v is None for v in out) else tuple(v for v in out if v is not None)

    def unknown(self, key: str, entries: Mapping[str, yaml.Node], allowed: tuple[str, ...]) -> None:
        for name in entries:
            if name not in allowed:
                dotted = f"{key}.{name}" if key else name
                _, line = self.origins[dotted]
                self.problems.append(
                    Problem(
                        message=f"unknown key {shown(name, 60)}; the keys here are {', '.join(allowed)}",
                        file=self.file,
                        line=line,
                        field=dotted,
                    )
                )


PLAIN_TAGS = frozenset({*_WORDS, "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"})


def shared_or_tagged(root: yaml.Node) -> yaml.Node | None:
    """The first node reached twice (an alias) or carrying an explicit tag of its own
    (``!!python/object``, ``!custom``: never constructed, but a configuration is plain data, so
    it is refused rather than read as something else), or None: each node is visited once."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen or node.tag not in PLAIN_TAGS:
            return node
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                stack.extend((k, v))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return None
