"""diskq.proc: the one place external programs run. Timeouts and a dying diskq stop the child."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest

from diskq import proc
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


@pytest.mark.skipif(proc._setpriv() is None, reason="util-linux setpriv with --pdeathsig is not installed")
def test_children_die_with_a_killed_diskq():
    # SIGKILL runs no handler in diskq: only the parent-death signal can stop fio then
    code = textwrap.dedent(
        """
        import sys
        from diskq import proc
        print("started", flush=True)
        proc.run(["sleep", "53.71"])
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout.readline().strip() == "started"
        deadline = time.monotonic() + 20
        while not _running("sleep 53.71") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _running("sleep 53.71")
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=20)
        deadline = time.monotonic() + 20
        while _running("sleep 53.71") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _running("sleep 53.71"), "the child outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
        subprocess.run(["pkill", "-f", "--", "sleep 53.71"], capture_output=True)


def test_stopping_a_program_also_stops_what_it_started(monkeypatch):
    # a worker that ignores SIGINT (as a fio job still starting up may) outlives its parent's
    # exit; it must not go on once diskq has stopped the program
    monkeypatch.setattr(proc, "STOP_GRACE_S", 2.0)
    script = "(trap '' INT; exec sleep 61.93) & echo started; wait"
    with pytest.raises(CommandTimedOut):
        proc.run(["sh", "-c", script], timeout=0.5)
    assert not _running("sleep 61.93"), "a process of the stopped program's group is still running"


def test_group_members_reads_live_processes_of_a_group():
    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert proc._group_members(child.pid) == [child.pid]
    finally:
        child.kill()
        child.wait()
    assert proc._group_members(child.pid) == []
