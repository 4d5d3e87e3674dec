"""The verdict-first document: what a reviewer reads in ten seconds, at 2 or 500 models."""

from __future__ import annotations

import re

import cmarkgfm
import numpy as np
import pytest
from cmarkgfm.cmark import Options
from conftest import EXAMPLE, realdata, run

from leaderboard import analyse, load_runs
from leaderboard.report.document import (
    COMMENT_LIMIT,
    Commit,
    comment_body,
    comment_length,
    full_markdown,
    verdict,
)
from leaderboard.report.formatting import decimals_for, difference, interval, labels, p_value, shorten, tasks_cell


def gfm(markdown: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def suite(gaps: list[float], n: int = 40, seed: int = 0, noise: float = 0.01) -> list:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.3, 0.6, n)
    runs = []
    for m, gap in enumerate(gaps):
        scores = np.clip(base + gap + rng.normal(0, noise, n), 0, 1)
        runs += [run(f"m{m}", f"t{t:02d}", float(s)) for t, s in enumerate(scores)]
    return runs


# --- the verdict ----------------------------------------------------------------------------------


def test_the_verdict_is_the_first_thing_under_the_title() -> None:
    body = comment_body(analyse(suite([0.2, 0.0])), key="k", title="Evals", run_url=None).text
    blocks = body.split("\n\n")
    assert blocks[1] == "## Evals" and blocks[2].startswith("**`m0` is best**")


def test_a_clear_winner_is_named_with_its_lead_over_the_second() -> None:
    text = verdict(analyse(suite([0.2, 0.1, 0.0])))
    assert text.startswith("**`m0` is best**, significantly ahead of every other model: it leads `m1` by +0.1")
    assert "on the 40 tasks both ran (95% CI [+0.09" in text


def test_two_models_tied_for_first_are_too_close_to_call_with_what_the_suite_can_detect() -> None:
    board = analyse(suite([0.004, 0.0, -0.3], noise=0.05))
    assert set(board.top_group) == {"m0", "m1"}
    text = verdict(board)
    assert text.startswith("**No clear winner**: `m0` leads `m1` by +0.0") and "too close to call" in text
    detectable = board.detectable()
    assert detectable is not None
    assert f"this suite cannot resolve a gap this small; it detects about ±{detectable.difference:.3f}" in text
    assert "would separate" not in text
    assert text.count("`m1`") == 1


def test_three_models_tied_for_first_name_the_top_two_and_count_the_third() -> None:
    board = analyse(suite([0.004, 0.0, 0.002, -0.3], noise=0.05))
    text = verdict(board)
    top, second = board.rows[0].model_id, board.rows[1].model_id
    assert len(board.top_group) == 3 and set(board.top_group[:2]) == {top, second}
    assert text.startswith(f"**No clear winner**: `{top}`, `{second}` and 1 other model are statistically tied")
    assert text.count("`") == 4  # the third is in the table, ranked with them


def test_a_long_top_group_is_named_in_part() -> None:
    board = analyse(suite([0.0] * 9, noise=0.05))
    assert len(board.top_group) > 5
    text = verdict(board)
    assert f"and {len(board.top_group) - 2} other models are statistically tied for first" in text
    assert text.count("`") == 4  # two named, in code spans


def test_one_model_has_nothing_to_be_compared_with() -> None:
    assert "is the only model" in verdict(analyse([run("solo", "t", 0.5)]))


def test_the_info_line_names_models_tasks_and_the_linked_commit() -> None:
    board = analyse(suite([0.1, 0.0]))
    commit = Commit("0123456789abcdef", "https://github.com/o/r/commit/0123456789abcdef")
    body = comment_body(board, key="k", title="t", run_url=None, commit=commit).text
    assert (
        "<sub>2 models × 40 tasks · 80 runs · commit [`0123456`](https://github.com/o/r/commit/0123456789abcdef)</sub>"
    ) in body
    assert "**Settings**: 95% intervals, 500 resamples, seed 0, claims family-wise (Holm)." in body


def test_swe_bench_says_the_top_two_are_tied_naming_both_in_full() -> None:
    board = analyse(load_runs([str(realdata("swebench_verified.jsonl"))]))
    text = verdict(board)
    first, second = board.rows[0].model_id, board.rows[1].model_id
    assert text.startswith("**No clear winner**") and f"`{first}`" in text and f"`{second}`" in text


# --- the main table -------------------------------------------------------------------------------


