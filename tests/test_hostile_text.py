"""Hostile inputs, third round (issue 17): composite text, configuration, loading, size and time.

The GitHub, baseline and artifact items of the issue are tested beside their modules.
"""

from __future__ import annotations

import json
import re
import shutil
import unicodedata
from pathlib import Path

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from test_action import run_action
from test_composite import calls, ranked

from leaderboard import EvalRun, analyse, load_runs
from leaderboard.composite import rank
from leaderboard.config import Card, Config, parse_config, parse_weights
from leaderboard.report.composite import SECTION_LIMIT, composite_dict, composite_method, composite_section
from leaderboard.report.document import COMMENT_LIMIT, comment_body, comment_length, summary_markdown
from leaderboard.report.formatting import p_value
from leaderboard.trials import failures
from leaderboard.validation import InvalidEvalRuns

HOSTILE = "x` <img src=https://evil.example/p.png> [click](https://evil.example) @admin `y"


def html(markdown: str) -> str:
    """As GitHub renders it: cmark-gfm with its extensions."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def assert_inert(markdown: str) -> None:
    """No image, link or mention made live: every hostile word sits inside a code span."""
    rendered = html(markdown)
    assert "<img" not in rendered and 'href="https://evil' not in rendered
    outside = re.sub(r"<code>.*?</code>", "", rendered, flags=re.S)
    assert "@admin" not in outside and "evil.example" not in outside


# --- 1, 2: metric names in the composite's own sentences ------------------------------------------


def test_a_weighted_custom_metric_some_model_lacks_is_named_inertly_in_the_warning_and_its_fix() -> None:
    runs = calls("a", 0.75, metrics={HOSTILE: 0.5}) + calls("b", 0.5)
    result = ranked(runs, f"metrics: {{weights: {{accuracy: 0.5, {json.dumps(HOSTILE)}: 0.5}}}}")
    section = composite_section(result)
    warning = next(part for part in section.split("\n\n") if part.startswith("> [!WARNING]"))
    assert "To fix, report ``x` <img" in warning and "for these models." in warning
    assert_inert(section)


def test_the_too_close_sentence_names_custom_metrics_and_categories_inertly() -> None:
    runs = [
        EvalRun(m, f"t{t}", "acc", 1.0 if t % 2 else 0.0, category=HOSTILE, metrics={"@team": v})
        for m, v in (("a", 0.9), ("b", 0.1))
        for t in range(6)
    ]
    text = f"metrics: {{weights: {{accuracy: 0.4, {json.dumps(HOSTILE)}: 0.3, '@team': 0.3}}}}"
    result = ranked(runs, text)
    assert result.too_close is not None and set(result.too_close.differing) == {"@team"}
    section = composite_section(result)
    assert "is coming from `@team`." in section
    assert_inert(section)


def test_the_too_close_sentence_counts_the_metrics_past_the_first_five() -> None:
    metrics = {f"m{k}": 0.1 * k for k in range(8)}
    runs = calls("a", 0.75, metrics=metrics) + calls("b", 0.75, metrics={k: v + 0.05 for k, v in metrics.items()})
    result = ranked(runs, "metrics: {weights: {accuracy: 0.2, " + ", ".join(f"m{k}: 0.1" for k in range(8)) + "}}")
    sentence = composite_section(result)
    assert "is coming from `m0`, `m1`, `m2`, `m3`, `m4` and 3 more weighted metrics." in sentence
    assert result.too_close is not None and len(composite_dict(result)["too_close"]["differing"]) == 8  # type: ignore[index]


# --- 10, 15: numbers in the configuration ---------------------------------------------------------


def test_weights_whose_sum_overflows_are_a_configuration_error_at_metrics_weights() -> None:
    with pytest.raises(InvalidEvalRuns) as caught:
        parse_config("metrics:\n  weights:\n    accuracy: 1.0e+308\n    cost: 1.0e+308\n", "leaderboard.yml")
    (problem,) = caught.value.problems
    assert (problem.file, problem.line, problem.field) == ("leaderboard.yml", 3, "metrics.weights")
    assert "scale them down" in problem.message


def test_overflowing_weights_from_code_or_the_command_line_are_refused_too() -> None:
    runs = calls("a", 0.75) + calls("b", 0.5)
    config = Config(weights={"accuracy": 1e308, "error_rate": 1e308}, file="c.yml")
    with pytest.raises(InvalidEvalRuns) as caught:
        rank(runs, analyse(runs, b=400), config)
    assert caught.value.problems[0].field == "metrics.weights"
    with pytest.raises(ValueError, match="scale them down"):
        parse_weights("accuracy=1e308,cost=1e308")


def test_a_single_huge_weight_is_only_a_ratio() -> None:
    result = ranked(calls("a", 0.75) + calls("b", 0.5), "metrics: {weights: {accuracy: 1.0e+308}}")
    assert result.weights == {"accuracy": 1.0}


@pytest.mark.parametrize(
    ("written", "yaml11"),
    [("010", "8"), ("0x10", "16"), ("1:30", "90"), ("1_0", "10"), ("0b11", "3"), ("0o7", None), ("+0x1", "1")],
)
def test_a_yaml_1_1_number_is_refused_not_read_as_another_number(written: str, yaml11: str | None) -> None:
    with pytest.raises(InvalidEvalRuns) as caught:
        parse_config(f"constraints:\n  min_context_tokens: {written}\n", "leaderboard.yml")
    (problem,) = caught.value.problems
    assert (problem.line, problem.field) == (2, "constraints.min_context_tokens")
    if yaml11 is not None:
        assert f"YAML 1.1 would read it as {yaml11}" in problem.message


def test_plain_decimal_numbers_including_yaml_1_2_exponents_are_read() -> None:
    config = parse_config("metrics: {weights: {accuracy: 0.6, cost: 4e-1, latency: 1.5E+0}}", "c.yml")
    assert config.weights == {"accuracy": 0.6, "cost": 0.4, "latency": 1.5}
    with pytest.raises(InvalidEvalRuns, match="got a string '4e-1'"):
        parse_config("metrics: {weights: {cost: '4e-1'}}", "c.yml")  # quoted: a string, as written


# --- 13: error values that mean "no error" --------------------------------------------------------


def test_an_error_of_0_false_or_empty_is_no_error_in_csv_and_json(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text(
        "model_id,task_id,metric_name,score,error\nm,t1,acc,1,0\nm,t2,acc,1,false\nm,t3,acc,1,\nm,t4,acc,1,FALSE\n"
    )
    lines = [{"model_id": "n", "task_id": f"t{k}", "metric_name": "acc", "score": 1, "error": e} for k, e in
             enumerate(["false", "0", "", False])]  # fmt: skip
    (tmp_path / "b.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    runs = load_runs([str(tmp_path / "a.csv"), str(tmp_path / "b.jsonl")])
    assert not any(r.failed for r in runs) and failures(runs).calls == 0
    assert {row.model_id: row.tasks_completed for row in analyse(runs, b=400).rows} == {"m": 4, "n": 4}


def test_an_error_of_1_or_true_or_a_reason_is_a_failure() -> None:
    assert [EvalRun("m", "t", "acc", None, error=e).failed for e in (True, "1", "true", "timeout")] == [True] * 4
    assert [EvalRun("m", "t", "acc", 1.0, error=e).failed for e in (False, "0", "false", "")] == [False] * 4


def test_failed_calls_are_counted_by_model_and_a_model_with_none_completed_is_named_when_they_are_left_out() -> None:
    runs = [*calls("a", 0.5, failed=2), EvalRun("down", "t00", "acc", None, error="timeout")]
    f = failures(runs, "exclude")
    assert (f.calls, f.by_model, f.unranked) == (3, (("a", 2), ("down", 1)), ("down",))
    assert failures(runs, "zero").unranked == ()


# --- 14: capability cards -------------------------------------------------------------------------

NFC = unicodedata.normalize("NFC", "modèle-é")
NFD = unicodedata.normalize("NFD", NFC)


def test_a_card_keyed_in_nfd_is_the_card_of_the_model_kept_in_nfc() -> None:
    runs = calls(NFC, 0.75) + calls("other", 0.5)
    text = f"constraints: {{min_context_tokens: 100000}}\nmodels:\n  {json.dumps(NFD)}: {{context_tokens: 8000}}\n"
    result = ranked(runs, text)
    assert [r.model_id for r in result.disqualified] == [NFC]
    assert result.disqualified[0].reasons == ("context window 8,000 tokens below the required 100,000",)
    assert result.unmatched_cards == ()


def test_a_card_written_in_both_spellings_is_a_duplicate_key() -> None:
    with pytest.raises(InvalidEvalRuns, match="spelled otherwise"):
        parse_config(f"models:\n  {json.dumps(NFC)}: {{}}\n  {json.dumps(NFD)}: {{}}\n", "c.yml")


def test_a_card_from_code_keyed_in_nfd_still_applies() -> None:
    runs = calls(NFC, 0.75) + calls("other", 0.5)
    config = parse_config("constraints: {min_context_tokens: 100000, allow_unknown_card: true}", "c.yml")
    from dataclasses import replace

    result = rank(runs, analyse(runs, b=400), replace(config, models={NFD: Card(context_tokens=8000)}))
    assert [r.model_id for r in result.disqualified] == [NFC]


def test_a_card_that_matches_no_model_is_warned_about_in_the_section_and_the_report() -> None:
    result = ranked(calls("gpt-4o", 0.75) + calls("b", 0.5), "models:\n  gpt-4o-typo: {context_tokens: 8000}\n")
    assert result.unmatched_cards == ("gpt-4o-typo",)
    assert "has a card for `gpt-4o-typo`, but no model of that id is in the data" in composite_section(result)
    assert composite_dict(result)["unmatched_cards"] == ["gpt-4o-typo"]


# --- 18, 20: size -------------------------------------------------------------------------------------


def wide_composite(models: int = 60, categories: int = 40) -> list[EvalRun]:
    """Every model lacks a different weighted category: one warning per category, long names."""
    names = [f"category-{c:02d}-" + "n" * 180 for c in range(categories)]
    return [
        EvalRun(f"org/model-{m:02d}-" + "v" * 80, f"t{c}-{k}", "acc", ((m + c + k) % 7) / 7, category=names[c])
        for m in range(models)
        for c in range(categories)
        if (m + c) % 3  # a model lacks a third of the categories
        for k in range(2)
    ]


def test_sixty_models_by_forty_weighted_categories_keep_the_section_bounded_and_say_where_the_rest_is() -> None:
    runs = wide_composite()
    board = analyse(runs, b=400)
    weights = ", ".join(f"{json.dumps(c)}: 1" for c in board.categories)
    result = rank(runs, board, parse_config(f"metrics: {{weights: {{{weights}}}}}", "c.yml"))
    assert len(result.unknown) == 40
    section = composite_section(result)
    assert comment_length(section) <= SECTION_LIMIT
    assert section.count("> [!WARNING]") == 6 and "35 more weighted metrics are unknown" in section
    assert "`composite.unknown_weighted`" in section
    assert "more terms (the JSON report's `composite.weights`)" in composite_method(result)
    body = comment_body(board, key="k", title="t", run_url=None, sections=[section]).text
    assert comment_length(body) <= COMMENT_LIMIT


def test_a_comment_whose_sections_alone_do_not_fit_leaves_sections_out_and_says_so() -> None:
    board = analyse(calls("a", 0.75) + calls("b", 0.5), b=400)
    huge = "> " + "word " * 20_000
    body = comment_body(board, key="k", title="t", run_url=None, sections=["### Small", huge]).text
    assert comment_length(body) <= COMMENT_LIMIT and "### Small" in body and huge not in body
    assert "The leaderboard and 1 section above it are too large to show here." in body


def test_the_comment_never_says_the_job_summary_has_the_categories_when_it_does_not() -> None:
    runs = [EvalRun(m, f"t{t}", "acc", (t % 5) / 4, category=f"cat-{t:05d}-" + "c" * 40) for m in "ab" for t in
            range(20_000)]  # fmt: skip
    board = analyse(runs, b=400, pairs=False)
    summary = summary_markdown(board, title="t")
    assert not summary.categories
    body = comment_body(board, key="k", title="t", run_url=None, summary=summary).text
    note = next(line for line in body.splitlines() if "Not shown here" in line)
    assert "the categories" in note and "The job summary has every model and not the categories" in note
    assert "`leaderboard.md` (the `markdown` output) has every model and category" in note


# --- 23: p-values at the Monte Carlo floor ----------------------------------------------------------


@pytest.mark.parametrize(
    ("p", "shown"), [(1 / 4001, "< 0.001"), (0.00099, "< 0.001"), (0.001, "0.001"), (0.03, "0.03")]
)
def test_a_p_value_below_0_001_prints_as_such(p: float, shown: str) -> None:
    assert p_value(p) == shown


def test_the_report_keeps_the_p_value_the_comment_shows_as_below_0_001(tmp_path: Path) -> None:
    runs = calls("strong", 1.0, tasks=40) + calls("weak", 0.1, tasks=40)
    board = analyse(runs, b=400)
    assert 0 < board.pair(1, 2).p_adjusted < 0.001
    assert "| < 0.001 |" in comment_body(board, key="k", title="t", run_url=None).text


# --- end to end: the action's log, comment, summary and report ----------------------------------------


def composite_workspace(tmp_path: Path, records: list[dict[str, object]], config: str) -> Path:
    ws = tmp_path / "workspace"
    (ws / "results").mkdir(parents=True)
    (ws / ".github").mkdir()
    (ws / "results" / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (ws / ".github" / "leaderboard.yml").write_text(config)
    return ws


def record(model: str, task: str, score: float | None, **extra: object) -> dict[str, object]:
    return {"model_id": model, "task_id": task, "metric_name": "acc", "score": score, **extra}


def test_the_composite_log_lines_show_a_newline_or_ansi_escape_in_an_id_and_forge_nothing(
    tmp_path: Path, fake_github
) -> None:
    evil = "evil\n::error::forged\x1b[31mred"
    records = [record(m, f"t{t}", s) for m, s in ((evil, 1.0), ("good", 0.2), ("bad", 0.0)) for t in range(4)]
    ws = composite_workspace(tmp_path, records, "constraints: {min_accuracy: 0.5}\n")
    result = run_action(ws, fake_github.url)
    assert result.code == 0, result.stdout + result.stderr
    assert "\x1b" not in result.stdout and "::error::forged" not in result.stdout.splitlines()
    assert "Top model on the composite: evil\\n::error::forged\\x1b[31mred" in result.stdout
    assert "DISQUALIFIED good: accuracy 20.0% below the required 50.0%" in result.stdout


def test_a_weighted_metric_with_markup_in_its_name_reaches_the_comment_inert(tmp_path: Path, fake_github) -> None:
    records = [record(m, f"t{t}", 0.5 + 0.1 * (m == "a"), metrics={HOSTILE: 0.5} if m == "a" else {})
               for m in "ab" for t in range(4)]  # fmt: skip
    ws = composite_workspace(tmp_path, records, f"metrics: {{weights: {{accuracy: 0.5, {json.dumps(HOSTILE)}: 0.5}}}}")
    result = run_action(ws, fake_github.url)
    assert result.code == 0, result.stdout + result.stderr
    (comment,) = fake_github.thread()
    assert "To fix, report ``x`" in comment["body"]
    assert_inert(comment["body"])
    assert_inert(result.summary)


def test_failed_calls_are_counted_in_the_comment_summary_report_and_log(tmp_path: Path, fake_github) -> None:
    ws = tmp_path / "workspace"
    (ws / "results").mkdir(parents=True)
    rows = ["model_id,task_id,metric_name,score,error"]
    rows += [f"best,t{t},acc,1,0" for t in range(4)]  # 0: no error, never a reason for one
    rows += [f"mid,t{t},acc,0.5,{'timeout' if t == 0 else ''}" for t in range(4)]
    rows += [f"down,t{t},acc,,1" for t in range(4)]
    (ws / "results" / "calls.csv").write_text("\n".join(rows) + "\n")
    result = run_action(ws, fake_github.url, runs="results/*.csv")
    assert result.code == 0, result.stdout + result.stderr
    (comment,) = fake_github.thread()
    said = "5 failed calls (`error` set) are scored 0"
    for text in (comment["body"], result.summary, (ws / result.outputs["markdown"]).read_text()):
        assert said in text and "Failed calls by model: `down` 4, `mid` 1." in text
    assert "5 failed calls (error set) are scored 0" in result.stdout
    report = json.loads((ws / result.outputs["report"]).read_text())
    assert report["failures"] == {
        "calls": 5,
        "scored": "zero",
        "by_model": {"down": 4, "mid": 1},
        "unranked_models": [],
    }
    assert result.outputs["top-model"] == "best" and report["counts"]["models"] == 3


def test_a_card_matching_no_model_is_an_annotation_at_its_line(tmp_path: Path, fake_github) -> None:
    records = [record(m, f"t{t}", 0.5) for m in "ab" for t in range(4)]
    ws = composite_workspace(tmp_path, records, "models:\n  a: {context_tokens: 8000}\n  gpt-typo: {}\n")
    result = run_action(ws, fake_github.url)
    assert result.code == 0, result.stdout + result.stderr
    (warning,) = [line for line in result.stdout.splitlines() if "card matches no model" in line]
    assert warning.startswith("::warning file=.github/leaderboard.yml,line=3,")


def test_sixty_models_by_forty_weighted_categories_post_a_comment_that_fits(tmp_path: Path, fake_github) -> None:
    runs = wide_composite()
    categories = sorted({r.category for r in runs})
    weights = "".join(f"    {json.dumps(c)}: 1\n" for c in categories)
    records = [record(r.model_id, r.task_id, r.score, category=r.category) for r in runs]
    ws = composite_workspace(tmp_path, records, f"metrics:\n  weights:\n{weights}")
    result = run_action(ws, fake_github.url, bootstrap_samples="400")
    assert result.code == 0, result.stdout + result.stderr
    (comment,) = fake_github.thread()
    assert comment_length(comment["body"]) <= COMMENT_LIMIT and "### Composite ranking" in comment["body"]
    shutil.rmtree(ws)
