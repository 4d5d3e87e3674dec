"""The fast paths for EvalRun JSON arrays and CSV files: the same records as the precise reader, or the precise
reader itself.

A file of plain records is read by DuckDB into columns; anything the fast path cannot vouch for sends the whole
file to the precise reader, which names every problem at its line.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from conftest import realdata

from leaderboard import EvalRun, InvalidEvalRuns, analyse, load_runs
from leaderboard.cli import main
from leaderboard.formats import evalrun
from leaderboard.run_columns import RunColumns

pytest.importorskip("duckdb")

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "mteb-eng-v2-sample.jsonl"
FIELDS = ["model_id", "task_id", "metric_name", "score", "category", "weight"]


def record(model: str = "m", task: str = "t", score: object = 0.5, **fields: object) -> dict[str, object]:
    return {"model_id": model, "task_id": task, "metric_name": "acc", "score": score, **fields}


SUITE = [
    record(f"model-{m}", f"task-{t}", (m + t) % 11 / 10, category=f"c{t % 3}", **({"weight": 2} if t % 7 == 0 else {}))
    for m in range(3)
    for t in range(50)
]


def json_array(path: Path, records: Sequence[object], indent: int | None = 2) -> Path:
    path.write_text(json.dumps(list(records), indent=indent), encoding="utf-8")
    return path


def csv_text(records: Sequence[dict[str, object]], columns: Sequence[str] = FIELDS, end: str = "\r\n") -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, list(columns), lineterminator=end, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue()


def csv_file(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def precise(paths: Sequence[Path], monkeypatch: pytest.MonkeyPatch) -> list[EvalRun]:
    """What the precise reader alone gives (its records, or its problems raised)."""
    with monkeypatch.context() as patched:
        for fast in ("read_json_array", "read_csv_columns"):
            patched.setattr(evalrun, fast, lambda handle, name, sink: None)
        return list(load_runs([str(p) for p in paths]))


def problems_of(paths: Sequence[Path]) -> list[str]:
    with pytest.raises(InvalidEvalRuns) as caught:
        load_runs([str(p) for p in paths])
    return [str(p) for p in caught.value.problems]


def precise_problems(paths: Sequence[Path], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    with pytest.raises(InvalidEvalRuns) as caught:
        precise(paths, monkeypatch)
    return [str(p) for p in caught.value.problems]


def places(runs: Sequence[EvalRun]) -> list[tuple[Any, ...]]:
    return [(r.model_id, r.task_id, r.metric_name, r.score, r.category, r.weight, str(r.source)) for r in runs]


def converted(source: Path, folder: Path, kind: str) -> Path:
    """A JSON-lines file of plain records written again as a JSON array or CSV."""
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    if kind == "json":
        return json_array(folder / f"{source.stem}.json", records)
    columns = list(dict.fromkeys(key for r in records for key in r))
    return csv_file(folder / f"{source.stem}.csv", csv_text(records, columns))


# --- JSON arrays ------------------------------------------------------------------------------------------------


def test_a_json_array_of_plain_records_is_read_as_columns(tmp_path: Path) -> None:
    runs = load_runs([str(json_array(tmp_path / "runs.json", SUITE))])
    assert isinstance(runs, RunColumns) and len(runs) == 150


@pytest.mark.parametrize("indent", [None, 2], ids=["one line", "indented"])
def test_each_record_of_a_json_array_is_placed_at_the_line_of_its_brace_as_the_precise_reader_places_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, indent: int | None
) -> None:
    path = json_array(tmp_path / "runs.json", SUITE, indent)
    fast = load_runs([str(path)])
    assert isinstance(fast, RunColumns)
    assert places(fast) == places(precise([path], monkeypatch))


@pytest.mark.parametrize("by_model", [True, False], ids=["each model's tasks in order", "each task's records together"])
def test_a_json_array_of_tasks_in_order_gives_the_records_and_places_of_the_precise_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by_model: bool
) -> None:
    # Tasks in order are coded by the records' places in the array, before each is put at the line of its brace.
    pairs = [(m, t) for m in range(3) for t in range(40)] if by_model else [(m, t) for t in range(40) for m in range(3)]
    path = json_array(tmp_path / "runs.json", [record(f"model-{m}", f"task-{t:02}", t / 40) for m, t in pairs])
    fast = load_runs([str(path)])
    assert isinstance(fast, RunColumns) and fast.tasks == tuple(f"task-{t:02}" for t in range(40))
    assert places(fast) == places(precise([path], monkeypatch))


def test_a_brace_inside_a_string_does_not_move_the_records_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = json_array(tmp_path / "runs.json", [record(task="{x}"), record(model="n", task="t}{"), *SUITE])
    fast = load_runs([str(path)])
    assert isinstance(fast, RunColumns)
    assert places(fast) == places(precise([path], monkeypatch))


def test_a_json_array_with_colons_in_its_ids_is_read_as_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = json_array(tmp_path / "runs.json", [record("org:m", "mmlu:1"), *SUITE])
    fast = load_runs([str(path)])
    assert isinstance(fast, RunColumns)
    assert places(fast) == places(precise([path], monkeypatch))


def test_a_bad_score_deep_in_a_large_json_array_is_named_at_its_line(tmp_path: Path) -> None:
    records = [record(f"m{i % 20}", f"t{i // 20}") for i in range(100_000)]
    records[79_999]["score"] = 1.5
    path = json_array(tmp_path / "runs.json", records, indent=None)
    path.write_text(path.read_text().replace("}, {", "},\n{"), encoding="utf-8")  # one record a line
    assert problems_of([path]) == [
        f"{path}:80000: score: 1.5 is outside [0, 1]; normalise the metric to a fraction upstream"
    ]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (json.dumps(record(score="0.5")), "a string score (DuckDB would cast it)"),
        (json.dumps(record(score=True)), "a boolean score (DuckDB would cast it)"),
        (json.dumps(record(model=7)), "a number for an id (DuckDB would cast it)"),
        (json.dumps(record(weight="2")), "a string weight"),
        ('{"model_id": "m", "model_id": "n", "task_id": "t", "metric_name": "acc", "score": 0.5}', "a key twice"),
        (json.dumps(record(task="t ")), "an id with whitespace at an end"),
        (json.dumps(record(weight=0)), "a weight of 0"),
        (json.dumps(record(score=float("nan"))), "NaN"),
        (json.dumps(record(score=1e400)), "a score that overflows to infinity"),
        ("[1, 2]", "not an object"),
        ('{"model_id": "m", "task_id": "t", "metric_name": "acc", "score": 0.5,}', "a trailing comma"),
        ('{"model_id": "m" "task_id": "t"}', "a missing comma"),
        (json.dumps(record()) + "\f", "a form feed between records (DuckDB reads it)"),
    ],
)  # fmt: skip
def test_a_json_array_record_the_fast_path_cannot_vouch_for_gives_every_problem_the_precise_reader_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, why: str
) -> None:
    head, tail = json.dumps(SUITE[:40], indent=1)[:-2], json.dumps(SUITE[40:], indent=1)[1:]
    path = tmp_path / "runs.json"
    path.write_text(f"{head},\n{text},\n{tail}", encoding="utf-8")
    fast = problems_of([path])
    assert fast == precise_problems([path], monkeypatch) and fast, why
    assert any(p.startswith(f"{path}:{head.count(chr(10)) + 2}:") for p in fast), why


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (json.dumps({"runs": SUITE}, indent=2), "the object form"),
        (json.dumps([record(task='say "hi"'), *SUITE], indent=2), "an escaped quote"),
        (json.dumps([record(task='say "{hi}"'), *SUITE], indent=2), "a brace in a string with an escaped quote"),
        ("\ufeff" + json.dumps(SUITE, indent=2), "a byte-order mark"),
        (json.dumps(SUITE, indent=2).replace("\n", "\r\n"), "Windows line ends"),
        (json.dumps([record(task="cafe\u0301"), *SUITE], indent=2), "an id not in NFC: kept in NFC"),
        (json.dumps([record(category=None, weight=None), *SUITE], indent=2), "null optional fields"),
        (json.dumps([record(trial=1), record(trial=2), *SUITE], indent=2), "a call field"),
        (json.dumps([record(task="caf\u00e9"), *SUITE], indent=2, ensure_ascii=False), "UTF-8 text"),
    ],
)  # fmt: skip
def test_a_valid_json_array_gives_the_records_of_the_precise_reader_on_the_fast_path_or_off_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, why: str
) -> None:
    path = tmp_path / "runs.json"
    path.write_text(text, encoding="utf-8")
    assert places(load_runs([str(path)])) == places(precise([path], monkeypatch)), why


# --- CSV ------------------------------------------------------------------------------------------------------


def test_a_csv_file_of_plain_rows_is_read_as_columns(tmp_path: Path) -> None:
    runs = load_runs([str(csv_file(tmp_path / "runs.csv", csv_text(SUITE)))])
    assert isinstance(runs, RunColumns) and len(runs) == 150


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (csv_text(SUITE), "Windows line ends, empty weight cells"),
        (csv_text(SUITE, end="\n"), "Unix line ends"),
        (csv_text(SUITE).removesuffix("\r\n"), "no line end after the last row"),
        ("\ufeff" + csv_text(SUITE), "a byte-order mark"),
        (csv_text([record(model="a,b", task='say "hi"'), *SUITE]), "quoted cells with a comma and a quote"),
        (csv_text([record(category=""), *SUITE], end="\n").replace(",,", ',"",', 1), "a quoted empty cell"),
        (csv_text(SUITE, ["note", *FIELDS, "trial", "metrics.tokens"]), "unknown columns and empty call columns"),
        (csv_text([record(score="1."), record(task="u", score=".5"), record(task="v", score="+5e-1"), *SUITE]),
         "decimals as Python reads them"),
        (csv_text([record(score="0.1000000000000000055511151231257827021181583404541015625"),
                   record(task="u", score="0.99999999999999999999"), *SUITE]), "long decimals, as Python rounds"),
        (csv_text(SUITE, [*FIELDS, *(f"extra-{i}" for i in range(900))]), "900 columns the reader ignores"),
    ],
)  # fmt: skip
def test_a_csv_file_read_as_columns_gives_the_records_and_lines_of_the_precise_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, why: str
) -> None:
    path = csv_file(tmp_path / "runs.csv", text)
    fast = load_runs([str(path)])
    assert isinstance(fast, RunColumns), why
    assert places(fast) == places(precise([path], monkeypatch)), why


def test_a_bad_score_deep_in_a_large_csv_file_is_named_at_its_line(tmp_path: Path) -> None:
    rows = [f"m{i % 20},t{i // 20},acc,0.5" for i in range(200_000)]
    rows[149_999] = "m19,t7499,acc,1.5"
    path = csv_file(tmp_path / "runs.csv", "model_id,task_id,metric_name,score\n" + "\n".join(rows) + "\n")
    assert problems_of([path]) == [
        f"{path}:150001: score: 1.5 is outside [0, 1]; normalise the metric to a fraction upstream"
    ]


@pytest.mark.parametrize(
    ("row", "why"),
    [
        ("m,x,acc,0_1", "a score Python's float() would take but the plain-decimal grammar refuses"),
        ("m,x,acc,1.5", "a score out of range"),
        ("m,x,acc,", "no score"),
        ("m,x,acc,nan", "NaN"),
        (",x,acc,0.5", "an empty model id"),
        ("m,x ,acc,0.5", "a task id with whitespace at an end"),
        ("m,x,acc,0.5,c,0", "a weight of 0"),
        ("m,x,acc,0.5,c,two", "a weight that is not a number"),
        ("m,x,acc", "a row with fewer cells"),
        ("m,x,acc,0.5,c,1,extra", "a row with more cells"),
        ('"m"x,x,acc,0.5', "text after a closing quote"),
        ("m,x,acc,0.5\x00", "a NUL byte"),
        ('"m,x,acc,0.5', "a quote never closed"),
    ],
)  # fmt: skip
def test_a_csv_row_the_fast_path_cannot_vouch_for_gives_every_problem_the_precise_reader_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, row: str, why: str
) -> None:
    lines = csv_text(SUITE, end="\n").splitlines()
    path = csv_file(tmp_path / "runs.csv", "\n".join([*lines[:41], row, *lines[41:]]) + "\n")
    fast = problems_of([path])
    assert fast == precise_problems([path], monkeypatch) and fast, why
    assert any(p.startswith(f"{path}:42:") for p in fast), why


@pytest.mark.parametrize(
    ("header", "why"),
    [
        ("model_id,task_id,metric_name,score,category,weight,score", "a column named twice"),
        ("model_id,task_id,metric,score,category,weight", "a required column missing"),
    ],
)
def test_a_csv_header_the_fast_path_cannot_vouch_for_gives_the_precise_readers_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, header: str, why: str
) -> None:
    body = csv_text(SUITE, end="\n").split("\n", 1)[1]
    path = csv_file(tmp_path / "runs.csv", f"{header}\n{body}")
    fast = problems_of([path])
    assert fast == precise_problems([path], monkeypatch) and any(f"{path}:1:" in p for p in fast), why


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (csv_text([record(model="line\nbreak"), *SUITE]), "a line end inside a quoted cell: later rows' lines move"),
        (csv_text(SUITE, end="\n").replace("\n", "\n\n", 3), "blank lines"),
        (csv_text(SUITE, end="\r"), "old Mac line ends"),
        (csv_text([record(task="cafe\u0301"), *SUITE]), "an id not in NFC: kept in NFC"),
        (csv_text([record(trial=1), record(trial=2), *SUITE], [*FIELDS, "trial"]), "a call field given"),
        (csv_text(SUITE, end="\n").replace("task-3,", 'ta"sk-3,'), "a quote inside an unquoted cell"),
        ('"model_id",task_id,metric_name,score\nm,t,acc,0.5\n', "a quoted header"),
        ("model_id,task_id,metric_name,score,category\nm,t,acc,0.5\n", "a row without its trailing empty cells"),
        (csv_text(SUITE, [*FIELDS, *(f"extra-{i}" for i in range(1_000))]), "more columns than the fast path reads"),
    ],
)  # fmt: skip
def test_a_valid_csv_file_off_the_fast_path_gives_the_records_of_the_precise_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, why: str
) -> None:
    path = csv_file(tmp_path / "runs.csv", text)
    fast = load_runs([str(path)])
    assert not isinstance(fast, RunColumns), why
    assert places(fast) == places(precise([path], monkeypatch)), why


# --- the example and real data ----------------------------------------------------------------------------------


def documents(path: Path, folder: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, bytes, bytes]:
    """The CLI's printed leaderboard, JSON report and comment for the file."""
    report, comment = folder / "report.json", folder / "comment.md"
    assert main([str(path), "--json", str(report), "--comment", str(comment), "--b", "400"]) == 0
    return capsys.readouterr().out, report.read_bytes(), comment.read_bytes()


@pytest.mark.parametrize("kind", ["json", "csv"])
def test_the_bundled_example_converted_gives_the_same_documents_on_the_fast_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    path = converted(EXAMPLE, tmp_path, kind)
    assert isinstance(load_runs([str(path)]), RunColumns)
    fast = documents(path, tmp_path, capsys)
    with monkeypatch.context() as patched:
        for name in ("read_json_array", "read_csv_columns"):
            patched.setattr(evalrun, name, lambda handle, name, sink: None)
        assert documents(path, tmp_path, capsys) == fast


@pytest.mark.parametrize("kind", ["json", "csv"])
@pytest.mark.parametrize("name", ["swebench_verified.jsonl", "mteb_eng_v2.jsonl"])
def test_real_data_converted_is_read_as_columns_with_the_records_and_leaderboard_of_the_precise_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, kind: str
) -> None:
    path = converted(realdata(name), tmp_path, kind)
    fast = load_runs([str(path)])
    slow = precise([path], monkeypatch)
    assert isinstance(fast, RunColumns)
    assert places(fast) == places(slow)
    assert analyse(fast, b=400, seed=1) == analyse(slow, b=400, seed=1)