def test_the_top_ten_rows_are_open_and_the_rest_in_details() -> None:
    board = analyse(suite([0.01 * k for k in range(14)]))
    body = full_markdown(board, title="t")
    open_part, details = body.split("<details><summary>Rows 11–14</summary>", 1)
    assert open_part.count("\n| ") == 1 + 10 and details.split("</details>")[0].count("\n| ") == 1 + 4


def test_rows_show_rank_ranges_vs_next_marks_and_missing_tasks() -> None:
    runs = suite([0.2, 0.2, 0.0])
    runs = [r for r in runs if not (r.model_id == "m2" and r.task_id == "t00")]
    body = full_markdown(analyse(runs), title="t")
    rows = [line for line in body.splitlines() if line.startswith("| 1") or line.startswith("| 3")]
    assert rows[0].startswith("| 1–2 | `m") and " ≈ |" in rows[0]  # the tied pair: not significant
    assert rows[1].startswith("| 1–2 | `m") and " ✓ |" in rows[1]
    assert rows[2].startswith("| 3 | `m2` |") and rows[2].endswith("| 39/40 |")


def test_the_example_renders_every_section_with_whole_ids() -> None:
    body = full_markdown(analyse(load_runs([str(EXAMPLE)])), title="t")
    assert "| `sentence-transformers/all-MiniLM-L6-v2` |" in body
    assert "**The leader against every model**" in body and "**Each model against the next**" in body
    assert "Categories (7)" in body and "| `Summarization` | 1 ⚠ |" in body


def test_a_category_best_shared_by_several_models_is_no_clear_best() -> None:
    runs = [run(m, f"t{t}", s, "easy") for m, s in (("a", 1.0), ("b", 1.0), ("c", 0.5)) for t in range(8)]
    runs += [run(m, f"u{t}", s, "hard") for m, s in (("a", 0.9), ("b", 0.2), ("c", 0.1)) for t in range(3)]
    body = full_markdown(analyse(runs), title="t")
    assert "| `easy` | 8 | no clear best |" in body
    assert "| `hard` | 3 ⚠ | no winner named (< 5 tasks) |" in body


def test_rendered_text_never_links_an_issue_number() -> None:
    html = gfm(full_markdown(analyse(load_runs([str(EXAMPLE)])), title="t"))
    outside = re.sub(r"<code>.*?</code>", "", html, flags=re.S)
    assert not re.search(r"#[0-9]", outside)


# --- labels ------------------------------------------------------------------------------------


def test_ids_up_to_48_characters_stay_whole() -> None:
    ident = "x" * 48
    assert labels([ident]) == {ident: ident}


def test_longer_ids_are_shortened_in_the_middle_keeping_the_end() -> None:
    ident = "organisation-name/a-very-long-model-family-name-instruct-2025-06-30-v1.16"
    label = labels([ident])[ident]
    assert len(label) == 48 and label.endswith("2025-06-30-v1.16") and label.startswith("organisation") and "…" in label


def test_no_two_rows_ever_show_the_same_label() -> None:
    stem = "20251124_mini-v1.16-some-very-long-agent-scaffold-name-with-a-model-"
    ids = [stem + tail for tail in ("claude-opus", "claude-opus-2", "x" * 30 + "-a", "x" * 30 + "-b")]
    shown = labels(ids)
    assert len(set(shown.values())) == len(ids)


def test_shorten_keeps_the_requested_width() -> None:
    assert len(shorten("a" * 200, 48)) == 48 and shorten("abc", 48) == "abc"


# --- numbers that agree with the verdicts -------------------------------------------------------


def test_three_decimals_and_more_where_two_values_would_print_alike() -> None:
    assert decimals_for([0.744, 0.742]) == 3
    assert decimals_for([0.7441, 0.7444]) == 4
    assert decimals_for([0.3, 0.1 + 0.2]) == 3  # equal to the tie tolerance: one value


def test_interval_ends_are_rounded_outward() -> None:
    assert interval(0.6464, 0.7611) == "[0.646,\u00a00.762]"
    assert interval(0.29, 0.29) == "[0.290,\u00a00.290]"


def test_a_significant_difference_never_prints_a_zero_or_wrong_signed_end() -> None:
    value, ci, extended = difference(0.0021, 0.0004, 0.0042, significant=True)
    assert (value, ci, extended) == ("+0.0021", "[+0.0004,\u00a0+0.0042]", False)
    value, ci, _ = difference(-0.01, -0.02, -0.0001, significant=True)
    assert ci == "[−0.0200,\u00a0−0.0001]" and value == "−0.0100"


