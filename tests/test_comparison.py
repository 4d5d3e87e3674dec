"""This run against a baseline: the numbers (leaderboard.stats.comparison), how they are shown
(leaderboard.report.comparison), the CLI, and the JSON report's ``baseline``."""

from __future__ import annotations

import dataclasses
import json
import math
import random
import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLE, ROOT, realdata, run, words
from test_rendering import HOSTILE, cells_outside_code, gfm

from leaderboard import EvalRun, analyse, load_runs
from leaderboard.records import Reason, Why
from leaderboard.report.comparison import comparison_markdown, headline, shown_interval, utf16_length, verdict_text
from leaderboard.report.comparison_json import comparison_dict
from leaderboard.report.comparison_method import rule_text
from leaderboard.report.json_report import render_json, report_dict
from leaderboard.stats.comparison import Comparison, ModelChange, compare

B, ALPHA, SEED = 1000, 0.05, 0


def suite(scores: dict[str, list[float]], category: str = "general") -> list[EvalRun]:
    return [run(m, f"t{t:03d}", s, category) for m, row in scores.items() for t, s in enumerate(row)]


def shifted(runs: list[EvalRun], model: str, by: float, noise: float = 0.0, seed: int = 1) -> list[EvalRun]:
    rng = np.random.default_rng(seed)
    out = []
    for r in runs:
        if r.model_id == model:
            r = dataclasses.replace(r, score=float(np.clip(r.score + by + noise * rng.standard_normal(), 0.0, 1.0)))
        out.append(r)
    return out


def change(comparison: Comparison, model: str) -> ModelChange:
    return next(m for m in comparison.models if m.model_id == model)


