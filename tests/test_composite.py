"""The composite ranking (metrics-and-leaderboard.md): aggregate, normalise, weight, constrain."""

from __future__ import annotations

import math

import pytest

from leaderboard import EvalRun, analyse
from leaderboard.composite import CompositeBoard, normalise, rank
from leaderboard.config import Card, Config, Constraints, Normalization, parse_config, with_weights
from leaderboard.pipeline import evaluate
from leaderboard.report.composite import too_close_sentence
from leaderboard.trials import FailedCalls
from leaderboard.validation import InvalidEvalRuns

TASKS = 12


def calls(
    model: str,
    accuracy: float,
    *,
    cost: float | None = 0.001,
    latency: float | None = 500.0,
    failed: int = 0,
    tasks: int = TASKS,
    metrics: dict[str, float] | None = None,
) -> list[EvalRun]:
    """``tasks`` calls scoring 1 on the first round(accuracy * tasks) tasks, then ``failed`` failed calls."""
    solved = round(accuracy * tasks)
    out = [
        EvalRun(model, f"t{t:02d}", "acc", 1.0 if t < solved else 0.0, cost_usd=cost, latency_ms=latency,
                metrics=metrics or {})
        for t in range(tasks)
    ]  # fmt: skip
    out += [EvalRun(model, f"t{t:02d}", "acc", None, error="timeout", trial="failed") for t in range(failed)]
    return out


def ranked(runs: list[EvalRun], text: str = "", failed_calls: FailedCalls = "zero") -> CompositeBoard:
    board = analyse(runs, b=400, failed_calls=failed_calls)
    return rank(runs, board, parse_config(text, "leaderboard.yml"))


def order(result: CompositeBoard) -> list[str]:
    return [r.model_id for r in result.ranked]


# --- stage 1: per-model metrics -------------------------------------------------------------------


def test_cost_is_the_mean_per_call_times_1000() -> None:
    result = ranked(calls("a", 0.5, cost=0.002))
    assert result.ranked[0].metrics.values["cost"] == pytest.approx(2.0)


def test_one_unpriced_completed_call_makes_the_cost_unknown_not_a_partial_mean() -> None:
    runs = calls("a", 0.5, cost=0.002)
    runs[3] = EvalRun("a", "t03", "acc", 0.0, latency_ms=500.0)
    metrics = ranked(runs).ranked[0].metrics
    assert metrics.values["cost"] is None and metrics.unpriced == 1


def test_failed_calls_count_in_the_error_rate_and_not_in_cost_or_latency() -> None:
    runs = calls("a", 0.5, cost=0.002, failed=4)  # the failed calls have no price nor latency
    values = ranked(runs).ranked[0].metrics.values
    assert values["error_rate"] == pytest.approx(4 / 16)
    assert values["cost"] == pytest.approx(2.0) and values["latency"] == pytest.approx(500.0)


def test_accuracy_scores_failed_calls_as_the_leaderboard_does() -> None:
    runs = calls("a", 0.5, cost=0.002, failed=4)  # a failed second trial on each of the 4 solved tasks t00-t03
    assert ranked(runs, failed_calls="exclude").ranked[0].metrics.values["accuracy"] == pytest.approx(0.5)
    # Scored 0, each failed trial halves its task's score: (4 x 0.5 + 2 x 1) / 12.
    assert ranked(runs).ranked[0].metrics.values["accuracy"] == pytest.approx(4 / 12)


def test_latency_p50_and_p95_are_percentiles_of_the_completed_calls() -> None:
    runs = [EvalRun("a", f"t{i:02d}", "acc", 1.0, latency_ms=float(i + 1)) for i in range(100)]
    values = ranked(runs).ranked[0].metrics.values
    assert values["latency_p50"] == pytest.approx(50.5) and values["latency"] == pytest.approx(95.05)


def test_custom_metrics_are_averaged_per_model_and_reported_unweighted() -> None:
    runs = calls("a", 0.5, metrics={"citation_rate": 0.8})[:6] + calls("a", 0.5, metrics={"citation_rate": 0.4})[6:]
    result = ranked(runs)
    assert result.custom_metrics == ("citation_rate",)
    assert result.ranked[0].metrics.values["citation_rate"] == pytest.approx(0.6)
    assert result.weights == {"accuracy": 1.0}


