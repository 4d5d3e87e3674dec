"""Issue 15 through the action as the runner runs it: the cluster-by and task-weights inputs."""

from __future__ import annotations

import json
from pathlib import Path

from test_action import run_action, workspace  # noqa: F401  (the fixture)


def test_cluster_by_category_input_clusters_the_comment(workspace: Path, fake_github) -> None:  # noqa: F811
    result = run_action(workspace, fake_github.url, cluster_by="category")
    assert result.code == 0, result.stdout + result.stderr
    (comment,) = fake_github.thread()
    assert "**Clustered by category**: 7 clusters of 41 tasks" in comment["body"]
    assert "clustered by category (7 clusters)" in comment["body"]
    report = json.loads((workspace / result.outputs["report"]).read_text())
    assert report["clustering"]["by"] == "category" and report["design_effect"] is None


def test_without_clustering_the_comment_says_what_clustering_would_change(workspace: Path, fake_github) -> None:  # noqa: F811
    result = run_action(workspace, fake_github.url)
    (comment,) = fake_github.thread()
    assert result.code == 0 and "13 significant pairs would not be" in comment["body"]


def test_a_task_in_two_clusters_fails_with_an_annotation_at_its_line(workspace: Path, fake_github) -> None:  # noqa: F811
    rows = [
        {"model_id": "a", "task_id": "t1", "metric_name": "acc", "score": 1, "cluster": "p1"},
        {"model_id": "b", "task_id": "t1", "metric_name": "acc", "score": 0, "cluster": "p2"},
    ]
    (workspace / "results" / "mteb.jsonl").unlink()
    (workspace / "results" / "r.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    result = run_action(workspace, fake_github.url, cluster_by="cluster")
    assert result.code == 1 and "Traceback" not in result.stdout + result.stderr
    (annotation,) = result.annotations
    assert (
        annotation.startswith("::error file=results/r.jsonl,line=2,")
        and "must be the same for every model" in annotation
    )


def test_an_unknown_task_weights_input_fails_naming_it(workspace: Path, fake_github) -> None:  # noqa: F811
    result = run_action(workspace, fake_github.url, task_weights="sometimes")
    assert result.code == 1
    assert any("input 'task-weights' must be one of ignore, apply" in a for a in result.annotations)


def test_a_renamed_category_is_still_compared_with_its_baseline_when_clustered(workspace: Path, fake_github) -> None:  # noqa: F811
    # The baseline: the same results with every category spelled otherwise (a PR that renamed them).
    base = workspace / "baseline"
    base.mkdir()
    lines = (workspace / "results" / "mteb.jsonl").read_text().splitlines()
    renamed = [{**row, "category": f"old-{row['category']}"} for row in map(json.loads, lines)]
    (base / "mteb.jsonl").write_text("\n".join(json.dumps(r) for r in renamed) + "\n")
    result = run_action(workspace, fake_github.url, cluster_by="category", baseline="baseline/*.jsonl")
    assert result.code == 0, result.stdout + result.stderr
    (comment,) = fake_github.thread()
    assert "rejected" not in comment["body"]
    assert "shared tasks are in another category in the baseline: this run's clusters are used." in comment["body"]
    report = json.loads((workspace / result.outputs["report"]).read_text())
    assert report["baseline"]["clustering"]["relabelled"] == 41
