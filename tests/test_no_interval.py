"""A difference with no interval (one shared cluster): the difference is shown, and why there is no interval."""

from __future__ import annotations

import math

import numpy as np

from leaderboard import EvalRun, analyse
from leaderboard.report.comparison import full_section, gate_line
from leaderboard.report.document import render_report, verdict
from leaderboard.report.formatting import DASH, difference
from leaderboard.report.markdown import pairwise_table
from leaderboard.stats.comparison import compare


def one_cluster(model: str, solved: int, tasks: int = 20) -> list[EvalRun]:
    return [EvalRun(model, f"t{k:02d}", "acc", float(k < solved), category="all", cluster="only") for k in range(tasks)]


RUNS = one_cluster("a", 16) + one_cluster("b", 10)


def test_a_difference_without_an_interval_is_shown_with_the_words_given() -> None:
    assert difference(0.3, math.nan, math.nan, False, missing="no interval") == ("+0.300", "no interval", False)
    assert difference(math.nan, math.nan, math.nan, False) == (DASH, DASH, False)


def test_the_verdict_gives_the_lead_and_says_one_cluster_gives_no_interval() -> None:
    board = analyse(RUNS, cluster_by="cluster")
    assert board.pairs[0].mean_diff == 0.3 and math.isnan(board.pairs[0].ci_lo)
    text = verdict(board)
    assert "`a` leads `b` by +0.300 (no interval: one cluster, 20 shared tasks)" in text
    assert "—" not in text


def test_the_pairwise_table_and_vs_next_show_the_difference() -> None:
    text = render_report(analyse(RUNS, cluster_by="cluster"))
    assert "| 1–2 | `b` | +0.300 | no interval: one cluster | 1 |" in text
    assert "| 1–2 | `a` | 0.800 | 1 cluster | +0.300 ≈ |" in text


def test_the_plain_pairwise_table_says_one_cluster_gives_no_interval() -> None:
    text = pairwise_table(analyse(RUNS, cluster_by="cluster").pairs)
    assert "| 20 | 0.30 | no interval: one cluster |" in text


def test_the_baseline_table_shows_the_change_and_says_one_cluster_gives_no_interval() -> None:
    base, pr = one_cluster("m", 10), one_cluster("m", 16)
    comparison = compare(base, pr, b=400, alpha=0.05, seed=0, cluster_by="cluster")
    (change,) = comparison.models
    assert change.delta == 0.3 and math.isnan(change.ci_lo)
    assert "| `m` | 0.500 | 0.800 | +0.300 (no interval: one cluster) | ➖ no detectable change" in full_section(
        comparison, "base"
    )
    assert "Δ +0.300, no interval: one cluster, over 20 shared tasks" in gate_line(change, 0.05)


def test_a_clustered_verdict_too_close_to_call_speaks_of_clusters() -> None:
    assert "their 1 shared cluster does not separate the top two at this level" in verdict(
        analyse(RUNS, cluster_by="cluster")
    )


def test_two_clusters_still_give_an_interval() -> None:
    rng = np.random.default_rng(0)
    runs = [
        EvalRun(m, f"t{k:02d}", "acc", float(rng.random() < p), cluster=f"k{k % 2}")
        for m, p in (("a", 0.8), ("b", 0.5))
        for k in range(40)
    ]
    assert "no interval" not in verdict(analyse(runs, cluster_by="cluster"))
