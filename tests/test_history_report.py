"""The history in words and the CLI's reader of earlier runs: sparklines, the chart, the lines, the JSON section."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from leaderboard import EvalRun
from leaderboard.history_files import read_history
from leaderboard.report.history import (
    FLAKY_MARK,
    GAP,
    MAX_CHART_LINES,
    chart_models,
    chart_text,
    flaky_count_sentence,
    flaky_mark,
    flaky_tasks_output,
    history_dict,
    no_history_line,
    noise_amount,
    noise_cell,
    outside_sentence,
    partial_history_line,
    range_text,
    rate_text,
    required_flaky_sentence,
    sparkline,
    trend_cell,
    trend_chart,
)
from leaderboard.stats.history import (
    EXPIRED,
    INVALID,
    MISSING,
    OVER_BUDGET,
    OVER_LIMIT,
    TIMED_OUT,
    FlakyTask,
    History,
    Noise,
    coverage_of,
    run_scores,
    summarise,
)


def flat(model: str, mean: float, n: int = 10) -> list[EvalRun]:
    return [EvalRun(model, f"t{k:02d}", "acc", mean) for k in range(n)]


def history_of(means: dict[str, list[float]], current: dict[str, float]) -> History:
    length = max(len(v) for v in means.values())
    runs = []
    for k in range(length):
        records = [r for model, values in means.items() if k < len(values) for r in flat(model, values[k])]
        runs.append(run_scores(f"{k:x}" * 40 if k < 16 else f"run-{k}", f"2026-11-{k + 1:02d}", records))
    now = [r for model, mean in current.items() for r in flat(model, mean)]
    return summarise(runs, run_scores("now", None, now))


# --- the sparkline --------------------------------------------------------------------------------------


def test_a_sparkline_spans_its_series_from_the_lowest_block_to_the_highest() -> None:
    assert sparkline([0.70 + 0.01 * k for k in range(8)]) == "▁▂▃▄▅▆▇█"


def test_a_constant_series_is_a_flat_line_in_the_middle() -> None:
    assert sparkline([0.749] * 5) == "▄▄▄▄▄"


def test_a_wobble_smaller_than_a_point_stays_near_the_middle() -> None:
    line = sparkline([0.700, 0.702, 0.701])
    assert set(line) <= set("▃▄▅") and line[0] != line[1]


def test_a_run_without_the_model_is_a_gap() -> None:
    assert sparkline([0.7, float("nan"), 0.8]) == f"▁{GAP}█"


def test_the_range_is_in_points_with_more_decimals_only_where_needed() -> None:
    assert range_text([0.712, 0.749, 0.73]) == "71.2–74.9"
    assert range_text([0.7491, 0.7494]) == "74.91–74.94"
    assert range_text([0.749, 0.749]) == "74.9"


def test_the_trend_cell_is_the_sparkline_and_its_range() -> None:
    h = history_of({"m": [0.71, 0.72, 0.74]}, {"m": 0.749})
    assert trend_cell(h.series_of("m")) == "▁▃▆█ 71.0–74.9"
    assert trend_cell(None) == "—"


# --- the chart ------------------------------------------------------------------------------------------

HOSTILE = [
    'quote"end',
    "bracket]] [1, 2]",
    "back`tick```",
    "<img src=x onerror=alert(1)>",
    'new\nline "x" [1]\n```\n@someone',
    "%%{init: {'theme': 'dark'}}%%",
    "#quot; & #35;",
    "semi; colon: title x",
]
# What each statement of the chart may be, every string free of what could end it or start anything.
SAFE = r"[^\"`%#<>&\n]*"
STATEMENT = re.compile(
    rf'(?:xychart-beta|  title "{SAFE}"|  x-axis \[(?:"{SAFE}", )*"{SAFE}"\]|  y-axis "mean \(pts\)" \d+ --> \d+'
    rf'|  line "{SAFE}" \[(?:\d+\.\d\d, )*\d+\.\d\d\])'
)


def chart_block(text: str) -> list[str]:
    assert text.startswith("```mermaid\n")
    return text.split("```mermaid\n", 1)[1].split("\n```", 1)[0].split("\n")


def test_no_id_can_break_or_inject_into_the_chart() -> None:
    means = {model: [0.5 + 0.01 * k, 0.52, 0.53] for k, model in enumerate(HOSTILE)}
    h = history_of(means, {m: 0.6 for m in HOSTILE})
    text = trend_chart(h, HOSTILE, HOSTILE[3:], branch='ma"in`%%')
    lines = chart_block(text)
    assert lines[0].startswith("%%{init: ") and lines[0].endswith("}}}}%%")
    for line in lines[1:]:
        assert STATEMENT.fullmatch(line), line
    assert sum(line.startswith("  line ") for line in lines) == MAX_CHART_LINES
    # The block ends where it should: right before the legend, not inside an id.
    assert text.split("\n```", 1)[1].startswith("\n\n🟦 ")


def test_a_chart_label_keeps_an_id_readable_on_one_line() -> None:
    assert chart_text('a"b\nc') == "a'b\\x0ac"
    assert chart_text("<b>&") == "‹b›＆"
    assert len(chart_text("x" * 100)) == 40


def test_the_legend_names_each_line_by_its_square_and_whole_id() -> None:
    h = history_of({"a": [0.7, 0.71, 0.72], "b": [0.6, 0.6, 0.6]}, {"a": 0.73, "b": 0.6})
    text = trend_chart(h, ["a", "b"], [], branch="main")
    assert text.endswith("🟦 `a` · 🟥 `b`")
    assert '"plotColorPalette": "#55acee, #dd2e44"' in text
    assert '  line "a" [70.00, 71.00, 72.00, 73.00]' in text


def test_the_x_axis_names_runs_by_short_sha_then_this_run() -> None:
    h = history_of({"a": [0.7, 0.71]}, {"a": 0.72})
    assert '  x-axis ["0000000", "1111111", "this run"]' in trend_chart(h, ["a"], [], branch="main")


def test_the_chart_takes_the_top_models_and_every_changed_one_that_has_every_run() -> None:
    ranked = [f"m{k}" for k in range(12)]
    means = {m: [0.5, 0.5, 0.5] for m in ranked}
    means["m1"] = [0.5, 0.5]  # missing from the newest earlier run
    h = history_of(means, {m: 0.5 for m in ranked})
    charted, gaps, over = chart_models(h, ranked, ["m11", "m5"])
    assert (charted, gaps, over) == (["m0", "m2", "m5", "m11"], ["m1"], [])
    charted, gaps, over = chart_models(h, ranked, ranked)
    assert charted == ["m0", "m2", "m3", "m4", "m5", "m6", "m7", "m8"] and len(charted) == MAX_CHART_LINES
    assert gaps == ["m1"] and over == ["m9", "m10", "m11"]


def test_the_chart_says_which_models_it_left_out_and_why() -> None:
    ranked = [f"m{k}" for k in range(10)]
    means = {m: [0.5, 0.5] for m in ranked}
    means["m0"] = [0.5]
    h = history_of(means, {m: 0.5 for m in ranked})
    text = trend_chart(h, ranked, ranked, branch="main")
    assert text.endswith("Not charted, a run missing: `m0`; not charted, over the 8 lines a chart tells apart: `m9`.")


def test_no_chart_without_a_model_in_every_run() -> None:
    h = history_of({"a": [0.5]}, {"b": 0.5})
    assert trend_chart(h, ["b"], ["b"], branch="main") == ""


# --- words ----------------------------------------------------------------------------------------------


def test_under_a_change_the_noise_is_in_the_changes_units_and_in_the_trend_table_in_points() -> None:
    noise = Noise(runs=10, rms_change=0.008, largest_change=0.02, sd=0.006, low=0.7, high=0.72)
    assert noise_cell(noise) == "±0.008 run to run" and noise_amount(noise) == "±0.8 pts"
    assert noise_cell(Noise(10, 0.00002, 0.0, 0.0, 0.7, 0.7)) == "±0.00002 run to run"
    assert noise_cell(Noise(10, 0.0, 0.0, 0.0, 0.7, 0.7)) == "the same every run"
    assert noise_cell(None) is None and noise_amount(None) == "—"


def test_the_outside_sentence_names_the_model_the_range_and_how_often_that_happens() -> None:
    h = history_of({"m": [0.712, 0.749, 0.73]}, {"m": 0.763})
    series = h.series_of("m")
    assert series is not None
    assert outside_sentence(series, "main") == (
        "`m` scores 76.3 pts, above the 71.2–74.9 of its last 3 runs on `main` with the same id "
        "(with nothing changed, 1 run in 2 would land outside that range)."
    )


def test_the_outside_sentence_prints_enough_decimals_to_be_outside() -> None:
    h = history_of({"m": [0.7, 0.72, 0.7491, 0.71]}, {"m": 0.7494})
    series = h.series_of("m")
    assert series is not None
    sentence = outside_sentence(series, "main")
    assert sentence is not None and "scores 74.94 pts, above the 70.00–74.91 of its last 4 runs" in sentence
    assert "2 runs in 5 would" in sentence


def test_no_outside_sentence_inside_the_range() -> None:
    series = history_of({"m": [0.7, 0.72, 0.71]}, {"m": 0.71}).series_of("m")
    assert series is not None and outside_sentence(series, "main") is None


def test_the_flaky_count_sentence() -> None:
    assert flaky_count_sentence(4, 15, "main") == "4 of the 15 also flip on `main` with nothing changed"
    assert flaky_count_sentence(1, 15, "main") == "1 of the 15 also flips on `main` with nothing changed"
    assert flaky_count_sentence(0, 15, "main") == "none of the 15 flips on `main` with nothing changed"
    assert flaky_count_sentence(1, 1, "main") == "it also flips on `main` with nothing changed"


def test_a_flaky_task_is_marked_and_its_rate_is_a_percentage() -> None:
    assert flaky_mark(0.3) == f" {FLAKY_MARK}" and flaky_mark(None) == ""
    assert [rate_text(r) for r in (1.0, 0.995, 0.3, 0.004)] == ["100%", "99%", "30%", "<1%"]


def test_a_required_task_that_is_flaky_is_said_to_be_so() -> None:
    task = FlakyTask("t`1", 3, 9, 1 / 3, 1.0, ("m",))
    assert required_flaky_sentence(task, "main") == (
        "the required task ``t`1`` is flaky: it flips on `main` with nothing changed "
        "(3 of 9 run-to-run comparisons, 33%)"
    )


@pytest.mark.parametrize(
    ("coverage", "line"),
    [
        (coverage_of(0, 0, 0, {}), None),
        (coverage_of(10, 0, 0, {}), "No history: no earlier run of this workflow on `main` to compare with yet."),
        (
            coverage_of(10, 0, 0, {}, denied=True),
            "No history: the token may not read this workflow's runs on `main` "
            "(give the job `permissions: actions: read`).",
        ),
        (
            coverage_of(10, 4, 0, {EXPIRED: 4}),
            "No history: the artifacts of all 4 earlier runs on `main` have expired.",
        ),
        (
            coverage_of(10, 3, 0, {EXPIRED: 1, INVALID: 2}),
            "No history: none of the 3 earlier runs on `main` could be read (1 expired, 2 invalid).",
        ),
        (
            coverage_of(10, 0, 0, {}, failed="GitHub's rate limit stopped listing the runs"),
            "No history: listing this workflow's earlier runs on `main` failed (GitHub's rate limit stopped listing "
            "the runs).",
        ),
        (coverage_of(10, 3, 1, {EXPIRED: 2}), None),
    ],
)
def test_no_history_is_one_line_per_reason(coverage: object, line: str | None) -> None:
    assert no_history_line(coverage, "main") == line  # type: ignore[arg-type]


def test_a_partial_history_says_how_much_it_read_and_why_not_the_rest() -> None:
    assert partial_history_line(coverage_of(10, 10, 8, {EXPIRED: 2}), "main") == (
        "History: read 8 of 10 earlier runs on `main`: 2 expired."
    )
    assert partial_history_line(coverage_of(10, 4, 3, {INVALID: 1}), "main") == (
        "History: read 3 of 4 earlier runs on `main`: 1 invalid (only 4 of the 10 asked for exist)."
    )
    assert partial_history_line(coverage_of(10, 10, 10, {}), "main") is None
    assert partial_history_line(coverage_of(10, 10, 0, {EXPIRED: 10}), "main") is None  # the no-history line


# --- the JSON section -----------------------------------------------------------------------------------


def test_the_json_section_holds_the_runs_the_series_and_the_flaky_tasks() -> None:
    h = history_of({"m": [0.7, 0.72, 0.71], "one": [0.5]}, {"m": 0.75})
    section = history_dict(h, coverage_of(10, 4, 3, {EXPIRED: 1}))
    text = json.dumps(section, allow_nan=False)  # no NaN: undefined numbers are null
    back = json.loads(text)
    assert back["coverage"] == {
        "wanted": 10, "found": 4, "read": 3, "skipped": {"expired": 1}, "no_history": None, "lookup_failed": None,
    }  # fmt: skip
    assert [r["commit"] for r in back["runs"]] == ["0" * 40, "1" * 40, "2" * 40]
    assert back["runs"][0] == {"commit": "0" * 40, "date": "2026-11-01", "records": 20, "models": 2, "tasks": 10}
    m = next(s for s in back["series"] if s["model_id"] == "m")
    assert [p["mean"] for p in m["points"]] == pytest.approx([0.7, 0.72, 0.71, 0.75])
    assert m["outside"]["direction"] == "above" and m["noise"]["runs"] == 3
    one = next(s for s in back["series"] if s["model_id"] == "one")
    assert one["points"][1:] == [None, None, None] and one["noise"] is None
    # Every task of m moved with its mean, in both transitions.
    assert len(back["flaky_tasks"]) == 10 and back["observed_tasks"] == 10
    assert back["flaky_tasks"][0] == {
        "task_id": "t00",
        "flips": 2,
        "transitions": 2,
        "rate": 1.0,
        "mean_change": pytest.approx(0.015),
        "flipped_on": ["m"],
    }


def test_the_flaky_tasks_output_is_capped_highest_rate_first() -> None:
    table = {"t0": [0.0, 1.0, 0.0], "t1": [1.0, 1.0, 0.0], "t2": [1.0, 1.0, 1.0]}  # rates 1, 1/2, 0
    runs = [run_scores(str(r), None, [EvalRun("m", t, "acc", v[r]) for t, v in table.items()]) for r in range(3)]
    h = summarise(runs, runs[-1])
    assert json.loads(flaky_tasks_output(h)) == {"t0": 1.0, "t1": 0.5}
    assert list(json.loads(flaky_tasks_output(h, limit=1))) == ["t0"]
    assert flaky_tasks_output(None) == "{}"


def test_the_json_section_without_history_still_says_why() -> None:
    section = history_dict(None, coverage_of(10, 0, 0, {}))
    assert section["coverage"]["no_history"] == "first-run"  # type: ignore[index]
    assert section["runs"] == [] and section["series"] == [] and section["flaky_tasks"] == []


# --- the CLI's reader -----------------------------------------------------------------------------------


def write(path: Path, model: str, scores: list[float]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"model_id": model, "task_id": f"t{k}", "metric_name": "acc", "score": s})
        for k, s in enumerate(scores)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_files_are_runs_oldest_first_named_by_their_stem(tmp_path: Path) -> None:
    a = write(tmp_path / "abc1234.jsonl", "m", [1.0, 0.0])
    b = write(tmp_path / "def5678.jsonl", "m", [0.0, 0.0])
    read = read_history([a, b])
    assert [r.commit for r in read.runs] == ["abc1234", "def5678"]
    assert read.coverage == coverage_of(2, 2, 2, {}) and read.problems == ()
    assert [r.records for r in read.runs] == [2, 2]


def test_a_directory_named_by_commit_is_one_run_of_all_its_files(tmp_path: Path) -> None:
    run = tmp_path / "0123abc"
    write(run / "part1.jsonl", "a", [1.0])
    write(run / "sub" / "part2.jsonl", "b", [0.5])
    (run / ".hidden.jsonl").write_text("not json\n", encoding="utf-8")
    (read,) = read_history([run]).runs
    assert read.commit == "0123abc" and read.matrix is not None
    assert read.matrix.model_ids == ("a", "b")


def test_a_run_that_cannot_be_read_is_skipped_counted_and_named(tmp_path: Path) -> None:
    good = write(tmp_path / "good.jsonl", "m", [1.0])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"model_id": "m"}\n', encoding="utf-8")
    empty = tmp_path / "empty"
    empty.mkdir()
    read = read_history([bad, tmp_path / "gone.jsonl", empty, good])
    assert [r.commit for r in read.runs] == ["good"]
    assert read.coverage == coverage_of(4, 4, 1, {INVALID: 2, MISSING: 1})
    assert any(p.file == bad.as_posix() and p.line == 1 and "history run 'bad' skipped" in p.message
               for p in read.problems)  # fmt: skip
    assert any("'empty' skipped: holds no file" in p.message for p in read.problems)
    assert partial_history_line(read.coverage, "main") == (
        "History: read 1 of 4 earlier runs on `main`: 1 missing, 2 invalid."
    )


def test_more_runs_than_the_limit_keep_the_newest(tmp_path: Path) -> None:
    paths = [write(tmp_path / f"r{k}.jsonl", "m", [k / 10]) for k in range(5)]
    read = read_history(paths, limit=3)
    assert [r.commit for r in read.runs] == ["r2", "r3", "r4"]
    assert read.coverage.skipped == ((OVER_LIMIT, 2),)


def test_the_byte_budget_keeps_the_newest_runs(tmp_path: Path) -> None:
    paths = [write(tmp_path / f"r{k}.jsonl", "m", [0.5] * 20) for k in range(3)]
    size = paths[0].stat().st_size
    read = read_history(paths, max_bytes=2 * size)
    assert [r.commit for r in read.runs] == ["r1", "r2"]
    assert read.coverage.skipped == ((OVER_BUDGET, 1),)
    assert "more than the 0 left" in read.problems[0].message


def test_no_run_starts_after_the_time_budget(tmp_path: Path) -> None:
    paths = [write(tmp_path / f"r{k}.jsonl", "m", [0.5]) for k in range(2)]
    read = read_history(paths, max_seconds=0.0)
    assert read.runs == () and read.coverage.skipped == ((TIMED_OUT, 2),)
    assert no_history_line(read.coverage, "main") == (
        "No history: none of the 2 earlier runs on `main` could be read (2 not read in time)."
    )


def test_a_missing_run_is_named_like_a_file_run(tmp_path: Path) -> None:
    read = read_history([tmp_path / "abc1234.jsonl"])
    assert read.coverage.skipped == ((MISSING, 1),)
    assert read.problems[0].message.startswith("history run 'abc1234' skipped: cannot be read")
