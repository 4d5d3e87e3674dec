"""The fast path for EvalRun JSON lines: the same records as the precise reader, or the precise reader itself.

A file of plain records is decoded by DuckDB into columns; any line the fast path cannot vouch for sends the
whole file to the precise reader, which names every problem at its line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from leaderboard import EvalRun, InvalidEvalRuns, analyse, load_runs
from leaderboard.formats import evalrun, fast_columns
from leaderboard.formats.evalrun_fast import read_jsonl
from leaderboard.formats.evalrun_records import Sink
from leaderboard.run_columns import RunColumns

pytest.importorskip("duckdb")


def line(model: str = "m", task: str = "t", score: object = 0.5, **fields: object) -> str:
    return json.dumps({"model_id": model, "task_id": task, "metric_name": "acc", "score": score, **fields})


def write(path: Path, lines: Sequence[str], end: str = "\n") -> Path:
    path.write_text(end.join(lines) + end, encoding="utf-8")
    return path


def precise(paths: Sequence[Path], monkeypatch: pytest.MonkeyPatch) -> list[EvalRun]:
    """What the precise reader alone gives (its records, or its problems raised)."""
    with monkeypatch.context() as patched:
        patched.setattr(evalrun, "read_jsonl", lambda handle, name, sink: None)
        return list(load_runs([str(p) for p in paths]))


def problems_of(paths: Sequence[Path]) -> list[str]:
    with pytest.raises(InvalidEvalRuns) as caught:
        load_runs([str(p) for p in paths])
    return [str(p) for p in caught.value.problems]


SUITE = [line(f"model-{m}", f"task-{t}", (m + t) % 11 / 10, category=f"c{t % 3}") for m in range(3) for t in range(50)]


def test_a_file_of_plain_records_is_read_as_columns(tmp_path: Path) -> None:
    runs = load_runs([str(write(tmp_path / "runs.jsonl", SUITE))])
    assert isinstance(runs, RunColumns) and len(runs) == 150


def test_the_columns_are_the_records_the_precise_reader_gives_in_their_order_and_places(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [write(tmp_path / "a.jsonl", SUITE[:70]), write(tmp_path / "b.jsonl", SUITE[70:])]
    fast = load_runs([str(p) for p in files])
    assert isinstance(fast, RunColumns)
    slow = precise(files, monkeypatch)
    assert list(fast) == slow
    assert [r.source for r in fast] == [r.source for r in slow]


def test_the_leaderboard_of_the_columns_is_that_of_the_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "runs.jsonl", SUITE)
    assert analyse(load_runs([str(path)]), b=400, seed=3) == analyse(precise([path], monkeypatch), b=400, seed=3)


def test_a_bad_score_on_line_400000_of_500000_is_named_at_that_line(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    lines = [f'{{"model_id": "m{i % 50}", "task_id": "t{i // 50}", "metric_name": "acc", "score": 0.5}}'
             for i in range(500_000)]  # fmt: skip
    lines[399_999] = lines[399_999].replace('"score": 0.5', '"score": 1.5')
    write(path, lines)
    assert problems_of([path]) == [
        f"{path}:400000: score: 1.5 is outside [0, 1]; normalise the metric to a fraction upstream"
    ]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (line(score="0.5"), "a string score (DuckDB would cast it)"),
        (line(score=True), "a boolean score (DuckDB would cast it)"),
        (line(model=7), "a number for an id (DuckDB would cast it)"),
        (line(weight="2"), "a string weight (DuckDB would cast it)"),
        (line(category=5), "a number for a category (DuckDB would cast it)"),
        ('{"model_id": "m", "model_id": "n", "task_id": "t", "metric_name": "acc", "score": 0.5}', "a key twice"),
        (line(note=1)[:-1] + ', "note": 2}', "a key DuckDB is not asked for, twice"),
        (line(task="t "), "an id with whitespace at an end"),
        (line(category=" c"), "a category with whitespace at an end"),
        (line(weight=0), "a weight of 0"),
        (line(score=float("nan")), "NaN"),
        ("[1, 2]", "not an object"),
        ("{not json", "broken JSON"),
        (line()[:-1] + ",}", "a comma before the closing brace (DuckDB reads it)"),
        ("\ufeff" + line(), "a byte-order mark past the first line"),
        (line(task="\ud800"), "a lone surrogate escape"),
        (line(task="\udc00"), "a lone low surrogate escape"),
    ],
)  # fmt: skip
def test_a_line_the_fast_path_cannot_vouch_for_gives_every_problem_the_precise_reader_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, why: str
) -> None:
    path = write(tmp_path / "runs.jsonl", [*SUITE[:40], text, *SUITE[40:]])
    fast = problems_of([path])
    with pytest.raises(InvalidEvalRuns) as caught:
        precise([path], monkeypatch)
    assert fast == [str(p) for p in caught.value.problems] and any(":41:" in p for p in fast), why


@pytest.mark.parametrize(
    ("lines", "end"),
    [
        ([*SUITE[:5], "", *SUITE[5:]], "\n"),  # a blank line: the line numbers are not the rows'
        ([line(trial=1), line(trial=2), *SUITE], "\n"),  # a call field
        ([line(category=None, weight=None), *SUITE], "\n"),  # null optional fields
        ([line()[:-1] + "\r}", *SUITE], "\n"),  # a "\r" that ends no line
        ([line(task="caf\u00e9"), *SUITE], "\n"),  # a non-ASCII id in NFC
        ([line(task="t\u0301"), *SUITE], "\n"),  # an id not in NFC: kept in NFC
    ],
)
def test_a_valid_file_off_the_fast_path_gives_the_same_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: list[str], end: str
) -> None:
    path = write(tmp_path / "runs.jsonl", lines, end)
    fast = load_runs([str(path)])
    assert list(fast) == precise([path], monkeypatch)
    assert [r.source for r in fast] == [r.source for r in precise([path], monkeypatch)]


@pytest.mark.parametrize(
    ("lines", "end"),
    [
        (SUITE, "\r\n"),
        (["\ufeff" + SUITE[0], *SUITE[1:]], "\n"),
        (["\ufeff" + SUITE[0], *SUITE[1:]], "\r\n"),
    ],
    ids=["Windows line ends", "a byte-order mark", "both"],
)
def test_windows_line_ends_and_a_byte_order_mark_are_read_as_columns_with_the_records_of_the_precise_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: list[str], end: str
) -> None:
    path = write(tmp_path / "runs.jsonl", lines, end)
    fast = load_runs([str(path)])
    assert isinstance(fast, RunColumns)
    assert list(fast) == precise([path], monkeypatch)
    assert [r.source for r in fast] == [r.source for r in precise([path], monkeypatch)]


@pytest.mark.parametrize(
    "task",
    ["\U0001f600", "a\U0001f600b\U0001f680", "\\ud83d", "\\\U0001f600", "\\\\ud83d\\"],
    ids=["an emoji", "two emoji", "a backslash before ud83d", "a backslash before an emoji", "two backslashes"],
)
def test_surrogate_pairs_and_escaped_backslashes_are_read_as_columns_with_the_records_of_the_precise_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, task: str
) -> None:
    # json.dumps writes a character past U+FFFF as an escaped surrogate pair, and a backslash as "\\\\".
    path = write(tmp_path / "runs.jsonl", [line(task=task), *SUITE])
    assert "\\u" in path.read_text() or "\\\\" in path.read_text()
    fast = load_runs([str(path)])
    assert isinstance(fast, RunColumns)
    assert list(fast) == precise([path], monkeypatch)


@pytest.mark.parametrize(
    "text",
    [
        '{"model_id": "m", "task_id": "t\\ud83d", "metric_name": "acc", "score": 0.5}',
        '{"model_id": "m", "task_id": "t\\ude00", "metric_name": "acc", "score": 0.5}',
        '{"model_id": "m", "task_id": "\\ude00\\ud83d", "metric_name": "acc", "score": 0.5}',
        '{"model_id": "m", "task_id": "\\\\\\ud83d", "metric_name": "acc", "score": 0.5}',
        '{"model_id": "m", "task_id": "\\\\ud83d\\ude00", "metric_name": "acc", "score": 0.5}',
    ],
    ids=["a high one alone", "a low one alone", "low before high", "after a backslash", "a low one after text"],
)
def test_a_lone_surrogate_escape_is_not_vouched_for(tmp_path: Path, text: str) -> None:
    path = write(tmp_path / "runs.jsonl", [*SUITE[:40], text, *SUITE[40:]])
    with path.open("rb") as handle:
        assert read_jsonl(handle, str(path), Sink()) is None


@pytest.mark.parametrize(
    "text",
    [
        '{"model_id": 7, "task_id": "t", "metric_name": "acc", "score": 0.5, "category": "[x]"}',
        '{"model_id": 7, "task_id": "t", "metric_name": "acc", "score": 0.5, "category": "a\\"b"}',
        '{"model_id": 7, "task_id": ["t", "u"], "metric_name": "acc", "score": 0.5}',
        '{"model_id": true, "task_id": "t", "metric_name": "acc", "score": 0.5, "category": "a:b"}',
        '{"model_id": {}, "task_id": "t", "metric_name": "acc", "score": 0.5}',
        '{"model_id": "m", "task_id": "t", "metric_name": "acc", "score": 0.5, "weight": null}',
        '{"model_id": "m", "task_id": "t", "metric_name": "acc", "score": "0.5", "category": 5}',
    ],
    ids=[
        "a number id beside a bracket", "a number id beside an escaped quote", "a number id beside an array",
        "a literal id beside a colon", "an empty object for an id", "a null weight", "a string score and category",
    ],
)  # fmt: skip
def test_an_id_of_another_type_is_not_vouched_for_whatever_else_the_line_holds(tmp_path: Path, text: str) -> None:
    path = write(tmp_path / "runs.jsonl", [*SUITE[:40], text, *SUITE[40:]])
    with path.open("rb") as handle:
        assert read_jsonl(handle, str(path), Sink()) is None


@pytest.mark.parametrize(
    "task",
    ["t[1]", 'say "hi"', "a\\b"],
    ids=["a bracket", "an escaped quote", "an escaped backslash"],
)
def test_ids_whose_strings_the_bytes_cannot_count_are_read_as_columns_after_a_check_of_their_types(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, task: str
) -> None:
    path = write(tmp_path / "runs.jsonl", [line(task=task), *SUITE])
    fast = load_runs([str(path)])
    assert isinstance(fast, RunColumns)
    assert list(fast) == precise([path], monkeypatch)


def test_ids_written_as_utf8_are_read_as_columns_and_a_bad_byte_deep_in_the_file_is_named_at_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Long enough for the UTF-8 check to span blocks of 256 KiB, with a character split between two of them.
    lines = [json.dumps({"model_id": "m", "task_id": f"caf\u00e9-{i}-\U0001f600", "metric_name": "acc", "score": 0.5},
                        ensure_ascii=False) for i in range(20_000)]  # fmt: skip
    path = write(tmp_path / "runs.jsonl", lines)
    fast = load_runs([str(path)])
    assert isinstance(fast, RunColumns)
    assert list(fast) == precise([path], monkeypatch)
    data = path.read_bytes()
    bad = data.index(b"\n", 300_000) + 1  # the start of a line past the first block
    path.write_bytes(data[:bad] + b"\xff" + data[bad:])
    line = data.count(b"\n", 0, bad) + 1
    assert problems_of([path]) == [f"{path}:{line}: not UTF-8 text (byte 1 of the line: invalid start byte)"]


@pytest.mark.parametrize("models", [0, 1_000], ids=["a dictionary and a join", "one sort of the rows"])
def test_task_codes_by_a_dictionary_or_by_ranks_give_the_records_of_the_precise_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, models: int
) -> None:
    # The tasks are ranked when the models are few (a file with a million tasks over two models): either way the same.
    lines = [line(f"m{m}", f"t{(7 * t) % 40}", t / 40, category=f"c{t % 3}") for t in range(40) for m in (2, 0, 1)]
    path = write(tmp_path / "runs.jsonl", lines)
    with monkeypatch.context() as patched:
        patched.setattr(fast_columns, "_RANKED_MODELS", models)
        fast = load_runs([str(path)])
    assert isinstance(fast, RunColumns) and fast.tasks == tuple(sorted(fast.tasks))
    slow = precise([path], monkeypatch)
    assert list(fast) == slow and [r.source for r in fast] == [r.source for r in slow]


def _layouts() -> dict[str, list[tuple[str, int]]]:
    """(model, task) pairs of three models over 30 tasks, written in several orders."""
    models, tasks = ("m1", "m0", "m2"), range(30)
    by_model = [(m, t) for m in models for t in tasks]
    swapped = by_model.copy()
    swapped[40], swapped[41] = swapped[41], swapped[40]
    one_short = [(m, t) for m in models for t in tasks if (m, t) != ("m2", 3)] + [("m2", 30)]
    return {
        "each model's tasks in order": by_model,
        "each task's records together": [(m, t) for t in tasks for m in models],
        "one model": [("m0", t) for t in tasks],
        "two tasks swapped past the first rows": swapped,
        "a model with another task": one_short,
        "the tasks in no order": [(m, (7 * t) % 30) for m in models for t in tasks],
        "each model's tasks in reverse": [(m, t) for m in models for t in reversed(tasks)],
    }


@pytest.mark.parametrize("layout", list(_layouts()))
def test_tasks_written_in_order_or_not_give_the_records_of_the_precise_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str
) -> None:
    # Tasks in order are coded from their rows' places (checked on the rows past the first few as well); any other
    # layout is sorted. Either way the records are the precise reader's, the task ids sorted.
    pairs = _layouts()[layout]
    path = write(tmp_path / "runs.jsonl", [line(m, f"t{t:02}", t / 40, category=f"c{t % 3}") for m, t in pairs])
    with monkeypatch.context() as patched:
        patched.setattr(fast_columns, "_GLANCE", 8)
        fast = load_runs([str(path)])
    assert isinstance(fast, RunColumns) and fast.tasks == tuple(sorted(fast.tasks))
    slow = precise([path], monkeypatch)
    assert list(fast) == slow and [r.source for r in fast] == [r.source for r in slow]


@pytest.mark.parametrize(
    ("layout", "in_order"),
    [("each model's tasks in order", True), ("each task's records together", True), ("one model", True),
     ("two tasks swapped past the first rows", False), ("a model with another task", False),
     ("the tasks in no order", False), ("each model's tasks in reverse", False)],
)  # fmt: skip
def test_only_tasks_written_in_order_are_coded_from_their_rows_places(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str, in_order: bool
) -> None:
    pairs = _layouts()[layout]
    path = write(tmp_path / "runs.jsonl", [line(m, f"t{t:02}") for m, t in pairs])
    found: list[object] = []
    look = fast_columns._in_order
    with monkeypatch.context() as patched:
        patched.setattr(fast_columns, "_GLANCE", 8)
        patched.setattr(fast_columns, "_in_order", lambda con, models: found.append(look(con, models)) or found[-1])
        assert isinstance(load_runs([str(path)]), RunColumns)
    assert len(found) == 1 and (found[0] is not None) == in_order


def test_numbers_in_any_json_spelling_are_read_as_columns_with_the_values_of_the_precise_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spelled = [
        "1",
        "0",
        "-0",
        "-0.0",
        "1E-1",
        "5e-1",
        "0.50000000000000000001",
        "2.5e-324",
        "0.1000000000000000055511151231257827",
    ]
    weights = [
        "1",
        "3",
        "1e2",
        "123456789012345678901234567890",
        "0.5E+1",
        "4.9e-324",
        "1.7976931348623157e308",
        "2",
        "7",
    ]
    lines = [
        f'{{"model_id": "m", "task_id": "t{i}", "metric_name": "acc", "score": {score}, "weight": {weight}}}'
        for i, (score, weight) in enumerate(zip(spelled, weights, strict=True))
    ]
    path = write(tmp_path / "runs.jsonl", [*lines, *SUITE])
    fast = load_runs([str(path)])
    assert isinstance(fast, RunColumns)
    slow = precise([path], monkeypatch)
    assert [(r.score, r.weight) for r in fast] == [(r.score, r.weight) for r in slow]
    assert [math.copysign(1.0, r.score) for r in fast] == [math.copysign(1.0, r.score) for r in slow]


def test_ids_holding_colons_are_read_as_columns_with_the_records_of_the_precise_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # More colons than keys: each record's keys are counted, and none has another.
    path = write(tmp_path / "runs.jsonl", [line("org:m", "mmlu:anatomy:1", category="a:b"), *SUITE])
    fast = load_runs([str(path)])
    assert isinstance(fast, RunColumns)
    assert list(fast) == precise([path], monkeypatch)


@pytest.mark.parametrize(
    "text",
    [
        line("org:m", "t:1", note=1),  # a colon in an id and a key besides the fields
        line(note="a") + line(),  # two records on one line
        line()[:-1] + ', "x": {"a": 1, "b": 2}}',  # another key holding an object
        line()[:-1] + ', "score": 0.5}',  # a field twice
    ],
    ids=["colon and another key", "two records a line", "a nested object", "a field twice"],
)
def test_a_record_with_another_key_is_not_vouched_for_whatever_the_colons(tmp_path: Path, text: str) -> None:
    path = write(tmp_path / "runs.jsonl", [*SUITE[:40], text, *SUITE[40:]])
    with path.open("rb") as handle:
        assert read_jsonl(handle, str(path), Sink()) is None


def test_a_pair_in_two_files_read_as_columns_is_named_at_both_places(tmp_path: Path) -> None:
    a, b = write(tmp_path / "a.jsonl", SUITE[:10]), write(tmp_path / "b.jsonl", SUITE[9:20])
    (problem,) = problems_of([a, b])
    assert problem.startswith(f"{b}:1:") and f"{a}:10" in problem


def test_columns_merged_from_files_keep_each_files_ids_and_places(tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", [line("x", "t1", 0.1, category="k"), line("y", "t2", 0.2)])
    b = write(tmp_path / "b.jsonl", [line("a", "t0", 0.3, weight=2), line("x", "t2", 0.4, category="k")])
    runs = load_runs([str(a), str(b)])
    assert isinstance(runs, RunColumns)
    assert [(r.model_id, r.task_id, r.score, r.category, r.weight, str(r.source)) for r in runs] == [
        ("x", "t1", 0.1, "k", 1.0, f"{a}:1"), ("y", "t2", 0.2, "general", 1.0, f"{a}:2"),
        ("a", "t0", 0.3, "general", 2.0, f"{b}:1"), ("x", "t2", 0.4, "k", 1.0, f"{b}:2"),
    ]  # fmt: skip
    assert runs.models == tuple(sorted(runs.models)) and runs.tasks == tuple(sorted(runs.tasks))


@pytest.mark.parametrize(
    "task",
    ["t", "t ", " t", "\tt", "t\x0b", "t\x1f", "t\x01", "a" * 512, "a" * 513, "\u00e9" * 512, "\u00e9" * 513,
     "t\u00a0", "\u3000t", "caf\u00e9", "cafe\u0301", ""],
)  # fmt: skip
@pytest.mark.parametrize(
    ("in_order", "ranked_models"), [(True, 3), (False, 3), (False, 0)],
    ids=["tasks in order", "tasks ranked", "tasks in a dictionary"],
)  # fmt: skip
def test_the_fast_path_vouches_for_a_task_id_exactly_when_it_is_kept_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, task: str, in_order: bool, ranked_models: int
) -> None:
    # The task ids are checked in DuckDB when all are ASCII, in Python otherwise: either way as plain_ids checks them.
    tasks = sorted([task, *(f"u{t:02}" for t in range(20))])
    if not in_order:
        tasks.reverse()
    path = write(tmp_path / "runs.jsonl", [line(m, t) for m in ("m0", "m1") for t in tasks])
    monkeypatch.setattr(fast_columns, "_RANKED_MODELS", ranked_models)
    with path.open("rb") as handle:
        columns = read_jsonl(handle, str(path), Sink())
    assert (columns is not None) == fast_columns.plain_ids([task])


@pytest.mark.parametrize("weights", [False, True], ids=["no weight given", "a weight given"])
@pytest.mark.parametrize("metrics", [1, 2], ids=["one metric", "two metrics"])
def test_a_kind_of_one_id_and_weights_given_or_not_give_the_records_of_the_precise_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, weights: bool, metrics: int
) -> None:
    # A kind of one id is coded 0 without a lookup, and no weight is fetched when none is given.
    lines = [
        json.dumps({"model_id": f"m{t % 2}", "task_id": f"t{t}", "metric_name": f"x{t % metrics}", "score": t / 40}
                   | ({"weight": 1 + t % 3} if weights and t % 5 == 0 else {}))
        for t in range(40)
    ]  # fmt: skip
    path = write(tmp_path / "runs.jsonl", lines)
    fast = load_runs([str(path)])
    assert isinstance(fast, RunColumns) and len(fast.metrics) == metrics
    assert list(fast) == precise([path], monkeypatch)
