"""Replay the adaptive search from a sweep's own figures: the steps a complete sweep must hold.

The search of method versions 3 and 4 (:mod:`diskq.bench.sweep`) is deterministic: which job count it
measures next follows from the figures it measured so far, the options it ran with
(``method.max_jobs``, the default gain, patience and refinement budget, which ``diskq bench``
does not let a user change) and the spread of the 1-job step's IOPS in its own fio output. So
validation runs the same :class:`~diskq.bench.sweep.Search` again, answering every step it asks
for with the document's own point, and refuses the sweep when the search asks for a step the
document does not hold: a step removed (an interrupted one with its marks, say) leaves the
search one step short. Two more things a complete sweep shows:

* every step the search confirms was measured with the longer window (its fio ``runtime`` is
  not the one in ``method.fio_params``, which holds the steering steps' options), and the
  sweep's best point is such a step: the confirmation phase ends only there;
* a confirmation replaced the short step the search had steered by; the search's own note
  (``peak confirmed at 8 jobs with the longer window: 10,412 IOPS after 5.0 s, then ...``) keeps
  that figure, rounded to a whole IOPS, and the replay steers by it as the bench did.

Once the replay has steered by such a rounded figure (or by a replaced step whose note is gone)
it may take a turn the search did not take (two neighbours within one IOPS of each other), so
it refuses nothing after that point: a false refusal of a complete sweep is worse than a missed
one. A bench stopped before its confirmation phase (during the doubling or the refinement)
replaced nothing, so a step removed from it is always found; one stopped during a confirmation
leaves its best point measured with the short window only. Only adaptive sweeps of
method versions 3 and 4 are replayed (they differ only in how long an answer step runs); an explicit ``--jobs`` list is not recorded as such, and earlier
versions ended steps with fio's steady-state detector (their replaced steps were not noted).
"""

from __future__ import annotations

import re

from diskq.bench import sweep
from diskq.bench.fiojson import option_seconds
from diskq.result import Point, ResultDocument, Run
from diskq.submission import methods
from diskq.submission.problems import Problem

RERUN = "a partial result is not a submission: run the bench again to its end"
#: the search's note on a confirmation (:meth:`diskq.bench.sweep.Search._confirm_peak`)
_CONFIRMED = re.compile(
    r"^(?:peak|point deciding .{1,80}?) confirmed at (\d{1,4}) jobs with the longer window: "
    r"([\d,]{1,20}) IOPS after"
)


class _Missing(Exception):
    """The search asks for a step the sweep lacks (``guessed``: after the replay steered by a
    rounded or lost figure, where it may take a turn the search did not take)."""

    def __init__(self, numjobs: int, guessed: bool):
        self.numjobs, self.guessed = numjobs, guessed

    def problem(self) -> str:
        return (
            f"the search, replayed from this sweep's own figures, measures {self.numjobs} jobs next, and "
            f"the sweep holds no such step: a step is missing; {RERUN}"
        )


class _Unconfirmed(_Missing):
    """The search confirms a step the sweep holds only with the short window."""

    def problem(self) -> str:
        return (
            f"the search confirms {self.numjobs} jobs with the longer window, and this sweep's step at "
            f"{self.numjobs} jobs ran the short one: the sweep ended before its confirmations; {RERUN}"
        )


def _runtime(point: Point) -> float | None:
    return option_seconds(point.fio, "runtime") if isinstance(point.fio, dict) else None


def _long_window(point: Point, steer_s: float) -> bool:
    """The step ran another window than the steering steps' (``method.fio_params``): a confirmation."""
    runtime = _runtime(point)
    return runtime is not None and abs(runtime - steer_s) > 1e-9


def _early_figures(run: Run) -> dict[int, float]:
    """numjobs -> IOPS of the short step a confirmation replaced, from the search's notes."""
    out = {}
    for note in run.notes:
        m = _CONFIRMED.match(note) if isinstance(note, str) else None
        if m:
            out.setdefault(int(m.group(1)), float(m.group(2).replace(",", "")))
    return out


def _replay(run: Run, max_jobs: int, steer_s: float, confirming: bool) -> None:
    """Run the search against ``run``'s points; raise :class:`_Missing` for a step it lacks."""
    points = {p.numjobs: p for p in run.points}
    early = _early_figures(run)
    guessed = False

    def measure(n: int) -> Point:
        nonlocal guessed
        if n not in points:
            raise _Missing(n, guessed)
        p = points[n]
        if confirming and _long_window(p, steer_s):
            # replaced by a confirmation: the note gives its short figure rounded to a whole IOPS (or
            # is gone), so from here on the replay may take a turn the search did not take
            guessed = True
            return p.model_copy(update={"iops": early[n]}) if n in early else p
        return p

    def confirm(n: int) -> Point:
        if n not in points:
            raise _Missing(n, guessed)
        if not _long_window(points[n], steer_s):
            raise _Unconfirmed(n, guessed)
        return points[n]

    search = sweep.Search(measure, max_jobs, confirm=confirm if confirming else None, provisional=sweep.short_step)
    search.run()


def replay_problems(result: ResultDocument) -> list[Problem]:
    """The steps the search must have measured and a complete adaptive sweep lacks, one problem
    per run; nothing for sweeps this module does not replay (see the module's rule)."""
    method = result.method
    if (
        (method.id, method.version) not in (methods.BENCH, methods.BENCH_V3)
        or method.search != "adaptive"
        or not method.max_jobs
    ):
        return []
    steer_s = option_seconds({"global options": method.fio_params}, "runtime")
    if steer_s is None or not 1 <= method.max_jobs <= 4096:
        return []
    out = []
    for r, run in enumerate(result.runs):
        if result.interrupted or run.interrupted or any(p.interrupted for p in run.points):
            continue  # already refused as interrupted
        where = f"result.runs[{r}].points"
        numjobs = [p.numjobs for p in run.points]
        if not run.points or len(set(numjobs)) != len(numjobs):
            out.append(Problem("", where, f"a sweep holds each job count once, from 1 job up; {RERUN}"))
            continue
        solo = next((p for p in run.points if p.numjobs == 1), None)
        confirming = solo is not None and _long_window(solo, steer_s)  # the 1-job step took the longer window
        try:
            _replay(run, method.max_jobs, steer_s, confirming)
        except _Missing as exc:  # or _Unconfirmed
            if not exc.guessed:
                out.append(Problem("", where, exc.problem()))
                continue
        if confirming:  # holds whatever the replay could know
            best = max(run.points, key=lambda p: (p.iops, -p.numjobs))
            if not _long_window(best, steer_s):
                out.append(
                    Problem(
                        "",
                        where,
                        (
                            f"the best point, {best.numjobs} jobs, was measured with the short window only: the search "
                            f"confirms its best point with the longer window before it ends; {RERUN}"
                        ),
                    )
                )
    return out
