"""Pure parsers of the performance counters a Ceph cluster prints: one OSD's ``perf dump``
(BlueFS usage, BlueStore commit latencies, FileStore journal latencies) and the mgr's
``osd perf``. Like :mod:`diskq.cluster.parse`: no I/O, no guessing of absent figures."""

from __future__ import annotations

from dataclasses import dataclass

from diskq.cluster.parse import int_or_none
from diskq.errors import InvalidInput

#: The BlueFS counters of ``perf dump`` read here (bytes).
BLUEFS_COUNTERS = (
    "db_total_bytes",
    "db_used_bytes",
    "wal_total_bytes",
    "wal_used_bytes",
    "slow_total_bytes",
    "slow_used_bytes",
    "bytes_written_slow",
    "max_bytes_slow",
)
#: The BlueStore commit latencies of ``perf dump`` read here.
KV_LATENCIES = ("kv_sync_lat", "kv_flush_lat", "kv_commit_lat")
#: A FileStore OSD's latencies (its commits go to the journal, not to BlueFS).
FILESTORE_LATENCIES = ("journal_latency", "commitcycle_latency", "apply_latency")


@dataclass
class Latency:
    """One latency counter of ``perf dump``: the average since the OSD started."""

    avg_s: float
    count: int


@dataclass
class PerfDump:
    """The counters of one OSD's ``perf dump`` that ``diskq cluster`` reads."""

    bluefs: dict[str, int]
    latencies: dict[str, Latency]
    missing: list[str]  #: counters this output does not hold (an older release, FileStore)
    store: str = "bluestore"  #: "filestore" when the dump has a filestore section and no bluefs


def perf_dump(data) -> PerfDump:
    """``ceph tell osd.N perf dump`` / ``ceph daemon osd.N perf dump``. A sample, cut from a
    busy flash OSD::

        {"bluefs": {"db_total_bytes": 30725969543168, "db_used_bytes": 214361964544,
                    "wal_total_bytes": 0, "slow_total_bytes": 0, "slow_used_bytes": 0, ...},
         "bluestore": {"kv_flush_lat": {"avgcount": 1409956451, "sum": 1194.855953228, "avgtime": 8.47e-07},
                       "kv_commit_lat": {"avgcount": 1409956451, "sum": 268308.09221206, "avgtime": 0.000190295},
                       "kv_sync_lat": {"avgcount": 1409956451, "sum": 269502.948165288, "avgtime": 0.000191142}, ...},
         ...}

    Averages are ``sum / avgcount`` (``avgtime`` is missing in older releases); a counter that
    never counted has no average.
    """
    if not isinstance(data, dict):
        raise InvalidInput("perf dump: expected a JSON object (ceph tell osd.N perf dump)")
    bluefs_in = data.get("bluefs") if isinstance(data.get("bluefs"), dict) else {}
    store = data.get("bluestore") if isinstance(data.get("bluestore"), dict) else {}
    if not bluefs_in and not store and isinstance(data.get("filestore"), dict):
        # FileStore: the journal takes the commits; there is no BlueFS to report as 0 of 0
        lat = {k: v for k in FILESTORE_LATENCIES if (v := _latency(data["filestore"].get(k))) is not None}
        return PerfDump({}, lat, [f"filestore.{k}" for k in FILESTORE_LATENCIES if k not in lat], "filestore")
    missing = []
    if not bluefs_in:
        missing.append("bluefs section (not a BlueStore OSD's dump)")
    bluefs = {}
    for key in BLUEFS_COUNTERS:
        value = bluefs_in.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            bluefs[key] = int(value)
        elif bluefs_in:
            missing.append(f"bluefs.{key}")
    latencies = {}
    for key in KV_LATENCIES:
        c = store.get(key)
        if isinstance(c, dict) and isinstance(c.get("avgcount"), int) and isinstance(c.get("sum"), (int, float)):
            if c["avgcount"] > 0:
                latencies[key] = Latency(float(c["sum"]) / c["avgcount"], int(c["avgcount"]))
            else:
                missing.append(f"bluestore.{key} (never counted)")
        else:
            missing.append(f"bluestore.{key}")
    return PerfDump(bluefs, latencies, missing)


def _latency(c) -> Latency | None:
    if (
        isinstance(c, dict)
        and isinstance(c.get("avgcount"), int)
        and c["avgcount"] > 0
        and isinstance(c.get("sum"), (int, float))
    ):
        return Latency(float(c["sum"]) / c["avgcount"], int(c["avgcount"]))
    return None


@dataclass
class OsdPerfRow:
    """One OSD of ``ceph osd perf``: the mgr's recent commit and apply latency (ms)."""

    osd: int
    commit_ms: float
    apply_ms: float | None


def osd_perf(data) -> dict[int, OsdPerfRow]:
    """``ceph osd perf`` (the table) or ``ceph osd perf -f json`` (``osdstats.osd_perf_infos``
    from Nautilus on, ``osd_perf_infos`` before). A sample (Pacific 16.2.9, Rook)::

        osd  commit_latency(ms)  apply_latency(ms)
          4                  17                 17
          0                 660                660

    Luminous names the columns ``fs_commit_latency(ms)`` and ``fs_apply_latency(ms)``. On
    BlueStore both columns hold the same commit figure.

    >>> osd_perf("osd  commit_latency(ms)  apply_latency(ms)\\n  4  17  17\\n  0  660  660\\n")[0].commit_ms
    660.0
    """
    if isinstance(data, dict):
        stats = data.get("osdstats") if isinstance(data.get("osdstats"), dict) else data
        infos = stats.get("osd_perf_infos")
        if not isinstance(infos, list):
            raise InvalidInput("osd perf: expected osd_perf_infos (ceph osd perf -f json)")
        out = {}
        for i in infos:
            p = i.get("perf_stats") if isinstance(i, dict) and isinstance(i.get("perf_stats"), dict) else None
            if (
                p is None
                or int_or_none(i.get("id")) is None
                or not isinstance(p.get("commit_latency_ms"), (int, float))
            ):
                continue
            apply = p.get("apply_latency_ms")
            out[int(i["id"])] = OsdPerfRow(
                int(i["id"]), float(p["commit_latency_ms"]), float(apply) if isinstance(apply, (int, float)) else None
            )
        return out
    lines = str(data).splitlines()
    head = next((ln.split() for ln in lines if ln.split()[:1] == ["osd"] and "commit_latency(ms)" in ln), None)
    if head is None:
        raise InvalidInput("osd perf: no header line `osd commit_latency(ms) apply_latency(ms)`")
    ci = next(i for i, h in enumerate(head) if h.endswith("commit_latency(ms)"))
    ai = next((i for i, h in enumerate(head) if h.endswith("apply_latency(ms)")), None)
    out = {}
    for ln in lines:
        tok = ln.split()
        if len(tok) != len(head) or int_or_none(tok[0]) is None:
            continue
        try:
            out[int(tok[0])] = OsdPerfRow(int(tok[0]), float(tok[ci]), float(tok[ai]) if ai is not None else None)
        except ValueError:
            continue
    return out