def cmp(base: list[EvalRun], pr: list[EvalRun], **kw: object) -> Comparison:
    return compare(base, pr, b=B, alpha=ALPHA, seed=SEED, **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def example() -> list[EvalRun]:
    return load_runs([str(EXAMPLE)])


# --- the numbers ------------------------------------------------------------------------------


def test_an_unchanged_model_has_delta_0_and_no_verdict(example: list[EvalRun]) -> None:
    c = cmp(example, example)
    assert {m.verdict for m in c.models} == {"unchanged"} and len(c.models) == 6
    for m in c.models:
        assert (m.delta, m.ci_lo, m.ci_hi, m.tasks_needed, m.significant) == (0.0, 0.0, 0.0, None, False)
        assert m.base_mean == m.pr_mean and m.n_shared == m.base_tasks == m.pr_tasks
    assert c.regressions == () and c.improvements == ()


def test_scores_equal_to_the_tie_tolerance_are_unchanged() -> None:
    base = suite({"m": [0.1 + 0.2, 0.5, 0.7, 0.2, 0.9, 0.4]})
    pr = suite({"m": [0.3, 0.5 + 1e-13, 0.7, 0.2, 0.9, 0.4]})
    assert change(cmp(base, pr), "m").verdict == "unchanged"


@pytest.mark.parametrize("shift", [-0.02, 0.02])
def test_a_model_shifted_by_a_known_amount_is_found_with_the_right_sign_and_a_ci_containing_the_shift(
    shift: float,
) -> None:
    base = load_runs([str(realdata("mteb_eng_v2.jsonl"))])
    pr = shifted(base, "intfloat/e5-base-v2", shift, noise=0.01)
    c = cmp(base, pr)
    m = change(c, "intfloat/e5-base-v2")
    assert m.verdict == ("regressed" if shift < 0 else "improved")
    assert m.ci_lo < shift < m.ci_hi and abs(m.delta - shift) < 0.005 and m.p_value <= ALPHA
    assert m.n_shared == 41 and math.isclose(m.pr_mean - m.base_mean, m.delta, abs_tol=1e-12)
    assert all(x.verdict == "unchanged" for x in c.models if x is not m)
    assert [x.model_id for x in (c.regressions if shift < 0 else c.improvements)] == ["intfloat/e5-base-v2"]


def test_the_interval_is_the_leaderboards_paired_interval_on_the_same_keyed_draw(example: list[EvalRun]) -> None:
    model = "intfloat/e5-base-v2"
    pr = shifted(example, model, -0.01, noise=0.02)
    # Per model, two-sided (correction none, no gate): exactly a pair of the leaderboard.
    m = change(cmp(example, pr, correction="none"), model)
    # The same comparison as a pair of the leaderboard: the PR's model against its baseline, renamed.
    pair_runs = [r for r in pr if r.model_id == model] + [
        dataclasses.replace(r, model_id="base") for r in example if r.model_id == model
    ]
    (pair,) = analyse(pair_runs, b=B, alpha=ALPHA, seed=SEED, correction="none").pairs
    sign = 1.0 if pair.model_a == model else -1.0
    lo, hi = sorted((sign * pair.ci_lo, sign * pair.ci_hi))
    assert math.isclose(m.ci_lo, lo, abs_tol=1e-12) and math.isclose(m.ci_hi, hi, abs_tol=1e-12)
    assert math.isclose(m.delta, sign * pair.mean_diff, abs_tol=1e-15)
    assert m.p_value == pair.p_value and m.tasks_needed == pair.tasks_needed


def test_the_gate_counts_a_drop_only_when_the_ci_is_below_minus_the_tolerance(example: list[EvalRun]) -> None:
    model = "Qwen/Qwen3-Embedding-0.6B"
    pr = shifted(example, model, -0.02)  # every task 0.02 lower: the CI is about [-0.020, -0.020]
    assert change(cmp(example, pr), model).verdict == "regressed"
    assert change(cmp(example, pr, tolerance=0.01), model).verdict == "regressed"
    within = cmp(example, pr, tolerance=0.03)
    assert change(within, model).verdict == "within tolerance" and change(within, model).significant
    assert within.regressions == ()


def test_improvements_are_never_regressions_whatever_the_tolerance(example: list[EvalRun]) -> None:
    c = cmp(example, shifted(example, "Qwen/Qwen3-Embedding-0.6B", -0.5 + 0.52), tolerance=0.0)
    assert c.regressions == () and [m.model_id for m in c.improvements] == ["Qwen/Qwen3-Embedding-0.6B"]


def test_no_change_carries_a_post_hoc_tasks_needed_and_the_figure_names_the_typical_model() -> None:
    rng = np.random.default_rng(5)
    base_scores = rng.uniform(0.3, 0.7, 40)
    noise = 0.01 * rng.standard_normal(40)
    gaps = (0.004, 0.002, 0.001, 0.0005)
    base = suite({f"m{k}": list(base_scores) for k in range(len(gaps))})
    pr = suite({f"m{k}": list(base_scores + gap + noise) for k, gap in enumerate(gaps)})
    c = cmp(base, pr)
    assert all(m.tasks_needed is None and m.clusters_needed is None for m in c.models)
    assert (
        c.detectable is not None
        and len(c.detectable.pair) == 1
        and c.detectable.pair[0] in {m.model_id for m in c.models}
    )


def test_too_few_shared_tasks_detect_nothing_whatever_the_gap() -> None:
    c = cmp(suite({"m": [0.2] * 5}), suite({"m": [0.9] * 5}))
    m = change(c, "m")
    assert m.verdict == "no detectable change" and words(m) == "too few shared tasks (5 < 6)"


def test_a_bootstrap_ci_that_excludes_0_reaches_0_when_the_exact_test_disagrees() -> None:
    # Five tasks up 0.1, one down 0.01: every resample's mean is above 0 but for the all-down one,
    # while the exact test counts 4 of the 64 sign patterns at least as extreme: p = 0.0625.
    base = suite({"m": [0.5] * 6})
    pr = suite({"m": [0.6] * 5 + [0.49]})
    m = change(cmp(base, pr, correction="none"), "m")  # two-sided, per model
    assert m.p_value == pytest.approx(0.0625) and m.verdict == "no detectable change"
    # The test decides: the interval reaches 0 rather than claim the rise the verdict does not.
    assert m.ci_lo == 0.0 and m.ci_hi > m.delta
    delta, ci, unconfirmed = shown_interval(m)
    assert (delta, unconfirmed) == ("+0.082", False) and ci.startswith("[0.000,")
    assert verdict_text(m, 0.0) == "➖ no detectable change (exact test p = 0.062)"


def test_a_model_with_no_shared_task_is_not_compared() -> None:
    c = cmp([run("m", "a", 0.5)], [run("m", "b", 0.5)])
    m = change(c, "m")
    assert m.verdict == "no detectable change" and words(m) == "no shared tasks" and math.isnan(m.delta)
    assert (c.tasks_added, c.tasks_dropped) == (("b",), ("a",))
    assert shown_interval(m) == ("—", "—", False)


def test_new_and_removed_models_and_added_and_dropped_tasks_are_listed() -> None:
    base = suite({"kept": [0.5] * 8, "gone": [0.4] * 8})
    pr = [r for r in suite({"kept": [0.5] * 10, "fresh": [0.6] * 10}) if r.task_id != "t000"]
    c = cmp(base, pr)
    assert (c.new_models, c.removed_models) == (("fresh",), ("gone",))
    assert (c.tasks_added, c.tasks_dropped) == (("t008", "t009"), ("t000",))
    kept = change(c, "kept")
    assert (kept.n_shared, kept.base_tasks, kept.pr_tasks, kept.verdict) == (7, 8, 9, "unchanged")
    text = comparison_markdown(c, "**Baseline:** files.")
    assert "- 1 new model (not in the baseline, so not compared): `fresh`." in text
    assert "- 1 model only in the baseline (not in this run): `gone`." in text
    assert "- 2 tasks added (not in the baseline): `t008`, `t009`." in text
    assert "- 1 task dropped (only in the baseline): `t000`." in text
    assert "| `kept` | 0.500 | 0.500 | 0.000 | = unchanged | 7 (base 8, PR 9) |" in text


def test_category_deltas_are_the_mean_change_over_each_categorys_shared_tasks() -> None:
    base = [run("m", f"t{t}", 0.5, "math" if t < 4 else "code") for t in range(10)]
    pr = [run("m", f"t{t}", 0.5 + (0.1 if t < 4 else -0.05), "math" if t < 4 else "code") for t in range(10)]
    m = change(cmp(base, pr), "m")
    by = {c.category: (round(c.delta, 12), c.n_shared) for c in m.categories}
    assert by == {"code": (-0.05, 6), "math": (0.1, 4)}


def test_the_comparison_does_not_depend_on_record_order(example: list[EvalRun]) -> None:
    pr = shifted(shifted(example, "intfloat/e5-base-v2", -0.01, noise=0.02), "BAAI/bge-large-en-v1.5", 0.005, 0.01)
    pr = [r for r in pr if not (r.model_id == "BAAI/bge-large-en-v1.5" and r.task_id < "B")]
    first = cmp(example, pr)
    shuffled_base, shuffled_pr = list(example), list(pr)
    random.Random(7).shuffle(shuffled_base)
    random.Random(8).shuffle(shuffled_pr)
    again = cmp(shuffled_base, shuffled_pr)
    assert again == first
    assert json.dumps(comparison_dict(again)) == json.dumps(comparison_dict(first))


def test_re_measured_noise_in_many_models_is_held_to_alpha_overall_with_holm() -> None:
    rng = np.random.default_rng(4)
    scores = rng.uniform(0.3, 0.7, (200, 30))
    base = [run(f"m{m:03d}", f"t{t:02d}", float(scores[m, t])) for m in range(200) for t in range(30)]
    noisy = scores + 0.01 * rng.standard_normal(scores.shape)  # the same models, evaluated again
    pr = [run(f"m{m:03d}", f"t{t:02d}", float(noisy[m, t])) for m in range(200) for t in range(30)]
    per_model = cmp(base, pr, correction="none")
    family = cmp(base, pr)  # the default
    assert 0 < sum(m.significant for m in per_model.models) <= 20  # about alpha x 200 by chance
    assert not any(m.significant for m in family.models)
    assert all(m.p_adjusted >= m.p_value for m in family.models)
    # Each interval at alpha / 200 includes 0 beside each "no detectable change": it says so first.
    assert all(m.ci_lo <= 0.0 <= m.ci_hi and words(m) == "CI includes 0" for m in family.models)


def test_parameters_are_checked() -> None:
    runs = suite({"m": [0.5] * 6})
    with pytest.raises(ValueError, match="tolerance"):
        compare(runs, runs, b=B, alpha=ALPHA, seed=0, tolerance=1.5)
    with pytest.raises(ValueError, match="at least 400"):
        compare(runs, runs, b=100, alpha=ALPHA, seed=0)


def test_an_empty_side_compares_nothing() -> None:
    c = cmp([], suite({"m": [0.5] * 3}))
    assert c.models == () and c.new_models == ("m",) and c.tasks_added == ("t000", "t001", "t002")
    assert headline(c) == "No model is in both the baseline and this run: nothing was compared."


def test_swe_bench_binary_scores_use_the_exact_mcnemar_test() -> None:
    base = load_runs([str(realdata("swebench_verified.jsonl"))])
    model = "20250807_mini-v1.7.0_gpt-5"
    rng = random.Random(3)
    # Fix 40 of the model's failures: a true gain of 0.08.
    failures = [r.task_id for r in base if r.model_id == model and r.score == 0.0]
    fixed = set(rng.sample(failures, 40))
    pr = [dataclasses.replace(r, score=1.0) if r.model_id == model and r.task_id in fixed else r for r in base]
    m = change(cmp(base, pr), model)
    assert m.verdict == "improved" and m.test == "one-sided exact binomial (McNemar)" and m.delta == pytest.approx(0.08)
    assert m.n_shared == 500 and m.ci_lo < 0.08 < m.ci_hi + 1e-12


# --- how the numbers are shown ----------------------------------------------------------------


def made(verdict: str, delta: float, lo: float, hi: float, **kw: object) -> ModelChange:
    fields: dict[str, object] = dict(
        model_id="m", verdict=verdict, n_shared=41, base_mean=0.5, pr_mean=0.5 + delta, delta=delta, ci_lo=lo,
        ci_hi=hi, p_value=0.001, p_adjusted=0.001, test="exact sign-flip", reason=None, tasks_needed=None,
        base_mean_all=0.5, pr_mean_all=0.5 + delta, base_tasks=41, pr_tasks=41,
    )  # fmt: skip
    fields.update(kw)
    return ModelChange(**fields)  # type: ignore[arg-type]


def ends(change: ModelChange) -> tuple[Decimal, Decimal]:
    _, ci, _ = shown_interval(change)
    lo, hi = ci.rstrip("†").strip("[]").replace("−", "-").split(",\u00a0")
    return Decimal(lo), Decimal(hi)


def test_ci_ends_are_rounded_outward_and_deltas_are_signed() -> None:
    assert shown_interval(made("regressed", -0.02, -0.0261, -0.0139)) == ("−0.020", "[−0.027,\u00a0−0.013]", False)
    assert shown_interval(made("improved", 0.0125, 0.0101, 0.0149)) == ("+0.013", "[+0.010,\u00a0+0.015]", False)
    # An end that is already on the grid stays (0.013 is not pushed to 0.014 by binary rounding).
    assert shown_interval(made("improved", 0.02, 0.013, 0.03)) == ("+0.020", "[+0.013,\u00a0+0.030]", False)


def test_a_detected_change_never_shows_an_end_of_0_or_of_the_wrong_sign() -> None:
    assert shown_interval(made("improved", 0.0031, 0.0004, 0.0061)) == ("+0.0031", "[+0.0004,\u00a0+0.0061]", False)
    assert shown_interval(made("regressed", -0.00004, -0.00007, -0.00002)) == (
        "−0.00004", "[−0.00007,\u00a0−0.00002]", False,
    )  # fmt: skip
    rng = np.random.default_rng(11)
    for _ in range(3000):
        a, b = sorted(10.0 ** rng.uniform(-11.9, -0.5, 2))
        up = rng.random() < 0.5
        lo, hi = (a, b) if up else (-b, -a)
        m = made("improved" if up else rng.choice(["regressed", "within tolerance"]), (lo + hi) / 2, lo, hi)
        low, high = ends(m)
        # Outward, to the documents' slack of 1e-7 of the last decimal shown (0.29 stays 0.29).
        assert float(low) <= lo + 1e-7 * abs(lo) + 1e-19 and float(high) >= hi - 1e-7 * abs(hi) - 1e-19
        assert (low > 0) if up else (high < 0), (lo, hi, low, high)


def test_no_detectable_change_shows_its_computed_interval_rounded_outward() -> None:
    rng = np.random.default_rng(12)
    for _ in range(3000):
        lo, hi = sorted(rng.uniform(-0.05, 0.05, 2) * 10.0 ** rng.uniform(-6, 0))
        m = made("no detectable change", (lo + hi) / 2, lo, hi, reason=Reason(Why.TEST, ALPHA, test=1, p=0.1))
        low, high = ends(m)
        assert float(low) <= lo + 1e-10 and float(high) >= hi - 1e-10
        assert float(low) <= float(high) and (float(high) - float(low)) <= (hi - lo) + 0.0021


def test_the_section_lists_regressions_then_improvements_then_the_rest(example: list[EvalRun]) -> None:
    pr = shifted(example, "intfloat/e5-base-v2", -0.03)
    pr = shifted(pr, "jinaai/jina-embeddings-v3", 0.03)
    pr = shifted(pr, "BAAI/bge-large-en-v1.5", 0.0, noise=0.002)
    text = comparison_markdown(cmp(example, pr), "**Baseline:** `main` @ abc.")
    assert text.startswith("### Compared with the base branch\n\n**Baseline:** `main` @ abc.\n\n")
    assert "**1 model regressed**, 1 improved, 4 no detectable change." in text
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert rows[0].startswith("| `intfloat/e5-base-v2` | 0.627 | 0.597 | −0.030 [")
    assert rows[0].endswith("| ❌ **regressed** | 41 |")
    assert rows[1].startswith("| `jinaai/jina-embeddings-v3` |") and "✅ **improved**" in rows[1]
    assert rows[2].startswith("| `BAAI/bge-large-en-v1.5` |") and "➖ no detectable change (" in rows[2]
    assert all("= unchanged" in r for r in rows[3:6])
    assert "<details><summary>Δ by category" in text and "</details>" in text


def test_the_headline_says_when_nothing_changed(example: list[EvalRun]) -> None:
    assert headline(cmp(example, example)) == "No detectable change in any of 6 models."
    # Nothing changed: the whole section is one collapsed line.
    section = comparison_markdown(cmp(example, example), "")
    assert section.startswith(
        "<details><summary>Compared with the base branch: No detectable change in any of 6 models"
    )
    assert section.endswith("</details>") and section.count("<details>") == 1
    assert section.count("No detectable change in any of 6 models") == 1  # the summary, not again inside


def test_under_the_outcome_line_the_section_does_not_repeat_its_counts_but_names_models_it_could_not_compare(
    example: list[EvalRun],
) -> None:
    pr = shifted(example, "intfloat/e5-base-v2", -0.03)
    renamed = [dataclasses.replace(r, task_id=f"new-{r.task_id}") if r.model_id == "BAAI/bge-large-en-v1.5" else r
               for r in pr]  # fmt: skip
    text = comparison_markdown(cmp(example, renamed), "**Baseline:** `main` @ abc.", stated=False)
    assert "model regressed" not in text
    assert "**Baseline:** `main` @ abc.\n\n1 model in both runs shares no task with the baseline: not compared." in text
    assert "| `intfloat/e5-base-v2` |" in text


def test_no_detectable_change_never_says_how_many_tasks_would_detect_it() -> None:
    m = made(
        "no detectable change",
        0.001,
        -0.002,
        0.004,
        reason=Reason(Why.CI_INCLUDES_0, ALPHA),
        tasks_needed=1234,
        p_value=0.4,
    )
    c = Comparison((m,), (), (), (), (), ALPHA, B, SEED, 0.0)
    text = comparison_markdown(c, "")
    assert "| ➖ no detectable change (CI includes 0) |" in text and "would detect" not in text


def test_500_models_stay_compact_in_the_comment() -> None:
    rng = np.random.default_rng(2)
    scores = rng.uniform(0.2, 0.8, (500, 30))
    base = [run(f"org/model-{m:03d}", f"task-{t:02d}", float(scores[m, t])) for m in range(500) for t in range(30)]
    moved = scores.copy()
    moved[:40] -= 0.05  # 40 regressions
    moved[40:] += 0.002 * rng.standard_normal((460, 30))
    moved = np.clip(moved, 0.0, 1.0)
    pr = [run(f"org/model-{m:03d}", f"task-{t:02d}", float(moved[m, t])) for m in range(500) for t in range(30)]
    c = cmp(base, pr, correction="holm")  # type: ignore[arg-type]
    assert len(c.regressions) == 40
    comment = comparison_markdown(c, "", limit=24_000, elsewhere="see the job summary.")
    assert utf16_length(comment) <= 24_000
    rows = [line for line in comment.split("<details>")[0].splitlines() if line.startswith("| `org/")]
    assert sum("regressed" in r for r in rows) == 40 and len(rows) == 40  # only the changed rows in the open
    quiet = comment.split("<details>")[1]
    assert quiet.startswith("<summary>460 models with no detectable change</summary>")
    assert sum(line.startswith("| `org/") for line in quiet.splitlines()) == 30
    assert re.search(r"\n4\d\d more with no detectable change: see the job summary\.", comment)
    everything = comparison_markdown(c, "", quiet_rows=None)
    rows = everything.split("<details><summary>Δ by category")[0].splitlines()
    assert sum(line.startswith("| `org/") for line in rows) == 500
    tight = comparison_markdown(c, "", limit=3_000, elsewhere="see the job summary.")
    assert utf16_length(tight) <= 3_000 and "more with a detected change" in tight


@pytest.mark.parametrize("model_id", HOSTILE)
def test_hostile_ids_stay_inside_code_spans_in_the_section(model_id: str) -> None:
    base = [run(model_id, f"t{i}", 0.5, "cat|<b>") for i in range(8)] + [run("gone@x", "t0", 0.1)]
    pr = [run(model_id, f"t{i}", 0.4, "cat|<b>") for i in range(8)] + [run("<b>new</b>", "t9", 0.1)]
    html = gfm(comparison_markdown(cmp(base, pr), ""))
    for table in re.findall(r"<table>.*?</table>", html, flags=re.S):
        widths = {len(re.findall(r"<t[dh][ >]", row)) for row in re.findall(r"<tr>.*?</tr>", table, flags=re.S)}
        assert len(widths) == 1, table
    outside = cells_outside_code(html)
    assert "<script" not in html and "<img" not in html and "<a " not in html
    assert "@" not in outside and "<b>" not in outside and "<em>" not in outside


# --- the JSON report and the CLI ----------------------------------------------------------------


def test_the_json_report_carries_the_comparison_under_baseline_after_resolution(example: list[EvalRun]) -> None:
    pr = [*shifted(example, "intfloat/e5-base-v2", -0.03), run("new", "x", 0.5)]
    c = cmp(example, [r for r in pr if r.model_id != "jinaai/jina-embeddings-v3"])
    board = analyse(pr, b=500)
    assert "baseline" not in report_dict(board)
    keys = list(report_dict(board, baseline=comparison_dict(c)))
    assert keys[keys.index("resolution") + 1] == "baseline"
    report = json.loads(render_json(board, baseline=comparison_dict(c)))
    assert list(report)[-2:] == ["baseline", "pairs"] and len(report["pairs"]) == len(board.pairs)
    section = report["baseline"]
    assert section["found"] is True and section["regressed_models"] == ["intfloat/e5-base-v2"]
    assert section["counts"]["regressed"] == 1 and section["counts"]["unchanged"] == 4
    assert section["new_models"] == ["new"] and section["removed_models"] == ["jinaai/jina-embeddings-v3"]
    assert section["parameters"] == {
        "alpha": 0.05, "bootstrap_samples": B, "seed": 0, "regression_tolerance": 0.0, "correction": "holm",
        "one_sided": True, "ci_confidence": 0.9, "level": 0.05, "min_shared_for_significance": 6,
    }  # fmt: skip
    regressed = next(m for m in section["models"] if m["model_id"] == "intfloat/e5-base-v2")
    assert regressed["verdict"] == "regressed" and regressed["ci_hi"] < 0 and regressed["n_shared"] == 41


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "leaderboard", *args], capture_output=True, text=True, cwd=ROOT)


