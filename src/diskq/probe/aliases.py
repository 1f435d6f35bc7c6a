"""Other names for the same storage: whatever writing to one block device also writes.

A block device can share its bytes with devices of other names:

- loop devices over the same backing file (compared by the backing file's device and inode, as
  ``LOOP_GET_STATUS64`` reports them, so renamed, hard-linked, deleted or bind-mounted paths
  still match; ``/sys/block/loopN/loop/backing_file`` and ``stat`` where the ioctl cannot be
  used);
- a loop device over a block device, and that block device (or the disk it is a partition of,
  or a partition of it);
- the paths of one multipath LUN: the slaves of a device-mapper ``multipath`` map (its
  ``dm/uuid`` starts with ``mpath-``), and SCSI disks reporting the same ``device/wwid``.

:func:`aliases` finds them in sysfs; the safety checks then judge every alias like the target
itself, so that a mounted filesystem is refused under whichever name it is asked for.
"""

from __future__ import annotations

import fcntl
import os
import stat
import struct
from dataclasses import dataclass
from pathlib import Path

from diskq.probe import sysfs

#: ``LOOP_GET_STATUS64`` from ``<linux/loop.h>``; it fills a ``struct loop_info64``.
LOOP_GET_STATUS64 = 0x4C05
#: lo_device, lo_inode, lo_rdevice, lo_offset, lo_sizelimit, lo_number, lo_encrypt_type,
#: lo_encrypt_key_size, lo_flags, lo_file_name[64], lo_crypt_name[64], lo_encrypt_key[32], lo_init[2]
_LOOP_INFO64 = struct.Struct("=QQQQQIIII64s64s32s2Q")


@dataclass(frozen=True)
class Alias:
    """``name`` (a kernel block device name) shares storage with the target; ``why`` says how."""

    name: str
    why: str


def parse_loop_info64(buf: bytes) -> tuple[int, int, int]:
    """``struct loop_info64`` -> (lo_device, lo_inode, lo_rdevice), the backing file's device
    number, inode number and, for a block device node, the device it names (0 for a file).

    For a loop device over ``/tmp/f.img`` on an ext4 filesystem of device 259:2, inode 1234,
    the structure starts with ``lo_device = 0x10302`` (259:2), ``lo_inode = 1234``,
    ``lo_rdevice = 0``, then the offset, size limit, number, flags and the file name.
    Raises ValueError when ``buf`` is not the 232 bytes of the structure.
    """
    if len(buf) != _LOOP_INFO64.size:
        raise ValueError(f"struct loop_info64 has {_LOOP_INFO64.size} bytes, got {len(buf)}")
    fields = _LOOP_INFO64.unpack(buf)
    return fields[0], fields[1], fields[2]


def _decode_dev(value: int) -> tuple[int, int]:
    """The kernel's ``huge_encode_dev`` layout, which is also glibc's for majors below 4096."""
    return os.major(value), os.minor(value)


def _name_of(major: int, minor: int, sysfs_root: str) -> str | None:
    try:
        return Path(os.path.realpath(Path(sysfs_root, "dev", "block", f"{major}:{minor}"), strict=True)).name
    except OSError:
        return None


def loop_backing(name: str, *, sysfs_root: str = "/sys") -> tuple[str, tuple[int, int] | str] | None:
    """What loop device ``name`` reads and writes: ``("file", (st_dev, st_ino))`` or
    ``("block", kernel name)``, with the backing path for messages; None when ``name`` is not
    an attached loop device or its backing cannot be found."""
    if not Path(sysfs_root, "block", name, "loop").is_dir():
        return None
    path = sysfs.parse_loop_backing_file(sysfs.read_attr(sysfs_root, f"block/{name}/loop/backing_file") or "")
    if path is None:
        return None
    if sysfs_root == "/sys":
        status = _loop_status(f"/dev/{name}")
        if status is not None:
            device, inode, rdevice = status
            if rdevice:
                below = _name_of(*_decode_dev(rdevice), sysfs_root)
                if below:
                    return path, ("block", below)
            return path, ("file", (device, inode))
    try:
        st = os.stat(path)
    except OSError:
        return None
    if stat.S_ISBLK(st.st_mode):
        below = _name_of(os.major(st.st_rdev), os.minor(st.st_rdev), sysfs_root)
        return (path, ("block", below)) if below else None
    return path, ("file", (st.st_dev, st.st_ino))


