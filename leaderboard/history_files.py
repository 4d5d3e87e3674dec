"""Earlier runs from files, for the CLI's ``--history FILES...``.

Each argument is one earlier run, oldest first: a file (EvalRun or a harness's output), or a directory
named by the commit it describes, all of whose files (below it, links not followed, hidden names skipped)
are that run. A file's run is named by the file's name without its extension. Nothing here raises on bad
input: a run that cannot be read is skipped, counted by reason (:class:`~leaderboard.stats.history.Coverage`)
and its problems returned, each naming the run, so the CLI can annotate them and go on with the rest.

Bounded: at most ``limit`` runs (the newest, i.e. the last given; the older ones are counted as over the
limit), at most ``MAX_RUN_FILES`` files a directory, ``max_bytes`` over all runs (a run that would pass
it is skipped, and so is every older one: the newest runs are read first), and optionally ``max_seconds``.
Each run is reduced to its score matrix as soon as it is read (:func:`~leaderboard.stats.history.run_scores`),
so the records of one run at a time are held.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .archive import MAX_FILES
from .formats import ReadOptions, Session
from .limits import MAX_INPUT_BYTES
from .loading import load_runs
from .options import DEFAULT_HISTORY_RUNS
from .stats.history import (
    INVALID,
    MAX_HISTORY_RUNS,
    MISSING,
    OVER_BUDGET,
    OVER_LIMIT,
    TIMED_OUT,
    Coverage,
    RunScores,
    SkipReason,
    coverage_of,
    run_scores,
)
from .validation import InvalidEvalRuns, Problem

MAX_RUN_FILES = MAX_FILES  # files in one run's directory, as in one artifact
# Bytes over all earlier runs together: four runs at the most one run may hold.
MAX_HISTORY_BYTES = 4 * MAX_INPUT_BYTES
PROBLEMS_PER_RUN = 5  # problems kept for a skipped run; the rest are counted


@dataclass(frozen=True)
class HistoryRead:
    """The runs read (oldest first), how much was read, and why each skipped run was skipped."""

    runs: tuple[RunScores, ...]
    coverage: Coverage
    problems: tuple[Problem, ...]


def _run_files(path: Path) -> tuple[list[Path], int, str | None]:
    """The regular files of one run, their total size, and why the run cannot be read (None: it can)."""
    try:
        info = path.stat()
    except OSError as exc:
        return [], 0, f"cannot be read: {exc.strerror or exc}"
    if stat.S_ISREG(info.st_mode):
        return [path], info.st_size, None
    if not stat.S_ISDIR(info.st_mode):
        return [], 0, "is neither a file nor a directory"
    files: list[Path] = []
    size = 0
    # os.walk does not follow directory links: no loop, nothing outside the directory reached twice.
    for top, dirs, names in os.walk(path, onerror=None):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            if name.startswith("."):
                continue
            file = Path(top) / name
            try:
                entry = file.lstat()
            except OSError:
                continue
            if not stat.S_ISREG(entry.st_mode):
                continue  # a link or a device is not part of a run
            files.append(file)
            size += entry.st_size
            if len(files) > MAX_RUN_FILES:
                return [], 0, f"holds more than {MAX_RUN_FILES:,} files"
    if not files:
        return [], 0, "holds no file"
    return sorted(files), size, None


def _name(path: Path) -> str:
    """The commit a run describes: a directory's name, a file's name without its extension."""
    resolved = path.name or path.resolve().name
    return resolved if path.is_dir() else Path(resolved).stem


def read_history(
    paths: Sequence[str | os.PathLike[str]],
    *,
    limit: int = DEFAULT_HISTORY_RUNS,
    max_bytes: int = MAX_HISTORY_BYTES,
    options: ReadOptions | None = None,
    max_seconds: float | None = None,
) -> HistoryRead:
    """Read the earlier runs ``paths`` names (oldest first); never raises for what is in them.

    ``max_seconds``: no run starts being read after this long (the older runs left are counted as timed out).
    """
    if not 0 <= limit <= MAX_HISTORY_RUNS:
        raise ValueError(f"limit must be between 0 and {MAX_HISTORY_RUNS}, got {limit}")
    given = [Path(p) for p in paths]
    kept = given[len(given) - limit :] if limit else []
    skipped: dict[SkipReason, int] = {OVER_LIMIT: len(given) - len(kept)}
    problems: list[Problem] = []
    read: list[RunScores] = []
    budget = max_bytes
    start = time.monotonic()
    # Newest first, so that the byte and time budgets keep the runs nearest this one.
    for path in reversed(kept):
        commit = _name(path)
        if max_seconds is not None and time.monotonic() - start >= max_seconds:
            skipped[TIMED_OUT] = skipped.get(TIMED_OUT, 0) + 1
            problems.append(
                Problem(f"history run {commit!r} skipped: not read within {max_seconds:g} s", path.as_posix())
            )
            continue
        files, size, why = _run_files(path)
        if why is not None:
            reason = MISSING if not path.exists() else INVALID
            skipped[reason] = skipped.get(reason, 0) + 1
            problems.append(Problem(f"history run {commit!r} skipped: {why}", path.as_posix()))
            continue
        if size > budget:
            skipped[OVER_BUDGET] = skipped.get(OVER_BUDGET, 0) + 1
            problems.append(
                Problem(
                    f"history run {commit!r} skipped: {size:,} bytes, more than the {budget:,} left of the "
                    f"{max_bytes:,} all earlier runs may hold together",
                    path.as_posix(),
                )
            )
            budget = 0
            continue
        budget -= size
        try:
            records = load_runs([f.as_posix() for f in files], session=Session(options or ReadOptions()))
            read.append(run_scores(commit, None, records))
        except InvalidEvalRuns as exc:
            skipped[INVALID] = skipped.get(INVALID, 0) + 1
            shown = exc.problems[:PROBLEMS_PER_RUN]
            problems.extend(
                Problem(f"history run {commit!r} skipped: {p.message}", p.file, p.line, p.field, p.index) for p in shown
            )
            if len(exc.problems) > len(shown):
                more = len(exc.problems) - len(shown)
                problems.append(Problem(f"history run {commit!r}: {more:,} more problems", path.as_posix()))
    read.reverse()
    coverage = coverage_of(len(given), len(given), len(read), skipped)
    return HistoryRead(tuple(read), coverage, tuple(problems))
