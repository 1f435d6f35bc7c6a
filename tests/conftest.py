"""Shared fixtures: real loop devices over temp files, recorded fixtures, skip rules.

Loop devices are created by the test that uses them and always detached in teardown, also when
the test fails. Tests never write to a device they did not create.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import settings

FIXTURES = Path(__file__).parent / "fixtures"

# Property tests: no per-example deadline (these machines are shared and noisy; speed is measured
# by benchmarks/, never by tests). Under CI the examples are derandomized, so a run on the same
# code gives the same verdict; locally every run explores new examples.
settings.register_profile("dev", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True)
settings.load_profile(os.environ.get("DISKQ_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))


def _have(tool: str) -> bool:
    return shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") is not None


IS_ROOT = os.geteuid() == 0
HAVE_LOOP = IS_ROOT and _have("losetup") and Path("/dev/loop-control").exists()

needs_root = pytest.mark.skipif(not IS_ROOT, reason="needs root (loop devices, sysfs writes)")
needs_loop = pytest.mark.skipif(not HAVE_LOOP, reason="needs root, losetup and /dev/loop-control")
needs_fio = pytest.mark.skipif(not _have("fio"), reason="fio is not installed (apt-get install fio)")


@pytest.fixture
def fixtures() -> Path:
    """Directory of recorded real outputs (see tests/fixtures/SOURCES.md)."""
    return FIXTURES


def wc_file(dev: str) -> Path:
    """The kernel's write-cache knob of a block device (``queue/write_cache`` in sysfs)."""
    return Path("/sys/block") / Path(dev).name / "queue" / "write_cache"


def _reset_write_cache(dev: str) -> None:
    """Loop devices keep their queue/write_cache setting across detach and re-attach; start and
    end every test device at the kernel default ("write back")."""
    try:
        wc_file(dev).write_text("write back")
    except OSError:
        pass


@pytest.fixture
def make_loop(tmp_path):
    """Factory: ``make_loop(size_bytes=64 MiB)`` -> ``/dev/loopN`` over a new sparse temp file.

    Every device made is detached at teardown, whatever happened in the test.
    """
    if not HAVE_LOOP:
        pytest.skip("needs root, losetup and /dev/loop-control")
    made: list[str] = []

    def make(size_bytes: int = 64 * 1024 * 1024, name: str | None = None) -> str:
        backing = tmp_path / (name or f"loop{len(made)}.img")
        with open(backing, "wb") as f:
            f.truncate(size_bytes)
        dev = subprocess.run(
            ["losetup", "--find", "--show", str(backing)], check=True, capture_output=True, text=True
        ).stdout.strip()
        made.append(dev)
        _reset_write_cache(dev)
        return dev

    try:
        yield make
    finally:
        for dev in reversed(made):
            _reset_write_cache(dev)
            subprocess.run(["umount", "-l", dev], capture_output=True)
            subprocess.run(["swapoff", dev], capture_output=True)
            subprocess.run(["losetup", "-d", dev], capture_output=True)


@pytest.fixture
def loop_device(make_loop) -> str:
    """One 64 MiB loop device, detached at teardown."""
    return make_loop()


@pytest.fixture
def loop_wb(make_loop):
    """A loop device whose kernel write-cache flag starts as "write back".

    The flag belongs to the loop slot and survives detach/attach, so a test never trusts what a
    reused slot starts with; teardown leaves the slot in "write back" again.
    """
    dev = make_loop()
    wc_file(dev).write_text("write back")
    yield dev
    wc_file(dev).write_text("write back")


def fio_processes(dev: str) -> dict[int, tuple[int, list[bytes]]]:
    """Every fio process writing to ``dev`` (found by its ``--filename``): pid -> (parent pid,
    argv). fio's main process is the one whose parent is not among them; its jobs are its children."""
    out: dict[int, tuple[int, list[bytes]]] = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            ppid = int(Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if cmdline and cmdline[0].endswith(b"fio") and f"--filename={dev}".encode() in cmdline:
            out[int(pid)] = (ppid, cmdline)
    return out


def sectors_written(dev: str) -> int:
    """The 512-byte sectors a block device has written since it appeared (/sys/block/X/stat)."""
    return int(Path(f"/sys/block/{Path(dev).name}/stat").read_text().split()[6])
