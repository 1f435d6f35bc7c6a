"""A hung fio does not keep diskq waiting, and a fio killed from outside is reported as such:
real fio on real loop devices, stopped (SIGSTOP) or killed (SIGKILL) by the test as another
process would.

The deadlines are made small through their parameter (the margin's floor); nothing here
asserts how long anything took. A watcher thread plays the other process: it waits until fio's
jobs write to the device, then does what it was given to do. Should diskq never stop the step
(the code before deadlines), the watcher lets fio go after a long guard so that the test fails
instead of hanging.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from diskq.bench import deadline, fio, planning, runner, sizes, sustained, windows
from diskq.errors import StepCutShort, StepOverdue
from diskq.probe.journal import Journal
from tests.conftest import fio_processes, needs_fio, needs_loop, wc_file
from tests.test_kill_bench import holders, write_ios

#: seconds after which the watcher releases a fio that diskq never stopped (a failure, not a wait)
GUARD_S = 120.0
SMALL_MARGIN_S = 2.0


def fio_tree(dev: str) -> tuple[int | None, list[int]]:
    """fio's main process on ``dev`` (a fio whose parent is not fio) and its job processes."""
    fios = {pid: ppid for pid, (ppid, _) in fio_processes(dev).items()}
    main = next((pid for pid, ppid in fios.items() if ppid not in fios), None)
    return main, [pid for pid, ppid in fios.items() if ppid == main]


def gone(pid: int) -> bool:
    """The process has ended (no /proc entry, or a zombie nobody reaped yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0] == b"Z"
    except OSError:
        return True


class Meddler(threading.Thread):
    """Once fio's jobs write to ``dev`` (and ``when()`` holds), call ``act(main, jobs)``."""

    def __init__(self, dev: str, act, when=lambda: True):
        super().__init__(daemon=True)
        self.dev, self.act, self.when = dev, act, when
        self.finished = threading.Event()
        self.touched: list[int] = []

    def run(self) -> None:
        limit = time.monotonic() + GUARD_S
        seen = None
        while not self.finished.is_set() and time.monotonic() < limit:
            main, jobs = fio_tree(self.dev)
            if main is not None and jobs and self.when():
                seen = write_ios(self.dev) if seen is None else seen
                if write_ios(self.dev) > seen:  # the jobs are past their start-up: they write
                    self.act(main, jobs)
                    self.touched = [main, *jobs]
                    break
            self.finished.wait(0.01)
        if not self.finished.wait(GUARD_S):  # diskq never stopped it: let it go, the test fails
            for pid in self.touched:
                for sig in (signal.SIGCONT, signal.SIGKILL):
                    try:
                        os.kill(pid, sig)
                    except OSError:
                        pass

    def __enter__(self) -> Meddler:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.finished.set()
        self.join()


def stop_main(main: int, jobs: list[int]) -> None:
    os.kill(main, signal.SIGSTOP)


def orphan_a_sleeping_job(main: int, jobs: list[int]) -> None:
    """fio's main process killed while a job waits for it for good: the job is stopped first,
    so that it cannot end on its own, then the main process gets the OOM killer's SIGKILL."""
    for job in jobs:
        os.kill(job, signal.SIGSTOP)
    os.kill(main, signal.SIGKILL)


def kill_main(main: int, jobs: list[int]) -> None:
    os.kill(main, signal.SIGKILL)


def short_step() -> dict[str, str]:
    return fio.window_options(windows.Window(measure_s=2, ramp_s=1), region_bytes=16 * 1024 * 1024)


@needs_loop
@needs_fio
@pytest.mark.parametrize("act", [stop_main, orphan_a_sleeping_job])
def test_a_hung_step_is_killed_at_its_deadline(make_loop, act):
    dev = make_loop(128 * 1024 * 1024)
    with Meddler(dev, act) as meddler:
        with pytest.raises(StepOverdue) as info:
            fio.run_step(dev, 2, short_step(), clock=deadline.Clock(floor_s=SMALL_MARGIN_S))
    assert meddler.touched, "fio never wrote to the device"
    assert info.value.message.startswith("the step at 2 jobs did not end by its deadline: fio was still running ")
    assert f"(3 s of writing + {SMALL_MARGIN_S:g} s margin)" in info.value.message
    assert "diskq killed it and every process it started" in info.value.message
    orphaned = "(fio's main process had been killed by signal 9 (SIGKILL) and a process it started never ended)"
    assert info.value.message.endswith(orphaned) == (act is orphan_a_sleeping_job)
    assert info.value.partial is None and "SIGSTOP" in info.value.hint
    assert all(gone(pid) for pid in meddler.touched), "a process of the hung fio outlived its deadline"
    assert holders(dev) == set()