def test_category_means_are_metrics_too() -> None:
    runs = [EvalRun("a", f"t{i}", "acc", float(i % 2), category="odd" if i % 2 else "even") for i in range(12)]
    values = ranked(runs).ranked[0].metrics.values
    assert (values["odd"], values["even"]) == (1.0, 0.0)


# --- stage 2: normalisation -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("how", "expected"),
    [
        (Normalization("identity", "higher"), {"a": 0.2, "b": 0.6, "c": 1.0}),
        (Normalization("identity", "lower"), {"a": 0.8, "b": 0.4, "c": 0.0}),
        (Normalization("minmax", "higher"), {"a": 0.0, "b": 0.5, "c": 1.0}),
        (Normalization("minmax", "lower"), {"a": 1.0, "b": 0.5, "c": 0.0}),
        (Normalization("target", "higher", target=0.5), {"a": 0.4, "b": 1.0, "c": 1.0}),
        (Normalization("target", "lower", target=0.5), {"a": 1.0, "b": 0.5 / 0.6, "c": 0.5}),
        (Normalization("budget", "lower", budget=0.8), {"a": 0.75, "b": 0.25, "c": 0.0}),
    ],
)
def test_each_normalisation_mode_and_direction(how: Normalization, expected: dict[str, float]) -> None:
    assert normalise({"a": 0.2, "b": 0.6, "c": 1.0}, how) == pytest.approx(expected)


def test_minmax_is_relative_to_the_models_in_the_run_but_budget_is_absolute() -> None:
    over_budget = {"a": 30.0, "b": 40.0}
    assert normalise(over_budget, Normalization("minmax", "lower"))["a"] == 1.0
    assert normalise(over_budget, Normalization("budget", "lower", budget=20.0)) == {"a": 0.0, "b": 0.0}


def test_minmax_with_every_model_alike_scores_them_all_1() -> None:
    assert normalise({"a": 3.0, "b": 3.0}, Normalization("minmax", "lower")) == {"a": 1.0, "b": 1.0}


def test_an_unknown_value_stays_unknown_and_does_not_move_minmax() -> None:
    out = normalise({"a": 1.0, "b": None, "c": 3.0}, Normalization("minmax", "higher"))
    assert out == {"a": 0.0, "b": None, "c": 1.0}


def test_cost_latency_and_error_rate_default_to_lower_is_better() -> None:
    result = ranked(calls("a", 0.5) + calls("b", 0.5), "metrics: {weights: {accuracy: 1, cost: 1}}")
    assert {n: result.normalization[n].direction for n in ("accuracy", "cost")} == {
        "accuracy": "higher",
        "cost": "lower",
    }
    result = ranked(calls("a", 0.5), "metrics: {weights: {latency: 1, error_rate: 1}}")
    assert {result.normalization[n].direction for n in ("latency", "error_rate")} == {"lower"}


# --- stage 3: weights -----------------------------------------------------------------------------


def test_weights_are_normalised_to_sum_to_1() -> None:
    result = ranked(calls("a", 0.5), "metrics: {weights: {accuracy: 3, cost: 1}}")
    assert result.weights == {"accuracy": 0.75, "cost": 0.25}


def test_the_composite_is_the_weighted_sum_of_normalised_metrics() -> None:
    runs = calls("cheap", 0.5, cost=0.001) + calls("dear", 1.0, cost=0.003)
    result = ranked(runs, "metrics: {weights: {accuracy: 0.5, cost: 0.5}}")
    composites = {r.model_id: r.composite for r in result.ranked}
    assert composites == pytest.approx({"cheap": 0.5 * 0.5 + 0.5 * 1.0, "dear": 0.5 * 1.0 + 0.5 * 0.0})


def test_weighting_cost_can_put_a_cheaper_model_first() -> None:
    runs = calls("cheap", 0.75, cost=0.001) + calls("dear", 0.83, cost=0.010)
    assert order(ranked(runs)) == ["dear", "cheap"]
    assert order(ranked(runs, "metrics: {weights: {accuracy: 0.5, cost: 0.5}}")) == ["cheap", "dear"]


def test_a_custom_metric_can_be_weighted_with_no_code_change() -> None:
    runs = calls("a", 0.5, metrics={"citation_rate": 0.9}) + calls("b", 0.6, metrics={"citation_rate": 0.1})
    text = "metrics: {weights: {accuracy: 0.5, citation_rate: 0.5}, normalize: {citation_rate: {mode: identity}}}"
    assert order(ranked(runs, text)) == ["a", "b"]


