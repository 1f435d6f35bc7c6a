"""What a finding means for the operator: spillover read against RocksDB's level sizes, the
fix per Ceph release, and caveats for devices whose commit latency is not the drive's own
(bcache, dm-crypt, RAID controllers, virtual disks). Pure functions of figures and names.

**Levels.** RocksDB keeps its data in levels L1, L2, ... each ``multiplier`` times the one
before, from ``max_bytes_for_level_base`` (both in ``bluestore_rocksdb_options``). BlueFS with
``bluestore_volume_selection_policy=rocksdb_original`` (and every release before the option
existed) places a level on the DB device only when that level and all below it fit there, so a
DB device holds L1..Lk and the next level goes to the slow device whole, however much of the
DB is free. With RocksDB's own base of 256 MiB and multiplier 10, L1..L3 take 28.4 GiB: a
20 GB DB holds L1+L2 (2.8 GiB), and L3 (25.6 GiB) spills. With 1 GiB and 8 (the base and
multiplier of Ceph's ``bluestore_rocksdb_options`` in recent releases) L1+L2 take 9 GiB and L3
64 GiB. L0 (recently flushed memtables) and the WAL come on top.

>>> [round(x / 2**30, 2) for x in levels(256 * 2**20, 10, 4)]
[0.25, 2.5, 25.0, 250.0]
>>> fits(20 * 10**9, 256 * 2**20, 10)
(2, 2952790016)
"""

from __future__ import annotations

import re

#: RocksDB's own level base and multiplier (what BlueStore used where its options set neither).
ROCKSDB_DEFAULT = (256 * 2**20, 10)
#: A DB this full is full, whatever the levels say.
FULL_SHARE = 0.9


def levels(base: int, multiplier: float, n: int = 6) -> list[int]:
    """Target sizes of L1..Ln."""
    return [int(base * multiplier**i) for i in range(n)]


def fits(db_bytes: int, base: int, multiplier: float) -> tuple[int, int]:
    """How many levels (L1..Lk) fit whole on a DB of ``db_bytes``, and their total."""
    total, k = 0, 0
    for size in levels(base, multiplier, 8):
        if total + size > db_bytes:
            break
        total, k = total + size, k + 1
    return k, total


def rocksdb_levels(options: str | None) -> tuple[int, float, str] | None:
    """``max_bytes_for_level_base`` and ``max_bytes_for_level_multiplier`` of a
    ``bluestore_rocksdb_options`` string, and where they came from; None when it sets neither.

    >>> rocksdb_levels("compression=kLZ4Compression,max_bytes_for_level_base=1073741824,max_bytes_for_level_multiplier=8")
    (1073741824, 8.0, 'bluestore_rocksdb_options')
    """
    if not options:
        return None
    base = re.search(r"max_bytes_for_level_base=(\d+)", options)
    mult = re.search(r"max_bytes_for_level_multiplier=([\d.]+)", options)
    if not base and not mult:
        return None
    return (
        int(base.group(1)) if base else ROCKSDB_DEFAULT[0],
        float(mult.group(1)) if mult else ROCKSDB_DEFAULT[1],
        "bluestore_rocksdb_options",
    )


def _gib(n: float) -> str:
    return f"{n / 2**30:,.1f} GiB"


