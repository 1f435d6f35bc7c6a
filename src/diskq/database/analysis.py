"""Scaling class and verdicts of a device, recomputed at build time with the current analysis.

Stored ``scaling``/``verdicts`` in submissions are not trusted: each device's median curves (and
the median no-fdatasync rate, for the flush check) are put into a result document and run
through :func:`diskq.analyse.annotate`. The document carries what the verdicts need to judge a
setting as the bench does: each run's mechanism (``sysfs`` for the kernel's write_cache knob)
and the device's volatile-cache flag. A cache setting is safe when the aggregation found it safe
(no submission's flush check failed, not "off" by the kernel knob on a drive that may have a
volatile cache) and the check on the medians does not fail either. The verdicts are made from
the safe settings only (from all settings when none is safe), so they rest on the same curve as
the row.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

from diskq.analyse.knob import DECLARED, DRIVE
from diskq.database.aggregate import best_cache
from diskq.database.devicefigures import CacheAggregate, DeviceAggregate
from diskq.database.record import SIZE_METHOD

#: Fixed timestamp of the synthetic median documents (the build must be deterministic).
EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


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
        points.append(_point(c.numjobs, c.iops.median, Latency(mean=c.lat_mean_us, p99=c.lat_p99_us), sync))
    nosync = _point(1, cache.nosync_iops, Latency()) if cache.nosync_iops is not None else None
    return Run(
        write_cache=cache.write_cache,
        cache_mechanism=DECLARED.get(cache.knob) if cache.knob != DRIVE else None,
        points=points,
        nosync=nosync,
        sizes=_median_sizes(cache),
    )


def _median_sizes(cache: CacheAggregate):
    """The setting's median block-size profile as a document's profile, for the verdicts."""
    from diskq.result import Latency, ProfileMethod, SizePoint, SizeProfile

    if not cache.sizes:
        return None
    id_, version = SIZE_METHOD
    return SizeProfile(
        method=ProfileMethod(id=id_, version=version),
        points=[
            SizePoint(
                block_size=z.block_size,
                iops=z.iops.median,
                bw_bytes=z.bw_bytes,
                total_ios=0,
                runtime_ms=0,
                lat_us=Latency(p50=z.lat_p50_us, p99=z.lat_p99_us),
                sync_lat_us=Latency(p50=z.sync_p50_us, p99=z.sync_p99_us),
            )
            for z in cache.sizes
        ],
    )


def _point(numjobs: int, iops: float, lat, sync=None):
    from diskq.result import Point

    return Point(
        numjobs=numjobs, iops=iops, bw_bytes=iops * 4096, total_ios=0, runtime_ms=0, lat_us=lat, sync_lat_us=sync
    )


def median_document(dev: DeviceAggregate, settings: list[tuple[str, str]]):
    """A result document holding the device's median curve for each of ``settings``, in order."""
    from diskq.result import Device, Method, ResultDocument

    return ResultDocument(
        created=EPOCH,
        device=Device(
            model=dev.model,
            vendor=dev.vendor,
            firmware=dev.firmware or None,
            capacity_bytes=dev.capacity_bytes,
            protocol=dev.protocol,
            media=dev.media,
            volatile_write_cache=dev.volatile_write_cache,
            plp_facts=dev.plp_facts,
        ),
        method=Method(id=dev.method[0], version=dev.method[1]),
        runs=[_median_run(dev.caches[s]) for s in settings],
    )


def source_sweeps(dev: DeviceAggregate, settings: list[tuple[str, str]]) -> dict:
    """Per run index of the median document: what the source of that setting's curve says
    beyond its points (one community-table row's final peak and its contributor's words)."""
    from diskq.analyse.source import SourceSweep

    out = {}
    for i, s in enumerate(settings):
        c = dev.caches[s]
        # each submission's points were reviewed when it was read, its conflicts decided with the
        # model's other evidence (database.settle): the median curve stands as it is
        out[i] = SourceSweep(peak_final=c.peak_final, words=c.source_words, settled=True, findings=tuple(c.findings))
    return out


