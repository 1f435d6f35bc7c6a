"""Scaling class and verdicts of a device, recomputed at build time with the current analysis.

Stored ``scaling``/``verdicts`` in submissions are not trusted: each device's median curves (and
the median no-fdatasync rate, for the flush check) are put into a result document and run
through :func:`diskq.analyse.annotate`. A cache state is safe when no submission's flush check
failed and the check on the medians does not fail either. The verdicts are made from the safe
states only (from all states when none is safe), so they rest on the same curve as the row.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from diskq.database.aggregate import CacheAggregate, DeviceAggregate, best_cache

#: Fixed timestamp of the synthetic median documents (the build must be deterministic).
EPOCH = datetime(2000, 1, 1, tzinfo=timezone.utc)


def _plain(value: Any) -> Any:
    if value is None:
        return None
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True)
    return value


def _median_run(cache: CacheAggregate):
    from diskq.result import Latency, Run

    points = []
    for c in cache.curve:
        sync = None
        if c.sync_mean_us is not None or c.sync_p99_us is not None:
            sync = Latency(mean=c.sync_mean_us, p99=c.sync_p99_us)
        points.append(_point(c.numjobs, c.iops.median, Latency(mean=c.lat_mean_us), sync))
    nosync = _point(1, cache.nosync_iops, Latency()) if cache.nosync_iops is not None else None
    return Run(write_cache=cache.write_cache, points=points, nosync=nosync)


def _point(numjobs: int, iops: float, lat, sync=None):
    from diskq.result import Point

    return Point(numjobs=numjobs, iops=iops, bw_bytes=iops * 4096, total_ios=0, runtime_ms=0, lat_us=lat,
                 sync_lat_us=sync)


def median_document(dev: DeviceAggregate, states: list[str]):
    """A result document holding the device's median curve for each of ``states``."""
    from diskq.result import Device, Method, ResultDocument

    return ResultDocument(
        created=EPOCH,
        device=Device(model=dev.model, vendor=dev.vendor, firmware=dev.firmware or None,
                      capacity_bytes=dev.capacity_bytes, protocol=dev.protocol, media=dev.media),
        method=Method(id=dev.method[0], version=dev.method[1]),
        runs=[_median_run(dev.caches[s]) for s in states],
    )


def analyse_device(dev: DeviceAggregate) -> None:
    """Fill scaling, safety, verdicts and the row's cache state (a note says why when impossible)."""
    if not dev.caches:
        return
    try:
        from diskq.analyse import annotate
    except ImportError:
        dev.notes.append("scaling and verdicts not computed: the analysis module is not available")
        return
    states = sorted(dev.caches)
    doc = annotate(median_document(dev, states))
    for run in doc.runs:
        cache = dev.caches[run.write_cache]
        cache.scaling = _plain(run.scaling)
        if run.flush_check is not None and run.flush_check.honest is False:
            cache.safe = False
    safe = [s for s in states if dev.caches[s].safe]
    if safe and safe != states:
        doc = annotate(median_document(dev, safe))
    dev.verdicts = _plain(doc.verdicts)
    best, notes = best_cache(dev.caches)
    chosen = ((dev.verdicts or {}).get("ceph_waldb") or {}).get("cache_state")
    dev.best = chosen if chosen in dev.caches else best
    dev.notes = [n for n in dev.notes if not n.startswith("no safe cache setting")] + notes


def verdict_columns(verdicts: dict | None) -> dict[str, Any]:
    """The table's verdict columns from the full verdicts: Ceph tier, OSDs per device, etcd
    pass/fail, commits per second of one PostgreSQL session."""
    v = verdicts or {}
    ceph = v.get("ceph_waldb") or {}
    osds = v.get("osds_per_device") or {}
    etcd = v.get("etcd") or {}
    pg = v.get("postgres_wal") or {}
    passes = etcd.get("passes")
    commits = pg.get("commits_per_s")
    return {
        "ceph_waldb": ceph.get("tier"),
        "osds_per_device": osds.get("n"),
        "etcd": None if passes is None else ("pass" if passes else "fail"),
        "postgres_wal": commits,
    }
