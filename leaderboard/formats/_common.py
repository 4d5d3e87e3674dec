"""What every reader shares: the one reader signature, options, the per-file tally, the trials, judging scores."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .. import limits
from ..records import EvalRun, Source
from ..validation import Problem
from .evalrun_records import Sink
from .ziplimits import ZipLimits

if TYPE_CHECKING:
    from .lm_eval import Results

FORMAT_NAMES = (
    "auto", "evalrun", "lm-eval", "inspect", "helm", "promptfoo", "openai-evals", "every-eval-ever", "parquet",
)  # fmt: skip
# What detection can say besides the input formats: files read only with another one.
LM_EVAL_RESULTS = "lm-eval results"
HELM_RUN_FILE = "helm run file"
EEE_AGGREGATE = "every-eval-ever aggregate"
COMPANION_OF = {LM_EVAL_RESULTS: "lm-eval", HELM_RUN_FILE: "helm", EEE_AGGREGATE: "every-eval-ever"}


@dataclass(frozen=True)
class ReadOptions:
    """How to read harness outputs: the ``format``, ``metric`` and ``filter`` inputs."""

    format: str = "auto"
    metric: str | None = None  # None: each format's default
    filter: str | None = None  # lm-eval only; None: each task's first filter


class Refused(Exception):
    """The file cannot be read as asked; raised with the one problem that says why."""

    def __init__(
        self, message: str, line: int | None = None, field: str | None = None, file: str | None = None
    ) -> None:
        super().__init__(message)
        self.line = line
        self.field = field
        self.file = file  # a zip member's name, when it is one of them that is wrong


@dataclass
class ReadContext:
    """What the readers of one load share across its files."""

    sink: Sink  # the EvalRun reader's: problems, bytes left, ids seen (checked over all files at the end)
    zip_limits: ZipLimits | None = None  # an Inspect .eval zip's bounds (None: the defaults)
    lm_eval_results: dict[Path, Results] = field(default_factory=dict)  # each results file, read once


@dataclass
class _Trials:
    """The trials of one (model, task): (trial label or None, score, source) each."""

    calls: list[tuple[int | None, float, Source]]
    metric: str
    category: str
    cluster: str | None = None


@dataclass
class FileRead:
    """One file's reading: its records, its problems and what was left out or held as trials."""

    path: Path
    name: str
    options: ReadOptions
    format: str
    problems: list[Problem] = field(default_factory=list)
    unscored: int = 0
    companion: bool = False  # read only for what it tells about another file
    metrics: set[str] = field(default_factory=set)
    _trials: dict[tuple[str, str], _Trials] = field(default_factory=dict)

    def source(self, line: int, member: str | None = None) -> Source:
        """Where a record came from; a zip member is named ``archive!member``."""
        return Source(self.name if member is None else f"{self.name}!{member}", line)

    def problem(self, message: str, line: int | None = None, field: str | None = None) -> None:
        self.problems.append(Problem(message=message, file=self.name, line=line, field=field))

    def add(
        self,
        model: str,
        task: str,
        metric: str,
        score: float,
        category: str,
        source: Source,
        trial: int | None = None,
        cluster: str | None = None,
    ) -> None:
        """One trial of (model, task): an epoch, a repeat, a train trial (``trial``: its number, if it has one)."""
        named = (
            ("model", model),
            ("task", task),
            ("metric", metric),
            ("category", category),
            ("cluster", cluster or ""),
        )
        long = next((n for n, v in named if len(v) > limits.MAX_ID_LENGTH), None)
        if long is not None:
            self.problems.append(Problem(too_long(long), source.file, source.line))
            return
        key = (model, task)
        held = self._trials.get(key)
        if held is None:
            self._trials[key] = _Trials([(trial, score, source)], metric, category, cluster)
        else:
            held.calls.append((trial, score, source))

    def records(self) -> Iterator[EvalRun]:
        """A record per (model, task), or per trial of it when it ran more than once (EvalRun's ``trial``:
        the leaderboard averages them into one task, never several tasks)."""
        intern = sys.intern
        for (model, task), held in self._trials.items():
            self.metrics.add(held.metric)
            metric, category = intern(held.metric), intern(held.category)
            if len(held.calls) == 1:
                _, score, source = held.calls[0]
                yield EvalRun(intern(model), task, metric, score, category, cluster=held.cluster, source=source)
                continue
            labels = [t for t, _, _ in held.calls]
            if None in labels or len(set(labels)) != len(labels):
                labels = list(range(1, len(held.calls) + 1))  # no (distinct) numbers of their own: in read order
            for label, (_, score, source) in zip(labels, held.calls, strict=True):
                yield EvalRun(
                    intern(model), task, metric, score, category, trial=label, cluster=held.cluster, source=source
                )

    @property
    def averaged(self) -> int:
        """Tasks run more than once (epochs, repeats, train trials): the leaderboard averages each."""
        return sum(1 for held in self._trials.values() if len(held.calls) > 1)

    @property
    def trials(self) -> int:
        """The trials of those tasks."""
        return sum(len(held.calls) for held in self._trials.values() if len(held.calls) > 1)


Reader = Callable[["FileRead", ReadContext], Sequence[EvalRun]]
"""Every format's reader: one file's records; problems in ``FileRead.problems`` (the EvalRun reader's,
which are judged with every file of the load, in ``ReadContext.sink``). A reader may raise
:class:`Refused` with the one problem that stops the file."""


def non_empty(value: object) -> str | None:
    """``value`` as an id when it is a non-empty string or an integer, else None."""
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def unit_score(value: object) -> float | None:
    """A number on [0, 1] as a float (a bool as 1/0); None for NaN ("unscored"); raise ValueError otherwise."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        number = float(value)
        if math.isnan(number):
            return None
        if 0.0 <= number <= 1.0:
            return number
        raise ValueError(f"{value!r} is outside [0, 1]")
    raise ValueError(f"a {type(value).__name__}, not a number")


def describe(value: object) -> str:
    """A short description of a value for a message."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def too_long(what: str) -> str:
    """The message for an id past the limit (the id itself is not repeated)."""
    return f"the {what} id is longer than {limits.MAX_ID_LENGTH} characters"


def read_whole(path: Path) -> str:
    """A harness file that is parsed whole (a JSON document), held to the EvalRun loader's size bound."""
    size = path.stat().st_size
    if size > limits.MAX_INPUT_BYTES:
        raise Refused(
            f"{path.name} is {size:,} bytes: a JSON document is read whole, up to {limits.MAX_INPUT_BYTES:,} bytes"
        )
    return path.read_text(encoding="utf-8-sig")
