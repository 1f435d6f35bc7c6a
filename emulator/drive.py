"""Build the daemon, mount it, and put a loop device over its ``disk`` file.

:func:`emulated_drive` gives ``/dev/loopN`` behaving like the model: the daemon runs in the
foreground as a child, the loop device uses direct I/O (so concurrent jobs reach the daemon
concurrently), and the loop device's ``queue/write_cache`` says whether the kernel sends flushes.
Everything made is undone on every exit path: the loop device detached (its knob back to "write
back" first, as the kernel sets it), the filesystem unmounted, the daemon ended, the directory
removed. Only what it made is touched.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from emulator.models import DriveModel

SOURCE = Path(__file__).with_name("diskemu.c")


class Unavailable(Exception):
    """The emulator cannot run here (no compiler, no libfuse3, no /dev/fuse, not root): the reason."""


def missing() -> str | None:
    """Why the emulator cannot run on this machine, or None."""
    if os.geteuid() != 0:
        return "needs root (a FUSE mount and a loop device)"
    if not Path("/dev/fuse").exists():
        return "needs /dev/fuse"
    for tool in ("cc", "pkg-config", "losetup", "umount"):
        if shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") is None:
            return f"needs {tool}"
    if subprocess.run(["pkg-config", "--exists", "fuse3"], capture_output=True).returncode != 0:
        return "needs libfuse3-dev (pkg-config fuse3)"
    return None


def build(cache: Path | None = None) -> Path:
    """The compiled daemon, built once per source version into ``cache``."""
    why = missing()
    if why:
        raise Unavailable(why)
    digest = hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:12]
    cache = cache or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "diskq-emulator"
    binary = cache / f"diskemu-{digest}"
    if binary.exists():
        return binary
    cache.mkdir(parents=True, exist_ok=True)
    flags = subprocess.run(
        ["pkg-config", "--cflags", "--libs", "fuse3"], capture_output=True, text=True, check=True
    ).stdout.split()
    tmp = binary.with_suffix(f".tmp{os.getpid()}")
    done = subprocess.run(["cc", "-O2", "-Wall", "-o", str(tmp), str(SOURCE), *flags], capture_output=True, text=True)
    if done.returncode != 0:
        raise Unavailable(f"diskemu.c did not compile: {done.stderr.strip()[:500]}")
    tmp.replace(binary)
    return binary


def realtime(priority: int = 5) -> list[str]:
    """A command prefix that runs a program under SCHED_FIFO (``chrt``), or nothing where chrt is
    missing. The daemon runs so (a drive does not wait for the host's other work), and the tests and
    benchmarks run fio so: on a busy 2-core host the emulator's own path otherwise costs several
    times what it costs on a quiet one."""
    return ["chrt", "-f", str(priority)] if shutil.which("chrt") else []


@dataclass
class EmulatedDrive:
    device: str
    mountpoint: Path
    model: DriveModel

    def stats(self) -> dict[str, float]:
        """The daemon's counters (writes, fsyncs, drains, gc_pauses, slow_writes, ...)."""
        out = {}
        for line in (self.mountpoint / "stats").read_text().splitlines():
            key, _, value = line.partition(" ")
            out[key] = float(value)
        return out


def _knob(dev: str, value: str) -> None:
    Path("/sys/block", os.path.basename(dev), "queue", "write_cache").write_text(value)


def fio_rate(dev: str, *, sync: bool, seconds: float = 1.0) -> float:
    """1-job 4 KiB write IOPS on ``dev`` (with fdatasync or without), fio under :func:`realtime`."""
    out = subprocess.run(
        [
            *realtime(),
            "fio",
            f"--filename={dev}",
            "--name=path",
            "--ioengine=psync",
            "--direct=1",
            f"--fdatasync={int(sync)}",
            "--rw=write",
            "--bs=4k",
            "--size=16M",
            f"--runtime={seconds:g}",
            "--time_based",
            "--output-format=json",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return float(json.loads(out)["jobs"][0]["write"]["iops"])


_PATH: dict[str, float] = {}


def path_overhead() -> dict[str, float]:
    """The emulator's own cost on this host, measured once per process on a drive whose writes and
    flushes cost nothing: ``write_us`` per 4 KiB write and ``flush_us`` per flush, at 1 job."""
    if not _PATH:
        free = DriveModel("free", "free", "", True, True, {"write_us": 0, "empty_flush_us": 0})
        with emulated_drive(free, path_us=0) as drive:
            write = 1e6 / fio_rate(drive.device, sync=False)
            cycle = 1e6 / fio_rate(drive.device, sync=True)
        _PATH.update(write_us=write, flush_us=max(0.0, cycle - write))
    return dict(_PATH)


@contextlib.contextmanager
def emulated_drive(
    model: DriveModel, *, size_mib: int = 256, spin_us: float | None = None, path_us: float | None = None
) -> Iterator[EmulatedDrive]:
    """``/dev/loopN`` over a drive of ``model``; undone on exit (see the module docstring).

    ``path_us``: how much of each request's trip through the emulator counts as part of its
    modelled cost (diskemu.c); by default the write path :func:`path_overhead` measured here."""
    if path_us is None:
        path_us = path_overhead()["write_us"]
    binary = build()
    workdir = Path(tempfile.mkdtemp(prefix="diskemu-"))
    mnt = workdir / "mnt"
    mnt.mkdir()
    args = [*realtime(10), str(binary), str(mnt), "-f", "--size-mib", str(size_mib), *model.daemon_args()]
    args += ["--path-us", f"{path_us:.1f}"]
    if spin_us is not None:
        args += ["--spin-us", f"{spin_us:g}"]
    daemon = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dev = None
    try:
        deadline = time.monotonic() + 10
        while not os.path.ismount(mnt):
            if daemon.poll() is not None:
                raise Unavailable(f"diskemu exited: {daemon.stderr.read().decode(errors='replace').strip()[:300]}")
            if time.monotonic() > deadline:
                raise Unavailable("diskemu did not mount within 10 s")
            time.sleep(0.02)
        dev = subprocess.run(
            ["losetup", "--find", "--show", "--direct-io=on", str(mnt / "disk")],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        _knob(dev, model.write_cache_knob)
        # the drive's cache switch is the loop device's knob: the daemon follows it
        (mnt / "ctl").write_text(f"knob /sys/block/{os.path.basename(dev)}/queue/write_cache\n")
        yield EmulatedDrive(dev, mnt, model)
    finally:
        if dev:
            with contextlib.suppress(OSError):
                _knob(dev, "write back")
            subprocess.run(["losetup", "-d", dev], capture_output=True)
        for _ in range(50):  # the loop device lets go of the file shortly after its detach
            if subprocess.run(["umount", str(mnt)], capture_output=True).returncode == 0 or not os.path.ismount(mnt):
                break
            time.sleep(0.1)
        else:
            subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
        if daemon.poll() is None:
            daemon.terminate()
            try:
                daemon.wait(5)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
        if daemon.stderr:
            daemon.stderr.close()
        with contextlib.suppress(OSError):
            mnt.rmdir()
            workdir.rmdir()
