"""Reading eval results: the EvalRun format (JSON, JSON lines, CSV, Parquet), and the harnesses' own output
files (lm-evaluation-harness, Inspect, HELM, promptfoo, OpenAI evals, Every Eval Ever).

Each format has one reader with one signature (:data:`Reader`), listed in :data:`READERS`. One entry
point, :class:`Session`, reads a file in the format its content shows (or the one the
``format`` input names) and maps it to EvalRun records, each keeping its place (file and line;
``archive.eval!samples/1_epoch_1.json`` for a zip member, line 1). A :class:`LoadReport` tells what
was read: per file the format, records, unscored samples left out, trials averaged.
"""

from __future__ import annotations

import stat
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import limits
from ..records import EvalRun
from ..validation import Problem
from . import evalrun, every_eval_ever, helm, inspect_log, lm_eval, openai_evals, parquet, promptfoo
from ._common import COMPANION_OF, FORMAT_NAMES, FileRead, ReadContext, Reader, ReadOptions, Refused
from .detect import detect
from .evalrun_records import Sink
from .ziplimits import ZipLimits

__all__ = [
    "FORMAT_NAMES",
    "READERS",
    "FileReport",
    "LoadReport",
    "ReadOptions",
    "Reader",
    "Session",
    "Sink",
    "ZipLimits",
    "comment_note",
    "detect",
    "load_summary",
]


NOTE_FILES = 5  # files named in the note; the rest are counted


@dataclass(frozen=True)
class FileReport:
    """What one file gave."""

    file: str
    format: str
    records: int
    unscored: int = 0  # samples with no score, left out
    averaged: int = 0  # records that are the mean of several trials (epochs, repeats, train trials)
    trials: int = 0  # the trials folded into those records
    metrics: tuple[str, ...] = ()
    companion: bool = False  # read for what it says about another file (lm-eval results, HELM run files)


@dataclass(frozen=True)
class LoadReport:
    """What a load read, file by file."""

    files: tuple[FileReport, ...] = ()

    @property
    def records(self) -> int:
        return sum(f.records for f in self.files)

    @property
    def unscored(self) -> int:
        return sum(f.unscored for f in self.files)

    @property
    def averaged(self) -> int:
        return sum(f.averaged for f in self.files)

    @property
    def trials(self) -> int:
        return sum(f.trials for f in self.files)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def load_summary(report: LoadReport) -> str:
    """One line for the log, the CLI and the job summary: what was read, left out and averaged."""
    files: Counter[str] = Counter()
    records: Counter[str] = Counter()
    metrics: dict[str, set[str]] = {}
    companions: set[str] = set()
    for f in report.files:
        files[f.format] += 1
        records[f.format] += f.records
        metrics.setdefault(f.format, set()).update(f.metrics)
        if f.companion:
            companions.add(f.format)
    parts = []
    for kind, count in sorted(files.items()):
        if kind in companions:
            detail = "read with the files beside them"
        else:
            detail = _plural(records[kind], "record")
            if metrics[kind] and kind != "evalrun":
                detail += f", metric {', '.join(sorted(metrics[kind]))}"
        parts.append(f"{kind} \u00d7{count} ({detail})")
    line = f"Read {_plural(len(report.files), 'file')}: {'; '.join(parts) or 'none'}."
    note = comment_note(report)
    return f"{line} {note}" if note else line


def comment_note(report: LoadReport) -> str | None:
    """The note for the PR comment: unscored samples left out and trials averaged; None when neither."""
    notes = []
    if report.unscored:
        # The comment keeps this note whatever its size: a few files by name, then a count.
        files = [f"{f.file}: {f.unscored}" for f in report.files if f.unscored]
        where = ", ".join(files[:NOTE_FILES]) + (
            f" and {len(files) - NOTE_FILES} more files" if len(files) > NOTE_FILES else ""
        )
        notes.append(f"{_plural(report.unscored, 'unscored sample')} left out ({where}).")
    if report.averaged:
        notes.append(
            f"{_plural(report.averaged, 'task')} {'is' if report.averaged == 1 else 'are'} the mean of "
            f"{report.trials} trials (epochs, repeats or train trials)."
        )
    return " ".join(notes) or None


