"""The sustained-write cliff: where a long write's throughput fell and stayed down, and how far.

A drive that buffers writes (an SLC cache in front of TLC or QLC flash, a DRAM buffer, a
host-managed cache) writes fast until the buffer is full and then at the speed of what is
behind it. In a series of per-interval throughput samples that is a *step down*: a level before,
a lower level after, for the rest of the write. :func:`find_cliff` fits exactly that shape:

* every split ``k`` (the first sample of the lower level) is tried; each side is summarised by
  its median and the split whose two medians explain the samples best (least total absolute
  deviation, a robust two-segment fit) wins;
* it is a cliff when that split leaves at least ``min_before_s`` before it and ``min_after_s``
  after it, and the median after lies at least ``drop_pct`` per cent below the median before
  (criteria ``[sustained]`` in ``criteria.toml``).

Medians make it robust: a few stalled seconds (garbage collection, a zero sample) neither make
a cliff nor hide one, and a throughput that dips and recovers is no cliff, because the level
after a split is the typical value of *everything* after it. A series whose samples all lie
within a band ``[low, high]`` can never be a cliff when ``1 - low/high`` is below the threshold:
any median of its samples lies in the band too.

Long series (more than :data:`EXACT_MAX` samples, a write of hours) are searched on means of
consecutive blocks first, then the split is refined sample by sample near the coarse one.
"""

from __future__ import annotations

import math
from statistics import median

from diskq.analyse import criteria
from diskq.analyse.model import Cliff

#: Up to this many samples every split is tried with exact medians; longer series are searched
#: on block means first.
EXACT_MAX = 600


def _cost(values: list[float], centre: float) -> float:
    return sum(abs(v - centre) for v in values)


def _best_split(samples: list[float], first: int, last: int) -> int:
    """The split in ``[first, last]`` whose two medians fit ``samples`` with the least total
    absolute deviation (the earliest of equal ones)."""
    best_k, best_cost = first, math.inf
    for k in range(first, last + 1):
        before, after = samples[:k], samples[k:]
        cost = _cost(before, median(before)) + _cost(after, median(after))
        if cost < best_cost - 1e-9 * max(1.0, abs(cost)):
            best_k, best_cost = k, cost
    return best_k


def _split(samples: list[float], first: int, last: int) -> int:
    """:func:`_best_split`, coarse-to-fine for long series."""
    n = len(samples)
    if n <= EXACT_MAX:
        return _best_split(samples, first, last)
    block = math.ceil(n / EXACT_MAX)
    means = [sum(samples[i : i + block]) / len(samples[i : i + block]) for i in range(0, n, block)]
    coarse = _best_split(means, max(1, first // block), max(1, min(len(means) - 1, last // block))) * block
    lo, hi = max(first, coarse - block), min(last, coarse + block)
    m_before = median(samples[:coarse])
    m_after = median(samples[coarse:])
    # near the coarse split, the two levels are known: the sample-exact split is the one that
    # assigns each sample in between to the nearer level, found with one running sum
    best_k, best_gain, gain = lo, 0.0, 0.0
    for k in range(lo, hi):
        gain += abs(samples[k] - m_before) - abs(samples[k] - m_after)  # sample k moved before the split
        if gain < best_gain - 1e-12:
            best_k, best_gain = k + 1, gain
    return best_k


def _mb(bw: float) -> str:
    return f"{bw / 1e6:,.0f} MB/s" if bw >= 10e6 else f"{bw / 1e6:.2g} MB/s"


def _gb(n: float) -> str:
    return f"{n / 1e9:,.1f} GB" if n >= 1e9 else f"{n / 1e6:,.0f} MB"


def find_cliff(samples: list[float], interval_ms: int, *, rules: dict | None = None) -> Cliff:
    """The cliff in ``samples`` (bytes per second, one per ``interval_ms``), or why there is none.

    >>> c = find_cliff([500e6] * 30 + [100e6] * 30, 1000)
    >>> c.found, c.at_s, c.at_bytes, c.drop_pct
    (True, 30.0, 15000000000, 80.0)
    >>> find_cliff([500e6, 480e6, 510e6] * 20, 1000).found
    False
    """
    rules = rules or criteria.section("sustained")
    threshold = float(rules["drop_pct"])
    dt = interval_ms / 1000.0
    n = len(samples)
    min_before = max(1, math.ceil(float(rules["min_before_s"]) / dt))
    min_after = max(1, math.ceil(float(rules["min_after_s"]) / dt))
    looked_for = (
        f"a fall of {threshold:g} % or more that lasts to the end of the write, "
        f"after at least {rules['min_before_s']:g} s and for at least {rules['min_after_s']:g} s"
    )
    if n < min_before + min_after:
        return Cliff(found=False, reasons=[f"{n} samples of {dt:g} s are too few to tell: looking for {looked_for}"])
    k = _split(list(samples), 1, n - 1)
    before, after = median(samples[:k]), median(samples[k:])
    if k < min_before or n - k < min_after:
        where = (
            f"in the first {k * dt:g} s (the drive's cache may have been full already)"
            if k < min_before
            else f"only for the last {(n - k) * dt:g} s (too short to tell from a pause)"
        )
        return Cliff(
            found=False,
            reasons=[
                f"no cliff: the sharpest change, from {_mb(before)} to {_mb(after)}, comes {where}; "
                f"looking for {looked_for}"
            ],
        )
    if round(before, 1) <= 0:  # below 0.05 B/s: nothing the document's one decimal can show falling
        return Cliff(found=False, reasons=[f"no throughput before any fall (median 0 B/s): looking for {looked_for}"])
    drop = max(0.0, min(100.0, 100.0 * (1.0 - after / before)))
    if drop < threshold:
        return Cliff(
            found=False,
            reasons=[
                f"no cliff: the sharpest lasting change, {k * dt:g} s into the write, goes from {_mb(before)} "
                f"to {_mb(after)} ({drop:.0f} % lower), less than the {threshold:g} % looked for"
            ],
        )
    written = sum(samples[:k]) * dt
    at_bytes = int(round(written)) if math.isfinite(written) and written < 2**63 else None
    return Cliff(
        found=True,
        at_s=round(k * dt, 3),
        at_bytes=at_bytes,
        before_bw_bytes=round(before, 1),
        after_bw_bytes=round(after, 1),
        drop_pct=round(drop, 1),
        reasons=[
            f"throughput fell {drop:.0f} % (from {_mb(before)} to {_mb(after)}) after {_gb(written)} "
            f"written, {k * dt:g} s into the write, and stayed there for the remaining {(n - k) * dt:g} s"
        ],
    )
