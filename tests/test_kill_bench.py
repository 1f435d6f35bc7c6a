"""Nothing writes to the target once diskq is gone: real SIGKILLs of a running `diskq bench`, and
`diskq restore` refusing to put a cache back under a process that still writes to the device."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from diskq.probe.journal import Journal
from tests.conftest import needs_fio, needs_loop, wc_file
from tests.test_restore import diskq, fake_entry


def holders(dev: str) -> set[int]:
    """Pids of every process with ``dev`` open (read from /proc independently of diskq)."""
    rdev = os.stat(dev).st_rdev
    found = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                st = os.stat(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if stat.S_ISBLK(st.st_mode) and st.st_rdev == rdev:
                found.add(int(pid))
    return found


def write_ios(dev: str) -> int:
    """Field 5 of /sys/block/X/stat: write I/Os completed."""
    return int(Path("/sys/block", Path(dev).name, "stat").read_text().split()[4])


def _bench(dev: str, tmp_path: Path, jdir: Path) -> subprocess.Popen:
    env = {**os.environ, "DISKQ_JOURNAL_DIR": str(jdir)}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "diskq",
            "bench",
            dev,
            "--yes",
            "--jobs",
            "4,8",
            "--runtime",
            "8",
            "--no-steady-state",
            "--cache",
            "both",
            "--no-flush-check",
            "-o",
            str(tmp_path / "r.json"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )


@needs_loop
@needs_fio
@pytest.mark.parametrize("trial", range(3))
def test_sigkill_of_bench_leaves_nothing_writing(make_loop, tmp_path, trial):
    dev = make_loop(256 * 1024 * 1024)
    jdir = tmp_path / "j"
    bench = _bench(dev, tmp_path, jdir)
    try:
        deadline = time.monotonic() + 60
        while len(holders(dev) - {bench.pid}) < 4 and time.monotonic() < deadline:  # fio and its jobs
            time.sleep(0.02)
        assert len(holders(dev) - {bench.pid}) >= 4, "fio never started writing"
        time.sleep(0.3 + 0.4 * trial)  # mid-step, at a different moment each trial
        bench.send_signal(signal.SIGKILL)
        bench.wait(timeout=20)
        deadline = time.monotonic() + 2.0
        while holders(dev) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert holders(dev) == set(), "a process still has the device open 2 s after diskq was killed"
        before = write_ios(dev)
        time.sleep(1.0)
        assert write_ios(dev) == before, "something still writes to the device after diskq was killed"
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.wait()
    done = diskq("restore", jdir=jdir)
    assert done.returncode == 0, done.stderr
    assert wc_file(dev).read_text().strip() == "write back"


HOLD = """
import os, sys, time
fd = os.open(sys.argv[1], int(sys.argv[2]))
print("open", flush=True)
time.sleep(120)
"""


def _holder(dev: str, flags: int) -> subprocess.Popen:
    child = subprocess.Popen([sys.executable, "-c", HOLD, dev, str(flags)], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "open"
    return child


@needs_loop
def test_restore_refuses_while_a_process_writes_and_names_it(loop_wb, tmp_path):  # noqa: F811
    dev = loop_wb
    jdir = tmp_path / "j"
    wc_file(dev).write_text("write through")  # as a killed run left it
    fake_entry(
        jdir, device=dev, original="on", diskseq=Path(f"/sys/block/{Path(dev).name}/diskseq").read_text().strip()
    )
    reader = _holder(dev, os.O_RDONLY)
    writer = _holder(dev, os.O_WRONLY)
    try:
        started = time.monotonic()
        done = diskq("restore", "--wait", "1", jdir=jdir)
        assert time.monotonic() - started >= 1.0  # it waited before refusing
        assert done.returncode == 1, done.stderr
        assert "still open for writing by" in done.stderr and f"(pid {writer.pid})" in done.stderr
        assert f"pid {reader.pid}" not in done.stderr  # a reader does not block the restore
        assert "Traceback" not in done.stderr
        assert wc_file(dev).read_text().strip() == "write through"  # not touched
        assert len(Journal(jdir).stale()) == 1  # kept for the next `diskq restore`
    finally:
        writer.kill()
        writer.wait()
    try:
        done = diskq("restore", jdir=jdir)
        assert done.returncode == 0, done.stderr
        assert wc_file(dev).read_text().strip() == "write back"
        assert Journal(jdir).pending() == []
    finally:
        reader.kill()
        reader.wait()


@needs_loop
def test_restore_waits_for_a_writer_that_ends(loop_wb, tmp_path):  # noqa: F811
    dev = loop_wb
    jdir = tmp_path / "j"
    wc_file(dev).write_text("write through")
    fake_entry(
        jdir, device=dev, original="on", diskseq=Path(f"/sys/block/{Path(dev).name}/diskseq").read_text().strip()
    )
    writer = _holder(dev, os.O_RDWR)
    try:
        restore = subprocess.Popen(
            [sys.executable, "-m", "diskq", "restore", "--wait", "30"],
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "DISKQ_JOURNAL_DIR": str(jdir)},
        )
        time.sleep(1.0)
        assert restore.poll() is None and wc_file(dev).read_text().strip() == "write through"  # waiting
    finally:
        writer.kill()
        writer.wait()
    _, err = restore.communicate(timeout=60)
    assert restore.returncode == 0, err
    assert wc_file(dev).read_text().strip() == "write back"
