"""Loaders: JSON, JSONL and CSV, every problem located by file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leaderboard import EvalRun, InvalidEvalRuns, Source, load_file, load_runs

RECORD = {"model_id": "m", "task_id": "t1", "metric_name": "acc", "score": 0.5}


def problems_of(*args: object, **kwargs: object) -> list[str]:
    with pytest.raises(InvalidEvalRuns) as caught:
        load_runs(*args, **kwargs)  # type: ignore[arg-type]
    return [str(p) for p in caught.value.problems]


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def test_jsonl_reads_one_record_a_line_and_skips_blank_lines(tmp_path: Path) -> None:
    f = write(tmp_path / "r.jsonl", json.dumps(RECORD) + "\n\n" + json.dumps({**RECORD, "task_id": "t2"}) + "\n")
    runs = load_runs([str(f)])
    assert [r.task_id for r in runs] == ["t1", "t2"]
    assert [r.source for r in runs] == [Source(str(f), 1), Source(str(f), 3)]


def test_json_array_records_remember_their_line(tmp_path: Path) -> None:
    text = "[\n  " + json.dumps(RECORD) + ",\n\n  " + json.dumps({**RECORD, "task_id": "t2"}) + "\n]\n"
    runs = load_runs([str(write(tmp_path / "r.json", text))])
    assert [r.source.line for r in runs if r.source] == [2, 4]


def test_json_object_with_a_runs_array(tmp_path: Path) -> None:
    text = '{"runner": "x",\n "runs": [\n' + json.dumps(RECORD) + "\n]}"
    (run,) = load_runs([str(write(tmp_path / "r.json", text))])
    assert run == EvalRun("m", "t1", "acc", 0.5) and run.source and run.source.line == 3


def test_csv_with_a_header_row(tmp_path: Path) -> None:
    text = "model_id,task_id,metric_name,score,category,weight\nm,t1,acc,0.5,,\nm,t2,acc,1,code,2\n"
    runs = load_runs([str(write(tmp_path / "r.csv", text))])
    assert runs == [EvalRun("m", "t1", "acc", 0.5), EvalRun("m", "t2", "acc", 1.0, "code", 2.0)]
    assert [r.source.line for r in runs if r.source] == [2, 3]


def test_utf8_bom_and_crlf_are_accepted(tmp_path: Path) -> None:
    jsonl = write(tmp_path / "a.jsonl", "\ufeff" + json.dumps(RECORD) + "\r\n")
    csv = write(tmp_path / "b.csv", "\ufeffmodel_id,task_id,metric_name,score\r\nn,t1,acc,0.25\r\n")
    js = write(tmp_path / "c.json", "\ufeff[\r\n" + json.dumps({**RECORD, "model_id": "o"}) + "\r\n]")
    assert len(load_runs([str(jsonl), str(csv), str(js)])) == 3


def test_unknown_fields_do_not_fail_a_record(tmp_path: Path) -> None:
    f = write(tmp_path / "r.jsonl", json.dumps({**RECORD, "elapsed_ms": 12, "runner": {"v": 2}}) + "\n")
    assert load_runs([str(f)]) == [EvalRun("m", "t1", "acc", 0.5)]


def test_every_bad_field_is_named_with_its_line(tmp_path: Path) -> None:
    lines = [
        {**RECORD, "score": 1.5},
        {**RECORD, "task_id": "t2", "score": "0.5"},
        {**RECORD, "task_id": "t3", "score": True},
        {**RECORD, "task_id": "t4", "model_id": ""},
        {"model_id": "m", "task_id": "t5", "score": 0.1},
        {**RECORD, "task_id": "t6", "weight": -1},
        {**RECORD, "task_id": "t7", "category": 3},
    ]
    f = write(tmp_path / "r.jsonl", "\n".join(json.dumps(x) for x in lines) + "\nNaN\n")
    name = str(f)
    assert problems_of([name]) == [
        f"{name}:1: score: 1.5 is outside [0, 1]; normalise the metric to a fraction upstream",
        f"{name}:2: score: must be a number, got str '0.5'",
        f"{name}:3: score: must be a number, got bool True",
        f"{name}:4: model_id: must be a non-empty string",
        f"{name}:5: metric_name: missing required field",
        f"{name}:6: weight: must be a finite positive number, got -1",
        f"{name}:7: category: must be a string, got int 3",
        f"{name}:8: each record must be a JSON object with the EvalRun fields, got float",
    ]


def test_non_finite_scores_are_refused(tmp_path: Path) -> None:
    f = write(tmp_path / "r.jsonl", '{"model_id":"m","task_id":"t","metric_name":"a","score":NaN}\n')
    assert problems_of([str(f)]) == [f"{f}:1: score: must be finite, got nan"]


def test_a_duplicate_pair_names_both_places_across_files(tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", json.dumps(RECORD) + "\n")
    b = write(tmp_path / "b.jsonl", json.dumps({**RECORD, "task_id": "t0"}) + "\n" + json.dumps(RECORD) + "\n")
    assert problems_of([str(b), str(a)]) == [
        f"{b}:2: task_id: duplicate (model_id, task_id) = ('m', 't1'); first seen at {a}:1"
    ]


def test_a_duplicate_is_reported_even_when_the_record_has_another_problem(tmp_path: Path) -> None:
    f = write(tmp_path / "r.jsonl", json.dumps(RECORD) + "\n" + json.dumps({**RECORD, "score": 7}) + "\n")
    assert len(problems_of([str(f)])) == 2


def test_truncated_json_is_an_error_at_the_line_it_breaks(tmp_path: Path) -> None:
    f = write(tmp_path / "r.json", "[\n" + json.dumps(RECORD) + ',\n{"model_id": ')
    (problem,) = problems_of([str(f)])
    assert problem.startswith(f"{f}:3: invalid JSON")


def test_a_truncated_jsonl_line_is_an_error(tmp_path: Path) -> None:
    f = write(tmp_path / "r.jsonl", json.dumps(RECORD) + "\n" + '{"model_id": "m", "task')
    (problem,) = problems_of([str(f)])
    assert problem.startswith(f"{f}:2: invalid JSON")


def test_non_utf8_is_an_error_naming_the_file_and_line(tmp_path: Path) -> None:
    f = write(
        tmp_path / "r.jsonl",
        json.dumps({**RECORD, "model_id": "modèle"}, ensure_ascii=False) + "\n",
        encoding="latin-1",
    )
    (problem,) = problems_of([str(f)])
    assert problem.startswith(f"{f}:1: not UTF-8")


@pytest.mark.parametrize(
    "name,text", [("e.jsonl", ""), ("e.json", "[]"), ("e.csv", "model_id,task_id,metric_name,score\n")]
)
def test_a_file_with_no_records_is_an_error(tmp_path: Path, name: str, text: str) -> None:
    f = write(tmp_path / name, text)
    (problem,) = problems_of([str(f)])
    assert problem.startswith(str(f))


def test_a_json_document_of_another_shape_is_an_error(tmp_path: Path) -> None:
    f = write(tmp_path / "r.json", '{"results": []}')
    assert problems_of([str(f)]) == [f'{f}:1: expected a JSON array of records or an object with a "runs" array']


def test_a_csv_without_required_columns_is_one_error(tmp_path: Path) -> None:
    f = write(tmp_path / "r.csv", "model,task,score\nm,t,0.5\n")
    assert problems_of([str(f)]) == [f"{f}:1: the header row lacks the column(s) model_id, task_id, metric_name"]


def test_an_unknown_extension_or_missing_file_is_an_error(tmp_path: Path) -> None:
    f = write(tmp_path / "r.yaml", "x")
    missing = tmp_path / "nope.jsonl"
    found = problems_of([str(f), str(missing)])
    assert any("unknown format '.yaml'" in p for p in found) and any("cannot read" in p for p in found)


def test_a_glob_matching_nothing_is_an_error(tmp_path: Path) -> None:
    assert problems_of([str(tmp_path / "*.jsonl")]) == [f"{tmp_path}/*.jsonl: no file matches '{tmp_path}/*.jsonl'"]


def test_globs_expand_in_sorted_order_whatever_the_pattern_order(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    write(tmp_path / "b.jsonl", json.dumps({**RECORD, "model_id": "b"}) + "\n")
    write(tmp_path / "sub" / "a.jsonl", json.dumps({**RECORD, "model_id": "a"}) + "\n")
    runs = load_runs(["**/*.jsonl", "b.jsonl"], root=tmp_path)
    assert [(r.model_id, r.source.file if r.source else "") for r in runs] == [("b", "b.jsonl"), ("a", "sub/a.jsonl")]


def test_paths_outside_the_root_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    write(tmp_path / "secret.jsonl", json.dumps(RECORD) + "\n")
    (root / "link.jsonl").symlink_to(tmp_path / "secret.jsonl")
    found = problems_of(["../secret.jsonl", str(tmp_path / "secret.jsonl"), "link.jsonl"], root=root)
    assert len(found) == 3 and all("outside the workspace" in p for p in found)


def test_load_file_reads_one_file(tmp_path: Path) -> None:
    f = write(tmp_path / "r.jsonl", json.dumps(RECORD) + "\n")
    assert load_file(f) == [EvalRun("m", "t1", "acc", 0.5)]


def test_every_problem_prints_on_one_line_whatever_the_file_name(tmp_path: Path) -> None:
    f = write(tmp_path / "odd\nname.jsonl", json.dumps({**RECORD, "score": 2}) + "\n")
    (problem,) = problems_of([str(f)])
    assert "\n" not in problem and "odd\\nname.jsonl:1: score:" in problem
