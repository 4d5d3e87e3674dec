"""GitHub Actions workflow commands and files: annotations, masks, outputs, the job summary.

Escaping follows the runner's rules (actions/toolkit ``command.ts``): in a
message ``%``, CR and LF are percent-encoded; in a property ``:`` and ``,`` too.
"""

from __future__ import annotations

import contextlib
import secrets
import sys
from collections.abc import Iterator, Mapping
from typing import TextIO

from .output_caps import with_caps
from .redact import redacted


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, properties: Mapping[str, object] | None = None) -> str:
    props = ",".join(f"{k}={escape_property(str(v))}" for k, v in (properties or {}).items() if v is not None)
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def annotate(
    level: str,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    title: str | None = None,
    out: TextIO | None = None,
) -> None:
    """Print an ``::error``/``::warning``/``::notice`` annotation."""
    print(command(level, message, {"file": file, "line": line, "title": title}), file=out or sys.stdout, flush=True)


@contextlib.contextmanager
def commands_stopped(enabled: bool = True, out: TextIO | None = None) -> Iterator[None]:
    """Print untrusted text (model ids, file names) with workflow commands switched off.

    Between ``::stop-commands::TOKEN`` and ``::TOKEN::`` the runner runs no command, so a
    line of data that starts with ``::`` is shown, not obeyed. Off a runner (``enabled``
    False) there is nothing to protect and the markers would only be noise.
    """
    if not enabled:
        yield
        return
    stream = out or sys.stdout
    token = secrets.token_hex(16)
    print(f"::stop-commands::{token}", file=stream, flush=True)
    try:
        yield
    finally:
        print(f"::{token}::", file=stream, flush=True)


def add_mask(value: str, out: TextIO | None = None) -> None:
    """Ask the runner to hide ``value`` in every later log line."""
    if value:
        for part in value.splitlines() or [value]:
            print(command("add-mask", part), file=out or sys.stdout, flush=True)


def set_outputs(path: str | None, outputs: Mapping[str, str]) -> None:
    """Append outputs to ``$GITHUB_OUTPUT``; multi-line values use a random heredoc delimiter.

    A list output is cut to a size GitHub keeps, with its ``-omitted`` count beside it (output_caps).
    """
    if not path:
        return
    with open(path, "a", encoding="utf-8") as handle:
        for name, value in with_caps(outputs).items():
            value = redacted(value)  # a later step may print or post it: no secret in any output
            if "\n" in value or "\r" in value:
                delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
                handle.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
            else:
                handle.write(f"{name}={value}\n")


def append_summary(path: str | None, markdown: str) -> bool:
    """Append to ``$GITHUB_STEP_SUMMARY``; False when there is no summary file."""
    if not path:
        return False
    markdown = redacted(markdown)  # the summary is a document anyone with read access sees
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(markdown if markdown.endswith("\n") else markdown + "\n")
    return True
