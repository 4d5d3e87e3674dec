"""The clustering diagnostic's claims-only table is the full clustered table's claims, made without the
per-task pass where the models of a pair ran one task set."""

from __future__ import annotations

import numpy as np
import pytest

from leaderboard import EvalRun
from leaderboard.stats.cache import prepared
from leaderboard.stats.design import Design
from leaderboard.stats.pairs import pair_table
from leaderboard.stats.rows import model_rows

CLAIMS = ("a", "b", "n_shared", "mean_diff", "ci_lo", "ci_hi", "p_value", "p_adjusted", "method", "reason_code")


def runs(missing: float, seed: int) -> list[EvalRun]:
    rng = np.random.default_rng(seed)
    skill = rng.normal(0, 0.05, 8)
    out = []
    for m in range(8):
        for t in range(300):
            if rng.random() >= missing:
                score = float(np.clip(0.5 + skill[m] + 0.02 * (t % 5) + rng.normal(0, 0.2), 0, 1))
                out.append(EvalRun(f"model-{m}", f"task-{t:03d}", "acc", round(score, 2), f"cat-{t % 6}"))
    return out


@pytest.mark.parametrize(("missing", "seed"), [(0.0, 1), (0.0, 2), (0.1, 3)])
def test_the_claims_only_table_makes_the_claims_the_full_clustered_table_makes(missing: float, seed: int) -> None:
    ready = prepared(runs(missing, seed), 400, 0, "none", "ignore")
    assert ready is not None and ready.theta is not None
    matrix, engine = ready.matrix, ready.engine
    _, means, _ = model_rows(matrix, ready.theta, 0.05, "mean", ready.design)
    order = [int(k) for k in np.argsort(-means, kind="stable")]
    shown = pair_table(matrix, engine, ready.theta, means, order, 0.05, "holm", ready.design)
    categories = np.asarray(matrix.category_index.max(axis=0))
    clustered = Design(categories, tuple(matrix.categories), None)
    empty = np.zeros((0, engine.b))
    full = pair_table(matrix, engine, empty, means, order, 0.05, "holm", clustered)
    claims = pair_table(matrix, engine, empty, means, order, 0.05, "holm", clustered, shown=shown)
    for name in CLAIMS:
        np.testing.assert_array_equal(getattr(claims, name), getattr(full, name), err_msg=name)
    np.testing.assert_array_equal(claims.n_clusters, full.n_clusters)
