"""Per-task values read from runs held as columns (:class:`~leaderboard.run_columns.RunColumns`), with no record
built: each task's first or last record, found by a stable sort of the task codes, and a task code's place
among the tasks the statistics use (both sides of a comparison may have tasks of their own)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat

import numpy as np
from numpy.typing import NDArray

Codes = NDArray[np.int64]


def first_of_each(codes: Codes) -> tuple[Codes, NDArray[np.intp]]:
    """The distinct codes (sorted) and the index of each one's first record, as a loop over the records would
    meet them (np.unique sorts stably when asked for the indices)."""
    found, first = np.unique(codes, return_index=True)
    return found, np.asarray(first, dtype=np.intp)


def last_of_each(codes: Codes) -> tuple[Codes, NDArray[np.intp]]:
    """The distinct codes (sorted) and the index of each one's last record (a dict filled record by record
    keeps the last)."""
    found, first_reversed = np.unique(codes[::-1], return_index=True)
    return found, np.asarray(codes.size - 1 - first_reversed, dtype=np.intp)


def first_everywhere(codes: Codes, count: int) -> NDArray[np.intp]:
    """Each record's index of the first record with its code (codes are below ``count``)."""
    found, first = first_of_each(codes)
    first_of = np.zeros(count, dtype=np.intp)
    first_of[found] = first
    return first_of[codes]


def positions(names: Sequence[str], among: Sequence[str]) -> NDArray[np.intp]:
    """Each of ``names``' place in ``among`` (-1 where it is not there)."""
    if len(names) == len(among) and tuple(names) == tuple(among):
        return np.arange(len(names), dtype=np.intp)  # the same tasks (the common case): no lookup
    place = dict(zip(among, range(len(among)), strict=True))
    return np.fromiter(map(place.get, names, repeat(-1)), dtype=np.intp, count=len(names))


def in_order(
    names: Sequence[str], codes: Codes, values: NDArray[np.generic], tasks: Sequence[str], missing: object
) -> NDArray[np.generic]:
    """``values`` (one per code of ``codes``, codes into ``names``) in ``tasks`` order, ``missing`` elsewhere."""
    out = np.full(len(tasks), missing, dtype=values.dtype)
    place = positions(names, tasks)[codes]
    kept = place >= 0
    out[place[kept]] = values[kept]
    return out
