"""Every Eval Ever files: the real ones in ../shared/formats/every_eval_ever, and small ones valid by its schemas."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import shared_format

from leaderboard import EvalRun, InvalidEvalRuns, load_runs
from leaderboard.cli import main
from leaderboard.formats import LoadReport, ReadOptions, Session, detect

DEMO = "every_eval_ever/demo/f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40"
HELLASWAG = "every_eval_ever/helm_converted/hellaswag_pythia-1b-v0_samples.jsonl"
NARRATIVEQA = "every_eval_ever/helm_converted/narrativeqa_gpt2_samples.jsonl"
EVALUATION = "demo/run-1"


def schema(name: str) -> dict[str, Any]:
    return json.loads(shared_format(f"every_eval_ever/schemas/{name}").read_text())  # type: ignore[no-any-return]


def load(*paths: str | Path, **options: str) -> tuple[list[EvalRun], LoadReport]:
    session = Session(ReadOptions(**options))  # type: ignore[arg-type]
    names = [str(p if isinstance(p, Path) else shared_format(p)) for p in paths]
    return load_runs(names, session=session), session.report()


def problems(*paths: str | Path, **options: str) -> list[str]:
    with pytest.raises(InvalidEvalRuns) as caught:
        load(*paths, **options)
    return [str(p) for p in caught.value.problems]


def sample(sample_id: str, score: object, name: str = "bench", **extra: object) -> dict[str, Any]:
    """A samples line as schema 0.3.0 requires it."""
    return {
        "schema_version": "0.3.0", "evaluation_id": EVALUATION, "model_id": "org/model", "evaluation_name": name,
        "sample_id": sample_id, "interaction_type": "single_turn", "input": {"raw": "q", "reference": ["a"]},
        "output": {"raw": ["a"]}, "answer_attribution": [],
        "evaluation": {"score": score, "is_correct": score == 1}, **extra,
    }  # fmt: skip


def result(name: str = "bench", result_id: str | None = None, **config: object) -> dict[str, Any]:
    """One of an aggregate's evaluation_results, with its metric_config."""
    entry: dict[str, Any] = {
        "evaluation_name": name,
        "source_data": {"dataset_name": name, "source_type": "url", "url": ["https://example.invalid"]},
        "metric_config": {"lower_is_better": False, **config},
        "score_details": {"score": 0.5},
    }
    if result_id is not None:
        entry["evaluation_result_id"] = result_id
    return entry


def aggregate(*results: dict[str, Any]) -> dict[str, Any]:
    """The demo aggregate made ours: this evaluation, these results, no samples file named."""
    document = json.loads(shared_format(f"{DEMO}.json").read_text())
    del document["detailed_evaluation_results"]
    document["model_info"]["id"] = "org/model"
    return {**document, "evaluation_id": EVALUATION, "evaluation_results": list(results)}


def write_run(
    folder: Path, lines: list[dict[str, Any]], document: dict[str, Any] | None = None, stem: str = "run"
) -> Path:
    """``<stem>_samples.jsonl`` (and ``<stem>.json`` beside it), each first checked against the schemas."""
    for line in lines:
        jsonschema.validate(line, schema("instance_level_eval.schema.json"))
    samples = folder / f"{stem}_samples.jsonl"
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines))
    if document is not None:
        jsonschema.validate(document, schema("eval.schema.json"))
        (folder / f"{stem}.json").write_text(json.dumps(document, indent=2))
    return samples


# --- the real files ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        (f"{DEMO}.json", "every-eval-ever aggregate"),
        (f"{DEMO}_samples.jsonl", "every-eval-ever"),
        (HELLASWAG, "every-eval-ever"),
        (NARRATIVEQA, "every-eval-ever"),
    ],
)
def test_each_real_file_is_told_by_its_content(name: str, kind: str) -> None:
    assert detect(shared_format(name)) == kind


def test_the_real_files_are_valid_by_the_normative_schemas() -> None:
    jsonschema.validate(json.loads(shared_format(f"{DEMO}.json").read_text()), schema("eval.schema.json"))
    for name in (f"{DEMO}_samples.jsonl", HELLASWAG, NARRATIVEQA):
        for line in shared_format(name).read_text().splitlines():
            jsonschema.validate(json.loads(line), schema("instance_level_eval.schema.json"))


def test_demo_pair_model_task_category_and_the_aggregates_metric() -> None:
    runs, report = load(f"{DEMO}.json", f"{DEMO}_samples.jsonl")
    assert runs == [EvalRun("demo-org/demo-model", "demo-source.demo_bench/demo_0001", "accuracy", 1.0,
                            "demo-source.demo_bench")]  # fmt: skip
    assert [(f.format, f.records, f.companion) for f in report.files] == [
        ("every-eval-ever aggregate", 0, True), ("every-eval-ever", 1, False),
    ]  # fmt: skip


@pytest.mark.parametrize("name", [HELLASWAG, NARRATIVEQA])
def test_a_schema_0_2_samples_file_alone_gives_each_samples_score(name: str) -> None:
    lines = [json.loads(line) for line in shared_format(name).read_text().splitlines()]
    runs, _ = load(name)
    assert len(runs) == len(lines)
    assert statistics.fmean(r.score for r in runs if r.score is not None) == pytest.approx(
        statistics.fmean(line["evaluation"]["score"] for line in lines)
    )
    first = lines[0]
    assert runs[0].task_id == f"{first['evaluation_name']}/{first['sample_id']}"
    assert {(r.model_id, r.category, r.metric_name) for r in runs} == {
        (first["model_id"], first["evaluation_name"], "score")
    }


