"""The history end to end: ``entrypoint.py`` reads the base branch's earlier runs from the (fake) GitHub,
and the comment, the job summary, the JSON report and the outputs say what they show."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakegithub import FakeGitHub, Fault
from history_runs import FLAKY, records
from test_action import Result, assert_no_secret
from test_archive import make_zip
from test_baseline import ARTIFACT, BASE, HEAD, ago, run_with_artifact

BASE_RUNS = 12
EXPIRED_RUNS = (3, 5)  # oldest first: the fourth and the sixth run's artifacts have expired
HOSTILE_RUN = 7
RENAMED_RUN = 9  # org/beta ran as org/beta-v2


def sha(k: int) -> str:
    return f"{k + 1:x}" * 40 if k < 15 else f"{k:040x}"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "workspace"
    (ws / "results").mkdir(parents=True)
    (ws / "results" / "run.jsonl").write_text(records(BASE_RUNS, pull_request=True))
    return ws


def twelve_runs(fake: FakeGitHub) -> list[dict]:
    """Twelve successful runs on main, oldest first, a day apart; the newest is the merge-base."""
    made = []
    for k in range(BASE_RUNS):
        if k == HOSTILE_RUN:
            blob = make_zip({"results/run.jsonl": records(k), "../../outside.jsonl": "{}\n"})
        else:
            blob = make_zip({"results/run.jsonl": records(k, renamed=k == RENAMED_RUN)})
        made.append(
            fake.add_run(sha(k), created_at=ago(BASE_RUNS - k), artifacts={ARTIFACT: blob}, expired=k in EXPIRED_RUNS)
        )
    fake.merge_bases[(BASE, HEAD)] = sha(BASE_RUNS - 1)
    return made


def run(ws: Path, fake: FakeGitHub, **inputs: str) -> Result:
    inputs.setdefault("history", "10")
    result = run_with_artifact(ws, fake, **inputs)
    assert result.code == 0, result.stdout + result.stderr
    assert_no_secret(result)
    return result


def comment(fake: FakeGitHub) -> str:
    (posted,) = fake.thread()
    return str(posted["body"])


def report(ws: Path, result: Result) -> dict:
    return json.loads((ws / result.outputs["report"]).read_text())


def test_ten_runs_are_read_newest_first_and_the_skipped_ones_counted_by_reason(
    workspace: Path, fake_github: FakeGitHub
) -> None:
    twelve_runs(fake_github)
    result = run(workspace, fake_github)
    # The newest ten are runs 2 to 11: two expired (3, 5) and one hostile (7) are skipped.
    assert result.outputs["history-runs"] == "7"
    line = "History: read 7 of 10 earlier runs on `main`: 2 expired, 1 invalid."
    assert line in comment(fake_github) and line in result.summary
    history = report(workspace, result)["history"]
    assert history["coverage"] == {
        "wanted": 10, "found": 10, "read": 7, "skipped": {"expired": 2, "invalid": 1}, "no_history": None,
        "lookup_failed": None,
    }  # fmt: skip
    assert [r["commit"] for r in history["runs"]] == [sha(k) for k in (2, 4, 6, 8, 9, 10, 11)]
    assert all(r["date"].endswith("Z") for r in history["runs"])
    assert "'..' in the path" in result.stdout  # the hostile artifact's reason, in the log
    assert not list(workspace.parent.rglob("outside.jsonl"))


def test_the_comment_shows_each_models_trend_and_its_noise(workspace: Path, fake_github: FakeGitHub) -> None:
    twelve_runs(fake_github)
    result = run(workspace, fake_github)
    body = comment(fake_github)
    assert "### Trend on `main`" in body
    assert "| Model | Mean by run (7 earlier → this run), pts | Run to run |" in body
    alpha = next(line for line in body.splitlines() if line.startswith("| `org/alpha` |") and "▁" in line)
    assert alpha.count("|") == 4 and "pts |" in alpha
    # org/beta was renamed in run 9: its id is the same over two runs only, too few for a noise.
    beta = next(line for line in body.splitlines() if line.startswith("| `org/beta` |") and "▁" in line)
    assert beta.endswith("| — |") and "·" in beta  # the run it ran under another id is a gap
    assert "```mermaid" not in body  # the chart is the summary's
    assert "```mermaid\n" in result.summary and "xychart-beta" in result.summary


def test_the_noise_is_shown_under_each_compared_models_change(workspace: Path, fake_github: FakeGitHub) -> None:
    twelve_runs(fake_github)
    result = run(workspace, fake_github)
    body = comment(fake_github)
    compared = body.split("Compared with the base branch", 1)[1].split("####", 1)[0]
    alpha = next(line for line in compared.splitlines() if line.startswith("| `org/alpha` |"))
    # In the Δ's units: points, as the Δ of 0/1 scores is shown (0.053 is 5.3 pts).
    noise = report(workspace, result)["history"]["series"]
    rms = next(s["noise"]["rms_change"] for s in noise if s["model_id"] == "org/alpha")
    assert f"<br><sub>±{100 * rms:.1f} pts run to run</sub>" in alpha


def test_moved_tasks_that_also_flip_on_main_are_marked_and_counted(workspace: Path, fake_github: FakeGitHub) -> None:
    twelve_runs(fake_github)
    result = run(workspace, fake_github)
    body = comment(fake_github)
    moved = body.split("#### Which tasks moved", 1)[1]
    assert "⇄ also flips on `main` with nothing changed (the same model id)" in moved
    # org/alpha newly fails four steady tasks (unmarked) and org/beta the three that alternate on main.
    alpha = moved.split("<code>org/alpha</code>", 1)[1].split("</details>", 1)[0]
    assert "- `qa` (4): `t01`, `t02`, `t04`, `t05`" in alpha and "**Newly failing** (4)" in alpha
    beta = moved.split("<code>org/beta</code>", 1)[1].split("</details>", 1)[0]
    assert "**Newly failing** (3; ⇄ 3 of the 3 also flip on `main` with nothing changed)" in beta
    assert "`t03` ⇄, `t17` ⇄, `t29` ⇄" in beta
    flaky = json.loads(result.outputs["flaky-tasks"])
    assert set(flaky) == set(FLAKY) and result.outputs["flaky-tasks-omitted"] == "0"
    assert "**Flaky on `main`:** 3 of the 40 tasks compared from run to run flip with the model id unchanged" in body


def test_a_flaky_required_task_is_said_to_be_so(workspace: Path, fake_github: FakeGitHub) -> None:
    twelve_runs(fake_github)
    result = run(workspace, fake_github, required_tasks="t17", required_score="0")
    assert "⚠️ The required task `t17` is flaky: it flips on `main` with nothing changed" in result.summary


def test_the_json_report_holds_each_models_series(workspace: Path, fake_github: FakeGitHub) -> None:
    twelve_runs(fake_github)
    result = run(workspace, fake_github)
    series = {s["model_id"]: s for s in report(workspace, result)["history"]["series"]}
    assert set(series) == {"org/alpha", "org/beta", "org/beta-v2", "org/gamma", "org/delta"}
    assert len(series["org/alpha"]["points"]) == 8  # seven earlier runs and this one
    assert series["org/alpha"]["stable_runs"] == 7 and series["org/alpha"]["noise"] is not None
    assert series["org/beta"]["stable_runs"] == 2 and series["org/beta"]["noise"] is None
    assert series["org/beta-v2"]["points"][-1] is None


def test_the_first_run_on_a_branch_says_there_is_no_history_in_one_line(
    workspace: Path, fake_github: FakeGitHub
) -> None:
    result = run(workspace, fake_github)
    line = "No history: no earlier run of this workflow on `main` to compare with yet."
    assert line in comment(fake_github) and line in result.summary
    assert (result.outputs["history-runs"], result.outputs["flaky-tasks"]) == ("0", "{}")


def test_only_expired_artifacts_say_so_in_one_line(workspace: Path, fake_github: FakeGitHub) -> None:
    for k in range(3):
        fake_github.add_run(sha(k), created_at=ago(3 - k), artifacts={ARTIFACT: b"x"}, expired=True)
    result = run(workspace, fake_github)
    assert "No history: the artifacts of all 3 earlier runs on `main` have expired." in result.summary


def test_a_token_that_may_not_read_the_runs_says_so_in_one_line(workspace: Path, fake_github: FakeGitHub) -> None:
    fake_github.faults.append(
        Fault("GET", r"/repos/octo/evals/actions/.*", 403, times=10, message="Resource not accessible by integration")
    )
    result = run(workspace, fake_github)
    assert "No history: the token may not read this workflow's runs on `main`" in result.summary


def test_history_zero_reads_nothing_and_says_nothing(workspace: Path, fake_github: FakeGitHub) -> None:
    twelve_runs(fake_github)
    result = run(workspace, fake_github, history="0")
    assert "History" not in comment(fake_github) and "Trend" not in result.summary
    assert "history" not in report(workspace, result)
    assert result.outputs["history-runs"] == "0"


def test_the_history_never_reads_more_runs_than_asked(workspace: Path, fake_github: FakeGitHub) -> None:
    twelve_runs(fake_github)
    result = run(workspace, fake_github, history="2")
    assert result.outputs["history-runs"] == "2"
    assert "History:" not in comment(fake_github)  # the two asked for were both read
    zips = [r for r in fake_github.api_calls() if r.path.endswith("/zip")]
    assert len(zips) == 2  # the baseline's (the newest run, read once) and the one before it


def test_a_skipped_run_is_counted_by_the_code_set_where_it_was_skipped_whatever_its_words_say(
    workspace: Path, fake_github: FakeGitHub
) -> None:
    # The artifact's name is in every reason given: a name saying "expired" must not make a hostile run expired.
    name = "results-never-expired"
    for k in range(3):
        files = {"results/run.jsonl": records(k)}
        if k == 1:
            files["../../outside.jsonl"] = "{}\n"
        fake_github.add_run(sha(k), created_at=ago(3 - k), artifacts={name: make_zip(files)})
    fake_github.merge_bases[(BASE, HEAD)] = sha(2)
    result = run(workspace, fake_github, baseline_artifact=name, history="3")
    coverage = report(workspace, result)["history"]["coverage"]
    assert (coverage["read"], coverage["skipped"]) == (2, {"invalid": 1})
