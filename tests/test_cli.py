"""The command line, run as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLE, ROOT


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "leaderboard", *args], capture_output=True, text=True, cwd=ROOT)


def test_prints_the_leaderboard_for_the_example() -> None:
    done = cli(str(EXAMPLE))
    assert done.returncode == 0, done.stderr
    assert "| Rank | Model | Mean | 95% CI | vs next | Win rate | Tasks |" in done.stdout
    assert "Pairwise comparisons (15 of 15 pairs)" in done.stdout


def test_the_comment_option_writes_the_body_the_action_would_post(tmp_path: Path) -> None:
    out = tmp_path / "comment.md"
    done = cli(str(EXAMPLE), "--comment", str(out), "--comment-key", "gpu/a100", "--commit", "0123456789abcdef")
    assert done.returncode == 0, done.stderr
    body = out.read_text(encoding="utf-8")
    assert body.startswith("<!-- leaderboard-action:gpu/a100 -->\n\n## Model leaderboard\n")
    assert "commit `0123456`" in body and "commit `0123456`" in done.stdout


def test_a_bad_comment_key_is_refused() -> None:
    done = cli(str(EXAMPLE), "--comment-key", "-->")
    assert done.returncode == 2 and "--comment-key" in done.stderr


def test_writes_the_json_report_and_takes_the_parameters(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    done = cli(str(EXAMPLE), "--json", str(out), "--alpha", "0.1", "--b", "200", "--seed", "3", "--rank-by", "win-rate")
    assert done.returncode == 0, done.stderr
    assert "| 90% CI |" in done.stdout
    params = json.loads(out.read_text())["parameters"]
    assert (params["alpha"], params["bootstrap_samples"], params["seed"], params["rank_by"]) == (
        0.1,
        200,
        3,
        "win-rate",
    )


def test_invalid_input_lists_every_problem_and_exits_1_without_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("model_id,task_id,metric_name,score\nm,t,acc,1.5\nm,t,acc,0.5\n")
    done = cli(str(bad))
    assert done.returncode == 1 and done.stdout == ""
    assert f"{bad}:2: score: 1.5 is outside [0, 1]" in done.stderr
    assert f"{bad}:3: task_id: duplicate" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_bad_option_is_a_usage_error_not_a_traceback() -> None:
    done = cli(str(EXAMPLE), "--alpha", "2")
    assert done.returncode == 2 and "--alpha" in done.stderr and "Traceback" not in done.stderr


def test_the_same_input_in_another_file_order_gives_byte_identical_output(tmp_path: Path) -> None:
    lines = EXAMPLE.read_text().splitlines(keepends=True)
    (tmp_path / "a.jsonl").write_text("".join(lines[::2]))
    (tmp_path / "b.jsonl").write_text("".join(reversed(lines[1::2])))
    split = cli(str(tmp_path / "b.jsonl"), str(tmp_path / "a.jsonl"))
    assert split.stdout == cli(str(EXAMPLE)).stdout


def test_reads_a_harness_output_with_the_format_and_metric_options_and_reports_the_read_on_stderr() -> None:
    samples = ROOT.parent / "shared" / "formats" / "lm-evaluation-harness"
    files = sorted(samples.glob("*2024-06-17*"))
    if not files:
        pytest.skip("../shared/formats is not here")
    done = cli(*map(str, files), "--format", "lm-eval", "--metric", "acc_norm", "--b", "400")
    assert done.returncode == 0, done.stderr
    assert "`meta-llama/Meta-Llama-3-8B`" in done.stdout and "| 51.1% |" in done.stdout
    assert "lm-eval ×1 (609 records, metric acc_norm)" in done.stderr


def test_an_unknown_format_is_a_usage_error() -> None:
    done = cli(str(EXAMPLE), "--format", "yaml")
    assert done.returncode == 2 and "--format" in done.stderr


def test_the_bootstrap_bound_is_the_actions_and_a_usage_error() -> None:
    done = cli(str(EXAMPLE), "--b", "1000000000")
    assert done.returncode == 2 and "must be an integer from 1 to 100000" in done.stderr
    assert "Traceback" not in done.stderr


def test_deeply_nested_json_is_a_problem_at_its_line_not_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "deep.json"
    bad.write_text("[" * 100_000 + "]" * 100_000)
    done = cli(str(bad))
    assert done.returncode == 1 and f"{bad}:1: invalid JSON: nested too deeply" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_400_digit_score_is_a_problem_at_its_line_not_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "big.jsonl"
    bad.write_text('{"model_id": "m", "task_id": "t", "metric_name": "a", "score": 1' + "0" * 399 + "}\n")
    done = cli(str(bad))
    assert done.returncode == 1 and f"{bad}:1: score:" in done.stderr and "outside [0, 1]" in done.stderr
    assert "Traceback" not in done.stderr


def test_option_numbers_are_plain_decimal_text() -> None:
    for option, text in (("--alpha", "0.0_5"), ("--b", "1_0"), ("--seed", "٣")):
        done = cli(str(EXAMPLE), option, text)
        assert done.returncode == 2 and option in done.stderr, (option, done.stderr)


def test_the_comment_file_carries_the_read_note_as_the_action_posts_it(tmp_path: Path) -> None:
    logs = ROOT.parent / "shared" / "formats" / "inspect_ai"
    if not logs.is_dir():
        pytest.skip("../shared/formats is not here")
    comment = tmp_path / "comment.md"
    done = cli(str(logs / "log_streaming.eval"), "--comment", str(comment))
    assert done.returncode == 0, done.stderr
    assert "2 tasks are the mean of 4 trials" in comment.read_text()
