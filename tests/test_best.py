"""The verdict and the top group: a confidence set for the best, from each model's M - 1 one-sided comparisons."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from conftest import EXAMPLE

from leaderboard import EvalRun, analyse
from leaderboard.loading import load_file
from leaderboard.report.verdict import verdict
from leaderboard.stats.best import best_set

LEADER = "Qwen/Qwen3-Embedding-0.6B"


def records(scores: np.ndarray) -> list[EvalRun]:
    return [
        EvalRun(f"m{m:02d}", f"t{t:04d}", "acc", float(scores[m, t]))
        for m in range(scores.shape[0])
        for t in range(scores.shape[1])
    ]


def with_models_far_below(runs: list[EvalRun], count: int) -> list[EvalRun]:
    """The suite with ``count`` more models, each about half the weakest model's score (distinct noise)."""
    rng = np.random.default_rng(0)
    weakest = [r for r in runs if r.model_id == "sentence-transformers/all-MiniLM-L6-v2"]
    return runs + [
        replace(r, model_id=f"far-below-{k}", score=float(np.clip((r.score or 0.0) * 0.5 + rng.normal(0, 0.05), 0, 1)))
        for k in range(count)
        for r in weakest
    ]


def test_models_far_below_do_not_change_who_is_best() -> None:
    runs = load_file(EXAMPLE)
    six, fifteen = analyse(runs), analyse(with_models_far_below(runs, 9))
    assert six.top_group == fifteen.top_group == (LEADER,)
    assert verdict(fifteen).startswith(f"**`{LEADER}` is best**, significantly ahead of every other model")


def test_each_model_is_held_to_alpha_over_its_own_comparisons() -> None:
    board = analyse(with_models_far_below(load_file(EXAMPLE), 9))
    assert board.best is not None
    assert board.best.comparisons == 14
    assert board.best.per_comparison == 0.05 / 14


def test_a_model_is_left_out_exactly_when_another_is_ahead_of_it_one_sided_at_alpha_over_m_minus_1() -> None:
    rng = np.random.default_rng(5)
    truth = 0.6 - 0.01 * np.arange(10)
    scores = np.clip(truth[:, None] + rng.normal(0, 0.15, 200)[None, :] + rng.normal(0, 0.1, (10, 200)), 0, 1)
    board = analyse(records(scores))
    table, level = board.pairs, 0.05 / 9
    for k, model in enumerate(table.ranked_ids):
        ahead = False
        for p in range(len(table)):
            if k not in (int(table.a[p]), int(table.b[p])):
                continue
            d = float(table.mean_diff[p]) * (1 if int(table.b[p]) == k else -1)  # the other model minus this one
            # The pair's own interval as computed (the table's reaches 0 where Holm over all pairs did not decide).
            excludes = int(table.own_side[p]) == (1 if int(table.b[p]) == k else -1)
            ahead |= d > 0 and float(table.p_value[p]) / 2 <= level and excludes
        assert (model in board.top_group) is not ahead


def test_the_best_rank_is_1_exactly_for_the_set_and_at_least_2_for_the_rest() -> None:
    rng = np.random.default_rng(7)
    truth = 0.6 - 0.02 * np.arange(8)
    scores = np.clip(truth[:, None] + rng.normal(0, 0.1, (8, 300)), 0, 1)
    board = analyse(records(scores))
    assert board.best is not None
    for row in board.rows:
        assert (row.rank_lo == 1) is (row.model_id in board.best.members)
        assert row.rank_lo is not None and row.rank_hi is not None and row.rank_lo <= row.rank_hi


def test_without_correction_the_set_is_the_per_pair_view() -> None:
    rng = np.random.default_rng(7)
    scores = np.clip(0.6 - 0.02 * np.arange(6)[:, None] + rng.normal(0, 0.1, (6, 100)), 0, 1)
    board = analyse(records(scores), correction="none")
    table = board.pairs
    behind = set(table.b[table.significant].tolist())
    assert set(board.top_group) == {i for k, i in enumerate(table.ranked_ids) if k not in behind}
    assert board.best is not None and not board.best.family


def test_one_model_is_its_own_set() -> None:
    board = analyse(records(np.full((1, 10), 0.5)))
    assert best_set(board.pairs).members == board.pairs.ranked_ids
