"""The trials of one (model, task) describe one task: its category, cluster and weight agree on every
record, or the record that differs is an error at its line, whatever order the records come in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leaderboard import EvalRun, InvalidEvalRuns, load_runs, validate_runs
from leaderboard.trials import collapse_trials

TRIAL = {"model_id": "m", "task_id": "t", "metric_name": "acc", "score": 0.5}
OTHER = {"model_id": "m", "task_id": "u", "metric_name": "acc", "score": 1.0}


def jsonl(path: Path, *records: dict[str, object]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def problems(*paths: str) -> list[str]:
    with pytest.raises(InvalidEvalRuns) as caught:
        load_runs(list(paths))
    return [f"{p.file}:{p.line}: {p.field}: {p.message}" for p in caught.value.problems]


@pytest.mark.parametrize(
    ("field", "first", "second"),
    [("category", "math", "code"), ("cluster", "repo-a", "repo-b"), ("weight", 1, 3), ("weight", 3, 1)],
)
def test_trials_that_disagree_on_a_task_field_are_an_error_at_the_second_record_in_either_order(
    tmp_path: Path, field: str, first: object, second: object
) -> None:
    for a, b in ((first, second), (second, first)):
        path = jsonl(tmp_path / "r.jsonl", OTHER, {**TRIAL, "trial": 1, field: a}, {**TRIAL, "trial": 2, field: b})
        shown_a, shown_b = (repr(float(v)) if field == "weight" else repr(v) for v in (a, b))
        assert problems(path) == [
            f"{path}:3: {field}: (model_id, task_id) = ('m', 't') has {field} {shown_b} here but {shown_a} at "
            f"{path}:2: the trials of a task describe one task, so its category, cluster, weight must be the "
            "same on each"
        ]


def test_a_field_left_out_on_one_trial_takes_its_default_and_so_disagrees_with_a_value_given(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "r.jsonl", {**TRIAL, "trial": 1, "category": "math"}, {**TRIAL, "trial": 2})
    (problem,) = problems(path)
    assert problem.startswith(f"{path}:2: category: (model_id, task_id) = ('m', 't') has category 'general' here")


def test_the_error_is_at_the_later_file_when_the_trials_are_in_two_files(tmp_path: Path) -> None:
    late = jsonl(tmp_path / "b.jsonl", {**TRIAL, "trial": 2, "cluster": "y"})
    early = jsonl(tmp_path / "a.jsonl", {**TRIAL, "trial": 1, "cluster": "x"})
    for order in ([late, early], [early, late]):
        (problem,) = problems(*order)
        assert problem.startswith(f"{late}:1: cluster: ") and f"but 'x' at {early}:1" in problem


def test_every_disagreeing_trial_is_named_against_the_first(tmp_path: Path) -> None:
    records = [{**TRIAL, "trial": i, "category": c} for i, c in enumerate(["a", "a", "b", "a", "c"], start=1)]
    found = problems(jsonl(tmp_path / "r.jsonl", *records))
    assert [p.split(": ")[0].rsplit(":", 1)[1] for p in found] == ["3", "5"]


def test_trials_that_agree_load_and_different_models_may_file_a_task_differently(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path / "r.jsonl",
        {**TRIAL, "trial": 1, "category": "math", "weight": 2},
        {**TRIAL, "trial": 2, "category": "math", "weight": 2.0},
        {**TRIAL, "model_id": "n", "category": "code"},  # another model's record: not a trial of m's task
    )
    assert [(r.model_id, r.category, r.weight) for r in load_runs([path])] == [
        ("m", "math", 2.0), ("m", "math", 2.0), ("n", "code", 1.0),
    ]  # fmt: skip


@pytest.mark.parametrize("reverse", [False, True])
def test_records_built_in_code_are_checked_alike_in_either_order(reverse: bool) -> None:
    runs = [EvalRun("m", "t", "acc", 0.5, weight=1.0, trial=1), EvalRun("m", "t", "acc", 1.0, weight=3.0, trial=2)]
    runs = runs[::-1] if reverse else runs
    with pytest.raises(InvalidEvalRuns) as caught:
        collapse_trials(runs)
    (problem,) = caught.value.problems
    assert (problem.index, problem.field) == (1, "weight")
    with pytest.raises(InvalidEvalRuns):
        validate_runs(runs)
