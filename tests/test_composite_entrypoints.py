"""The composite ranking through the CLI and the action: one engine, the same answer."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from test_action import run_action

from leaderboard import EvalRun, analyse
from leaderboard.composite import rank
from leaderboard.config import parse_config
from leaderboard.report.composite import MAX_ROWS, composite_section
from leaderboard.report.document import marker

SUITE = ROOT / "examples" / "agent-suite"
RUNS = SUITE / "runs.jsonl"
CONFIG = SUITE / "leaderboard.yml"
TOO_CLOSE = "the two are too close to call on accuracy (this suite does not separate them at this level)"


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "leaderboard", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "workspace"
    (ws / "results").mkdir(parents=True)
    (ws / ".github").mkdir()
    shutil.copy(RUNS, ws / "results" / "agent.jsonl")
    shutil.copy(CONFIG, ws / ".github" / "leaderboard.yml")
    return ws


def test_the_cli_ranks_on_the_configuration_with_disqualified_models_and_the_too_close_sentence() -> None:
    done = cli(str(RUNS), "--config", str(CONFIG))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    section = out.index(
        "### Composite ranking\n\n| Rank | Model | Composite | Accuracy | $/1k calls | p95 ms | Error rate |"
    )
    # Under the verdict, above the usual leaderboard, which follows unchanged.
    assert section < out.index("| Rank | Model | Mean |")
    assert "| 1 | `sim_small` |" in out and "| 2 | `sim_frontier` |" in out
    assert "| — | `sim_tiny` | DISQUALIFIED |" in out
    assert "- ✗ `sim_tiny`: accuracy 50\\.0% below the required 70\\.0%" in out
    assert TOO_CLOSE in out and "so the gap comes from the other metrics" in out


def test_with_a_composite_the_first_sentence_names_the_composite_winner_and_the_accuracy_table_is_headed() -> None:
    out = cli(str(RUNS), "--config", str(CONFIG)).stdout
    first = out.split("\n\n")[0]
    assert first.startswith("**`sim_small` ranks first on the composite** (0.813), ahead of `sim_frontier` (0.574)")
    assert "too close to call on accuracy" in first and first.endswith("3 models disqualified.")
    order = [out.index(h) for h in ("### Composite ranking", "### Accuracy, every model", "| Rank | Model | Mean |")]
    assert order == sorted(order)


def test_the_cli_re_ranks_stored_results_under_other_weights() -> None:
    done = cli(str(RUNS), "--config", str(CONFIG), "--weights", "accuracy=1")
    assert done.returncode == 0, done.stderr
    assert "| 1 | `sim_frontier` |" in done.stdout and "| 2 | `sim_small` |" in done.stdout


def test_weights_alone_rank_on_the_defaults_with_no_constraints() -> None:
    done = cli(str(RUNS), "--weights", "accuracy=0.6,cost=0.4")
    assert done.returncode == 0, done.stderr
    assert "DISQUALIFIED" not in done.stdout and "| 1 |" in done.stdout


def test_a_bad_configuration_is_reported_at_its_line_by_the_cli_without_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "c.yml"
    bad.write_text("metrics:\n  weights:\n    acuracy: 1\nconstraints:\n  max_error_rate: 2\n")
    done = cli(str(RUNS), "--config", str(bad))
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr
    assert f"{bad}:5: constraints.max_error_rate: must be a fraction from 0 to 1" in done.stderr


def test_a_malformed_weights_option_is_a_usage_error() -> None:
    done = cli(str(RUNS), "--weights", "accuracy")
    assert done.returncode == 2 and "--weights" in done.stderr


def test_the_action_puts_the_composite_ranking_under_the_title_and_sets_the_outputs(
    workspace: Path, fake_github
) -> None:
    result = run_action(workspace, fake_github.url)
    assert result.code == 0, result.stdout + result.stderr
    (comment,) = fake_github.thread()
    body = comment["body"]
    assert body.startswith(marker("leaderboard") + "\n\n## Model leaderboard\n")
    assert body.index("\n### Composite ranking\n") < body.index("| Rank | Model | Mean |")
    assert TOO_CLOSE in comment["body"] and "DISQUALIFIED" in comment["body"]
    assert result.outputs["top-model"] == "sim_small"
    assert json.loads(result.outputs["disqualified"]) == ["sim_flaky", "sim_local", "sim_tiny"]
    assert "### Composite ranking" in result.summary
    assert "### Composite ranking" in (workspace / result.outputs["markdown"]).read_text()
    assert "### Composite ranking" in (workspace / result.outputs["markdown"]).with_name("comment.md").read_text()


def test_the_cli_and_the_action_give_the_same_report_for_the_same_files_and_configuration(
    workspace: Path, fake_github, tmp_path: Path
) -> None:
    result = run_action(workspace, fake_github.url, comment="off")
    assert result.code == 0, result.stdout + result.stderr
    out = tmp_path / "cli.json"
    done = cli("results/agent.jsonl", "--config", ".github/leaderboard.yml", "--json", str(out), cwd=workspace)
    assert done.returncode == 0, done.stderr
    action_report = (workspace / result.outputs["report"]).read_text()
    assert out.read_text() == action_report
    composite = json.loads(action_report)["composite"]
    assert composite["top_model"] == "sim_small" and composite["config"]["file"] == ".github/leaderboard.yml"


def test_the_json_report_has_raw_normalised_and_composite_values_and_the_reasons(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    assert cli(str(RUNS), "--config", str(CONFIG), "--json", str(out)).returncode == 0
    report = json.loads(out.read_text())
    assert list(report)[-3:] == ["resolution", "composite", "pairs"]
    first = report["composite"]["ranked"][0]
    assert set(first["raw"]) >= {"accuracy", "cost", "latency", "latency_p50", "error_rate", "tool_calls"}
    assert set(first["normalised"]) == {"accuracy", "cost", "latency"} and first["composite"] > 0
    tiny = next(d for d in report["composite"]["disqualified"] if d["model_id"] == "sim_tiny")
    assert tiny["rank"] is None and tiny["reasons"] == ["accuracy 50.0% below the required 70.0%"]
    assert report["composite"]["weights"] == {"accuracy": 0.55, "cost": 0.25, "latency": 0.2}


def test_without_a_configuration_the_report_has_no_composite_and_nothing_is_disqualified(
    workspace: Path, fake_github
) -> None:
    (workspace / ".github" / "leaderboard.yml").unlink()
    result = run_action(workspace, fake_github.url, comment="off")
    assert result.code == 0, result.stdout + result.stderr
    assert result.outputs["disqualified"] == "[]" and result.outputs["top-model"] == "sim_frontier"
    assert "composite" not in json.loads((workspace / result.outputs["report"]).read_text())


def test_a_bad_configuration_fails_the_action_with_an_annotation_at_its_line(workspace: Path, fake_github) -> None:
    (workspace / ".github" / "leaderboard.yml").write_text("metrics:\n  weights: {accuracy: 1}\n  tiebreaker: cost\n")
    result = run_action(workspace, fake_github.url)
    assert result.code == 1
    assert any(
        a.startswith("::error file=.github/leaderboard.yml,line=3,title=Invalid configuration%3A metrics.tiebreaker::")
        for a in result.annotations
    ), result.annotations


def test_a_configuration_path_that_is_set_must_exist(workspace: Path, fake_github) -> None:
    result = run_action(workspace, fake_github.url, config="ci/missing.yml", comment="off")
    assert result.code == 1 and any("ci/missing.yml" in a and "no such file" in a for a in result.annotations)


def test_a_configuration_outside_the_workspace_is_refused(workspace: Path, fake_github, tmp_path: Path) -> None:
    (tmp_path / "outside.yml").write_text("metrics: {weights: {accuracy: 1}}\n")
    (workspace / ".github" / "leaderboard.yml").unlink()
    (workspace / ".github" / "leaderboard.yml").symlink_to(tmp_path / "outside.yml")
    result = run_action(workspace, fake_github.url, comment="off")
    assert result.code == 1 and any("outside the workspace" in a for a in result.annotations)


def test_the_actions_statistics_inputs_override_the_configuration(workspace: Path, fake_github) -> None:
    result = run_action(workspace, fake_github.url, comment="off", bootstrap_samples="800", seed="3")
    assert result.code == 0, result.stdout + result.stderr
    parameters = json.loads((workspace / result.outputs["report"]).read_text())["parameters"]
    assert (parameters["bootstrap_samples"], parameters["seed"]) == (800, 3)
    result = run_action(workspace, fake_github.url, comment="off")
    parameters = json.loads((workspace / result.outputs["report"]).read_text())["parameters"]
    assert (parameters["bootstrap_samples"], parameters["seed"]) == (1000, 7)


def test_the_section_stays_bounded_with_many_long_ids_disqualified() -> None:
    runs = [EvalRun(f"{m:03d}" + "x" * 500, f"t{t}", "acc", 0.0) for m in range(200) for t in range(2)]
    result = rank(runs, analyse(runs, b=400, pairs=False), parse_config("constraints: {min_accuracy: 0.5}", "c.yml"))
    section = composite_section(result)
    assert len(result.disqualified) == 200 and section.count("- ✗") == MAX_ROWS
    assert len(section) < 25_000 and "150 more models are in the JSON report" in section


def test_a_baseline_with_trials_and_failed_calls_is_compared_per_task_beside_the_composite(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    done = cli(str(RUNS), "--config", str(CONFIG), "--json", str(out), "--baseline", str(RUNS))
    assert done.returncode == 0, done.stderr
    # Nothing changed: the comparison is one collapsed line, before the composite ranking.
    assert done.stdout.index("<summary>Compared with the baseline:") < done.stdout.index("### Composite ranking")
    report = json.loads(out.read_text())
    assert report["baseline"]["counts"]["unchanged"] == 5 and report["composite"]["top_model"] == "sim_small"
    assert list(report)[-4:] == ["resolution", "baseline", "composite", "pairs"]


def test_with_accuracy_alone_weighted_a_close_top_two_is_not_blamed_on_other_metrics(tmp_path: Path) -> None:
    config = tmp_path / "accuracy.yml"
    config.write_text("constraints: {min_accuracy: 0.1}\n")
    first = cli(str(RUNS), "--config", str(config)).stdout.split("\n\n")[0]
    assert "too close to call" in first and "their order here is not established" in first
    assert "other metrics" not in first


def test_a_broken_constraint_never_prints_the_value_and_the_limit_alike(tmp_path: Path) -> None:
    config = tmp_path / "tight.yml"
    config.write_text("constraints: {min_accuracy: 0.7778}\n")
    out = cli(str(RUNS), "--config", str(config)).stdout
    assert "✗ `sim_small`: accuracy 77\\.778% below the required 77\\.780%" in out
