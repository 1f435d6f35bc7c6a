"""Questionable points: figures no drive can give, kept visible but out of every verdict.

N jobs at iodepth 1 each wait for their own write and fdatasync, so a job among N never gets
more done than a job alone: IOPS(N)/N cannot clearly exceed IOPS(1). A point whose per-job rate
is more than ``max_per_job_ratio`` (``[plausibility]`` in ``criteria.toml``) times the curve's
1-job rate is *questionable*: most likely a transcription error (a tenfold typo), or not a
measurement of the drive at all. The 1-job point is the reference and is never questionable;
a curve without one has nothing to be judged against.
"""

from __future__ import annotations

from collections.abc import Iterable

from diskq.analyse import criteria
from diskq.analyse.model import QuestionablePoint


def max_per_job_ratio(crit: dict | None = None) -> float:
    """The ``[plausibility]`` threshold (from ``crit`` when given, else from criteria.toml)."""
    section = crit if crit is not None else criteria.section("plausibility")
    return float(section["max_per_job_ratio"])


def questionable(curve: Iterable[tuple[int, float]], crit: dict | None = None) -> list[QuestionablePoint]:
    """The questionable points of ``curve`` (``(numjobs, iops)`` pairs), in job order.

    >>> [(q.numjobs, q.ratio) for q in questionable([(1, 1600), (15, 48409)])]
    [(15, 2.02)]
    >>> questionable([(1, 600), (8, 3640)])
    []
    """
    rows = sorted((int(n), float(x)) for n, x in curve)
    solo = next((x for n, x in rows if n == 1), None)
    if solo is None or solo <= 0:
        return []
    limit = max_per_job_ratio(crit)
    out = []
    for n, x in rows:
        if n <= 1:
            continue
        per_job = x / n
        ratio = per_job / solo
        if round(ratio - limit, 9) > 0:
            out.append(QuestionablePoint(
                numjobs=n, iops=x, ratio=round(ratio, 2),
                reason=(f"{x:,.0f} IOPS at {n} jobs is {per_job:,.0f} per job, {ratio:.1f}x the 1-job rate of "
                        f"{solo:,.0f}: a job among many cannot outrun a job alone by more than "
                        f"{limit:g}x (likely a typo or not this drive)"),
            ))
    return out


def plausible(curve: Iterable[tuple[int, float]], crit: dict | None = None) -> list[tuple[int, float]]:
    """``curve`` without its questionable points, in job order."""
    rows = sorted((int(n), float(x)) for n, x in curve)
    left_out = {q.numjobs for q in questionable(rows, crit)}
    return [(n, x) for n, x in rows if n not in left_out]