def _loop_status(node: str) -> tuple[int, int, int] | None:
    try:
        fd = os.open(node, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        buf = fcntl.ioctl(fd, LOOP_GET_STATUS64, bytes(_LOOP_INFO64.size))
        return parse_loop_info64(buf)
    except (OSError, ValueError, struct.error):
        return None
    finally:
        os.close(fd)


def _loops(sysfs_root: str) -> list[str]:
    try:
        return sorted(p.name for p in Path(sysfs_root, "block").iterdir() if p.name.startswith("loop"))
    except OSError:
        return []


def _overlaps(a: str, b: str, sysfs_root: str) -> bool:
    """Writing block device ``a`` can change bytes of ``b``: the same device, or a disk and one
    of its partitions."""
    if a == b:
        return True
    disk_a, disk_b = sysfs.disk_name(a, sysfs_root=sysfs_root), sysfs.disk_name(b, sysfs_root=sysfs_root)
    return (a == disk_b) or (b == disk_a)


def _is_multipath_map(name: str, sysfs_root: str) -> bool:
    return (sysfs.read_attr(sysfs_root, f"block/{name}/dm/uuid") or "").startswith("mpath-")


def _wwid(name: str, sysfs_root: str) -> str | None:
    wwid = sysfs.read_attr(sysfs_root, f"block/{name}/device/wwid")
    return wwid or None


def aliases(name: str, *, sysfs_root: str = "/sys") -> list[Alias]:
    """Every other block device that shares storage with ``name`` (a disk or partition),
    directly or through a chain (a loop device over a loop device over a file)."""
    found: dict[str, str] = {}
    todo = [name]
    loops = _loops(sysfs_root)
    backing = {loop: loop_backing(loop, sysfs_root=sysfs_root) for loop in loops}

    def add(other: str, why: str) -> None:
        if other != name and other not in found:
            found[other] = why
            todo.append(other)

    while todo and len(found) < 256:
        current = todo.pop(0)
        disk = sysfs.disk_name(current, sysfs_root=sysfs_root)
        mine = backing.get(disk)
        for loop, theirs in backing.items():
            if theirs is None or loop == disk:
                continue
            path, key = theirs
            if mine is not None and mine[1] == key:
                add(
                    loop,
                    f"/dev/{loop} and /dev/{disk} are loop devices over the same {'file' if key[0] == 'file' else 'device'} {path}",
                )
            elif key[0] == "block" and _overlaps(current, key[1], sysfs_root):
                add(loop, f"/dev/{loop} is a loop device over /dev/{key[1]}")
        if mine is not None and mine[1][0] == "block":
            add(mine[1][1], f"/dev/{disk} is a loop device over /dev/{mine[1][1]}")
        if _is_multipath_map(disk, sysfs_root):
            map_name = sysfs.read_attr(sysfs_root, f"block/{disk}/dm/name") or disk
            for path in sysfs.slaves(disk, sysfs_root=sysfs_root):
                add(path, f"/dev/{path} is a path of the multipath device /dev/{disk} ({map_name})")
        wwid = _wwid(disk, sysfs_root)
        if wwid:
            for other in _disks(sysfs_root):
                if other != disk and _wwid(other, sysfs_root) == wwid:
                    add(other, f"/dev/{other} and /dev/{disk} are paths to the same drive (WWID {wwid})")
    return [Alias(n, why) for n, why in found.items()]


def _disks(sysfs_root: str) -> list[str]:
    try:
        return sorted(p.name for p in Path(sysfs_root, "block").iterdir())
    except OSError:
        return []
