"""The comment body: marker, footer, and the size budget that never cuts inside a table."""

from __future__ import annotations

import re

import numpy as np
from conftest import demo_suite, run

from leaderboard import analyse
from leaderboard.report.document import (
    COMMENT_LIMIT,
    comment_body,
    comment_length,
    compose,
    marker,
    rejected_body,
    same_content,
    summary_markdown,
)
from leaderboard.validation import Problem


def big_board(models: int, tasks: int = 30, pairs: bool = True):
    rng = np.random.default_rng(0)
    runs = [
        run(f"organisation-{m:03d}/some-long-model-name-v{m}", f"t{t}", float(rng.random()), f"category-{t % 9}")
        for m in range(models)
        for t in range(tasks)
    ]
    return analyse(runs, b=400, pairs=pairs)


def tables_are_whole(text: str) -> bool:
    """Every table keeps its header, separator and rows of the same width."""
    for block in re.split(r"\n\n+", text):
        lines = [line for line in block.splitlines() if line.startswith("|")]
        if lines and (len(lines) < 2 or not set(lines[1]) <= set("|-: ")):
            return False
        if len({line.replace("\\|", "").count("|") for line in lines}) > 1:
            return False
    return True


def test_the_marker_is_the_first_line() -> None:
    body = comment_body(analyse(demo_suite()), key="gpu/a100", title="Evals", run_url=None).text
    assert body.split("\n", 1)[0] == marker("gpu/a100") == "<!-- leaderboard-action:gpu/a100 -->"


def test_a_small_board_shows_everything_with_parameters_and_run_link() -> None:
    board = analyse(demo_suite())
    body = comment_body(board, key="k", title="Evals", run_url="https://github.com/o/r/actions/runs/1").text
    assert "Pairwise comparisons (3 of 3 pairs)" in body and "Categories (3)" in body
    assert "<sub>3 models × 12 tasks · 36 runs</sub>" in body
    assert "Not shown here" not in body
    assert body.rstrip().endswith("<sub>[Workflow run](https://github.com/o/r/actions/runs/1)</sub>")


def test_bodies_that_differ_only_in_the_run_link_have_the_same_content() -> None:
    board = analyse(demo_suite())
    a = comment_body(board, key="k", title="t", run_url="https://x/runs/1").text
    b = comment_body(board, key="k", title="t", run_url="https://x/runs/2").text
    assert a != b and same_content(a, b)
    assert not same_content(a, comment_body(analyse(demo_suite(seed=1)), key="k", title="t", run_url=None).text)


def test_at_sixty_models_the_comment_keeps_the_leader_against_everyone_and_says_what_is_left_out() -> None:
    board = big_board(60)
    summary = summary_markdown(board, title="t")
    composed = comment_body(board, key="k", title="t", run_url=None, summary=summary)
    assert composed.leader_pairs == 59 and composed.shown_models == 60
    assert comment_length(composed.text) <= COMMENT_LIMIT and tables_are_whole(composed.text)
    left = 1770 - composed.leader_pairs - composed.neighbour_pairs - composed.other_pairs
    assert f"{left:,} of the 1,770 pairs" in composed.text
    assert "The job summary has every model, 1,000 of the 1,770 pairs and the categories" in composed.text


def test_what_fits_is_kept_in_priority_order() -> None:
    composed = comment_body(big_board(700, tasks=3, pairs=False), key="k", title="t", run_url=None)
    assert comment_length(composed.text) <= COMMENT_LIMIT and tables_are_whole(composed.text)
    assert 100 < composed.shown_models < 700 and f"{700 - composed.shown_models} more models" in composed.text
    # One more row would not fit: the largest count that fits is kept.
    assert not composed.categories or composed.shown_models == 700


def test_the_budget_is_met_exactly_at_the_limit() -> None:
    board = big_board(40)
    full = compose(board, head=["x"], limit=10**9, measure=len, elsewhere="").text
    for limit in (len(full), len(full) - 1, 30_000, 12_000):
        composed = compose(board, head=["x"], limit=limit, measure=len, elsewhere="elsewhere")
        assert len(composed.text) <= limit and tables_are_whole(composed.text)
        assert composed.leader_pairs == 39  # never dropped while anything else is shown
    assert compose(board, head=["x"], limit=len(full), measure=len, elsewhere="").text == full


def test_the_summary_keeps_more_than_the_comment() -> None:
    board = big_board(60)
    summary, comment = summary_markdown(board, title="t"), comment_body(board, key="k", title="t", run_url=None)
    assert summary.other_pairs > comment.other_pairs and summary.categories


def test_non_bmp_characters_count_twice_against_the_limit() -> None:
    assert comment_length("😀") == 2 and comment_length("é") == 1


def test_the_rejection_body_lists_problems_safely() -> None:
    problems = [Problem("1.5 is outside [0, 1]", "evals/r.jsonl", 3, "score"), Problem("<b>@x</b>", "a|b.csv", 2)]
    body = rejected_body(problems, key="k", title="Evals", run_url=None)
    assert body.startswith(marker("k") + "\n") and "**The latest eval run was rejected**: 2 problems" in body
    assert "`a\\|b.csv`" in body and "`<b>@x</b>`" in body and tables_are_whole(body)


def test_a_rejection_with_huge_values_still_fits_one_comment() -> None:
    problems = [Problem(f"duplicate {'x' * 70_000}", f"f{i}.jsonl", i, "task_id") for i in range(400)]
    body = rejected_body(problems, key="k", title="T" * 100_000, run_url=None)
    assert comment_length(body) <= COMMENT_LIMIT and "400 problems" in body and tables_are_whole(body)


def test_a_huge_title_is_cut_with_an_ellipsis() -> None:
    body = comment_body(analyse(demo_suite()), key="k", title="T" * 100_000, run_url=None).text
    assert comment_length(body) <= COMMENT_LIMIT and ("T" * 199 + "…") in body
