"""A weighted comparison over more than EXACT_LIMIT shared tasks resamples as the leaderboard resamples the
weighted pair "this run vs. baseline": the Poisson bootstrap of the weighted means."""

from __future__ import annotations

import numpy as np

from leaderboard import EvalRun
from leaderboard.stats import cache
from leaderboard.stats.comparison import _poisson_shifts, compare
from leaderboard.stats.resampling import EXACT_LIMIT
from leaderboard.stats.weights import normalised

B, SEED = 400, 11


def scores(n: int) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    base = rng.random(n).round(3)
    pr = np.clip(base + rng.normal(0.02, 0.1, n), 0.0, 1.0).round(3)
    return [f"task-{k:05d}" for k in range(n)], base, pr, 1.0 + np.arange(n) % 4


def records(model: str, tasks: list[str], values: np.ndarray, weights: np.ndarray) -> list[EvalRun]:
    return [EvalRun(model, t, "acc", float(v), weight=float(w)) for t, v, w in zip(tasks, values, weights, strict=True)]


def test_a_weighted_change_over_many_tasks_is_resampled_as_the_leaderboards_weighted_pair() -> None:
    tasks, base, pr, weights = scores(EXACT_LIMIT + 300)
    # The leaderboard's view of the same scores: the two sides as two models of one run, weights applied.
    cache.forget()
    ready = cache.prepared(records("base", tasks, base, weights) + records("pr", tasks, pr, weights), B, SEED, "none",
                           "apply")  # fmt: skip
    assert ready is not None and ready.theta is not None
    at = {m: k for k, m in enumerate(ready.matrix.model_ids)}
    pair = ready.engine.pairs([(at["pr"], at["base"])], ready.theta)
    shifts = _poisson_shifts(pr[None, :], base[None, :], tasks, np.arange(len(tasks)), B, SEED, normalised(weights))
    np.testing.assert_array_equal(shifts, pair)


def test_a_weighted_change_over_many_tasks_has_an_interval_around_its_weighted_mean() -> None:
    tasks, base, pr, weights = scores(EXACT_LIMIT + 300)
    found = compare(records("m", tasks, base, weights), records("m", tasks, pr, weights), b=B, alpha=0.05,
                    seed=SEED, weights="apply").models[0]  # fmt: skip
    expected = float(((pr - base) * weights).sum() / weights.sum())
    assert abs(found.delta - expected) < 1e-12
    assert found.ci_lo < found.delta < found.ci_hi
