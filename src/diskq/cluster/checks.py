"""Health checks of ``ceph health detail`` read by their names, in text and in JSON. Pure.

Every release since Luminous names each check (``BLUEFS_SPILLOVER``, ``SLOW_OPS``, ...), gives
it a one-line summary and, for most checks, one detail line per daemon or device. The text
layouts differ by release; the JSON (``-f json``, the ``health`` of ``ceph status -f json`` and
of ``ceph report``) has the same fields in every release from Luminous on::

    HEALTH_WARN BlueFS spillover detected on 1 OSD(s)                   (Nautilus 14.2)
    BLUEFS_SPILLOVER BlueFS spillover detected on 1 OSD(s)
         osd.0 spilled over 3 MiB metadata from 'db' device (27 GiB used of 30 GiB) to slow device

    HEALTH_WARN 5 OSD(s) experiencing slow operations in BlueStore     (Octopus and later)
    [WRN] BLUESTORE_SLOW_OP_ALERT: 5 OSD(s) experiencing slow operations in BlueStore
         osd.2  observed slow operation indications in BlueStore

Each detail line is read for the OSDs, hosts and devices it names (:func:`subjects`); which
checks bear on the commit path, and what each means there, is :data:`COMMIT_PATH`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: Checks that bear on the commit path (the device RocksDB commits to, and BlueFS on it):
#: name -> (rule, what it says about the commit path). A name ending in ``*`` is a prefix.
COMMIT_PATH = {
    "BLUEFS_SPILLOVER": ("spillover", "RocksDB data lives on the slow device"),
    "BLUESTORE_SLOW_OP_ALERT": (
        "bluestore_slow_ops",
        "BlueStore logged operations slower than "
        "bluestore_log_op_age, most often the commit (_txc_committed_kv) of a slow device",
    ),
    "SLOW_OPS": ("slow_ops", "client operations blocked longer than osd_op_complaint_time"),
    "BLUEFS_AVAILABLE_SPACE": ("bluefs_space", "BlueFS has little space left to grow"),
    "BLUEFS_LOW_SPACE": ("bluefs_space", "BlueFS is low on free space"),
    "BLUESTORE_BLUEFS_OVERSIZED": ("bluefs_space", "BlueFS uses more of the main device than its ratio"),
    "BLUESTORE_FRAGMENTATION": ("fragmentation", "free space is fragmented, which slows allocation"),
    "BLUESTORE_NO_PER_POOL_OMAP": ("omap_legacy", "legacy omap layout: a repair rewrites it (a long, I/O-heavy run)"),
    "BLUESTORE_NO_PER_PG_OMAP": ("omap_legacy", "legacy omap layout: a repair rewrites it (a long, I/O-heavy run)"),
    "BLUESTORE_LEGACY_STATFS": ("omap_legacy", "legacy statfs: a repair rewrites it"),
    "BLUESTORE_DISK_SIZE_MISMATCH": ("device_health", "the device size and BlueStore's free list disagree"),
    "BLUESTORE_SPURIOUS_READ_ERRORS": ("device_health", "reads had to be retried on the device"),
    "BLOCK_DEVICE_STALLED_READ_ALERT": ("device_health", "reads stalled on the main device"),
    "DB_DEVICE_STALLED_READ_ALERT": ("device_health", "reads stalled on the DB device"),
    "WAL_DEVICE_STALLED_READ_ALERT": ("device_health", "reads stalled on the WAL device"),
    "DEVICE_HEALTH*": ("device_health", "a drive is predicted to fail"),
    "OSD_SLOW_PING_TIME*": ("slow_ops", "heartbeats between OSDs are slow (network or an overloaded OSD)"),
}
_OSD = re.compile(r"\bosd[.:](\d+)\b")
_HOST_DEV = re.compile(r"\b([A-Za-z0-9][\w.-]*):((?:nvme\d+n\d+|sd[a-z]+|vd[a-z]+|xvd[a-z]+|dm-\d+|bcache\d+)\w*)\b")
_DEVID = re.compile(r"\b([A-Za-z0-9][\w.-]*_[\w.-]*[A-Za-z0-9])\b")
_HEAD = re.compile(r"^(?:\[(WRN|ERR|INF)\]\s+)?([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?::\s+|\s+)(\S.*)$")
_SEVERITY = {"WRN": "HEALTH_WARN", "ERR": "HEALTH_ERR", "INF": "HEALTH_INFO"}


@dataclass
class Check:
    """One health check: its name, severity, summary and detail lines."""

    name: str
    severity: str | None
    summary: str
    details: list[str] = field(default_factory=list)
    muted: bool = False

    @property
    def commit_path(self) -> tuple[str, str] | None:
        """(rule, meaning) where the check bears on the commit path, else None."""
        return commit_rule(self.name)


def commit_rule(name: str) -> tuple[str, str] | None:
    """The rule a check's name falls under on the commit path, and what it means there.

    >>> commit_rule("DEVICE_HEALTH_IN_USE")[0], commit_rule("MDS_DAMAGE")
    ('device_health', None)
    """
    if name in COMMIT_PATH:
        return COMMIT_PATH[name]
    return next((v for k, v in COMMIT_PATH.items() if k.endswith("*") and name.startswith(k[:-1])), None)


@dataclass
class Subjects:
    """What one line names: OSDs, hosts, kernel device names and Ceph device ids."""

    osds: list[int]
    hosts: list[str]
    devices: list[str]  #: ``host:dev`` as Ceph prints them
    device_ids: list[str]


def subjects(line: str) -> Subjects:
    """OSDs (``osd.12``, and ``osd:12`` of 14.0/14.1), ``host:dev`` pairs and device ids a line
    names.

    >>> s = subjects("Device SAMSUNG_MZ7KM480_S2HSNX0H (ceph-03:sdc) daemons osd.4,osd.5 life expectancy 2 weeks")
    >>> s.osds, s.hosts, s.devices, s.device_ids
    ([4, 5], ['ceph-03'], ['ceph-03:sdc'], ['SAMSUNG_MZ7KM480_S2HSNX0H'])
    """
    osds = sorted({int(m) for m in _OSD.findall(line)})
    pairs = [f"{h}:{d}" for h, d in _HOST_DEV.findall(line)]
    hosts = sorted({p.split(":")[0] for p in pairs})
    ids = [
        i
        for i in _DEVID.findall(line)
        if ":" not in i and re.search(r"\d", i) and not i.startswith(("osd_", "bluestore_", "bluefs_", "mon_", "bdev_"))
    ]
    return Subjects(osds, hosts, pairs, ids)


def checks(data) -> list[Check] | None:
    """The checks of ``ceph health detail`` (text or JSON), of ``ceph status -f json`` or of a
    ``ceph report``; None when ``data`` holds no health of a release that names its checks.

    >>> [c.name for c in checks("HEALTH_WARN 1 slow ops\\n[WRN] SLOW_OPS: 1 slow ops, oldest one blocked for 31 sec, osd.13 has slow ops\\n")]
    ['SLOW_OPS']
    >>> checks("HEALTH_OK\\n")
    []
    """
    if isinstance(data, dict):
        health = data.get("health") if isinstance(data.get("health"), dict) else data
        raw = health.get("checks")
        if not isinstance(raw, dict):
            return None
        out = []
        for name, c in raw.items():
            if not isinstance(c, dict):
                continue
            summary = c.get("summary")
            text = str(summary.get("message", "")) if isinstance(summary, dict) else str(summary or "")
            detail = c.get("detail") if isinstance(c.get("detail"), list) else []
            lines = [str(d.get("message", "")) if isinstance(d, dict) else str(d) for d in detail]
            out.append(
                Check(
                    str(name),
                    str(c.get("severity") or "") or None,
                    text,
                    [ln for ln in lines if ln],
                    bool(c.get("muted")),
                )
            )
        return out
    return _text(str(data))


#: Detail lines that name their check when an excerpt holds them without its header.
_BARE = (
    ("BLUEFS_SPILLOVER", re.compile(r"osd[.:]\d+ spilled over ")),
    ("BLUESTORE_SLOW_OP_ALERT", re.compile(r"osd\.\d+\s+observed slow operation indications in BlueStore")),
)


def _text(text: str) -> list[Check] | None:
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if re.match(r"^\s*HEALTH_(OK|WARN|ERR)\b", ln)), None)
    if start is None:  # an excerpt: detail lines alone, each naming its check by its wording
        bare = [
            Check(name, None, "detail lines without their header", [ln.strip() for ln in lines if rx.search(ln)])
            for name, rx in _BARE
        ]
        return [c for c in bare if c.details] or None
    out: list[Check] = []
    for ln in lines[start + 1 :]:
        if not ln.strip():
            continue
        m = _HEAD.match(ln) if len(ln) - len(ln.lstrip()) <= 1 else None
        if m and not m.group(2).startswith("HEALTH_"):
            out.append(Check(m.group(2), _SEVERITY.get(m.group(1) or "", None), m.group(3).strip()))
        elif out:
            out[-1].details.append(ln.strip())
    return out


@dataclass
class Spill:
    """One BLUEFS_SPILLOVER detail line. ``used_bytes``/``total_bytes`` (of the DB device) are
    None in the wording of 14.0/14.1, which gives only the bytes on the slow device."""

    osd: int
    spilled_bytes: int
    used_bytes: int | None
    total_bytes: int | None
    line: str
    device: str = "db"


_SIZE = r"([\d.]+ ?(?:[KMGTPE]i?B|[KMGTPE]i?|[kK]B|B))"
_SPILLS = (
    # 14.2 and later: osd.76 spilled over 128 KiB metadata from 'db' device (56 GiB used of 60 GiB) to slow device
    re.compile(
        rf"osd[.:](\d+) spilled over {_SIZE} metadata from '(\w+)' device \({_SIZE} used of {_SIZE}\) to slow device"
    ),
    # 14.0 and 14.1: osd:50 spilled over to slow device: 1.3 GiB
    re.compile(rf"osd[.:](\d+) spilled over to slow device:? {_SIZE}"),
)
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40, "P": 2**50, "E": 2**60}


def size_bytes(text: str) -> int:
    """Ceph's printed sizes: ``128 KiB``, ``1.3 GiB``, ``3MiB``, ``0 B``, ``20 GB`` (read as
    GiB, as Ceph's byte_u_t means it).

    >>> size_bytes("1.3 GiB"), size_bytes("128 KiB"), size_bytes("0 B")
    (1395864371, 131072, 0)
    """
    m = re.fullmatch(r"([\d.]+) ?([KMGTPE]?)i?B?", text.strip(), re.IGNORECASE)
    if not m:
        raise ValueError(f"not a size: {text!r}")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def spills(check: Check) -> tuple[list[Spill], list[str]]:
    """The spillover lines of a BLUEFS_SPILLOVER check, in every release's wording, and the
    detail lines that are in none of them (returned, never dropped).

    >>> s, rest = spills(Check("BLUEFS_SPILLOVER", None, "", ["osd:0 spilled over to slow device: 3 MiB"]))
    >>> s[0].osd, s[0].spilled_bytes, s[0].used_bytes, rest
    (0, 3145728, None, [])
    """
    out, rest = [], []
    for ln in check.details:
        m = _SPILLS[0].search(ln)
        if m:
            out.append(
                Spill(
                    int(m.group(1)),
                    size_bytes(m.group(2)),
                    size_bytes(m.group(4)),
                    size_bytes(m.group(5)),
                    m.group(),
                    m.group(3),
                )
            )
            continue
        m = _SPILLS[1].search(ln)
        if m:
            out.append(Spill(int(m.group(1)), size_bytes(m.group(2)), None, None, m.group()))
            continue
        rest.append(ln)
    return out, rest


def cluster_log_checks(text: str) -> list[str]:
    """Check names a cluster log (``ceph.log``) mentions: ``Health check failed: ... (SLOW_OPS)``.
    A log says what happened, not what holds now, so it is named and not judged."""
    return sorted(set(re.findall(r"Health check (?:failed|update|cleared)[^\n]*\(([A-Z][A-Z0-9_]+)\)", text)))
