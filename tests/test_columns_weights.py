"""Task weights and a comparison's design read from columns: exactly what the same records give (weights,
design, problems, comparison, leaderboard, the CLI's documents), whatever the records' order, and no record
built on the way."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from leaderboard import EvalRun, InvalidEvalRuns, analyse, load_runs
from leaderboard.cli import main
from leaderboard.formats import evalrun
from leaderboard.run_columns import RunColumns
from leaderboard.stats import cache
from leaderboard.stats.comparison import compare
from leaderboard.stats.comparison_sides import this_runs_design
from leaderboard.stats.design import task_design
from leaderboard.stats.matrix import score_matrix
from leaderboard.stats.weights import task_weights

pytest.importorskip("duckdb")


def lines(
    models: int, tasks: int, shift: float, weight_every: int, category_every: int, only: str = "", uneven: bool = False
) -> list[str]:
    """One record per (model, task); a task's weight and category depend on the task (and the two knobs), and
    ``uneven``, on model-1's records of some tasks, not (a baseline's are not checked: its last record's count)."""
    out = []
    for m in range(models):
        for t in range(tasks):
            record: dict[str, object] = {
                "model_id": f"model-{m}", "task_id": f"task-{t:04d}{only if t % 7 == 0 else ''}",
                "metric_name": "acc", "score": round(((m * 7 + t * 3) % 10) / 10 * (1 - shift) + shift * (t % 2), 3),
                "category": f"c{t % category_every}",
            }  # fmt: skip
            if t % weight_every:
                record["weight"] = float(t % weight_every + 1) / 2
            if uneven and m == 1 and t % 5 == 0:
                record["weight"], record["category"] = 3.25, "odd"
            out.append(json.dumps(record))
    return out


def reweighed(line: str, weight: float) -> str:
    return json.dumps({**json.loads(line), "weight": weight})


def write(path: Path, text: Sequence[str], shuffled: bool = False) -> Path:
    text = list(text)
    if shuffled:
        random.Random(7).shuffle(text)
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    return path


def columns(path: Path) -> RunColumns:
    runs = load_runs([str(path)])
    assert isinstance(runs, RunColumns)
    return runs


