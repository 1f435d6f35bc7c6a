"""What ``diskq bench TARGET`` writes to: a whole disk, a partition, or a regular file.

A block device is found in sysfs through its major:minor numbers (``/sys/dev/block/M:m``), like
ceph-volume and lsblk do; a partition is a block device whose sysfs entry has a ``partition``
file. A file target is created by diskq at ``--size`` (filled with zeros so the first steps do
not measure extent allocation) and removed afterwards; an existing file is only used with
``--yes`` and never removed.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from diskq import proc
from diskq.errors import TargetError

MiB = 1024 * 1024
#: filesystems that keep their files in RAM
MEMORY_FILESYSTEMS = frozenset({"tmpfs", "ramfs", "devtmpfs"})
_RAM_DISKS = {re.compile(r"^zram\d+$"): "a compressed RAM disk (zram)", re.compile(r"^ram\d+$"): "a RAM disk (brd)"}


@dataclass
class Target:
    path: str
    kind: str  # "disk" | "partition" | "file"
    capacity_bytes: int
    dev_name: str | None = None  # sysfs name of the block device (sda, nvme0n1, loop3, sda1)
    created: bool = False  # diskq created this file and removes it afterwards
    existed: bool = False  # a file that was there before diskq

    @property
    def is_block(self) -> bool:
        return self.kind in ("disk", "partition")


def sysfs_name(path: str, *, sysfs_root: str = "/sys") -> str:
    """Kernel name of the block device at ``path`` (follows symlinks such as /dev/disk/by-id/...)."""
    st = os.stat(path)
    if not stat.S_ISBLK(st.st_mode):
        raise TargetError(f"{path} is not a block device", hint="`lsblk` lists the block devices")
    link = Path(sysfs_root, "dev", "block", f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}")
    try:
        return os.path.basename(os.path.realpath(link))
    except OSError as exc:  # pragma: no cover - sysfs always has this on Linux
        raise TargetError(f"cannot find {path} in sysfs: {exc}", hint="check that /sys is mounted") from None


def block_size_bytes(name: str, *, sysfs_root: str = "/sys") -> int:
    """Capacity of a block device from sysfs (``size`` is in 512-byte sectors, always)."""
    try:
        return int(Path(sysfs_root, "class", "block", name, "size").read_text()) * 512
    except (OSError, ValueError) as exc:
        raise TargetError(
            f"cannot read the size of {name} from sysfs: {exc}", hint="check that the device is still there (`lsblk`)"
        ) from None


def resolve(path: str, *, size_bytes: int, sysfs_root: str = "/sys") -> Target:
    """Classify ``path``. A path that does not exist becomes a file target diskq will create."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        parent = os.path.dirname(os.path.abspath(path))
        if names_a_device(path):
            raise TargetError(f"{path} does not exist", hint="check the device name with `lsblk`") from None
        if not os.path.isdir(parent):
            raise TargetError(
                f"{path} does not exist and its directory {parent} does not either",
                hint=f"create the directory first (`mkdir -p {parent}`) or give a path in an existing directory",
            ) from None
        return Target(path=path, kind="file", capacity_bytes=size_bytes)
    if stat.S_ISBLK(st.st_mode):
        name = sysfs_name(path, sysfs_root=sysfs_root)
        kind = "partition" if Path(sysfs_root, "class", "block", name, "partition").exists() else "disk"
        capacity = block_size_bytes(name, sysfs_root=sysfs_root)
        if capacity == 0:
            raise TargetError(
                f"{path} has no capacity (an empty loop device or a card reader without media?)",
                hint="attach a backing file or insert the media first, or pick another device (`lsblk`)",
            )
        return Target(path=path, kind=kind, capacity_bytes=capacity, dev_name=name)
    if stat.S_ISREG(st.st_mode):
        capacity = st.st_size if st.st_size > 0 else size_bytes
        return Target(path=path, kind="file", capacity_bytes=capacity, existed=True)
    if stat.S_ISDIR(st.st_mode):
        raise TargetError(
            f"{path} is a directory", hint=f"name a file inside it, e.g. {os.path.join(path, 'diskq.test')}"
        )
    raise TargetError(
        f"{path} is neither a block device nor a regular file",
        hint="give a block device (`lsblk` lists them) or the path of a test file on a filesystem",
    )


