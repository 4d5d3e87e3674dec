"""End to end: ``entrypoint.py`` compares with the base branch's artifact (fake GitHub) and gates on it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLE
from fakegithub import FakeGitHub, Fault
from test_action import Result, assert_no_secret, run_action
from test_archive import make_zip
from test_baseline import BASE, GOOD, HEAD, MERGE_BASE, ago, run_with_artifact, workspace  # noqa: F401

REGRESSING = "intfloat/e5-base-v2"
IMPROVING = "jinaai/jina-embeddings-v3"


def write_runs(ws: Path, changes: dict[str, float]) -> None:
    """The workspace's EvalRun file: the example with some models' scores moved by a fixed amount."""
    lines = []
    for line in EXAMPLE.read_text().splitlines():
        record = json.loads(line)
        if record["model_id"] in changes:
            record["score"] = min(1.0, max(0.0, record["score"] + changes[record["model_id"]]))
        lines.append(json.dumps(record))
    (ws / "results" / "mteb.jsonl").write_text("\n".join(lines) + "\n")


def with_artifact(ws: Path, fake: FakeGitHub, changes: dict[str, float], **inputs: str) -> Result:
    fake.merge_bases[(BASE, HEAD)] = MERGE_BASE
    fake.add_run(MERGE_BASE, created_at=ago(1), artifacts={"eval-results": GOOD})
    write_runs(ws, changes)
    return run_with_artifact(ws, fake, **inputs)


def test_a_regression_with_the_gate_posts_the_comment_then_errors_naming_the_model_and_exits_1(
    workspace: Path,  # noqa: F811
    fake_github: FakeGitHub,
) -> None:
    result = with_artifact(workspace, fake_github, {REGRESSING: -0.02}, fail_on_regression="true")

    assert result.code == 1, result.stdout + result.stderr
    (comment,) = fake_github.thread()
    body = comment["body"]
    # The section sits right under the title, before the leaderboard.
    assert body.index("### Compared with the base branch") < body.index("| Rank | Model |")
    assert "[`a1b2c3d`](https://github.com/octo/evals/commit/" in body
    assert "model regressed" not in body and "5 models with no detectable change" in body  # said once, above
    assert f"| `{REGRESSING}` | 62.7% | 60.7% | −2.0 [−2.0,\u00a0−2.0] | ❌ **regressed** | 41 |" in body
    errors = [a for a in result.annotations if a.startswith("::error")]
    assert errors == [
        f"::error title=Regression::Regressed: {REGRESSING}: Δ −0.020, one-sided 95%25 bounds [−0.020, −0.020], "
        "over 41 shared tasks, one-sided exact binomial (McNemar) p < 0.001"
    ]
    # The comment first, then the errors.
    assert result.stdout.index("Created leaderboard comment") < result.stdout.index("::error title=Regression")
    assert "fail-on-regression: 1 model regressed; failing the step." in result.stdout
    out = result.outputs
    assert (out["regressions"], out["regressed-models"], out["improvements"]) == ("1", f'["{REGRESSING}"]', "0")
    assert out["baseline-sha"] == MERGE_BASE and out["comment-id"] == str(comment["id"])
    assert "### Compared with the base branch" in result.summary
    report = json.loads((workspace / out["report"]).read_text())
    assert report["baseline"]["regressed_models"] == [REGRESSING]
    assert report["baseline"]["source"]["sha"] == MERGE_BASE and report["baseline"]["source"]["origin"] == "artifact"
    assert "### Compared with the base branch" in (workspace / out["markdown"]).read_text()
    assert_no_secret(result)


def test_without_the_gate_a_regression_exits_0_and_the_outputs_count_regressions_and_improvements(
    workspace: Path,  # noqa: F811
    fake_github: FakeGitHub,
) -> None:
    result = with_artifact(workspace, fake_github, {REGRESSING: -0.02, IMPROVING: 0.03})

    assert result.code == 0, result.stdout
    assert not [a for a in result.annotations if a.startswith("::error")]
    out = result.outputs
    assert (out["regressions"], out["regressed-models"], out["improvements"]) == ("1", f'["{REGRESSING}"]', "1")
    body = fake_github.thread()[0]["body"]
    assert "model regressed" not in body and "4 models with no detectable change" in body  # said once, above
    assert f"| `{IMPROVING}` |" in body and "✅ **improved**" in body
    assert "Compared with the baseline: 1 model regressed, 1 improved, 4 no detectable change." in result.stdout


def test_improvements_never_fail_the_gate(workspace: Path, fake_github: FakeGitHub) -> None:  # noqa: F811
    result = with_artifact(workspace, fake_github, {IMPROVING: 0.03}, fail_on_regression="true")
    assert result.code == 0, result.stdout
    assert (result.outputs["regressions"], result.outputs["improvements"]) == ("0", "1")


def test_a_drop_within_the_tolerance_passes_the_gate(workspace: Path, fake_github: FakeGitHub) -> None:  # noqa: F811
    result = with_artifact(
        workspace, fake_github, {REGRESSING: -0.02}, fail_on_regression="true", regression_tolerance="0.05"
    )
    assert result.code == 0, result.stdout
    assert (result.outputs["regressions"], result.outputs["regressed-models"]) == ("0", "[]")
    assert "⚠️ lower, within the tolerance (0.05)" in fake_github.thread()[0]["body"]


def test_no_baseline_puts_the_reason_and_the_fix_in_the_comment_and_the_gate_does_not_fail(
    workspace: Path,  # noqa: F811
    fake_github: FakeGitHub,
) -> None:
    fake_github.merge_bases[(BASE, HEAD)] = MERGE_BASE
    fake_github.faults.append(Fault("GET", r"/repos/octo/evals/actions/.*", 403, times=10, message="Forbidden"))
    result = run_with_artifact(workspace, fake_github, fail_on_regression="true")

    assert result.code == 0, result.stdout
    body = fake_github.thread()[0]["body"]
    section = body[body.index("### Compared with the base branch") : body.index("| Rank | Model |")]
    assert "**No baseline:** GitHub refused listing the runs" in section and "**Fix:** give the job" in section
    assert "Nothing was compared; this does not fail the step." in section
    assert result.outputs["regressions"] == "0" and result.outputs["baseline-sha"] == ""
    report = json.loads((workspace / result.outputs["report"]).read_text())
    assert report["baseline"]["found"] is False and "permissions: actions: read" in report["baseline"]["fix"]


def test_baseline_files_gate_a_push_too_where_there_is_no_comment(workspace: Path, fake_github) -> None:  # noqa: F811
    (workspace / "baseline").mkdir()
    (workspace / "baseline" / "main.jsonl").write_text(EXAMPLE.read_text())
    write_runs(workspace, {REGRESSING: -0.02})
    result = run_action(
        workspace, fake_github.url, event="push", payload={"ref": "refs/heads/main"},
        baseline="baseline/*.jsonl", fail_on_regression="true",
    )  # fmt: skip
    assert result.code == 1 and fake_github.thread() == []
    assert "### Compared with the baseline" in result.summary
    assert result.outputs["regressed-models"] == f'["{REGRESSING}"]'
    assert [a.split("::")[1] for a in result.annotations] == ["notice title=Leaderboard", "error title=Regression"]


@pytest.mark.parametrize("hostile", ["::error::forged", "m\n::warning::x"])
def test_a_model_id_cannot_forge_a_workflow_command(workspace: Path, fake_github, hostile: str) -> None:  # noqa: F811
    rows = [{"model_id": hostile, "task_id": f"t{i}", "metric_name": "a", "score": 0.5} for i in range(8)]
    (workspace / "baseline").mkdir()
    (workspace / "baseline" / "b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (workspace / "results" / "mteb.jsonl").write_text("".join(json.dumps({**r, "score": 0.3}) + "\n" for r in rows))
    result = run_action(workspace, fake_github.url, baseline="baseline/*.jsonl", fail_on_regression="true")
    if result.code == 1 and "Invalid EvalRun" in result.stdout:
        return  # refused as data: nothing to forge
    assert result.code == 1, result.stdout
    assert not [line for line in result.stdout.splitlines() if line.startswith(("::error::forged", "::warning::x"))]
    assert "regressed: m\\n::warning::x: Δ −0.200" in result.stdout or "::error::forged" in result.stdout


def test_an_archive_with_another_models_set_lists_new_and_removed_models(workspace: Path, fake_github) -> None:  # noqa: F811
    fake_github.merge_bases[(BASE, HEAD)] = MERGE_BASE
    kept = [line for line in EXAMPLE.read_text().splitlines() if IMPROVING not in line]
    fake_github.add_run(
        MERGE_BASE, created_at=ago(1), artifacts={"eval-results": make_zip({"r.jsonl": "\n".join(kept)})}
    )
    result = run_with_artifact(workspace, fake_github)
    assert result.code == 0, result.stdout
    assert f"- 1 new model (not in the baseline, so not compared): `{IMPROVING}`." in fake_github.thread()[0]["body"]
