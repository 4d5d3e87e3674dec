"""Harness outputs read as they are: the real files in ../shared/formats are the ground truth."""

from __future__ import annotations

import json
import shutil
import statistics
import zipfile
from pathlib import Path

import pytest
from conftest import FORMATS, shared_format

from leaderboard import EvalRun, InvalidEvalRuns, load_runs
from leaderboard.formats import LoadReport, ReadOptions, Session, ZipLimits, comment_note, detect, load_summary
from leaderboard.formats.inspect_log import to_float
from leaderboard.trials import collapse_trials

LM = "lm-evaluation-harness"
TOM = "2026-07-08T16-04-34.219874"
BIAS = "2024-06-17T15-44-37.867068"
POLYMER = "2025-06-30T19-40-09.461247"
GPT4O = "helm/bbq_openai_gpt-4o-2024-05-13"
LLAMA = "helm/bbq_meta_llama-3-8b-chat"
INSPECT_10 = "inspect_ai/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
INSPECT_UNSCORED = "inspect_ai/2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"


def load(*names: str | Path, **options: str) -> tuple[list[EvalRun], LoadReport]:
    session = Session(ReadOptions(**options))  # type: ignore[arg-type]
    paths = [str(n if isinstance(n, Path) else shared_format(n)) for n in names]
    runs = load_runs(paths, session=session)
    return runs, session.report()


def problems(*names: str | Path, **options: str) -> list[str]:
    with pytest.raises(InvalidEvalRuns) as caught:
        load(*names, **options)
    return [str(p) for p in caught.value.problems]


def mean(runs: list[EvalRun], prefix: str = "") -> float:
    return statistics.fmean(r.score for r in runs if r.task_id.startswith(prefix))


def copy_run(tmp_path: Path, *names: str) -> list[Path]:
    """Copies of shared files in a folder of their own, to be edited by a test."""
    out = []
    for name in names:
        target = tmp_path / Path(name).name
        shutil.copy(shared_format(name), target)
        out.append(target)
    return out


def rewrite_lines(path: Path, edit: object) -> None:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    edited = [x for line in lines for x in edit(line)]  # type: ignore[operator]
    path.write_text("".join(json.dumps(x) + "\n" for x in edited))


# --- detection -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        (f"{LM}/samples_negotiationtom_belief_{TOM}.jsonl", "lm-eval"),
        (f"{LM}/samples_bias_classification_{BIAS}.json", "lm-eval"),
        (f"{LM}/results_{TOM}.json", "lm-eval results"),
        (f"{LM}/results_{POLYMER}.json", "lm-eval results"),
        (INSPECT_10, "inspect"),
        ("inspect_ai/retry-2-then-success.eval", "inspect"),
        ("inspect_ai/2025-05-12T20-28-13-04-00_popularity.json", "inspect"),
        (f"{GPT4O}/per_instance_stats.json", "helm"),
        (f"{GPT4O}/run_spec.json", "helm run file"),
        (f"{GPT4O}/stats.json", "helm run file"),
        ("promptfoo/sample-export.json", "promptfoo"),
        ("openai_evals/oriprompt.log", "openai-evals"),
    ],
)
def test_each_real_file_is_told_by_its_content(name: str, kind: str) -> None:
    assert detect(shared_format(name)) == kind


def test_detection_does_not_rely_on_names(tmp_path: Path) -> None:
    for name, renamed in [
        (f"{LM}/samples_bias_classification_{BIAS}.json", "a.txt"),
        (INSPECT_10, "b.bin"),
        ("promptfoo/sample-export.json", "c.json"),
        ("openai_evals/oriprompt.log", "d.jsonl"),
        ("inspect_ai/2025-05-12T20-28-13-04-00_popularity.json", "e.json"),
    ]:
        shutil.copy(shared_format(name), tmp_path / renamed)
    assert [detect(tmp_path / n) for n in ("a.txt", "b.bin", "c.json", "d.jsonl", "e.json")] == [
        "lm-eval", "inspect", "promptfoo", "openai-evals", "inspect",
    ]  # fmt: skip


