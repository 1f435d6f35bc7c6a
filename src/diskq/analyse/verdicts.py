"""Workload verdicts from a result document, by the criteria in ``criteria.toml``.

All verdicts look at the runs (one per write-cache state) and use the *best safe* one. A run
is unsafe, and never the basis of a positive verdict, when its flush check warned
(``flush_check.honest is False``), or when its cache was turned "off" with the kernel's sysfs
knob on a device that may have a volatile cache: in "write through" the kernel stops sending
flushes, so fdatasync returns while the data may still sit in the drive's RAM. A state whose
knob is not known (declared by an import without saying how) counts as that knob does
(:mod:`diskq.analyse.knob`). Among the safe runs, Ceph, OSDs per device and
PostgreSQL use the one with the highest 1-job IOPS, etcd the one with the lowest 1-job p99
fdatasync latency. Each verdict names the cache state it used and carries its reasons.

etcd, PostgreSQL and the ZFS SLOG verdict read the run's block-size profile at their workload's
write size when it has one (:mod:`diskq.analyse.sizes`); without one they say they were
estimated from 4 KiB.

A result measured on RAM (a file on tmpfs or ramfs, a zram or brd RAM disk, a loop device over
a file in RAM) carries a note starting with :data:`~diskq.analyse.memorybacked.MEMORY_BACKED`;
its figures say nothing about a drive, so every verdict is "not applicable": no tier, no pass or
fail, the note as the reason.

Missing evidence is never a failure: when no run is safe (a cache "off" set with the kernel's
knob sends no flush at all; a run whose flush check failed), no tier and no pass or fail is
given, and the reasons say what to measure. The OSDs per device never exceed what the Ceph
WAL/DB tier allows (``[osds_per_device] tier_max_osds``), so the two cannot contradict each
other. Texts name the sync call the method made (``fdatasync``, ``O_SYNC``), never fdatasync
for another. Power-loss protection is "not applicable" on a loop device, a RAM disk or zram, and
a file: no drive's protection can be measured through them (:func:`diskq.analyse.plp.evaluate`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from diskq.analyse import criteria, endurance, osds, plausibility, plp, sizes
from diskq.analyse.knob import knob, unsafe_off
from diskq.analyse.memorybacked import memory_backed
from diskq.analyse.model import CephWalDb, Etcd, OsdsPerDevice, PostgresWal, Verdicts, ZfsSlog
from diskq.analyse.noise import iops_spread, noisy_caveat
from diskq.units import plural

if TYPE_CHECKING:
    from diskq.analyse.source import SourceSweep
    from diskq.result import Point, ResultDocument, Run


def load_criteria() -> dict:
    """Every criterion with its justification, as read from criteria.toml (a fresh copy)."""
    return criteria.load()


class _Candidate:
    """One run that measured 1 job: its usable points, 1-job point and flush-check status."""

    def __init__(
        self,
        run: Run,
        points: list[Point],
        solo: Point,
        volatile_write_cache: bool | None,
        source: SourceSweep | None = None,
        filesystem: str | None = None,
    ):
        self.run = run
        # measured points all stand; a figure without raw output in a conflict with the 1-job
        # figure is held out, and the 1-job figure is then a lower bound (criteria [plausibility])
        review = plausibility.run_review(run, filesystem=filesystem, settled=bool(source and source.settled))
        left_out = {q.numjobs for q in review.held}
        self.points = [p for p in points if p.numjobs not in left_out]
        self.findings = [*review.notes, *(source.findings if source else ())]
        self.filesystem = filesystem if review.observations else None
        self.solo = solo
        self.sizes = sizes.usable_points(run.sizes)  # the size profile's completed steps, smallest first
        top = max(self.points, key=lambda p: (p.iops, -p.numjobs))
        self.peak_final = bool(source and source.peak_final) and top.numjobs == self.points[-1].numjobs
        self.cache = run.write_cache
        self.unsafe_reason: str | None = None
        if run.flush_check is not None and run.flush_check.honest is False:
            self.unsafe_reason = "failed the flush check"
        else:
            self.unsafe_reason = unsafe_off(
                knob(run.cache_mechanism, run.write_cache), run.write_cache, volatile_write_cache
            )

    @property
    def safe(self) -> bool:
        return self.unsafe_reason is None

    @property
    def p99_sync_us(self) -> float | None:
        return self.solo.sync_lat_us.p99 if self.solo.sync_lat_us is not None else None


def evaluate(doc: ResultDocument, sources: Mapping[int, SourceSweep] | None = None) -> Verdicts:
    """Ceph WAL/DB tier, OSDs per device, etcd pass/fail and PostgreSQL WAL figures for ``doc``.

    ``sources`` gives, per run index, what the curve's source says beyond its points
    (:class:`~diskq.analyse.source.SourceSweep`): a peak that the source measured beyond is not
    "at least n" OSDs."""
    crit = criteria.load()
    in_memory = memory_backed(doc)
    if in_memory is not None:
        return _not_applicable(crit, in_memory)
    notes: list[str] = []
    candidates: list[_Candidate] = []
    for index, run in enumerate(doc.runs):
        points = sorted((p for p in run.points if not p.interrupted), key=lambda p: p.numjobs)
        if len(points) < len(run.points):
            notes.append(f"cache {run.write_cache}: interrupted steps left out")
        solo = next((p for p in points if p.numjobs == 1), None)
        if solo is None:
            notes.append(f"cache {run.write_cache}: no completed 1-job step, run not used")
            continue
        candidate = _Candidate(
            run, points, solo, doc.device.volatile_write_cache, (sources or {}).get(index), doc.device.filesystem
        )
        notes.extend(f"cache {run.write_cache}: {finding}" for finding in candidate.findings)
        candidates.append(candidate)
        caveat = noisy_caveat(run.write_cache, iops_spread(solo.fio))
        if caveat:
            notes.append(caveat)
        notes.extend(_size_notes(run))
    if doc.interrupted:
        notes.append("the benchmark was interrupted: verdicts rest on the steps that completed")

    safe = [c for c in candidates if c.safe]
    unsafe = [c for c in candidates if not c.safe]
    # Highest 1-job IOPS first; ties keep the document's run order.
    by_iops = sorted(safe, key=lambda c: -c.solo.iops)
    best = by_iops[0] if by_iops else None
    ceph = _ceph(crit["ceph_waldb"], best, by_iops[1:], unsafe, sync_name(doc.method.id))
    out = Verdicts(
        ceph_waldb=ceph,
        osds_per_device=_osds(crit["osds_per_device"], best, unsafe, ceph.tier),
        etcd=_etcd(crit["etcd"], crit["size_profile"], safe, unsafe),
        postgres_wal=_postgres(crit["postgres_wal"], crit["size_profile"], best, unsafe),
        power_loss_protection=plp.evaluate(doc),
        zfs_slog=_zfs_slog(crit, best, unsafe, doc.device.capacity_bytes),
        criteria_version=int(crit["version"]),
        notes=notes,
    )
    _what_they_rest_on(out, candidates)
    out.ceph_waldb.endurance = endurance.waldb(
        out.osds_per_device.n,
        out.osds_per_device.demand_iops or 0.0,
        doc.device.capacity_bytes,
        None,
        crit["endurance"],
    )
    sync = sync_name(doc.method.id)
    if sync != "fdatasync":  # the texts of the size-dependent verdicts say fdatasync: name what was called
        for verdict in (out.etcd, out.postgres_wal, out.zfs_slog, out.osds_per_device):
            if verdict is not None:
                verdict.reasons = [r.replace("fdatasync", sync) for r in verdict.reasons]
    return out


def _what_they_rest_on(out: Verdicts, candidates: list[_Candidate]) -> None:
    """Every verdict made from a run whose figures are in a conflict says so (its 1-job figure is
    then a lower bound: the verdict holds "at least"); every verdict made from a file-mode run
    whose jobs outran one job alone says it measured the filesystem."""
    for verdict in (out.ceph_waldb, out.osds_per_device, out.etcd, out.postgres_wal, out.zfs_slog):
        if verdict is None or verdict.cache_state is None:
            continue
        used = next((c for c in candidates if c.cache == verdict.cache_state), None)
        if used is None:
            continue
        for finding in used.findings:
            if finding.startswith(plausibility.DECIDED):
                verdict.reasons.append(
                    "rests on figures of which other evidence of the model decided a conflict: "
                    + finding[len(plausibility.DECIDED) :]
                )
            elif finding.startswith(plausibility.CONFLICT):
                verdict.reasons.append(
                    "rests on a conflict between two figures (the 1-job figure counts only as a lower bound, "
                    f"so this holds at least): {finding[len(plausibility.CONFLICT) :]}"
                )
        if used.filesystem:
            verdict.reasons.append(
                f"measured through the {used.filesystem} filesystem, which commits the flushes of concurrent "
                "writers together: this describes the filesystem on the device, not the device alone"
            )


def _not_applicable(crit: dict, note: str) -> Verdicts:
    """Every verdict empty, with the memory-backed note as its reason."""
    reasons = [f"not applicable: {note}"]
    return Verdicts(
        ceph_waldb=CephWalDb(reasons=list(reasons)),
        osds_per_device=OsdsPerDevice(
            demand_iops=osds.demand_iops(crit["osds_per_device"]), osd_kind="hdd", reasons=list(reasons)
        ),
        etcd=Etcd(limit_ms=float(crit["etcd"]["p99_fdatasync_ms"]), reasons=list(reasons)),
        postgres_wal=PostgresWal(reasons=list(reasons)),
        power_loss_protection=plp.not_applicable(note),
        zfs_slog=ZfsSlog(reasons=list(reasons)),
        criteria_version=int(crit["version"]),
        notes=["measured on a memory-backed target: verdicts not applicable"],
    )


def sync_name(method_id: str | None) -> str:
    """The sync call a method made, as verdict texts name it: ``fdatasync``, ``O_SYNC``, ..."""
    from diskq.submission.methods import traits

    sync = traits(method_id or "").sync
    return {"o_sync": "O_SYNC", "o_dsync": "O_DSYNC", "o_sync+fsync": "O_SYNC + fsync"}.get(sync, sync)


#: What a verdict with no safe run says to do next.
MEASURE_SAFE = (
    "no verdict: nothing measured says what the drive does with a flush; measure with the write cache on, "
    "or off with the drive's own knob (hdparm, sdparm, nvme: `diskq bench --cache both` on the drive)"
)


def _no_run_reason(unsafe: list[_Candidate]) -> str:
    if unsafe:
        why = "; ".join(f"cache {c.cache} {c.unsafe_reason}" for c in unsafe)
        return f"no safe cache setting among those measured ({why})"
    return "no run has a completed 1-job step"


def _ceph(
    crit: dict, best: _Candidate | None, others: list[_Candidate], unsafe: list[_Candidate], sync: str = "fdatasync"
) -> CephWalDb:
    if best is None:
        if unsafe:  # missing evidence, not a failure: nothing safe was measured
            return CephWalDb(safe=False, reasons=[_no_run_reason(unsafe), MEASURE_SAFE])
        return CephWalDb(reasons=[_no_run_reason(unsafe)])
    iops = best.solo.iops
    bounds = [("excellent", crit["excellent"]), ("good", crit["good"]), ("marginal", crit["marginal"])]
    tier = next((name for name, low in bounds if iops >= low), "unsuitable")
    if tier == "unsuitable":
        why = f"1-job {sync} IOPS {iops:.0f} with the write cache {best.cache} are below {crit['marginal']}"
    else:
        why = f"1-job {sync} IOPS {iops:.0f} with the write cache {best.cache} are at least {dict(bounds)[tier]}"
    reasons = [why + f" ({tier})"]
    for c in others:
        reasons.append(f"cache {c.cache} gave {c.solo.iops:.0f} at 1 job (lower, not used)")
    for c in unsafe:
        reasons.append(f"cache {c.cache} gave {c.solo.iops:.0f} at 1 job but {c.unsafe_reason} (not used)")
    return CephWalDb(tier=tier, iops=iops, cache_state=best.cache, safe=True, reasons=reasons)


def _osds(crit: dict, best: _Candidate | None, unsafe: list[_Candidate], tier: str | None = None) -> OsdsPerDevice:
    demand = osds.demand_iops(crit, "hdd")
    if best is None:
        return OsdsPerDevice(demand_iops=demand, osd_kind="hdd", reasons=[_no_run_reason(unsafe)])
    share = osds.osds_per_device(((p.numjobs, p.iops) for p in best.points), demand, peak_final=best.peak_final)
    reasons = [f"{r} (cache {best.cache})" if i == 0 else r for i, r in enumerate(share.reasons)]
    cap = crit.get("tier_max_osds", {}).get(tier) if tier else None
    if cap is not None and share.n > cap:  # one model: the count never says more than the tier
        per = next((p.iops / cap for p in best.points if p.numjobs == cap), None) if cap else None
        return OsdsPerDevice(
            n=cap,
            demand_iops=demand,
            osd_kind="hdd",
            per_osd_iops=per,
            solo_iops=best.solo.iops,
            limited_by_sweep=False,
            cache_state=best.cache,
            reasons=[
                f"{'none' if cap == 0 else f'at most {cap}'}: the Ceph WAL/DB tier is {tier} "
                f"(criteria [osds_per_device] tier_max_osds); the curve alone would allow "
                f"{'at least ' if share.limited_by_sweep else ''}{share.n}",
                *reasons,
            ],
        )
    return OsdsPerDevice(
        n=share.n,
        demand_iops=demand,
        osd_kind="hdd",
        per_osd_iops=share.per_osd_iops,
        solo_iops=best.solo.iops,
        limited_by_sweep=share.limited_by_sweep,
        cache_state=best.cache,
        reasons=reasons,
    )


def _size_notes(run: Run) -> list[str]:
    """What of the run's size profile the verdicts cannot read, and why."""
    profile = run.sizes
    if profile is None:
        return []
    if (profile.method.id, profile.method.version) not in sizes.READABLE:
        versions = " and ".join(str(v) for _, v in sizes.READABLE)
        return [
            f"cache {run.write_cache}: size profile of method {profile.method.id} version "
            f"{profile.method.version} not read (this diskq reads versions {versions})"
        ]
    cut = sum(p.interrupted for p in profile.points)
    return [f"cache {run.write_cache}: {plural(cut, 'interrupted size-profile step')} left out"] if cut else []


