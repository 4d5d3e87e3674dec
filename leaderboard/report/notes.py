"""The notes under the leaderboard: what its claims cover, the pairs' family, clusters, categories."""

from __future__ import annotations

import math

from ..stats.analysis import Leaderboard
from ..stats.clustering import FEW_DF, LARGEST_SHARE_WARNING
from ..stats.significance import min_tasks
from .formatting import EXTENDED, count
from .markdown import confidence_label, md_code
from .reasons import detectable_sentence
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
    if board.clustering is not None:
        return (
            f"Pairwise: {table.tested:,} pair{'s' if table.tested != 1 else ''} tested at {level}; "
            f"{int(table.significant.sum()):,} significant. "
            "Significant means the CR2 cluster-robust CI of the mean difference excludes 0 and the cluster "
            f"sign-flip test (each cluster's summed difference flips sign) gives {p} <= {board.alpha:g}. "
            f"Below {min_tasks(board.alpha)} shared clusters no sign-flip test can reach {board.alpha:g}: "
            "nothing is significant."
        )
    return (
        f"Pairwise: {table.tested:,} pair{'s' if table.tested != 1 else ''} tested at {level}; "
        f"{int(table.significant.sum()):,} significant. "
        "Significant means the paired bootstrap CI of the per-task difference excludes 0 and the exact "
        f"paired permutation test (sign flips; McNemar for 0/1 scores) gives {p} <= {board.alpha:g}. "
        f"Below {min_tasks(board.alpha)} shared tasks no sign-flip test can reach {board.alpha:g}. "
        '"Tasks would tell" is a normal-approximation estimate at the level in force for the pair '
        + (
            "(with Holm, alpha / (m − r) once r of the m pairs are separated)."
            if board.correction == "holm"
            else f"({board.alpha:g}: each pair on its own)."
        )
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
    elif board.design is not None:
        d = board.design
        icc = f"{d.icc_lo:.2f}" if round(d.icc_lo, 2) == round(d.icc_hi, 2) else f"{d.icc_lo:.2f}-{d.icc_hi:.2f}"
        line = (
            f"Design effect of the {d.categories:,} categories: {d.design_effect:.2g} (intra-category correlation "
            f"of scores {icc})"
        )
        if d.warns:
            line += (
                f": if tasks in a category are related, the intervals are about {math.sqrt(d.design_effect):.2g}x "
                "too narrow and some differences not real; set `cluster-by: category` (CLI `--cluster-by "
                "category`) to treat each category as one unit."
            )
        else:
            line += ": below 2, treating tasks as independent costs little."
        out.append(line)
    return out


def scope_line(board: Leaderboard) -> str | None:
    """Under the leaderboard: how far its claims hold together, and what the suite can resolve."""
    if not board.pairs_computed or len(board.rows) < 2:
        return None
    table = board.pairs
    if board.correction == "holm":
        scope = (
            "Rank ranges, the top group, the verdict, vs next and every pairwise decision hold together: the "
            f"chance of any false claim in this table is at most {board.alpha:g} (Holm's step-down over "
            f"{count(table.family, 'pair')})."
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
            f"{EXTENDED} The {'cluster-robust' if board.clustering is not None else 'bootstrap'} interval "
            "excluded 0 but the exact test did not confirm the difference: "
            "the interval is shown extended to 0."
        )
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