def lowered(tmp_path: Path, model: str, by: float) -> Path:
    lines = []
    for line in EXAMPLE.read_text().splitlines():
        record = json.loads(line)
        if record["model_id"] == model:
            record["score"] = max(0.0, record["score"] - by)
        lines.append(json.dumps(record))
    path = tmp_path / "pr.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_cli_compares_with_baseline_files_and_fails_on_regression_only_when_asked(tmp_path: Path) -> None:
    pr = lowered(tmp_path, "intfloat/e5-base-v2", 0.02)
    out = tmp_path / "r.json"
    plain = cli(str(pr), "--title", "PR 7", "--json", str(out), "--baseline", str(EXAMPLE))
    assert plain.returncode == 0, plain.stderr
    # The outcome first, then the verdict, then the section, before the leaderboard.
    assert plain.stdout.startswith("## PR 7\n\n❌ **1 regression**: `intfloat/e5-base-v2` −2.0 pts")
    assert "\n\n**`Qwen/Qwen3-Embedding-0.6B` is best**" in plain.stdout
    assert "\n\n### Compared with the baseline\n\n**Baseline:** " in plain.stdout
    assert plain.stdout.index("### Compared with the baseline") < plain.stdout.index("| Rank |")
    # The outcome line says the regression; the section's rows and collapsed block say the rest, once.
    assert "model regressed" not in plain.stdout and "5 models with no detectable change" in plain.stdout
    assert "| `intfloat/e5-base-v2` | 62.7% | 60.7% | −2.0 [" in plain.stdout
    assert "| Rank | Model | Mean | 95% CI | vs next | Win rate | Tasks |" in plain.stdout  # the leaderboard follows
    assert json.loads(out.read_text())["baseline"]["regressed_models"] == ["intfloat/e5-base-v2"]

    gated = cli(str(pr), "--baseline", str(EXAMPLE), "--fail-on-regression")
    assert gated.returncode == 1 and gated.stdout.startswith("❌ **1 regression** — this check fails: ")
    line = "regressed: intfloat/e5-base-v2: Δ −0.020, one-sided 95% bounds [−0.020, −0.020], over 41 shared tasks"
    assert line in gated.stderr

    tolerated = cli(str(pr), "--baseline", str(EXAMPLE), "--fail-on-regression", "--regression-tolerance", "0.05")
    assert tolerated.returncode == 0 and "⚠️ lower, within the tolerance" in tolerated.stdout


