"""One rule for how a trial and an optional field are written, the same in JSON, JSONL and CSV:
a record without ``trial`` is trial 1; ``"1"`` is trial 1; null (an empty CSV cell) is "not given"."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from leaderboard import EvalRun, InvalidEvalRuns, load_runs, validate_runs
from leaderboard.trials import collapse_trials

RECORD = {"model_id": "m", "task_id": "t", "metric_name": "acc", "score": 0.5}
FORMATS = ("jsonl", "json", "csv")


def write(tmp_path: Path, kind: str, *records: dict[str, object]) -> str:
    """The records in one file of ``kind``; in CSV a None is an empty cell and every value is text."""
    path = tmp_path / f"r.{kind}"
    if kind == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    elif kind == "json":
        path.write_text("[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n")
    else:
        columns = list(dict.fromkeys(k for r in records for k in r))
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(["" if r.get(c) is None else r[c] for c in columns] for r in records)
        path.write_text(out.getvalue())
    return str(path)


def first_line(kind: str) -> int:
    """The line of the first record: after the "[" of a JSON array, after a CSV header."""
    return 1 if kind == "jsonl" else 2


def problems(path: str) -> list[str]:
    with pytest.raises(InvalidEvalRuns) as caught:
        load_runs([path])
    return [f"{p.line}: {p.message}" for p in caught.value.problems]


@pytest.mark.parametrize("kind", FORMATS)
@pytest.mark.parametrize("trials", [(None, 1), (1, None)], ids=["missing-then-1", "1-then-missing"])
def test_a_record_without_trial_is_trial_1_so_beside_trial_1_it_is_a_duplicate(
    tmp_path: Path, kind: str, trials: tuple[int | None, int | None]
) -> None:
    path = write(tmp_path, kind, *({**RECORD, "trial": t} for t in trials))
    line = first_line(kind)
    assert problems(path) == [
        f"{line + 1}: duplicate (model_id, task_id, trial) = ('m', 't', 1); first seen at {path}:{line} "
        "(a record without `trial` is trial 1)"
    ]


@pytest.mark.parametrize("kind", FORMATS)
def test_a_record_without_trial_beside_trial_2_is_two_trials_averaged(tmp_path: Path, kind: str) -> None:
    path = write(tmp_path, kind, {**RECORD, "trial": None, "score": 0.0}, {**RECORD, "trial": 2, "score": 1.0})
    runs = load_runs([path])
    assert [r.trial for r in runs] == [None, 2]
    assert [r.score for r in collapse_trials(runs)] == [0.5]


@pytest.mark.parametrize("kind", ["jsonl", "json"])
@pytest.mark.parametrize("trials", [("1", 1), (1, "1"), ("1", "+1")])
def test_integer_text_is_that_integer_in_json_as_in_csv(
    tmp_path: Path, kind: str, trials: tuple[object, object]
) -> None:
    path = write(tmp_path, kind, *({**RECORD, "trial": t} for t in trials))
    line = first_line(kind)
    assert problems(path) == [
        f"{line + 1}: duplicate (model_id, task_id, trial) = ('m', 't', 1); first seen at {path}:{line}"
    ]


@pytest.mark.parametrize("kind", FORMATS)
def test_a_trial_read_as_integer_text_is_kept_as_the_integer_and_other_text_as_text(tmp_path: Path, kind: str) -> None:
    path = write(tmp_path, kind, {**RECORD, "trial": "2"}, {**RECORD, "trial": "retry"})
    assert [r.trial for r in load_runs([path])] == [2, "retry"]


@pytest.mark.parametrize("kind", FORMATS)
def test_null_weight_and_category_mean_not_given(tmp_path: Path, kind: str) -> None:
    path = write(tmp_path, kind, {**RECORD, "weight": None, "category": None})
    (run,) = load_runs([path])
    assert (run.weight, run.category) == (1.0, "general")


@pytest.mark.parametrize("kind", ["jsonl", "json"])
def test_null_weight_on_a_record_that_goes_the_long_way_still_means_not_given(tmp_path: Path, kind: str) -> None:
    path = write(tmp_path, kind, {**RECORD, "weight": None, "cost_usd": 0.01, "error": False})
    (run,) = load_runs([path])
    assert (run.weight, run.cost_usd) == (1.0, 0.01)


def test_records_built_in_code_follow_the_same_trial_rules() -> None:
    for trials in ((None, 1), ("1", 1)):
        runs = [EvalRun("m", "t", "acc", 0.5, trial=t) for t in trials]
        with pytest.raises(InvalidEvalRuns, match=r"duplicate \(model_id, task_id, trial\) = \('m', 't', 1\)"):
            validate_runs(runs)
    validate_runs([EvalRun("m", "t", "acc", 0.5), EvalRun("m", "t", "acc", 1.0, trial=2)])
