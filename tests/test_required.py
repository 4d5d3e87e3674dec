"""Required tasks: every model must score at least the required score on each task matching a glob."""

from __future__ import annotations

import fnmatch
import json
import random
import unicodedata
from pathlib import Path

import pytest

from leaderboard import EvalRun
from leaderboard.cli import main as cli_main
from leaderboard.report.required_tasks import required_markdown, required_outputs
from leaderboard.required import RequiredFailure, UnmatchedPatterns, check_required, matching, split_patterns


def run(model: str, task: str, score: float | None, **extra: object) -> EvalRun:
    return EvalRun(model, task, "acc", score, **extra)  # type: ignore[arg-type]


RUNS = [
    run("a", "safety/1", 1.0),
    run("a", "safety/2", 1.0),
    run("a", "math/1", 0.0),
    run("b", "safety/1", 1.0),
    run("b", "safety/2", 0.0),
    run("b", "math/1", 1.0),
]


def test_models_scoring_the_required_score_on_every_required_task_pass() -> None:
    check = check_required(RUNS[:3] + RUNS[3:4] + [run("b", "safety/2", 1.0)], ["safety/*"])
    assert check.passed and check.tasks == ("safety/1", "safety/2") and check.models == ("a", "b")


def test_a_model_below_the_required_score_on_a_required_task_fails_with_its_score() -> None:
    check = check_required(RUNS, ["safety/*"])
    assert check.failures == (RequiredFailure("b", "safety/2", 0.0),)


def test_a_required_task_a_model_did_not_run_is_a_failure_with_no_score() -> None:
    check = check_required([*RUNS, run("c", "math/1", 1.0)], ["safety/1"])
    assert check.failures == (RequiredFailure("c", "safety/1", None, ran=False),)
    assert check.failures[0].why == "not run"
    assert "| `c` | `safety/1` | not run |" in required_markdown(check)


def test_a_required_task_whose_every_call_failed_has_no_score() -> None:
    runs = [run("a", "t", 1.0), run("b", "t", None, error="timeout")]
    (failure,) = check_required(runs, ["t"]).failures
    assert failure == RequiredFailure("b", "t", None, ran=True) and failure.why == "no score: every call failed"


def test_a_pattern_matching_no_task_is_an_error_naming_it() -> None:
    with pytest.raises(UnmatchedPatterns) as caught:
        check_required(RUNS, ["safety/*", "saftey/*", "nope"])
    assert caught.value.patterns == ("saftey/*", "nope")
    assert "'saftey/*'" in str(caught.value) and "'nope'" in str(caught.value)


def test_the_required_score_is_a_threshold_met_within_the_tie_rule() -> None:
    runs = [run("a", "t", 0.8), run("b", "t", 0.7 + 0.1), run("c", "t", 0.79)]  # 0.7 + 0.1 = 0.7999999999999999
    assert [f.model_id for f in check_required(runs, ["t"], 0.8).failures] == ["c"]


def test_trials_are_averaged_as_in_the_leaderboard() -> None:
    runs = [run("a", "t", 1.0, trial=0), run("a", "t", 0.0, trial=1), run("b", "t", 1.0, trial=0)]
    assert check_required(runs, ["t"], 0.5).passed
    assert check_required(runs, ["t"]).failures == (RequiredFailure("a", "t", 0.5),)


def test_globs_are_case_sensitive_and_brackets_are_classes() -> None:
    runs = [run("a", "Safety", 1.0), run("a", "x[1]", 1.0), run("a", "x1", 0.0)]
    assert check_required(runs, ["Safe*"]).tasks == ("Safety",)
    with pytest.raises(UnmatchedPatterns):
        check_required(runs, ["safe*"])
    assert check_required(runs, ["x[[]1]"]).tasks == ("x[1]",)


def test_a_pattern_written_in_nfd_matches_the_ids_as_they_are_kept_in_nfc() -> None:
    runs = [run("a", "café/q1", 1.0), run("a", "café/q2", 0.0)]
    decomposed = unicodedata.normalize("NFD", "café/q1")
    check = check_required(runs, [decomposed, unicodedata.normalize("NFD", "café/q?")])
    assert check.tasks == ("café/q1", "café/q2")
    assert check.patterns == ("café/q1", "café/q?")  # as the report shows them: NFC


def test_a_pattern_in_nfd_that_matches_nothing_is_named_in_nfc() -> None:
    with pytest.raises(UnmatchedPatterns) as caught:
        check_required([run("a", "café/q1", 1.0)], [unicodedata.normalize("NFD", "café/q9")])
    assert caught.value.patterns == ("café/q9",)


def test_which_tasks_match_and_which_patterns_match_none_is_fnmatchcase_over_every_id() -> None:
    rng = random.Random(7)
    ids = sorted({"".join(rng.choices("ab/[]!-", k=rng.randint(1, 6))) for _ in range(300)})
    patterns = ["".join(rng.choices("ab/[]!-*?", k=rng.randint(1, 5))) for _ in range(400)]
    required, unmatched = matching(ids, patterns)
    assert required == tuple(t for t in ids if any(fnmatch.fnmatchcase(t, p) for p in patterns))
    assert unmatched == tuple(dict.fromkeys(p for p in patterns if not fnmatch.filter(ids, p)))
    assert required and unmatched  # the draw exercises both


def test_a_pattern_matching_only_tasks_another_pattern_matched_still_matches() -> None:
    assert matching(["s/1", "s/2", "t"], ["s/*", "s/1", "*1", "?/2", "s/[12]"]) == (("s/1", "s/2"), ())


def test_a_pattern_given_twice_that_matches_nothing_is_named_once() -> None:
    assert matching(["a"], ["b", "a", "b"]) == (("a",), ("b",))


