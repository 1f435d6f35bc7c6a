"""The bench's progress display: a bar against the time budget, a time left that follows the
search, a cleared last frame, one whole plain line per step when stderr is not a terminal.

Time is a fake clock that each fio step advances; no test sleeps. The bench itself is the real
runner over a file, with fio's step replaced by recorded-shape points.
"""

from __future__ import annotations

import io
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from diskq.bench import fio, planning, runner, sweep
from diskq.bench.progress import BenchClock, FakeClock, StepPlan, StepsLeft, left_text
from diskq.cli._render import BenchProgress
from diskq.result import Latency, Point


def fake_point(numjobs: int, iops: float, *, steady: bool = False) -> Point:
    return Point(
        numjobs=numjobs,
        iops=iops,
        bw_bytes=iops * 4096,
        total_ios=int(iops),
        runtime_ms=1000,
        lat_us=Latency(mean=100.0),
        sync_lat_us=Latency(mean=200.0, p99=400.0),
        steady_state=steady,
    )


class Recorder(runner.Listener):
    """Keeps every snapshot the display would draw, taken at each step's start and end."""

    def __init__(self, clock: FakeClock):
        self.bench = BenchClock(clock)
        self.starts: list = []
        self.ends: list = []
        self.plans: list[StepPlan] = []

    def step_planned(self, plan):
        self.plans.append(plan)
        self.bench.step_started(plan)

    def step_started(self, numjobs, *, fdatasync, eta_s):
        self.starts.append(self.bench.snapshot())

    def step_done(self, point):
        self.bench.step_done()
        self.ends.append(self.bench.snapshot())


@pytest.fixture
def bench_file(tmp_path, monkeypatch):
    """run(curve, durations, **options) -> (listener, clock, elapsed per step): the real runner on
    a file target, each fio step taking the next of ``durations`` seconds on a fake clock."""
    monkeypatch.setattr(fio, "installed_version", lambda: "fio-3.33")
    monkeypatch.setattr(runner, "_identify", lambda target, path: runner.Device(path=path, kind=target.kind))

    def run(curve: dict[int, float], durations, listener_factory=Recorder, max_overhead=0.5, **options):
        clock = FakeClock()
        times = iter(durations)
        taken: list[float] = []

        def step(path, numjobs, opts, **_):  # clock: the deadline of a real step
            cap = float(opts["runtime"]) + float(opts.get("ramp_time", 0))  # fio writes its ramp too
            d = min(next(times), cap + max_overhead)  # never past its cap + fio's overhead
            clock.now += d
            taken.append(d)
            return fake_point(numjobs, curve.get(numjobs, 1000.0), steady=d < cap)

        monkeypatch.setattr(fio, "run_step", step)
        opts = planning.BenchOptions(runtime_s=10, size_bytes=64 << 20, cache="keep", flush_check=True, **options)
        listener = listener_factory(clock)
        with planning.plan(str(tmp_path / "t.img"), opts) as p:
            runner.execute(p, listener)
        return listener, clock, taken

    return run


def test_time_left_follows_the_search_and_is_never_below_what_is_left(bench_file):
    # rises to 4 jobs, falls at 8 and 16: the doubling stops, 2 refinement steps, the flush check
    curve = {1: 1000, 2: 1900, 4: 3000, 8: 2500, 16: 2000, 3: 2800, 6: 2900, 5: 2950}
    durations = [10.5] * 20  # every step runs its full 10 s plus 0.5 s of fio overhead
    rec, clock, taken = bench_file(curve, durations, max_jobs=32)
    total = sum(taken)
    # at every step's start, the time left is at least what the bench really still took
    for i, snap in enumerate(rec.starts):
        really_left = total - sum(taken[:i])
        assert snap.left_s >= really_left - 1e-6, (i, snap.left_s, really_left)
    # the budget follows the search: it shrinks when the doubling stops (16 and 32 never run)
    budgets = [p.sync_steps_left for p in rec.plans]
    assert budgets == sorted(budgets, reverse=True)
    # every doubling, the refinement budget and one confirmation for each step after the first
    assert budgets[0] == sweep.max_steps(32)
    assert not any(p.exact for p in rec.plans)  # a search: an estimate, and said so
    assert left_text(rec.starts[0]).endswith("(estimate)")
    # the bar fills against the budget and is full at the end
    fractions = [s.fraction for s in rec.ends]
    assert fractions[-1] == 1.0 and rec.ends[-1].steps_left == 0 and left_text(rec.ends[-1]) == "done"
    assert all(0 <= f <= 1 for f in fractions)