def test_an_evalrun_file_is_not_taken_for_a_harness_output(tmp_path: Path) -> None:
    record = {"model_id": "m", "task_id": "t", "metric_name": "acc", "score": 0.5, "doc_id": 3}
    (tmp_path / "r.jsonl").write_text(json.dumps(record) + "\n" + json.dumps({**record, "task_id": "u"}) + "\n")
    (tmp_path / "r.json").write_text(json.dumps({"runs": [record]}))
    assert detect(tmp_path / "r.jsonl") == detect(tmp_path / "r.json") == "evalrun"


# --- lm-evaluation-harness -------------------------------------------------------------------------------


def test_lm_eval_per_doc_scores_reproduce_the_results_files_aggregates() -> None:
    runs, _ = load(*(f"{LM}/samples_negotiationtom_{t}_{TOM}.jsonl" for t in ("belief", "desire", "intention")))
    results = json.loads(shared_format(f"{LM}/results_{TOM}.json").read_text())["results"]
    assert mean(runs, "negotiationtom_belief/") == pytest.approx(results["negotiationtom_belief"]["acc,none"])
    assert mean(runs, "negotiationtom_desire/") == pytest.approx(results["negotiationtom_desire"]["acc,none"])
    intention = results["negotiationtom_intention"]["exact_match,none"]
    assert mean(runs, "negotiationtom_intention/") == pytest.approx(intention)
    assert len(runs) == 60


def test_lm_eval_model_is_model_name_task_is_task_and_doc_and_category_is_the_group() -> None:
    runs, _ = load(f"{LM}/samples_negotiationtom_intention_{TOM}.jsonl")
    assert {r.model_id for r in runs} == {"Qwen/Qwen3-8B"}
    assert {r.category for r in runs} == {"negotiationtom"}
    assert {r.metric_name for r in runs} == {"exact_match"}  # the task's per-instance metric, not micro_f1
    assert sorted(int(r.task_id.split("/")[1]) for r in runs) == list(range(20))


def test_lm_eval_older_layout_json_named_lines_file_is_read() -> None:
    runs, report = load(f"{LM}/samples_bias_classification_{BIAS}.json")
    results = json.loads(shared_format(f"{LM}/results_{BIAS}.json").read_text())["results"]["bias_classification"]
    assert len(runs) == 609 and {r.model_id for r in runs} == {"meta-llama/Meta-Llama-3-8B"}
    assert mean(runs) == pytest.approx(results["acc,none"])
    assert {r.category for r in runs} == {"bias_classification"}
    assert report.files[0].format == "lm-eval" and report.files[0].metrics == ("acc",)


def test_lm_eval_metric_input_chooses_another_per_instance_metric() -> None:
    runs, _ = load(f"{LM}/samples_bias_classification_{BIAS}.json", metric="acc_norm")
    results = json.loads(shared_format(f"{LM}/results_{BIAS}.json").read_text())["results"]["bias_classification"]
    assert {r.metric_name for r in runs} == {"acc_norm"}
    assert mean(runs) == pytest.approx(results["acc_norm,none"])


def test_lm_eval_a_metric_the_task_lacks_is_an_error_listing_those_it_has() -> None:
    (found,) = problems(f"{LM}/samples_bias_classification_{BIAS}.json", metric="accuracy")
    assert "task 'bias_classification' has no metric 'accuracy' (it has: acc, acc_norm, f1)" in found


def test_lm_eval_passthrough_metric_is_refused_naming_it() -> None:
    (found,) = problems(f"{LM}/samples_negotiationtom_intention_{TOM}.jsonl", metric="micro_f1")
    assert "metric 'micro_f1'" in found and "corpus-level" in found and f"intention_{TOM}.jsonl:1:" in found


def test_lm_eval_lower_is_better_mae_with_bare_infinity_is_refused_naming_it() -> None:
    (found,) = problems(f"{LM}/samples_polymer_tg_prediction_{POLYMER}.jsonl")
    assert "metric 'mae'" in found and "lower-is-better" in found


def test_lm_eval_a_metric_off_the_0_1_scale_is_refused(tmp_path: Path) -> None:
    samples, _ = copy_run(tmp_path, f"{LM}/samples_bias_classification_{BIAS}.json", f"{LM}/results_{BIAS}.json")
    rewrite_lines(samples, lambda line: [{**line, "acc": 45.5 if line["doc_id"] == 3 else line["acc"]}])
    (found,) = problems(samples)
    assert found.startswith(f"{samples}:4: metric:") and "45.5" in found and "0-1" in found


