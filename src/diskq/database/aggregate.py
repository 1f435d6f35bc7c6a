"""From the submissions of one device to its figures: medians per cache state, their spread,
the median curve, and the one row of the suitability table.

Pure functions over :class:`~diskq.database.record.SubmissionRecord`; no I/O.

Rules (docs/database-and-site.md states them too):

* Only submissions measured with the device's majority method (``Method.id``, ``version``) are
  aggregated; documents of different methods are never compared. The others stay listed.
* A cache setting is a state (on, off, unknown) and the knob that set it: ``drive`` (hdparm,
  sdparm, NVMe feature 6, declared by an import, or not recorded), ``kernel`` (the kernel's
  queue/write_cache, the only knob on loop, zram and virtio devices) or ``unknown`` (an import
  that did not say how, or an "off" whose mechanism was not recorded:
  :mod:`diskq.analyse.knob`). Runs of different knobs are never aggregated together: "off"
  with the kernel knob means the kernel sends no flushes, not that the drive has no cache.
* Per submission and cache setting the run with the most points counts (a repeated sweep does
  not weigh twice). Per point count, medians are over submissions.
* A cache setting is unsafe when any counted run at that setting failed its flush check, and
  "off" with the kernel knob, or a knob not known, is unsafe unless the drive reports no
  volatile write cache (every counted submission says so), as in the bench's own verdicts.
* The row uses the best safe cache state: the highest median 1-job IOPS (max IOPS when no
  1-job point exists); when no state is safe, the best unsafe one, with a note.
* Every measured point (raw fio output that passes the counter checks) enters its curve. Of two
  figures without raw output that cannot both be right (``[plausibility]`` in ``criteria.toml``),
  the model's other evidence decides which enters (:mod:`diskq.database.settle`); without it the
  1-job figure enters as a lower bound and the other is held out, and the verdicts say so.
* A submission whose 1-job or max IOPS at a setting is more than ``[outliers] max_ratio`` times
  (or less than its inverse) the median of all the evidence for its model at that setting (every
  submission's figure, its own included, at least three) is not aggregated, and one whose 1-job
  IOPS is that far from the model's public figures (legacy rows of any firmware) is held back;
  each stays listed with the reason (:mod:`diskq.database.outliers`, :mod:`diskq.analyse.outliers`).
* A result that measures a host (loop, zram, virtio, device-mapper, md, RAID volume, a file:
  :mod:`diskq.analyse.hostdevice`) is not aggregated into a model that has drive results; a
  model whose every result measures a host is a host device, never ranked among drives.
* The block-size profile of a setting (``device_sizes``) is, per block size, the median over the
  counted submissions whose run at that setting measured that size (the same run as the curve's),
  interrupted steps and profiles of another method left out. The verdicts read it like a bench
  document's profile (:mod:`diskq.analyse.sizes`).
* A curve from one community-table row carries what the row says beyond its points (the peak
  of the contributor's sweep, the contributor's words) to the analysis.
* The sustained writes of the counted submissions are summed up per variant and cache setting
  by :mod:`diskq.database.sustained` (earliest cliff, largest drop, how far the writes looked).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict

from diskq.analyse import knob as knobs
from diskq.database import sustained
from diskq.database.devicefigures import CacheAggregate, CurvePoint, DeviceAggregate, SizeAggregate, Spread
from diskq.database.outliers import outliers
from diskq.database.record import CURVE_FIELDS, SIZE_FIELDS, SubmissionRecord
from diskq.database.settings import DRIVE, KERNEL, knob

#: Method of documents diskq writes today; preferred when a device's methods tie.
CURRENT_METHOD = ("diskq-fdatasync-sweep", 4)
FLUSH_FAILED = "failed the flush check"
KERNEL_OFF = knobs.KERNEL_OFF + " (the drive may have a volatile cache)"
UNKNOWN_OFF = knobs.UNKNOWN_OFF + " (the drive may have a volatile cache)"


def most_common(values, *, skip=(None, "unknown")):
    """The most frequent value, ties broken by sort order; None when there is none."""
    counts = Counter(v for v in values if v not in skip)
    if not counts:
        return None
    top = max(counts.values())
    return min((v for v, c in counts.items() if c == top), key=lambda v: (str(type(v)), v))


def primary_method(records: list[SubmissionRecord]) -> tuple[str, int]:
    counts = Counter(r.method for r in records)
    return min(counts, key=lambda m: (-counts[m], m != CURRENT_METHOD, m))


def _median_or_none(values: list[float]) -> float | None:
    values = [v for v in values if not math.isnan(v)]
    return statistics.median(values) if values else None


def _nan_if_none(x: float | None) -> float:
    return math.nan if x is None else x


def plp_facts(records: list[SubmissionRecord]) -> list[dict]:
    """The power-loss facts the submitted drives reported, one per (field, what it supports,
    warning) in submission order: the first drive's raw value stands for the kind of fact."""
    seen: dict[tuple, dict] = {}
    for r in records:
        for fact in r.plp_facts:
            if isinstance(fact, dict):
                seen.setdefault((fact.get("field"), fact.get("supports"), bool(fact.get("warning"))), fact)
    return list(seen.values())