def test_an_explicit_list_of_fixed_steps_is_not_called_an_estimate(bench_file):
    rec, clock, taken = bench_file({}, [11.2] * 4, jobs=[1, 2, 4], steady_state=False)
    assert all(p.exact for p in rec.plans)
    assert left_text(rec.starts[0]).startswith("about ")
    # 3 steps of 10 s and a 5 s flush check, each after fio's 1 s ramp, 1 s of overhead assumed
    # before any was seen
    assert rec.starts[0].left_s == pytest.approx(3 * 12 + 7)
    # overheads within the assumed second keep it; a larger one seen replaces it
    assert rec.starts[1].left_s == pytest.approx(2 * 12 + 7)
    rec, clock, taken = bench_file({}, [13.5] * 4, jobs=[1, 2, 4], steady_state=False, max_overhead=2.5)
    assert rec.starts[1].left_s == pytest.approx(2 * 13.5 + 6 + 2.5)


@given(
    st.lists(st.floats(min_value=0.5, max_value=10.9), min_size=12, max_size=12),
    st.sampled_from([[1, 2], [1, 2, 4, 8]]),
)
def test_budget_never_undercounts_while_overheads_stay_within_a_second(durations, jobs):
    # steps of any length up to their 10 s cap plus 0.9 s: the budget covers what is left
    clock = FakeClock()
    bench = BenchClock(clock)
    steps = len(jobs) + 1
    lefts, taken = [], []
    for i in range(steps):
        fdatasync = i < len(jobs)
        bench.step_started(
            StepPlan(
                sync_steps_left=len(jobs) - min(i, len(jobs)),
                check_steps_left=1,
                runtime_s=10,
                check_s=10,
                exact=True,
                fdatasync=fdatasync,
            )
        )
        lefts.append(bench.snapshot().left_s)
        clock.now += durations[i]
        taken.append(durations[i])
        bench.step_done()
    for i, left in enumerate(lefts):
        assert left >= sum(taken[i:]) - 1e-6


def plain_listener(console_file):
    def make(clock):
        return BenchProgress(Console(file=console_file, width=80, force_terminal=False), 10, clock=clock)

    return make


def test_not_a_terminal_gets_one_whole_line_per_step(bench_file):
    out = io.StringIO()
    bench_file(
        {1: 1000, 2: 1900, 4: 3000, 8: 2500, 16: 2000}, [10.5] * 20, listener_factory=plain_listener(out), max_jobs=16
    )
    lines = out.getvalue().splitlines()
    steps = [line for line in lines if "numjobs=" in line]
    assert len(steps) == len([line for line in lines if "IOPS" in line]) >= 6  # one line per step, flush check too
    assert any(len(line) > 80 for line in steps)  # never cut or wrapped at the console's 80 columns
    t = r"(\d+m\d\d|\d+)s"
    assert all(
        re.search(rf"\[{t} elapsed, (up to ~{t} left \(estimate\)|~{t} left at this pace \(up to ~{t}\)|done)\]$", line)
        for line in steps
    ), steps
    assert steps[-1].endswith(", done]") and "flush check" in steps[-1]
    assert "\x1b" not in out.getvalue()  # no terminal codes in a log


