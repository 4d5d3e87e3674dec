"""What clustering by category would change in the claims shown, said only when something would."""

from __future__ import annotations

from ..stats.analysis import Leaderboard
from .formatting import count
from .markdown import md_code

PAIRS_NAMED = 5
# A clustered interval this much wider than the one shown is worth a sentence.
WIDER = 1.5
# Differences whose within-category design effect reaches this are related: clustering is the honest reading.
RELATED_DESIGN_EFFECT = 2.0


def _icc(lo: float, hi: float) -> str:
    return f"{lo:.2f}" if round(lo, 2) == round(hi, 2) else f"{lo:.2f}-{hi:.2f}"


def _pairs(pairs: tuple[tuple[str, str], ...]) -> str:
    shown = ", ".join(f"{md_code(a, table=False)} v {md_code(b, table=False)}" for a, b in pairs[:PAIRS_NAMED])
    more = len(pairs) - PAIRS_NAMED
    return shown + (f" and {more:,} more" if more > 0 else "")


def cluster_check_note(board: Leaderboard) -> str | None:
    """The claims that would differ clustered by category, and why; None when none would and the
    model intervals would barely widen."""
    check = board.cluster_check
    if check is None:
        return None
    wider = check.interval_ratio >= WIDER
    if not check.claims_differ and not wider:
        return None
    text = (
        f"**Clustered by category** (`cluster-by: category`, CLI `--cluster-by category`: each of the "
        f"{check.categories:,} categories one unit)"
    )
    if check.claims_differ:
        changes = []
        if check.lost:
            changes.append(f"{count(len(check.lost), 'significant pair')} would not be ({_pairs(check.lost)})")
        if check.gained:
            changes.append(f"{count(len(check.gained), 'pair')} would become significant ({_pairs(check.gained)})")
        if set(check.top_group) != set(check.top_group_shown):
            changes.append(
                f"the top group would be {count(len(check.top_group), 'model')} (here {len(check.top_group_shown):,})"
            )
        text += ", these claims would differ: " + "; ".join(changes) + "."
        related = check.difference_design_effect >= RELATED_DESIGN_EFFECT
        text += (
            " The per-task differences of the pairs the verdict and vs next read correlate within categories at "
            f"{_icc(check.difference_icc_lo, check.difference_icc_hi)} (median design effect "
            f"{check.difference_design_effect:.3g})"
            + (
                ": related tasks make these claims look stronger than they are; clustering is the honest reading."
                if related
                else f": little of that change comes from related tasks and most from the resolution of "
                f"{check.categories:,} units. Cluster only if the categories are a sample of task families the "
                "claims should cover; as fixed parts of the suite they are strata, and the claims above stand."
            )
        )
    else:
        text += ", no claim above would differ."
    if wider:
        d = board.design
        icc = f" (scores correlate within categories at {_icc(d.icc_lo, d.icc_hi)})" if d is not None else ""
        text += f" Each model's interval would be about {check.interval_ratio:.2g}x wider{icc}."
    return text
