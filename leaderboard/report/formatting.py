"""Numbers and labels as a reader sees them, never contradicting the decisions they sit beside.

* Three decimals by default; more where two different values would otherwise print alike.
* Interval ends are rounded outward, so the printed interval contains the computed one.
* A significant difference never prints an interval end of 0 or of the wrong sign (more
  decimals until it does not); a non-significant one prints the interval it is given, rounded
  outward. The statistics widen such an interval to reach 0 where the bootstrap alone would exclude
  it, so no number says more than the verdict; were one given that excludes 0, the words beside it
  say that the test did not confirm the difference.
* One interval style everywhere: ``[lo, hi]``; differences are signed.
* Scores in [0, 1] read as percentages and their differences in points (74.4%, −3.0 pts), as
  SWE-bench and MTEB print them, inside :func:`score_format` (``percent=True``); outside it, and
  with ``score-format: fraction``, as fractions (0.744, −0.030). The JSON report keeps fractions.
* Model labels are whole ids up to LABEL_WIDTH characters; longer ones are shortened in
  the middle (the end usually tells versions apart), and no two labels are ever alike.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from ..stats.power import Detectable

DECIMALS = 3
MAX_DECIMALS = 12
LABEL_WIDTH = 48
ELLIPSIS = "…"
MINUS = "−"
DASH = "—"
# A no-break space inside an interval: a narrow column wraps before "[", never inside it.
SEP = ",\u00a0"


_PERCENT: ContextVar[bool] = ContextVar("percent", default=False)
POINTS = " pts"


@contextmanager
def score_format(percent: bool) -> Iterator[None]:
    """Scores as percentages and differences in points while inside (the documents of one run)."""
    token = _PERCENT.set(percent)
    try:
        yield
    finally:
        _PERCENT.reset(token)


def in_percent() -> bool:
    return _PERCENT.get()


def delta_unit() -> str:
    """What a column of differences is in, for its header: " (pts)" in percent, else nothing."""
    return " (pts)" if _PERCENT.get() else ""


def _scaled(value: float, decimals: int) -> tuple[float, int]:
    """The value and decimals to print: a fraction's three decimals are a percentage's one."""
    if _PERCENT.get():
        return value * 100.0, max(1, decimals - 2)
    return value, decimals


def _plain(value: float, decimals: int) -> str:
    text = f"{value:.{decimals}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def decimals_for(values: Iterable[float], base: int = DECIMALS, limit: int = 6) -> int:
    """The fewest decimals (at least ``base``) at which different values print differently.

    Values equal to the tie tolerance (9 decimals) count as one value.
    """
    distinct = sorted({round(v, 9) for v in values if not math.isnan(v)})
    for d in range(base, limit + 1):
        shown = [_plain(v, d) for v in distinct]
        if len(set(shown)) == len(shown):
            return d
    return limit


def number(value: float, decimals: int = DECIMALS) -> str:
    """A score: 0.744, or 74.4% in percent."""
    if math.isnan(value):
        return DASH
    if _PERCENT.get():
        return _plain(*_scaled(value, decimals)) + "%"
    return _plain(value, decimals)


def signed(value: float, decimals: int = DECIMALS) -> str:
    """+0.032, −0.011, 0.000 for an exact zero (in percent: +3.2, −1.1, 0.0, points)."""
    if math.isnan(value):
        return DASH
    value, decimals = _scaled(value, decimals)
    return _signed(value, decimals)


def _signed(value: float, decimals: int) -> str:
    if value == 0:
        return _plain(0.0, decimals)
    text = f"{abs(value):.{decimals}f}"
    return ("+" if value > 0 else MINUS) + text


def _floor(value: float, decimals: int) -> float:
    scale = 10.0**decimals
    # A hair of slack: 0.29 * 100 is 28.999999999999996 in binary, and 0.29 must stay 0.29.
    return math.floor(value * scale + 1e-7) / scale


def _ceil(value: float, decimals: int) -> float:
    scale = 10.0**decimals
    return math.ceil(value * scale - 1e-7) / scale


def interval(lo: float, hi: float, decimals: int = DECIMALS) -> str:
    """``[lo, hi]`` rounded outward (a mean's interval: unsigned)."""
    if math.isnan(lo) or math.isnan(hi):
        return DASH
    (lo, decimals), (hi, _) = _scaled(lo, decimals), _scaled(hi, decimals)
    return f"[{_plain(_floor(lo, decimals), decimals)}{SEP}{_plain(_ceil(hi, decimals), decimals)}]"


def no_interval(n_clusters: int | None) -> str:
    """Why a difference has no interval, in words: one cluster has no spread to measure."""
    return "no interval: one cluster" if n_clusters == 1 else "no interval"


def difference(
    value: float, lo: float, hi: float, significant: bool, decimals: int = DECIMALS, *, missing: str = DASH
) -> tuple[str, str, bool]:
    """(signed value, signed interval, unconfirmed) for a difference and the decision made on it.

    Significant: more decimals until neither the value nor an end prints as 0 or with the
    wrong sign. Not significant: the computed interval, rounded outward; ``unconfirmed`` says it
    excludes 0 although the test did not confirm the difference (the caller says so in words).
    A difference without an interval (one cluster) is still shown; ``missing`` stands for the interval.
    """
    if math.isnan(value):
        return DASH, DASH, False
    if math.isnan(lo) or math.isnan(hi):
        return signed(value, decimals), missing, False
    (value, decimals), (lo, _), (hi, _) = _scaled(value, decimals), _scaled(lo, decimals), _scaled(hi, decimals)
    unconfirmed = False
    if significant:
        d = decimals
        while d < MAX_DECIMALS:
            low, high = _floor(lo, d), _ceil(hi, d)
            shown_value = round(value, d)
            if low * high > 0 and shown_value != 0 and (shown_value > 0) == (low > 0):
                break
            d += 1
        decimals = d
        low, high = _floor(lo, decimals), _ceil(hi, decimals)
    else:
        low, high = _floor(lo, decimals), _ceil(hi, decimals)
        unconfirmed = lo > 0 or hi < 0
    text = f"[{_signed(low, decimals)}{SEP}{_signed(high, decimals)}]"
    return _signed(value, decimals), text, unconfirmed


def shorten(text: str, width: int = LABEL_WIDTH, head: int | None = None) -> str:
    """At most ``width`` characters, cut in the middle: the start and the end stay."""
    if len(text) <= width:
        return text
    keep = width - 1
    first = keep // 3 if head is None else head
    return text[:first] + ELLIPSIS + text[len(text) - (keep - first) :]


def labels(ids: Sequence[str], width: int = LABEL_WIDTH) -> dict[str, str]:
    """A label per id: the id itself when short, else shortened in the middle; never two alike.

    Where two shortened ids collide, both are shown with more of their middle until they
    differ (at worst whole).
    """
    out = {i: shorten(i, width) for i in ids}
    seen: dict[str, list[str]] = {}
    for i, label in out.items():
        seen.setdefault(label, []).append(i)
    for group in (g for g in seen.values() if len(g) > 1):
        w = width
        while True:
            w += 8
            shown = {i: shorten(i, w) for i in group}
            if len(set(shown.values())) == len(group) or w > max(map(len, group)):
                out.update(shown)
                break
    # A shortened label can still equal another id's whole label: lengthen the shortened one.
    taken = {label for i, label in out.items() if label == i}
    for i, label in list(out.items()):
        if label != i and label in taken:
            out[i] = i
    return out


def tasks_cell(done: int, most: int) -> str:
    """``41``, or ``40/41`` when the model covers fewer tasks than the most-covered model."""
    return str(done) if done >= most else f"{done}/{most}"


def rank_range(lo: int | None, hi: int | None, rank: int) -> str:
    if lo is None or hi is None:
        return str(rank)
    return str(lo) if lo == hi else f"{lo}–{hi}"


P_FLOOR = 0.001


def p_value(p: float, alpha: float | None = None) -> str:
    """A p-value as a reader needs it: below 0.001 only that it is (a Monte Carlo test's floor, 1/4,001 at
    the default resamples, would otherwise print as the same odd number on every clear pair; the JSON
    report keeps the number).

    Given the ``alpha`` it is compared with, it never prints on the other side of alpha, nor equal
    to it when above (p = 0.0504 is not "0.05" beside "not significant"): more digits until it does not.
    """
    if math.isnan(p):
        return DASH
    if p < P_FLOOR:
        return f"< {P_FLOOR:g}"
    text = f"{p:.2g}" if p < 0.01 else f"{p:.3f}".rstrip("0").rstrip(".") if p < 1 else "1"
    digits = 3
    while alpha is not None and (float(text) <= alpha) != (p <= alpha) and digits <= MAX_DECIMALS:
        text = f"{p:.{digits}g}"
        digits += 1
    return text


def delta_text(value: float) -> str:
    """A difference in running text: signed, as the tables print it, in points in percent."""
    return signed(value) + (POINTS if _PERCENT.get() else "")


def magnitude_text(value: float) -> str:
    """A size (a detectable difference) in running text, unsigned; in points in percent."""
    if _PERCENT.get():
        return _plain(*_scaled(abs(value), DECIMALS)) + POINTS
    return number(abs(value))


def count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"


def detectable_dict(d: Detectable | None) -> dict[str, object] | None:
    """A minimum detectable difference as the JSON report holds it (leaderboard and comparison alike)."""
    if d is None:
        return None
    return {
        "n_shared": d.n_shared,
        "unit": d.unit,
        "sd": d.sd,
        "level": d.level,
        "power": d.power,
        "difference": None if math.isnan(d.difference) else d.difference,
        "fewest": d.fewest,
        "pair": list(d.pair),
        "method": "exact" if d.exact else "simulation",
        "min_effect": d.min_effect,
        "units_for_min_effect": d.units_for_effect,
    }
