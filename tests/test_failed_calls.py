"""Failed calls never buy a better rank: scored 0 by default, left out only when asked, and the documents say which."""

from __future__ import annotations

from generators import equal_models_a_failing_the_hardest

from leaderboard import EvalRun, analyse
from leaderboard.pipeline import Options, run
from leaderboard.report.failures import failures_markdown


def test_a_model_failing_the_hardest_tasks_does_not_rank_first_more_than_chance() -> None:
    firsts = sum(analyse(equal_models_a_failing_the_hardest(s), pairs=False).rows[0].model_id == "A" for s in range(40))
    # Equal models: first half the time by chance (20 of 40); failures scored 0 put A below B.
    assert firsts <= 20


def test_left_out_the_failures_are_what_lifts_the_model_that_failed() -> None:
    firsts = sum(
        analyse(equal_models_a_failing_the_hardest(s), pairs=False, failed_calls="exclude").rows[0].model_id == "A"
        for s in range(10)
    )
    assert firsts == 10


def test_a_failed_call_scores_0_and_counts_as_a_task() -> None:
    board = analyse(equal_models_a_failing_the_hardest(0), pairs=False)
    a = next(r for r in board.rows if r.model_id == "A")
    assert a.tasks_completed == 200 and board.failed_calls == "zero"
    assert next(r for r in analyse(equal_models_a_failing_the_hardest(0), pairs=False, failed_calls="exclude").rows
                if r.model_id == "A").tasks_completed == 140  # fmt: skip


def test_a_failed_trial_is_a_trial_scored_0() -> None:
    runs = [
        EvalRun("m", "t", "acc", 1.0, trial=1),
        EvalRun("m", "t", "acc", None, trial=2, error=True),
        EvalRun("n", "t", "acc", 0.25),
    ]
    means = {r.model_id: r.mean_score for r in analyse(runs, pairs=False).rows}
    assert means["m"] == 0.5


def test_the_note_says_how_failed_calls_were_scored() -> None:
    runs = equal_models_a_failing_the_hardest(1)
    zero = failures_markdown(run(Options(), runs).failures)
    left_out = failures_markdown(run(Options(failed_calls="exclude"), runs).failures)
    assert zero is not None and "60 failed calls (`error` set) are scored 0" in zero
    assert left_out is not None and "are left out of the scores (`failed-calls: exclude`" in left_out