def test_a_non_significant_difference_prints_its_computed_interval_never_a_moved_one() -> None:
    assert difference(0.01, -0.004, 0.03, significant=False) == ("+0.010", "[−0.004,\u00a0+0.030]", False)
    # The bootstrap excluded 0 but the test did not confirm it: the interval as computed, flagged for words.
    assert difference(0.02, 0.004, 0.04, significant=False) == ("+0.020", "[+0.004,\u00a0+0.040]", True)


@pytest.mark.parametrize("seed", range(5))
def test_every_printed_pair_agrees_with_its_decision(seed: int) -> None:
    rng = np.random.default_rng(seed)
    runs = [run(f"m{m}", f"t{t}", float(rng.random() < 0.4 + 0.05 * m)) for m in range(6) for t in range(30)]
    body = full_markdown(analyse(runs), title="t")
    for line in body.splitlines():
        found = re.search(r"\[([+−]?[0-9.]+),\s([+−]?[0-9.]+)\]", line)
        if not found or "Significant" in line or not re.search(r"(✓ yes|no:)", line):
            continue
        lo, hi = (float(v.replace("−", "-").replace("+", "")) for v in found.groups())
        if "✓ yes" in line:
            assert lo * hi > 0, line
        elif lo * hi > 0:
            assert "the test did not confirm it" in line, line  # said in words, never by moving the interval


def test_tasks_cell_flags_missing_tasks() -> None:
    assert tasks_cell(41, 41) == "41" and tasks_cell(40, 41) == "40/41"


# --- scale ------------------------------------------------------------------------------------------


def test_five_hundred_models_with_long_ids_and_forty_categories_fit_one_comment() -> None:
    rng = np.random.default_rng(0)
    ids = [f"organisation-{m:03d}/" + "model-family-name-" * 3 + f"{m:03d}"[:80] for m in range(500)]
    ids = [i[:80] for i in ids]
    runs = [
        run(ids[m], f"t{t:02d}", float(np.clip(0.3 + 0.0008 * m + rng.normal(0, 0.1), 0, 1)), f"category-{t % 40}")
        for m in range(500)
        for t in range(80)
    ]
    # Per pair, most leader pairs are "✓ yes"; family-wise, more carry their longer reason, so fewer fit.
    for correction, leader_pairs in (("none", 499), ("holm", 300)):
        board = analyse(runs, b=400, correction=correction)  # type: ignore[arg-type]
        composed = comment_body(board, key="k", title="Evals", run_url="https://github.com/o/r/actions/runs/1")
        assert comment_length(composed.text) <= COMMENT_LIMIT
        assert composed.text.split("\n\n")[2].startswith(("**", "`"))  # the verdict
        assert composed.shown_models >= 10 and composed.leader_pairs >= leader_pairs
        assert "Not shown here" in composed.text


# --- found in review ------------------------------------------------------------------------------


def test_a_pipe_in_an_id_shows_as_a_pipe_in_running_text_and_in_tables() -> None:
    board = analyse([run("a|b", f"t{i}", 0.9) for i in range(3)] + [run("c", f"t{i}", 0.1) for i in range(3)])
    html = gfm(full_markdown(board, title="t"))
    assert "a\\|b" not in html and html.count("<code>a|b</code>") >= 3


def test_ids_that_differ_only_in_invisible_or_other_space_characters_never_look_alike() -> None:
    body = full_markdown(analyse([run("tab\there", "t", 0.5), run("tab here", "t", 0.4)]), title="t")
    assert "`tab\\x09here`" in body and "`tab here`" in body


def test_a_leader_behind_the_second_on_their_shared_tasks_is_not_said_to_lead_by_a_negative_gap() -> None:
    runs = [run("A", f"t{i}", 0.5 if i < 3 else 1.0) for i in range(6)] + [run("B", f"t{i}", 0.6) for i in range(3)]
    text = verdict(analyse(runs))
    assert " leads " not in text and "`A` is behind `B` by 0.100 on the 3 tasks both ran" in text
    assert "too few shared tasks" in text


@pytest.mark.parametrize(
    ("p", "alpha", "shown"),
    [(0.0504, 0.05, "0.0504"), (0.05004, 0.05, "0.05004"), (0.05, 0.05, "0.05"), (0.0496, 0.05, "0.05"),
     (0.01159, 0.0116, "0.0116"), (0.3, 0.05, "0.3")],
)  # fmt: skip
def test_a_p_value_never_prints_on_the_other_side_of_alpha(p: float, alpha: float, shown: str) -> None:
    assert p_value(p, alpha) == shown
    assert (float(shown) <= alpha) == (p <= alpha)
