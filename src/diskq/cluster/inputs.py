"""What a cluster reports, read from a directory of saved outputs or collected through ``ceph``.

A directory may hold any of these. Each file is recognised by what it holds, not by its name,
except that a perf dump, bench or config show names its OSD in the file name
(``perf-dump.osd.12.json``) and a per-host output names its host after ``inventory.``,
``lvm-list.`` or ``disk-list.`` (``ceph-volume-lvm-list.osd-01.json``):

=============================================  ==========================================
command                                         what diskq reads from it
=============================================  ==========================================
``ceph osd metadata -f json``                   every OSD's devices (or ``ceph report``)
``ceph tell osd.N perf dump``                   BlueFS usage, kv commit latencies of osd.N
                                                (FileStore: journal latencies)
``ceph osd df -f json``                         device class and up/down of every OSD
``ceph config dump -f json``                    mClock capacities (the plain table too)
``ceph daemon osd.N config show``               options in force on osd.N (op queue)
``ceph device ls -f json``                      wear level of each device
``ceph-volume inventory --format json``         the whole DB drive's size (one file per host)
``ceph health detail`` (text or ``-f json``)    every health check, by name
``ceph osd perf`` (text or ``-f json``)         commit latency of each OSD against its class
``ceph-volume lvm list`` (text or JSON)         each OSD's [block]/[db]/[wal]/[journal] device
``ceph-disk list`` (text or JSON)               the same for Jewel and Luminous OSDs
``ceph-volume lvm batch --report``              a plan: DB volumes per device, their sizes
``ceph tell osd.N bench``                       the IOPS mClock's capacity is measured with
=============================================  ==========================================

:func:`diskq.cluster.collect.collect` runs the cluster-wide ones (read-only commands) and saves
them under the names above; :func:`read_dir` reads such a directory. Nothing is fatal but a directory with nothing
usable: every file that could not be used is named in :attr:`Inputs.problems`, with what it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from diskq import boundedjson
from diskq.cluster import checks as hc
from diskq.cluster import config as cfg
from diskq.cluster import health, parse, volumes
from diskq.cluster.judge import counted
from diskq.cluster.perf import OsdPerfRow, PerfDump, osd_perf, perf_dump
from diskq.errors import DiskqError, InvalidInput
from diskq.files import UnreadableFile, read_regular

#: The largest file read (a ``ceph report`` of a 300-OSD cluster is about 2.3 MB).
MAX_FILE_BYTES = 64 * 1024 * 1024
#: The most OSDs one output may list: more than the largest clusters run (bounds the cost of
#: reading a file of millions of tiny entries: :mod:`diskq.boundedjson` bounds its decoding).
MAX_OSDS = 50_000
#: the ``format`` of the file :func:`diskq.cluster.collect.collect` saves what it could not get in
COLLECT_FORMAT = "diskq-cluster-collect"
_OSD_IN_NAME = re.compile(r"osd[._-]?(\d+)", re.IGNORECASE)


@dataclass
class Inputs:
    source: str
    osds: list[parse.OsdMeta] | None = None
    perf: dict[int, PerfDump] = field(default_factory=dict)
    perf_unnamed: dict[str, PerfDump] = field(default_factory=dict)  #: file -> a perf dump of no known OSD
    df: dict[int, parse.DfRow] | None = None
    config: list[cfg.ConfigEntry] | None = None
    config_show: dict[int, dict[str, str]] = field(default_factory=dict)
    devices: list[health.DeviceHealth] | None = None
    inventory: dict[str, list[parse.InventoryDevice]] = field(default_factory=dict)
    checks: list[hc.Check] | None = None  #: of ceph health detail, ceph status or ceph report
    checks_from: str | None = None  #: the file they were read from ("report" for a ceph report's)
    osd_perf: dict[int, OsdPerfRow] | None = None
    volumes: dict[str, list[volumes.OsdVolumes]] = field(default_factory=dict)  #: host -> lvm list / ceph-disk list
    batch: dict[str, list[volumes.PlannedOsd]] = field(default_factory=dict)  #: file -> lvm batch --report
    bench: dict[int, float] = field(default_factory=dict)
    version: str | None = None  #: of the cluster, from ceph report
    read: list[str] = field(default_factory=list)  #: "file: what it was read as"
    problems: list[str] = field(default_factory=list)  #: files not used, and why

    @property
    def empty(self) -> bool:
        return not (
            self.osds
            or self.perf
            or self.perf_unnamed
            or self.df
            or self.config
            or self.checks is not None
            or self.bench
            or self.osd_perf
            or self.volumes
            or self.batch
        )


def osd_of(name: str) -> int | None:
    """The OSD a file name names: ``perf-dump.osd.12.json`` -> 12, ``perf-dump-osd.json`` -> None."""
    m = _OSD_IN_NAME.search(name)
    return int(m.group(1)) if m else None


def _kind(name: str, data) -> str | None:
    """What a decoded output is, from its shape (and, for an empty list, its name)."""
    low = name.lower()
    if isinstance(data, str):
        if re.search(r"^WHO\s+.*OPTION", data, re.M):
            return "config"
        if re.search(r"^\s*ID\s+CLASS\s", data, re.M):
            return "df"
        if re.search(r"^\s*osd\s+(fs_)?commit_latency\(ms\)", data, re.M):
            return "osd_perf"
        if re.search(r"^\s*=+ osd\.\d+ =+", data, re.M):
            return "lvm_list"
        if re.search(r"^\s*/dev/\S+ ceph data, ", data, re.M):
            return "ceph_disk"
        if re.search(r"^\s*Total OSDs: \d+", data, re.M):
            return "batch"
        if hc.checks(data) is not None:
            return "health"
        return None
    if isinstance(data, dict):
        if data.get("format") == COLLECT_FORMAT:
            return "collect"
        if isinstance(data.get("osd_metadata"), list):
            return "report"
        if "id" in data and ("osd_objectstore" in data or "hostname" in data):
            return "metadata"
        if isinstance(data.get("nodes"), list) and "summary" in data:
            return "df"
        if isinstance(data.get("checks"), dict) or (
            isinstance(data.get("health"), dict) and isinstance(data["health"].get("checks"), dict)
        ):
            return "health"
        if "iops" in data and "blocksize" in data:
            return "bench"
        if "osd_op_queue" in data:
            return "config_show"
        if any(isinstance(data.get(k), dict) for k in ("bluefs", "bluestore", "filestore")) and isinstance(
            data.get("osd"), dict
        ):
            return "perf"
        if isinstance(data.get("osd_perf_infos"), list) or (
            isinstance(data.get("osdstats"), dict) and isinstance(data["osdstats"].get("osd_perf_infos"), list)
        ):
            return "osd_perf"
        if data and all(str(k).isdigit() and isinstance(v, list) for k, v in data.items()):
            return "lvm_list"
        if isinstance(data.get("osds"), list) and ("vgs" in data or "changed" in data):
            return "batch"
        return None
    if isinstance(data, list):
        first = next((x for x in data if isinstance(x, dict)), None)
        if first is None:
            return "devices" if "device" in low and "ls" in low else None
        if "osd_objectstore" in first or ("id" in first and "hostname" in first):
            return "metadata"
        if "section" in first and "name" in first:
            return "config"
        if "devid" in first:
            return "devices"
        if "path" in first and "sys_api" in first:
            return "inventory"
        if "partitions" in first and "path" in first:
            return "ceph_disk"
        if "data" in first and ("block_db" in first or "data_size" in first):
            return "batch"
    return None


#: Outputs diskq cluster recognises and does not read, and why (first match wins).
_KNOWN_TEXT = (
    (
        r"^\s*cluster:\s*$.*^\s*health:",
        "the text of `ceph status`: its health lines carry no check names; save "
        "`ceph health detail` (or -f json) instead",
    ),
    (
        r"Health check (failed|update|cleared)",
        "a cluster log (ceph.log): it says what happened, not what holds now; save `ceph health detail`",
    ),
    (r"^\s*ID\s+WEIGHT\s+TYPE NAME", "`ceph osd tree` of a release before Luminous (no device class)"),
    (r"^\s*(RAW STORAGE|GLOBAL):", "`ceph df`: pool usage, nothing about the commit path"),
    (r"^\s*(osdmap e\d+: )?\d+ osds: \d+ up", "`ceph osd stat`: counts only"),
    (r"^\s*NAME\s+MAJ:MIN", "`lsblk`: no OSD ids; `ceph osd metadata` says which device each OSD uses"),
    (r"smartctl \d", "`smartctl` output: give it to `diskq probe`, not `diskq cluster`"),
    (r"^\s*(HOST:DEV|DEVICE\s+HOST:DEV)", "the text of `ceph device ls`: save `ceph device ls -f json`"),
    (r"^\s*\{?\s*\"?mon\"?\s*:.*ceph version", "`ceph versions`: versions only"),
)


def describe(name: str, data) -> str:
    """What a file diskq cluster does not read is, as far as its content tells."""
    if isinstance(data, str):
        for pattern, what in _KNOWN_TEXT:
            if re.search(pattern, data, re.M | re.S):
                logged = hc.cluster_log_checks(data) if "cluster log" in what else []
                return what + (f" (checks named in it: {', '.join(logged)})" if logged else "")
        first = next((ln.strip() for ln in data.splitlines() if ln.strip()), "")
        return f"text diskq cluster does not read (it begins {first[:60]!r})" if first else "an empty file"
    if isinstance(data, dict):
        if "overall_status" in data or (isinstance(data.get("summary"), list) and "checks" not in data):
            return "`ceph health` of a release before Luminous: its checks have no names, so none can be judged"
        if {"mon", "osd"} <= set(data) and all(isinstance(v, dict) for v in data.values()):
            return "`ceph versions`: versions only"
        if isinstance(data.get("pg_map"), dict) or "pg_stats" in data:
            return "`ceph pg dump`: placement groups, nothing about the commit path"
        if isinstance(data.get("osds"), list) and "epoch" in data:
            return "`ceph osd dump`: no devices; save `ceph osd metadata -f json`"
        if isinstance(data.get("stats"), dict) and isinstance(data.get("pools"), list):
            return "`ceph df -f json`: pool usage, nothing about the commit path"
        return f"a JSON object diskq cluster does not read (keys {', '.join(list(data)[:5])})"
    if isinstance(data, list):
        return "an empty JSON list" if not data else f"a JSON list diskq cluster does not read ({len(data)} items)"
    return "JSON diskq cluster does not read"


def _decode(path: Path) -> object:
    raw = read_regular(path, MAX_FILE_BYTES)
    text = raw.decode("utf-8")
    if path.suffix.lower() == ".json" or text.lstrip()[:1] in ("{", "["):
        return boundedjson.decode(text)  # no NaN, Infinity or 1e999; cost bounded before decoding
    return text


def _host_of(name: str) -> str:
    """The host in a per-host output's file name, after ``inventory.``, ``lvm-list.`` or
    ``disk-list.``.

    >>> _host_of("ceph-volume-inventory.osd-01.example.net.json"), _host_of("inventory.json")
    ('osd-01.example.net', 'unknown host')
    >>> _host_of("ceph-volume-lvm-list.compute4.txt"), _host_of("ceph-18095.excerpt.lvm-list.txt")
    ('compute4', 'unknown host')
    """
    m = re.search(r"(?:inventory|lvm-list|disk-list)\.(.+)$", Path(name).stem)
    return m.group(1) if m else "unknown host"


def read_dir(directory: Path) -> Inputs:
    """Read every ``*.json`` and ``*.txt`` file of ``directory`` (not below it)."""
    if not directory.is_dir():
        raise InvalidInput(
            f"{directory} is not a directory",
            hint="give the directory `diskq cluster collect` wrote, or saved `ceph` outputs",
        )
    inp = Inputs(source=str(directory))
    # JSON before the plain tables of the same command, then by name
    files = sorted(
        (p for p in directory.iterdir() if p.suffix.lower() in (".json", ".txt") and p.is_file()),
        key=lambda p: (p.suffix.lower() != ".json", p.name),
    )
    # a file of another name ("ceph_osd_perf.log", sosreport's "ceph_osd_df") is named, not read
    others = sorted(
        p.name
        for p in directory.iterdir()
        if p.is_file() and p.suffix.lower() not in (".json", ".txt") and not p.name.startswith(".")
    )
    if others:
        inp.problems.append(
            f"{', '.join(others[:5])}"
            + (f" and {len(others) - 5} more" if len(others) > 5 else "")
            + ": not read: diskq cluster reads .json and .txt files (save a ceph output under such a name)"
        )
    for path in files:
        try:
            data = _decode(path)
        except (UnreadableFile, UnicodeDecodeError, ValueError, RecursionError) as exc:
            inp.problems.append(f"{path.name}: not read: {getattr(exc, 'message', None) or exc}")
            continue
        kind = _kind(path.name, data)
        if kind is None:
            inp.problems.append(f"{path.name}: {describe(path.name, data)}; left aside")
            continue
        try:
            add(inp, kind, path.name, data)
        except DiskqError as exc:
            inp.problems.append(f"{path.name}: {exc.message}")
        except (
            TypeError,
            AttributeError,
            KeyError,
            ValueError,
            OverflowError,
        ) as exc:  # a shape no Ceph release prints
            inp.problems.append(f"{path.name}: looks like {kind} output but is not shaped like it ({exc}); not used")
    if not files or (inp.empty and not inp.read):
        what = (
            "no .json or .txt file" if not files else f"no output diskq cluster reads ({len(files)} files left aside)"
        )
        error = InvalidInput(
            f"{directory} holds {what}",
            hint="save `ceph osd metadata -f json` there, or run `diskq cluster collect DIR`",
        )
        error.reasons = inp.problems[:10]  # why each file was left aside, under the message
        raise error
    return inp


def add(inp: Inputs, kind: str, name: str, data) -> None:
    """Add one decoded output of ``kind`` to ``inp`` (a second one of a kind is named, not mixed)."""

    def once(attr: str, value) -> None:
        if getattr(inp, attr) is not None:
            inp.problems.append(f"{name}: another {kind} output was read first; this one is not used")
            return
        setattr(inp, attr, value)
        inp.read.append(f"{name}: {kind}")

    listed = data.get("osd_metadata") if kind == "report" else data if kind == "metadata" else None
    if isinstance(listed, list) and len(listed) > MAX_OSDS:
        raise InvalidInput(
            f"{len(listed):,} OSDs listed: more than {MAX_OSDS:,}, beyond any cluster read here; not used"
        )
    if kind == "report" or (kind == "metadata" and inp.osds is not None and isinstance(data, list)):
        osds = parse.osd_metadata(data)
        if inp.osds is not None and {o.osd for o in osds} == {o.osd for o in inp.osds}:
            inp.read.append(f"{name}: {kind} (the same OSDs as read already; not used again)")
        else:
            once("osds", osds)
        if kind == "metadata":
            return
        inp.version = inp.version or (data["version"] if isinstance(data.get("version"), str) else None)
        if inp.checks is None and (found := hc.checks(data)) is not None:
            inp.checks, inp.checks_from = found, "report"
    elif kind == "metadata":
        osds = parse.osd_metadata(data)
        if inp.osds is not None:  # ceph osd metadata N, one file per OSD
            known = {o.osd for o in inp.osds}
            inp.osds += [o for o in osds if o.osd not in known]
            inp.read.append(f"{name}: {kind}")
        else:
            once("osds", osds)
    elif kind in ("perf", "bench", "config_show"):
        osd = osd_of(name)
        target = {"perf": inp.perf, "bench": inp.bench, "config_show": inp.config_show}[kind]
        if osd is None and kind == "perf":
            inp.perf_unnamed[name] = perf_dump(data)
            inp.read.append(f"{name}: perf dump of an OSD its name does not give (name it e.g. perf-dump.osd.12.json)")
            return
        if osd is None:
            inp.problems.append(
                f"{name}: a {kind.replace('_', ' ')} output, but its name does not say which OSD "
                "(name it e.g. perf-dump.osd.12.json); not used"
            )
            return
        if osd in target:
            inp.problems.append(f"{name}: a second {kind} output of osd.{osd}; not used")
            return
        target[osd] = {"perf": perf_dump, "bench": cfg.osd_bench, "config_show": cfg.config_show}[kind](data)
        inp.read.append(f"{name}: {kind.replace('_', ' ')} of osd.{osd}")
    elif kind == "df":
        once("df", parse.osd_df(data))
    elif kind == "config":
        once("config", cfg.config_dump(data))
    elif kind == "devices":
        once("devices", health.device_ls(data))
    elif kind == "inventory":
        host = _host_of(name)
        inp.inventory[host] = parse.inventory(data)
        inp.read.append(f"{name}: ceph-volume inventory of {host}")
    elif kind == "health":
        if inp.checks is not None and inp.checks_from == "report":
            inp.checks = None  # a health detail of its own is more to the point than a report's copy
        once("checks", hc.checks(data))
        if inp.read and inp.read[-1] == f"{name}: {kind}":
            inp.checks_from = name
    elif kind == "osd_perf":
        once("osd_perf", osd_perf(data))
    elif kind in ("lvm_list", "ceph_disk"):
        host = _host_of(name)
        found = volumes.lvm_list(data) if kind == "lvm_list" else volumes.ceph_disk_list(data)
        inp.volumes.setdefault(host, []).extend(found)
        what = "ceph-volume lvm list" if kind == "lvm_list" else "ceph-disk list"
        inp.read.append(f"{name}: {what} of {host} ({counted(len(found), 'OSD')})")
    elif kind == "batch":
        inp.batch[name] = volumes.batch_report(data)
        inp.read.append(f"{name}: ceph-volume lvm batch --report (a plan: {counted(len(inp.batch[name]), 'OSD')})")
    elif kind == "collect":
        inp.problems += [f"collection: {e}" for e in data.get("errors") or [] if isinstance(e, str)]
        inp.read.append(f"{name}: what the collection could not get")
