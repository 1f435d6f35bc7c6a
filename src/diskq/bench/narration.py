"""The bench's sentences about its own curve, derived from the points its table shows.

The adaptive search (:mod:`diskq.bench.sweep`) decides on short steps and then measures some of
them again with a longer window; a confirmed figure replaces the short one, so the final table
can differ from what the search saw when it turned. A sentence written at the turn ("IOPS fell
at 4 and 8 jobs") may then sit over a table that rises to 8 jobs, and "peak confirmed at 24
jobs" over a table whose peak is 16. So every sentence about the curve is made from the final
points: :func:`stop_words` for why the sweep ends where it does, :func:`narrate` for a run's
notes as they are shown (a recorded document keeps its notes as written: the confirmation
notes are a record the replay reads, :mod:`diskq.submission.replay`).

Pure functions; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

#: the search's note on a confirmation, as :meth:`diskq.bench.sweep.Search._confirm_peak` writes it
_CONFIRMED = re.compile(r"^peak confirmed at (\d{1,4}) jobs with the longer window: (.*)$")
_STOPPED = "search stopped: "
_LIMIT = re.compile(r", then --max-jobs (\d{1,4}) was reached$")


def _jobs(n: int) -> str:
    return f"{n} job" if n == 1 else f"{n} jobs"


def peak(curve: Mapping[int, float]) -> int | None:
    """The job count with the highest IOPS, the fewest jobs among equals (as the table marks it).

    >>> peak({1: 100.0, 2: 180.0, 4: 180.0, 8: 150.0})
    2
    """
    if not curve:
        return None
    return max(curve, key=lambda n: (curve[n], -n))


def stop_words(curve: Mapping[int, float], max_jobs: int | None = None, *, reached_limit: bool = False) -> str:
    """Why the sweep ends where it does, in the table's own figures (``curve``: numjobs -> IOPS of
    the points shown). The steps measured above the peak and how far each is below it; or, when
    the peak is the largest step, that IOPS still rose there. ``reached_limit``: the search ran
    on to ``max_jobs`` (it did not stop early).

    >>> stop_words({1: 5028, 2: 2651, 4: 1500})
    'IOPS fell at 2 and 4 jobs (-47.3 %, -70.2 % vs 1)'
    >>> stop_words({1: 30000, 2: 52000, 4: 70000, 8: 84018}, 8)
    'reached --max-jobs 8 with IOPS still rising'
    >>> stop_words({8: 800, 16: 1600, 24: 1700, 32: 1500}, 32, reached_limit=True)
    'IOPS fell at 32 jobs (-11.8 % vs 24), then --max-jobs 32 was reached'
    """
    best = peak(curve)
    if best is None:
        return "no step was measured"
    above = sorted(n for n in curve if n > best)
    if not above:
        if max_jobs is not None and best == max_jobs:
            return f"reached --max-jobs {max_jobs} with IOPS still rising"
        return f"IOPS still rose at the largest step measured, {_jobs(best)}"
    base = curve[best]
    changes = [(curve[n] / base - 1) * 100 if base else 0.0 for n in above]
    verb = "fell" if all(c < 0 for c in changes) else "flattened"
    where = str(above[0]) if len(above) == 1 else ", ".join(str(n) for n in above[:-1]) + f" and {above[-1]}"
    limit = (
        f", then --max-jobs {max_jobs} was reached"
        if reached_limit and max_jobs is not None and max(curve) == max_jobs
        else ""
    )
    return (
        f"IOPS {verb} at {where} {'job' if above == [1] else 'jobs'} "
        f"({', '.join(f'{c:+.1f} %' for c in changes)} vs {best}){limit}"
    )


def narrate(notes: list[str], curve: Mapping[int, float], max_jobs: int | None = None) -> list[str]:
    """A run's notes as the bench says them, each sentence about the curve made from ``curve``
    (the points its table shows): "search stopped: ..." from :func:`stop_words`; a "peak
    confirmed at N jobs" whose N is no longer the table's peak says that N was the best point
    when it was measured again, and where the peak is now. Other notes are kept as written.

    >>> narrate(["peak confirmed at 24 jobs with the longer window: 90,000 IOPS after 4.0 s, then 70,000 IOPS "
    ...          "after 7.0 s", "search stopped: IOPS fell at 32 jobs (-3.0 % vs 24)"],
    ...         {1: 9000, 8: 60000, 16: 80000, 24: 70000, 32: 66000})[0]
    '24 jobs, then the best point, measured again with the longer window: 90,000 IOPS after 4.0 s, then 70,000 IOPS after 7.0 s; the peak is at 16 jobs (80,000 IOPS)'
    """
    best = peak(curve)
    out = []
    for note in notes:
        if not isinstance(note, str):
            continue
        m = _CONFIRMED.match(note)
        if m and best is not None and int(m.group(1)) != best:
            out.append(
                f"{_jobs(int(m.group(1)))}, then the best point, measured again with the longer window: "
                f"{m.group(2)}; the peak is at {_jobs(best)} ({curve[best]:,.0f} IOPS)"
            )
        elif note.startswith(_STOPPED) and curve:
            limit = _LIMIT.search(note)
            reached = limit is not None or note.startswith(f"{_STOPPED}reached --max-jobs")
            jobs = int(limit.group(1)) if limit else max_jobs
            if jobs is None:
                m2 = re.search(r"--max-jobs (\d{1,4})", note)
                jobs = int(m2.group(1)) if m2 else None
            out.append(_STOPPED + stop_words(curve, jobs, reached_limit=reached))
        else:
            out.append(note)
    return out
