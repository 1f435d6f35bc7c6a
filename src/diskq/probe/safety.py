"""Is it safe to write to this target? Refuse anything in use; make existing data explicit.

Hard refusals (no option overrides them): the device, or one of its partitions, is mounted,
is active swap, has holders (device-mapper, LVM, md, bcache), cannot be opened with O_EXCL,
or carries ``/`` or ``/boot`` (also through LVM or md). Softer: any on-disk signature that
libblkid finds (partition table, filesystem, LVM PV, md superblock, Ceph BlueStore label, ZFS
label, swap) refuses unless ``force``; the refusal names each one. In file mode the backing
file of an attached loop device is refused like a device in use, and so is a file that another
process holds open for writing (``/proc/*/fd``), in file mode and as a loop device's backing
file. Other names for the same
storage (:mod:`diskq.probe.aliases`: loop devices over one file, a loop device and the device
under it, multipath paths) are judged with the target: if any is in use, the target is refused.

A partition's write cache is its whole disk's: while the rest of the disk is in use it is not
switched (:func:`partition_cache_mode`). Once the checks pass, :func:`claim_exclusive` keeps
an ``O_EXCL`` descriptor open until the bench ends, so nothing can claim the device meanwhile.

The parsers here are pure; the checks read ``/proc`` and sysfs and run ``wipefs --no-act``
(libblkid probing every known signature, writing nothing).
"""

from __future__ import annotations

import errno
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from diskq import proc
from diskq.errors import DiskqError, NotConfirmed, TargetError, UnsafeTarget
from diskq.probe import sysfs

IN_USE_HINT = (
    "diskq never writes to a device that is in use, not even with --force: unmount it, swapoff it "
    "or take it out of LVM/md first, or pick another device (`lsblk -f` shows what is on each)"
)
DATA_HINT = (
    "if nothing on it is wanted any more, add --force (with --yes) to overwrite it; "
    "otherwise pick an empty device, or bench a file on a filesystem instead"
)

#: libblkid type names and what an operator would call them.
_KINDS = {
    "gpt": "GPT partition table",
    "PMBR": "protective MBR (GPT)",
    "dos": "MBR partition table",
    "LVM2_member": "LVM physical volume",
    "linux_raid_member": "md RAID member superblock",
    "ceph_bluestore": "Ceph BlueStore OSD label",
    "zfs_member": "ZFS pool label",
    "swap": "swap signature",
    "crypto_LUKS": "LUKS encrypted volume",
    "bcache": "bcache superblock",
    "VMFS_volume_member": "VMware VMFS volume",
    "ddf_raid_member": "DDF RAID member",
    "isw_raid_member": "Intel RST RAID member",
}
_FILESYSTEMS = {"ext2", "ext3", "ext4", "xfs", "btrfs", "vfat", "ntfs", "exfat", "f2fs", "jfs", "reiserfs", "iso9660", "udf", "squashfs"}


@dataclass(frozen=True)
class Mount:
    devno: str  # "major:minor" as the kernel reports it (0:N for btrfs and other anonymous devices)
    mountpoint: str
    source: str


@dataclass(frozen=True)
class Signature:
    type: str
    offset: str
    label: str | None = None

    def describe(self) -> str:
        kind = _KINDS.get(self.type) or (f"{self.type} filesystem" if self.type in _FILESYSTEMS else f"{self.type} signature")
        label = f", label {self.label!r}" if self.label else ""
        return f"{kind} at offset {self.offset}{label}"


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


def parse_wipefs_json(text: str) -> list[Signature]:
    """``wipefs --no-act --json DEV`` -> signatures found by libblkid. Sample::

        {"signatures": [{"device": "loop0", "offset": "0x438", "type": "ext4",
                         "uuid": "2ceed6dd-...", "label": null}]}

    Empty output means no signature. Output that is not JSON raises :class:`TargetError`;
    entries of an unexpected shape (no ``type`` string) are skipped, never guessed at.
    """
    text = text.strip()
    if not text:
        return []
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, an absurd number, or absurdly deep nesting
        raise TargetError("wipefs printed no JSON", hint="run `wipefs --no-act` on the device to see what it says") from None
    entries = data.get("signatures") if isinstance(data, dict) else None
    found = []
    for sig in entries if isinstance(entries, list) else []:
        if not isinstance(sig, dict) or not isinstance(sig.get("type"), str) or not sig["type"]:
            continue
        offset = sig.get("offset")
        label = sig.get("label")
        found.append(
            Signature(
                sig["type"],
                str(offset) if isinstance(offset, (str, int)) and not isinstance(offset, bool) else "?",
                label if isinstance(label, str) and label else None,
            )
        )
    return found


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