@needs_loop
@needs_fio
def test_fio_killed_from_outside_is_reported_as_killed(make_loop):
    dev = make_loop(128 * 1024 * 1024)
    with Meddler(dev, kill_main) as meddler:
        with pytest.raises(StepCutShort) as info:
            fio.run_step(dev, 2, short_step())
    assert meddler.touched, "fio never wrote to the device"
    assert not isinstance(info.value, StepOverdue)
    assert info.value.message == "the step at 2 jobs was cut short, not by diskq: fio was killed by signal 9 (SIGKILL)"
    assert "OSError" not in info.value.message and "OOM killer" in info.value.hint
    assert holders(dev) == set()


@needs_loop
@needs_fio
def test_a_hung_size_profile_step_is_killed_at_its_deadline(make_loop):
    dev = make_loop(128 * 1024 * 1024)
    common = sizes.options(runtime_s=2, region_bytes=16 * 1024 * 1024)
    with Meddler(dev, stop_main) as meddler:
        with pytest.raises(StepOverdue) as info:
            sizes.run_step(dev, 8192, common, clock=deadline.Clock(floor_s=SMALL_MARGIN_S))
    assert meddler.touched
    assert info.value.message.startswith("the size-profile step at 8k did not end by its deadline")
    assert f"(3 s of writing + {SMALL_MARGIN_S:g} s margin)" in info.value.message  # its 1 s ramp and 2 s window
    assert all(gone(pid) for pid in meddler.touched) and holders(dev) == set()


@needs_loop
@needs_fio
def test_a_hung_sustained_write_is_killed_at_the_deadline_of_its_budget(make_loop):
    dev = make_loop(128 * 1024 * 1024)
    budget = sustained.parse_budget("3s")
    with Meddler(dev, stop_main) as meddler:
        with pytest.raises(StepOverdue) as info:
            sustained.run(
                dev,
                sustained.FDATASYNC,
                budget,
                sustained.region(128 * 1024 * 1024),
                write_cache="on",
                mechanism="sysfs",
                clock=deadline.Clock(floor_s=SMALL_MARGIN_S),
            )
    assert meddler.touched
    assert info.value.message.startswith("the sustained write (fdatasync) did not end by its deadline")
    assert f"(3 s of writing + {SMALL_MARGIN_S:g} s margin)" in info.value.message
    assert all(gone(pid) for pid in meddler.touched) and holders(dev) == set()


@needs_loop
@needs_fio
def test_a_bench_whose_fio_hangs_with_the_cache_switched_restores_it(loop_wb, tmp_path, monkeypatch):
    dev = loop_wb
    jdir = tmp_path / "j"
    monkeypatch.setenv("DISKQ_JOURNAL_DIR", str(jdir))
    options = planning.BenchOptions(
        runtime_s=1, jobs=[1], cache="both", yes=True, flush_check=False, step_margin_s=SMALL_MARGIN_S
    )
    switched = lambda: wc_file(dev).read_text().strip() == "write through"  # noqa: E731 - the second run
    with planning.plan(dev, options) as plan, Meddler(dev, stop_main, when=switched) as meddler:
        with pytest.raises(StepOverdue) as info:
            runner.execute(plan)
    assert meddler.touched, "the second run's step never wrote"
    assert all(gone(pid) for pid in meddler.touched) and holders(dev) == set()
    assert wc_file(dev).read_text().strip() == "write back"  # the cache as it was found
    assert Journal(jdir).pending() == []
    doc = info.value.document
    assert doc.interrupted and [r.write_cache for r in doc.runs] == ["on", "off"]
    assert not doc.runs[0].interrupted and doc.runs[1].interrupted and doc.runs[1].points == []
    assert any("the step at 1 job did not end by its deadline" in note for note in doc.notes)


def test_the_margin_grows_with_the_overhead_seen_and_a_late_program_is_killed():
    clock = deadline.Clock(floor_s=0.5)
    clock.run(["sh", "-c", "sleep 0.3"], 0.0, "a step")  # 0.3 s and more beyond its writing time
    assert clock.worst_overhead_s >= 0.3 and clock.margin_s() == deadline.FACTOR * clock.worst_overhead_s
    late = deadline.Clock(floor_s=0.2)
    with pytest.raises(StepOverdue) as info:
        late.run(["sh", "-c", "setsid sleep 47.31 & sleep 47.32"], 0.1, "the step at 1 job")
    assert info.value.message.startswith("the step at 1 job did not end by its deadline")
    assert info.value.limit_s == pytest.approx(0.3)
    assert subprocess.run(["pgrep", "-f", "sleep 47.3"], capture_output=True).returncode == 1  # none left
