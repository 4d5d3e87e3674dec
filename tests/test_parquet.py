"""Parquet: EvalRun's columns, read with the JSONL reader's checks, written back by --export-parquet."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLE
from test_action import run_action

from leaderboard import EvalRun, InvalidEvalRuns, load_runs
from leaderboard.action.settings import SettingsError, parse_settings
from leaderboard.cli import main
from leaderboard.formats import ReadOptions, Session, detect, parquet
from leaderboard.loading import load_file
from leaderboard.report.markdown import md_text
from leaderboard.run_columns import RunColumns

duckdb = pytest.importorskip("duckdb")


def sql_parquet(path: Path, select: str) -> Path:
    """A Parquet file of the rows a SELECT makes: columns typed as a pipeline would write them."""
    with duckdb.connect() as con:
        con.execute(f"COPY ({select}) TO '{path}' (FORMAT parquet)")
    return path


def problems(*paths: Path) -> list[str]:
    with pytest.raises(InvalidEvalRuns) as caught:
        load_runs([str(p) for p in paths])
    return [str(p) for p in caught.value.problems]


ROWS = (
    "SELECT 'm' || (i % 3) AS model_id, 't' || (i // 3) AS task_id, 'acc' AS metric_name, "
    "{score} AS score, {category} AS category FROM range(900) r(i)"
)


def test_a_file_name_with_glob_characters_is_that_file_alone(tmp_path: Path) -> None:
    sql_parquet(tmp_path / "runs-b.parquet", ROWS.format(score="0.5", category="'c'"))
    path = sql_parquet(
        tmp_path / "runs-*.parquet", "SELECT 'm' AS model_id, 't' AS task_id, 'acc' AS metric_name, 1 AS score"
    )
    assert [r.task_id for r in load_file(path)] == ["t"]  # load_file: the name is not a pattern


def test_a_parquet_file_is_told_by_its_magic_bytes_whatever_its_name(tmp_path: Path) -> None:
    path = sql_parquet(tmp_path / "runs.data", ROWS.format(score="0.5", category="'c'"))
    assert detect(path) == "parquet"
    assert len(load_runs([str(path)])) == 900


def test_records_with_every_call_field_come_back_as_they_were_written(tmp_path: Path) -> None:
    runs = [
        EvalRun("m", "t1", "acc", 0.25, "math", 2.0, cost_usd=0.01, latency_ms=120.0, metrics={"cites": 0.5},
                trial=1, cluster="doc-1"),
        EvalRun("m", "t1", "acc", 0.75, "math", 2.0, trial=2, cluster="doc-1"),
        EvalRun("m", "t2", "acc", None, error="timeout"),
        EvalRun("m", "t3", "acc", 0.0, error=True),
        EvalRun("m", "t\u00e9", "acc", 1.0),
    ]  # fmt: skip
    parquet.write_runs(runs, tmp_path / "runs.parquet")
    back = load_runs([str(tmp_path / "runs.parquet")])
    assert back == runs
    assert [r.source.line for r in back if r.source] == [1, 2, 3, 4, 5]


def test_metrics_may_be_a_struct_column_as_pandas_and_polars_write_dicts(tmp_path: Path) -> None:
    select = (
        "SELECT 'm' AS model_id, 't' || i AS task_id, 'acc' AS metric_name, 0.5 AS score, "
        "CASE WHEN i = 0 THEN {'cites': 0.5, 'turns': NULL} ELSE {'cites': NULL, 'turns': 3.0} END AS metrics "
        "FROM range(2) r(i)"
    )
    runs = load_runs([str(sql_parquet(tmp_path / "runs.parquet", select))])
    assert [dict(r.metrics) for r in runs] == [{"cites": 0.5}, {"turns": 3.0}]


def test_a_parquet_file_gives_the_same_comment_as_the_equivalent_jsonl(tmp_path: Path) -> None:
    exported, jsonl_comment, parquet_comment = (tmp_path / n for n in ("runs.parquet", "a.md", "b.md"))
    assert main([str(EXAMPLE), "--comment", str(jsonl_comment), "--export-parquet", str(exported)]) == 0
    assert main([str(exported), "--comment", str(parquet_comment)]) == 0
    assert parquet_comment.read_bytes() == jsonl_comment.read_bytes()


def test_an_exported_baseline_gives_the_same_comparison_as_its_jsonl(tmp_path: Path) -> None:
    exported = tmp_path / "baseline.parquet"
    assert main([str(EXAMPLE), "--export-parquet", str(exported)]) == 0
    comments = []
    for baseline in (EXAMPLE, exported):
        out = tmp_path / f"{baseline.name}.md"
        assert main([str(EXAMPLE), "--baseline", str(baseline), "--comment", str(out)]) == 0
        text = out.read_text()
        comments.append(text.replace(md_text(str(baseline)), "BASELINE").replace(str(baseline), "BASELINE"))
    assert comments[0] == comments[1]


def test_every_bad_row_is_named_by_file_and_row(tmp_path: Path) -> None:
    score = "CASE WHEN i = 399 THEN 1.5 WHEN i = 7 THEN NULL ELSE 0.5 END"
    category = "CASE WHEN i = 9 THEN ' c' ELSE 'c' END"
    path = sql_parquet(tmp_path / "runs.parquet", ROWS.format(score=score, category=category))
    assert problems(path) == [
        f"{path}:8: score: missing required field (only a failed call, with `error` set, may leave it out)",
        f"{path}:10: category: ' c' has leading or trailing whitespace: ids are compared as written, so remove it "
        "upstream (it is not stripped silently)",
        f"{path}:400: score: 1.5 is outside [0, 1]; normalise the metric to a fraction upstream",
    ]


def test_ids_are_checked_as_the_jsonl_reader_checks_them(tmp_path: Path) -> None:
    select = (
        "SELECT 'm' AS model_id, ['t1', 'e\u0301', 't3\u00a0', ' '][i + 1] AS task_id, "
        "['acc', 'acc', 'acc', 'acc'][i + 1] AS metric_name, 0.5 AS score FROM range(4) r(i)"
    )
    path = sql_parquet(tmp_path / "runs.parquet", select)
    with pytest.raises(InvalidEvalRuns) as caught:
        load_runs([str(path)])
    assert [(p.line, p.field) for p in caught.value.problems] == [(3, "task_id"), (4, "task_id")]
    assert "leading or trailing whitespace" in caught.value.problems[0].message


def test_an_id_not_in_nfc_is_kept_in_nfc_as_the_jsonl_reader_keeps_it(tmp_path: Path) -> None:
    select = "SELECT 'm' AS model_id, 'e\u0301' AS task_id, 'acc' AS metric_name, 0.5 AS score"
    [run] = load_runs([str(sql_parquet(tmp_path / "runs.parquet", select))])
    assert run.task_id == "\u00e9"


def test_a_row_repeating_a_jsonl_record_is_a_duplicate_naming_both_places(tmp_path: Path) -> None:
    path = sql_parquet(tmp_path / "runs.parquet", ROWS.format(score="0.5", category="'c'"))
    jsonl = tmp_path / "more.jsonl"
    jsonl.write_text(json.dumps({"model_id": "m0", "task_id": "t0", "metric_name": "acc", "score": 1.0}) + "\n")
    [message] = problems(path, jsonl)
    # Files are read in sorted order: more.jsonl first.
    assert message == f"{path}:1: task_id: duplicate (model_id, task_id) = ('m0', 't0'); first seen at {jsonl}:1"


def test_a_column_of_the_wrong_type_is_refused_by_name(tmp_path: Path) -> None:
    path = sql_parquet(
        tmp_path / "runs.parquet", "SELECT 'm' AS model_id, 1 AS task_id, 'acc' AS metric_name, 0.5 AS score"
    )
    assert problems(path) == [f"{path}: task_id: column 'task_id' is INTEGER, which cannot hold the field"]


def test_a_boolean_score_column_is_refused_as_the_jsonl_reader_refuses_true(tmp_path: Path) -> None:
    path = sql_parquet(
        tmp_path / "runs.parquet", "SELECT 'm' AS model_id, 't' AS task_id, 'acc' AS metric_name, true AS score"
    )
    assert problems(path) == [f"{path}: score: column 'score' is BOOLEAN, which cannot hold the field"]


def test_a_missing_required_column_is_refused_naming_it(tmp_path: Path) -> None:
    path = sql_parquet(tmp_path / "runs.parquet", "SELECT 'm' AS model_id, 't' AS task_id, 0.5 AS score")
    assert problems(path) == [
        f"{path}: has no column metric_name: an EvalRun Parquet file has model_id, task_id, metric_name, score"
    ]


def test_a_file_past_the_row_limit_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(parquet, "MAX_ROWS", 100)
    path = sql_parquet(tmp_path / "runs.parquet", ROWS.format(score="0.5", category="'c'"))
    assert problems(path) == [f"{path}: has 900 rows; a Parquet file may hold 100"]


def test_a_damaged_parquet_file_is_a_problem_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "runs.parquet"
    path.write_bytes(b"PAR1 and then nothing a Parquet reader can use")
    assert main([str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path}: not a readable Parquet file" in err and "Traceback" not in err


def test_without_duckdb_a_parquet_file_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = sql_parquet(tmp_path / "runs.parquet", ROWS.format(score="0.5", category="'c'"))
    monkeypatch.setitem(sys.modules, "duckdb", None)  # import duckdb now raises ImportError
    [message] = problems(path)
    assert "pip install 'leaderboard-action[parquet]'" in message


def test_export_to_a_folder_that_does_not_exist_fails_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "no" / "such" / "runs.parquet"
    assert main([str(EXAMPLE), "--export-parquet", str(target)]) == 1
    err = capsys.readouterr().err
    assert f"cannot write {target.as_posix()}" in err and "Traceback" not in err


def test_format_evalrun_reads_a_parquet_file_as_evalrun_columns(tmp_path: Path) -> None:
    path = sql_parquet(tmp_path / "runs.parquet", ROWS.format(score="0.5", category="'c'"))
    session = Session(ReadOptions("evalrun"))
    assert len(load_runs([str(path)], session=session)) == 900
    assert [f.format for f in session.report().files] == ["parquet"]


def test_a_parquet_name_on_a_file_that_is_not_parquet_is_named_as_such(tmp_path: Path) -> None:
    (tmp_path / "runs.parquet").write_text('{"model_id": "m"}\n')
    assert problems(tmp_path / "runs.parquet") == [
        f"{tmp_path / 'runs.parquet'}: not a Parquet file: it does not start with the bytes PAR1"
    ]


def test_the_export_parquet_input_writes_the_records_inside_the_workspace(tmp_path: Path, fake_github) -> None:
    ws = tmp_path / "workspace"
    (ws / "results").mkdir(parents=True)
    shutil.copy(EXAMPLE, ws / "results" / "mteb.jsonl")
    result = run_action(ws, fake_github.url, export_parquet="out/baseline.parquet")
    assert result.code == 0, result.stdout + result.stderr
    assert load_runs([str(ws / "out/baseline.parquet")]) == load_runs([str(EXAMPLE)])


def test_the_export_parquet_input_never_leaves_the_workspace(tmp_path: Path) -> None:
    for path in ("../baseline.parquet", "/tmp/baseline.parquet", "out/../../x.parquet"):
        with pytest.raises(SettingsError, match="input 'export-parquet'"):
            parse_settings({"INPUT_RUNS": "a.jsonl", "INPUT_EXPORT-PARQUET": path})


def test_the_export_parquet_input_does_not_write_through_a_link(tmp_path: Path, fake_github) -> None:
    ws = tmp_path / "workspace"
    (ws / "results").mkdir(parents=True)
    shutil.copy(EXAMPLE, ws / "results" / "mteb.jsonl")
    (tmp_path / "elsewhere").mkdir()
    (ws / "out").symlink_to(tmp_path / "elsewhere")
    result = run_action(ws, fake_github.url, export_parquet="out/baseline.parquet")
    assert result.code == 1 and "is a symbolic link" in result.stdout
    assert not any((tmp_path / "elsewhere").iterdir())


def test_a_parquet_file_of_plain_rows_is_read_as_columns_with_the_same_records(tmp_path: Path) -> None:
    path = sql_parquet(tmp_path / "runs.parquet", ROWS.format(score="0.5", category="'c'"))
    runs = load_runs([str(path)])
    assert isinstance(runs, RunColumns) and len(runs) == 900
    assert runs[4] == EvalRun("m1", "t1", "acc", 0.5, "c") and str(runs[4].source) == f"{path}:5"


def parquet_rows(path: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """The file's column names and types, and its rows in order."""
    with duckdb.connect() as con:
        described = con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [str(path)]).fetchall()
        rows = con.execute("SELECT * FROM read_parquet(?)", [str(path)]).fetchall()
    return [(name, kind) for name, kind, *_ in described], rows


