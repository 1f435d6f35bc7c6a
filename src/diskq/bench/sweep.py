"""Choosing which numjobs to measure: the adaptive peak search, or an explicit list.

The community protocol runs 20 s at numjobs 1, 2, 4, ... 32 and calls the best the peak. diskq
measures the same curve with fewer, shorter steps:

1. **Doubling**: numjobs 1, 2, 4, ... while IOPS keep rising by more than ``gain`` (5 %) over
   the best so far. A step that does not rise is not trusted alone: one noisy step (a host
   stall, a garbage-collection pause) can come out tens of per cent low by chance, and a search
   that stops there reports the wrong peak. The search stops only after ``patience + 1``
   consecutive doubling steps fail to beat the best (default: two in a row), or at
   ``max_jobs`` (which is measured itself when it is not a power of two). A curve still
   climbing at ``max_jobs`` has its peak there and is not refined.

   On a noisy device no comparison of two steps can be trusted: when one job's IOPS vary
   within the first step by more than ``noisy_spread`` (20 %, fio's standard deviation of its
   samples over their mean), the search does not stop early at all and measures every
   doubling up to ``max_jobs``, as the community protocol does, and says why in ``notes``.
2. **Refinement**: the peak lies between the best point's measured neighbours. Measure the
   midpoint on the side of the better neighbour, move to it if it is better, and repeat (the
   other side when one side is exhausted) until the gaps are closed or ``refine_budget`` extra
   steps are spent. This finds peaks such as 10, 14 or 15 jobs.

3. **Confirmation**: the figures the document answers with must be as good as the protocol's
   own 20 s steps. So the steps that only steer the search are short (``measure``: 4 s after a
   1 s ramp), while the 1-job point (every verdict rests on it) and the best point are measured
   with a longer window (``confirm``: 7 s after the ramp, in version 4 on to 19 s while the rate
   still trends): the 1-job step from the start, the
   best point again once the search is done. The confirmed figure replaces the short one; if the
   best point then lies elsewhere at a short step, that one is confirmed in turn, until the best
   point is a confirmed step (each step is confirmed at most once, so this ends;
   ``confirm_budget`` can cap it, and a peak left unconfirmed is then said in ``notes``). The
   highest figure of the curve, the table's "max IOPS", is thus never a short step: a short step
   that read high would otherwise win the maximum because it read high. The points a verdict
   turns on (``decisive``: for the OSD count, the largest job count that meets one OSD's demand
   and the next one measured) are confirmed the same way. When every doubling step rose, the
   last one is likely the peak and is measured with the longer window at once.

   Which steps need confirming is ``provisional(point)``: every short step (method versions 3 and 4),
   or, for steps ended by fio's steady-state detector (versions 1 and 2), those it ended early.

The search itself is pure: it calls ``measure(numjobs) -> Point`` (and ``confirm``) and never
runs fio; it only reads the spread of IOPS samples in the fio output a point carries
(:func:`diskq.analyse.noise.iops_spread`) and how long each step wrote
(:func:`diskq.bench.fiojson.device_seconds`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from diskq.analyse.noise import NOISY_SPREAD, iops_spread
from diskq.bench import narration
from diskq.bench.fiojson import device_seconds
from diskq.errors import InvalidInput
from diskq.result import Peak, Point

DEFAULT_GAIN = 0.05
DEFAULT_REFINE_BUDGET = 3
#: doubling steps measured after one that did not rise, before the search believes the turn
DEFAULT_PATIENCE = 1
#: within-step spread of one job's IOPS (stddev / mean) above which the device is too noisy to
#: stop early: a steady SSD shows about 1 %, a disk seeking some 15 %
DEFAULT_NOISY_SPREAD = NOISY_SPREAD
#: re-measurements of the best point with the confirmation detector (None: until it is settled)
DEFAULT_CONFIRM_BUDGET: int | None = None

Measure = Callable[[int], Point]
#: the job counts a verdict turns on, from the curve measured so far (``{numjobs: iops}``)
Decisive = Callable[[dict[int, float]], Iterable[int]]


def doubling_sequence(max_jobs: int) -> list[int]:
    """``1, 2, 4, ...`` up to ``max_jobs``, ending with ``max_jobs`` itself.

    >>> doubling_sequence(32), doubling_sequence(12), doubling_sequence(1)
    ([1, 2, 4, 8, 16, 32], [1, 2, 4, 8, 12], [1])
    """
    if max_jobs < 1:
        raise InvalidInput(f"--max-jobs must be at least 1, got {max_jobs}")
    seq, n = [], 1
    while n < max_jobs:
        seq.append(n)
        n *= 2
    seq.append(max_jobs)
    return seq


def max_steps(
    max_jobs: int, refine_budget: int = DEFAULT_REFINE_BUDGET, confirm_budget: int | None = DEFAULT_CONFIRM_BUDGET
) -> int:
    """Upper bound on the number of steps the adaptive search can take (for the ETA): every
    doubling step plus the refinement budget, whatever the patience, plus the confirmations
    (at most one for each step after the first, which is measured confirmed)."""
    steps = len(doubling_sequence(max_jobs)) + refine_budget
    confirmations = steps - 1 if confirm_budget is None else min(confirm_budget, steps - 1)
    return steps + confirmations


def ended_early(point: Point) -> bool:
    """fio's steady-state detector ended the step before its runtime."""
    return point.steady_state is True