def volatile_cache(records: list[SubmissionRecord]) -> bool | None:
    """Does the drive have a volatile write cache? True when any submission says so, False when
    every one says it has none, None (may have one) otherwise."""
    flags = [r.volatile_write_cache for r in records]
    if any(f is True for f in flags):
        return True
    return False if flags and all(f is False for f in flags) else None


def aggregate_cache(
    state: str, records: list[SubmissionRecord], knob_: str = DRIVE, volatile_write_cache: bool | None = None
) -> CacheAggregate | None:
    """Figures for one cache setting (state and knob) over the given submissions (None if none
    measured it). ``volatile_write_cache`` is the device's (:func:`volatile_cache`)."""
    per_jobs: dict[int, list[tuple[float, ...]]] = defaultdict(list)  # CURVE_FIELDS without numjobs
    ones, maxes, peaks, p99s, nosyncs = [], [], [], [], []
    counted = verified = legacy = 0
    facts: list[tuple[bool, str | None]] = []
    findings: list[str] = []
    per_size: dict[int, list[tuple[float, ...]]] = defaultdict(list)  # SIZE_FIELDS without block_size
    unsafe_reason = None
    if knobs.unsafe_off(knob_, state, volatile_write_cache) is not None:
        unsafe_reason = KERNEL_OFF if knob_ == KERNEL else UNKNOWN_OFF
    for rec in records:
        runs = [r for r in rec.runs if r.write_cache == state and knob(r.cache_mechanism, state) == knob_]
        if not runs:
            continue
        if any(r.flush_ok is False for r in runs) and unsafe_reason is None:
            unsafe_reason = FLUSH_FAILED
        run = max(runs, key=lambda r: (len(r.curve), -r.index))
        pts = run.points()
        if not pts:
            continue
        counted += 1
        facts.append((run.peak_final, run.source_words))
        findings.extend(run.findings)
        by_size: dict[int, list[tuple]] = defaultdict(list)
        for step in run.size_points():
            by_size[int(step[0])].append(step[1:])
        for size, steps in by_size.items():  # a size measured twice in one profile counts once
            per_size[size].append(
                tuple(_nan_if_none(_median_or_none([x[i] for x in steps])) for i in range(len(SIZE_FIELDS) - 1))
            )
        if run.nosync_iops is not None:
            nosyncs.append(run.nosync_iops)
        verified += rec.verified
        legacy += rec.legacy
        by_jobs: dict[int, list[tuple]] = defaultdict(list)
        for p in pts:
            by_jobs[int(p[0])].append(p)
        for jobs, group in by_jobs.items():
            if len(group) == 1:
                per_jobs[jobs].append(group[0][1:])
            else:  # a step measured twice in one run counts once, with its median figures
                per_jobs[jobs].append(
                    tuple(_nan_if_none(_median_or_none([g[i] for g in group])) for i in range(1, len(CURVE_FIELDS)))
                )
        one = by_jobs.get(1)
        if one:
            best = max(one, key=lambda p: p[1])
            ones.append(best[1])
            p99s.append(best[4])
        top = max(pts, key=lambda p: (p[1], -p[0]))
        maxes.append(top[1])
        peaks.append(int(top[0]))
    if not counted:
        return None
    curve = []
    for jobs in sorted(per_jobs):
        vals = per_jobs[jobs]
        curve.append(
            CurvePoint(
                numjobs=jobs,
                iops=Spread.of([v[0] for v in vals]),
                n=len(vals),
                lat_mean_us=_median_or_none([v[1] for v in vals]),
                sync_mean_us=_median_or_none([v[2] for v in vals]),
                sync_p99_us=_median_or_none([v[3] for v in vals]),
                lat_p99_us=_median_or_none([v[4] for v in vals]),
            )
        )
    # what a source row says applies to its own curve only, not to a median of several
    peak_final, words = facts[0] if len(facts) == 1 else (False, None)
    return CacheAggregate(
        write_cache=state,
        knob=knob_,
        submissions=counted,
        verified=verified,
        legacy=legacy,
        safe=unsafe_reason is None,
        iops_1job=Spread.of(ones),
        max_iops=Spread.of(maxes),
        peak_jobs=statistics.median_low(peaks) if peaks else None,
        p99_sync_us=Spread.of(p99s),
        curve=curve,
        nosync_iops=_median_or_none(nosyncs),
        unsafe_reason=unsafe_reason,
        peak_final=peak_final,
        source_words=words,
        sizes=_size_medians(per_size),
        findings=findings,
    )


