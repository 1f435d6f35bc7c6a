"""Reading the kernel's view of a block device under ``/sys``.

Every function takes ``sysfs_root`` so tests can point it at a recorded tree. Whole disks live
at ``<root>/block/NAME``; partitions are found through ``<root>/class/block/NAME``, whose
``partition`` file marks them and whose parent directory is the disk.

``queue/write_cache`` is the block layer's flag, e.g.::

    write back

"write back" means the kernel sends flushes (FUA / cache flush) to the device; "write through"
means it does not. Writing it changes only the kernel's behaviour, never the drive's own cache.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from diskq.errors import TargetError

#: Kernel name prefixes of block devices that are not physical drives.
VIRTUAL_PREFIXES = ("loop", "zram", "ram", "dm-", "md", "nbd", "rbd", "vd", "xvd", "sr")


def read_attr(sysfs_root: str, rel: str) -> str | None:
    """Contents of ``<sysfs_root>/<rel>`` stripped, or None if missing or unreadable."""
    try:
        return (Path(sysfs_root) / rel).read_text(errors="replace").strip()
    except OSError:
        return None


def read_int(sysfs_root: str, rel: str) -> int | None:
    text = read_attr(sysfs_root, rel)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def block_name(path: str, *, sysfs_root: str = "/sys") -> str:
    """The kernel name (``sda``, ``nvme0n1p2``, ``dm-0``, ``loop3``) of the block device at ``path``.

    Symlinks such as ``/dev/disk/by-id/...`` or ``/dev/mapper/vg-lv`` are followed through the
    device number, so the answer is the kernel's own name. Raises TargetError for anything that
    is not a block device.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise TargetError(f"{path} does not exist") from None
    except OSError as exc:
        raise TargetError(f"cannot read {path}: {exc.strerror}") from None
    if not stat.S_ISBLK(st.st_mode):
        raise TargetError(f"{path} is not a block device")
    link = Path(sysfs_root) / "dev" / "block" / f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    try:
        return Path(os.path.realpath(link, strict=True)).name
    except OSError:
        return Path(os.path.realpath(path)).name


def is_partition(name: str, *, sysfs_root: str = "/sys") -> bool:
    return (Path(sysfs_root) / "class" / "block" / name / "partition").exists()


def disk_name(name: str, *, sysfs_root: str = "/sys") -> str:
    """The whole disk a partition belongs to; a whole disk's own name."""
    if not is_partition(name, sysfs_root=sysfs_root):
        return name
    return Path(os.path.realpath(Path(sysfs_root) / "class" / "block" / name)).parent.name


def partitions(disk: str, *, sysfs_root: str = "/sys") -> list[str]:
    """Kernel names of the partitions of ``disk`` that the kernel knows about."""
    base = Path(sysfs_root) / "block" / disk
    try:
        return sorted(p.name for p in base.iterdir() if (p / "partition").exists())
    except OSError:
        return []


def device_dir(name: str, *, sysfs_root: str = "/sys") -> Path:
    """``<root>/block/NAME`` for disks, ``<root>/class/block/NAME`` for partitions."""
    disk = Path(sysfs_root) / "block" / name
    return disk if disk.exists() else Path(sysfs_root) / "class" / "block" / name


def holders(name: str, *, sysfs_root: str = "/sys") -> list[str]:
    """Devices stacked on ``name`` (device-mapper, md, bcache), with their dm names if any."""
    base = device_dir(name, sysfs_root=sysfs_root) / "holders"
    try:
        found = sorted(p.name for p in base.iterdir())
    except OSError:
        return []
    out = []
    for holder in found:
        dm_name = read_attr(sysfs_root, f"class/block/{holder}/dm/name")
        out.append(f"{holder} ({dm_name})" if dm_name else holder)
    return out


def slaves(name: str, *, sysfs_root: str = "/sys") -> list[str]:
    """Devices ``name`` is built on, recursively (``dm-0`` -> ``sda2`` -> ...)."""
    seen: list[str] = []
    todo = [name]
    while todo:
        current = todo.pop()
        base = device_dir(current, sysfs_root=sysfs_root) / "slaves"
        try:
            below = sorted(p.name for p in base.iterdir())
        except OSError:
            continue
        for dev in below:
            if dev not in seen:
                seen.append(dev)
                todo.append(dev)
    return seen


def write_cache_path(disk: str, *, sysfs_root: str = "/sys") -> Path:
    return Path(sysfs_root) / "block" / disk / "queue" / "write_cache"


def parse_write_cache(text: str | None) -> str:
    """``"write back"`` -> ``"on"``, ``"write through"`` -> ``"off"``, anything else -> ``"unknown"``."""
    value = (text or "").strip().lower()
    if value == "write back":
        return "on"
    if value == "write through":
        return "off"
    return "unknown"


def is_virtual(name: str) -> bool:
    return name.startswith(VIRTUAL_PREFIXES)
