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
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table (pastes straight into results.md)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines)
