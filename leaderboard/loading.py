"""Loading eval results from the files a run names, remembering where each record came from.

The files are found by :mod:`leaderboard.paths` (globs, the workspace, safe opening), each is read
by its format's reader in :mod:`leaderboard.formats`, and what can only be judged over all of
them (the same (model, task) twice, one id written two ways) is checked here at the end. Every
problem is reported together, at its file:line.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from .formats import Session, Sink
from .formats.evalrun_records import duplicates, spelling_problems
from .paths import display_name, expand_paths
from .records import EvalRun
from .validation import InvalidEvalRuns, Problem, task_field_problems

__all__ = ["display_name", "expand_paths", "load_file", "load_runs"]


@contextlib.contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Records hold no cycles; letting the collector rescan millions of them costs ~40% of a load."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _collapsed(problems: list[Problem]) -> list[Problem]:
    """Identical problems (same place, same message) once each, with how many times they occurred."""
    counts: dict[Problem, int] = {}
    for problem in problems:
        counts[problem] = counts.get(problem, 0) + 1
    return [
        p if n == 1 else Problem(f"{p.message} ({n} times)", p.file, p.line, p.field, p.index)
        for p, n in counts.items()
    ]


def _finish(runs: list[EvalRun], sink: Sink, names: list[str]) -> list[EvalRun]:
    sink.problems.extend(spelling_problems(runs, sink, names))
    sink.problems.extend(duplicates(runs, sink.rejected, names))
    sink.problems.extend(task_field_problems(runs))
    if sink.problems:
        raise InvalidEvalRuns(_collapsed(sink.problems))
    return runs


def load_runs(
    patterns: Sequence[str], *, root: str | os.PathLike[str] | None = None, session: Session | None = None
) -> list[EvalRun]:
    """Load every record from the files the patterns name; raise with every problem found.

    Files are read in sorted order whatever order the patterns come in, so the
    result (and every message) is the same for the same files. ``session`` carries the
    harness-format options in and the :class:`~leaderboard.formats.LoadReport` out.
    """
    session = session or Session()
    paths, problems = expand_paths(patterns, root=root)
    sink = Sink()
    sink.problems.extend(problems)
    runs: list[EvalRun] = []
    names = [display_name(path, root) for path in paths]
    with _no_cyclic_gc():
        for path, name in zip(paths, names, strict=True):
            runs.extend(session.read(path, name, sink))
    if not runs and not sink.problems:
        sink.problems.append(session.nothing_scored())
    return _finish(runs, sink, names)


def load_file(path: str | os.PathLike[str], *, session: Session | None = None) -> list[EvalRun]:
    """Load one file (no glob expansion); raise :class:`InvalidEvalRuns` with every problem in it."""
    sink = Sink()
    name = Path(path).as_posix()
    session = session or Session()
    with _no_cyclic_gc():
        runs = session.read(Path(path), name, sink)
    if not runs and not sink.problems:
        sink.problems.append(session.nothing_scored())
    return _finish(runs, sink, [name])