def names_a_device(path: str) -> bool:
    """A missing ``path`` in the device directory: a mistyped device name, not a new file.

    True when the nearest existing directory above ``path`` is on the same filesystem as
    ``/dev`` (devtmpfs). ``/dev/shm/x.img`` is on a tmpfs of its own, so it is a file path.
    """
    absolute = os.path.abspath(path)
    if absolute != "/dev" and not absolute.startswith("/dev/"):
        return False
    try:
        dev_fs = os.stat("/dev").st_dev
    except OSError:  # pragma: no cover - every Linux system has /dev
        return True
    parent = os.path.dirname(absolute)
    while parent != "/":
        try:
            return os.stat(parent).st_dev == dev_fs
        except FileNotFoundError:
            parent = os.path.dirname(parent)
        except OSError:
            return True
    return True


def file_mode_note(target: Target, written_bytes: int) -> str:
    """What a file-mode result measured: the test file and its size, and which device the
    identity fields (model, capacity, ...) describe."""
    from diskq.units import human_bytes

    if target.created or not target.existed:
        size = f"created at {human_bytes(target.capacity_bytes)} ({target.capacity_bytes} bytes) and removed afterwards"
    elif _size_or_zero(target.path) > 0:
        size = f"an existing file of {human_bytes(target.capacity_bytes)} ({target.capacity_bytes} bytes)"
    else:
        size = (
            f"an existing empty file that fio extends to at most {human_bytes(written_bytes)} ({written_bytes} bytes)"
        )
    fs, source = filesystem_of(os.path.dirname(os.path.abspath(target.path)))
    under = (
        f"{source}, the device under its {fs or 'unknown'} filesystem" if source else "the device under its filesystem"
    )
    return (
        f"file mode: test file {target.path}, {size}; the device's model, capacity and other identity "
        f"fields describe {under}, not the file"
    )