def test_whole_ids_are_looked_up_and_globs_keep_their_literal_head_and_tail() -> None:
    ids = ["x[1]", "x1", "ab]", "a]b", "a*b"]
    assert matching(ids, ["x[1]"]) == (("x1",), ())  # a class, as fnmatch reads it
    assert matching(ids, ["x[[]1]", "a]b", "?b]"]) == (("a]b", "ab]", "x[1]"), ())
    assert matching(ids, ["a[*]b", "x[1"]) == (("a*b",), ("x[1",))  # an unclosed "[" is a literal


def test_patterns_are_newline_or_comma_separated() -> None:
    assert split_patterns(" a*,\nb/? ,\n\n c ") == ("a*", "b/?", "c")


def test_failures_are_listed_model_task_score_and_outputs_are_json() -> None:
    check = check_required(RUNS, ["safety/*", "math/*"])
    text = required_markdown(check)
    assert text.startswith("**Required tasks**: every model must score at least 1 on each of the 3 tasks matching")
    assert "| `a` | `math/1` | 0 |" in text and "| `b` | `safety/2` | 0 |" in text
    out = required_outputs(check)
    assert out["required-failures"] == "2"
    assert json.loads(out["required-failed"]) == [
        {"model": "a", "task": "math/1", "score": 0.0},
        {"model": "b", "task": "safety/2", "score": 0.0},
    ]


def test_all_passing_is_one_line() -> None:
    text = required_markdown(check_required(RUNS, ["safety/1"]))
    assert text == (
        "✅ **Required tasks**: all 2 models pass "
        "(every model must score at least 1 on the 1 task matching `safety/1`)."
    )


def test_a_long_failure_list_is_cut_within_its_limit_and_says_where_the_rest_is() -> None:
    runs = [run(f"m{i}", f"t{k}", 0.0) for i in range(50) for k in range(100)]
    text = required_markdown(check_required(runs, ["t*"]), limit=6_000)
    assert len(text) <= 6_000
    assert "more: the `required-failed` output and the JSON report (key `required`) list every one." in text


def test_hostile_task_ids_in_the_failure_table_are_escaped() -> None:
    runs = [run("a", "x|`@y`\n<b>", 0.0)]
    text = required_markdown(check_required(runs, ["x*"]))
    (row,) = [line for line in text.splitlines() if line.startswith("| `")]
    assert row.replace("\\|", "").count("|") == 4 and "\n" not in row and "<b>" in row and "``" in row


def write(path: Path, runs: list[EvalRun]) -> str:
    rows = [{"model_id": r.model_id, "task_id": r.task_id, "metric_name": "acc", "score": r.score} for r in runs]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_the_cli_fails_after_writing_the_leaderboard_and_lists_each_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.json"
    code = cli_main([write(tmp_path / "a.jsonl", RUNS), "--required-tasks", "safety/*", "--json", str(report)])
    out, err = capsys.readouterr()
    assert code == 1
    assert "**1 required-task failure** in 1 model" in out and "| `b` | `safety/2` | 0 |" in out
    assert "required task failed: b on safety/2: score 0" in err
    assert json.loads(report.read_text())["required"]["failed"] == [{"model": "b", "task": "safety/2", "score": 0.0}]


def test_the_cli_refuses_a_pattern_matching_no_task(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli_main([write(tmp_path / "a.jsonl", RUNS), "--required-tasks", "saftey/*", "--required-score", "0.5"])
    assert code == 1
    assert "--required-tasks: the pattern 'saftey/*' matches no task in the runs" in capsys.readouterr().err


def test_the_cli_passes_when_every_model_meets_the_required_score(tmp_path: Path) -> None:
    assert cli_main([write(tmp_path / "a.jsonl", RUNS), "--required-tasks", "safety/1"]) == 0


def test_the_cli_matches_a_pattern_copied_from_nfd_text(tmp_path: Path) -> None:
    runs = [run("a", "café/q1", 1.0), run("b", "café/q1", 1.0)]
    pattern = unicodedata.normalize("NFD", "café/q1")
    assert cli_main([write(tmp_path / "a.jsonl", runs), "--required-tasks", pattern]) == 0


def test_the_rule_names_the_first_patterns_and_counts_the_rest() -> None:
    runs = [run("a", f"t{k}", 0.0) for k in range(30)]
    text = required_markdown(check_required(runs, [f"t{k}" for k in range(30)]))
    rule = text.split("\n")[0]
    assert "`t0`, `t1`," in rule and "`t9`" in rule and "`t10`" not in rule
    assert "and 20 more patterns (the JSON report lists every one)" in rule


def test_a_pattern_too_long_to_show_is_counted_not_shown() -> None:
    pattern = "t" * 5_000
    rule = required_markdown(check_required([run("a", pattern, 0.0)], [pattern])).split("\n")[0]
    assert "ttt" not in rule and "matching 1 pattern too long to show here" in rule


def test_thousands_of_patterns_leave_the_failures_and_the_leaderboard_in_the_comment(tmp_path: Path) -> None:
    ids = [f"benchmark/split-{k:05d}" for k in range(4_000)]  # 88 KB of patterns
    runs = [run(m, t, float((k + j) % 3 > 0)) for j, m in enumerate("abc") for k, t in enumerate(ids)]
    comment = tmp_path / "comment.md"
    args = [write(tmp_path / "a.jsonl", runs), "--required-tasks", ",".join(ids), "--comment", str(comment)]
    assert cli_main(args) == 1
    body = comment.read_text()
    assert "**4,000 required-task failures** in 3 models" in body
    assert "and 3,990 more patterns" in body and "| `a` | `benchmark/split-00000` | 0 |" in body
    assert "| Rank | Model | Mean |" in body and "too large to show here" not in body
