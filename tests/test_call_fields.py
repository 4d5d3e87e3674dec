"""The optional fields about each call: read from every format, checked at file:line like the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leaderboard import EvalRun, InvalidEvalRuns, analyse, load_runs, validate_runs

RECORD = {"model_id": "m", "task_id": "t1", "metric_name": "acc", "score": 0.5}


def jsonl(tmp_path: Path, *records: dict[str, object]) -> str:
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def problems(path: str) -> list[str]:
    with pytest.raises(InvalidEvalRuns) as caught:
        load_runs([path])
    return [f"{p.line}: {p.field}: {p.message}" for p in caught.value.problems]


def test_cost_latency_error_metrics_and_trial_are_read_from_jsonl(tmp_path: Path) -> None:
    record = {**RECORD, "cost_usd": 0.002, "latency_ms": 850, "metrics": {"citation_rate": 0.8}, "trial": 2}
    (run,) = load_runs([jsonl(tmp_path, record)])
    assert (run.cost_usd, run.latency_ms, run.metrics, run.trial, run.failed) == (
        0.002, 850.0, {"citation_rate": 0.8}, 2, False,
    )  # fmt: skip


def test_a_failed_call_may_omit_its_score(tmp_path: Path) -> None:
    record = {k: v for k, v in RECORD.items() if k != "score"}
    (run,) = load_runs([jsonl(tmp_path, {**record, "error": "timeout"})])
    assert run.score is None and run.failed and run.error == "timeout"


def test_a_call_that_did_not_fail_still_needs_a_score(tmp_path: Path) -> None:
    record = {k: v for k, v in RECORD.items() if k != "score"}
    assert problems(jsonl(tmp_path, {**record, "error": False})) == [
        "1: score: missing required field (only a failed call, with `error` set, may leave it out)"
    ]


def test_null_means_absent_for_the_optional_call_fields(tmp_path: Path) -> None:
    record = {**RECORD, "cost_usd": None, "latency_ms": None, "error": None, "metrics": None, "trial": None}
    assert load_runs([jsonl(tmp_path, record)]) == [EvalRun("m", "t1", "acc", 0.5)]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("cost_usd", -0.1, "must be a finite number >= 0, got -0.1"),
        ("cost_usd", "free", "must be a number, got str 'free'"),
        ("latency_ms", True, "must be a number, got bool True"),
        ("error", 3, 'must be true, false or a short reason such as "timeout", got 3'),
        ("error", " ", "' ' must be non-empty, without leading or trailing whitespace"),
        ("metrics", [0.8], 'must be an object of numbers such as {"citation_rate": 0.8}, got [0.8]'),
        ("cost_usd", 1e306, "must be at most 1e+12, got 1e+306"),
        (
            "metrics",
            {"citation_rate": "high"},
            "'citation_rate' must be a finite number of magnitude at most 1e+12, got 'high'",
        ),
        ("metrics", {"cost": 1.0}, "'cost' is a metric the leaderboard computes itself; name yours otherwise"),
        ("trial", 1.5, "must be an integer or a string, got float 1.5"),
    ],
)
def test_an_invalid_call_field_is_a_problem_at_its_line(
    tmp_path: Path, field: str, value: object, message: str
) -> None:
    path = jsonl(tmp_path, {**RECORD, "task_id": "t0"}, {**RECORD, field: value})
    assert problems(path) == [f"2: {field}: {message}"]


def test_trials_with_distinct_values_are_not_duplicates(tmp_path: Path) -> None:
    assert len(load_runs([jsonl(tmp_path, {**RECORD, "trial": 1}, {**RECORD, "trial": 2})])) == 2


def test_the_same_trial_twice_is_a_duplicate_naming_both_lines(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {**RECORD, "trial": 1}, {**RECORD, "trial": 1})
    assert problems(path) == [
        f"2: task_id: duplicate (model_id, task_id, trial) = ('m', 't1', 1); first seen at {path}:1"
    ]


def test_the_csv_format_has_columns_for_the_call_fields(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text(
        "model_id,task_id,metric_name,score,cost_usd,latency_ms,error,trial,metrics.citation_rate\n"
        "m,t1,acc,0.5,0.002,850,,1,0.8\n"
        "m,t1,acc,,,,timeout,2,\n"
    )
    first, second = load_runs([str(path)])
    assert (first.cost_usd, first.latency_ms, first.trial, first.metrics) == (0.002, 850.0, 1, {"citation_rate": 0.8})
    assert (second.score, second.error, second.trial) == (None, "timeout", 2)


def test_records_built_in_code_are_checked_alike() -> None:
    with pytest.raises(InvalidEvalRuns, match="cost_usd: must be a finite number >= 0"):
        validate_runs([EvalRun("m", "t", "acc", 0.5, cost_usd=-1.0)])
    with pytest.raises(InvalidEvalRuns, match="score: must be a number"):
        validate_runs([EvalRun("m", "t", "acc", None)])


def test_an_id_with_a_lone_surrogate_is_a_problem_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"model_id": "a\\ud800", "task_id": "t", "metric_name": "acc", "score": 1}\n')
    with pytest.raises(InvalidEvalRuns, match="not valid Unicode") as caught:
        analyse(load_runs([str(path)]))
    assert caught.value.problems[0].line == 1


def test_a_lone_surrogate_is_named_at_its_line_beside_the_files_other_problems(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"model_id": "m", "task_id": "t\\ud83d", "metric_name": "acc", "score": 0.5}\n'
        '{"model_id": "m", "task_id": "u", "metric_name": "acc", "score": 1.5}\n'
    )
    with pytest.raises(InvalidEvalRuns) as caught:
        load_runs([str(path)])
    assert [(p.line, p.field) for p in caught.value.problems] == [(1, "task_id"), (2, "score")]
