"""Inputs: parsed once, checked with messages that name the input, defaults as action.yml says."""

from __future__ import annotations

import pytest
import yaml
from conftest import ROOT

from leaderboard.action.settings import DEFAULTS, SettingsError, parse_settings
from leaderboard.cli import parser
from leaderboard.config import parse_config
from leaderboard.options import INPUTS, OPTIONS, STATISTICS
from leaderboard.required import split_patterns
from leaderboard.validation import InvalidEvalRuns

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())


def env(**inputs: str) -> dict[str, str]:
    base = {"INPUT_RUNS": "results/*.jsonl"}
    base.update({k if k.isupper() else f"INPUT_{k.upper().replace('_', '-')}": v for k, v in inputs.items()})
    return base


def test_code_defaults_equal_action_yml_defaults() -> None:
    declared = {name: spec.get("default") for name, spec in ACTION["inputs"].items() if "default" in spec}
    assert declared == DEFAULTS


def test_every_input_of_action_yml_is_known_to_the_code_and_back() -> None:
    assert set(ACTION["inputs"]) == set(INPUTS)
    assert ACTION["inputs"]["runs"]["required"] is True


def test_every_input_and_output_is_documented_in_the_inputs_page() -> None:
    readme = (ROOT / "docs" / "inputs.md").read_text()
    for name in [*ACTION["inputs"], *ACTION["outputs"]]:
        assert f"| `{name}` |" in readme, name


def test_an_input_the_configuration_may_decide_is_empty_in_action_yml_and_its_real_default_is_stated() -> None:
    readme = (ROOT / "docs" / "inputs.md").read_text()
    configurable = [o for o in OPTIONS if o.input is not None and o.configurable]
    assert {o.input for o in configurable} == {
        "alpha", "bootstrap-samples", "seed", "pairwise-correction", "cluster-by", "task-weights", "failed-calls",
    }  # fmt: skip
    for option in configurable:
        spec = ACTION["inputs"][option.input]
        assert spec["default"] == "" and f"statistics.{option.key}" in spec["description"], option.input
        assert option.default.strip("`") in spec["description"], option.input
        assert f"| `{option.input}` | (configuration, else `{option.default}`) |" in readme, option.input


def test_every_flag_of_the_options_table_is_the_clis() -> None:
    flags = {s for action in parser()._actions for s in action.option_strings}
    assert {o.flag for o in OPTIONS if o.flag is not None} <= flags


def test_the_configurations_statistics_keys_are_the_options_tables() -> None:
    with pytest.raises(InvalidEvalRuns) as caught:
        parse_config("statistics:\n  level: 0.9\n", "c.yml")
    (problem,) = caught.value.problems
    assert problem.line == 2 and f"the keys here are {', '.join(STATISTICS)}" in problem.message


def test_a_local_run_gets_the_defaults_and_leaves_the_statistics_to_the_configuration() -> None:
    s = parse_settings({"INPUT_RUNS": "a.jsonl"})
    assert (s.comment, s.comment_key, s.rank_by, s.pr_number, s.title) == (
        "update", "leaderboard", "mean", None, "Model leaderboard",
    )  # fmt: skip
    assert (s.alpha, s.bootstrap_samples, s.seed, s.correction, s.cluster_by, s.task_weights) == (None,) * 6
    assert s.github_token == "" and s.api_url == "https://api.github.com"


def test_an_input_set_to_its_default_value_is_given_and_an_empty_one_is_not() -> None:
    given = parse_settings(env(alpha="0.05", pairwise_correction="holm", cluster_by="none", seed="0"))
    assert (given.alpha, given.correction, given.cluster_by, given.seed) == (0.05, "holm", "none", 0)
    empty = parse_settings(env(alpha="", pairwise_correction=" ", cluster_by="", seed=""))
    assert (empty.alpha, empty.correction, empty.cluster_by, empty.seed) == (None, None, None, None)


def test_hyphenated_inputs_are_read_as_the_runner_passes_them() -> None:
    s = parse_settings(
        {
            "INPUT_RUNS": "a.jsonl",
            "INPUT_GITHUB-TOKEN": "t",
            "INPUT_BOOTSTRAP-SAMPLES": "640",
            "INPUT_RANK-BY": "win-rate",
            "INPUT_PR-NUMBER": "12",
            "INPUT_COMMENT-KEY": "gpu/a100",
        }
    )
    assert (s.github_token, s.bootstrap_samples, s.rank_by, s.pr_number, s.comment_key) == (
        "t", 640, "win-rate", 12, "gpu/a100",
    )  # fmt: skip


def test_runs_are_split_on_newlines_and_commas() -> None:
    assert split_patterns("a.jsonl, b/*.csv\n\n  c.json ,") == ("a.jsonl", "b/*.csv", "c.json")


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("alpha", "0"), ("alpha", "1"), ("alpha", "x"), ("alpha", "-0.1"),
        ("bootstrap-samples", "1.5"), ("bootstrap-samples", "0"), ("bootstrap-samples", "ten"),
        ("bootstrap-samples", "1000001"), ("seed", "-1"), ("seed", "abc"), ("rank-by", "median"),
        ("comment", "always"), ("comment-key", "has space"), ("comment-key", "-x"), ("comment-key", ""),
        ("pr-number", "0"), ("pr-number", "#12"), ("format", "lmeval"), ("format", "AUTO"),
        ("history", "-1"), ("history", "101"), ("history", "ten"),
    ],
)  # fmt: skip
def test_an_invalid_input_is_an_error_that_names_it(name: str, value: str) -> None:
    with pytest.raises(SettingsError) as caught:
        parse_settings({"INPUT_RUNS": "a.jsonl", f"INPUT_{name.upper()}": value})
    assert len(caught.value.problems) == 1 and f"input '{name}'" in caught.value.problems[0]


