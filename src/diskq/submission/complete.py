"""A submission is a complete sweep: an interrupted result is refused, never aggregated.

``diskq bench`` keeps what it measured when it is stopped (Ctrl-C, SIGTERM, SIGHUP, an error,
a step that something else cut short) and marks the document: ``interrupted`` on the result,
on the run that was going, and on the step that was cut. Such a curve lacks its later steps,
so its peak, its "max IOPS", its scaling class and the OSDs it allows are not what the device
would give, and nothing in the database's medians could show that. The public database
therefore takes complete sweeps only: validation reports every interrupted mark as a problem
(so ``db build`` skips the file and lists why in ``skipped``), and ``diskq sign`` refuses to
sign such a document. The contributor runs the bench again to its end.

The write-cache states the bench set out to measure are recorded (``method.cache_states``:
``--cache both`` promises two runs), and the runs must be those states in that order: a bench
reduced to one of its two runs is refused. Documents made before this was recorded lack it.

A mark can be removed by editing the file before signing it; the raw fio output of each step
still says how long the step ran. The block-size profile (``--profile sizes``) is held to the same
rule, step by step. A step of a time-based sweep (``diskq bench`` and the
community command both pass ``--time_based``) that ran less than :data:`FULL_STEP_SHARE` of the runtime fio was given,
without fio's steady-state detector having ended it, was cut short, marked or not.
"""

from __future__ import annotations

from diskq.bench.fiojson import option_seconds
from diskq.result import Point, ResultDocument, SizePoint
from diskq.submission.problems import Problem

#: The same share as ``diskq.bench.fio.FULL_STEP_SHARE``: a complete time-based step reports at
#: least the runtime asked for.
FULL_STEP_SHARE = 0.98
RERUN = "a partial result is not a submission: run the bench again to its end"


def asked_runtime_s(fio: dict) -> float | None:
    """The runtime fio was given, from its own JSON (``job options`` of the first job, else
    ``global options``), in seconds; None when absent or unreadable.

    >>> asked_runtime_s({"jobs": [{"job options": {"runtime": "10"}}]}), asked_runtime_s({"global options": {"runtime": "1m"}})
    (10.0, 60.0)
    """
    return option_seconds(fio, "runtime")


def _steady_state_attained(fio: dict) -> bool:
    jobs = fio.get("jobs")
    return isinstance(jobs, list) and any(
        isinstance(j, dict) and isinstance(j.get("steadystate"), dict) and bool(j["steadystate"].get("attained"))
        for j in jobs
    )


def _cut_short(point: Point | SizePoint) -> str | None:
    if point.interrupted or not isinstance(point.fio, dict) or _steady_state_attained(point.fio):
        return None
    asked = asked_runtime_s(point.fio)
    if asked is None or point.runtime_ms >= asked * 1000 * FULL_STEP_SHARE:
        return None
    return f"fio ran this step {point.runtime_ms / 1000:g} s of the {asked:g} s it was given (its own output says so): a step cut short"


def incomplete_problems(result: ResultDocument) -> list[Problem]:
    """One problem per interrupted mark, and per time-based step that ran short unmarked."""
    out = []
    if result.interrupted:
        out.append(Problem("", "result.interrupted", f"the bench was stopped before the end; {RERUN}"))
    time_based = result.method.fio_params.get("time_based") == "1"  # both methods: --time_based
    for r, run in enumerate(result.runs):
        if run.interrupted:
            out.append(Problem("", f"result.runs[{r}].interrupted", f"this sweep was stopped before the end; {RERUN}"))
        # (where, step, whether its method ran fixed-length steps that may be checked for a short run)
        steps = [(f"points[{i}]", p, time_based) for i, p in enumerate(run.points)]
        steps += [("nosync", run.nosync, time_based)] if run.nosync is not None else []
        if run.sizes is not None:
            if run.sizes.interrupted:
                out.append(
                    Problem(
                        "",
                        f"result.runs[{r}].sizes.interrupted",
                        f"this block-size profile was stopped before the end; {RERUN}",
                    )
                )
            # the size profile's steps are time-based too (diskq-size-profile passes --time_based)
            sized = run.sizes.method.fio_params.get("time_based") == "1"
            steps += [(f"sizes.points[{i}]", p, sized) for i, p in enumerate(run.sizes.points)]
        for where, point, timed in steps:
            if point.interrupted:
                out.append(Problem("", f"result.runs[{r}].{where}.interrupted", f"this step was cut short; {RERUN}"))
            elif timed:
                why = _cut_short(point)
                if why:
                    out.append(Problem("", f"result.runs[{r}].{where}.runtime_ms", f"{why}; {RERUN}"))
    planned = result.method.cache_states
    if planned is not None and not result.interrupted:
        held = [run.write_cache for run in result.runs]
        if held != planned:
            out.append(
                Problem(
                    "",
                    "result.runs",
                    (
                        f"the bench set out to measure the write cache {' then '.join(planned) or '(nothing)'} "
                        f"(method.cache_states), one run each, and the document holds runs at "
                        f"{', '.join(held) or 'none'}: a run is missing or was added; {RERUN}"
                    ),
                )
            )
    for i, sustained in enumerate(result.sustained):
        if sustained.interrupted:
            out.append(
                Problem("", f"result.sustained[{i}].interrupted", f"this sustained write was cut short; {RERUN}")
            )
    return out
