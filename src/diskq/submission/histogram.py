"""fio's latency histograms against its percentiles, for :mod:`diskq.submission.counters`: the
shares per latency range (``latency_ns`` / ``latency_us`` / ``latency_ms``) and the bins of
``--output-format=json+`` must put each percentile where it says, within :data:`HISTOGRAM_SLACK`
percentage points and :data:`EDGE_SLACK` of its value. With the reader of one number of fio's
JSON that the counters' checks share (:func:`_n`)."""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right

#: Percentage points a histogram may differ from a percentile (its shares are rounded, and it
#: counts from submission while the percentiles count completion latency).
HISTOGRAM_SLACK = 1.5
#: Relative distance of a percentile from a histogram edge that still counts as on the edge
#: (fio's percentiles are the midpoints of its own log-linear bins, within about 1.6 %).
EDGE_SLACK = 0.04

_NS_KEYS = (("latency_ns", 1), ("latency_us", 1_000), ("latency_ms", 1_000_000))


def _n(d, key) -> float | None:
    if not isinstance(d, dict):
        return None
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        v = float(v)
    except OverflowError:
        return None
    return v if math.isfinite(v) and v >= 0 else None


def _buckets(job: dict) -> list[tuple[float, float, float]] | None:
    """fio's latency histogram of one job entry as ``(low_ns, high_ns, percent)``, or None."""
    out: list[tuple[float, float, float]] = []
    low = 0.0
    for section, unit in _NS_KEYS:
        table = job.get(section)
        if not isinstance(table, dict):
            return None
        for key, share in table.items():
            pct = share if isinstance(share, (int, float)) and not isinstance(share, bool) else None
            if pct is None or not math.isfinite(pct) or pct < 0:
                return None
            if isinstance(key, str) and key.startswith(">="):
                high = math.inf
            else:
                try:
                    high = float(key) * unit
                except (TypeError, ValueError):
                    return None
                if not math.isfinite(high):
                    return None
            out.append((low, high, float(pct)))
            low = high if high != math.inf else low
    return out


def _percentiles(section) -> list[tuple[float, float]]:
    table = section.get("percentile") if isinstance(section, dict) else None
    if not isinstance(table, dict):
        return []
    out = []
    for key in table:
        try:
            p = float(key)
        except (TypeError, ValueError):
            continue
        v = _n(table, key)
        if v is not None and 0 < p < 100 and v > 0:
            out.append((p, v))
    return out


def _against_shares(points: list[tuple[float, float]], shares) -> str | None:
    """The first percentile ``(p, value_ns)`` that ``shares(limit, inclusive)`` (the percentage of
    I/Os below ``limit``) contradicts, described, or None."""
    for p, v in points:
        below = shares(v * (1 - EDGE_SLACK), False)  # surely faster than v
        upto = shares(v * (1 + EDGE_SLACK), True)  # possibly at most v
        if below > p + HISTOGRAM_SLACK or upto < p - HISTOGRAM_SLACK:
            return (
                f"its {p:g}th percentile {v / 1000:g} us puts {p:g} % of the I/Os below it, "
                f"but its histogram has {below:.1f} % below and {upto:.1f} % up to it"
            )
    return None


def _cumulative(values: list[float]) -> list[float]:
    out = [0.0]
    for v in values:
        out.append(out[-1] + v)
    return out


def _histogram_problem(job: dict, clat) -> str | None:
    buckets = _buckets(job)
    if not buckets:
        return None
    buckets.sort()
    cum = _cumulative([b[2] for b in buckets])
    total = cum[-1]
    if total <= 0:
        return None  # no I/O in this entry
    lows = [b[0] for b in buckets]
    highs = sorted(b[1] for b in buckets)  # ascending with the lows: the ranges do not overlap

    def shares(limit: float, inclusive: bool) -> float:
        # inclusive: every bucket that may hold an I/O of at most `limit` (its low end is below);
        # else: the buckets that lie wholly below `limit`
        n = bisect_right(lows, limit) if inclusive else bisect_right(highs, limit)
        return cum[n] * 100 / total

    return _against_shares(_percentiles(clat), shares)


def _bins_problem(section, ios: float, what: str, slack_ios: float) -> str | None:
    bins = section.get("bins") if isinstance(section, dict) else None
    if not isinstance(bins, dict) or not bins:
        return None
    pairs = []
    for key, count in bins.items():
        try:
            value = float(key)
        except (TypeError, ValueError):
            value = math.nan
        if not math.isfinite(value):
            return f"{what} histogram bin {str(key)[:20]!r} is not a latency"
        if isinstance(count, bool) or not isinstance(count, (int, float)) or not 0 <= count < 1e18:
            return f"{what} histogram bin {str(key)[:20]!r} holds no count"
        pairs.append((value, float(count)))
    pairs.sort()
    cum = _cumulative([c for _, c in pairs])
    total = cum[-1]
    if abs(total - ios) > slack_ios:
        return f"{what} histogram bins hold {total:.0f} I/Os, fio counted {ios:.0f}"
    values = [v for v, _ in pairs]

    def shares(limit: float, inclusive: bool) -> float:
        n = bisect_right(values, limit) if inclusive else bisect_left(values, limit)
        return cum[n] * 100 / total if total else 0.0

    why = _against_shares(_percentiles(section), shares)
    return f"{what} {why}" if why else None