def test_lm_eval_a_bare_nan_score_is_an_unscored_doc_counted_and_left_out(tmp_path: Path) -> None:
    samples, _ = copy_run(tmp_path, f"{LM}/samples_bias_classification_{BIAS}.json", f"{LM}/results_{BIAS}.json")
    rewrite_lines(samples, lambda line: [{**line, "acc": float("nan") if line["doc_id"] < 5 else line["acc"]}])
    assert "NaN" in samples.read_text()  # written as Python's json writes it: a bare token
    runs, report = load(samples)
    assert len(runs) == 604 and report.unscored == 5


def test_lm_eval_a_bare_infinity_score_is_refused_where_it_is(tmp_path: Path) -> None:
    samples, _ = copy_run(tmp_path, f"{LM}/samples_bias_classification_{BIAS}.json", f"{LM}/results_{BIAS}.json")
    rewrite_lines(samples, lambda line: [{**line, "acc": float("inf") if line["doc_id"] == 7 else line["acc"]}])
    assert "Infinity" in samples.read_text()
    (found,) = problems(samples)
    assert found.startswith(f"{samples}:8: metric:") and "inf" in found


def test_lm_eval_model_args_names_the_model_when_model_name_is_absent(tmp_path: Path) -> None:
    samples, results = copy_run(tmp_path, f"{LM}/samples_negotiationtom_belief_{TOM}.jsonl", f"{LM}/results_{TOM}.json")
    document = json.loads(results.read_text())
    del document["model_name"]
    results.write_text(json.dumps(document))  # model_args a dict here
    assert {r.model_id for r in load(samples)[0]} == {"Qwen/Qwen3-8B"}
    document["config"]["model_args"] = "pretrained=org/other,dtype=bfloat16"
    results.write_text(json.dumps(document))
    assert {r.model_id for r in load(samples)[0]} == {"org/other"}


def test_lm_eval_one_filter_is_read_the_tasks_first_by_default(tmp_path: Path) -> None:
    samples, _ = copy_run(tmp_path, f"{LM}/samples_negotiationtom_belief_{TOM}.jsonl", f"{LM}/results_{TOM}.json")
    # As a task with two filters writes it: one line per (doc_id, filter).
    rewrite_lines(
        samples,
        lambda line: [{**line, "filter": "strict-match"}, {**line, "filter": "flexible-extract", "acc": 1.0}],
    )
    first, _ = load(samples)
    assert len(first) == 20 and mean(first) == pytest.approx(0.45)
    chosen, _ = load(samples, filter="flexible-extract")
    assert len(chosen) == 20 and mean(chosen) == 1.0
    assert {r.source.line % 2 for r in chosen if r.source} == {0}  # the flexible-extract lines


def test_lm_eval_a_filter_no_line_has_is_an_error_naming_those_there() -> None:
    (found,) = problems(f"{LM}/samples_negotiationtom_belief_{TOM}.jsonl", filter="strict-match")
    assert "'strict-match'" in found and "filters here: none" in found


def test_lm_eval_samples_without_their_results_file_is_an_error(tmp_path: Path) -> None:
    (samples,) = copy_run(tmp_path, f"{LM}/samples_negotiationtom_belief_{TOM}.jsonl")
    (found,) = problems(samples)
    assert f"results_{TOM}.json" in found and "names the model" in found


def test_lm_eval_results_without_samples_is_an_error_that_says_log_samples(tmp_path: Path) -> None:
    (results,) = copy_run(tmp_path, f"{LM}/results_{TOM}.json")
    (found,) = problems(results)
    assert "--log_samples" in found


def test_lm_eval_results_beside_samples_is_read_as_a_companion() -> None:
    runs, report = load(f"{LM}/results_{TOM}.json", f"{LM}/samples_negotiationtom_belief_{TOM}.jsonl")
    assert len(runs) == 20
    assert [(f.format, f.records, f.companion) for f in report.files] == [
        ("lm-eval results", 0, True),
        ("lm-eval", 20, False),
    ]


