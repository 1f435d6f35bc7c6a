"""Reading the kernel's view of a block device under ``/sys``.

Every function takes ``sysfs_root`` so tests can point it at a recorded tree. Whole disks live
at ``<root>/block/NAME``; partitions are found through ``<root>/class/block/NAME``, whose
``partition`` file marks them and whose parent directory is the disk.

``queue/write_cache`` is the block layer's flag, e.g.::

    write back

"write back" means the kernel sends flushes (FUA / cache flush) to the device; "write through"
means it does not. Writing it changes only the kernel's behaviour, never the drive's own cache.

An NVMe namespace's ``device`` link leads to its controller (``nvme0``), and the controller's
``device`` link to its PCI function, which holds the PCIe link state (see :func:`nvme_pcie_link`).
"""

from __future__ import annotations

import os
import re
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


def parse_loop_backing_file(text: str) -> str | None:
    """``/sys/block/loopN/loop/backing_file`` -> the path, None when empty. Sample::

        /var/tmp/disk.img (deleted)

    The kernel appends `` (deleted)`` once the file is unlinked; the suffix is dropped.
    """
    path = text.strip()
    if path.endswith(" (deleted)"):
        path = path[: -len(" (deleted)")]
    return path or None


def is_virtual(name: str) -> bool:
    return name.startswith(VIRTUAL_PREFIXES)


_PCIE_SPEED = re.compile(r"^(\d+(?:\.\d+)?) GT/s(?: PCIe)?$")
_NVME_CTRL = re.compile(r"^nvme\d+$")


def parse_pcie_link(speed: str | None, width: str | None) -> str | None:
    """A PCI function's ``current_link_speed`` and ``current_link_width`` as one string.

    The kernel prints them as (``drivers/pci/pci-sysfs.c``; kernels before 5.x omit ``PCIe``
    and the ``.0``)::

        8.0 GT/s PCIe
        4

    -> ``"PCIe 8.0 GT/s x4"``. None when the speed is ``Unknown`` or not in that form; the width
    is left out when it is not a lane count (1 to 32).
    """
    m = _PCIE_SPEED.match((speed or "").strip())
    if not m:
        return None
    gts = float(m.group(1))
    if not 0 < gts < 1000:
        return None
    text = f"PCIe {gts:.1f} GT/s"
    lanes = (width or "").strip()
    if lanes.isdigit() and 1 <= int(lanes) <= 32:
        text += f" x{int(lanes)}"
    return text


def nvme_controllers(disk: str, *, sysfs_root: str = "/sys") -> list[str]:
    """The controllers (``nvme0``...) behind the NVMe namespace ``disk`` (``nvme0n1``).

    ``<root>/block/nvme0n1/device`` links to the controller; with native NVMe multipath it links
    to the subsystem (``nvme-subsys0``) instead, which lists each path's controller.
    """
    try:
        target = Path(os.path.realpath(Path(sysfs_root) / "block" / disk / "device", strict=True))
    except OSError:
        return []
    if _NVME_CTRL.match(target.name):
        return [target.name]
    try:
        return sorted((p.name for p in target.iterdir() if _NVME_CTRL.match(p.name)), key=lambda n: int(n[4:]))
    except OSError:
        return []


def nvme_pcie_link(disk: str, *, sysfs_root: str = "/sys") -> tuple[str | None, str | None]:
    """(PCIe link of the NVMe namespace ``disk``, a note or None).

    Reads ``<root>/class/nvme/<controller>/device/current_link_{speed,width}``. The note says why
    the link is unknown (controllers on another transport - TCP, RDMA, FC, loop - have none), that
    it runs below ``max_link_{speed,width}``, or that multipath controllers run at different links
    (the first controller's is returned).
    """
    controllers = nvme_controllers(disk, sysfs_root=sysfs_root)
    if not controllers:
        return None, f"{disk}: no NVMe controller found in sysfs: PCIe link unknown"
    links: dict[str, str] = {}
    why = None
    for ctrl in controllers:
        transport = read_attr(sysfs_root, f"class/nvme/{ctrl}/transport")
        if transport and transport != "pcie":
            why = f"{ctrl} is an NVMe over {transport} controller: no PCIe link"
            continue
        pci = f"class/nvme/{ctrl}/device"
        speed = read_attr(sysfs_root, f"{pci}/current_link_speed")
        link = parse_pcie_link(speed, read_attr(sysfs_root, f"{pci}/current_link_width"))
        if link is None:
            why = f"{ctrl}: PCIe link speed " + (f"reads {speed!r}" if speed else "is not in sysfs") + ": unknown"
            continue
        links[ctrl] = link
        best = parse_pcie_link(
            read_attr(sysfs_root, f"{pci}/max_link_speed"), read_attr(sysfs_root, f"{pci}/max_link_width")
        )
        if best and best != link:
            why = f"{ctrl} runs at {link}, below the {best} the drive supports"
    distinct = sorted(set(links.values()), key=list(links.values()).index)
    if len(distinct) > 1:
        why = "paths run at different PCIe links: " + ", ".join(f"{ctrl} {link}" for ctrl, link in links.items())
    return (distinct[0] if distinct else None), why