def _size_medians(per_size: dict[int, list[tuple[float, ...]]]) -> list[SizeAggregate]:
    out = []
    for size in sorted(per_size):
        vals = per_size[size]
        out.append(
            SizeAggregate(
                block_size=size,
                iops=Spread.of([v[0] for v in vals]),
                bw_bytes=_median_or_none([v[1] for v in vals]),
                n=len(vals),
                lat_p50_us=_median_or_none([v[2] for v in vals]),
                lat_p99_us=_median_or_none([v[3] for v in vals]),
                sync_p50_us=_median_or_none([v[4] for v in vals]),
                sync_p99_us=_median_or_none([v[5] for v in vals]),
            )
        )
    return out


def best_cache(caches: dict[tuple[str, str], CacheAggregate]) -> tuple[tuple[str, str] | None, list[str]]:
    """The cache setting the table row shows, and notes on the choice."""
    if not caches:
        return None, ["no usable measurements"]

    def score(c: CacheAggregate):
        one = c.iops_1job.median if c.iops_1job else -1.0
        top = c.max_iops.median if c.max_iops else -1.0
        return (one, top, c.write_cache == "off", c.knob == DRIVE, c.write_cache)

    safe = [c for c in caches.values() if c.safe]
    if safe:
        return max(safe, key=score).key, []
    pick = max(caches.values(), key=score)
    why = "; ".join(
        f"cache {c.label} {c.unsafe_reason or 'is unsafe'}" for c in sorted(caches.values(), key=lambda c: c.key)
    )
    return pick.key, [f"no safe cache setting ({why}); the row shows cache {pick.label}"]


def noise_caveat(records: list[SubmissionRecord]) -> str | None:
    """A caveat when some submissions were measured on a noisy host or device (a 1-job step
    whose IOPS varied by more than :data:`diskq.analyse.noise.NOISY_SPREAD` within the step)."""
    from diskq.analyse.noise import CAVEAT, NOISY_SPREAD
    from diskq.units import plural

    noisy = [
        max(s for run in r.runs if (s := run.solo_spread) is not None)
        for r in records
        if any(run.solo_spread is not None and run.solo_spread > NOISY_SPREAD for run in r.runs)
    ]
    if not noisy:
        return None
    return (
        f"{CAVEAT}{plural(len(noisy), 'submission')} of {len(records)} measured while one job's IOPS varied by "
        f"more than {NOISY_SPREAD:.0%} within a step (up to {max(noisy):.0%}): a noisy host or device, so the "
        "figures and verdicts may not hold on a quiet one"
    )