# --- scores, ranges and directions ---------------------------------------------------------------------------


def test_a_score_outside_0_1_without_a_range_is_refused_at_its_line(tmp_path: Path) -> None:
    path = write_run(tmp_path, [sample("a", 1.0), sample("b", 7.0)])
    assert problems(path) == [
        f"{path}:2: evaluation.score: 7.0 is outside [0, 1], and no metric_config gives a finite "
        "min_score/max_score to map it"
    ]


def test_a_declared_range_maps_scores_onto_0_1(tmp_path: Path) -> None:
    config = {"score_type": "continuous", "min_score": 0, "max_score": 100, "metric_id": "points"}
    path = write_run(tmp_path, [sample("a", 75), sample("b", 0)], aggregate(result(**config)))
    runs, _ = load(path)
    assert [(r.task_id, r.metric_name, r.score) for r in runs] == [
        ("bench/a", "points", 0.75), ("bench/b", "points", 0.0),
    ]  # fmt: skip


def test_a_lower_is_better_metric_with_a_range_is_turned_round(tmp_path: Path) -> None:
    config = {"lower_is_better": True, "score_type": "continuous", "min_score": 0, "max_score": 10}
    path = write_run(tmp_path, [sample("a", 2.5)], aggregate(result(**config)))
    assert [r.score for r in load(path)[0]] == [0.75]


def test_a_lower_is_better_metric_without_a_finite_range_is_refused(tmp_path: Path) -> None:
    config = {"lower_is_better": True, "score_type": "continuous", "min_score": 0, "max_score": "Infinity"}
    path = write_run(tmp_path, [sample("a", 0.5)], aggregate(result(**config)))
    [message] = problems(path)
    assert message.startswith(f"{path}:1: evaluation.score: 0.5 is of a lower-is-better metric with no finite")


def test_a_score_outside_its_declared_range_is_refused_at_its_line(tmp_path: Path) -> None:
    config = {"score_type": "continuous", "min_score": 0, "max_score": 10}
    path = write_run(tmp_path, [sample("a", 5), sample("b", 11)], aggregate(result(**config)))
    assert problems(path) == [f"{path}:2: evaluation.score: 11 is outside its metric's range [0, 10] (metric_config)"]


def test_an_unknown_level_is_an_unscored_sample(tmp_path: Path) -> None:
    config = {"score_type": "levels", "level_names": ["no", "yes"], "has_unknown_level": True}
    path = write_run(tmp_path, [sample("a", 1), sample("b", -1)], aggregate(result(**config)))
    runs, report = load(path)
    assert [r.task_id for r in runs] == ["bench/a"] and report.unscored == 1


def test_a_nan_score_is_an_unscored_sample(tmp_path: Path) -> None:
    path = tmp_path / "x_samples.jsonl"
    path.write_text(json.dumps(sample("a", 1.0)) + "\n" + json.dumps(sample("b", 0.0)).replace("0.0", "NaN") + "\n")
    runs, report = load(path)
    assert len(runs) == 1 and report.unscored == 1


# --- several metrics of one benchmark --------------------------------------------------------------------------


def two_metrics(tmp_path: Path) -> Path:
    lines = [sample("a", 1.0, evaluation_result_id="bench.acc"), sample("a", 0.25, evaluation_result_id="bench.f1")]
    document = aggregate(result(result_id="bench.acc", metric_id="acc"), result(result_id="bench.f1", metric_id="f1"))
    return write_run(tmp_path, lines, document)


def test_several_metrics_of_a_benchmark_read_the_first_by_default(tmp_path: Path) -> None:
    assert [(r.metric_name, r.score) for r in load(two_metrics(tmp_path))[0]] == [("acc", 1.0)]


def test_the_metric_input_chooses_another_of_the_aggregates_metrics(tmp_path: Path) -> None:
    assert [(r.metric_name, r.score) for r in load(two_metrics(tmp_path), metric="f1")[0]] == [("f1", 0.25)]


def test_a_metric_the_benchmark_lacks_is_an_error_listing_those_it_has(tmp_path: Path) -> None:
    path = two_metrics(tmp_path)
    assert problems(path, metric="bleu") == [
        f"{path}:1: metric: evaluation 'bench' has no metric 'bleu' (it has: acc, f1); set the input 'metric'"
    ]


# --- the aggregate and its samples ----------------------------------------------------------------------------


def test_an_aggregate_without_its_samples_is_an_error_that_says_so(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps(aggregate(result())))
    [message] = problems(tmp_path / "run.json")
    assert "holds only aggregate scores" in message and "run_samples.jsonl" in message


def test_a_samples_line_of_another_evaluation_than_its_aggregate_is_refused(tmp_path: Path) -> None:
    path = write_run(tmp_path, [sample("a", 1.0, evaluation_id="other/run")], aggregate(result()))
    [message] = problems(path)
    assert message.startswith(f"{path}:1: evaluation_id: 'other/run' is not that of run.json beside it")


def test_an_unknown_schema_version_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "x_samples.jsonl"
    path.write_text(json.dumps({**sample("a", 1.0), "schema_version": "1.0.0"}) + "\n")
    assert problems(path) == [f"{path}:1: schema_version '1.0.0' is not one read here (0.2.x, 0.3.x)"]


def test_every_problem_is_at_its_line_and_the_cli_prints_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "x_samples.jsonl"
    lines = [sample("a", 1.0), sample("b", "high"), sample("c", 2.0)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + "{broken\n")
    assert main([str(path)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    for where in (":2: evaluation.score: must be a number", ":3: evaluation.score: 2.0 is outside", ":4: invalid JSON"):
        assert f"{path}{where}" in err