def test_the_cli_refuses_a_bad_tolerance_and_a_gate_without_a_baseline() -> None:
    assert "must be a number from 0 to 1" in cli(str(EXAMPLE), "--baseline", str(EXAMPLE),
                                                  "--regression-tolerance", "0_1").stderr  # fmt: skip
    done = cli(str(EXAMPLE), "--fail-on-regression")
    assert done.returncode == 2 and "--fail-on-regression needs --baseline" in done.stderr


def test_the_cli_names_problems_in_the_baseline(tmp_path: Path) -> None:
    bad = tmp_path / "base.jsonl"
    bad.write_text('{"model_id": "m", "task_id": "t", "metric_name": "a", "score": 2}\n')
    done = cli(str(EXAMPLE), "--baseline", str(bad))
    assert done.returncode == 1 and "baseline: " in done.stderr and "2 is outside [0, 1]" in done.stderr


def test_the_comment_with_the_section_fits_githubs_limit_at_500_models() -> None:
    from leaderboard.report.comparison import comment_section
    from leaderboard.report.document import COMMENT_LIMIT, comment_body, comment_length

    rng = np.random.default_rng(9)
    scores = rng.uniform(0.2, 0.8, (500, 20))
    ids = [f"organisation-{m:03d}/a-rather-long-model-name-v{m}" for m in range(500)]
    base = [run(ids[m], f"task-{t:02d}", float(scores[m, t]), f"c{t % 5}") for m in range(500) for t in range(20)]
    moved = np.clip(scores - 0.05, 0, 1)  # 500 regressions: more rows than the comment can hold
    pr = [run(ids[m], f"task-{t:02d}", float(moved[m, t]), f"c{t % 5}") for m in range(500) for t in range(20)]
    section = comment_section(cmp(base, pr), "**Baseline:** files.")
    body = comment_body(analyse(pr, b=500), key="k", title="Evals", run_url=None, sections=[section]).text
    assert comment_length(body) <= COMMENT_LIMIT and section in body
    assert "**500 models regressed**." in section
    assert re.search(r"\n\d+ more with a detected change: the job summary lists every model", section)


def test_an_unconfirmed_change_shows_an_interval_reaching_0_and_needs_no_words_to_undo_it() -> None:
    base = suite({"m": [0.5] * 6, "n": [0.5] * 6})
    pr = suite({"m": [0.6] * 5 + [0.49], "n": [0.5] * 6})
    text = comparison_markdown(cmp(base, pr, correction="none"), "")
    assert "| +0.082 [0.000,\u00a0+0.100] | ➖ no detectable change (exact test p = 0.062) |" in text
    assert "the test did not confirm it" not in text


def test_a_family_of_one_model_is_named_in_the_singular() -> None:
    rng = np.random.default_rng(5)
    scores = {f"m{k}": list(rng.uniform(0.2, 0.8, 30)) for k in range(3)}
    base = suite(scores)
    result = cmp(base, shifted(base, "m0", -0.1, noise=0.02))
    assert result.family == 1
    assert "Holm's step-down over the 1 model that can reach it" in rule_text(result)
