"""Sign-flip p-values that reach any level a family needs, at any scale of the differences."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from generators import differences, exact_p, spread_suite

from leaderboard import EvalRun, analyse
from leaderboard.cli import main as cli_main
from leaderboard.stats.comparison import compare
from leaderboard.stats.signflip import tail_p
from leaderboard.stats.significance import (
    BINOMIAL,
    ERROR_BOUND,
    EXACT,
    EXACT_MAX_NONZERO,
    SADDLEPOINT,
    holm,
    scaled_rows,
    sign_flip_test,
)


def importance_sampled_p(d: np.ndarray, draws: int, rng: np.random.Generator) -> tuple[float, float]:
    """Two-sided p and its standard error by exponential tilting: signs drawn at the saddlepoint's t."""
    v, s = np.abs(d), abs(float(d.sum()))
    t = s / float(v @ v)
    for _ in range(200):  # Newton on K'(t) = s, independently of the code under test
        th = np.tanh(t * v)
        t += (s - float(v @ th)) / float((v * v) @ (1.0 - th * th))
    plus = 1.0 / (1.0 + np.exp(-2.0 * t * v))  # P(+) under the tilt: e^{tv} / (2 cosh tv)
    log_cosh = np.abs(t * v) + np.log1p(np.exp(-2.0 * np.abs(t * v))) - math.log(2.0)
    signs = np.where(rng.random((draws, v.size)) < plus, 1.0, -1.0)
    sums = signs @ v
    weight = np.exp(log_cosh.sum() - t * sums) * (sums >= s - 1e-9)
    return 2.0 * float(weight.mean()), 2.0 * float(weight.std() / math.sqrt(draws))


# --- large suites -------------------------------------------------------------------------------


def test_fifty_models_on_200_continuous_tasks_separate_most_of_their_1225_pairs() -> None:
    # Was 0 of 1,225: a Monte Carlo p could not reach Holm's first level 0.05 / 1,225.
    board = analyse(spread_suite(50, 200, seed=23))
    assert len(board.pairs) == 1225
    assert int(board.pairs.significant.sum()) > 800
    assert board.rows[0].rank_hi < 10 and board.rows[-1].rank_lo > 40


def test_a_p_past_the_exact_limit_reaches_far_below_holms_first_level() -> None:
    d = np.random.default_rng(1).normal(0.1, 0.2, (1, 200))
    p, method = sign_flip_test(d)
    assert method[0] == SADDLEPOINT
    assert 0.0 < p[0] < 0.05 / 1225 / 100


# --- accuracy against exact and high-precision references -------------------------------------


@pytest.mark.parametrize("kind", ["continuous", "rounded", "rubric", "heavy"])
@pytest.mark.parametrize("k", [EXACT_MAX_NONZERO + 1, 30])
def test_the_saddlepoint_is_within_its_bound_of_the_exact_enumeration_or_above_it(kind: str, k: int) -> None:
    rng = np.random.default_rng(k)
    checked = 0
    for _ in range(25):
        d = differences(kind, k, rng)
        truth = exact_p(d)
        if d.size <= EXACT_MAX_NONZERO or truth > 0.2:
            continue
        approx = float(tail_p(np.abs(scaled_rows(d[None, :])), np.abs(scaled_rows(d[None, :]).sum(axis=1)), 1e-12)[0])
        # Never more than the stated relative error below the exact p; above it only by Chernoff's bound.
        assert approx >= truth * (1.0 - ERROR_BOUND)
        assert approx <= truth * (1.0 + ERROR_BOUND) or approx <= truth * 16
        checked += 1
    assert checked >= 5


@pytest.mark.parametrize("kind", ["continuous", "rounded", "heavy"])
@pytest.mark.parametrize("k", [200, 5000])
def test_the_saddlepoint_agrees_with_importance_sampling_far_into_the_tail(kind: str, k: int) -> None:
    rng = np.random.default_rng(k + len(kind))
    for shift in (0.0, 0.5, 1.0):
        d = differences(kind, k, rng)
        d = d - d.mean() + shift * d.std() * 5.0 / math.sqrt(d.size)  # z about 0, 2.5 and 5
        p, method = sign_flip_test(d[None, :])
        reference, se = importance_sampled_p(d, 20_000 if k == 200 else 4_000, rng)
        assert method[0] == SADDLEPOINT
        assert abs(p[0] - reference) <= ERROR_BOUND * reference + 4.0 * se


