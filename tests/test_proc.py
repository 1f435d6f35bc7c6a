"""diskq.proc: the one place external programs run. Timeouts and a dying diskq stop the child."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from diskq import proc, watchdog
from diskq.errors import CommandTimedOut, ToolMissing


def _running(pattern: str) -> bool:
    return subprocess.run(["pgrep", "-f", "--", pattern], capture_output=True).returncode == 0


def test_a_missing_program_names_its_package():
    with pytest.raises(ToolMissing) as info:
        proc.run(["diskq-no-such-program-xyz"])
    assert "apt-get install" in info.value.hint


def test_output_and_exit_status_are_captured():
    done = proc.run(["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert (done.returncode, done.stdout, done.stderr, done.ok) == (3, "out\n", "err\n", False)


def test_a_program_past_its_timeout_is_stopped_and_reported():
    with pytest.raises(CommandTimedOut) as info:
        proc.run(["sleep", "41.37"], timeout=0.5)
    assert "did not finish within 0.5 s" in info.value.message and info.value.hint
    assert not _running("sleep 41.37")


def test_children_and_what_they_start_die_with_a_killed_diskq():
    # SIGKILL runs no handler in diskq. fio forks one process per job, each job calls setsid()
    # (so it leaves the process group), and a parent-death signal is not inherited by forked
    # processes: the grandchildren here stand for fio's jobs.
    code = textwrap.dedent(
        """
        from diskq import proc, watchdog
        print("started", flush=True)
        proc.run(["sh", "-c", "setsid sleep 53.71 & sleep 53.72 & wait"])
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout.readline().strip() == "started"
        deadline = time.monotonic() + 20
        while not (_running("sleep 53.71") and _running("sleep 53.72")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _running("sleep 53.71") and _running("sleep 53.72")
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=20)
        deadline = time.monotonic() + 5
        while (_running("sleep 53.71") or _running("sleep 53.72")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _running("sleep 53.71"), "a grandchild outlived diskq"
        assert not _running("sleep 53.72"), "a grandchild outlived diskq"
        assert not _running("sleep 53.71 & sleep 53.72"), "the child outlived diskq"
    finally:
        if parent.poll() is None:
            parent.kill()
        subprocess.run(["pkill", "-f", "--", "sleep 53.7"], capture_output=True)


def test_a_program_gets_signals_and_exits_as_it_would_alone():
    # the keeper between diskq and the program is invisible: exit status, a death by signal
    # (negative, as subprocess reports it), and SIGINT reaching the program as its default
    assert proc.run(["sh", "-c", "exit 7"]).returncode == 7
    assert proc.run(["sh", "-c", "kill -TERM $$"]).returncode == -signal.SIGTERM
    assert proc.run(["sh", "-c", "echo in"], input="x").stdout == "in\n"


def test_stopping_a_program_also_stops_what_it_started(monkeypatch):
    # a worker that ignores SIGINT (as a fio job still starting up may) outlives its parent's
    # exit; it must not go on once diskq has stopped the program
    monkeypatch.setattr(proc, "STOP_GRACE_S", 2.0)
    script = "(trap '' INT; exec sleep 61.93) & echo started; wait"
    with pytest.raises(CommandTimedOut):
        proc.run(["sh", "-c", script], timeout=0.5)
    assert not _running("sleep 61.93"), "a process of the stopped program's group is still running"


def test_descendants_finds_processes_that_left_the_group():
    # fio's jobs call setsid(): only the process tree still leads to them
    child = subprocess.Popen(["sh", "-c", "setsid sleep 30.41 & wait"])
    try:
        deadline = time.monotonic() + 10
        while not _running("sleep 30.41") and time.monotonic() < deadline:
            time.sleep(0.05)
        below = watchdog.descendants(child.pid)
        assert len(below) == 1 and os.getsid(below[0]) == below[0] != os.getsid(child.pid)
        assert watchdog.descendants(below[0]) == []
    finally:
        child.kill()
        child.wait()
        subprocess.run(["pkill", "-f", "--", "sleep 30.41"], capture_output=True)


def test_a_program_killed_with_sigkill_is_reported_as_killed():
    # SIGKILL (the OOM killer's) cannot be re-armed; the keeper must still die of it, not of an error
    done = proc.run(["sh", "-c", "kill -KILL $$"])
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert done.stderr == ""