# --- Inspect ---------------------------------------------------------------------------------------------


def test_inspect_eval_scores_reproduce_the_logs_accuracy() -> None:
    runs, _ = load(INSPECT_10)
    assert len(runs) == 10 and mean(runs) == pytest.approx(0.8)  # 8 C, 2 I
    assert {(r.model_id, r.category, r.metric_name) for r in runs} == {("openai/gpt-4o-mini", "popularity", "match")}
    assert sorted(r.task_id for r in runs) == sorted(f"popularity/{i}" for i in range(1, 11))


def test_inspect_zip_members_are_named_archive_bang_member() -> None:
    runs, _ = load(INSPECT_10)
    first = next(r for r in runs if r.task_id == "popularity/1")
    assert first.source is not None
    assert first.source.file.endswith(".eval!samples/1_epoch_1.json") and first.source.line == 1


def test_inspect_epochs_are_trials_of_one_task() -> None:
    runs, report = load("inspect_ai/log_streaming.eval")
    assert sorted((r.task_id, r.trial) for r in runs) == [
        ("popularity/1", 1), ("popularity/1", 2), ("popularity/2", 1), ("popularity/2", 2),
    ]  # fmt: skip
    assert all(r.source and r.source.file.endswith(f"_epoch_{r.trial}.json") for r in runs)
    assert (report.averaged, report.trials) == (2, 4)


def test_inspect_epochs_rank_as_their_mean_as_inspect_reduces_them() -> None:
    runs, _ = load("inspect_ai/log_streaming.eval")
    with zipfile.ZipFile(shared_format("inspect_ai/log_streaming.eval")) as archive:
        reductions = json.loads(archive.read("reductions.json"))[0]["samples"]
    means = {r.task_id: r.score for r in collapse_trials(runs)}
    assert means == {f"popularity/{s['sample_id']}": s["value"] for s in reductions}


def test_inspect_zstandard_members_are_read() -> None:
    # Every member of this log is Zstandard-compressed (zip method 93); its one sample is unscored.
    runs, report = load("inspect_ai/retry-2-then-success.eval", INSPECT_10)
    (retried,) = [f for f in report.files if f.file.endswith("retry-2-then-success.eval")]
    assert (retried.format, retried.records, retried.unscored) == ("inspect", 0, 1)
    assert len(runs) == 10


def test_inspect_unscored_samples_are_counted_and_left_out() -> None:
    runs, report = load(INSPECT_UNSCORED, "inspect_ai/log_streaming.eval")
    assert len(runs) == 4 and report.unscored == 10
    note = comment_note(report)
    assert note is not None and "10 unscored samples left out" in note


def test_a_load_where_nothing_is_scored_is_an_error_that_says_so() -> None:
    (found,) = problems(INSPECT_UNSCORED)
    assert "no scored record" in found and "10 unscored samples" in found


def test_inspect_json_log_is_read_with_each_samples_line() -> None:
    path = shared_format("inspect_ai/2025-05-12T20-28-13-04-00_popularity.json")
    runs, _ = load(path)
    assert [r.score for r in sorted(runs, key=lambda r: r.task_id)] == [1.0, 1.0, 0.0]
    lines = path.read_text().splitlines()
    for run in runs:
        assert run.source is not None and lines[run.source.line - 1].strip() == "{"
        assert f'"id": {run.task_id.split("/")[1]},' in lines[run.source.line]


@pytest.mark.parametrize(
    ("value", "score"),
    [("C", 1.0), ("P", 0.5), ("I", 0.0), ("N", 0.0), (True, 1.0), (False, 0.0), ("yes", 1.0), ("No", 0.0),
     ("0.25", 0.25), (0.75, 0.75), (1, 1.0), (float("nan"), None), (None, None)],
)  # fmt: skip
def test_inspect_values_map_to_numbers_as_inspect_maps_them(value: object, score: float | None) -> None:
    assert to_float(value) == score


def test_inspect_a_scorer_with_several_values_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    document = json.loads(shared_format("inspect_ai/2025-05-12T20-28-13-04-00_popularity.json").read_text())
    document["samples"][1]["scores"]["match"]["value"] = {"a": 1, "b": 0}
    path.write_text(json.dumps(document, indent=2))
    (found,) = problems(path)
    assert "scorer 'match'" in found and "several values" in found