def columns_of(tmp_path: Path) -> RunColumns:
    """Plain records with several categories, weights and non-ASCII ids, read as columns."""
    lines = [
        json.dumps({"model_id": f"m\u00e9-{m}", "task_id": f"t{t}", "metric_name": "acc", "score": (m * t) % 7 / 6,
                    "category": f"c{t % 3}", **({"weight": 2.5} if t % 4 == 0 else {})})
        for m in range(3) for t in range(40)
    ]  # fmt: skip
    (tmp_path / "runs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    runs = load_runs([str(tmp_path / "runs.jsonl")])
    assert isinstance(runs, RunColumns)
    return runs


def test_records_held_as_columns_are_exported_as_the_same_file_as_those_records_one_by_one(tmp_path: Path) -> None:
    runs = columns_of(tmp_path)
    parquet.write_runs(runs, tmp_path / "columns.parquet")
    parquet.write_runs(list(runs), tmp_path / "records.parquet")
    assert parquet_rows(tmp_path / "columns.parquet") == parquet_rows(tmp_path / "records.parquet")


def test_records_held_as_columns_are_exported_without_building_a_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = columns_of(tmp_path)
    monkeypatch.setattr(RunColumns, "records", property(lambda self: pytest.fail("a record was built")))
    parquet.write_runs(runs, tmp_path / "columns.parquet")
    assert len(parquet_rows(tmp_path / "columns.parquet")[1]) == len(runs)


def test_records_held_as_columns_come_back_from_their_export_as_they_were(tmp_path: Path) -> None:
    runs = columns_of(tmp_path)
    parquet.write_runs(runs, tmp_path / "columns.parquet")
    back = load_runs([str(tmp_path / "columns.parquet")])
    assert isinstance(back, RunColumns)
    assert [(r.model_id, r.task_id, r.metric_name, r.score, r.category, r.weight) for r in back] == [
        (r.model_id, r.task_id, r.metric_name, r.score, r.category, r.weight) for r in runs
    ]


def test_an_export_of_columns_is_taken_as_the_baseline_of_its_own_records(tmp_path: Path) -> None:
    runs = columns_of(tmp_path)
    parquet.write_runs(runs, tmp_path / "baseline.parquet")
    out = tmp_path / "report.json"
    baseline = tmp_path / "baseline.parquet"
    assert main([str(tmp_path / "runs.jsonl"), "--baseline", str(baseline), "--json", str(out)]) == 0
    counts = json.loads(out.read_text())["baseline"]["counts"]
    assert (counts["compared"], counts["unchanged"], counts["tasks_added"], counts["tasks_dropped"]) == (3, 3, 0, 0)


@pytest.mark.parametrize("held", ["columns", "records"])
def test_an_export_replaces_a_file_already_at_its_path(tmp_path: Path, held: str) -> None:
    runs = columns_of(tmp_path)
    target = tmp_path / "baseline.parquet"
    target.write_bytes(b"an earlier export")
    parquet.write_runs(runs if held == "columns" else list(runs), target)
    assert len(parquet_rows(target)[1]) == len(runs)