def short_step(point: Point) -> bool:
    """Every step ``measure`` takes is provisional: its window is shorter than ``confirm``'s."""
    return True


def peak_of(points: list[Point]) -> Peak | None:
    """The point with the highest IOPS (the fewest jobs among equals); interrupted steps never
    count, so a run with none completed has no peak."""
    usable = [p for p in points if not p.interrupted]
    if not usable:
        return None
    best = max(usable, key=lambda p: (p.iops, -p.numjobs))
    return Peak(numjobs=best.numjobs, iops=best.iops)


class Search:
    """The adaptive search, one call to ``measure`` per new numjobs. ``points`` stays valid when
    ``measure`` raises (an interruption keeps what was measured)."""

    def __init__(
        self,
        measure: Measure,
        max_jobs: int,
        *,
        gain: float = DEFAULT_GAIN,
        refine_budget: int = DEFAULT_REFINE_BUDGET,
        patience: int = DEFAULT_PATIENCE,
        noisy_spread: float = DEFAULT_NOISY_SPREAD,
        confirm: Measure | None = None,
        confirm_budget: int | None = DEFAULT_CONFIRM_BUDGET,
        decisive: Decisive | None = None,
        provisional: Callable[[Point], bool] = ended_early,
    ):
        if max_jobs < 1:
            raise InvalidInput(f"--max-jobs must be at least 1, got {max_jobs}")
        if patience < 0:
            raise InvalidInput(f"patience must be at least 0, got {patience}")
        if confirm_budget is not None and confirm_budget < 0:
            raise InvalidInput(f"confirm_budget must be at least 0, got {confirm_budget}")
        self._measure = measure
        self._confirm = confirm
        self._decisive = decisive
        self._provisional = provisional
        self.confirm_budget = confirm_budget
        #: numjobs -> the provisional point a confirmation replaced
        self.replaced: dict[int, Point] = {}
        #: numjobs measured with the confirmation detector
        self.confirmed: set[int] = set()
        self.max_jobs = max_jobs
        self.gain = gain
        self.refine_budget = refine_budget
        self.patience = patience
        self.noisy_spread = noisy_spread
        self.points: dict[int, Point] = {}
        self.stop_reason: str | None = None
        self.notes: list[str] = []
        self._phase = "doubling"
        self._refine_left = refine_budget

    def steps_left_max(self) -> int:
        """At most how many steps this search still measures, the one under way included: every
        doubling not yet measured plus the refinement budget while doubling; the budget left while
        refining; then, with confirmations, one more for each step not yet confirmed (within the
        confirmation budget); 0 once done. It only shrinks (for the progress display's time budget)."""
        if self._phase == "doubling":
            new = sum(1 for n in doubling_sequence(self.max_jobs) if n not in self.points) + self.refine_budget
        elif self._phase == "refining":
            new = self._refine_left
        else:
            new = 0
        if self._confirm is None or self._phase == "done":
            return new
        # each step, measured or still to come, may be measured once more with the longer window
        again = sum(1 for n in self.points if n not in self.confirmed) + new
        if doubling_sequence(self.max_jobs)[0] not in self.points:
            again -= 1  # the first step is measured with the longer window at once, never again
        if self.confirm_budget is not None:
            again = min(again, max(self.confirm_budget - len(self.replaced), 0))
        return new + again

    def _iops(self, n: int) -> float:
        if n not in self.points:
            self.points[n] = self._measure(n)
        return self.points[n].iops

    def _best(self) -> int:
        return max(self.points, key=lambda n: (self.points[n].iops, -n))

    def run(self) -> list[Point]:
        seq = doubling_sequence(self.max_jobs)
        best = seq[0]
        # the 1-job point carries every verdict: measured with the confirmation detector at once
        if self._confirm is not None:
            self.points[best] = self._confirm(best)
            self.confirmed.add(best)
        else:
            self._iops(best)
        spread = iops_spread(self.points[best].fio)
        exhaustive = spread is not None and spread > self.noisy_spread
        if exhaustive:
            self.notes.append(
                f"one job's IOPS varied by {spread:.0%} within its step (more than {self.noisy_spread:.0%}): "
                f"too noisy to stop early, every doubling up to --max-jobs {self.max_jobs} measured"
            )
        self.stop_reason = f"reached --max-jobs {self.max_jobs} with IOPS still rising"
        misses: list[int] = []  # consecutive doubling steps that did not beat the best
        stopped_early = False
        for n in seq[1:]:
            if n == seq[-1] and len(seq) > 2 and best == seq[-2] and self._confirm is not None and not exhaustive:
                # every step so far rose: the last is likely the peak, so it gets the longer window at
                # once instead of a short step now and a confirmation of it later
                self.points[n] = self._confirm(n)
                self.confirmed.add(n)
            if self._iops(n) > self.points[best].iops * (1 + self.gain):
                best, misses = n, []
                continue
            misses.append(n)
            if len(misses) > self.patience and not exhaustive:
                stopped_early = True
                break
        if misses:
            self.stop_reason = self._turn(best, misses, stopped_early)
            self._phase = "refining"
            self._refine()  # the curve turned: the peak lies between the best and its neighbours
        self._phase = "confirming"
        self._confirm_peak()
        self._phase = "done"
        # said from the points the table shows, not from the steps the search turned on: a
        # confirmation may have moved the peak since (diskq.bench.narration)
        self.stop_reason = narration.stop_words(
            {n: p.iops for n, p in self.points.items()}, self.max_jobs, reached_limit=not stopped_early
        )
        return self.ordered()

    def _unconfirmed(self) -> tuple[int, str] | None:
        """The next point to confirm and what it decides: the best point first, then the points
        ``decisive`` names (a verdict's boundary), each only while its step is provisional."""
        best = self._best()
        wanted = [(best, "peak")]
        if self._decisive is not None:
            curve = {n: p.iops for n, p in self.points.items()}
            wanted += [(n, "the OSD count") for n in sorted(self._decisive(curve)) if n in self.points]
        for n, what in wanted:
            if n not in self.confirmed and self._provisional(self.points[n]):
                return n, what
        return None

    def _confirm_peak(self) -> None:
        """Measure the best point again with the longer window when its step was provisional
        (short, or ended early by fio's detector), and likewise the points a verdict turns on
        (``decisive``); repeat while the best or those points move to other provisional steps."""
        if self._confirm is None:
            return
        spent = 0
        while self.confirm_budget is None or spent < self.confirm_budget:
            todo = self._unconfirmed()
            if todo is None:
                return
            n, what = todo
            early = self.points[n]
            self.points[n] = self._confirm(n)  # raises on interruption: the early point stays
            self.replaced[n] = early
            self.confirmed.add(n)
            spent += 1
            late = self.points[n]
            label = "peak confirmed" if what == "peak" else f"point deciding {what} confirmed"
            self.notes.append(
                f"{label} at {n} jobs with the longer window: {early.iops:,.0f} IOPS "
                f"after {device_seconds(early):.1f} s, then {late.iops:,.0f} IOPS after {device_seconds(late):.1f} s"
            )
        todo = self._unconfirmed()
        if todo is not None:
            n, what = todo
            self.notes.append(
                f"the {'best point' if what == 'peak' else 'point deciding ' + what}, {n} jobs, was "
                f"measured with the short window only: {self.confirm_budget} confirmations spent"
            )

    def _turn(self, best: int, misses: list[int], stopped_early: bool) -> str:
        """Why the doubling stopped, e.g. ``IOPS fell at 16 and 32 jobs (-12.0 %, -30.1 % vs 8)``,
        as the search saw it then (``stop_reason`` while refining; replaced by the final points'
        words when the search ends)."""
        base = self.points[best].iops
        changes = [(self.points[n].iops / base - 1) * 100 if base else 0.0 for n in misses]
        verb = "fell" if all(c < 0 for c in changes) else "flattened"
        where = " and ".join(str(n) for n in misses)
        limit = "" if stopped_early else f", then --max-jobs {self.max_jobs} was reached"
        return f"IOPS {verb} at {where} {'job' if misses == [1] else 'jobs'} ({', '.join(f'{c:+.1f} %' for c in changes)} vs {best}){limit}"

    def _refine(self) -> None:
        budget = self.refine_budget
        while budget > 0:
            best = self._best()
            measured = sorted(self.points)
            lower = [n for n in measured if n < best]
            upper = [n for n in measured if n > best]
            sides = []
            if lower and best - lower[-1] > 1:
                sides.append((self.points[lower[-1]].iops, (lower[-1] + best) // 2))
            if upper and upper[0] - best > 1:
                sides.append((self.points[upper[0]].iops, (best + upper[0]) // 2))
            if not sides:
                return
            # try the side whose measured neighbour is better first: the peak leans that way
            sides.sort(reverse=True)
            self._iops(sides[0][1])
            budget -= 1
            self._refine_left = budget

    def ordered(self) -> list[Point]:
        return [self.points[n] for n in sorted(self.points)]


def explicit(measure: Measure, jobs: list[int]) -> list[Point]:
    """Measure exactly the given job counts, in order."""
    return [measure(n) for n in jobs]
