"""fio's steady-state detector, replayed over recorded one-second IOPS traces.

diskq ends a step early with fio's own detector (``--ss``, ``--ss_dur``, ``--ss_ramp``); the
functions here model what that detector decides, so that a setting can be judged offline on
traces recorded once (``--write_iops_log`` with ``--log_avg_msec=1000``) instead of by spending
device time on every candidate. Two criteria, as fio computes them over the last ``window_s``
one-second samples, collected after ``ramp_s`` seconds:

- ``iops``: the largest deviation of a sample from the window's mean, in % of that mean;
- ``iops_slope``: the least-squares slope of the samples (IOPS per second), in % of the mean.

The step ends at the first second whose criterion lies below the limit. What fio then reports
is the mean over the whole step (``total_ios / runtime``): the seconds before the window count
with it, and one low first second weighs four times as much in a 5 s step as in a 20 s one.

Method version 3 does not end steps early: each measures a fixed window after a ramp fio leaves
out of its figures (``--ramp_time``); :func:`window_iops` and :func:`window_errors` replay that.
Method version 4's answer steps measure such a window and go on while its rate still trends
(``iops_slope`` over the last seconds, counted from the ramp's end, up to a cap);
:func:`settling_iops` replays that.

Nothing here runs fio.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

KINDS = ("iops", "iops_slope")


@dataclass(frozen=True)
class Detector:
    """One setting of fio's detector: ``--ss=KIND:LIMIT% --ss_dur=WINDOWs --ss_ramp=RAMPs``."""

    kind: str = "iops"
    limit_pct: float = 5.0
    window_s: int = 3
    ramp_s: int = 1

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown steady-state criterion {self.kind!r}")
        if self.window_s < 2 or self.ramp_s < 0 or not self.limit_pct > 0:
            raise ValueError("the window needs at least 2 samples, the ramp and the limit must not be negative")

    def label(self) -> str:
        """``iops_slope:2% 4s+2s``: criterion, window and ramp."""
        return f"{self.kind}:{self.limit_pct:g}% {self.window_s}s+{self.ramp_s}s"


def deviation_pct(window: Sequence[float]) -> float:
    """fio's ``iops`` criterion: the largest distance of a sample from the window's mean, in %.

    >>> deviation_pct([95, 100, 105])
    5.0
    """
    mean = sum(window) / len(window)
    if mean <= 0:
        return float("inf")
    return max(abs(x - mean) for x in window) / mean * 100


def slope_pct(window: Sequence[float]) -> float:
    """fio's ``iops_slope`` criterion: |least-squares slope| per second, in % of the mean.

    >>> slope_pct([100, 102, 104])
    1.9607843137254901
    """
    n = len(window)
    mean = sum(window) / n
    if mean <= 0:
        return float("inf")
    xm = (n - 1) / 2
    sxx = sum((i - xm) ** 2 for i in range(n))
    slope = sum((i - xm) * (y - mean) for i, y in enumerate(window)) / sxx
    return abs(slope) / mean * 100


def criterion_pct(window: Sequence[float], kind: str) -> float:
    return slope_pct(window) if kind == "iops_slope" else deviation_pct(window)


def stop_second(samples: Sequence[float], detector: Detector) -> int | None:
    """The second after which the detector ends the step (None: it runs its full length).

    ``samples[i]`` is the IOPS of second ``i + 1``. The first check comes once ``window_s``
    samples have been collected after ``ramp_s`` seconds.

    >>> stop_second([100, 50, 100, 101, 99, 100], Detector("iops", 5, 3, 1))
    5
    >>> stop_second([80, 90, 95, 99, 103, 103, 103], Detector("iops", 5, 3, 1))
    4
    >>> stop_second([80, 90, 95, 99, 103, 103, 103], Detector("iops_slope", 2, 3, 1))
    6
    """
    w = detector.window_s
    for end in range(detector.ramp_s + w, len(samples) + 1):
        if criterion_pct(samples[end - w : end], detector.kind) < detector.limit_pct:
            return end
    return None


