"""Every fio run of a bench has a deadline; past it, fio and every process it started are killed.

A step writes for a known time: its ramp and its window (``--ramp_time`` + ``--runtime``; for
the sustained write, its time budget, or fio's runtime cap for a byte budget). fio needs a
little more than that: it starts its jobs, lays out the region, and ends with the I/O still in
flight. A fio that is stopped (SIGSTOP), or whose main process was killed while a job process
still waited for it (seen after the OOM killer's SIGKILL 200-250 ms into a step: the job slept
in a futex for good), never ends on its own, and diskq would wait for ever with the write cache
switched.

So each run may take its writing time plus a margin: :data:`FACTOR` times the largest overhead
(wall time beyond the writing time) of the runs seen so far in this bench, and never less than
a floor (:data:`FLOOR_S` by default). Past it, diskq kills fio's whole subtree at once
(:func:`diskq.proc.run` with ``grace=0``: the keeper kills every process below it) and raises
:class:`~diskq.errors.StepOverdue`; the runner then restores the cache as on any error.
"""

from __future__ import annotations

import re
import signal
import time
from dataclasses import dataclass

from diskq import proc, watchdog
from diskq.errors import CommandTimedOut, StepOverdue

#: the least margin a run gets beyond its writing time, in seconds (fio 3.33 on a loop device
#: starts and ends 1 to 32 jobs within a second; a slow device's last flush adds to that)
FLOOR_S = 30.0
#: the margin is this many times the largest overhead seen so far in the bench
FACTOR = 4.0


def writing_seconds(options: dict[str, str]) -> float:
    """The seconds a run of fio with ``options`` writes: ``ramp_time`` + ``runtime`` (plain
    seconds, as diskq writes them).

    >>> writing_seconds({"ramp_time": "1", "runtime": "4"}), writing_seconds({"runtime": "600"})
    (5.0, 600.0)
    """
    return float(options.get("ramp_time", "0")) + float(options["runtime"])


_LEFT = re.compile(
    re.escape(watchdog.LEFT_BEHIND).replace(r"\{how\}", r"ended (by signal (\d+)|with exit status (-?\d+))")
)


def left_behind(stderr: str) -> str | None:
    """What the keeper said of a fio that had ended while a process it started still ran
    (:data:`diskq.watchdog.LEFT_BEHIND`), as words for the error; None when it said nothing.

    >>> left_behind("diskq keeper: the program had ended by signal 9; the processes it left were killed")
    "fio's main process had been killed by signal 9 (SIGKILL) and a process it started never ended"
    >>> left_behind("fio: some note") is None
    True
    """
    m = _LEFT.search(stderr)
    if not m:
        return None
    if m.group(2):
        number = int(m.group(2))
        try:
            name = f" ({signal.Signals(number).name})"
        except ValueError:
            name = ""
        how = f"been killed by signal {number}{name}"
    else:
        how = f"exited with status {m.group(3)}"
    return f"fio's main process had {how} and a process it started never ended"


@dataclass
class Clock:
    """The deadlines of one bench's fio runs, and the overhead they have shown so far."""

    floor_s: float = FLOOR_S
    worst_overhead_s: float = 0.0

    def margin_s(self) -> float:
        """Seconds a run may take beyond its writing time.

        >>> Clock(floor_s=30).margin_s(), Clock(floor_s=30, worst_overhead_s=10).margin_s()
        (30, 40.0)
        """
        return max(self.floor_s, FACTOR * self.worst_overhead_s)

    def run(self, argv: list[str], writing_s: float, label: str) -> proc.Completed:
        """Run fio (``argv``, writing for ``writing_s`` s) under its deadline; ``label`` names the
        step in the error (``the step at 4 jobs``). Raises :class:`StepOverdue` past the deadline,
        once every process fio started is gone."""
        margin = self.margin_s()
        limit = writing_s + margin
        started = time.monotonic()
        try:
            done = proc.run(argv, timeout=limit, grace=0)
        except CommandTimedOut as exc:
            completed = getattr(exc, "completed", None)
            left = left_behind(completed.stderr if completed is not None else "")
            raise StepOverdue(
                f"{label} did not end by its deadline: fio was still running {limit:g} s after it started "
                f"({writing_s:g} s of writing + {margin:g} s margin), so diskq killed it and every process it started"
                + (f" ({left})" if left else ""),
                limit_s=limit,
                hint="fio hung: it was stopped (SIGSTOP), or a job process was left waiting by a fio whose main "
                "process was killed (as the OOM killer does); the steps that completed are kept and the write "
                "cache is restored; check `dmesg`, then run the bench again",
            ) from None
        self.worst_overhead_s = max(self.worst_overhead_s, time.monotonic() - started - writing_s)
        return done
