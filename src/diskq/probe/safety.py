"""Is it safe to write to this target? Refuse anything in use; make existing data explicit.

Hard refusals (no option overrides them): the device, or one of its partitions, is in use
(:mod:`diskq.probe.inuse`: mounted, active swap, held by device-mapper, LVM, md or bcache, busy
for O_EXCL, carrying ``/`` or ``/boot``, also through LVM or md, or under another name of the
same storage). Softer: any on-disk signature that libblkid finds (:mod:`diskq.probe.signatures`)
refuses unless ``force``; the refusal names each one. In file mode the backing file of an
attached loop device is refused like a device in use, and so is a file that another process
holds open for writing (``/proc/*/fd``).

Once the checks pass, :func:`diskq.probe.exclusive.claim_exclusive` keeps an ``O_EXCL`` descriptor
open until the bench ends, so nothing can claim the device meanwhile.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from diskq.errors import DiskqError, NotConfirmed, TargetError, UnsafeTarget
from diskq.probe import sysfs
from diskq.probe.aliases import loop_backing
from diskq.probe.inuse import (
    IN_USE_HINT,
    _exclusive_open_error,
    _read,
    alias_reasons,
    backing_file_reasons,
    in_use_reasons,
    parse_proc_swaps,
)
from diskq.probe.signatures import DATA_HINT, signatures
from diskq.probe.writers import file_open_for_writing


def check_block_device(path: str, *, force: bool, sysfs_root: str = "/sys") -> list[str]:
    """Refuse (UnsafeTarget) a device in use or, without ``force``, one that holds data.

    Returns notes when the device may be written (e.g. what ``force`` is about to overwrite).
    Raises TargetError when ``path`` is not a usable block device.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise TargetError(f"{path} does not exist", hint="`lsblk` lists the block devices") from None
    if not stat.S_ISBLK(st.st_mode):
        raise TargetError(
            f"{path} is not a block device",
            hint="for a test file on a filesystem use file mode with a regular file path",
        )
    name = sysfs.block_name(path, sysfs_root=sysfs_root)
    reasons = in_use_reasons(path, sysfs_root=sysfs_root)
    if not reasons:  # the specific reasons say more; O_EXCL catches users they do not know about
        busy = _exclusive_open_error(path)
        if busy:
            reasons.append(busy)
    reasons += alias_reasons(name, sysfs_root=sysfs_root)
    reasons += backing_file_reasons(name, sysfs_root=sysfs_root)
    if reasons:
        raise UnsafeTarget(f"refusing to write to {path}: it is in use", reasons, hint=IN_USE_HINT)
    if (
        sysfs.read_attr(sysfs_root, f"{sysfs.device_dir(name, sysfs_root=sysfs_root).relative_to(sysfs_root)}/ro")
        == "1"
    ):
        raise TargetError(f"{path} is read-only", hint="`blockdev --setrw` if it should be writable")

    notes: list[str] = []
    try:
        found = [s.describe() for s in signatures(path)]
    except DiskqError as exc:
        if not force:
            raise UnsafeTarget(
                f"refusing to write to {path}: cannot check it for existing data",
                [exc.message],
                hint="install util-linux (wipefs), or add --force if the device is known to be empty",
            ) from None
        notes.append(f"not checked for existing data: {exc.message}")
        found = []
    found += [f"kernel partition /dev/{p}" for p in sysfs.partitions(name, sysfs_root=sysfs_root)]
    if found and not force:
        raise UnsafeTarget(f"refusing to write to {path}: it holds data", found, hint=DATA_HINT)
    notes += [f"--force: will overwrite {what}" for what in found]
    if sysfs.is_partition(name, sysfs_root=sysfs_root):
        notes.append(f"{path} is a partition of /dev/{sysfs.disk_name(name, sysfs_root=sysfs_root)}")
    return notes


def loop_devices_backed_by(path: str, *, sysfs_root: str = "/sys") -> list[str]:
    """The attached loop devices whose backing file is ``path``, compared by device and inode
    (as ``LOOP_GET_STATUS64`` gives them), so links, bind mounts and a renamed file count."""
    try:
        st = os.stat(path)
    except OSError:
        return []
    found = []
    for entry in sorted(Path(sysfs_root, "block").glob("loop*")):
        backing = loop_backing(entry.name, sysfs_root=sysfs_root)
        if backing is not None and backing[1] == ("file", (st.st_dev, st.st_ino)):
            found.append(f"/dev/{entry.name}")
    return found


def file_writer_reasons(path: str) -> list[str]:
    """Each other process that has the file ``path`` open for writing, as a reason."""
    try:
        st = os.stat(path)
    except OSError:
        return []
    return [f"{path} is open for writing by {w}" for w in file_open_for_writing((st.st_dev, st.st_ino))]


def check_file_target(path: str, *, yes: bool, sysfs_root: str = "/sys") -> None:
    """Refuse a directory, a device node or other special file; refuse overwriting data without ``yes``.

    An active swap file and the backing file of an attached loop device are refused even with
    ``yes``. A missing file is fine if its directory exists (diskq creates it, and removes only
    what it created).
    """
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        if not p.parent.is_dir():
            raise TargetError(
                f"directory {p.parent} does not exist",
                hint=f"create it first (`mkdir -p {p.parent}`) or give a path in an existing directory",
            ) from None
        return
    if stat.S_ISDIR(st.st_mode):
        raise TargetError(f"{path} is a directory", hint=f"give a file path inside it, e.g. {p / 'diskq-test.bin'}")
    if stat.S_ISBLK(st.st_mode) or stat.S_ISCHR(st.st_mode):
        raise TargetError(
            f"{path} is a device node, not a file",
            hint="to qualify a device give the device itself to `diskq bench` (its safety checks apply)",
        )
    if not stat.S_ISREG(st.st_mode):
        raise TargetError(
            f"{path} is not a regular file",
            hint="give the path of a regular file (diskq creates a new one at --size), or a block device",
        )
    loops = loop_devices_backed_by(path, sysfs_root=sysfs_root)
    if loops:
        raise UnsafeTarget(
            f"refusing to write to {path}: it is the backing file of an attached loop device",
            [f"{path} backs {dev}" for dev in loops],
            hint=f"detach it first (`losetup -d {loops[0]}`) if nothing uses it, or give another file name",
        )
    writers = file_writer_reasons(path)
    if writers:
        raise UnsafeTarget(
            f"refusing to write to {path}: another process has it open for writing",
            writers,
            hint="a file some program writes (a database, a VM image) is in use: stop that program first, "
            "or give another file name",
        )
    real = os.path.realpath(p)
    if real in {os.path.realpath(a) for a in parse_proc_swaps(_read("/proc/swaps"))}:
        raise UnsafeTarget(f"refusing to write to {path}: it is an active swap file", hint="pick another file name")
    if st.st_size > 0 and not yes:
        raise NotConfirmed(
            f"{path} already exists and holds {st.st_size} bytes",
            hint="add --yes to overwrite it, or give a new file name",
        )