def _size_or_zero(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def region_bytes(capacity_bytes: int, max_jobs: int) -> int:
    """The region every job writes, from the target's start (``--size``): capacity / max_jobs, at
    most 1 GiB, aligned to 1 MiB (4 KiB on tiny targets). All jobs write it from its first block,
    as the community command's jobs write the device from offset 0; the bound keeps what a step
    touches close to what those jobs reach in a 20 s step (a few hundred MB at most)."""
    share = min(capacity_bytes // max(max_jobs, 1), 1024 * MiB)
    align = MiB if share >= 4 * MiB else 4096
    share -= share % align
    if share < 4096 * 16:
        raise TargetError(
            f"the target is too small for {max_jobs} jobs ({capacity_bytes} bytes)",
            hint="use a larger --size or a smaller --max-jobs",
        )
    return share


def create_file(target: Target) -> None:
    """Create the test file at its full size, written with zeros and synced."""
    chunk = b"\0" * (4 * MiB)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    try:
        fd = os.open(target.path, flags, 0o600)
    except FileExistsError:
        raise TargetError(
            f"{target.path} appeared while diskq was starting; not touching it",
            hint="give another file name, or check what created it",
        ) from None
    except OSError as exc:
        raise TargetError(
            f"cannot create {target.path}: {exc.strerror}",
            hint="check the directory's permissions and free space, or give another path",
        ) from None
    target.created = True
    try:
        left = target.capacity_bytes
        while left > 0:
            n = os.write(fd, chunk[: min(len(chunk), left)])
            left -= n
        os.fsync(fd)
    except OSError as exc:
        raise TargetError(f"cannot fill {target.path}: {exc.strerror}", hint="use a smaller --size") from None
    finally:
        os.close(fd)


def remove_created(target: Target) -> None:
    """Remove the file if (and only if) diskq created it."""
    if target.created:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target.path)
        target.created = False


def filesystem_of(path: str) -> tuple[str | None, str | None]:
    """(filesystem type, source device) of the filesystem holding ``path``, via findmnt."""
    try:
        out = proc.run(["findmnt", "-n", "-o", "FSTYPE,SOURCE", "-T", path]).stdout.split()
    except Exception:  # best effort: findmnt missing or odd mounts
        return None, None
    if len(out) >= 2:
        return out[0], out[1]
    return (out[0], None) if out else (None, None)


def memory_backing(target: Target, *, sysfs_root: str = "/sys") -> str | None:
    """Why ``target`` lives in RAM, or None: a file on tmpfs, ramfs or devtmpfs (tmpfs takes
    O_DIRECT since Linux 6.6, so fio runs there), a zram or brd RAM disk, or a loop device whose
    backing file is in RAM or on such a disk. A partition counts as its disk."""
    if target.kind == "file":
        return _file_in_memory(target.path)
    if not target.dev_name:
        return None
    from diskq.probe import sysfs

    return _disk_in_memory(sysfs.disk_name(target.dev_name, sysfs_root=sysfs_root), sysfs_root, depth=0)


def _file_in_memory(path: str) -> str | None:
    where = path if os.path.exists(path) else os.path.dirname(os.path.abspath(path))
    fs, _ = filesystem_of(where)
    return f"{path} is on {fs}, which keeps its files in RAM" if fs in MEMORY_FILESYSTEMS else None


def _disk_in_memory(disk: str, sysfs_root: str, *, depth: int) -> str | None:
    from diskq.probe import sysfs
    from diskq.probe.sysfs import parse_loop_backing_file

    for pattern, what in _RAM_DISKS.items():
        if pattern.match(disk):
            return f"/dev/{disk} is {what}"
    if not disk.startswith("loop") or depth > 8:
        return None
    backing = parse_loop_backing_file(sysfs.read_attr(sysfs_root, f"block/{disk}/loop/backing_file") or "")
    if backing is None:
        return None
    try:
        is_block = stat.S_ISBLK(os.stat(backing).st_mode)
    except OSError:
        is_block = False
    if is_block:
        try:
            below = sysfs.disk_name(sysfs.block_name(backing, sysfs_root=sysfs_root), sysfs_root=sysfs_root)
        except TargetError:
            return None
        why = _disk_in_memory(below, sysfs_root, depth=depth + 1)
    else:
        why = _file_in_memory(backing)
    return f"/dev/{disk} is a loop device over {backing}, and {why}" if why else None


#: Where a scratch image goes, first that is writable and disk-backed: /var/tmp (disk-backed by
#: the FHS, while /tmp is tmpfs on Debian 13, Fedora and Arch), then $TMPDIR or /tmp.
SCRATCH_DIRS = ("/var/tmp",)


def scratch_dir(candidates: Iterable[str] | None = None) -> tuple[str, str | None]:
    """(directory, None) for the first writable candidate not in RAM; when every one is in RAM,
    (the first writable one, why it is in RAM): the bench then says once that no verdict applies."""
    dirs = [*(SCRATCH_DIRS if candidates is None else candidates), tempfile.gettempdir()]
    usable = [d for d in dict.fromkeys(dirs) if os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK)]
    if not usable:
        raise TargetError(
            "no writable directory for a scratch image",
            hint=f"make one of {', '.join(dict.fromkeys(dirs))} writable, or bench a target of your own",
        )
    for d in usable:
        if _file_in_memory(d) is None:
            return d, None
    return usable[0], _file_in_memory(usable[0])


@contextlib.contextmanager
def scratch(size_bytes: int) -> Iterator[str]:
    """A throwaway target: a loop device over a temp file when root, else a temp file path, in a
    disk-backed directory (:func:`scratch_dir`).

    Everything is removed on exit, whatever happened.
    """
    workdir = tempfile.mkdtemp(prefix="diskq-scratch-", dir=scratch_dir()[0])
    backing = os.path.join(workdir, "scratch.img")
    use_loop = os.geteuid() == 0 and proc.which("losetup") is not None and os.path.exists("/dev/loop-control")
    dev = None
    try:
        if not use_loop:
            yield backing
            return
        with open(backing, "wb") as f:
            f.truncate(size_bytes)
        dev = proc.run(["losetup", "--find", "--show", backing], check=True).stdout.strip()
        _loop_write_back(dev)
        yield dev
    finally:
        if dev:
            _loop_write_back(dev)
            proc.run(["losetup", "-d", dev])
        with contextlib.suppress(FileNotFoundError):
            os.unlink(backing)
        with contextlib.suppress(OSError):
            os.rmdir(workdir)


def _loop_write_back(dev: str) -> None:
    """Loop devices keep their kernel write-cache flag across detach and re-attach; the scratch
    device starts and ends at the kernel's default, "write back"."""
    with contextlib.suppress(OSError):
        Path("/sys/block", os.path.basename(dev), "queue", "write_cache").write_text("write back")
