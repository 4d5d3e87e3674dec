"""Plain records held as columns: what a fast read of a large file gives, with no Python object per record.

A plain record has an id of each kind, a score, a category and a weight, and none of the call fields
(cost, latency, error, metrics, trial, cluster): the common shape of a large suite. :class:`RunColumns`
holds them as integer codes into the distinct ids and float64 arrays, and is still a sequence of
:class:`~leaderboard.records.EvalRun`: code that reads records one by one gets them (built once, when
first asked for), while the loader's checks, the score matrix and the failure count read the columns.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray

from .records import EvalRun, Source

Codes = NDArray[np.int64]


@dataclass(frozen=True, eq=False)
class RunColumns(Sequence[EvalRun]):
    """Plain records in their load order (files sorted, then lines). Each code column indexes its names."""

    models: tuple[str, ...]
    tasks: tuple[str, ...]
    metrics: tuple[str, ...]
    categories: tuple[str, ...]
    files: tuple[str, ...]
    model: Codes
    task: Codes
    metric: Codes
    category: Codes
    file: Codes
    line: Codes
    score: NDArray[np.float64]
    weight: NDArray[np.float64]

    def __len__(self) -> int:
        return int(self.score.shape[0])

    @cached_property
    def records(self) -> list[EvalRun]:
        """The records as objects, built once: for the code that reads records one by one."""
        models, tasks, metrics, categories = self.models, self.tasks, self.metrics, self.categories
        sources = map(Source, map(self.files.__getitem__, self.file.tolist()), self.line.tolist())
        return [
            EvalRun(models[m], tasks[t], metrics[k], s, categories[c], w, source=source)
            for m, t, k, s, c, w, source in zip(
                self.model.tolist(), self.task.tolist(), self.metric.tolist(), self.score.tolist(),
                self.category.tolist(), self.weight.tolist(), sources, strict=True,
            )
        ]  # fmt: skip

    @overload
    def __getitem__(self, index: int) -> EvalRun: ...

    @overload
    def __getitem__(self, index: slice) -> list[EvalRun]: ...

    def __getitem__(self, index: int | slice) -> EvalRun | list[EvalRun]:
        return self.records[index]

    def __iter__(self) -> Iterator[EvalRun]:
        return iter(self.records)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a sequence compared by content has no hash

    # ``load_runs`` returned a list before the columns: ``runs + more`` must still work, as a list.
    def __add__(self, other: Sequence[EvalRun]) -> list[EvalRun]:
        return [*self.records, *other]

    def __radd__(self, other: Sequence[EvalRun]) -> list[EvalRun]:
        return [*other, *self.records]

    def cell_codes(self) -> Codes:
        """Each record's (model, task) as one integer: the same number is the same pair."""
        return self.model * max(len(self.tasks), 1) + self.task

    def repeated_pairs(self) -> bool:
        """Some (model, task) is read twice (the loader then names both places, record by record)."""
        cells = self.cell_codes()
        return bool(cells.size) and int(np.bincount(cells).max()) > 1


def _recoded(names: Sequence[tuple[str, ...]], codes: Sequence[Codes]) -> tuple[tuple[str, ...], Codes]:
    """The union of several parts' names (sorted) and every part's codes into it, concatenated."""
    union = tuple(sorted({n for part in names for n in part}))
    index = {n: i for i, n in enumerate(union)}
    parts = [np.array([index[n] for n in part], dtype=np.int64)[c] for part, c in zip(names, codes, strict=True)]
    return union, np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def concatenated(parts: Sequence[RunColumns]) -> RunColumns:
    """One load's columns from its files' (in the order given)."""
    if len(parts) == 1:
        return parts[0]
    fields: dict[str, Any] = {}
    for names, codes in (("models", "model"), ("tasks", "task"), ("metrics", "metric"), ("categories", "category")):
        fields[names], fields[codes] = _recoded([getattr(p, names) for p in parts], [getattr(p, codes) for p in parts])
    files = tuple(f for p in parts for f in p.files)
    offsets = np.cumsum([0, *(len(p.files) for p in parts)])[:-1]
    fields["files"] = files
    fields["file"] = np.concatenate([p.file + o for p, o in zip(parts, offsets, strict=True)])
    for name in ("line", "score", "weight"):
        fields[name] = np.concatenate([getattr(p, name) for p in parts])
    return RunColumns(**fields)