def _size(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB" if n < 2**30 else f"{n / 2**30:,.4g} GiB"


def spillover(
    osd: int,
    spilled: int | None,
    used: int | None,
    total: int | None,
    major: int | None,
    rocks: tuple[int, float, str] | None,
    policy: str | None,
) -> tuple[str, list[str], list[str]]:
    """Why ``osd`` spilled and what to do, for its release: (cause, fixes, config lines).

    ``rocks`` is the OSD's level base and multiplier where its options are known; without them
    both RocksDB's defaults and Ceph's recent ones are given, and the reader is told which to check.
    """
    fixes: list[str] = []
    config: list[str] = []
    full = bool(total and used is not None and used >= FULL_SHARE * total)
    if full:
        cause = (
            f"the DB is full ({_gib(used)} used of {_gib(total)}): RocksDB has outgrown it, so new data goes "
            "to the slow device"
        )
    elif total:
        readings = (
            [rocks]
            if rocks
            else [(*ROCKSDB_DEFAULT, "RocksDB's defaults"), (2**30, 8.0, "Ceph's recent bluestore_rocksdb_options")]
        )
        parts = []
        for base, mult, where in readings:
            k, held = fits(total, base, mult)
            nxt = levels(base, mult, k + 1)[-1]
            parts.append(
                f"with levels from {_size(base)} x{mult:g} ({where}) it holds L1..L{k} ({_gib(held)}) and "
                f"L{k + 1} ({_gib(nxt)}) goes to the slow device whole"
            )
        used_txt = f"{_gib(used)} of {_gib(total)} used" if used is not None else f"a DB of {_gib(total)}"
        cause = (
            f"RocksDB's level sizing, not a full DB ({used_txt}): "
            + "; ".join(parts)
            + ("" if rocks else f"; `ceph config show osd.{osd:d} bluestore_rocksdb_options` says which applies")
        )
    else:
        cause = "the DB size is not known here, so full DB and level sizing cannot be told apart"
    # a full DB has no spare space for use_some_extra to give: only a larger DB holds more
    if not full and policy in (None, "rocksdb_original") and (major is None or major >= 15):
        fixes.append(
            "let BlueFS use the DB's spare space for a level that does not fit: "
            "bluestore_volume_selection_policy=use_some_extra (Octopus and later, and late Nautilus point "
            "releases: `ceph config help bluestore_volume_selection_policy` says whether yours has it; "
            "fit_to_fast, where listed, fills the DB first whatever the level), then restart the OSD"
        )
        config.append(f"ceph config set osd.{osd} bluestore_volume_selection_policy use_some_extra")
    elif not full and policy:
        fixes.append(f"bluestore_volume_selection_policy is already {policy}: the DB itself is too small")
    if major is None or major >= 14:
        fixes.append(
            f"compact RocksDB (`ceph tell osd.{osd} compact`; `ceph daemon osd.{osd} compact` on the OSD's "
            "host before Octopus): compaction moves data back to the DB device where it fits"
        )
        fixes.append(
            "grow the DB volume to hold the next level (with room for L0 and the WAL), then, with the OSD "
            f"stopped, `ceph-bluestore-tool bluefs-bdev-expand --path /var/lib/ceph/osd/ceph-{osd}` and "
            f"`ceph-bluestore-tool bluefs-bdev-migrate --path /var/lib/ceph/osd/ceph-{osd} --devs-source "
            f"/var/lib/ceph/osd/ceph-{osd}/block --dev-target /var/lib/ceph/osd/ceph-{osd}/block.db` to move "
            "what spilled back"
        )
    else:
        fixes.append(
            "before Nautilus BlueFS cannot move data between devices: redeploy the OSD with a DB that holds "
            "the next level"
        )
    return cause, fixes, config


_RAID = re.compile(r"PERC|MegaRAID|LOGICAL[ _]VOLUME|ServeRAID|Smart[ _]Array|\bRAID\b|\bMR\d{4}|AVAGO|\bLSI\b", re.I)
_VIRTUAL = re.compile(r"QEMU|VBOX|VMware|Virtual[ _]Disk|Msft|Amazon[ _]Elastic|PersistentDisk|Xen|virtio", re.I)


def caveats(
    role: str, names: list[str], model: str | None, rotational: bool | None, encrypted: bool | None = None
) -> list[dict]:
    """Why the commit latency of a device need not be its drive's own: one ``{"kind", "device",
    "text"}`` each (``text`` is the same for every device of a kind, so the report can group).

    >>> [c["kind"] for c in caveats("data", ["sdc"], "QEMU HARDDISK", True)]
    ['virtual', 'virtual_rotational']
    """
    where = f"{role} {','.join(names) or '?'}" + (f" ({model})" if model else "")
    out = []

    def add(kind: str, text: str) -> None:
        out.append({"kind": kind, "device": where, "text": text})

    if any(n.startswith("bcache") for n in names):
        add(
            "bcache",
            "a bcache device: commits land on the cache SSD in writeback mode, on the backing disk in "
            "writethrough or when the cache bypasses the write; Ceph names neither drive, so none is looked up "
            "(/sys/block/bcacheN/bcache/cache_mode says which mode)",
        )
    if encrypted:
        add(
            "dm-crypt",
            "encrypted (dm-crypt): each commit also passes the crypt layer, so the drive's measured "
            "figures are a lower bound for the OSD's",
        )
    if model and _RAID.search(model):
        add(
            "raid",
            "a RAID controller's virtual drive: the controller's cache and its battery or flash backing "
            "decide commit latency, and the drives behind it are not named",
        )
    elif model and _VIRTUAL.search(model) or any(re.fullmatch(r"x?vd[a-z]+", n) for n in names):
        add(
            "virtual",
            "a virtual disk: the hypervisor's storage decides commit latency; no drive in the database describes it",
        )
        if rotational:
            add(
                "virtual_rotational",
                "a virtual disk flagged rotational, as hypervisors flag them by default: the "
                "device class and mClock's HDD capacity follow the flag, not the media",
            )
    return out
