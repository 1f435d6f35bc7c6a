"""A loop device over a temp file that the benchmark creates, fills and always detaches.

The backing file is written with zeros (not left sparse) so no contender pays for block
allocation in the host filesystem that the other does not. The device is detached and the file
removed on every exit path: normal end, exception, Ctrl-C, SIGTERM (turned into SystemExit) and
interpreter exit (atexit). Only the device made here is ever touched.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

MiB = 1024 * 1024


def require_root() -> None:
    if os.geteuid() != 0:
        raise SystemExit("this benchmark needs root (it creates a loop device)")
    for tool in ("losetup", "fio"):
        if shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") is None:
            raise SystemExit(f"{tool} is not installed")


#: where each ``--backing`` puts the loop device's file: the temp dir's filesystem, or memory;
#: ``emulated:MODEL`` puts it on an emulated drive (emulator/, docs/emulated-drives.md)
BACKINGS = {"disk": None, "memory": "/dev/shm"}
EMULATED = "emulated:"


def _backing(text: str) -> str:
    if text in BACKINGS:
        return text
    if text.startswith(EMULATED):
        from emulator.models import load

        models = load()
        if text[len(EMULATED) :] in models:
            return text
        raise argparse.ArgumentTypeError(f"no drive model {text[len(EMULATED) :]!r}; models: {', '.join(models)}")
    raise argparse.ArgumentTypeError(f"--backing takes disk, memory or emulated:MODEL, not {text!r}")


def device_arguments(ap: argparse.ArgumentParser, *, size_mib: int = 2048) -> None:
    """``--size-mib`` and ``--backing``, the options every device benchmark takes."""
    ap.add_argument("--size-mib", type=int, default=size_mib, help=f"loop device size in MiB (default {size_mib})")
    ap.add_argument(
        "--backing",
        type=_backing,
        default="disk",
        help="the loop device's backing file: on the temp dir's filesystem (disk), in /dev/shm "
        "(memory), or an emulated drive of a model of emulator/models.toml (emulated:MODEL)",
    )


def loop_device_of(args: argparse.Namespace) -> contextlib.AbstractContextManager[str]:
    """:func:`loop_device` as ``--size-mib`` and ``--backing`` ask."""
    if args.backing.startswith(EMULATED):
        return emulated_device(args.backing[len(EMULATED) :], args.size_mib)
    return loop_device(args.size_mib * MiB, BACKINGS[args.backing])


@contextlib.contextmanager
def emulated_device(model: str, size_mib: int) -> Iterator[str]:
    """A loop device over an emulated drive of ``model``, gone on exit (SIGTERM included)."""
    from emulator.drive import emulated_drive, path_overhead
    from emulator.models import load

    _sigterm_exits()
    path = path_overhead()
    print(
        f"# emulated drive {model}: the emulator's own path here costs {path['write_us']:.0f} us per write and "
        f"{path['flush_us']:.0f} us per flush at 1 job",
        flush=True,
    )
    with emulated_drive(load()[model], size_mib=size_mib) as drive:
        yield drive.device


def loadavg(*, all_three: bool = False) -> str:
    """The machine's load average as /proc/loadavg gives it (the 1-minute figure, or the 1, 5 and
    15 minute ones): the other work that shares the device's host while a benchmark runs."""
    try:
        fields = Path("/proc/loadavg").read_text().split()
    except OSError:
        return "?"
    return " ".join(fields[:3]) if all_three else fields[0]


def _sigterm_exits() -> None:
    """SIGTERM and SIGHUP raise SystemExit so the finally blocks below run."""

    def handler(signum, _frame):
        raise SystemExit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, handler)


def _fill(path: str, size_bytes: int) -> None:
    chunk = b"\0" * (8 * MiB)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        left = size_bytes
        while left > 0:
            left -= os.write(fd, chunk[: min(len(chunk), left)])
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_back(dev: str) -> None:
    # Loop devices keep their write-cache flag across detach and re-attach: leave the kernel default.
    with contextlib.suppress(OSError):
        Path("/sys/block", os.path.basename(dev), "queue", "write_cache").write_text("write back")


@contextlib.contextmanager
def loop_device(size_bytes: int, directory: str | None = None) -> Iterator[str]:
    """``/dev/loopN`` over a new zero-filled temp file of ``size_bytes`` in ``directory`` (the
    system's temp dir by default; ``/dev/shm`` gives a device backed by memory); detached on exit."""
    _sigterm_exits()
    workdir = tempfile.mkdtemp(prefix="diskq-benchmark-", dir=directory)
    backing = os.path.join(workdir, "backing.img")
    made: list[str] = []

    def cleanup() -> None:
        while made:
            dev = made.pop()
            _write_back(dev)
            subprocess.run(["losetup", "-d", dev], capture_output=True)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(backing)
        with contextlib.suppress(OSError):
            os.rmdir(workdir)

    atexit.register(cleanup)
    try:
        _fill(backing, size_bytes)
        dev = subprocess.run(
            ["losetup", "--find", "--show", backing], check=True, capture_output=True, text=True
        ).stdout.strip()
        made.append(dev)
        _write_back(dev)
        yield dev
    finally:
        cleanup()
        atexit.unregister(cleanup)
