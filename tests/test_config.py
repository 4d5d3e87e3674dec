"""The configuration file: read whole or refused whole, every mistake at its key and line."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from conftest import ROOT

from leaderboard import EvalRun, analyse
from leaderboard.composite import rank
from leaderboard.config import Normalization, parse_config, parse_weights, read_config, with_weights
from leaderboard.pipeline import evaluate
from leaderboard.validation import InvalidEvalRuns, Problem

EXAMPLE_CONFIG = ROOT / "examples" / "agent-suite" / "leaderboard.yml"
SCHEMA = json.loads((ROOT / "docs" / "leaderboard-config.schema.json").read_text())


def problems(text: str) -> list[tuple[int | None, str | None, str]]:
    with pytest.raises(InvalidEvalRuns) as caught:
        parse_config(text, "leaderboard.yml")
    return [(p.line, p.field, p.message) for p in caught.value.problems]


def one(text: str) -> Problem:
    with pytest.raises(InvalidEvalRuns) as caught:
        parse_config(text, "leaderboard.yml")
    (problem,) = caught.value.problems
    assert problem.file == "leaderboard.yml"
    return problem


def test_the_example_configuration_is_read() -> None:
    config = read_config(EXAMPLE_CONFIG)
    assert config.weights == {"accuracy": 0.55, "cost": 0.25, "latency": 0.20}
    assert config.normalize["cost"] == Normalization("budget", "lower", budget=20.0)
    assert config.constraints.min_accuracy == 0.7 and config.constraints.required_features == ("tool_use",)
    assert config.models["sim_small"].context_tokens == 128000
    assert (config.statistics.resamples, config.statistics.seed) == (1000, 7)


def test_an_empty_file_is_every_default() -> None:
    config = parse_config("", "leaderboard.yml")
    assert config.weights == {} and config.tie_breaker == "accuracy" and config.constraints.allow_unknown_card


def test_an_unknown_key_names_the_key_and_its_line() -> None:
    p = one("metrics:\n  weights: {accuracy: 1}\n  wieghts: {cost: 1}\n")
    assert (p.line, p.field) == (3, "metrics.wieghts") and "unknown key" in p.message


def test_an_unknown_top_level_key_is_an_error() -> None:
    assert one("constraint:\n  min_accuracy: 0.7\n").field == "constraint"


def test_an_unknown_constraint_is_an_error() -> None:
    p = one("constraints:\n  min_accuracy: 0.7\n  maximum_cost: 1\n")
    assert (p.line, p.field) == (3, "constraints.maximum_cost")


def test_a_wrong_type_names_the_key_line_and_what_was_expected() -> None:
    p = one("constraints:\n  min_accuracy: high\n")
    assert (p.line, p.field) == (2, "constraints.min_accuracy")
    assert p.message == "must be a fraction from 0 to 1, got a string 'high'"


def test_a_negative_budget_is_an_error() -> None:
    p = one("metrics:\n  normalize:\n    cost: {mode: budget, budget: -2}\n")
    assert (p.line, p.field) == (3, "metrics.normalize.cost.budget") and "> 0" in p.message


def test_a_negative_limit_is_an_error() -> None:
    assert one("constraints: {max_cost_per_1k_calls_usd: -1}").field == "constraints.max_cost_per_1k_calls_usd"


def test_a_negative_weight_is_an_error() -> None:
    assert one("metrics: {weights: {accuracy: -1}}").field == "metrics.weights.accuracy"


def test_weights_that_add_up_to_zero_are_an_error() -> None:
    assert "add up to 0" in one("metrics: {weights: {accuracy: 0, cost: 0}}").message


def test_a_duplicate_key_is_an_error_naming_both_lines() -> None:
    p = one("metrics:\n  weights:\n    accuracy: 1\n    accuracy: 2\n")
    assert (p.line, p.field) == (4, "metrics.weights.accuracy") and "first at line 3" in p.message


def test_an_unknown_mode_or_direction_is_an_error() -> None:
    found = problems("metrics:\n  normalize:\n    cost: {mode: log}\n    latency: {direction: up}\n")
    assert [(line, field) for line, field, _ in found] == [
        (3, "metrics.normalize.cost.mode"),
        (4, "metrics.normalize.latency.direction"),
    ]


def test_a_target_or_budget_mode_needs_its_value() -> None:
    assert "needs a target" in one("metrics: {normalize: {accuracy: {mode: target}}}").message
    assert "needs a budget" in one("metrics: {normalize: {cost: {mode: budget}}}").message


def test_a_target_given_for_another_mode_is_an_error() -> None:
    assert "applies only to mode target" in one("metrics: {normalize: {cost: {mode: minmax, target: 3}}}").message


def test_budget_is_lower_is_better_only() -> None:
    assert (
        "direction must be lower"
        in one("metrics: {normalize: {x: {mode: budget, budget: 1, direction: higher}}}").message
    )


def test_a_bad_card_names_the_model_key() -> None:
    p = one("models:\n  m:\n    context_tokens: 12.5\n")
    assert (p.line, p.field) == (3, "models.m.context_tokens")


def test_bad_statistics_are_errors() -> None:
    found = problems("statistics:\n  enabled: maybe\n  resamples: 0\n  confidence: 95\n  seed: -1\n")
    assert [field for _, field, _ in found] == [
        f"statistics.{k}" for k in ("enabled", "resamples", "confidence", "seed")
    ]


def test_every_problem_is_reported_together() -> None:
    assert len(problems("metrics: {weights: {accuracy: x}}\nconstraints: {max_error_rate: 2}\nfoo: 1\n")) == 3


def test_invalid_yaml_names_the_line() -> None:
    p = one("metrics:\n  weights: {accuracy: 1\n")
    assert p.message.startswith("not valid YAML") and p.line is not None


def test_anchors_and_aliases_are_refused() -> None:
    assert "aliases" in one("models:\n  a: &card {context_tokens: 1}\n  b: *card\n").message


@pytest.mark.parametrize("text", ["!!python/object:os.system {}\n", "metrics: {weights: {accuracy: !custom 1}}\n"])
def test_an_explicit_yaml_tag_is_refused_not_read_as_something_else(text: str) -> None:
    assert "is not supported: a configuration is plain data" in one(text).message


def test_a_top_level_that_is_not_a_mapping_is_an_error() -> None:
    assert "must be a mapping" in one("- metrics\n").message


@pytest.fixture
def runs() -> list[EvalRun]:
    return [EvalRun(m, f"t{t}", "acc", float((t + i) % 3 == 0)) for i, m in enumerate("ab") for t in range(12)]


@pytest.mark.parametrize(
    ("text", "field", "line"),
    [
        ("metrics:\n  weights:\n    acuracy: 1\n", "metrics.weights.acuracy", 3),
        ("metrics:\n  normalize:\n    speed: {mode: minmax}\n", "metrics.normalize.speed", 3),
        ("metrics:\n  tie_breaker: price\n", "metrics.tie_breaker", 2),
        ("constraints:\n  min_citation_rate: 0.5\n", "constraints.min_citation_rate", 2),
    ],
)
def test_a_metric_the_data_does_not_have_is_an_error_at_its_line(
    runs: list[EvalRun], text: str, field: str, line: int
) -> None:
    with pytest.raises(InvalidEvalRuns) as caught:
        rank(runs, analyse(runs, b=400), parse_config(text, "leaderboard.yml"))
    (p,) = caught.value.problems
    assert (p.file, p.line, p.field) == ("leaderboard.yml", line, field) and "the metrics are accuracy" in p.message


def test_identity_on_values_outside_0_1_is_an_error(runs: list[EvalRun]) -> None:
    priced = [EvalRun(r.model_id, r.task_id, "acc", r.score, cost_usd=0.01) for r in runs]
    config = parse_config("metrics:\n  normalize:\n    cost: {mode: identity}\n  weights: {cost: 1}\n", "c.yml")
    with pytest.raises(InvalidEvalRuns, match="mode identity needs values on 0-1"):
        rank(priced, analyse(priced, b=400), config)


def test_too_few_resamples_for_the_confidence_is_an_error_at_its_line(runs: list[EvalRun]) -> None:
    config = parse_config("statistics:\n  confidence: 0.99\n  resamples: 500\n", "c.yml")
    with pytest.raises(InvalidEvalRuns) as caught:
        evaluate(runs, config)
    (p,) = caught.value.problems
    assert (p.line, p.field) == (3, "statistics.resamples") and "at least 2000" in p.message


def test_statistics_come_from_the_configuration_and_the_callers_values_override(runs: list[EvalRun]) -> None:
    config = parse_config("statistics: {resamples: 1000, confidence: 0.9, seed: 5}", "c.yml")
    board, _ = evaluate(runs, config)
    assert (board.b, board.alpha, board.seed) == (1000, 0.1, 5)
    board, _ = evaluate(runs, config, b=400, seed=1)
    assert (board.b, board.alpha, board.seed) == (400, 0.1, 1)


def test_command_line_weights_replace_the_files_and_their_problems_name_the_option(runs: list[EvalRun]) -> None:
    config = with_weights(parse_config("metrics: {weights: {accuracy: 1}}", "c.yml"), parse_weights("acc=1"))
    with pytest.raises(InvalidEvalRuns) as caught:
        rank(runs, analyse(runs, b=400), config)
    assert caught.value.problems[0].file == "--weights"


@pytest.mark.parametrize("text", ["accuracy", "accuracy=x", "accuracy=-1", "accuracy=1,accuracy=2", "accuracy=0"])
def test_malformed_command_line_weights_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_weights(text)


def test_a_file_over_the_limit_or_not_utf8_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "c.yml"
    bad.write_bytes(b"metrics:\n  weights: {\xff: 1}\n")
    with pytest.raises(InvalidEvalRuns) as caught:
        read_config(bad)
    assert caught.value.problems[0].line == 2


def test_the_json_schema_accepts_the_example_and_rejects_an_unknown_key() -> None:
    jsonschema.validate(yaml.safe_load(EXAMPLE_CONFIG.read_text()), SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"metrics": {"wieghts": {}}}, SCHEMA)


def test_the_configuration_used_is_reported_as_read() -> None:
    config = read_config(EXAMPLE_CONFIG)
    used = config.as_dict()
    assert used["metrics"]["weights"] == {"accuracy": 0.55, "cost": 0.25, "latency": 0.2}  # type: ignore[index]
    assert used["constraints"]["required_features"] == ["tool_use"]  # type: ignore[index]


def test_a_configuration_nested_absurdly_deep_is_an_error_not_a_crash() -> None:
    assert "nested" in one("[" * 100_000).message
