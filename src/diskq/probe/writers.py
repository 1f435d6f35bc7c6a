"""Which processes have a block device or a file open for writing, read from ``/proc``.

``diskq restore`` asks this before it puts a write cache back: a process still writing to the
device (a job of a fio that outlived a killed diskq, say) would go on measuring, or corrupting,
under the restored setting. The safety checks ask it of a file a bench would overwrite (file
mode, or a loop device's backing file): a file some program writes (a database, a VM image) is
in use.

A process counts when one of its file descriptors is the device node (or one of its
partitions), or the file, opened for writing: ``/proc/PID/fd/N`` resolves to a block device with
that device number (or to the file's device and inode), and the ``flags`` line of
``/proc/PID/fdinfo/N`` (octal) has ``O_WRONLY`` or ``O_RDWR`` in its access mode::

    pos:    0
    flags:  0140002
    mnt_id: 25

Only the standard library is used. Processes that cannot be read (gone meanwhile, or another
user's when not root) are skipped.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Writer:
    pid: int
    name: str

    def __str__(self) -> str:
        return f"{self.name} (pid {self.pid})"


def writable(fdinfo: str) -> bool:
    """Whether an fdinfo text says the descriptor was opened for writing.

    >>> writable("pos:\\t0\\nflags:\\t0140002\\nmnt_id:\\t25\\n"), writable("flags:\\t0100000\\n")
    (True, False)
    """
    for line in fdinfo.splitlines():
        if line.startswith("flags:"):
            try:
                return (int(line.split(":", 1)[1].strip(), 8) & os.O_ACCMODE) in (os.O_WRONLY, os.O_RDWR)
            except ValueError:
                return False
    return False


def device_numbers(device: str, sysfs_root: str = "/sys") -> set[int]:
    """The device number of ``device`` and of each of its partitions (from sysfs)."""
    numbers = set()
    try:
        st = os.stat(device)
    except OSError:
        return numbers
    if not stat.S_ISBLK(st.st_mode):
        return numbers
    numbers.add(st.st_rdev)
    base = Path(sysfs_root, "block", Path(os.path.realpath(device)).name)
    try:
        parts = [p for p in base.iterdir() if (p / "partition").exists()]
    except OSError:
        parts = []
    for part in parts:
        try:
            major, minor = (part / "dev").read_text().strip().split(":")
            numbers.add(os.makedev(int(major), int(minor)))
        except (OSError, ValueError):
            continue
    return numbers


def _name(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip() or "?"
    except OSError:
        return "?"


def _writers(matches, proc_root: str) -> list[Writer]:
    """Every process (but this one) with a descriptor whose target's ``stat`` ``matches``,
    opened for writing."""
    me = str(os.getpid())
    found = []
    try:
        pids = [p for p in os.listdir(proc_root) if p.isdigit() and p != me]
    except OSError:
        return []
    for pid in pids:
        try:
            fds = os.listdir(f"{proc_root}/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if not matches(os.stat(f"{proc_root}/{pid}/fd/{fd}")):
                    continue
                with open(f"{proc_root}/{pid}/fdinfo/{fd}") as f:
                    info = f.read()
            except OSError:
                continue
            if writable(info):
                found.append(Writer(int(pid), _name(pid)))
                break
    return sorted(found, key=lambda w: w.pid)


def open_for_writing(device: str, *, sysfs_root: str = "/sys", proc_root: str = "/proc") -> list[Writer]:
    """Every process (but this one) with ``device`` or a partition of it open for writing."""
    numbers = device_numbers(device, sysfs_root)
    if not numbers:
        return []
    return _writers(lambda st: stat.S_ISBLK(st.st_mode) and st.st_rdev in numbers, proc_root)


def file_open_for_writing(key: tuple[int, int], *, proc_root: str = "/proc") -> list[Writer]:
    """Every process (but this one) with the regular file ``key`` (its ``(st_dev, st_ino)``, so
    another name, a hard link or a deleted file count too) open for writing: a database, a VM
    image, or a loop device's backing file that something else also writes."""
    return _writers(lambda st: stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) == key, proc_root)


def wait_for_no_writers(device: str, wait_s: float, *, sysfs_root: str = "/sys") -> list[Writer]:
    """Poll until nothing has ``device`` open for writing or ``wait_s`` seconds have passed;
    return the writers still there (empty when none)."""
    deadline = time.monotonic() + wait_s
    while True:
        writers = open_for_writing(device, sysfs_root=sysfs_root)
        if not writers or time.monotonic() >= deadline:
            return writers
        time.sleep(0.1)
