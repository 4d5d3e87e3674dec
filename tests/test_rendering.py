"""Markdown and JSON output: golden files, escaping as GitHub renders it, the report schema."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from conftest import EXAMPLE, demo_suite, run, words

from leaderboard import analyse, load_runs
from leaderboard.report.document import render_markdown, render_report
from leaderboard.report.json_report import render_json
from leaderboard.report.markdown import (
    confidence_label,
    leaderboard_table,
    md_code,
    md_text,
    truncate,
)
from leaderboard.stats.parameters import min_resamples

GOLDEN = Path(__file__).parent / "golden"


def gfm(markdown: str) -> str:
    """HTML as GitHub renders it: cmark-gfm with its extensions and the tag filter."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} changed; UPDATE_GOLDEN=1 rewrites it"


def test_demo_table_matches_the_golden_file() -> None:
    board = analyse(demo_suite())
    check_golden("demo-table.md", render_markdown(list(board.rows), board.alpha))


def test_example_report_matches_the_golden_file() -> None:
    board = analyse(load_runs([str(EXAMPLE)]))
    check_golden("example-report.md", render_report(board, title="MTEB(eng, v2) sample"))


def test_example_json_report_matches_the_golden_file() -> None:
    check_golden("example-report.json", render_json(analyse(load_runs([str(EXAMPLE)]))))


def test_table_has_the_specified_columns_and_two_decimals() -> None:
    board = analyse([run("gpt", f"t{i}", s) for i, s in enumerate((0.7, 0.78, 0.8, 0.84))])
    lines = leaderboard_table(board.rows, 0.05).splitlines()
    assert lines[0] == "| Rank | Model | Mean | 95% CI | Win rate | Tasks |"
    assert lines[2] == "| 1 | `gpt` | 0.78 | 0.54-0.92 | 1.00 | 4 |"


def test_an_uninformative_ci_says_why_instead_of_a_zero_width_interval() -> None:
    board = analyse([run("same", f"t{i}", 0.7) for i in range(4)] + [run("one", "t0", 0.5)])
    table = leaderboard_table(board.rows, 0.05)
    assert "| `same` | 0.70 | all equal |" in table and "| `one` | 0.50 | n=1 |" in table


@pytest.mark.parametrize(("alpha", "label"), [(0.05, "95%"), (0.1, "90%"), (0.025, "97.5%"), (0.01, "99%")])
def test_ci_label_follows_alpha(alpha: float, label: str) -> None:
    assert confidence_label(alpha) == label
    board = analyse([run("m", "t", 0.5)], alpha=alpha, b=min_resamples(alpha))
    assert f"| {label} CI |" in render_report(board)


def test_long_model_ids_are_cut_to_twenty_characters_with_an_ellipsis() -> None:
    assert truncate("sentence-transformers/all-MiniLM-L6-v2") == "sentence-transforme…"
    assert len(truncate("x" * 50)) == 20 and truncate("x" * 20) == "x" * 20


def test_the_documents_show_ids_whole() -> None:
    board = analyse([run("sentence-transformers/all-MiniLM-L6-v2", "t", 0.5), run("short", "t", 0.4)])
    assert "| `sentence-transformers/all-MiniLM-L6-v2` |" in render_report(board)


HOSTILE = [
    "evil|model",
    "`code` break",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "@octocat please",
    "[click](https://evil.example)",
    "www.evil.example",
    "https://evil.example/x",
    "line\nbreak | x",
    "fixes #123",
    "**bold** _em_",
    "\u202egnp.exe",
    "```",
]


def tags(html: str) -> list[str]:
    return sorted(re.findall(r"<(/?[a-z0-9]+)", html))


def cells_outside_code(html: str) -> str:
    return re.sub(r"<code>.*?</code>", "", html, flags=re.S)


@pytest.mark.parametrize("model_id", HOSTILE)
def test_hostile_ids_cannot_break_the_table_or_inject_anything(model_id: str) -> None:
    board = analyse([run(model_id, "task", 0.9, "cat|<b>"), run("plain", "task", 0.1, "cat|<b>")])
    html = gfm(render_report(board))
    for table in re.findall(r"<table>.*?</table>", html, flags=re.S):
        widths = {len(re.findall(r"<t[dh][ >]", row)) for row in re.findall(r"<tr>.*?</tr>", table, flags=re.S)}
        assert len(widths) == 1, table
    outside = cells_outside_code(html)
    assert "<script" not in html and "<img" not in html and "<a " not in html
    assert "@" not in outside and "<b>" not in outside
    # The data adds no markup: the tags outside code spans are the template's, as with a plain id.
    plain = analyse([run("x", "task", 0.9, "c"), run("plain", "task", 0.1, "c")])
    assert tags(outside) == tags(cells_outside_code(gfm(render_report(plain))))


