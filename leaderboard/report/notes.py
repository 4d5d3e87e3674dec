"""The notes under the leaderboard: what its claims cover, the pairs' family, clusters, categories."""

from __future__ import annotations

import math

from ..stats.analysis import Leaderboard
from ..stats.clustering import FEW_DF, LARGEST_SHARE_WARNING
from ..stats.rows import SMALL_SUITE, WIDENED
from ..stats.significance import min_tasks
from .cluster_note import RELATED_DESIGN_EFFECT, cluster_check_note
from .formatting import count
from .markdown import confidence_label, md_code
from .reasons import best_set_sentence, category_best_sentence, detectable_sentence
from .tables import CHECK, FEW_CATEGORY_TASKS, TIED


def pairs_note(board: Leaderboard) -> str:
    """The significance rule, and how many pairs were tested at what level."""
    table = board.pairs
    level = f"alpha = {board.alpha:g} per pair"
    p = "p"
    if board.correction == "holm":
        level = (
            f"family-wise alpha = {board.alpha:g} (Holm's step-down over the {table.family:,} pairs whose test "
            f"can reach {board.alpha:g})"
        )
        p = "a Holm-adjusted p"
    own = f"{confidence_label(board.alpha)} CI"
    reach = (
        f" Each {own} is the pair's own{f' (not simultaneous over the {table.family:,})' if table.family > 1 else ''}; "
        "a pair not significant has it reach 0, widened where it alone would exclude 0: the test decides."
    )
    if board.clustering is not None:
        return (
            f"Pairwise: {table.tested:,} pair{'s' if table.tested != 1 else ''} tested at {level}; "
            f"{int(table.significant.sum()):,} significant. "
            "Significant means the CR2 cluster-robust CI of the mean difference excludes 0 and the cluster "
            f"sign-flip test (each cluster's summed difference flips sign) gives {p} <= {board.alpha:g}; "
            "where too few clusters leave the sign-flip unable to reach the family's level (its smallest p "
            "is 2 / 2^clusters), the CR2 t-test with Bell-McCaffrey df takes its place. "
            f"Below {min_tasks(board.alpha)} shared clusters no sign-flip test can reach {board.alpha:g}: "
            f"nothing is significant.{reach}"
        )
    return (
        f"Pairwise: {table.tested:,} pair{'s' if table.tested != 1 else ''} tested at {level}; "
        f"{int(table.significant.sum()):,} significant. "
        "Significant means the paired bootstrap CI of the per-task difference excludes 0 and the paired "
        "permutation test (sign flips, exact or Monte Carlo; McNemar's for 0/1 scores) gives "
        f"{p} <= {board.alpha:g}. Below {min_tasks(board.alpha)} shared tasks no sign-flip test can reach "
        f"{board.alpha:g}.{reach}"
    )


def cluster_notes(board: Leaderboard) -> list[str]:
    """How many clusters the statistics treated as units, with a warning when they are few or unequal;
    without clustering, the categories' design effect."""
    out: list[str] = []
    c = board.clustering
    if c is not None:
        df = f"{c.min_df:.3g}" if math.isfinite(c.min_df) else "none"
        out.append(
            f"**Clustered by {c.by}**: {c.count:,} clusters of {board.n_tasks:,} tasks (largest "
            f"{md_code(c.largest)}, {c.largest_share:.0%} of tasks). Each model's CI is the CR2 cluster-robust "
            "t-interval with Bell-McCaffrey degrees of freedom (Wilson's with the design-effect-adjusted n for "
            f"0/1 scores); pairs and the baseline flip clusters, not tasks. Smallest effective df: {df}."
        )
        if c.warns:
            why = []
            if c.largest_share > LARGEST_SHARE_WARNING:
                why.append(f"the largest cluster holds {c.largest_share:.0%} of the tasks")
            if not c.min_df >= FEW_DF:
                why.append(f"the effective degrees of freedom are {df} (< {FEW_DF})")
            out.append(
                f"⚠ Few effective clusters: {' and '.join(why)}; intervals are wide and few differences can be "
                "significant — that is the suite's resolution, not noise in the numbers."
            )
    elif (note := cluster_check_note(board)) is not None:
        out.append(note)
    return out


def scope_line(board: Leaderboard) -> str | None:
    """Under the leaderboard: how far its claims hold together, and what the suite can resolve."""
    if not board.pairs_computed or len(board.rows) < 2:
        return None
    table = board.pairs
    if board.correction == "holm":
        scope = (
            "Rank ranges, vs next and every pairwise decision hold together: the chance of any false claim "
            f"in this table is at most {board.alpha:g} (Holm's step-down over {count(table.family, 'pair')})."
            f"{best_set_sentence(board)}"
            if table.family
            else f"No pair's test can reach {board.alpha:g} at this size, so no pair is separated and every rank "
            "range is the whole table."
        )
    else:
        scope = (
            f"Per-pair claims (`pairwise-correction: none`): each pair is tested at {board.alpha:g} on its own, so "
            f'among {count(table.tested, "pair")} some false "significant" is expected; rank ranges and the top '
            "group are per pair too."
        )
    power = board.detectable()
    level = f" {detectable_sentence(power, name=lambda m: md_code(m, table=False))}" if power is not None else ""
    if power is not None and power.unit == "cluster" and not power.df >= FEW_DF:
        level = level.removesuffix(".") + " (see ⚠ Few effective clusters below)."
    return f"<sub>{scope}{level}</sub>"


