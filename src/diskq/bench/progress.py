"""How far a bench has got and how long it may still take: the time budget behind the progress
display, computed from the runner's events and a clock, apart from any drawing. The runner keeps
what the bench may still measure (:class:`StepsLeft`) and says it before each step as a
:class:`StepPlan`.

The **budget** is the worst case still possible: every step the search may yet take (its bound
shrinks as the search learns the curve, see :meth:`diskq.bench.sweep.Search.steps_left_max`)
runs for its full length (the answer window of the sweep, the flush check for its shorter time,
each step of the block-size profile, ``--profile sizes``, for ``--runtime``), plus a per-step
overhead for fio's start and end: 1 s, or the most a step has shown beyond its cap so far. The bar fills with the
time spent against time spent + that budget, so it reaches the end when the last step does,
even when the search stops early.

The time **left** is that budget. It can be told closely only for an explicit ``--jobs`` list
of fixed-length steps (no steady-state detection): "about 2m05s left". Otherwise it is a bound,
not a forecast (steps may end early, the search may stop sooner, fio's overhead varies), and
reads "up to ~2m05s left (estimate)" until a step has run. From then on the **forecast** learns
from the steps already run: each step still possible takes its cap times the share of their caps
the steps so far took (fio's overhead included), so a sweep whose steps settle in 5 s of a 20 s
cap is forecast at that pace: "~3m10s left at this pace (up to ~11m47s)"; once a run (one write
cache state) has ended, the current and each later run are forecast to take as many steps as the
most a run took (at least one more while the search goes on), not the most the search could take. The bar fills against
the forecast. Each step recomputes both from what the runner knows then, so they follow the
search as it adds or drops steps.

    >>> clock = FakeClock()
    >>> p = BenchClock(clock)
    >>> p.step_started(StepPlan(sync_steps_left=3, check_steps_left=0, runtime_s=10, check_s=5, exact=True))
    >>> clock.now = 11.0
    >>> p.step_done()
    >>> round(p.snapshot().left_s), p.snapshot().exact
    (22, True)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

#: overhead assumed per step (fio's start-up and end); a larger one seen replaces it
DEFAULT_OVERHEAD_S = 1.0


@dataclass(frozen=True)
class StepPlan:
    """What is left when a step starts, as the runner knows it then (this step included)."""

    sync_steps_left: int  # fdatasync steps that may still run, across all runs
    check_steps_left: int  # flush-check steps still to run, across all runs
    runtime_s: float  # cap of one fdatasync step
    check_s: float  # cap of one flush-check step
    exact: bool  # a fixed list of fixed-length steps: the count and each length are known
    fdatasync: bool = True  # the step that starts is an fdatasync step (else the flush check)
    size_steps_left: int = 0  # block-size profile steps still to run, across all runs (capped at runtime_s)
    size_step: bool = False  # the step that starts is one of the block-size profile
    size_s: float | None = None  # cap of one block-size profile step (None: runtime_s)
    runs_after: int = 0  # runs after the current one (each may take up to per_run_max fdatasync steps)
    per_run_max: int = 0

    @property
    def size_cap_s(self) -> float:
        """The longest one block-size profile step may take."""
        return self.size_s if self.size_s is not None else self.runtime_s

    def cap_s(self) -> float:
        """The longest the step that starts may take."""
        if not self.fdatasync:
            return self.check_s
        return self.size_cap_s if self.size_step else self.runtime_s

    def eta_s(self, overhead_s: float = 0.0) -> float:
        """Every step still to run (this one included) at its cap, each with ``overhead_s``."""
        return (
            self.sync_steps_left * (self.runtime_s + overhead_s)
            + self.size_steps_left * (self.size_cap_s + overhead_s)
            + self.check_steps_left * (self.check_s + overhead_s)
        )


@dataclass
class StepsLeft:
    """What the bench may still measure, for the progress display (:class:`StepPlan`)."""

    runs_left: int  # runs after the current one
    per_run_max: int  # fdatasync steps one run can take at most
    flush_check: bool
    runtime_s: float  # the longest sweep step, its ramp included
    check_s: float
    exact: bool  # an explicit --jobs list of fixed-length steps
    this_run_left: int = 0  # fdatasync steps the current run may still take
    check_pending: bool = False  # the current run's flush check is still to come
    sizes_per_run: int = 0  # block-size profile steps of one run
    size_s: float | None = None  # one block-size profile step, its ramp included
    this_run_sizes_left: int = 0  # block-size profile steps the current run still takes

    def plan(self, *, fdatasync: bool, size_step: bool = False) -> StepPlan:
        later = self.runs_left * self.per_run_max
        checks = (1 if self.check_pending else 0) + (self.runs_left if self.flush_check else 0)
        return StepPlan(
            sync_steps_left=self.this_run_left + later,
            check_steps_left=checks,
            runtime_s=self.runtime_s,
            check_s=self.check_s,
            exact=self.exact,
            fdatasync=fdatasync,
            size_steps_left=self.this_run_sizes_left + self.runs_left * self.sizes_per_run,
            size_step=size_step,
            size_s=self.size_s,
            runs_after=self.runs_left,
            per_run_max=self.per_run_max,
        )


@dataclass(frozen=True)
class Snapshot:
    elapsed_s: float  # since the first step started
    left_s: float  # the budget: the worst case still possible, with overheads as seen so far
    exact: bool  # a known count of fixed-length steps: "about"; else "up to ~ (estimate)"
    fraction: float  # elapsed / (elapsed + left), 0..1
    steps_done: int
    steps_left: int  # this step included while one runs
    forecast_s: float | None = None  # at the pace of the steps run so far (None before the first ends)


class FakeClock:
    """A clock for tests and doctests: set ``now`` by hand."""

    def __init__(self, now: float = 0.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


class BenchClock:
    """Fed with :meth:`step_started` / :meth:`step_done`; :meth:`snapshot` at any time."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._start: float | None = None
        self._step_start: float | None = None
        self._plan: StepPlan | None = None
        self._overhead = DEFAULT_OVERHEAD_S
        self.steps_done = 0
        self._finished_at: float | None = None
        self._took = 0.0  # seconds the finished steps took ...
        self._capped = 0.0  # ... and the sum of their caps: the pace is their ratio
        self._run_steps = 0  # fdatasync steps the current run has taken
        self._runs_took: list[int] = []  # fdatasync steps each finished run took

    def step_started(self, plan: StepPlan) -> None:
        now = self._clock()
        if self._start is None:
            self._start = now
        if self._plan is not None and plan.runs_after < self._plan.runs_after:  # a run ended
            self._runs_took.append(self._run_steps)
            self._run_steps = 0
        self._step_start = now
        self._plan = plan

    def step_done(self) -> None:
        now = self._clock()
        plan, started = self._plan, self._step_start
        if plan is not None and started is not None:
            cap = plan.cap_s()
            over = (now - started) - cap
            self._took += now - started
            self._capped += cap
            if over > self._overhead:  # the largest overhead seen, never below the assumption
                self._overhead = over
            sync_step = plan.fdatasync and not plan.size_step
            self._run_steps += 1 if sync_step else 0
            self._plan = replace(
                plan,
                sync_steps_left=plan.sync_steps_left - (1 if sync_step else 0),
                check_steps_left=plan.check_steps_left - (0 if plan.fdatasync else 1),
                size_steps_left=plan.size_steps_left - (1 if plan.size_step else 0),
            )
        self._step_start = None
        self.steps_done += 1

    def finish(self) -> None:
        """No step is left: the budget is 0 and the bar full."""
        self._finished_at = self._clock()
        self._plan = None

    def snapshot(self) -> Snapshot:
        now = self._clock() if self._finished_at is None else self._finished_at
        elapsed = 0.0 if self._start is None else max(0.0, now - self._start)
        plan = self._plan
        if plan is None:
            return Snapshot(elapsed, 0.0, True, 1.0 if self._start is not None else 0.0, self.steps_done, 0)
        sync_left = max(plan.sync_steps_left, 0)
        check_left = max(plan.check_steps_left, 0)
        size_left = max(plan.size_steps_left, 0)
        counted = replace(plan, sync_steps_left=sync_left, check_steps_left=check_left, size_steps_left=size_left)
        left = counted.eta_s(self._overhead)
        running = 0.0 if self._step_start is None else now - self._step_start
        if self._step_start is not None:  # the running step has used part of its own time already
            left -= min(running, plan.cap_s() + self._overhead)
        left = max(left, 0.0)
        forecast = None
        if self._capped > 0:
            pace = self._took / self._capped  # seconds taken per second of cap, overhead included
            likely = counted
            # this run and later ones: as many fdatasync steps as the most a finished run took
            if self._runs_took and plan.per_run_max:
                most = min(max(self._runs_took), plan.per_run_max)
                this_run = max(sync_left - plan.runs_after * plan.per_run_max, 0)
                this_run = min(this_run, max(most - self._run_steps, 1 if this_run else 0))
                likely = replace(counted, sync_steps_left=this_run + plan.runs_after * most)
            forecast = likely.eta_s(0.0) * pace
            if self._step_start is not None:
                forecast -= min(running, plan.cap_s() * pace)
            forecast = min(max(forecast, 0.0), left)
        ahead = left if forecast is None else forecast
        total = elapsed + ahead
        fraction = elapsed / total if total > 0 else 0.0
        return Snapshot(
            elapsed, left, plan.exact, fraction, self.steps_done, sync_left + check_left + size_left, forecast
        )


