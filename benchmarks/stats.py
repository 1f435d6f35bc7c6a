"""Pure helpers shared by the benchmark scripts: medians, ratios, peak agreement, growth.

Nothing here runs a program or touches a device, so the smoke test can check it on tiny inputs.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence


def median(values: Iterable[float]) -> float:
    """Median of a non-empty sequence (the mean of the middle two for an even count)."""
    vals = list(values)
    if not vals:
        raise ValueError("median of no values")
    return statistics.median(vals)


def ratio(a: float, b: float) -> float:
    """``a / b``; infinity when ``b`` is 0 and ``a`` is not, 1 when both are 0."""
    if b == 0:
        return 1.0 if a == 0 else math.inf
    return a / b


def alternate(contenders: Sequence[str], pairs: int) -> list[str]:
    """Run order A B A B ...: each contender once per round, ``pairs`` rounds.

    >>> alternate(["diskq", "fio"], 2)
    ['diskq', 'fio', 'diskq', 'fio']
    """
    return [c for _ in range(pairs) for c in contenders]


def doubling_steps_apart(a: int, b: int) -> float:
    """How many steps of the doubling sequence 1, 2, 4, ... separate job counts ``a`` and ``b``
    (|log2 a - log2 b|; 12 jobs is 0.58 steps from 8 and 0.42 from 16)."""
    if a < 1 or b < 1:
        raise ValueError("job counts start at 1")
    return abs(math.log2(a) - math.log2(b))


def same_peak_jobs(a: int, b: int, *, steps: float = 1.0) -> bool:
    """Peaks at ``a`` and ``b`` jobs agree when they are at most ``steps`` doubling steps apart."""
    return doubling_steps_apart(a, b) <= steps + 1e-9


def within_pct(a: float, b: float, pct: float) -> bool:
    """``a`` is within ``pct`` per cent of the reference ``b``."""
    return abs(ratio(a, b) - 1.0) <= pct / 100.0 + 1e-12


def sign_test(ratios: Iterable[float]) -> tuple[int, int, float]:
    """How many ratios lie above 1 and below 1 (ties left out), and the two-sided p-value of the
    exact sign test: the chance of a split at least this uneven if either side were as likely.

    >>> sign_test([1.1, 1.2, 0.9, 1.0])
    (2, 1, 1.0)
    >>> above, below, p = sign_test([1.05] * 10 + [0.95] * 2)
    >>> above, below, round(p, 3)
    (10, 2, 0.039)
    """
    vals = list(ratios)
    above, below = sum(r > 1 for r in vals), sum(r < 1 for r in vals)
    n, k = above + below, min(above, below)
    if n == 0:
        return above, below, 1.0
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return above, below, min(1.0, 2 * tail)


def growth_exponent(sizes: Sequence[float], costs: Sequence[float]) -> float:
    """Least-squares slope of log(cost) over log(size): 1.0 is linear growth, 2.0 quadratic.

    >>> round(growth_exponent([1, 10, 100], [2, 20, 200]), 3)
    1.0
    """
    if len(sizes) != len(costs) or len(sizes) < 2:
        raise ValueError("need at least two (size, cost) pairs")
    xs = [math.log(s) for s in sizes]
    ys = [math.log(c) for c in costs]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        raise ValueError("sizes must differ")
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=False)) / sxx


def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table (pastes straight into results.md)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines)
