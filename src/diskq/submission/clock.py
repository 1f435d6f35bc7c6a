"""fio's own clock against the step length, checked on every step of a submission.

With ``time_based``, fio measures ``runtime`` seconds (after ``ramp_time``) and stops: the time it
reports measuring (``write.runtime``, ms) is never longer than that. Its steady-state detector
may end a step earlier, never later. A forger who claims more I/Os over a longer window than fio
was given, and scales every counter to match (the same IOPS, latencies that fit), is caught here:
the step length is an option fio echoes, and diskq's methods fix it.

From a 7 s step (fio 3.33, trimmed)::

    "global options": {"time_based": "1", "runtime": "7", ...},
    "jobs": [{"write": {"runtime": 7001, "total_ios": 88613, ...}}]

>>> clock_problem(7001, {"time_based": "1", "runtime": "7"}) is None
True
>>> clock_problem(21000, {"time_based": "1", "runtime": "7"})
'fio says it measured 21000 ms in a step it was told to run for 7 s: its own clock does not allow it'
"""

from __future__ import annotations

import re

#: How much longer than the step fio may say it measured: its timer stops at the first check
#: after ``runtime`` (fio reports 7001 ms for a 7 s step), never a tenth of a second later.
CLOCK_SLACK_MS = 100.0


def _step_seconds(value) -> float | None:
    """fio's ``runtime`` option in seconds: ``7``, ``7s``, ``7000ms``, ``1m``; None otherwise."""
    if not isinstance(value, str):
        return None
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*", value.lower())
    if not m:
        return None
    return float(m.group(1)) * {"ms": 1e-3, "s": 1.0, None: 1.0, "m": 60.0, "h": 3600.0}[m.group(2)]


def clock_problem(runtime_ms, options: dict) -> str | None:
    """fio's measured time (``write.runtime``, ms) against the step it was told to run
    (``time_based`` and ``runtime`` among its options); None when it fits or cannot be judged.
    Checked on every step, counters or not (:mod:`diskq.submission.figures`)."""
    if not isinstance(options, dict) or "time_based" not in options:
        return None
    step = _step_seconds(options.get("runtime"))
    if step is None or not isinstance(runtime_ms, (int, float)) or isinstance(runtime_ms, bool):
        return None
    if runtime_ms > step * 1000 + CLOCK_SLACK_MS:
        return (
            f"fio says it measured {runtime_ms:.0f} ms in a step it was told to run for {step:g} s: "
            "its own clock does not allow it"
        )
    return None