def test_equal_composites_are_ordered_by_the_tie_breaker() -> None:
    runs = calls("a", 0.5, cost=0.001) + calls("b", 0.5, cost=0.002)
    assert order(ranked(runs, "metrics: {weights: {accuracy: 1}, tie_breaker: cost}")) == ["a", "b"]
    runs = calls("a", 0.5, cost=0.002) + calls("b", 0.5, cost=0.001)
    assert order(ranked(runs, "metrics: {weights: {accuracy: 1}, tie_breaker: cost}")) == ["b", "a"]


def test_a_weighted_metric_unknown_for_a_model_counts_as_the_worst_and_is_warned_about() -> None:
    runs = calls("priced", 0.5) + calls("unpriced", 0.5, cost=None)
    result = ranked(runs, "metrics: {weights: {accuracy: 0.5, cost: 0.5}}")
    assert order(result) == ["priced", "unpriced"]
    (unknown,) = result.unknown
    assert (unknown.metric, unknown.models) == ("cost", ("unpriced",)) and "cost_usd" in unknown.fix


def test_an_unpriced_model_is_not_warned_about_when_cost_is_not_weighted() -> None:
    assert ranked(calls("a", 0.5, cost=None)).unknown == ()


# --- stage 4: constraints -------------------------------------------------------------------------


def reasons(result: CompositeBoard) -> dict[str, tuple[str, ...]]:
    return {r.model_id: r.reasons for r in result.disqualified}


def test_a_model_below_the_accuracy_floor_is_disqualified_not_ranked_low() -> None:
    result = ranked(calls("sim_tiny", 0.5) + calls("good", 0.75), "constraints: {min_accuracy: 0.7}")
    assert order(result) == ["good"]
    assert reasons(result) == {"sim_tiny": ("accuracy 50.0% below the required 70.0%",)}
    assert result.disqualified[0].rank is None


@pytest.mark.parametrize(
    ("constraint", "model", "reason"),
    [
        ("max_latency_p95_ms: 1000", calls("m", 0.5, latency=2000.0), "latency p95 2,000 ms above the limit 1,000 ms"),
        ("max_cost_per_1k_calls_usd: 1", calls("m", 0.5, cost=0.002), "cost per 1k calls $2.00 above the limit $1.00"),
        ("max_error_rate: 0.1", calls("m", 0.5, failed=4), "error rate 25.0% above the limit 10.0%"),
        ("min_tool_calls: 3", calls("m", 0.5, metrics={"tool_calls": 2}), "tool_calls 2 below the required 3"),
        ("max_general: 0.4", calls("m", 0.5), "general 0.5 above the limit 0.4"),
    ],
)
def test_each_metric_constraint_alone(constraint: str, model: list[EvalRun], reason: str) -> None:
    result = ranked(model + calls("ok", 0.25, metrics={"tool_calls": 5}), f"constraints: {{{constraint}}}")
    assert reasons(result) == {"m": (reason,)}


def test_a_constraint_that_cannot_be_checked_disqualifies_with_that_reason() -> None:
    result = ranked(calls("unpriced", 0.9, cost=None) + calls("ok", 0.5), "constraints: {max_cost_per_1k_calls_usd: 5}")
    assert reasons(result) == {
        "unpriced": (f"cost per 1k calls unknown ({TASKS} of {TASKS} completed calls have no cost_usd)",)
    }


def test_constraints_combined_give_every_reason() -> None:
    text = "constraints: {min_accuracy: 0.7, max_cost_per_1k_calls_usd: 1, max_error_rate: 0.1}"
    result = ranked(calls("bad", 0.5, cost=0.002, failed=4) + calls("ok", 0.75), text)
    assert reasons(result) == {
        "bad": (
            "accuracy 33.3% below the required 70.0%",
            "cost per 1k calls $2.00 above the limit $1.00",
            "error rate 25.0% above the limit 10.0%",
        )
    }


CARDS = """
models:
  carded: {context_tokens: 8000, features: [tool_use], privacy: []}
constraints:
  min_context_tokens: 100000
  required_features: [tool_use, json_mode]
  privacy_required: [zero_retention]
"""


def test_card_constraints_name_what_the_card_lacks() -> None:
    result = ranked(calls("carded", 0.5) + calls("ok", 0.5), CARDS + "  allow_unknown_card: true\n")
    assert reasons(result) == {
        "carded": (
            "context window 8,000 tokens below the required 100,000",
            "lacks the required feature json_mode",
            "lacks the required privacy guarantee zero_retention",
        )
    }