def step_iops(samples: Sequence[float], stop: int | None) -> float:
    """The IOPS fio reports for a step that ended after ``stop`` seconds (None: all of them):
    the mean of every second up to the stop.

    >>> step_iops([50, 100, 100, 100], 3), step_iops([50, 100, 100, 100], None)
    (83.33333333333333, 87.5)
    """
    used = list(samples[: stop or len(samples)])
    return sum(used) / len(used) if used else 0.0


def window_iops(samples: Sequence[float], ramp_s: int, measure_s: int) -> float:
    """The IOPS fio reports for a fixed step of method version 3 (``--ramp_time=RAMP
    --runtime=MEASURE``): the mean of the seconds after the ramp, the ramp left out.

    >>> window_iops([50, 100, 90, 110, 400], 1, 3)
    100.0
    """
    return step_iops(samples[ramp_s : ramp_s + measure_s], None)


def settling_iops(
    samples: Sequence[float], ramp_s: int, window_s: int, limit_pct: float, cap_s: int
) -> tuple[float, int]:
    """The IOPS fio reports for an answer step of method version 4 (``--ramp_time=RAMP
    --runtime=CAP --ss=iops_slope:LIMIT% --ss_dur=WINDOW --ss_ramp=0``), and the seconds it measured:
    the step ends at the first second from ``window_s`` on whose last ``window_s`` samples have a
    slope below ``limit_pct`` of their mean per second, at ``cap_s`` at the latest (or where the
    trace ends); its figure is the mean of every second after the ramp.

    >>> settling_iops([50, 100, 100, 100, 100, 90, 80], 1, 3, 1, 5)
    (100.0, 3)
    >>> settling_iops([50, 130, 120, 110, 100, 100, 100, 100], 1, 3, 1, 5)
    (112.0, 5)
    """
    measured = list(samples[ramp_s:])
    last = min(cap_s, len(measured))
    stop = stop_second(measured[:last], Detector("iops_slope", limit_pct, window_s, 0)) or last
    return step_iops(measured, stop), stop


def window_errors(traces: Iterable[Sequence[float]], ramp_s: int, measure_s: int) -> list[float]:
    """For each full-length trace, how far the fixed window's figure lies from the whole step's
    mean (what a step of the community protocol would report), in % (signed)."""
    out = []
    for samples in traces:
        full = step_iops(samples, None)
        if full > 0 and len(samples) >= ramp_s + measure_s:
            out.append((window_iops(samples, ramp_s, measure_s) / full - 1) * 100)
    return out


def parse_iops_logs(texts: Iterable[str], seconds: int | None = None) -> list[float]:
    """Per-second IOPS of a step from fio's per-job ``--write_iops_log`` files written with
    ``--log_avg_msec=1000``, summed over the jobs by the second each sample closes. A last
    second that never closed has no sample and is left out, not counted as zero. A job log
    (fio 3.33, 4 jobs on a loop device) reads::

        1000, 2911, 1, 0, 0
        2000, 3016, 1, 0, 0
        3000, 2987, 1, 0, 0

    (time in ms, IOPS, direction, block size, offset). Lines that are not samples are skipped.

    >>> parse_iops_logs(["1000, 10, 1, 0, 0\\n2000, 12, 1, 0, 0\\n", "1001, 5, 1, 0, 0\\n1999, 6, 1, 0, 0\\n"])
    [15.0, 18.0]
    """
    total: dict[int, float] = {}
    for text in texts:
        for line in text.splitlines():
            parts = [p.strip() for p in line.split(",")]
            if len(parts) < 2 or not parts[0].isdigit():
                continue
            try:
                value = float(parts[1])
            except ValueError:
                continue
            second = round(int(parts[0]) / 1000)
            if second >= 1 and (seconds is None or second <= seconds):
                total[second] = total.get(second, 0.0) + value
    last = max(total, default=0)
    return [total.get(s, 0.0) for s in range(1, last + 1)]