def test_a_terminal_gets_a_bar_that_is_cleared_at_the_end():
    out = io.StringIO()
    clock = FakeClock()
    console = Console(file=out, width=100, force_terminal=True, color_system=None)
    with BenchProgress(console, 10, clock=clock) as progress:
        assert left_text(progress.clock.snapshot()) == "time left not known yet"
        progress.run_started(0, 1, "on", "sysfs")
        progress.step_planned(StepPlan(sync_steps_left=2, check_steps_left=0, runtime_s=10, check_s=5, exact=True))
        progress.step_started(1, fdatasync=True, eta_s=20)
        clock.now += 10.5
        progress.progress.refresh()
        frame = out.getvalue()
        assert (
            "cache on via sysfs: numjobs=1" in frame and "about 12s left" in frame
        )  # 2 x (10 s + 1 s), 10.5 s of it gone and "━" in frame
        progress.step_done(fake_point(1, 1234.0))
    final = out.getvalue()
    assert "1,234 IOPS" in final
    # rich erases the live frame when it stops (transient): cursor up and erase line
    tail = final[final.rindex("1,234 IOPS") :]
    assert "\x1b[2K" in tail


def test_the_forecast_learns_the_pace_of_the_steps_run_and_stays_within_the_bound():
    """Steps settle in 5 s of their 20 s cap (fio's overhead included): once one has run, the
    forecast is the steps still possible at that pace, not at their cap; the bound stays."""
    clock = FakeClock()
    bench = BenchClock(clock)
    steps, cap, took = 8, 20.0, 5.0
    snaps = []
    for i in range(steps):
        bench.step_started(
            StepPlan(sync_steps_left=steps - i, check_steps_left=0, runtime_s=cap, check_s=5, exact=False)
        )
        snaps.append(bench.snapshot())
        clock.now += took
        bench.step_done()
    assert snaps[0].forecast_s is None and left_text(snaps[0]).startswith("up to ~")  # nothing learnt yet
    for i, snap in enumerate(snaps[1:], start=1):
        really_left = (steps - i) * took
        assert snap.forecast_s == pytest.approx(really_left)
        assert snap.left_s >= really_left and snap.left_s == pytest.approx((steps - i) * (cap + 1))
    assert left_text(snaps[1]) == "~35s left at this pace (up to ~2m27s)"
    # a step running longer than the pace so far: the forecast never goes below zero nor above the bound
    bench.step_started(StepPlan(sync_steps_left=1, check_steps_left=0, runtime_s=cap, check_s=5, exact=False))
    clock.now += 19
    snap = bench.snapshot()
    assert 0 <= snap.forecast_s <= snap.left_s


@given(st.lists(st.floats(min_value=0.1, max_value=10.9), min_size=6, max_size=6))
def test_the_bar_fills_against_the_forecast_and_is_full_only_at_the_end(durations):
    clock = FakeClock()
    bench = BenchClock(clock)
    fractions = []
    for i, d in enumerate(durations):
        bench.step_started(
            StepPlan(sync_steps_left=len(durations) - i, check_steps_left=0, runtime_s=10, check_s=5, exact=False)
        )
        clock.now += d
        bench.step_done()
        snap = bench.snapshot()
        assert snap.forecast_s is not None and 0 <= snap.forecast_s <= snap.left_s
        fractions.append(snap.fraction)
    bench.finish()
    assert all(0 <= f < 1 for f in fractions[:-1]) and bench.snapshot().fraction == 1.0


def test_later_runs_are_forecast_at_the_steps_a_finished_run_took():
    """Three cache states, each a search that may take 10 steps of 10 s: the first run took 4 of
    3 s; from then on each later run is forecast at 4 steps, while the bound keeps 10."""
    clock = FakeClock()
    bench = BenchClock(clock)
    steps = StepsLeft(runs_left=3, per_run_max=10, flush_check=False, runtime_s=10, check_s=5, exact=False)
    snaps = []
    for _ in range(3):
        steps.runs_left -= 1
        steps.this_run_left = 10
        for _ in range(4):  # the search stops after 4 steps
            bench.step_started(steps.plan(fdatasync=True))
            snaps.append(bench.snapshot())
            clock.now += 3
            bench.step_done()
            steps.this_run_left -= 1
    run2 = snaps[4]  # the first step of the second run: 4 steps for it, 4 for the third
    assert run2.left_s == pytest.approx((10 + 10) * 11)
    assert run2.forecast_s == pytest.approx((4 + 4) * 3)
    assert snaps[8].forecast_s == pytest.approx(4 * 3)  # the last run, at its start
    assert snaps[11].forecast_s == pytest.approx(1 * 3)  # its fourth step: at least the one running
