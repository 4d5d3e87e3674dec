"""A category's Best: named only where the category's own comparisons support it, never from fewer than 5 tasks."""

from __future__ import annotations

import numpy as np

from leaderboard import EvalRun, analyse
from leaderboard.report.document import render_report
from leaderboard.stats.categories import NoBest


def suite(sizes: dict[str, int], gaps: dict[str, float], models: int = 3, seed: int = 0) -> list[EvalRun]:
    """``models`` models; in each category m00 leads by ``gaps[category]`` per task over the others."""
    rng = np.random.default_rng(seed)
    runs = []
    for category, n in sizes.items():
        base = rng.uniform(0.2, 0.7, n)
        for m in range(models):
            lead = gaps[category] if m == 0 else 0.0
            scores = np.clip(base + lead + rng.normal(0, 0.02, n), 0, 1)
            runs += [
                EvalRun(f"m{m:02d}", f"{category}-{t}", "acc", float(s), category=category)
                for t, s in enumerate(scores)
            ]
    return runs


def claims(board: object) -> dict[str, object]:
    return {c.category: c for c in board.category_best}  # type: ignore[attr-defined]


def test_a_leader_far_ahead_on_enough_tasks_is_named() -> None:
    board = analyse(suite({"code": 40, "math": 40}, {"code": 0.2, "math": 0.2}))
    for claim in claims(board).values():
        assert claim.named and claim.leader == "m00"


def test_fewer_than_five_tasks_name_no_winner_however_large_the_gap() -> None:
    board = analyse(suite({"code": 40, "tiny": 4}, {"code": 0.2, "tiny": 0.5}))
    assert claims(board)["tiny"].why is NoBest.FEW_TASKS
    assert "no winner named (< 5 tasks)" in render_report(board)


def test_a_leader_not_ahead_of_every_model_at_the_level_in_force_is_not_named() -> None:
    board = analyse(suite({"code": 40, "math": 40}, {"code": 0.2, "math": 0.005}))
    assert claims(board)["math"].why is NoBest.NOT_SEPARATED
    assert claims(board)["code"].named


def test_each_comparison_is_held_to_alpha_over_every_comparison_of_the_category_leaders() -> None:
    board = analyse(suite({"a": 20, "b": 20, "c": 3}, {"a": 0.2, "b": 0.2, "c": 0.2}, models=4))
    # Two categories with a candidate, three comparisons each; "c" has too few tasks to be one.
    assert claims(board)["a"].level == 0.05 / 6


def test_without_correction_each_comparison_is_held_to_alpha() -> None:
    board = analyse(suite({"a": 20, "b": 20}, {"a": 0.2, "b": 0.2}), correction="none")
    assert claims(board)["a"].level == 0.05


def test_the_document_says_how_a_best_is_named() -> None:
    text = render_report(analyse(suite({"code": 40, "math": 40}, {"code": 0.2, "math": 0.005})))
    assert "named only when it is ahead of every other model in the category" in text
    assert "no clear best" in text


def spanning(clusters: int, lead: float | np.ndarray, seed: int = 0, models: int = 4) -> list[EvalRun]:
    """Two categories, each over ``clusters`` clusters of 10 tasks; m00 leads by ``lead`` (one per cluster, or
    the same in every cluster) over models that score alike."""
    rng = np.random.default_rng(seed)
    runs = []
    for category in ("code", "math"):
        g = np.repeat(np.arange(clusters), 10)
        base = rng.uniform(0.3, 0.6, g.size)
        for m in range(models):
            own = np.broadcast_to(lead, (clusters,))[g] if m == 0 else 0.0
            scores = np.clip(base + own + rng.normal(0, 0.01, g.size), 0, 1)
            runs += [
                EvalRun(f"m{m:02d}", f"{category}-{t}", "acc", float(s), category=category, cluster=f"r{g[t]}")
                for t, s in enumerate(scores)
            ]
    return runs


def test_a_lead_from_one_cluster_is_named_per_task_but_not_on_the_categorys_clusters() -> None:
    # m00 is far ahead on one of eight clusters' ten tasks and a little behind on the rest.
    runs = spanning(8, np.array([0.5, -0.01, -0.01, -0.01, -0.01, -0.01, -0.01, -0.01]))
    assert claims(analyse(runs))["code"].named
    clustered = claims(analyse(runs, cluster_by="cluster"))["code"]
    assert clustered.clusters == 8 and clustered.why is NoBest.NOT_SEPARATED


def test_a_clear_lead_on_six_clusters_is_named_by_the_cr2_t_test_where_the_sign_flip_cannot_reach() -> None:
    board = analyse(spanning(6, 0.2), cluster_by="cluster")
    claim = claims(board)["code"]
    # Six one-sided comparisons: 0.05 / 6 is below the sign-flip's smallest one-sided p, 1 / 2^6.
    assert claim.level == 0.05 / 6 and claim.level < 1 / 2**6
    assert claim.named and claim.clusters == 6 and claim.p <= claim.level
    assert "the CR2 t-test where it cannot reach that level" in render_report(board)


def test_a_category_on_fewer_clusters_than_a_claim_needs_names_no_winner() -> None:
    board = analyse(spanning(4, 0.3), cluster_by="cluster")
    assert claims(board)["code"].why is NoBest.FEW_CLUSTERS
    assert "no winner named (too few clusters)" in render_report(board)


def test_a_category_that_is_its_own_cluster_keeps_its_tasks_as_the_units() -> None:
    board = analyse(suite({"code": 40, "math": 40}, {"code": 0.2, "math": 0.2}), cluster_by="category")
    assert all(c.named and c.clusters == 0 for c in claims(board).values())


def test_a_leader_winning_every_task_by_the_same_margin_is_named_on_clusters() -> None:
    # Every cluster's sum is in proportion to its size, so the CR2 t's variance is 0 and it is undefined:
    # the cluster sign flips judge the pair (1 / 2^12 is far below the level), as they do the pairs.
    runs = [
        EvalRun(model, f"code-{repo}-{k}", "acc", score, category="code", cluster=f"r{repo}")
        for repo in range(12)
        for k in range(2)
        for model, score in (("strong", 1.0), ("weak", 0.0))
    ]
    claim = claims(analyse(runs, cluster_by="cluster"))["code"]
    assert claim.named and claim.clusters == 12 and claim.p <= claim.level