def in_use_reasons(path: str, *, sysfs_root: str = "/sys", mountinfo: str | None = None, swaps: str | None = None) -> list[str]:
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
    name: str, *, sysfs_root: str = "/sys", mountinfo: str | None = None, swaps: str | None = None,
    probe_exclusive: bool = True,
) -> list[str]:
    """Why the storage behind block device ``name`` is in use under another name.

    Every alias (:func:`diskq.probe.aliases.aliases`: loop devices over the same file, a loop
    device and the device under it, paths of one multipath LUN) is judged like the target: its
    mounts, swap, holders (other than the target and its aliases, as a multipath map holds its
    paths) and, when nothing holds it, whether it can be opened with ``O_EXCL``. Each reason
    says how the alias and the target are one storage.
    """
    from diskq.probe.aliases import aliases

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
    from diskq.probe.aliases import aliases

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


class ExclusiveClaim:
    """An ``O_EXCL`` descriptor on a block device, held from the safety check to the end of the
    bench. While it is open the kernel refuses every other exclusive open (mount, mkfs, swapon,
    LVM, md, another diskq) with EBUSY; plain opens, such as fio's, still work. A claim on a
    whole disk also keeps every partition of it from being claimed.

        with claim_exclusive("/dev/sdb"):
            run_the_bench()
    """

    def __init__(self, path: str, fd: int, others: list[int] | None = None):
        self.path = path
        self._fd: int | None = fd
        self._others = list(others or [])

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Close the descriptors; idempotent."""
        fd, self._fd = self._fd, None
        others, self._others = self._others, []
        for each in [fd, *others]:
            if each is not None:
                os.close(each)

    def __enter__(self) -> "ExclusiveClaim":
        return self

    def __exit__(self, *exc) -> bool:
        self.release()
        return False


def claim_exclusive(path: str, *, target: str | None = None, also: list[str] | None = None) -> ExclusiveClaim:
    """Open ``path`` with ``O_EXCL`` and keep it open; :class:`UnsafeTarget` when it is in use.

    ``target`` is the partition being benched when ``path`` is its whole disk (claimed because
    the disk's write cache will be switched): a refusal then names the partition the user asked
    for, says that its disk is the one in use, and points at ``--cache keep``. ``also`` names
    other devices (the target's aliases, see :func:`exclusive_aliases`) claimed with it.
    """
    fd, why = _open_exclusive(path)
    if fd is not None and also:
        others: list[int] = []
        for node in also:
            other, busy = _open_exclusive(node)
            if other is None:
                for each in [fd, *others]:
                    os.close(each)
                raise UnsafeTarget(
                    f"refusing to write to {target or path}: the same storage is in use under another name",
                    [busy or f"{node} is busy"],
                    hint=IN_USE_HINT,
                )
            others.append(other)
        return ExclusiveClaim(path, fd, others)
    if fd is None:
        if target is not None and target != path:
            raise UnsafeTarget(
                f"refusing to switch the write cache for {target}: it belongs to the whole disk {path}, "
                "which is in use",
                [why or "busy"],
                hint="run with --cache keep to measure the partition with the cache as it is "
                "(only the partition is then claimed), or stop what uses the disk first",
            )
        raise UnsafeTarget(f"refusing to write to {path}: it is in use", [why or "busy"], hint=IN_USE_HINT)
    return ExclusiveClaim(path, fd)


def signatures(path: str) -> list[Signature]:
    """Every signature libblkid finds on ``path`` (``wipefs --no-act``: reads, never writes)."""
    done = proc.run(["wipefs", "--no-act", "--json", path], timeout=60)
    if not done.ok:
        raise TargetError(
            f"cannot probe {path} for existing data: {done.stderr.strip() or done.returncode}",
            hint=f"check the device with `wipefs --no-act {path}`",
        )
    try:
        return parse_wipefs_json(done.stdout)
    except TargetError as exc:
        raise TargetError(f"cannot probe {path} for existing data: {exc.message}", hint=exc.hint) from None


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
    if sysfs.read_attr(sysfs_root, f"{sysfs.device_dir(name, sysfs_root=sysfs_root).relative_to(sysfs_root)}/ro") == "1":
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
    from diskq.probe.aliases import loop_backing

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


def backing_file_reasons(name: str, *, sysfs_root: str = "/sys") -> list[str]:
    """Why block device ``name`` writes a file that another process writes too: for the loop
    device it is (or is a partition of) and every loop device among its aliases, each process
    that holds the loop's backing file open for writing (a database file, a VM image). The loop
    driver's own use of the file goes through no descriptor and does not count."""
    from diskq.probe.aliases import aliases, loop_backing
    from diskq.probe.writers import file_open_for_writing

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


def file_writer_reasons(path: str) -> list[str]:
    """Each other process that has the file ``path`` open for writing, as a reason."""
    from diskq.probe.writers import file_open_for_writing

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