@pytest.mark.parametrize(
    ("models", "tasks", "binary"),
    [(10, 20, True), (10, 5000, False), (30, 200, False), (60, 50, False), (20, 1000, True), (40, 300, False)],
)
def test_holms_decisions_agree_with_those_of_a_high_precision_reference(models: int, tasks: int, binary: bool) -> None:
    board = analyse(spread_suite(models, tasks, seed=models + tasks, binary=binary))
    table = board.pairs
    rng = np.random.default_rng(0)
    tested = table.member & np.isfinite(table.p_value)
    reference = table.p_value.copy()
    uncertain = np.zeros(len(table), dtype=bool)
    by_id = {}
    for r in spread_suite(models, tasks, seed=models + tasks, binary=binary):
        by_id[(r.model_id, r.task_id)] = r.score
    task_ids = sorted({t for _, t in by_id})
    for k in np.flatnonzero(tested & (table.method == SADDLEPOINT)):
        a, b = table.ranked_ids[int(table.a[k])], table.ranked_ids[int(table.b[k])]
        d = np.array([by_id[(a, t)] - by_id[(b, t)] for t in task_ids])
        d = d[np.abs(d) > 1e-12]
        if table.p_value[k] < 1e-12:
            continue  # far below every level: the decision cannot move
        reference[k], se = importance_sampled_p(d, 4000, rng)
        uncertain[k] = abs(reference[k] - table.p_value[k]) > 0 and se > 0.1 * reference[k]
    assert set(table.method[tested].tolist()) <= {EXACT, BINOMIAL, SADDLEPOINT}
    mine = holm(table.p_value[tested]) <= board.alpha
    theirs = holm(reference[tested]) <= board.alpha
    near = np.abs(np.log(np.maximum(holm(reference[tested]), 1e-300) / board.alpha)) < math.log(1.0 + 2 * ERROR_BOUND)
    assert ((mine == theirs) | near | uncertain[tested]).all()


# --- weights: only their ratios matter ----------------------------------------------------------


def weighted_pair(weight: float, rng_seed: int = 4) -> list[EvalRun]:
    rng = np.random.default_rng(rng_seed)
    a = np.clip(rng.normal(0.55, 0.2, 60), 0, 1)
    b = np.clip(a - rng.normal(0.06, 0.15, 60), 0, 1)
    ratio = np.where(np.arange(60) % 3 == 0, 1.0, 0.5)  # unequal weights, the same ratios at every scale
    return [
        EvalRun(m, f"t{t:03d}", "acc", float(s[t]), weight=float(weight * ratio[t]))
        for m, s in (("a", a), ("b", b))
        for t in range(60)
    ]


def test_the_sign_flip_p_does_not_depend_on_the_scale_of_the_differences() -> None:
    d = np.random.default_rng(2).normal(0.05, 0.2, (3, 40)) * np.where(np.arange(40) % 2, 3.0, 1.0)
    base, _ = sign_flip_test(d)
    for scale in (1e-12, 3e7, 1e300):
        assert sign_flip_test(d * scale)[0].tolist() == pytest.approx(base.tolist(), rel=1e-9)


@pytest.mark.parametrize("scale", [1e-12, 3e7, 1e300, 1e308])
def test_weights_of_any_magnitude_give_the_decisions_and_p_of_weights_near_1(scale: float) -> None:
    (one,) = analyse(weighted_pair(1.0), weights="apply").pairs
    (scaled,) = analyse(weighted_pair(scale), weights="apply").pairs
    assert scaled.p_value == pytest.approx(one.p_value, rel=1e-9)
    assert scaled.significant == one.significant
    assert scaled.mean_diff == pytest.approx(one.mean_diff, rel=1e-12)


@pytest.mark.parametrize("scale", [1e-12, 3e7, 1e300])
def test_the_gate_with_weights_of_any_magnitude_decides_as_with_weights_near_1(scale: float) -> None:
    def gate(weight: float) -> tuple[list[str], float]:
        base = [
            EvalRun("m", r.task_id, "acc", r.score, weight=r.weight) for r in weighted_pair(weight) if r.model_id == "a"
        ]
        pr = [
            EvalRun("m", r.task_id, "acc", r.score, weight=r.weight) for r in weighted_pair(weight) if r.model_id == "b"
        ]
        result = compare(base, pr, b=400, alpha=0.05, seed=0, weights="apply", fail_on_regression=True)
        return [c.model_id for c in result.regressions], result.models[0].p_value

    regressed, p = gate(1.0)
    assert regressed == ["m"]
    assert gate(scale) == (regressed, pytest.approx(p, rel=1e-9))


def test_a_weight_of_1e308_is_accepted_and_the_json_report_is_finite(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    lines = [
        {"model_id": r.model_id, "task_id": r.task_id, "metric_name": "acc", "score": r.score, "weight": r.weight}
        for r in weighted_pair(1e308)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = tmp_path / "report.json"
    assert cli_main([str(path), "--task-weights", "apply", "--json", str(report)]) == 0
    text = report.read_text()
    assert "NaN" not in text and "Infinity" not in text
    (pair,) = json.loads(text)["pairs"]
    (reference,) = analyse(weighted_pair(1.0), weights="apply").pairs
    assert pair["p_value"] == pytest.approx(reference.p_value, rel=1e-9)
