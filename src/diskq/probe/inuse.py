"""Is a block device in use? Mounts, swap, holders, exclusive opens, under any of its names.

A device is in use when it, or one of its partitions, is mounted, is active swap, has holders
(device-mapper, LVM, md, bcache), cannot be opened with ``O_EXCL``, or carries ``/`` or
``/boot`` (also through LVM or md). Other names for the same storage
(:mod:`diskq.probe.aliases`: loop devices over one file, a loop device and the device under it,
multipath paths) are judged with the target, and so is a loop device's backing file that
another process holds open for writing (``/proc/*/fd``). Each check returns its reasons as
sentences; the refusals are :mod:`diskq.probe.safety`'s and :mod:`diskq.probe.exclusive`'s.

A partition's write cache is its whole disk's: while the rest of the disk is in use it is not
switched (:func:`partition_cache_mode`).

The parsers here are pure (``/proc/self/mountinfo``, ``/proc/swaps``); the checks read
``/proc`` and sysfs.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

from diskq.errors import DiskqError, TargetError, UnsafeTarget
from diskq.probe import sysfs
from diskq.probe.aliases import aliases, loop_backing
from diskq.probe.writers import file_open_for_writing

IN_USE_HINT = (
    "diskq never writes to a device that is in use, not even with --force: unmount it, swapoff it "
    "or take it out of LVM/md first, or pick another device (`lsblk -f` shows what is on each)"
)


@dataclass(frozen=True)
class Mount:
    devno: str  # "major:minor" as the kernel reports it (0:N for btrfs and other anonymous devices)
    mountpoint: str
    source: str


_OCTAL = frozenset("01234567")


def _unescape(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as \\ooo octal; anything else that
    follows a backslash is kept as it is."""
    out, i = [], 0
    while i < len(field):
        code = field[i + 1 : i + 4]
        if field[i] == "\\" and len(code) == 3 and set(code) <= _OCTAL:
            out.append(chr(int(code, 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def parse_mountinfo(text: str) -> list[Mount]:
    """``/proc/self/mountinfo`` -> mounts. Sample line::

    42 27 7:0 / /tmp/mnt rw,relatime - ext4 /dev/loop0 rw
    """
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields = left.split()
        if not sep or len(fields) < 5:
            continue
        rfields = right.split()
        mounts.append(Mount(fields[2], _unescape(fields[4]), _unescape(rfields[1]) if len(rfields) > 1 else ""))
    return mounts


def parse_proc_swaps(text: str) -> list[str]:
    """``/proc/swaps`` -> the swap areas' paths. Sample::

    Filename                                Type            Size    Used    Priority
    /dev/loop0                              partition       65532   0       -2
    """
    lines = text.splitlines()[1:]
    return [_unescape(line.split()[0]) for line in lines if line.split()]


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _name_of_devno(devno: str, sysfs_root: str) -> str | None:
    link = Path(sysfs_root) / "dev" / "block" / devno
    try:
        return Path(os.path.realpath(link, strict=True)).name
    except OSError:
        return None


def _names_of_source(source: str, sysfs_root: str) -> set[str]:
    if not source.startswith("/dev/"):
        return set()
    try:
        return {sysfs.block_name(source, sysfs_root=sysfs_root)}
    except DiskqError:
        return set()


def in_use_reasons(
    path: str, *, sysfs_root: str = "/sys", mountinfo: str | None = None, swaps: str | None = None
) -> list[str]:
    """Every reason why ``path`` is in use. Empty list: nothing holds it."""
    name = sysfs.block_name(path, sysfs_root=sysfs_root)
    family = [name, *sysfs.partitions(name, sysfs_root=sysfs_root)]

    def who(dev: str) -> str:
        return path if dev == name else f"its partition /dev/{dev}"

    return _family_reasons(family, who, sysfs_root, mountinfo, swaps)


def rest_of_disk_in_use(
    path: str,
    *,
    sysfs_root: str = "/sys",
    mountinfo: str | None = None,
    swaps: str | None = None,
    probe_exclusive: bool = True,
) -> list[str]:
    """For a partition: every reason why the rest of its disk (the disk itself, the other
    partitions) is in use. Empty for a whole disk, or when nothing else on the disk is used.

    The write cache belongs to the whole disk, so it must not be switched while any of this is
    true. Besides mounts, swap and holders, each other partition is opened with ``O_EXCL`` for
    an instant (``probe_exclusive``), which also finds mounts in other mount namespaces.
    """
    name = sysfs.block_name(path, sysfs_root=sysfs_root)
    if not sysfs.is_partition(name, sysfs_root=sysfs_root):
        return []
    disk = sysfs.disk_name(name, sysfs_root=sysfs_root)
    siblings = [p for p in sysfs.partitions(disk, sysfs_root=sysfs_root) if p != name]

    def who(dev: str) -> str:
        return f"the disk /dev/{disk}" if dev == disk else f"partition /dev/{dev} of the same disk"

    reasons = _family_reasons([disk, *siblings], who, sysfs_root, mountinfo, swaps)
    if not reasons and probe_exclusive:
        for dev in siblings:
            node = f"/dev/{dev}"
            if os.path.exists(node) and _exclusive_open_error(node):
                reasons.append(f"{who(dev)} cannot be opened exclusively (O_EXCL): something is using it")
    return reasons


def disk_node(path: str, *, sysfs_root: str = "/sys") -> str:
    """``/dev/NAME`` of the whole disk ``path`` is on (``path``'s own node for a disk)."""
    name = sysfs.block_name(path, sysfs_root=sysfs_root)
    if not sysfs.is_partition(name, sysfs_root=sysfs_root):
        return path
    return f"/dev/{sysfs.disk_name(name, sysfs_root=sysfs_root)}"


def partition_cache_mode(path: str, mode: str, *, sysfs_root: str = "/sys") -> tuple[str, list[str]]:
    """The ``--cache`` mode a partition may use, with notes. The write cache is the whole
    disk's: while the rest of the disk is in use it is left alone, so ``auto`` becomes ``keep``
    and ``off``, ``on`` or ``both`` are refused (:class:`UnsafeTarget`)."""
    if mode == "keep":
        return mode, []
    busy = rest_of_disk_in_use(path, sysfs_root=sysfs_root)
    if not busy:
        return mode, []
    disk = sysfs.disk_name(sysfs.block_name(path, sysfs_root=sysfs_root), sysfs_root=sysfs_root)
    if mode == "auto":
        return "keep", [
            f"write cache left as it is (--cache keep): it belongs to the whole disk /dev/{disk}, and "
            + "; ".join(busy)
        ]
    raise UnsafeTarget(
        f"refusing to switch the write cache for {path}: it belongs to the whole disk /dev/{disk}, "
        "and another part of that disk is in use",
        busy,
        hint="run with --cache keep to measure the partition with the cache as it is, "
        "or stop using the rest of the disk first",
    )


def _family_reasons(
    family: list[str], who, sysfs_root: str, mountinfo: str | None, swaps: str | None, *, ignore_holders=frozenset()
) -> list[str]:
    """Mounts, swap areas, ``/``, ``/boot`` and holders (but those in ``ignore_holders``) on any
    device named in ``family``."""
    reasons: list[str] = []
    mounts = parse_mountinfo(mountinfo if mountinfo is not None else _read("/proc/self/mountinfo"))
    for m in mounts:
        direct = _names_of_source(m.source, sysfs_root)
        by_no = _name_of_devno(m.devno, sysfs_root)
        if by_no:
            direct.add(by_no)
        below = {s for d in direct for s in sysfs.slaves(d, sysfs_root=sysfs_root)}
        for dev in family:
            if dev in direct:
                reasons.append(f"{who(dev)} is mounted at {m.mountpoint}")
            if m.mountpoint in ("/", "/boot", "/boot/efi") and (dev in direct or dev in below):
                reasons.append(f"{who(dev)} holds {m.mountpoint}")
    for area in parse_proc_swaps(swaps if swaps is not None else _read("/proc/swaps")):
        for dev in family:
            if area.startswith("/dev/") and _names_of_source(area, sysfs_root) == {dev}:
                reasons.append(f"{who(dev)} is active swap")
    for dev in family:
        held = [h for h in sysfs.holders(dev, sysfs_root=sysfs_root) if h.split(" ")[0] not in ignore_holders]
        if held:
            reasons.append(f"{who(dev)} is held by {', '.join(held)} (device-mapper, LVM, md or bcache)")
    return list(dict.fromkeys(reasons))


def alias_reasons(
    name: str,
    *,
    sysfs_root: str = "/sys",
    mountinfo: str | None = None,
    swaps: str | None = None,
    probe_exclusive: bool = True,
) -> list[str]:
    """Why the storage behind block device ``name`` is in use under another name.

    Every alias (:func:`diskq.probe.aliases.aliases`: loop devices over the same file, a loop
    device and the device under it, paths of one multipath LUN) is judged like the target: its
    mounts, swap, holders (other than the target and its aliases, as a multipath map holds its
    paths) and, when nothing holds it, whether it can be opened with ``O_EXCL``. Each reason
    says how the alias and the target are one storage.
    """
    found = aliases(name, sysfs_root=sysfs_root)
    group = {name, *(a.name for a in found)}
    reasons: list[str] = []
    for alias in found:
        family = [alias.name, *sysfs.partitions(alias.name, sysfs_root=sysfs_root)]

        def who(dev: str, alias=alias) -> str:
            return f"/dev/{dev}" if dev == alias.name else f"/dev/{dev} (a partition of /dev/{alias.name})"

        mine = _family_reasons(family, who, sysfs_root, mountinfo, swaps, ignore_holders=group)
        node = f"/dev/{alias.name}"
        if (
            not mine
            and probe_exclusive
            and not sysfs.holders(alias.name, sysfs_root=sysfs_root)
            and os.path.exists(node)
        ):
            busy = _exclusive_open_error(node)
            if busy:
                mine.append(busy)
        reasons += [f"{why}; {alias.why}, one storage under two names" for why in mine]
    return reasons


def exclusive_aliases(name: str, *, sysfs_root: str = "/sys") -> list[str]:
    """Device nodes of the aliases of ``name`` that a bench can claim with ``O_EXCL`` alongside
    the target (those nothing holds), so that none of them is mounted while it runs."""
    return [
        f"/dev/{a.name}"
        for a in aliases(name, sysfs_root=sysfs_root)
        if not sysfs.holders(a.name, sysfs_root=sysfs_root) and os.path.exists(f"/dev/{a.name}")
    ]


def _open_exclusive(path: str) -> tuple[int | None, str | None]:
    """(descriptor, None) when ``path`` could be opened with ``O_EXCL``, else (None, why)."""
    try:
        return os.open(path, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC), None
    except OSError as exc:
        if exc.errno == errno.EBUSY:
            return None, f"{path} cannot be opened exclusively (O_EXCL): the kernel or another program is using it"
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise TargetError(f"no permission to open {path}", hint="run diskq as root") from None
        return None, f"{path} cannot be opened exclusively: {exc.strerror}"


def _exclusive_open_error(path: str) -> str | None:
    fd, why = _open_exclusive(path)
    if fd is not None:
        os.close(fd)
    return why


def backing_file_reasons(name: str, *, sysfs_root: str = "/sys") -> list[str]:
    """Why block device ``name`` writes a file that another process writes too: for the loop
    device it is (or is a partition of) and every loop device among its aliases, each process
    that holds the loop's backing file open for writing (a database file, a VM image). The loop
    driver's own use of the file goes through no descriptor and does not count."""
    reasons = []
    loops = [sysfs.disk_name(name, sysfs_root=sysfs_root), *(a.name for a in aliases(name, sysfs_root=sysfs_root))]
    for loop in dict.fromkeys(loops):
        backing = loop_backing(loop, sysfs_root=sysfs_root)
        if backing is None or backing[1][0] != "file":
            continue
        path, (_, key) = backing
        for writer in file_open_for_writing(key):  # type: ignore[arg-type]
            reasons.append(f"/dev/{loop} writes the file {path}, which {writer} has open for writing")
    return reasons