def duration(seconds: float | None) -> str:
    """``7s``, ``2m05s``, ``1h02m``.

    >>> duration(7.4), duration(125), duration(3725), duration(None)
    ('7s', '2m05s', '1h02m', '?')
    """
    if seconds is None:
        return "?"
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def left_text(snap: Snapshot) -> str:
    """``about 2m05s left`` for a known count of fixed-length steps, ``up to ~2m05s left
    (estimate)`` when steps may end early or the search may stop sooner, and once a step has run,
    the forecast at its pace beside that bound; ``done`` at the end.

    >>> left_text(Snapshot(10, 125, True, 0.1, 1, 5)), left_text(Snapshot(10, 125, False, 0.1, 1, 5))
    ('about 2m05s left', 'up to ~2m05s left (estimate)')
    >>> left_text(Snapshot(10, 707, False, 0.1, 1, 16, forecast_s=190))
    '~3m10s left at this pace (up to ~11m47s)'
    """
    if snap.steps_left == 0:
        return "done" if snap.steps_done else "time left not known yet"
    if snap.exact:
        return f"about {duration(snap.left_s)} left"
    if snap.forecast_s is not None and duration(snap.forecast_s) != duration(snap.left_s):
        return f"~{duration(snap.forecast_s)} left at this pace (up to ~{duration(snap.left_s)})"
    return f"up to ~{duration(snap.left_s)} left (estimate)"
