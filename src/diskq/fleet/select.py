"""Which block devices of this host a fleet run qualifies, and what ``bench`` would say of each.

The operator names the candidates with an explicit selector: device paths (``/dev/disk/by-id/...``
or kernel names), a model pattern, a size range, rotational or not. Without a path, the
candidates are the host's whole physical disks (``/sys/block``, virtual devices such as loop,
zram, dm and md left out). Each candidate is then judged by exactly the checks ``diskq bench``
runs before it writes a byte (:func:`diskq.bench.planning.plan`: in use, mounted, held, signatures
without ``force``, fio missing, not root), so the playbook never decides on its own what is safe.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from diskq.errors import DiskqError, InvalidInput
from diskq.probe import sysfs


@dataclass(frozen=True)
class Selector:
    """What the operator asked for; every given criterion must hold."""

    paths: tuple[str, ...] = ()
    model: str | None = None  #: shell pattern, case and surrounding white space ignored
    min_bytes: int | None = None
    max_bytes: int | None = None
    rotational: bool | None = None

    def is_empty(self) -> bool:
        return (
            not self.paths
            and self.model is None
            and self.min_bytes is None
            and self.max_bytes is None
            and self.rotational is None
        )

    def matches(self, disk: Disk) -> list[str]:
        """Why ``disk`` is not selected (empty: it is)."""
        why = []
        if self.model is not None and not fnmatch.fnmatch(
            (disk.model or "").strip().lower(), self.model.strip().lower()
        ):
            why.append(f"model {disk.model or 'unknown'!r} does not match {self.model!r}")
        if self.min_bytes is not None and (disk.size_bytes or 0) < self.min_bytes:
            why.append(f"smaller than {self.min_bytes} bytes")
        if self.max_bytes is not None and (disk.size_bytes is None or disk.size_bytes > self.max_bytes):
            why.append(f"larger than {self.max_bytes} bytes")
        if self.rotational is not None and disk.rotational is not self.rotational:
            why.append("not rotational" if self.rotational else "rotational")
        return why


@dataclass
class Disk:
    """One block device as sysfs describes it."""

    path: str
    name: str
    model: str | None = None
    size_bytes: int | None = None
    rotational: bool | None = None


@dataclass
class Candidate:
    """A selected device and what ``bench`` would do with it."""

    path: str
    name: str
    model: str | None
    size_bytes: int | None
    rotational: bool | None
    decision: str  #: "bench" (would bench) or "refused"
    reasons: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def _disk(path: str, name: str, sysfs_root: str) -> Disk:
    """``name`` as sysfs describes it: a partition's size is its own, its model and rotational
    flag are its disk's."""
    base = sysfs.device_dir(name, sysfs_root=sysfs_root).relative_to(sysfs_root)
    disk = sysfs.disk_name(name, sysfs_root=sysfs_root)
    size = sysfs.read_int(sysfs_root, f"{base}/size")
    rot = sysfs.read_int(sysfs_root, f"block/{disk}/queue/rotational")
    model = sysfs.read_attr(sysfs_root, f"block/{disk}/device/model") or None
    return Disk(
        path=path,
        name=name,
        model=model,
        size_bytes=None if size is None else size * 512,
        rotational=None if rot is None else rot == 1,
    )


def describe(path: str, *, sysfs_root: str = "/sys") -> Disk:
    """A block device's kernel name, model, size and rotational flag (best effort)."""
    return _disk(path, sysfs.block_name(path, sysfs_root=sysfs_root), sysfs_root)


def physical_disks(*, sysfs_root: str = "/sys", dev_root: str = "/dev") -> list[Disk]:
    """The host's whole physical disks, in name order (empty ones, e.g. a card reader, left out)."""
    root = Path(sysfs_root, "block")
    names = sorted(e.name for e in root.iterdir()) if root.is_dir() else []
    disks = [_disk(os.path.join(dev_root, n), n, sysfs_root) for n in names if not sysfs.is_virtual(n)]
    return [d for d in disks if d.size_bytes]


def select(selector: Selector, *, sysfs_root: str = "/sys") -> tuple[list[Disk], list[Candidate]]:
    """The selected disks, and the named paths that are not usable block devices (refused)."""
    if selector.is_empty():
        raise InvalidInput(
            "name the devices to qualify: a fleet run never picks every disk by itself",
            hint="give --path (e.g. /dev/disk/by-id/...), --model, --min-size/--max-size or --rotational/--ssd",
        )
    bad: list[Candidate] = []
    if selector.paths:
        disks = []
        for path in selector.paths:
            try:
                disks.append(describe(path, sysfs_root=sysfs_root))
            except DiskqError as exc:
                bad.append(Candidate(path, os.path.basename(path), None, None, None, "refused", [exc.message]))
    else:
        disks = physical_disks(sysfs_root=sysfs_root)
    return [d for d in disks if not selector.matches(d)], bad


def judge(disk: Disk, *, force: bool) -> Candidate:
    """What ``diskq bench DISK --yes [--force]`` would do: the same checks, nothing written."""
    from diskq.bench import planning

    cand = Candidate(disk.path, disk.name, disk.model, disk.size_bytes, disk.rotational, "bench")
    if os.geteuid() != 0:
        cand.decision = "refused"
        cand.reasons = ["diskq bench needs root to write to a block device (run the play with become)"]
        return cand
    try:
        with planning.plan(disk.path, planning.BenchOptions(yes=True, force=force)) as plan:
            cand.reasons = list(plan.notes)
    except DiskqError as exc:
        cand.decision = "refused"
        cand.reasons = [exc.message, *getattr(exc, "reasons", [])]
    return cand


def candidates(selector: Selector, *, force: bool, sysfs_root: str = "/sys") -> list[Candidate]:
    """Every selected device with its decision, in the order the selector gave or name order."""
    disks, bad = select(selector, sysfs_root=sysfs_root)
    return [judge(d, force=force) for d in disks] + bad
