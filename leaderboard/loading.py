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
from .run_columns import RunColumns, concatenated
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


def _finish(runs: Sequence[EvalRun], sink: Sink, names: list[str]) -> Sequence[EvalRun]:
    if isinstance(runs, RunColumns) and not sink.spellings and not sink.rejected and not runs.repeated_pairs():
        # Plain records, every id in one spelling, no (model, task) twice, no trials: nothing left to find.
        plain: Sequence[EvalRun] = runs
    else:
        plain = list(runs)
        sink.problems.extend(spelling_problems(plain, sink, names))
        sink.problems.extend(duplicates(plain, sink.rejected, names))
        sink.problems.extend(task_field_problems(plain))
    if sink.problems:
        raise InvalidEvalRuns(_collapsed(sink.problems))
    return plain


def _joined(parts: list[Sequence[EvalRun]]) -> Sequence[EvalRun]:
    """The records of every file read, in order: columns while every file gave columns."""
    columns = [p for p in parts if isinstance(p, RunColumns)]
    if columns and len(columns) == len(parts):
        return concatenated(columns)
    return [run for part in parts for run in part]


def load_runs(
    patterns: Sequence[str], *, root: str | os.PathLike[str] | None = None, session: Session | None = None
) -> Sequence[EvalRun]:
    """Load every record from the files the patterns name; raise with every problem found.

    Files are read in sorted order whatever order the patterns come in, so the
    result (and every message) is the same for the same files. ``session`` carries the
    harness-format options in and the :class:`~leaderboard.formats.LoadReport` out. A large file of
    plain records comes back as columns (:class:`~leaderboard.run_columns.RunColumns`), still a
    sequence of records.
    """
    session = session or Session()
    paths, problems = expand_paths(patterns, root=root)
    sink = Sink()
    sink.problems.extend(problems)
    names = [display_name(path, root) for path in paths]
    with _no_cyclic_gc():
        parts = [session.read(path, name, sink) for path, name in zip(paths, names, strict=True)]
    runs = _joined([p for p in parts if len(p)])
    if not runs and not sink.problems:
        sink.problems.append(session.nothing_scored())
    return _finish(runs, sink, names)


def load_file(path: str | os.PathLike[str], *, session: Session | None = None) -> Sequence[EvalRun]:
    """Load one file (no glob expansion); raise :class:`InvalidEvalRuns` with every problem in it."""
    sink = Sink()
    name = Path(path).as_posix()
    session = session or Session()
    with _no_cyclic_gc():
        runs = session.read(Path(path), name, sink)
    if not runs and not sink.problems:
        sink.problems.append(session.nothing_scored())
    return _finish(runs, sink, [name])
