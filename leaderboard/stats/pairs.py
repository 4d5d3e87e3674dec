"""Every pair of the leaderboard: paired interval, sign-flip test, family-wise decision, and what the suite resolves.

A pair's numbers are held as columns (:class:`PairTable`): at 3,000 models there are 4.5
million pairs, and a :class:`~leaderboard.records.PairwiseDiff` is made only when one is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray

from ..records import PairwiseDiff, Reason, Why
from .bootstrap import BootstrapEngine
from .design import Design
from .family import Correction, family_members
from .matrix import ScoreMatrix, row_sums
from .paired import (
    DECIDED,
    cluster_figures,
    clustered_p,
    decide,
    differences,
    excludes_zero,
    reaching_zero,
    reason_codes,
    sign_flip,
)
from .power import ClusterTest, Detectable, detectable_for, typical
from .resampling import FloatArray, percentile_interval
from .significance import METHOD_NAMES, min_tasks
from .ties import TIE_REL_TOL, tie_key
from .weights import kish

# The reason column's code of a significant pair; any other is a records.Why.
SIGNIFICANT = DECIDED


class PairTable(Sequence[PairwiseDiff]):
    """Every pair's comparison, held as columns; a :class:`PairwiseDiff` is made on access.

    Pairs are listed in leaderboard order (rank 1 against 2, 3, ..., then 2 against
    3, ...), so the pair of the models at ranks i < j (0-based positions) is at
    ``position(i, j)`` with no search. Columns hold model positions in the ranking, not
    ids: a million pairs cost tens of megabytes, not a million objects.
    """

    def __init__(
        self,
        ranked_ids: Sequence[str],
        columns: dict[str, NDArray[Any]],
        alpha: float,
        correction: Correction,
        *,
        clustered: bool = False,
        detectable: Detectable | None = None,
        leader_ci: tuple[float, float] = (np.nan, np.nan),
    ) -> None:
        self.ranked_ids = tuple(ranked_ids)
        self.clustered = clustered  # cluster-by on: decisions flip clusters, not tasks
        self.alpha = alpha
        self.correction = correction
        self.a: NDArray[np.int32] = columns["a"]  # ranking positions, 0-based
        self.b: NDArray[np.int32] = columns["b"]
        self.n_shared: NDArray[np.int32] = columns["n_shared"]
        self.mean_diff: FloatArray = columns["mean_diff"]
        self.ci_lo: FloatArray = columns["ci_lo"]
        self.ci_hi: FloatArray = columns["ci_hi"]
        self.p_value: FloatArray = columns["p_value"]
        self.p_adjusted: FloatArray = columns["p_adjusted"]
        self.method: NDArray[np.int8] = columns["method"]
        self.reason_code: NDArray[np.int8] = columns["reason"]
        # Spread of each pair's per-task differences, and whether its test is in the family.
        self.sd: FloatArray = columns["sd"]
        self.member: NDArray[np.bool_] = columns["member"]
        count = self.a.size
        self.n_clusters: NDArray[np.int32] = columns.get("n_clusters", np.zeros(count, dtype=np.int32))
        # Clustered: sqrt(V C) of each pair's CR2 variance V over its C clusters (the spread that picks
        # the typical pair of the minimum detectable difference); NaN otherwise.
        self.cluster_sd: FloatArray = columns.get("cluster_sd", np.full(count, np.nan))
        # The minimum detectable difference of the typical pair, at the level in force (stats/power.py).
        self.detectable = detectable
        # The side each pair's interval excluded 0 on before a pair not significant had it reach 0 (+1: above,
        # -1: below, 0: neither): the confidence set for the best, a family of its own, reads it (best.py).
        self.own_side: NDArray[np.int8] = columns.get("own_side", np.zeros(count, dtype=np.int8))
        # The first pair's (ranks 1 and 2) interval as computed: the headline's gap, a claim of that family.
        self.leader_ci = leader_ci

    @property
    def significant(self) -> NDArray[np.bool_]:
        return np.asarray(self.reason_code == SIGNIFICANT)

    @property
    def tested(self) -> int:
        """Pairs with at least one shared task."""
        return int(np.count_nonzero(self.n_shared > 0))

    @property
    def family(self) -> int:
        """The claims the correction is over: pairs whose test can reach alpha (every pair is its own with none)."""
        return int(np.count_nonzero(self.member)) if self.correction != "none" else 1

    @property
    def level(self) -> float:
        """The level a pair not yet separated is held to (family.py: alpha / (m - r) with Holm)."""
        if self.correction == "none" or not self.member.any():
            return float(self.alpha)
        claimed = int(np.count_nonzero(self.member & (self.p_adjusted <= self.alpha)))
        return float(self.alpha) / max(1, int(np.count_nonzero(self.member)) - claimed)

    def __len__(self) -> int:
        return int(self.a.size)

    def position(self, i: int, j: int) -> int:
        """Position of the pair of ranking positions i and j (either order)."""
        i, j = min(i, j), max(i, j)
        m = len(self.ranked_ids)
        return i * m - i * (i + 1) // 2 + (j - i - 1)

    def why(self, p: int) -> Reason | None:
        """Why pair ``p`` is not significant (None when it is)."""
        distinct, index = self.reasons(p, p + 1)
        return distinct[index[0]]

    def reasons(self, start: int, stop: int) -> tuple[list[Reason | None], list[int]]:
        """Why each pair in ``start:stop`` is not significant: (the distinct reasons, each pair's index into them).

        There are few distinct reasons ("CI includes 0", one p for many pairs at the Monte Carlo floor):
        each is made once, for the first pair that has it, rather than once per pair of millions. A
        reason is a function of the columns keyed below; floats by their bits (NaN is not equal to itself).
        """
        units = self.n_clusters if self.clustered else self.n_shared
        columns = (self.reason_code, units, self.method, self.p_adjusted.view(np.int64), self.member)
        keys = zip(*(c[start:stop].tolist() for c in columns), strict=True)
        first: dict[tuple[int, ...], int] = {}
        at = [first.setdefault(key, k) for k, key in enumerate(keys)]  # each pair's first pair alike
        slot = {k: i for i, k in enumerate(first.values())}
        fewest = min_tasks(self.alpha)
        distinct: list[Reason | None] = []
        for (code, n, method, _, member), k in first.items():
            p = float(self.p_adjusted[start + k])
            holm = self.correction == "holm" and bool(member)
            distinct.append(
                None
                if code == SIGNIFICANT
                else Reason(
                    Why(code), self.alpha, units=n, fewest=fewest, clustered=self.clustered, test=method, p=p, holm=holm
                )
            )
        return distinct, [slot[k] for k in at]

    def _item(self, p: int) -> PairwiseDiff:
        return PairwiseDiff(
            model_a=self.ranked_ids[int(self.a[p])],
            model_b=self.ranked_ids[int(self.b[p])],
            n_shared=int(self.n_shared[p]),
            mean_diff=float(self.mean_diff[p]),
            ci_lo=float(self.ci_lo[p]),
            ci_hi=float(self.ci_hi[p]),
            significant=bool(self.reason_code[p] == SIGNIFICANT),
            p_value=float(self.p_value[p]),
            p_adjusted=float(self.p_adjusted[p]),
            test=METHOD_NAMES[int(self.method[p])],
            reason=self.why(p),
            n_clusters=int(self.n_clusters[p]) if self.clustered else None,
        )

    @overload
    def __getitem__(self, index: int) -> PairwiseDiff: ...
    @overload
    def __getitem__(self, index: slice) -> list[PairwiseDiff]: ...
    def __getitem__(self, index: int | slice) -> PairwiseDiff | list[PairwiseDiff]:
        if isinstance(index, slice):
            return [self._item(p) for p in range(len(self))[index]]
        if not -len(self) <= index < len(self):
            raise IndexError("pair index out of range")
        return self._item(index % len(self))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PairTable):
            return NotImplemented
        mine, theirs = vars(self), vars(other)
        return mine.keys() == theirs.keys() and all(
            np.array_equal(v, theirs[k], equal_nan=v.dtype.kind == "f") if isinstance(v, np.ndarray) else v == theirs[k]
            for k, v in mine.items()
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PairTable({len(self)} pairs, {int(self.significant.sum())} significant)"


# Values per pair chunk (~32 MiB of float64): a chunk's resampled differences and its
# per-task differences; memory stays bounded whatever the number of pairs.
_PAIR_CHUNK_ELEMENTS = 1 << 22


def _listed_pairs(order: Sequence[int], means: FloatArray, model_ids: Sequence[str]) -> tuple[NDArray[np.int32], ...]:
    """Every pair in leaderboard order, as the ranking positions of ``model_a`` and ``model_b``.

    The orientation (``model_a`` the higher mean to the tie tolerance, then the smaller
    id) depends on the two models alone, so adding a model never flips a sign. Positions
    are int32: at 3,000 models the pairs number 4.5 million.
    """
    m = len(order)
    counts = np.arange(m - 1, -1, -1, dtype=np.int64)  # pairs whose first position is i
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    i = np.repeat(np.arange(m, dtype=np.int32), counts)
    j = (np.arange(i.size, dtype=np.int64) - starts[i] + i + 1).astype(np.int32)
    strength = sorted(range(m), key=lambda k: (-tie_key(float(means[k])), model_ids[k]))
    place = np.empty(m, dtype=np.int32)
    place[strength] = np.arange(m, dtype=np.int32)
    placed = np.asarray(place[np.asarray(order, dtype=np.int64)])  # strength place of each ranking position
    swap = placed[i] > placed[j]
    return np.where(swap, j, i), np.where(swap, i, j)


def pair_table(
    matrix: ScoreMatrix,
    engine: BootstrapEngine,
    theta: FloatArray,
    means: FloatArray,
    order: Sequence[int],
    alpha: float,
    correction: Correction,
    design: Design,
    min_effect: float | None = None,
    shown: PairTable | None = None,
) -> PairTable:
    """Every pair: paired bootstrap CI, exact permutation test, decision; the typical pair's detectable difference
    (and the units that detect ``min_effect``).

    ``shown``: the same pairs' table without clustering, when only the clustered claims are asked for (the
    clustering diagnostic): the means and shared counts are its own (the same sums), a pair whose models ran
    one task set takes its cluster sums from the models' with no per-task pass, and neither the per-task
    spread nor the detectable difference is made.

    Pairs are processed in chunks: the resampled differences of a chunk are reduced to
    their interval before the next chunk is drawn, so memory does not grow with pairs x B.

    A pair not significant has its interval reach 0 (``paired.reaching_zero``): beside a Holm verdict of 1,225
    pairs, a 95% interval excluding 0 says what the family does not (stats/family.py). The interval as computed
    is kept as the side it excluded 0 on (``own_side``) and, for the first pair, whole (``leader_ci``).
    """
    pos_a, pos_b = _listed_pairs(order, means, matrix.model_ids)
    ranked = np.asarray(order, dtype=np.int64)
    n_pairs = pos_a.size
    cols: dict[str, NDArray[Any]] = {
        "a": pos_a,
        "b": pos_b,
        "n_shared": np.zeros(n_pairs, dtype=np.int32),
        **{k: np.full(n_pairs, np.nan) for k in ("mean_diff", "ci_lo", "ci_hi", "p_value", "sd")},
        "method": np.zeros(n_pairs, dtype=np.int8),
        "n_clusters": np.zeros(n_pairs, dtype=np.int32),
        "nonzero": np.zeros(n_pairs, dtype=np.int64),
        "t_p": np.full(n_pairs, np.nan),
        "cluster_sd": np.full(n_pairs, np.nan),
    }
    scores, present = engine.filled, matrix.present
    clustered = design.cluster is not None
    onehot = design.onehot if clustered else None
    tw = design.weight
    if onehot is not None:
        weighted = np.where(present, tw[None, :] if tw is not None else 1.0, 0.0)
        model_sums, model_sizes = onehot.sums(scores * weighted), onehot.sums(weighted)
    # Two passes, each in chunks sized for its own arrays: the resampled differences are
    # (pairs, B), the per-task differences (pairs, tasks). A Poisson draw serves a whole
    # chunk, so the fewer chunks the bootstrap pass takes, the fewer weight matrices are made.
    # With clustering the interval is the CR2 t-interval of the second pass: no resampling at all.
    step = max(1, _PAIR_CHUNK_ELEMENTS // engine.b)
    for start in range(0, 0 if clustered else n_pairs, step):
        stop = min(n_pairs, start + step)
        a, b = ranked[pos_a[start:stop]], ranked[pos_b[start:stop]]
        cols["n_shared"][start:stop] = engine.shared_counts[a, b]
        listed = list(zip(a.tolist(), b.tolist(), strict=True))
        cols["ci_lo"][start:stop], cols["ci_hi"][start:stop] = percentile_interval(engine.pairs(listed, theta), alpha)
    step = max(1, _PAIR_CHUNK_ELEMENTS // max(1, len(matrix.task_ids)))
    for start in range(0, n_pairs, step):
        stop = min(n_pairs, start + step)
        a, b = ranked[pos_a[start:stop]], ranked[pos_b[start:stop]]
        if onehot is not None and shown is not None and bool((engine.task_set_of[a] == engine.task_set_of[b]).all()):
            _clustered_claims(cols, start, stop, model_sums[a] - model_sums[b], model_sizes[a], shown, alpha)
            continue
        d = differences(scores, present, a, b)
        shared, raw, diffs = d.shared, d.raw, d.tied
        n = shared.sum(axis=1)
        cols["n_shared"][start:stop] = n
        if tw is not None:
            # Weighted: the mean is sum w d / sum w, the test flips w x d, tasks needed counts Kish's n.
            wmask = np.where(shared, tw[None, :], 0.0)
            with np.errstate(invalid="ignore", divide="ignore"):
                total_w = row_sums(wmask, shared)
                mean_raw = row_sums(raw * tw, shared) / total_w
                mean_tied = row_sums(diffs * tw, shared) / total_w
                n_k = kish(np.broadcast_to(tw, shared.shape), shared)
                spread = np.einsum("ij,ij->i", wmask, (diffs - mean_tied[:, None]) ** 2) / total_w
                sd = np.sqrt(np.maximum(spread, 0.0) * n_k / (n_k - 1) * n / n_k)
            flipped = diffs * tw
        else:
            with np.errstate(invalid="ignore", divide="ignore"):
                raw_sum = row_sums(raw, shared)
                mean_raw = raw_sum / n
                mean_tied = (raw_sum if diffs is raw else row_sums(diffs, shared)) / n
                # The spread only picks the typical pair: numpy's own sum will do.
                squares = np.einsum("ij,ij->i", diffs, diffs) - n * mean_tied * mean_tied
                sd = np.sqrt(np.maximum(squares, 0.0) / (n - 1))
            flipped = diffs
        if onehot is not None:
            # The cluster sign-flip test: each cluster's summed (weighted) difference keeps or flips its sign.
            # Two models with one task set: the difference of their own cluster sums (computed once per
            # model, a function of the two models alone); otherwise the pair's own sums.
            own = engine.task_set_of[a] == engine.task_set_of[b]
            sizes = np.empty((stop - start, onehot.count))
            cluster_raw = np.empty_like(sizes)
            cluster_tied = np.empty_like(sizes)
            sizes[own] = model_sizes[a[own]]
            cluster_raw[own] = model_sums[a[own]] - model_sums[b[own]]
            # The tie rule per task (at most 1e-9 a task for scores on [0, 1]) bounds a tied cluster's sum.
            cluster_tied[own] = np.where(np.abs(cluster_raw[own]) <= TIE_REL_TOL * sizes[own], 0.0, cluster_raw[own])
            other = ~own
            if other.any():
                sizes[other] = onehot.sums(shared[other].astype(np.float64) if tw is None else wmask[other])
                cluster_raw[other] = onehot.sums(raw[other] if tw is None else raw[other] * tw)
                cluster_tied[other] = onehot.sums(flipped[other])
            figures = cluster_figures(cluster_raw, cluster_tied, sizes, alpha, mean=mean_raw)
            cols["ci_lo"][start:stop], cols["ci_hi"][start:stop] = figures.ci_lo, figures.ci_hi
            cols["n_clusters"][start:stop] = figures.clusters
            cols["cluster_sd"][start:stop] = figures.sd
            cols["t_p"][start:stop] = figures.t_p
            tested_rows = cluster_tied
        else:
            tested_rows = flipped
        p, method = sign_flip(tested_rows)
        cols["nonzero"][start:stop] = np.count_nonzero(tested_rows, axis=1)
        some = n > 0
        cols["mean_diff"][start:stop] = np.where(some, mean_raw, np.nan)
        cols["p_value"][start:stop] = np.where(some, p, np.nan)
        cols["method"][start:stop] = method
        cols["sd"][start:stop] = np.where(n > 1, sd, np.nan)
    none = cols["n_shared"] == 0
    cols["ci_lo"][none] = np.nan
    cols["ci_hi"][none] = np.nan
    n_shared = cols["n_shared"]
    nonzero, t_p = cols.pop("nonzero"), cols.pop("t_p")
    member = (n_shared > 0) & family_members(nonzero, alpha)
    # The family's strictest level (Holm's first step) decides where the cluster sign-flip cannot reach it.
    reach = alpha if correction == "none" else alpha / max(1, int(member.sum()))
    if clustered:
        p_set, method_set = clustered_p(cols["p_value"], cols["method"], t_p, nonzero, member, reach)
        cols["p_value"] = np.where(n_shared > 0, p_set, np.nan)
        cols["method"] = method_set
    decisions = decide(cols["p_value"], member, alpha, correction)
    cols["p_adjusted"], cols["member"] = decisions.adjusted, member
    units = cols["n_clusters"] if clustered else n_shared
    excludes_0 = excludes_zero(cols["ci_lo"], cols["ci_hi"])
    cols["reason"] = reason_codes(n_shared, units, excludes_0, decisions.adjusted, alpha)
    # An interval excluding 0 lies wholly on one side: its low end's sign is that side.
    cols["own_side"] = np.where(excludes_0, np.sign(np.nan_to_num(cols["ci_lo"])), 0).astype(np.int8)
    leader = (float(cols["ci_lo"][0]), float(cols["ci_hi"][0])) if n_pairs else (np.nan, np.nan)
    cols["ci_lo"], cols["ci_hi"] = reaching_zero(cols["ci_lo"], cols["ci_hi"], cols["reason"] == SIGNIFICANT)
    if not clustered:
        cols.pop("cluster_sd")
    ids = [matrix.model_ids[m] for m in order]
    spread = cols["cluster_sd"] if clustered else cols["sd"]
    typical_pair = typical(cols["n_clusters"] if clustered else n_shared, spread) if shown is None else None
    found = None
    if typical_pair is not None:
        a, b = ranked[pos_a[typical_pair : typical_pair + 1]], ranked[pos_b[typical_pair : typical_pair + 1]]
        values, sizes = _tested_units(scores, present, a, b, design)
        level = decisions.level
        tested_as = ClusterTest(reach, min_tasks(alpha)) if clustered else None
        found = detectable_for(
            values, sizes, level, two_sided=True, seed=engine.seed, min_effect=min_effect,
            pair=(ids[int(pos_a[typical_pair])], ids[int(pos_b[typical_pair])]), sd=float(spread[typical_pair]),
            unit="cluster" if clustered else "task", clusters=tested_as,
        )  # fmt: skip
    return PairTable(ids, cols, alpha, correction, clustered=clustered, detectable=found, leader_ci=leader)


def _clustered_claims(
    cols: dict[str, NDArray[Any]],
    start: int,
    stop: int,
    cluster_raw: FloatArray,
    sizes: FloatArray,
    shown: PairTable,
    alpha: float,
) -> None:
    """Pairs ``start:stop`` clustered from the differences of their models' cluster sums (the models of each
    ran one task set), their means and shared counts those ``shown``: what the per-task pass gives them."""
    n = shown.n_shared[start:stop].astype(np.int64)
    mean_raw = shown.mean_diff[start:stop]
    cluster_tied = np.where(np.abs(cluster_raw) <= TIE_REL_TOL * sizes, 0.0, cluster_raw)
    figures = cluster_figures(cluster_raw, cluster_tied, sizes, alpha, mean=mean_raw)
    cols["n_shared"][start:stop] = n
    cols["ci_lo"][start:stop], cols["ci_hi"][start:stop] = figures.ci_lo, figures.ci_hi
    cols["n_clusters"][start:stop] = figures.clusters
    cols["cluster_sd"][start:stop] = figures.sd
    cols["t_p"][start:stop] = figures.t_p
    p, method = sign_flip(cluster_tied)
    cols["nonzero"][start:stop] = np.count_nonzero(cluster_tied, axis=1)
    cols["mean_diff"][start:stop] = mean_raw
    cols["p_value"][start:stop] = np.where(n > 0, p, np.nan)
    cols["method"][start:stop] = method


def _tested_units(
    scores: FloatArray, present: NDArray[np.bool_], a: NDArray[np.int64], b: NDArray[np.int64], design: Design
) -> tuple[FloatArray, FloatArray]:
    """One pair's units as its test flips them: (weighted) per-task differences over the shared tasks, or
    their sums per shared cluster with the clusters' sizes (tasks, or weight)."""
    d = differences(scores, present, a, b)
    shared = d.shared[0]
    tw = design.weight if design.weight is not None else np.ones(shared.size)
    flipped = d.tied * tw
    if design.cluster is None:
        # Weighted, a shift of x moves each flipped w d by w x: the weights are the units' sizes.
        return flipped[0, shared], tw[shared]
    sizes = design.onehot.sums(np.where(shared, tw, 0.0)[None, :])[0]
    sums = design.onehot.sums(flipped)[0]
    return sums[sizes > 0], sizes[sizes > 0]


def empty_columns() -> dict[str, NDArray[Any]]:
    ints = ("a", "b", "n_shared")
    floats = ("mean_diff", "ci_lo", "ci_hi", "p_value", "p_adjusted", "sd")
    return {
        **{k: np.zeros(0, dtype=np.int32) for k in ints},
        "own_side": np.zeros(0, dtype=np.int8),
        "member": np.zeros(0, dtype=bool),
        **{k: np.zeros(0) for k in floats},
        "method": np.zeros(0, dtype=np.int8),
        "reason": np.zeros(0, dtype=np.int8),
    }