def _etcd(crit: dict, crit_sizes: dict, safe: list[_Candidate], unsafe: list[_Candidate]) -> Etcd:
    limit = float(crit["p99_fdatasync_ms"])
    if not safe:  # missing evidence: neither pass nor fail
        return Etcd(limit_ms=limit, reasons=[_no_run_reason(unsafe)] + ([MEASURE_SAFE] if unsafe else []))
    return sizes.etcd(crit, crit_sizes, safe)


def _postgres(crit: dict, crit_sizes: dict, best: _Candidate | None, unsafe: list[_Candidate]) -> PostgresWal:
    if best is None:
        return PostgresWal(reasons=[_no_run_reason(unsafe)] + ([MEASURE_SAFE] if unsafe else []))
    return sizes.postgres(crit, crit_sizes, best)


def _zfs_slog(crit_all: dict, best: _Candidate | None, unsafe: list[_Candidate], capacity: int | None) -> ZfsSlog:
    crit = crit_all["zfs_slog"]
    if best is None:
        return ZfsSlog(reasons=[_no_run_reason(unsafe)] + ([MEASURE_SAFE] if unsafe else []))
    measured = sizes.zfs_slog(crit, crit_all["size_profile"], best)
    return sizes.weigh_slog(crit, crit_all["endurance"], measured, capacity, None)


def best_safe_run(doc: ResultDocument) -> tuple[Run | None, list[Point], list[str]]:
    """The run the verdicts use (the safe one with the highest 1-job IOPS), its completed points
    in job order, and why the others were not used. ``(None, [], reasons)`` when no run is safe
    or the document was measured on a memory-backed target."""
    in_memory = memory_backed(doc)
    if in_memory is not None:
        return None, [], [f"not applicable: {in_memory}"]
    candidates = []
    for run in doc.runs:
        points = sorted((p for p in run.points if not p.interrupted), key=lambda p: p.numjobs)
        solo = next((p for p in points if p.numjobs == 1), None)
        if solo is not None:
            candidates.append(_Candidate(run, points, solo, doc.device.volatile_write_cache))
    safe = sorted((c for c in candidates if c.safe), key=lambda c: -c.solo.iops)
    unsafe = [c for c in candidates if not c.safe]
    reasons = [f"cache {c.cache} {c.unsafe_reason}" for c in unsafe]
    if not safe:
        return None, [], [_no_run_reason(unsafe)]
    best = safe[0]
    reasons += [f"cache {c.cache} gave {c.solo.iops:.0f} at 1 job (lower)" for c in safe[1:]]
    return best.run, best.points, reasons