def notes(board: Leaderboard, *, extended: bool) -> list[str]:
    """What a reader must know to read the numbers right."""
    level = confidence_label(board.alpha)
    if board.clustering is not None:
        mean = f"**Mean** over each model's tasks with a {level} cluster-robust CI (rounded outward). "
    else:
        mean = f"**Mean** over each model's tasks with a {level} percentile bootstrap CI ({board.b:,} resamples, "
        mean += "rounded outward)"
        if any(row.ci_method == WIDENED for row in board.rows):
            mean += (
                f"; below {SMALL_SUITE} tasks widened where needed to Student's t-interval and to Wilson's "
                "interval at the scores' own variance (the bootstrap alone covers too rarely there)"
            )
        mean += "; 0/1 scores: Wilson's score interval. " if board.binary_models else ". "
    out = [
        mean + "`n=1` / `all equal`: a CI from one task or equal scores tells nothing. "
        "**Rank** is a range: 1 + the models significantly ahead, to M − the models significantly behind. "
        f"**vs next**: the gap in mean to the next row on the tasks both ran, {CHECK} significant, "
        f"{TIED} not. **Tasks** `40/41`: fewer than the most-covered model.",
        "**Win rate**: share of a model's tasks on which it has the top score; ties each win."
        + (
            f" {board.all_tied_tasks:,} of {board.n_tasks:,} tasks were tied by every model that ran them "
            "(e.g. none solved them): each counts as a win for all of them."
            if board.all_tied_tasks
            else ""
        ),
    ]
    if board.pairs_computed and len(board.pairs):
        out.append(pairs_note(board))
    out.extend(cluster_notes(board))
    if extended:
        out.append(
            "An interval of a difference that excludes 0 beside a **no** is one the test did not confirm: "
            "the test decides, and the interval is shown as computed."
        )
    best_line = category_best_sentence(board)
    if best_line is not None:
        out.append(best_line)
    if any(n < FEW_CATEGORY_TASKS for n in board.category_tasks.values()):
        out.append(f"⚠ A category with fewer than {FEW_CATEGORY_TASKS} tasks: its means say little.")
    if board.weights_ignored and board.task_weights == "apply":
        out.append(
            "**Task weights applied**: means, intervals and tests weigh each task by its weight (Kish's effective "
            "number of tasks sizes tasks needed); win rate is still a share of tasks."
        )
    elif board.weights_ignored:
        out.append(
            "Some runs carry a weight other than 1.0: weights were ignored, every task counts equally "
            "(`task-weights: apply` applies them)."
        )
    return out


def warnings(board: Leaderboard) -> list[str]:
    """At most two short notes that change how the table reads: shown beside it, never in a footnote."""
    out: list[str] = []
    check = board.cluster_check
    # Only when related tasks (not the few categories' resolution) would change the claims shown.
    if (
        board.clustering is None
        and check is not None
        and check.claims_differ
        and check.difference_design_effect >= RELATED_DESIGN_EFFECT
    ):
        out.append(
            "⚠ Tasks in a category move together, so some of these differences may not be real: counted once per "
            f"category (`cluster-by: category`), {count(len(check.lost), 'claim')} here would not hold."
        )
    c = board.clustering
    if c is not None and c.warns:
        out.append(
            f"⚠ Few independent groups of tasks ({c.count:,} {c.by} clusters): intervals are wide and few "
            "differences can be told apart; that is the suite's resolution."
        )
    return out[:2]


def settings_line(board: Leaderboard) -> str:
    """The statistics' settings in force, for the method block."""
    settings = f"{confidence_label(board.alpha)} intervals, {board.b:,} resamples, seed {board.seed}"
    if board.pairs_computed and len(board.rows) > 1:
        settings += ", claims family-wise (Holm)" if board.correction == "holm" else ", per-pair claims (no correction)"
    if board.clustering is not None:
        settings += f", clustered by {board.clustering.by} ({board.clustering.count:,} clusters)"
    if board.task_weights == "apply" and board.weights_ignored:
        settings += ", task weights applied"
    return f"**Settings**: {settings}."


def plain_words(board: Leaderboard, *, compared: bool) -> str:
    """How to read the documents in a reviewer's words, before any method is named."""
    level = confidence_label(board.alpha)
    claim = f"{(1 - board.alpha):.0%}" if board.alpha < 1 else ""
    words = (
        f"Each model's **mean** is over the tasks it ran; its **{level} CI** is the range its mean would "
        "plausibly fall in on another draw of similar tasks. **Rank** is a range: a model ranks above only the "
        "models it beats clearly, so overlapping ranks are not told apart. **vs next** is the gap to the next "
        "row on the tasks both ran: ✓ clear, ≈ too close to call. **Win rate** is the share of its tasks on "
        "which a model has the top score. A difference counts as clear only when its interval excludes 0 "
        "and a test on the same tasks confirms it"
    )
    if board.correction == "holm" and claim:
        words += f", and all the table's claims together hold with {claim} confidence"
    words += "."
    if compared:
        words += (
            " **Δ** against the baseline is this run minus the baseline on the tasks a model ran in both; a "
            "**regression** is a drop the test confirms."
        )
    return words