@pytest.mark.parametrize(
    ("constraint", "reason"),
    [
        ("min_context_tokens: 100000", "context window 8,000 tokens below the required 100,000"),
        ("required_features: [json_mode]", "lacks the required feature json_mode"),
        ("privacy_required: zero_retention", "lacks the required privacy guarantee zero_retention"),
    ],
)
def test_each_card_constraint_alone(constraint: str, reason: str) -> None:
    text = f"models: {{carded: {{context_tokens: 8000, features: [tool_use]}}}}\nconstraints: {{{constraint}}}\n"
    assert reasons(ranked(calls("carded", 0.5), text)) == {"carded": (reason,)}


def test_a_model_without_a_card_passes_card_constraints_by_default() -> None:
    assert order(ranked(calls("local", 0.5), CARDS)) == ["local"]


def test_a_model_without_a_card_is_disqualified_when_unknown_cards_are_not_allowed() -> None:
    result = ranked(calls("local", 0.5), CARDS + "  allow_unknown_card: false\n")
    assert reasons(result) == {"local": ("no capability card, and allow_unknown_card is false",)}


def test_a_card_that_does_not_state_the_context_window_cannot_pass_a_context_constraint() -> None:
    config = Config(models={"m": Card(features=("x",))}, constraints=Constraints(min_context_tokens=10))
    result = rank(calls("m", 0.5), analyse(calls("m", 0.5), b=400), config)
    assert reasons(result) == {"m": ("context window unknown (its card does not state context_tokens)",)}


def test_when_every_model_is_disqualified_there_is_no_top_model() -> None:
    result = ranked(calls("a", 0.5), "constraints: {min_accuracy: 0.9}")
    assert result.ranked == () and result.top_model == ""


def test_a_model_whose_every_call_failed_scores_0_and_fails_an_accuracy_floor() -> None:
    runs = calls("ok", 0.75) + [EvalRun("down", f"t{t}", "acc", None, error=True) for t in range(3)]
    result = ranked(runs, "constraints: {min_accuracy: 0.5}")
    assert reasons(result) == {"down": ("accuracy 0.0% below the required 50.0%",)}


def test_with_failed_calls_left_out_a_model_whose_every_call_failed_has_no_accuracy() -> None:
    runs = calls("ok", 0.75) + [EvalRun("down", f"t{t}", "acc", None, error=True) for t in range(3)]
    result = ranked(runs, "constraints: {min_accuracy: 0.5}", failed_calls="exclude")
    assert reasons(result) == {"down": ("accuracy unknown (no completed call)",)}


# --- honesty about resolution ---------------------------------------------------------------------


def test_top_two_the_suite_cannot_separate_get_the_too_close_sentence_naming_what_differs() -> None:
    runs = calls("sim_small", 0.75, cost=0.001, latency=300.0) + calls("sim_frontier", 0.83, cost=0.01, latency=900.0)
    result = ranked(runs, "metrics: {weights: {accuracy: 0.55, cost: 0.25, latency: 0.2}}")
    close = result.too_close
    assert close is not None and (close.model_a, close.model_b) == ("sim_small", "sim_frontier")
    board = analyse(runs, b=400)
    assert close.tasks_needed is None and board.pair(1, 2).tasks_needed is None
    sentence = too_close_sentence(close)
    assert sentence.startswith("sim_small and sim_frontier are too close to call on accuracy")
    assert "would separate them" not in sentence and "coming from cost and speed" in sentence


def test_a_separated_top_two_get_no_too_close_sentence() -> None:
    runs = calls("strong", 1.0, tasks=40) + calls("weak", 0.1, tasks=40)
    assert ranked(runs).too_close is None


def test_the_too_close_sentence_names_only_the_weighted_metrics_that_differ() -> None:
    runs = calls("a", 0.75, cost=0.001) + calls("b", 0.83, cost=0.001, latency=900.0)
    close = ranked(runs, "metrics: {weights: {accuracy: 0.5, cost: 0.25, latency: 0.25}}").too_close
    assert close is not None and close.differing == ("speed",)


def test_with_statistics_disabled_there_are_no_pairs_and_no_too_close_sentence() -> None:
    runs = calls("a", 0.75) + calls("b", 0.83)
    board, result = evaluate(runs, parse_config("statistics: {enabled: false}", "c.yml"))
    assert not board.pairs_computed and result is not None and result.too_close is None


