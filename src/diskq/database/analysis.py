"""Scaling class and verdicts of a device, recomputed at build time with the current analysis.

Stored ``scaling``/``verdicts`` in submissions are not trusted: each device's median curves (and
the median no-fdatasync rate, for the flush check) are put into a result document and run
through :func:`diskq.analyse.annotate`. A cache state is safe when no submission's flush check
failed and the check on the medians does not fail either. The verdicts are made from the safe
states only (from all states when none is safe), so they rest on the same curve as the row.
"""

from __future__ import annotations

import hashlib
import json
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


def _analyse(doc, states: list[str], safe_before: list[str]) -> dict:
    """Run the analysis on a median document: scaling per state, states whose flush check on
    the medians fails, and the verdicts over the states that remain safe."""
    from diskq.analyse import annotate, verdicts

    doc = annotate(doc)
    scaling = {r.write_cache: _plain(r.scaling) for r in doc.runs}
    unsafe = sorted(r.write_cache for r in doc.runs if r.flush_check is not None and r.flush_check.honest is False)
    safe = [s for s in safe_before if s not in unsafe]
    if safe and safe != states:
        doc = doc.model_copy(update={"runs": [r for r in doc.runs if r.write_cache in safe]})
        doc.verdicts = verdicts.evaluate(doc)
    return {"scaling": scaling, "unsafe": unsafe, "verdicts": _plain(doc.verdicts)}


def analyse_device(dev: DeviceAggregate, memo=None) -> tuple[str | None, str | None]:
    """Fill scaling, safety, verdicts and the row's cache state (a note says why when impossible).

    With a :class:`~diskq.database.memo.Memo`, an answer for the same median curves and the same
    code is reused; returns the memo key and the new answer to remember (None when reused).
    """
    if not dev.caches:
        return None, None
    try:
        from diskq.analyse import annotate  # noqa: F401 - only: is the analysis there?
    except ImportError:
        dev.notes.append("scaling and verdicts not computed: the analysis module is not available")
        return None, None
    states = sorted(dev.caches)
    safe_before = [s for s in states if dev.caches[s].safe]
    doc = median_document(dev, states)
    key = known = new = None
    if memo is not None:
        inputs = json.dumps([doc.model_dump(mode="json"), safe_before], sort_keys=True)
        key = memo.key(hashlib.sha256(inputs.encode()).hexdigest(), "analysis")
        known = memo.get(key)
    if known is not None:
        answer = json.loads(known)
    else:
        answer = _analyse(doc, states, safe_before)
        new = json.dumps(answer, sort_keys=True) if key else None
    for state, scaling in answer["scaling"].items():
        dev.caches[state].scaling = scaling
    for state in answer["unsafe"]:
        dev.caches[state].safe = False
    dev.verdicts = answer["verdicts"]
    best, notes = best_cache(dev.caches)
    chosen = ((dev.verdicts or {}).get("ceph_waldb") or {}).get("cache_state")
    dev.best = chosen if chosen in dev.caches else best
    dev.notes = [n for n in dev.notes if not n.startswith("no safe cache setting")] + notes
    return key, new


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
