"""Hostile and careless input files (issue 8): each is a problem at file:line, never a hang,
a crash, a task counted twice or a value silently changed."""

from __future__ import annotations

import json
import os
import time
import unicodedata
from pathlib import Path

import pytest

from leaderboard import EvalRun, InvalidEvalRuns, limits, load_runs

RECORD = {"model_id": "m", "task_id": "t1", "metric_name": "acc", "score": 0.5}
NFC, NFD = unicodedata.normalize("NFC", "café"), unicodedata.normalize("NFD", "café")


WIDE = 200_000  # columns or keys: a check that looks each one up in a list of them would take hours


def problems_of(patterns: list[str], root: Path | None = None) -> list[str]:
    with pytest.raises(InvalidEvalRuns) as caught:
        load_runs(patterns, root=root)
    return [str(p) for p in caught.value.problems]


def jsonl(path: Path, *records: dict[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


# --- one task counted twice -------------------------------------------------------------------


def test_an_id_in_nfd_is_kept_in_nfc(tmp_path: Path) -> None:
    f = jsonl(tmp_path / "r.jsonl", {**RECORD, "task_id": NFD})
    (run,) = load_runs([str(f)])
    assert run.task_id == NFC


def test_one_id_written_in_nfc_and_nfd_is_an_error_naming_both(tmp_path: Path) -> None:
    f = jsonl(tmp_path / "r.jsonl", {**RECORD, "task_id": NFC}, {**RECORD, "model_id": "n", "task_id": NFD})
    (problem,) = problems_of([str(f)])
    assert problem.startswith(f"{f}:2: task_id: ") and f"first at {f}:1" in problem
    assert "differ only in Unicode normalisation" in problem and "'cafe\\u0301'" in problem


def test_surrounding_whitespace_in_an_id_is_an_error_not_stripped(tmp_path: Path) -> None:
    f = jsonl(tmp_path / "r.jsonl", {**RECORD, "task_id": "t1 "})
    (problem,) = problems_of([str(f)])
    assert problem == (
        f"{f}:1: task_id: 't1 ' has leading or trailing whitespace: ids are compared as written, "
        "so remove it upstream (it is not stripped silently)"
    )


def test_ids_differing_only_by_whitespace_are_an_error_naming_both(tmp_path: Path) -> None:
    f = jsonl(
        tmp_path / "r.jsonl", {**RECORD, "task_id": "t1"}, {**RECORD, "task_id": "t1 "}, {**RECORD, "task_id": " t1"}
    )
    found = problems_of([str(f)])
    twins = [p for p in found if "differ only in surrounding whitespace" in p]
    assert [p.split(": ")[0] for p in twins] == [f"{f}:2", f"{f}:3"]
    assert all(f"first at {f}:1" in p for p in twins)
    assert sum("has leading or trailing whitespace" in p for p in found) == 2


def test_model_ids_differing_only_by_a_trailing_space_are_an_error(tmp_path: Path) -> None:
    f = jsonl(tmp_path / "r.jsonl", {**RECORD, "model_id": "gpt-4"}, {**RECORD, "model_id": "gpt-4 "})
    found = problems_of([str(f)])
    assert any(p.startswith(f"{f}:2: model_id: 'gpt-4 ' and 'gpt-4'") for p in found)


def test_a_category_with_a_stray_space_is_an_error(tmp_path: Path) -> None:
    f = jsonl(tmp_path / "r.jsonl", {**RECORD, "category": "code "})
    assert any("category: 'code ' has leading or trailing whitespace" in p for p in problems_of([str(f)]))


def test_a_duplicate_key_in_a_jsonl_object_is_an_error(tmp_path: Path) -> None:
    f = tmp_path / "r.jsonl"
    f.write_text('{"model_id": "m", "task_id": "t", "metric_name": "a", "score": 2, "score": 0.5}\n')
    assert problems_of([str(f)]) == [
        f"{f}:1: the JSON object has the key(s) 'score' more than once; which value counts is ambiguous"
    ]


def test_a_jsonl_line_of_200000_keys_each_written_twice_names_ten_and_counts_the_rest(tmp_path: Path) -> None:
    f = tmp_path / "r.jsonl"
    pairs = ", ".join(f'"k{i}": 1, "k{i}": 2' for i in range(WIDE))
    f.write_text('{"model_id": "m", "task_id": "t", "metric_name": "a", "score": 0.5, ' + pairs + "}\n")
    named = ", ".join(f"'k{i}'" for i in range(10))
    assert problems_of([str(f)]) == [
        f"{f}:1: the JSON object has the key(s) {named} and {WIDE - 10:,} others more than once; "
        "which value counts is ambiguous"
    ]


def test_a_duplicate_key_in_a_json_document_is_an_error_at_its_record(tmp_path: Path) -> None:
    f = tmp_path / "r.json"
    f.write_text('[\n{"model_id": "m", "task_id": "t", "metric_name": "a", "score": 0.5},\n'
                 '{"model_id": "m", "model_id": "n", "task_id": "t", "metric_name": "a", "score": 0.5}\n]')  # fmt: skip
    assert problems_of([str(f)]) == [
        f"{f}:3: the JSON object has the key(s) 'model_id' more than once; which value counts is ambiguous"
    ]


def test_two_runs_arrays_in_one_json_object_are_an_error(tmp_path: Path) -> None:
    f = tmp_path / "r.json"
    f.write_text('{"runs": [' + json.dumps(RECORD) + '],\n "runs": []}')
    (problem,) = problems_of([str(f)])
    assert problem.startswith(f'{f}:2: the key "runs" appears more than once')


@pytest.mark.parametrize("cell", ["0_1", "٠.٥", " 0.5", "0x1", "1,0"])
def test_a_csv_score_must_be_plain_decimal_text(tmp_path: Path, cell: str) -> None:
    f = tmp_path / "r.csv"
    f.write_text(f'model_id,task_id,metric_name,score\nm,t,acc,"{cell}"\n', encoding="utf-8")
    assert problems_of([str(f)]) == [f"{f}:2: score: must be a number, got str {cell!r}"]


def test_a_csv_header_naming_a_column_twice_is_an_error(tmp_path: Path) -> None:
    f = tmp_path / "r.csv"
    f.write_text("model_id,task_id,metric_name,score,score\nm,t,acc,2,0.5\n")
    assert problems_of([str(f)]) == [f"{f}:1: the header row names the column(s) score more than once"]


def test_a_csv_header_of_200000_distinct_columns_loads_and_ignores_the_unknown_ones(tmp_path: Path) -> None:
    f = tmp_path / "r.csv"
    extra = [f"x{i}" for i in range(WIDE)]
    f.write_text(",".join(["model_id", "task_id", "metric_name", "score", *extra]) + "\nm,t,acc,0.5\n")
    assert [(r.model_id, r.task_id, r.score) for r in load_runs([str(f)])] == [("m", "t", 0.5)]


def test_a_csv_header_of_200000_columns_each_twice_names_ten_and_counts_the_rest(tmp_path: Path) -> None:
    f = tmp_path / "r.csv"
    extra = [f"x{i:06d}" for i in range(WIDE)]
    f.write_text(",".join(["model_id", "task_id", "metric_name", "score", *extra, *extra]) + "\nm,t,acc,0.5\n")
    named = ", ".join(f"x{i:06d}" for i in range(10))
    assert problems_of([str(f)]) == [
        f"{f}:1: the header row names the column(s) {named} and {WIDE - 10:,} others more than once"
    ]


def test_plain_csv_numbers_still_read(tmp_path: Path) -> None:
    f = tmp_path / "r.csv"
    f.write_text("model_id,task_id,metric_name,score,weight\nm,a,acc,1,2e0\nm,b,acc,.25,+3\nm,c,acc,5E-1,\n")
    assert [(r.score, r.weight) for r in load_runs([str(f)])] == [(1.0, 2.0), (0.25, 3.0), (0.5, 1.0)]


# --- crashes that are now validation errors ---------------------------------------------------


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_an_integer_too_long_to_convert_is_an_error_at_its_line(tmp_path: Path, suffix: str) -> None:
    record = json.dumps(RECORD)[:-1] + ', "latency_ns": ' + "9" * 5000 + "}"
    f = tmp_path / f"r{suffix}"
    f.write_text((record + "\n") if suffix == ".jsonl" else "[\n" + json.dumps(RECORD) + ",\n" + record + "\n]")
    (problem,) = problems_of([str(f)])
    line = 1 if suffix == ".jsonl" else 3
    assert problem == f"{f}:{line}: invalid JSON: an integer with more than 4300 digits"


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_nesting_too_deep_is_an_error_at_its_line(tmp_path: Path, suffix: str) -> None:
    f = tmp_path / f"r{suffix}"
    deep = "[" * 100_000 + "]" * 100_000
    f.write_text(json.dumps(RECORD) + "\n" + deep + "\n" if suffix == ".jsonl" else "[\n" + deep + "\n]")
    (problem,) = problems_of([str(f)])
    assert problem.startswith(f"{f}:2: invalid JSON: nested too deeply")


def test_a_400_digit_score_is_out_of_range_not_an_overflow(tmp_path: Path) -> None:
    f = tmp_path / "r.jsonl"
    f.write_text(json.dumps(RECORD)[:-4] + "1" + "0" * 399 + "}\n")
    (problem,) = problems_of([str(f)])
    assert problem.startswith(f"{f}:1: score: 1000") and problem.endswith("is outside [0, 1]; normalise the metric "
                                                                          "to a fraction upstream")  # fmt: skip


def test_a_400_digit_weight_is_refused(tmp_path: Path) -> None:
    f = jsonl(tmp_path / "r.jsonl", {**RECORD, "weight": 10**400})
    (problem,) = problems_of([str(f)])
    assert problem.startswith(f"{f}:1: weight: must be a finite positive number")


# --- bounds -----------------------------------------------------------------------------------


def test_an_id_longer_than_the_bound_is_an_error_that_does_not_repeat_it(tmp_path: Path) -> None:
    f = jsonl(tmp_path / "r.jsonl", {**RECORD, "model_id": "m" * (limits.MAX_ID_LENGTH + 1)})
    (problem,) = problems_of([str(f)])
    assert problem.startswith(f"{f}:1: model_id: is 513 characters long; at most 512 are allowed")
    assert len(problem) < 200 + len(str(f))


def test_an_id_of_exactly_the_bound_is_accepted(tmp_path: Path) -> None:
    f = jsonl(tmp_path / "r.jsonl", {**RECORD, "task_id": "t" * limits.MAX_ID_LENGTH})
    assert len(load_runs([str(f)])) == 1


def test_a_10_mb_model_id_is_refused_in_well_under_a_second(tmp_path: Path) -> None:
    f = jsonl(tmp_path / "r.jsonl", {**RECORD, "model_id": "x" * 10_000_000})
    start = time.perf_counter()
    (problem,) = problems_of([str(f)])
    assert time.perf_counter() - start < 2.0 and "is 10,000,000 characters long" in problem


def test_input_over_the_size_bound_is_refused_before_reading(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(limits, "MAX_INPUT_BYTES", 100)
    small = jsonl(tmp_path / "a.jsonl", RECORD)
    big = jsonl(tmp_path / "b.jsonl", *({**RECORD, "task_id": f"t{i}"} for i in range(5)))
    (problem,) = problems_of([str(small), str(big)])
    assert problem.startswith(f"{big}: is ") and "the input limit is 100 bytes" in problem


# --- only regular files, each once ------------------------------------------------------------


def test_a_fifo_named_like_an_eval_file_is_refused_by_name_without_blocking(tmp_path: Path) -> None:
    jsonl(tmp_path / "a.jsonl", RECORD)
    os.mkfifo(tmp_path / "b.jsonl")
    start = time.perf_counter()
    assert problems_of([str(tmp_path / "*.jsonl")]) == [
        f"{tmp_path}/b.jsonl: is a FIFO (named pipe), not a regular file: refused (reading it could block or never end)"
    ]
    assert time.perf_counter() - start < 2.0


def test_a_character_device_named_like_an_eval_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "z.jsonl").symlink_to("/dev/zero")
    (problem,) = problems_of([str(tmp_path / "z.jsonl")])
    assert problem == f"{tmp_path}/z.jsonl: is a character device, not a regular file: refused (reading it could " \
                      "block or never end)"  # fmt: skip


def test_a_symlink_loop_under_a_recursive_glob_ends_and_reads_each_file_once(tmp_path: Path) -> None:
    jsonl(tmp_path / "results" / "a.jsonl", RECORD)
    jsonl(tmp_path / "results" / "sub" / "b.jsonl", {**RECORD, "model_id": "n"})
    (tmp_path / "results" / "l1").symlink_to(".")
    (tmp_path / "results" / "sub" / "up").symlink_to("..")
    start = time.perf_counter()
    runs = load_runs(["results/**/*.jsonl"], root=tmp_path)
    assert time.perf_counter() - start < 2.0
    assert sorted((r.model_id, r.source.file if r.source else "") for r in runs) == [
        ("m", "results/a.jsonl"),
        ("n", "results/sub/b.jsonl"),
    ]


def test_a_link_loop_named_as_a_file_is_an_error_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "loop.jsonl").symlink_to("loop.jsonl")
    assert problems_of(["loop.jsonl"], root=tmp_path) == [
        "loop.jsonl: cannot read the file: Too many levels of symbolic links"
    ]


def test_one_file_reached_by_several_paths_is_read_once(tmp_path: Path) -> None:
    jsonl(tmp_path / "results" / "a.jsonl", RECORD)
    (tmp_path / "results" / "link.jsonl").symlink_to("a.jsonl")
    (tmp_path / "mirror").symlink_to("results")
    runs = load_runs(["results/a.jsonl", "results/../results/a.jsonl", "results/*.jsonl", "mirror/*"], root=tmp_path)
    assert runs == [EvalRun("m", "t1", "acc", 0.5)]


def test_a_link_to_a_directory_outside_the_workspace_is_one_error_naming_the_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    for i in range(30):
        jsonl(outside / f"f{i}.jsonl", RECORD)
    ws = tmp_path / "ws"
    jsonl(ws / "results" / "a.jsonl", RECORD)
    (ws / "results" / "etc").symlink_to(outside)
    assert problems_of(["results/**/*"], root=ws) == [
        "results/etc: is a link to a directory outside the workspace: not followed"
    ]


def test_a_glob_under_a_link_out_of_the_workspace_is_one_error_naming_the_link(tmp_path: Path) -> None:
    for i in range(30):
        jsonl(tmp_path / "outside" / f"f{i}.jsonl", RECORD)
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "results").symlink_to(tmp_path / "outside")
    assert problems_of(["results/*.jsonl"], root=tmp_path / "ws") == [
        "results: is outside the workspace (through a link, or absolute): not searched"
    ]