def test_history_reads_ten_earlier_runs_unless_told_and_an_empty_input_is_not_given() -> None:
    assert parse_settings({"INPUT_RUNS": "a.jsonl"}).history == 10
    assert parse_settings(env(history="")).history == 10
    assert parse_settings(env(history="0")).history == 0
    assert parse_settings(env(history="100")).history == 100


def test_runs_is_required() -> None:
    with pytest.raises(SettingsError, match="input 'runs' is required"):
        parse_settings({"INPUT_RUNS": " \n "})


def test_all_invalid_inputs_are_reported_together() -> None:
    with pytest.raises(SettingsError) as caught:
        parse_settings({"INPUT_RUNS": "a", "INPUT_ALPHA": "2", "INPUT_SEED": "x", "INPUT_COMMENT": "no"})
    assert len(caught.value.problems) == 3


def test_the_token_is_not_in_the_settings_repr() -> None:
    s = parse_settings({"INPUT_RUNS": "a", "INPUT_GITHUB-TOKEN": "ghs_secret"})
    assert "ghs_secret" not in repr(s) and "ghs_secret" not in str(s)


def test_run_url_comes_from_the_runner_environment() -> None:
    s = parse_settings({"INPUT_RUNS": "a", "GITHUB_SERVER_URL": "https://ghe.example", "GITHUB_REPOSITORY": "o/r",
                        "GITHUB_RUN_ID": "99", "GITHUB_API_URL": "https://ghe.example/api/v3"})  # fmt: skip
    assert s.run_url == "https://ghe.example/o/r/actions/runs/99" and s.api_url == "https://ghe.example/api/v3"


def test_format_metric_and_filter_become_the_read_options() -> None:
    s = parse_settings({"INPUT_RUNS": "a", "INPUT_FORMAT": "lm-eval", "INPUT_METRIC": "acc_norm",
                        "INPUT_FILTER": "strict-match"})  # fmt: skip
    assert (s.read_options.format, s.read_options.metric, s.read_options.filter) == (
        "lm-eval", "acc_norm", "strict-match",
    )  # fmt: skip
    default = parse_settings({"INPUT_RUNS": "a"}).read_options
    assert (default.format, default.metric, default.filter) == ("auto", None, None)


@pytest.mark.parametrize("text", ["1_0", "١٠", "７", "0x7", "1e1"])
def test_pr_number_must_be_plain_ascii_digits(text: str) -> None:
    with pytest.raises(SettingsError) as caught:
        parse_settings(env(pr_number=text))
    assert caught.value.problems == [f"input 'pr-number' must be a positive integer (or empty), got {text!r}"]


@pytest.mark.parametrize(("name", "text"), [("alpha", "0.0_5"), ("alpha", "٠.٠٥"), ("bootstrap_samples", "1_000"),
                                            ("seed", "٣"), ("alpha", "infinity"),
                                            ("regression_tolerance", "0_1")])  # fmt: skip
def test_numeric_inputs_are_plain_decimal_text(name: str, text: str) -> None:
    with pytest.raises(SettingsError) as caught:
        parse_settings(env(**{name: text}))
    (problem,) = caught.value.problems
    assert problem.startswith(f"input '{name.replace('_', '-')}' must be")


def test_a_token_with_characters_no_token_has_is_an_input_error_that_does_not_echo_it() -> None:
    with pytest.raises(SettingsError) as caught:
        parse_settings(env(github_token="ghp_tökén"))
    (problem,) = caught.value.problems
    assert problem.startswith("input 'github-token' holds characters") and "tökén" not in problem


def test_the_baseline_and_gate_inputs_default_to_off() -> None:
    s = parse_settings({"INPUT_RUNS": "a.jsonl"})
    assert (s.baseline, s.baseline_artifact, s.fail_on_regression, s.regression_tolerance) == ((), "", False, 0.0)


def test_the_baseline_and_gate_inputs_are_read() -> None:
    s = parse_settings(env(baseline="base/*.jsonl, old.csv", fail_on_regression="TRUE", regression_tolerance="0.02",
                           GITHUB_WORKFLOW_REF="o/r/.github/workflows/ci.yml@refs/heads/main"))  # fmt: skip
    assert (s.baseline, s.fail_on_regression, s.regression_tolerance) == (("base/*.jsonl", "old.csv"), True, 0.02)
    assert s.workflow_ref == "o/r/.github/workflows/ci.yml@refs/heads/main"
    assert parse_settings(env(baseline_artifact="eval-results")).baseline_artifact == "eval-results"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("fail-on-regression", "yes"), ("fail-on-regression", "1"), ("regression-tolerance", "-0.1"),
        ("regression-tolerance", "2"), ("regression-tolerance", "nan"), ("regression-tolerance", "5%"),
        ("baseline-artifact", "a/b"), ("baseline-artifact", "a:b"), ("baseline-artifact", "x" * 256),
    ],
)  # fmt: skip
def test_an_invalid_baseline_or_gate_input_names_it(name: str, value: str) -> None:
    with pytest.raises(SettingsError) as caught:
        parse_settings({"INPUT_RUNS": "a.jsonl", f"INPUT_{name.upper()}": value})
    assert len(caught.value.problems) == 1 and f"input '{name}'" in caught.value.problems[0]


def test_baseline_files_and_baseline_artifact_are_exclusive() -> None:
    with pytest.raises(SettingsError, match="exclusive"):
        parse_settings(env(baseline="b.jsonl", baseline_artifact="eval-results"))