# The one reader of each format, all with the signature of :data:`Reader`.
READERS: dict[str, Reader] = {
    "evalrun": evalrun.read,
    "lm-eval": lm_eval.read,
    "inspect": inspect_log.read,
    "helm": helm.read,
    "promptfoo": promptfoo.read,
    "openai-evals": openai_evals.read,
    "every-eval-ever": every_eval_ever.read,
    "parquet": parquet.read,
}


class Session:
    """Reads the files of one load, sharing what several files need (an lm-eval results file)."""

    def __init__(self, options: ReadOptions | None = None, *, zip_limits: ZipLimits | None = None) -> None:
        self.options = options or ReadOptions()
        self.zip_limits = zip_limits
        self._files: list[FileReport] = []
        self._results: dict[Path, lm_eval.Results] = {}
        self._budget = limits.MAX_HARNESS_INPUT_BYTES  # bytes of harness files still allowed

    def report(self) -> LoadReport:
        return LoadReport(tuple(self._files))

    def nothing_scored(self) -> Problem:
        """The problem when every file was read and none gave a record."""
        unscored = sum(f.unscored for f in self._files)
        return Problem(f"no scored record in the files read ({_plural(unscored, 'unscored sample')} left out)")

    def read(self, path: Path, name: str, sink: Sink) -> Sequence[EvalRun]:
        """The records of the file at ``path`` in the format its content shows (or the ``format`` input
        names); its problems appended to ``sink.problems``."""
        context = ReadContext(sink, self.zip_limits, self._results)
        kind = self._format(path, name, sink.problems)
        if kind is None:
            return []
        read = FileRead(path, name, self.options, kind)
        runs: Sequence[EvalRun] = []
        if kind == "evalrun":
            runs = READERS["evalrun"](read, context)
            self._files.append(FileReport(name, "evalrun", len(runs)))
            return runs
        problems = sink.problems
        before = len(problems)
        try:
            runs = READERS[COMPANION_OF.get(kind, kind)](read, context)
        except Refused as refused:
            problems.append(Problem(str(refused), refused.file or name, refused.line, refused.field))
            runs = []
        except UnicodeDecodeError as exc:
            problems.append(Problem(f"not UTF-8 text (byte {exc.start}: {exc.reason})", name))
        except RecursionError:
            problems.append(Problem("JSON nested too deeply to read", name))
        except OSError as exc:
            problems.append(Problem(f"cannot read the file: {exc.strerror or exc}", name))
        problems.extend(read.problems)
        if not runs and not read.companion and not read.unscored and len(problems) == before:
            problems.append(Problem(f"the {read.format} file holds no scored sample", name))
        self._files.append(
            FileReport(
                name, read.format, len(runs), read.unscored, read.averaged if runs else 0, read.trials if runs else 0,
                tuple(sorted(read.metrics)), read.companion,
            )
        )  # fmt: skip
        return runs

    def _format(self, path: Path, name: str, problems: list[Problem]) -> str | None:
        """The format to read the file in; None with the problem appended when it is not to be read.

        Anything that is not clearly a harness's output (not a regular file, unreadable, not
        recognised) is read as EvalRun, whose reader says why it cannot be read.
        """
        wanted = self.options.format
        # Parquet holds EvalRun's own columns: "evalrun" reads it too, as the Parquet reader does.
        if wanted == "evalrun" and not parquet.is_parquet(path):
            return "evalrun"
        try:
            info = path.stat()
            # Only a regular file is looked into: opening a FIFO would wait for a writer forever.
            kind = detect(path) if stat.S_ISREG(info.st_mode) else None
        except OSError:
            return "evalrun"
        if not stat.S_ISREG(info.st_mode):
            return "evalrun"
        if wanted in ("auto", "evalrun"):
            if kind is None or kind == "evalrun":
                return "evalrun"
        elif kind is not None and wanted not in (kind, COMPANION_OF.get(kind)):
            problems.append(
                Problem(f"the input 'format' is {wanted!r}, but this file is {kind} output", name, field="format")
            )
            return None
        if info.st_size > self._budget:
            problems.append(
                Problem(
                    f"is {info.st_size:,} bytes, more than the {self._budget:,} left: harness output files of a run "
                    f"may hold {limits.MAX_HARNESS_INPUT_BYTES:,} bytes together",
                    name,
                )
            )
            return None
        self._budget -= info.st_size
        return kind or wanted  # "evalrun" wanted here only for a Parquet file, its kind