def test_a_link_to_a_file_outside_the_workspace_names_the_file_not_the_glob(tmp_path: Path) -> None:
    jsonl(tmp_path / "secret.jsonl", RECORD)
    ws = tmp_path / "ws"
    jsonl(ws / "results" / "a.jsonl", RECORD)
    (ws / "results" / "b.jsonl").symlink_to(tmp_path / "secret.jsonl")
    assert problems_of(["results/*.jsonl"], root=ws) == [
        "results/b.jsonl: 'results/b.jsonl' resolves outside the workspace and is refused"
    ]


def test_identical_problems_are_reported_once_with_a_count(tmp_path: Path) -> None:
    pattern = str(tmp_path / "*.jsonl")
    assert problems_of([pattern, pattern]) == [f"{pattern}: no file matches {pattern!r} (2 times)"]


# --- the right place in every message ---------------------------------------------------------


def test_a_bad_byte_is_reported_at_its_line(tmp_path: Path) -> None:
    f = tmp_path / "r.jsonl"
    lines = [json.dumps({**RECORD, "task_id": f"t{i}"}).encode() for i in range(1, 18)]
    f.write_bytes(b"\n".join([*lines, b'{"model_id": "caf\xe9"}']) + b"\n")
    assert problems_of([str(f)]) == [f"{f}:18: not UTF-8 text (byte 18 of the line: invalid continuation byte)"]