def test_inspect_a_bare_nan_score_is_an_unscored_sample(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    document = json.loads(shared_format("inspect_ai/2025-05-12T20-28-13-04-00_popularity.json").read_text())
    document["samples"][0]["scores"]["match"]["value"] = float("nan")
    path.write_text(json.dumps(document, indent=2))
    assert '"value": NaN' in path.read_text()
    runs, report = load(path)
    assert len(runs) == 2 and report.unscored == 1


def test_inspect_metric_input_names_a_scorer_the_samples_lack() -> None:
    (found,) = problems(INSPECT_10, metric="model_graded_qa")
    assert "'model_graded_qa'" in found and "scorers here: match" in found


def test_an_archive_bomb_is_an_error_not_an_outage(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.eval"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps({"eval": {"model": "m", "task": "t"}}))
        archive.writestr("samples/1_epoch_1.json", b" " * (8 * 2**20))  # 8 MiB of spaces, 8 KiB compressed
    session = Session(zip_limits=ZipLimits(member_bytes=2**20))
    with pytest.raises(InvalidEvalRuns) as caught:
        load_runs([str(bomb)], session=session)
    (found,) = caught.value.problems
    assert "archive bomb" in found.message and found.file == str(bomb)


def test_an_archive_with_too_many_members_is_an_error(tmp_path: Path) -> None:
    many = tmp_path / "many.eval"
    with zipfile.ZipFile(many, "w") as archive:
        for i in range(20):
            archive.writestr(f"samples/{i}_epoch_1.json", "{}")
    with pytest.raises(InvalidEvalRuns, match="20 members, more than the limit of 10"):
        load_runs([str(many)], session=Session(zip_limits=ZipLimits(members=10)))


def test_a_damaged_archive_is_an_error_naming_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.eval"
    broken.write_bytes(shared_format(INSPECT_10).read_bytes()[:5000])
    (found,) = problems(broken)
    assert found.startswith(f"{broken}:") and "zip" in found


# --- HELM ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("run", [GPT4O, LLAMA])
def test_helm_per_instance_scores_reproduce_stats_json(run: str) -> None:
    runs, _ = load(f"{run}/per_instance_stats.json")
    stats = json.loads(shared_format(f"{run}/stats.json").read_text())
    (published,) = [s["mean"] for s in stats if s["name"] == {"name": "exact_match", "split": "test"}]
    assert len(runs) == 100 and mean(runs) == pytest.approx(published)
    assert {r.category for r in runs} == {"bbq"} and {r.metric_name for r in runs} == {"exact_match"}


def test_helm_model_is_the_adapter_specs_model_and_instances_pair_across_models() -> None:
    runs, _ = load(f"{GPT4O}/per_instance_stats.json", f"{LLAMA}/per_instance_stats.json")
    by_model: dict[str, set[str]] = {}
    for r in runs:
        by_model.setdefault(r.model_id, set()).add(r.task_id)
    assert set(by_model) == {"openai/gpt-4o-2024-05-13", "meta/llama-3-8b-chat"}
    assert by_model["openai/gpt-4o-2024-05-13"] == by_model["meta/llama-3-8b-chat"]
    assert "bbq:subject=all,method=multiple_choice_joint/id58485" in by_model["meta/llama-3-8b-chat"]


def test_helm_a_whole_run_directory_reads_its_other_files_as_companions() -> None:
    runs, report = load(*(f"{GPT4O}/{n}" for n in ("per_instance_stats.json", "run_spec.json", "stats.json")))
    assert len(runs) == 100
    assert sorted((f.format, f.companion) for f in report.files) == [
        ("helm", False), ("helm run file", True), ("helm run file", True),
    ]  # fmt: skip


def helm_copy(tmp_path: Path, edit: object) -> Path:
    stats, _ = copy_run(tmp_path, f"{GPT4O}/per_instance_stats.json", f"{GPT4O}/run_spec.json")
    stats.write_text(json.dumps(edit(json.loads(stats.read_text())), indent=2))  # type: ignore[operator]
    return stats


def test_helm_an_instance_split_across_records_is_merged(tmp_path: Path) -> None:
    def split(records: list[dict]) -> list[dict]:  # type: ignore[type-arg]
        return [{**r, "stats": r["stats"][i::2]} for r in records for i in (0, 1)]

    runs, _ = load(helm_copy(tmp_path, split))
    assert len(runs) == 100 and mean(runs) == pytest.approx(0.95)


def test_helm_train_trials_are_trials_of_one_task(tmp_path: Path) -> None:
    def second_trial(records: list[dict]) -> list[dict]:  # type: ignore[type-arg]
        zero = [{"name": {"name": "exact_match", "split": "test"}, "count": 1, "mean": 0.0}]
        return records + [{**r, "train_trial_index": 1, "stats": zero} for r in records]

    runs, report = load(helm_copy(tmp_path, second_trial))
    assert len(runs) == 200 and {r.trial for r in runs} == {0, 1}
    assert len(collapse_trials(runs)) == 100 and mean(list(collapse_trials(runs))) == pytest.approx(0.95 / 2)
    assert (report.averaged, report.trials) == (100, 200)


def test_helm_perturbations_are_tasks_of_their_own(tmp_path: Path) -> None:
    def perturbed(records: list[dict]) -> list[dict]:  # type: ignore[type-arg]
        return records + [{**r, "perturbation": {"name": "typos", "prob": 0.1}} for r in records]

    runs, _ = load(helm_copy(tmp_path, perturbed))
    assert len(runs) == 200 and sum(r.task_id.endswith("/typos") for r in runs) == 100


def test_helm_a_stat_with_count_0_is_unscored() -> None:
    (found,) = problems(f"{GPT4O}/per_instance_stats.json", metric="training_co2_cost")
    assert "no scored record" in found and "100 unscored" in found


def test_helm_a_stat_off_the_0_1_scale_is_refused_naming_it() -> None:
    (found,) = problems(f"{GPT4O}/per_instance_stats.json", metric="num_prompt_tokens")
    assert "stat 'num_prompt_tokens'" in found and "0-1" in found


def test_helm_without_its_run_spec_is_an_error(tmp_path: Path) -> None:
    (stats,) = copy_run(tmp_path, f"{GPT4O}/per_instance_stats.json")
    (found,) = problems(stats)
    assert "no run_spec.json beside" in found


# --- promptfoo -------------------------------------------------------------------------------------------


def test_promptfoo_model_is_the_provider_and_task_the_test() -> None:
    runs, _ = load("promptfoo/sample-export.json")
    scores = {(r.model_id, r.task_id): r.score for r in runs}
    assert scores == pytest.approx(
        {("openai:gpt-5", "0"): 0.5, ("openai:gpt-5", "1"): 2 / 3, ("openai:gpt-5-mini", "0"): 0.75,
         ("openai:gpt-5-mini", "1"): 2 / 3}
    )  # fmt: skip


def test_promptfoo_prompt_label_joins_the_model_when_a_provider_ran_several_prompts(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    document = json.loads(shared_format("promptfoo/sample-export.json").read_text())
    for prompt in document["results"]["prompts"]:
        prompt["provider"] = "openai:gpt-5"
    document["results"]["prompts"][1]["label"] = "terse"
    for result in document["results"]["results"]:
        result["provider"] = {"id": "openai:gpt-5", "label": ""}
    path.write_text(json.dumps(document))
    models = {r.model_id for r in load(path)[0]}
    assert models == {"openai:gpt-5 [Solve this riddle: {{riddle}}]", "openai:gpt-5 [terse]"}


def test_promptfoo_a_provider_error_is_an_unscored_result(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    document = json.loads(shared_format("promptfoo/sample-export.json").read_text())
    document["results"]["results"][0].update(failureReason=2, score=0)
    path.write_text(json.dumps(document))
    runs, report = load(path)
    assert len(runs) == 3 and report.unscored == 1


def test_promptfoo_success_metric_reads_pass_or_fail() -> None:
    runs, _ = load("promptfoo/sample-export.json", metric="success")
    assert {r.score for r in runs} == {0.0}


# --- OpenAI evals ----------------------------------------------------------------------------------------


def test_openai_evals_record_trimmed_to_its_final_report_is_refused_saying_why() -> None:
    (found,) = problems("openai_evals/oriprompt.log")
    assert "only a spec and a final_report" in found and "per sample" in found


def test_openai_evals_match_events_score_each_sample(tmp_path: Path) -> None:
    # The documented layout (no real record with events is in ../shared): final_report not last.
    spec = json.loads(shared_format("openai_evals/oriprompt.log").read_text().splitlines()[0])

    def event(number: int, sample: int, kind: str, data: dict[str, object]) -> dict[str, object]:
        return {"run_id": "r", "event_id": number, "sample_id": f"self_prompting.full.{sample}", "type": kind,
                "data": data}  # fmt: skip

    events = [
        spec,
        {"final_report": {"accuracy": 0.5}},
        event(0, 0, "sampling", {}),
        event(1, 0, "match", {"correct": True}),
        event(2, 1, "match", {"correct": False}),
        event(3, 1, "match", {"correct": True}),
    ]
    path = tmp_path / "record.log"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    runs, report = load(path)
    assert {(r.model_id, r.task_id, r.score, r.category, r.trial) for r in runs} == {
        ("self_prompting/oriprompt/baseline", "self_prompting.full.0", 1.0, "self_prompting", None),
        ("self_prompting/oriprompt/baseline", "self_prompting.full.1", 0.0, "self_prompting", 1),
        ("self_prompting/oriprompt/baseline", "self_prompting.full.1", 1.0, "self_prompting", 2),
    }
    assert (report.averaged, report.trials) == (1, 2)
    assert sorted(r.source.line for r in runs if r.task_id.endswith(".1")) == [5, 6]  # type: ignore[union-attr]


# --- every file, the format input, the report ------------------------------------------------------------

# The Every Eval Ever schemas are the format's specification, not output: tests/test_every_eval_ever.py uses them.
EVERY_FILE = sorted(
    p.relative_to(FORMATS).as_posix()
    for p in FORMATS.rglob("*")
    if p.is_file() and p.suffix != ".md" and "schemas" not in p.parts
)
REFUSED = {
    f"{LM}/samples_polymer_tg_prediction_{POLYMER}.jsonl": "lower-is-better",
    # Read alone, a results file gives nothing (its samples beside it are read when named).
    f"{LM}/results_{POLYMER}.json": "no scored record",
    f"{LM}/results_{BIAS}.json": "no scored record",
    f"{LM}/results_{TOM}.json": "no scored record",
    "openai_evals/oriprompt.log": "final_report",
    INSPECT_UNSCORED: "no scored record",
    "inspect_ai/retry-2-then-success.eval": "no scored record",
    f"{GPT4O}/run_spec.json": "no scored record",
    f"{GPT4O}/stats.json": "no scored record",
    f"{LLAMA}/run_spec.json": "no scored record",
    f"{LLAMA}/stats.json": "no scored record",
    # An Every Eval Ever aggregate is read with the samples file beside it.
    "every_eval_ever/demo/f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40.json": "no scored record",
}


@pytest.mark.parametrize("name", EVERY_FILE or ["(../shared/formats is absent)"])
def test_every_real_file_loads_with_its_source_or_is_refused_with_a_reason(name: str) -> None:
    path = shared_format(name)
    if name in REFUSED:
        with pytest.raises(InvalidEvalRuns) as caught:
            load_runs([str(path)])
        assert any(REFUSED[name] in p.message for p in caught.value.problems), caught.value
        return
    runs = load_runs([str(path)])
    assert runs
    assert all(r.source is not None and r.source.file.startswith(str(path)) and r.source.line >= 1 for r in runs)
    assert all(0.0 <= r.score <= 1.0 and r.model_id and r.task_id for r in runs)


def test_every_folder_of_real_files_loads_as_a_glob_once_refused_files_are_set_aside(tmp_path: Path) -> None:
    set_aside = {
        f"{LM}/samples_polymer_tg_prediction_{POLYMER}.jsonl", f"{LM}/results_{POLYMER}.json",
        "openai_evals/oriprompt.log",
        "inspect_ai/2025-05-12T20-28-13-04-00_popularity.json",  # the same model and task as INSPECT_10
    }  # fmt: skip
    for name in EVERY_FILE:
        if name not in set_aside:
            target = tmp_path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(FORMATS / name, target)
    session = Session()
    runs = load_runs(["**"], root=tmp_path, session=session)
    report = session.report()
    assert len({r.model_id for r in runs}) == 11  # 3 of them from Every Eval Ever files
    assert report.unscored == 11 and report.averaged == 2
    assert "helm ×2 (200 records" in load_summary(report)


def test_the_format_input_refuses_a_file_of_another_format() -> None:
    (found,) = problems("promptfoo/sample-export.json", format="helm")
    assert "the input 'format' is 'helm', but this file is promptfoo output" in found


def test_the_format_input_evalrun_reads_every_file_as_evalrun() -> None:
    (found,) = problems("promptfoo/sample-export.json", format="evalrun")
    assert 'expected a JSON array of records or an object with a "runs" array' in found


def test_the_summary_line_names_formats_records_metrics_and_what_was_left_out() -> None:
    _, report = load(INSPECT_UNSCORED, "inspect_ai/log_streaming.eval", "promptfoo/sample-export.json")
    line = load_summary(report)
    assert line.startswith("Read 3 files: inspect ×2 (4 records, metric match); promptfoo ×1 (4 records")
    assert "10 unscored samples left out" in line and "2 tasks are the mean of 4 trials" in line


def test_the_comment_note_is_none_when_nothing_was_left_out_or_averaged() -> None:
    _, report = load("promptfoo/sample-export.json")
    assert comment_note(report) is None


def test_baseline_files_are_read_with_the_same_format_options_as_runs(tmp_path: Path) -> None:
    from leaderboard.baseline import load_baseline_files

    copy_run(tmp_path, f"{LM}/samples_bias_classification_{BIAS}.json", f"{LM}/results_{BIAS}.json")
    baseline = load_baseline_files(("*",), str(tmp_path), ReadOptions(metric="acc_norm"))
    assert {r.metric_name for r in baseline.runs} == {"acc_norm"} and len(baseline.runs) == 609


# --- limits ----------------------------------------------------------------------------------------------


def test_a_fifo_is_refused_by_name_without_waiting_for_a_writer(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "samples_task_2026-07-08T16-04-34.219874.jsonl"
    os.mkfifo(fifo)
    (found,) = problems(fifo)
    assert "FIFO" in found and found.startswith(str(fifo))


def test_harness_files_past_their_byte_budget_are_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from leaderboard import limits

    monkeypatch.setattr(limits, "MAX_HARNESS_INPUT_BYTES", 200_000)
    found = problems(
        f"{LM}/samples_negotiationtom_belief_{TOM}.jsonl", f"{LM}/samples_negotiationtom_desire_{TOM}.jsonl"
    )
    assert (
        len(found) == 1 and "desire" in found[0] and "harness output files of a run may hold 200,000 bytes" in found[0]
    )


def test_a_harness_document_read_whole_is_held_to_the_input_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from leaderboard import limits

    monkeypatch.setattr(limits, "MAX_INPUT_BYTES", 100_000)
    (found,) = problems(f"{GPT4O}/per_instance_stats.json")
    assert "read whole, up to 100,000 bytes" in found


def test_an_id_past_the_length_limit_is_a_problem_at_its_place(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    document = json.loads(shared_format("inspect_ai/2025-05-12T20-28-13-04-00_popularity.json").read_text())
    document["samples"][2]["id"] = "x" * 600
    path.write_text(json.dumps(document, indent=2))
    (found,) = problems(path)
    assert "the task id is longer than 512 characters" in found and "x" * 100 not in found


def test_the_comment_note_names_a_few_files_and_counts_the_rest() -> None:
    from leaderboard.formats import FileReport

    report = LoadReport(tuple(FileReport(f"f{i}.eval", "inspect", 1, unscored=2) for i in range(8)))
    note = comment_note(report)
    assert (
        note
        == "16 unscored samples left out (f0.eval: 2, f1.eval: 2, f2.eval: 2, f3.eval: 2, f4.eval: 2 and 3 more files)."
    )