def precise(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[EvalRun]:
    """The same file through the precise reader alone: records, with the same places."""
    with monkeypatch.context() as patched:
        patched.setattr(evalrun, "read_jsonl", lambda handle, name, sink: None)
        runs = load_runs([str(path)])
    assert not isinstance(runs, RunColumns)
    return list(runs)


@pytest.fixture(params=[False, True], ids=["in order", "shuffled"])
def files(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, Path]:
    """A baseline (one model fewer, tasks of its own, other weights and categories on some tasks) and a PR."""
    shuffled = request.param
    base = write(tmp_path / "base.jsonl", lines(2, 80, 0.0, 3, 4, only="-old", uneven=True), shuffled)
    pr = write(tmp_path / "pr.jsonl", lines(3, 80, 0.2, 4, 5), shuffled)
    return base, pr


def test_the_weights_of_columns_are_those_of_the_same_records(
    files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    pr = files[1]
    asked = ["absent", *sorted(columns(pr).tasks, reverse=True)]  # another order, and a task with no record
    assert task_weights(columns(pr), asked).tolist() == task_weights(precise(pr, monkeypatch), asked).tolist()


def test_a_task_with_two_weights_is_the_same_problem_at_the_same_places_from_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = lines(3, 30, 0.0, 4, 3)
    text[40] = reweighed(text[40], 2.5)  # model-1's task-0010 weighs 2.5, not 1.5
    text[75] = reweighed(text[75], 7e-5)  # model-2's task-0015, not 2.0
    path = write(tmp_path / "runs.jsonl", text, shuffled=True)
    fast = columns(path)
    with pytest.raises(InvalidEvalRuns) as from_columns:
        task_weights(fast, fast.tasks)
    with pytest.raises(InvalidEvalRuns) as from_records:
        task_weights(precise(path, monkeypatch), fast.tasks)
    assert [str(p) for p in from_columns.value.problems] == [str(p) for p in from_records.value.problems]
    assert from_columns.value.problems == from_records.value.problems and len(from_columns.value.problems) == 2
    assert "records" not in vars(fast)


def test_the_design_of_columns_is_that_of_the_same_records(
    files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, slow = columns(files[1]), precise(files[1], monkeypatch)
    design = task_design(fast, score_matrix(fast), "category", "apply")
    assert repr(design) == repr(task_design(slow, score_matrix(slow), "category", "apply"))
    assert "records" not in vars(fast)


@pytest.mark.parametrize(("cluster_by", "weights"), [("category", "apply"), ("category", "ignore"), ("none", "apply")])
def test_the_comparison_design_of_columns_is_that_of_the_same_records(
    files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, cluster_by: str, weights: str
) -> None:
    base, pr = columns(files[0]), columns(files[1])
    tasks = sorted(set(base.tasks) | set(pr.tasks))
    shared = np.array([[t in base.tasks and t in pr.tasks for t in tasks]])
    fast = this_runs_design(base, pr, tasks, shared, cluster_by, weights)
    slow = this_runs_design(precise(files[0], monkeypatch), precise(files[1], monkeypatch), tasks, shared,
                            cluster_by, weights)  # fmt: skip
    assert repr(fast) == repr(slow)
    assert fast[2] > 0 or cluster_by == "none"  # some shared tasks were relabelled ...
    assert fast[3] > 0 or weights == "ignore"  # ... and reweighted: the counts are tested, not zeros
    assert "records" not in vars(base) and "records" not in vars(pr)


@pytest.mark.parametrize("cluster_by", ["none", "category"])
def test_a_weighted_comparison_of_columns_is_that_of_the_same_records(
    files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, cluster_by: str
) -> None:
    base, pr = columns(files[0]), columns(files[1])
    options = {"b": 400, "alpha": 0.05, "seed": 3, "weights": "apply", "cluster_by": cluster_by}
    fast = compare(base, pr, **options)
    assert repr(fast) == repr(compare(precise(files[0], monkeypatch), precise(files[1], monkeypatch), **options))
    assert fast.reweighted > 0 and "records" not in vars(base) and "records" not in vars(pr)


def test_a_weighted_comparison_of_columns_against_records_is_that_of_records(
    files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, pr = precise(files[0], monkeypatch), precise(files[1], monkeypatch)
    options = {"b": 400, "alpha": 0.05, "seed": 3, "weights": "apply", "cluster_by": "category"}
    expected = repr(compare(base, pr, **options))
    assert repr(compare(columns(files[0]), pr, **options)) == expected
    assert repr(compare(base, columns(files[1]), **options)) == expected


def test_a_task_in_two_categories_is_the_same_problem_in_a_clustered_comparison_of_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = lines(2, 30, 0.0, 4, 3)
    text[35] = text[35].replace('"category": "c2"', '"category": "c0"')  # model-1's task-0005
    path = write(tmp_path / "runs.jsonl", text)
    with pytest.raises(InvalidEvalRuns) as from_columns:
        compare(columns(path), columns(path), b=400, alpha=0.05, seed=3, cluster_by="category")
    with pytest.raises(InvalidEvalRuns) as from_records:
        compare(
            precise(path, monkeypatch), precise(path, monkeypatch), b=400, alpha=0.05, seed=3, cluster_by="category"
        )
    assert from_columns.value.problems == from_records.value.problems and from_columns.value.problems


def test_a_weighted_leaderboard_of_columns_is_that_of_the_same_records(
    files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = columns(files[1])
    cache.forget()
    board = analyse(fast, b=400, seed=3, weights="apply")
    cache.forget()
    assert repr(board) == repr(analyse(precise(files[1], monkeypatch), b=400, seed=3, weights="apply"))
    assert "records" not in vars(fast)


def documents(files: tuple[Path, Path], folder: Path, extra: Sequence[str]) -> tuple[int, str, str]:
    folder.mkdir()
    comment, report = folder / "comment.md", folder / "report.json"
    code = main([str(files[1]), "--baseline", str(files[0]), *extra, "--comment", str(comment), "--json", str(report)])
    return code, comment.read_text(encoding="utf-8"), report.read_text(encoding="utf-8")


@pytest.mark.parametrize("cluster_by", ["none", "category"])
def test_the_cli_documents_of_a_weighted_run_read_fast_are_those_read_precisely(
    files: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cluster_by: str
) -> None:
    extra = ["--task-weights", "apply", "--cluster-by", cluster_by, "--b", "400"]
    cache.forget()
    fast = documents(files, tmp_path / "fast", extra)
    cache.forget()
    with monkeypatch.context() as patched:
        patched.setattr(evalrun, "read_jsonl", lambda handle, name, sink: None)
        slow = documents(files, tmp_path / "slow", extra)
    assert fast == slow
    assert '"task_weights": "apply"' in fast[2]