@pytest.mark.parametrize("suffix", [".json", ".csv"])
def test_a_bad_byte_in_a_whole_file_format_is_reported_at_its_line(tmp_path: Path, suffix: str) -> None:
    f = tmp_path / f"r{suffix}"
    head = (
        b"[\n" + json.dumps(RECORD).encode() + b",\n" if suffix == ".json" else b"model_id,task_id,metric_name,score\n"
    )
    f.write_bytes(head + b"m,caf\xe9\n")
    (problem,) = problems_of([str(f)])
    assert problem.startswith(f"{f}:{3 if suffix == '.json' else 2}: not UTF-8 text (byte 6 of the line")


def test_a_bare_cr_inside_a_jsonl_record_is_one_error_and_later_lines_keep_their_numbers(tmp_path: Path) -> None:
    f = tmp_path / "r.jsonl"
    f.write_text(
        json.dumps(RECORD) + "\n" + json.dumps({**RECORD, "task_id": "t2"})[:-1].replace('"t2"', '"t\r2"') + "}\n"
        + json.dumps({**RECORD, "task_id": "t3", "score": 7}) + "\n",
        newline="",
    )  # fmt: skip
    found = problems_of([str(f)])
    assert [p.split(": ")[0] for p in found] == [f"{f}:2", f"{f}:3"]
    assert "invalid JSON: Invalid control character" in found[0] and "score" in found[1]


def test_an_unclosed_csv_quote_is_reported_where_the_record_starts(tmp_path: Path) -> None:
    f = tmp_path / "r.csv"
    f.write_text('model_id,task_id,metric_name,score\nm,t1,acc,0.5\nm,"t2,acc,0.5\nm,t3,acc,0.5\n')
    assert problems_of([str(f)]) == [
        f"{f}:3: unreadable CSV: unexpected end of data (a quoted field that starts here is never closed)"
    ]


def test_an_over_long_csv_field_is_reported_at_its_line(tmp_path: Path) -> None:
    f = tmp_path / "r.csv"
    f.write_text("model_id,task_id,metric_name,score\nm,t1,acc,0.5\nm," + "t" * 200_000 + ",acc,0.5\n")
    (problem,) = problems_of([str(f)])
    assert problem.startswith(f"{f}:3: unreadable CSV: field larger than field limit")