@pytest.mark.parametrize("text", HOSTILE)
def test_md_code_shows_the_text_inside_one_code_span(text: str) -> None:
    html = gfm(md_code(text))
    assert html.count("<code>") == 1 and "<a " not in html


def test_titles_are_inert_text() -> None:
    html = gfm(md_text("Evals for @team: see [here](https://x.example) <b>now</b> #4 www.x.example"))
    assert "<a " not in html and "<b>" not in html
    assert "@team" not in html  # a zero-width space keeps GitHub from making a mention


def test_cross_references_in_a_title_are_broken_by_a_zero_width_space() -> None:
    html = gfm(md_text("Fixes #123, org/repo#5 and GH-9; see https://github.com/o/r/issues/5"))
    text = html.replace("\u200b", "|")  # where a zero-width space stands
    assert "#|123" in text and "repo#|5" in text and "GH|-9" in text and "https:|//" in text
    assert not re.search(r"#[0-9]|GH-[0-9]|://", html)


def test_cross_references_in_ids_and_categories_stay_inside_code_spans() -> None:
    board = analyse([run("fixes #12", "t", 0.9, "org/repo#5"), run("GH-7", "t", 0.1, "org/repo#5")])
    outside = cells_outside_code(gfm(render_report(board)))
    assert not re.search(r"#[0-9]|GH-[0-9]", outside)


def test_empty_input_renders_a_message() -> None:
    assert "nothing to rank" in render_report(analyse([]))


def test_pairs_with_few_shared_tasks_say_so() -> None:
    board = analyse([run("a", f"t{i}", 0.9) for i in range(3)] + [run("b", f"t{i}", 0.1) for i in range(3)])
    assert "no: too few shared tasks (3 < 6)" in render_report(board)


def test_unapplied_weights_are_said_not_hidden() -> None:
    board = analyse([run("a", "t", 0.5, weight=2.0)])
    assert "weights were ignored" in render_report(board)
    assert json.loads(render_json(board))["weights_ignored"] is True


def test_json_report_holds_parameters_counts_rows_and_pairs_at_full_precision() -> None:
    board = analyse(demo_suite(), b=200, seed=4, alpha=0.1)
    report = json.loads(render_json(board))
    assert report["schema"] == "leaderboard-action/report" and report["schema_version"] == 3
    assert report["parameters"]["alpha"] == 0.1 and report["parameters"]["bootstrap_samples"] == 200
    assert report["parameters"]["seed"] == 4 and report["parameters"]["min_shared_for_significance"] == 5
    assert report["counts"] == {
        "runs": 36, "models": 3, "tasks": 12, "categories": 3, "pairs": 3, "pairs_tested": 3,
        "family": 3, "pairs_significant": sum(p.significant for p in board.pairs), "all_tied_tasks": 0,
    }  # fmt: skip
    assert report["rows"][0]["mean_score"] == board.rows[0].mean_score
    assert [report["rows"][p["a"] - 1]["model_id"] for p in report["pairs"]] == [p.model_a for p in board.pairs]
    for entry, pair in zip(report["pairs"], board.pairs, strict=True):
        assert (entry["ci_lo"], entry["p_value"], entry["significant"]) == (pair.ci_lo, pair.p_value, pair.significant)
        assert (entry["reason"], entry["tasks_needed"], entry["test"]) == (words(pair), pair.tasks_needed, pair.test)


def test_json_report_with_no_pairs_is_valid_json() -> None:
    report = json.loads(render_json(analyse([run("solo", "t", 0.5)])))
    assert report["pairs"] == [] and report["top_group"] == ["solo"]


def test_json_report_writes_null_for_undefined_differences() -> None:
    report = json.loads(render_json(analyse([run("a", "t1", 0.9), run("b", "t2", 0.1)])))
    assert report["pairs"][0]["mean_diff"] is None and report["pairs"][0]["n_shared"] == 0
