"""A stop rule for a step, and the trend within it, replayed over recorded one-second IOPS traces.

Method version 3 measures every step over a fixed window after a 1 s ramp (4 s to steer the
search, 7 s for the figures it answers with), whether the device's rate settled after one
second or wanders for ten. The rule modelled here would end a step as soon as the mean of its
one-second samples is known well enough: once the 95 % confidence interval of that mean (Student's
t over the samples after the ramp) is narrower than ``width_pct`` of it, after at least
``floor_s`` seconds and at most ``cap_s`` (the current window). One-second samples of a drifting
device are correlated, so the interval is optimistic; that is why the rule is judged by replay
against each trace's full 20 s mean, the community protocol's figure, and not by its own interval.

:func:`trend_pct` measures the other question: does the rate still move at the end of a window?
A step whose rate falls (or climbs) across its window measures the start of a regime, not the
step's mean.

Nothing here runs fio; ``benchmarks/stop_rule.py`` prints the replay tables.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: two-sided 95 % quantiles of Student's t by degrees of freedom (standard tables)
_T975 = {
    1: 12.706,
    2: 4.303,
    3: 3.182,
    4: 2.776,
    5: 2.571,
    6: 2.447,
    7: 2.365,
    8: 2.306,
    9: 2.262,
    10: 2.228,
    11: 2.201,
    12: 2.179,
    13: 2.160,
    14: 2.145,
    15: 2.131,
    16: 2.120,
    17: 2.110,
    18: 2.101,
    19: 2.093,
    20: 2.086,
}


@dataclass(frozen=True)
class StopRule:
    """End a step once the 95 % interval of its mean is within ``width_pct`` of the mean, after
    ``floor_s`` measured seconds, at ``cap_s`` at the latest; the ``ramp_s`` seconds before are
    written and left out, as fio's ``--ramp_time``."""

    width_pct: float
    floor_s: int = 3
    cap_s: int = 7
    ramp_s: int = 1

    def __post_init__(self) -> None:
        if not self.width_pct > 0 or self.floor_s < 2 or self.cap_s < self.floor_s or self.ramp_s < 0:
            raise ValueError(
                "a stop rule needs a positive width, a floor of at least 2 s and a cap at the floor or above"
            )

    def label(self) -> str:
        """``95 % CI within 5 % (3-7 s after a 1 s ramp)``."""
        return f"95 % CI within {self.width_pct:g} % ({self.floor_s}-{self.cap_s} s after a {self.ramp_s} s ramp)"


def halfwidth_pct(window: Sequence[float]) -> float:
    """Half the width of the 95 % confidence interval of the window's mean, in % of the mean
    (Student's t; the samples taken as independent).

    >>> round(halfwidth_pct([100, 102, 98, 101, 99]), 2)
    1.96
    >>> halfwidth_pct([100]), halfwidth_pct([0, 0])
    (inf, inf)
    """
    n = len(window)
    if n < 2:
        return math.inf
    mean = sum(window) / n
    if mean <= 0:
        return math.inf
    sd = math.sqrt(sum((x - mean) ** 2 for x in window) / (n - 1))
    t = _T975.get(n - 1, 1.96)
    return t * sd / math.sqrt(n) / mean * 100


def stop_second(samples: Sequence[float], rule: StopRule) -> int:
    """Measured seconds (after the ramp) at which the rule ends the step: the first ``t`` from the
    floor on whose samples' interval is narrow enough, else the cap (or what the trace holds).

    >>> stop_second([50, 100, 101, 99, 100, 100, 100, 100, 100], StopRule(2))
    4
    >>> stop_second([50, 100, 130, 80, 120, 90, 110, 100, 100], StopRule(2))
    7
    """
    measured = list(samples[rule.ramp_s :])
    last = min(rule.cap_s, len(measured))
    for t in range(rule.floor_s, last + 1):
        if halfwidth_pct(measured[:t]) <= rule.width_pct:
            return t
    return last


def rule_iops(samples: Sequence[float], rule: StopRule) -> float:
    """The step's figure under the rule: the mean of its measured seconds.

    >>> rule_iops([50, 100, 101, 99, 100, 100], StopRule(2))
    100.0
    """
    t = stop_second(samples, rule)
    measured = samples[rule.ramp_s : rule.ramp_s + t]
    return sum(measured) / len(measured) if measured else 0.0


def trend_pct(window: Sequence[float]) -> float:
    """How far the rate moves across the window by its least-squares line: the line's change from
    the first second to the last, in % of the window's mean (negative: falling).

    >>> trend_pct([100, 100, 100]), round(trend_pct([110, 100, 90]), 1)
    (0.0, -20.0)
    >>> trend_pct([5])
    0.0
    """
    n = len(window)
    mean = sum(window) / n if n else 0.0
    if n < 2 or mean <= 0:
        return 0.0
    xm = (n - 1) / 2
    sxx = sum((i - xm) ** 2 for i in range(n))
    slope = sum((i - xm) * (y - mean) for i, y in enumerate(window)) / sxx
    return slope * (n - 1) / mean * 100
