"""The history from the CLI's ``--history`` files, and the comment's budget with the history on."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from history_runs import FLAKY, records

from leaderboard import EvalRun
from leaderboard.cli import main
from leaderboard.pipeline import Options, run
from leaderboard.report.comparison import utf16_length
from leaderboard.report.document import COMMENT_LIMIT, comment_body, summary_markdown
from leaderboard.report.plan import Compared, plan
from leaderboard.stats.history import Earlier, coverage_of, run_scores


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, list[Path]]:
    """This run and six earlier runs, oldest first, named by their commit."""
    current = tmp_path / "run.jsonl"
    current.write_text(records(6, pull_request=True))
    earlier = []
    for k in range(6):
        path = tmp_path / f"c{k:039x}.jsonl"
        path.write_text(records(k))
        earlier.append(path)
    return current, earlier


def cli(tmp_path: Path, *args: str) -> tuple[int, str, dict]:
    comment, report = tmp_path / "comment.md", tmp_path / "report.json"
    code = main([*args, "--comment", str(comment), "--json", str(report), "--b", "400"])
    return code, comment.read_text(), json.loads(report.read_text())


def test_the_cli_reads_earlier_runs_oldest_first_and_shows_the_trend(
    tmp_path: Path, files: tuple[Path, list[Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    current, earlier = files
    code, body, report = cli(tmp_path, str(current), "--history", *map(str, earlier))
    assert code == 0
    assert "### Trend in the earlier runs" in body
    assert "| Model | Mean by run (6 earlier → this run), pts | Run to run |" in body
    assert [r["commit"] for r in report["history"]["runs"]] == [p.stem for p in earlier]
    assert {f["task_id"] for f in report["history"]["flaky_tasks"]} == set(FLAKY)
    markdown = capsys.readouterr().out
    assert "```mermaid\n" in markdown and "xychart-beta" in markdown


def test_the_cli_names_a_history_run_it_cannot_read_and_goes_on(
    tmp_path: Path, files: tuple[Path, list[Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    current, earlier = files
    earlier[2].write_text('{"model_id": "m"}\n')
    code, body, report = cli(tmp_path, str(current), "--history", *map(str, earlier))
    assert code == 0
    assert f"history run '{earlier[2].stem}' skipped" in capsys.readouterr().err
    assert "History: read 5 of 6 earlier runs: 1 invalid." in body
    assert report["history"]["coverage"]["skipped"] == {"invalid": 1}


def test_without_history_files_the_cli_reads_none_and_says_nothing(
    tmp_path: Path, files: tuple[Path, list[Path]]
) -> None:
    current, _ = files
    code, body, report = cli(tmp_path, str(current))
    assert code == 0 and "Trend" not in body and "history" not in report


def test_five_hundred_models_with_history_and_a_baseline_fit_one_comment() -> None:
    rng = np.random.default_rng(0)
    ids = [(f"organisation-{m:03d}/" + "model-family-name-" * 3)[:76] + f"{m:03d}" for m in range(500)]

    def runs(shift: float) -> list[EvalRun]:
        return [
            EvalRun(ids[m], f"t{t:02d}", "acc", float(rng.random() < 0.3 + 0.0008 * m + shift), category=f"c{t % 8}")
            for m in range(500)
            for t in range(40)
        ]

    earlier = tuple(run_scores(f"{k:040x}", None, runs(0.0)) for k in range(10))
    current, baseline = runs(-0.05), runs(0.0)
    outcome = run(
        Options(b=400), current, baseline=baseline, history=Earlier(earlier, coverage_of(10, 10, 10, {}), "main")
    )
    sections = plan(outcome, baseline=Compared("**Baseline:** `main`."))
    body = comment_body(outcome.board, key="k", title="Evals", run_url=None, sections=sections.comment).text
    assert utf16_length(body) <= COMMENT_LIMIT
    assert "### Trend on `main`" in body and " run to run</sub>" in body
    summary = summary_markdown(outcome.board, title="Evals", sections=sections.summary).text
    assert "xychart-beta" in summary