def _analyse(doc, safe_before: list[int], sources: dict | None = None) -> dict:
    """Run the analysis on a median document: scaling per run (in the document's order), runs
    whose flush check on the medians fails, and the verdicts over the runs that remain safe."""
    from diskq.analyse import annotate, plp, verdicts

    sources = sources or {}
    doc = annotate(doc, sources)
    # power-loss protection weighs every setting (a failed flush check is evidence too), per model
    protection = plp.evaluate(doc, per_model=True)
    scaling = [_plain(r.scaling) for r in doc.runs]
    unsafe = [i for i, r in enumerate(doc.runs) if r.flush_check is not None and r.flush_check.honest is False]
    safe = [i for i in safe_before if i not in unsafe]
    if safe and len(safe) != len(doc.runs):
        doc = doc.model_copy(update={"runs": [doc.runs[i] for i in safe]})
        doc.verdicts = verdicts.evaluate(doc, {j: sources[i] for j, i in enumerate(safe) if i in sources})
    doc.verdicts.power_loss_protection = protection
    return {"scaling": scaling, "unsafe": unsafe, "verdicts": _plain(doc.verdicts)}


def analyse_device(dev: DeviceAggregate, memo=None) -> tuple[str | None, str | None]:
    """Fill scaling, safety, verdicts and the row's cache state (a note says why when impossible).

    With a :class:`~diskq.database.memo.Memo`, an answer for the same median curves and the same
    code is reused; returns the memo key and the new answer to remember (None when reused).
    """
    if not dev.caches:
        return None, None
    settings = sorted(dev.caches)
    safe_before = [i for i, s in enumerate(settings) if dev.caches[s].safe]
    doc = median_document(dev, settings)
    sources = source_sweeps(dev, settings)
    key = known = new = None
    if memo is not None:
        facts = {i: [s.peak_final, s.words, s.settled, list(s.findings)] for i, s in sources.items()}
        inputs = json.dumps([doc.model_dump(mode="json"), safe_before, facts], sort_keys=True)
        key = memo.key(hashlib.sha256(inputs.encode()).hexdigest(), "analysis")
        known = memo.get(key)
    if known is not None:
        answer = json.loads(known)
    else:
        answer = _analyse(doc, safe_before, sources)
        new = json.dumps(answer, sort_keys=True) if key else None
    for setting, scaling in zip(settings, answer["scaling"], strict=False):
        dev.caches[setting].scaling = scaling
    for i in answer["unsafe"]:
        cache = dev.caches[settings[i]]
        cache.safe = False
        cache.unsafe_reason = cache.unsafe_reason or "failed the flush check on the median figures"
    dev.verdicts = answer["verdicts"]
    best, notes = best_cache(dev.caches)
    chosen = ((dev.verdicts or {}).get("ceph_waldb") or {}).get("cache_state")
    # the verdict names a state; of the settings with that state, the one the row rules pick
    same_state = {k: c for k, c in dev.caches.items() if k[0] == chosen}
    dev.best = best_cache(same_state)[0] if same_state else best
    dev.notes = [n for n in dev.notes if not n.startswith("no safe cache setting")] + notes
    return key, new


def verdict_columns(verdicts: dict | None) -> dict[str, Any]:
    """The table's verdict columns from the full verdicts: Ceph tier, OSDs per device (whether
    the sweep limited it: the answer is then "at least N"; the commit rate each of them gets and
    the demand it meets; a value that sorts devices by what they carry), etcd pass/fail, commits
    per second of one PostgreSQL session, power-loss protection, the ZFS SLOG tier."""
    from diskq.analyse.osds import order_value

    v = verdicts or {}
    ceph = v.get("ceph_waldb") or {}
    osds = v.get("osds_per_device") or {}
    etcd = v.get("etcd") or {}
    pg = v.get("postgres_wal") or {}
    protection = v.get("power_loss_protection") or {}
    slog = v.get("zfs_slog") or {}
    passes = etcd.get("passes")
    commits = pg.get("commits_per_s")
    return {
        "power_loss_protection": protection.get("verdict"),
        "ceph_waldb": ceph.get("tier"),
        "osds_per_device": osds.get("n"),
        "osds_limited_by_sweep": None if osds.get("n") is None else int(bool(osds.get("limited_by_sweep"))),
        "osds_per_osd_iops": osds.get("per_osd_iops"),
        "osds_demand_iops": osds.get("demand_iops"),
        "osds_order": order_value(
            osds.get("n"), osds.get("per_osd_iops"), osds.get("demand_iops"), osds.get("solo_iops")
        ),
        "etcd": None if passes is None else ("pass" if passes else "fail"),
        "postgres_wal": commits,
        "zfs_slog": slog.get("tier"),
    }
