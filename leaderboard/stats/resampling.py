"""The one resampling engine every statistic is built on.

What is resampled
-----------------
Every statistic is bootstrapped over a *task set*: a model over the tasks it
has, a pair of models over the tasks both have. The resamples of a set depend
on nothing but the seed and the set itself, so a model's interval never moves
when another model is added or removed, and everything that shares a set
shares its resamples (common random numbers: pairs are exactly paired, and
identical models differ by exactly 0 in every resample).

* A set of n <= EXACT_LIMIT tasks (EXACT_PAIR_LIMIT for the shared tasks of two models
  that ran different task sets, of which there can be one per pair) gets the exact
  multinomial bootstrap:
  ``rng.integers(0, n, (B, n))`` from a generator keyed by a SHA-256 digest of
  ``(seed, sorted task ids)``, the statistic ``np.mean`` of the gathered
  resample. That is ``scipy.stats.bootstrap``'s own draw and arithmetic: with
  the same generator the percentile interval agrees with scipy's bit for bit.
* A larger set gets the Poisson bootstrap: in resample r, task t has weight
  w[r, t] ~ Poisson(1), a pure function of (seed, task id, r), and the
  statistic is the weighted mean over the set. It approximates the
  multinomial bootstrap (whose weights are Multinomial(n; 1/n, ...) counts)
  with an error of order 1/n in the interval's width, far below the Monte
  Carlo error of B resamples (benchmarks/bench_statistics.py measures both).
  Its point: the weights of any subset of tasks come free with the weights of
  all tasks, so every model and every pair, whatever tasks it is missing, is
  resampled from one weight matrix and a few matrix products, where a fresh
  draw per task set would cost B x n each.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from operator import methodcaller

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

EXACT_LIMIT = 1000
# A pair whose models ran different task sets has a shared set of its own: up to M^2/2 of
# them, each a fresh B x n draw when exact. Above this size they take the Poisson weights.
EXACT_PAIR_LIMIT = 200

# Values gathered at once (~1 MiB): the gathered block is summed while still in cache.
CHUNK_ELEMENTS = 1 << 17

_DOMAIN = b"leaderboard-action resample v1\x00"


def encode_ids(task_ids: Sequence[str]) -> list[bytes]:
    """Length-prefixed UTF-8, so that no two task sets hash alike.

    The last answer is kept: the leaderboard and the comparison encode the same million ids of a large suite.
    """
    global _last_encoded
    ids = tuple(task_ids)
    last = _last_encoded  # read once: another thread may replace it between a check and a use
    if last is not None and last[0] == ids:
        return list(last[1])
    out = []
    for task_id in ids:
        raw = task_id.encode("utf-8", "surrogatepass")
        out.append(len(raw).to_bytes(8, "little") + raw)
    _last_encoded = (ids, tuple(out))
    return out


_last_encoded: tuple[tuple[str, ...], tuple[bytes, ...]] | None = None


def keyed_rng(seed: int, encoded_task_ids: Sequence[bytes]) -> np.random.Generator:
    """A generator keyed by the seed and a sorted task set alone.

    SHA-256 rather than ``hash()``: Python salts string hashes per process.
    """
    digest = hashlib.sha256(_DOMAIN + str(int(seed)).encode() + b"\x00")
    digest.update(b"".join(encoded_task_ids))
    return np.random.default_rng(int.from_bytes(digest.digest()[:16], "little"))


def resampled_means(values: FloatArray, n_resamples: int, rng: np.random.Generator) -> FloatArray:
    """Exact bootstrap means of each row of ``values`` (k, n), all rows on the same resamples.

    Returns (k, n_resamples). Resample r is row r of ``rng.integers(0, n, (B, n))``
    for every row of ``values``; drawn in chunks, which leaves the stream as it is.
    """
    k, n = values.shape
    out = np.empty((k, n_resamples))
    # Chunks of ~1 MiB of gathered values whatever B, n and k: each is summed while still in cache.
    rows = max(1, CHUNK_ELEMENTS // (n * max(1, k)))
    index_type = np.int32 if n < 2**31 else np.int64  # the same values as int64, half the traffic
    for start in range(0, n_resamples, rows):
        stop = min(n_resamples, start + rows)
        idx = rng.integers(0, n, (stop - start, n), dtype=index_type)
        # take + sum / n is np.mean's own arithmetic (a pairwise sum along the last axis, then a
        # true divide), row by row as scipy does it, for every model at once.
        out[:, start:stop] = np.take(values, idx, axis=1).sum(axis=-1) / n
    return out


def percentile_interval(theta: FloatArray, alpha: float) -> tuple[FloatArray, FloatArray]:
    """Percentile interval along the last axis, as ``scipy.stats.bootstrap(method='percentile')``.

    scipy takes ``stats.quantile(..., method='linear')`` (Hyndman-Fan type 7) at
    ``(1 - confidence)/2`` and its complement; the arithmetic below is the same,
    step for step, so the results agree bit for bit.
    """
    confidence = 1.0 - alpha
    lower = (1.0 - confidence) / 2.0
    p = np.array([lower, 1.0 - lower])
    n = theta.shape[-1]
    jg = p * n + (1.0 - p)
    jp1 = jg // 1
    j = jp1 - 1
    g = np.where(j < 0, 0.0, jg % 1)
    j_idx = np.clip(j, 0.0, n - 1).astype(np.int64)
    jp1_idx = np.clip(jp1, 0.0, n - 1).astype(np.int64)
    # Only four order statistics are read: a partition finds them in linear time, and they are
    # the very values a full sort would put there.
    kth = np.unique(np.concatenate([j_idx, jp1_idx]))
    y = np.partition(theta, kth, axis=-1) if n > 0 else theta
    lo = (1 - g[0]) * y[..., j_idx[0]] + g[0] * y[..., jp1_idx[0]]
    hi = (1 - g[1]) * y[..., j_idx[1]] + g[1] * y[..., jp1_idx[1]]
    return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)


# --- Poisson weights ------------------------------------------------------------------

_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S27, _S30, _S31, _S48 = (np.uint64(s) for s in (27, 30, 31, 48))

# P(K <= k) for K ~ Poisson(1), k = 0..40, as thresholds on a 64-bit uniform integer:
# K is the number of thresholds at or below it. Past k = 40 the tail is below 2^-64.
_CDF = np.cumsum(np.exp(-1.0) / np.cumprod(np.concatenate(([1.0], np.arange(1.0, 41.0)))))
_THRESHOLDS = np.array([min(int(c * 2.0**64), 2**64 - 1) for c in _CDF], dtype=np.uint64)
# A 2^16-entry table on the top 16 bits settles almost every draw at once; the few
# buckets that a threshold cuts through are marked -1 and settled by searchsorted.
_BUCKET_LO = np.arange(1 << 16, dtype=np.uint64) << _S48
_BUCKET_HI = _BUCKET_LO | ((np.uint64(1) << _S48) - np.uint64(1))
# (Bytes: the table stays in the fastest cache; a weight is at most 41.)
_TABLE = np.where(
    np.searchsorted(_THRESHOLDS, _BUCKET_LO, side="right") == np.searchsorted(_THRESHOLDS, _BUCKET_HI, side="right"),
    np.searchsorted(_THRESHOLDS, _BUCKET_LO, side="right"),
    -1,
).astype(np.int8)


def _splitmix64(z: NDArray[np.uint64], *, last: bool = True) -> NDArray[np.uint64]:
    """SplitMix64's finaliser, in place: a bijection that scatters every input bit (``last=False``: all but
    its last step, ``z ^= z >> 31``, which leaves the top 33 bits as they are)."""
    z ^= z >> _S30
    z *= _MIX1
    z ^= z >> _S27
    z *= _MIX2
    if last:
        z ^= z >> _S31
    return z


def task_keys(seed: int, encoded_task_ids: Sequence[bytes]) -> NDArray[np.uint64]:
    """One 64-bit key per task, from (seed, task id) alone (the last answer kept: the leaderboard and the
    comparison of a large suite ask for the same tasks' keys)."""
    global _last_keys
    asked = (int(seed), tuple(encoded_task_ids))
    last = _last_keys  # read once: another thread may replace it between a check and a use
    if last is not None and last[0] == asked:
        return last[1].copy()
    prefix = _DOMAIN + b"poisson\x00" + str(int(seed)).encode() + b"\x00"
    # Each key: the first 8 bytes of its digest, little-endian; the digests joined and read by numpy at once.
    digests = b"".join(map(methodcaller("digest"), map(hashlib.sha256, map(prefix.__add__, asked[1]))))
    keys = np.frombuffer(digests, dtype="<u8").reshape(-1, 4)[:, 0].astype(np.uint64)
    _last_keys = (asked, keys.copy())
    return keys


_last_keys: tuple[tuple[int, tuple[bytes, ...]], NDArray[np.uint64]] | None = None


def poisson_weights(keys: NDArray[np.uint64], first: int, count: int) -> NDArray[np.int8]:
    """Poisson(1) weights of resamples ``first .. first+count-1`` (rows) for each task (columns), as the small
    integers they are.

    Counter-based: the weight of task t in resample r is a fixed function of
    (key of t, r), computed on its own, whatever else is in the input.
    """
    out = np.empty((count, keys.size), dtype=np.int8)
    with np.errstate(over="ignore"):
        row_keys = _splitmix64(np.arange(first + 1, first + count + 1, dtype=np.uint64) * _MIX1)
    # Blocks of 2^16 values (rows of few tasks together, a row of many tasks in pieces): each of the
    # passes below stays in cache. Every weight is computed on its own, so the blocks change no value.
    columns_at_once = min(max(1, keys.size), 1 << 16)
    rows_at_once = max(1, (1 << 16) // columns_at_once)
    for start in range(0, count, rows_at_once):
        stop = min(count, start + rows_at_once)
        for first_column in range(0, keys.size, columns_at_once):
            last_column = min(keys.size, first_column + columns_at_once)
            z = keys[None, first_column:last_column] ^ row_keys[start:stop, None]
            with np.errstate(over="ignore"):
                _splitmix64(z, last=False)  # the table reads the top 16 bits, which the last step keeps
            block = np.take(_TABLE, (z >> _S48).view(np.int64))
            unsure = block < 0
            if unsure.any():
                settled = z[unsure]
                settled ^= settled >> _S31
                block[unsure] = np.searchsorted(_THRESHOLDS, settled, side="right")
            out[start:stop, first_column:last_column] = block
    return out