# --- trials -----------------------------------------------------------------------------------------


def test_a_tasks_score_is_the_mean_over_its_trials() -> None:
    runs = [EvalRun("m", "t", "acc", s, trial=i) for i, s in enumerate((1.0, 0.0, 1.0))]
    assert analyse(runs, b=400).rows[0].mean_score == pytest.approx(2 / 3)


def test_trials_are_resampled_as_cases_not_as_calls() -> None:
    """Three trials of each task give the same interval as one record of the task's mean."""
    tasks = [0.25, 0.875, 0.5, 0.75, 0.125, 1.0, 0.375, 0.625]  # exact in binary: three of each average to it
    once = [EvalRun("m", f"t{i}", "acc", s) for i, s in enumerate(tasks)]
    thrice = [EvalRun("m", f"t{i}", "acc", s, trial=k) for i, s in enumerate(tasks) for k in range(3)]
    a, b = analyse(once, b=400).rows[0], analyse(thrice, b=400).rows[0]
    assert (a.mean_ci_lo, a.mean_ci_hi, a.tasks_completed) == (b.mean_ci_lo, b.mean_ci_hi, b.tasks_completed)


def test_the_same_model_task_and_trial_twice_is_a_duplicate() -> None:
    runs = [EvalRun("m", "t", "acc", 1.0, trial=1), EvalRun("m", "t", "acc", 0.0, trial=1)]
    with pytest.raises(InvalidEvalRuns, match=r"duplicate \(model_id, task_id, trial\)"):
        analyse(runs, b=400)


def test_two_records_of_a_task_without_trials_are_still_a_duplicate() -> None:
    runs = [EvalRun("m", "t", "acc", 1.0, error=False), EvalRun("m", "t", "acc", 0.0, error="x")]
    with pytest.raises(InvalidEvalRuns, match=r"duplicate \(model_id, task_id\)"):
        analyse(runs, b=400)


def test_failed_trials_are_left_out_of_the_tasks_mean_when_failed_calls_are_excluded() -> None:
    runs = [EvalRun("m", "t", "acc", 1.0, trial=1), EvalRun("m", "t", "acc", None, error="timeout", trial=2)]
    board = analyse(runs, b=400, failed_calls="exclude")
    assert board.rows[0].mean_score == 1.0 and board.n_runs == 2


def test_cost_per_1k_calls_counts_every_trial_as_a_call() -> None:
    runs = [EvalRun("m", "t", "acc", 1.0, cost_usd=c, trial=i) for i, c in enumerate((0.001, 0.003))]
    assert ranked(runs).ranked[0].metrics.values["cost"] == pytest.approx(2.0)


# --- one engine -------------------------------------------------------------------------------------


def test_with_no_configuration_the_leaderboard_is_exactly_analyses() -> None:
    runs = calls("a", 0.5) + calls("b", 0.75)
    board, result = evaluate(runs)
    assert result is None and board == analyse(runs)


def test_a_what_if_reweighting_is_the_same_function_on_the_same_records() -> None:
    runs = calls("cheap", 0.75, cost=0.001) + calls("dear", 0.83, cost=0.010)
    config = parse_config("metrics: {weights: {accuracy: 1}}", "c.yml")
    _, live = evaluate(runs, with_weights(config, {"accuracy": 0.6, "cost": 0.4}))
    _, what_if = evaluate(runs, parse_config("metrics: {weights: {accuracy: 0.6, cost: 0.4}}", "c.yml"))
    assert live is not None and what_if is not None
    assert [(r.model_id, r.composite) for r in live.ranked] == [(r.model_id, r.composite) for r in what_if.ranked]


def test_composites_are_finite_numbers_from_0_to_1() -> None:
    runs = calls("a", 0.5, cost=0.001) + calls("b", 0.9, cost=0.02, latency=100.0)
    result = ranked(runs, "metrics: {weights: {accuracy: 1, cost: 1, latency: 1, error_rate: 1}}")
    assert all(r.composite is not None and math.isfinite(r.composite) and 0 <= r.composite <= 1 for r in result.ranked)


def test_records_built_in_code_with_an_invalid_cost_are_refused_with_the_problem() -> None:
    runs = calls("a", 0.5)
    runs[0] = EvalRun("a", "t00", "acc", 1.0, cost_usd=-1.0)
    with pytest.raises(InvalidEvalRuns, match="record #0: cost_usd: must be a finite number >= 0"):
        ranked(runs)
