"""List outputs stay within what GitHub keeps (1 MB a job, ~128 KiB through env:) and say what they left out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_action import run_action

from leaderboard.action.output_caps import CAPPED, OUTPUT_CAP, capped, with_caps


def test_a_short_list_is_written_as_it_is_and_nothing_is_said_omitted() -> None:
    assert with_caps({"regressed-models": '["a", "b"]', "models": "2"}) == {
        "regressed-models": '["a", "b"]',
        "regressed-models-omitted": "0",
        "models": "2",
    }


def test_a_long_list_keeps_its_first_items_within_the_cap_as_valid_json_and_counts_the_rest() -> None:
    items = [{"model": "m", "task": f"task-{i:05d}/é", "score": 0.0} for i in range(20_000)]
    value, left_out = capped(json.dumps(items, ensure_ascii=False))
    kept = json.loads(value)
    assert len(value.encode()) <= OUTPUT_CAP and kept == items[: len(kept)]
    assert left_out == len(items) - len(kept) > 0
    assert len(json.dumps(items[: len(kept) + 1], ensure_ascii=False).encode()) > OUTPUT_CAP  # no room for one more


def test_a_long_object_is_cut_the_same_way() -> None:
    data = {f"org/model-{i:05d}": i for i in range(10_000)}
    value, left_out = capped(json.dumps(data))
    kept = json.loads(value)
    assert (
        len(value.encode()) <= OUTPUT_CAP and list(kept) == list(data)[: len(kept)] and left_out == 10_000 - len(kept)
    )


def test_every_list_output_together_stays_well_below_a_jobs_one_megabyte() -> None:
    assert OUTPUT_CAP * len(CAPPED) < 1_000_000 // 2 and OUTPUT_CAP < 128 * 1024


def test_the_action_caps_required_failed_and_says_how_many_it_left_out(tmp_path: Path, fake_github) -> None:
    ws = tmp_path / "workspace"
    (ws / "results").mkdir(parents=True)
    records = [
        {"model_id": model, "task_id": f"safety/{'x' * 40}-{i:05d}", "metric_name": "acc", "score": 0.0}
        for model in ("a", "b")
        for i in range(2_000)
    ]
    (ws / "results" / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    result = run_action(ws, fake_github.url, required_tasks="safety/*", required_score="0.5")
    assert result.code == 1
    failed = json.loads(result.outputs["required-failed"])
    assert len(result.outputs["required-failed"].encode()) <= OUTPUT_CAP
    assert result.outputs["required-failures"] == "4000"
    assert int(result.outputs["required-failed-omitted"]) == 4000 - len(failed) > 0
    report = json.loads((ws / ".leaderboard" / "leaderboard" / "report.json").read_text())
    assert report["required"]["failures"] == len(report["required"]["failed"]) == 4000  # the report has every one


@pytest.mark.parametrize("name", CAPPED)
def test_every_list_output_is_declared_with_its_omitted_count(name: str) -> None:
    import yaml
    from conftest import ROOT

    outputs = yaml.safe_load((ROOT / "action.yml").read_text())["outputs"]
    assert name in outputs and f"{name}-omitted" in outputs