def physics_problems(records: list[SubmissionRecord]) -> dict[str, str]:
    """Submission id -> why no drive behind its link could have measured it
    (:mod:`diskq.analyse.physics`)."""
    from diskq.analyse.physics import curve_problems

    out = {}
    for r in records:
        found = curve_problems(r.protocol, [p for run in r.runs for p in (*run.points(), *run.held_points())])
        if found:
            out[r.id] = "beyond physics: " + found[0]
    return out


def aggregate_device(
    dev_id: str, records: list[SubmissionRecord], public: list[tuple[str, float]] | tuple = ()
) -> DeviceAggregate:
    """All figures of one device (records must share ``device_id``; order does not matter).
    ``public`` is the model's published figures (:func:`diskq.database.outliers.public_figures` over every device of the
    model), the evidence a submission is judged against beside its device's others."""
    records = sorted(records, key=lambda r: r.id)
    drives = [r for r in records if r.not_drive is None]
    excluded: dict[str, str] = {}
    not_drive = None
    if drives and len(drives) < len(records):  # a drive model also measured through a host's stack
        for r in records:
            if r.not_drive is not None:
                excluded[r.id] = f"{r.not_drive}: not aggregated into a drive's figures"
    elif not drives:
        not_drive = most_common([r.not_drive for r in records], skip=(None,))
    usable = [r for r in records if r.id not in excluded]
    method = primary_method(usable)
    counted = [r for r in usable if r.method == method]
    notes = []
    others = len(usable) - len(counted)
    if others:
        notes.append(f"{others} submission(s) measured with another method are listed but not aggregated")
    far, why = outliers(counted, public=public)
    notes.extend(why)
    if far:
        excluded.update(far)
        counted = [r for r in counted if r.id not in far]
        notes.append(f"{len(far)} submission(s) far outside the others of this model are listed but not aggregated")
    beyond = physics_problems(counted)  # what no drive behind its link could have measured
    if beyond:
        excluded.update(beyond)
        counted = [r for r in counted if r.id not in beyond]
        notes.append(f"{len(beyond)} submission(s) beyond what their interface allows are listed but not aggregated")
    if len(excluded) > len(far) + len(beyond):
        notes.append(
            f"{len(excluded) - len(far) - len(beyond)} submission(s) measuring a host are listed but not aggregated"
        )
    volatile = volatile_cache(counted)
    settings = sorted(
        {(run.write_cache, knob(run.cache_mechanism, run.write_cache)) for r in counted for run in r.runs}
    )
    caches = {}
    for state, knob_ in settings:
        agg = aggregate_cache(state, counted, knob_, volatile)
        if agg is not None:
            caches[agg.key] = agg
    best, why = best_cache(caches)
    notes.extend(why)
    caveat = noise_caveat(counted)
    if caveat:
        notes.append(caveat)
    long_writes, why = sustained.aggregate([m for r in counted for m in r.sustained])
    notes.extend(why)
    return DeviceAggregate(
        id=dev_id,
        model=most_common([r.model for r in records], skip=()),
        model_key=records[0].model_key,
        vendor=most_common([r.vendor for r in records]),
        firmware=records[0].firmware_key,
        capacity_bytes=most_common([r.capacity_bytes for r in records]),
        protocol=most_common([r.protocol for r in records]) or "unknown",
        media=most_common([r.media for r in records]) or "unknown",
        method=method,
        submissions=len(counted),
        verified=sum(r.verified for r in counted),
        legacy=sum(r.legacy for r in counted),
        caches=caches,
        best=best,
        notes=notes,
        volatile_write_cache=volatile,
        unchecked=sum(r.signature == "intact" for r in counted),
        plp_facts=plp_facts(counted),
        excluded=excluded,
        not_drive=not_drive,
        sustained=long_writes,
    )


def rank_key(d: DeviceAggregate):
    """Order of the suitability table: 1-job IOPS at the row's cache state, then max IOPS."""
    c = d.row_cache
    one = c.iops_1job.median if c and c.iops_1job else None
    top = c.max_iops.median if c and c.max_iops else None
    return (one is None, -(one or 0.0), top is None, -(top or 0.0), d.model_key, d.firmware)
