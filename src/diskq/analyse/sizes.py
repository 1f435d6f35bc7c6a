"""Workload verdicts read at the workload's own write size, from the block-size profile.

The 4 KiB sweep answers for BlueStore's commits; etcd, PostgreSQL's WAL and a ZFS SLOG write
other sizes (``[etcd]``, ``[postgres_wal]`` and ``[zfs_slog]`` in ``criteria.toml`` say which and
why). When the run a verdict uses carries a size profile (:class:`~diskq.result.SizeProfile`, method
``diskq-size-profile`` version 1 or 2: one document holds one version, so its runs are never
compared across versions), the verdict reads the profile's step nearest that size (within
``[size_profile] nearest_max_ratio``) and says ``basis: "measured"``. Without one, the sweep's 1-job
4 KiB step stands in, as before criteria version 4, and the verdict says ``basis: "estimated from
4 KiB"`` with a reason. Pure functions: the runs are chosen by :mod:`diskq.analyse.verdicts`.

A SLOG is tiered by its 128 KiB bandwidth, its capacity and its endurance, the lowest of the three
(:func:`weigh_slog`); a device diskq did not measure is tiered from a figure for that bandwidth
(:func:`zfs_slog_from_figure`). 4 KiB IOPS never decide a SLOG tier.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from diskq.analyse import endurance
from diskq.analyse.model import Etcd, PostgresWal, ZfsSlog
from diskq.units import block_label, latency_ms

if TYPE_CHECKING:
    from diskq.identity.facts import LineFacts
    from diskq.result import Point, SizePoint, SizeProfile

#: The size-profile method ``diskq bench`` writes today (fixed windows after a 1 s ramp).
METHOD = ("diskq-size-profile", 2)
#: Every size-profile method a verdict reads: the current one and version 1 (steps ended by fio's
#: steady-state detector). A verdict reads the runs of one document, which share one version.
READABLE = (("diskq-size-profile", 1), METHOD)
MEASURED = "measured"
ESTIMATED = "estimated from 4 KiB"
#: The sweep's block size: what an estimate rests on.
SWEEP_BLOCK = 4096


class Run(Protocol):
    """What a verdict needs of one candidate run (``verdicts._Candidate`` is one)."""

    cache: str
    solo: Point
    sizes: list[SizePoint]


def usable_points(profile: SizeProfile | None) -> list[SizePoint]:
    """The steps of ``profile`` a verdict may read, smallest size first: completed steps of a
    profile measured with a method of :data:`READABLE` (another method is never read)."""
    if profile is None or (profile.method.id, profile.method.version) not in READABLE:
        return []
    return sorted((p for p in profile.points if not p.interrupted), key=lambda p: p.block_size)


def nearest(points: Sequence[SizePoint], target: int, max_ratio: float) -> SizePoint | None:
    """The step whose size is nearest ``target`` on a log scale, within ``max_ratio`` of it
    (either way); of two equally near, the larger (its write takes longer: the cautious one)."""
    best, best_key = None, None
    for p in points:
        distance = abs(math.log2(p.block_size / target))
        if distance > math.log2(max_ratio) + 1e-9:
            continue
        key = (distance, -p.block_size)
        if best_key is None or key < best_key:
            best, best_key = p, key
    return best


def _ratio(crit_sizes: dict) -> float:
    return float(crit_sizes["nearest_max_ratio"])


def _p99_ms(lat) -> float | None:
    return None if lat is None or lat.p99 is None else lat.p99 / 1000.0


def _no_step(target: int) -> str:
    return (
        f"estimated from 4 KiB: no size-profile step near {block_label(target)} in the run used "
        "(diskq bench --profile sizes measures it)"
    )


def etcd(crit: dict, crit_sizes: dict, safe: Sequence[Run]) -> Etcd:
    """etcd's verdict over the safe runs (at least one): the lowest fdatasync p99 at the size
    nearest ``crit["block_size"]`` among runs that measured it; else the lowest at 4 KiB, estimated."""
    limit = float(crit["p99_fdatasync_ms"])
    target = int(crit["block_size"])
    measured = []
    for run in safe:
        step = nearest(run.sizes, target, _ratio(crit_sizes))
        if step is not None and _p99_ms(step.sync_lat_us) is not None:
            measured.append((_p99_ms(step.sync_lat_us), run, step))
    if measured:
        p99, run, step = min(measured, key=lambda m: m[0])
        passes = p99 < limit
        verb = "is below" if passes else "is not below"
        return Etcd(
            passes=passes,
            p99_fdatasync_ms=p99,
            limit_ms=limit,
            cache_state=run.cache,
            block_size=step.block_size,
            basis=MEASURED,
            reasons=[
                f"p99 fdatasync latency of {block_label(step.block_size)} writes at 1 job {latency_ms(p99)} "
                f"{verb} {limit:g} ms (cache {run.cache}, measured by the size profile)"
            ],
        )
    solo = [(_p99_ms(r.solo.sync_lat_us), r) for r in safe if _p99_ms(r.solo.sync_lat_us) is not None]
    if not solo:
        return Etcd(limit_ms=limit, reasons=["fio reported no fdatasync latency percentiles for the 1-job step"])
    p99, run = min(solo, key=lambda m: m[0])
    passes = p99 < limit
    verb = "is below" if passes else "is not below"
    return Etcd(
        passes=passes,
        p99_fdatasync_ms=p99,
        limit_ms=limit,
        cache_state=run.cache,
        block_size=SWEEP_BLOCK,
        basis=ESTIMATED,
        reasons=[
            f"p99 fdatasync latency at 1 job {latency_ms(p99)} {verb} {limit:g} ms (cache {run.cache})",
            _no_step(target),
        ],
    )


def postgres(crit: dict, crit_sizes: dict, best: Run) -> PostgresWal:
    """PostgreSQL's WAL figures from the best safe run: its step nearest ``crit["block_size"]``
    (an 8 kB WAL page) when it has one, else its 1-job 4 KiB step, estimated."""
    target = int(crit["block_size"])
    step = nearest(best.sizes, target, _ratio(crit_sizes))
    if step is not None:
        point, size, basis = step, step.block_size, MEASURED
        first = (
            f"one session commits about {step.iops:.0f} times per second ({block_label(size)} writes at 1 job, "
            f"cache {best.cache}, measured by the size profile)"
        )
        extra = []
    else:
        point, size, basis = best.solo, SWEEP_BLOCK, ESTIMATED
        first = f"one session commits about {point.iops:.0f} times per second (1-job IOPS, cache {best.cache})"
        extra = [_no_step(target) + "; an 8 kB page takes at least as long, so this rate is an upper bound"]
    sync_p99 = point.sync_lat_us.p99 if point.sync_lat_us is not None else None
    write_p99 = point.lat_us.p99
    reasons = [first]
    commit_max = None
    if sync_p99 is not None and write_p99 is not None:
        commit_max = (sync_p99 + write_p99) / 1000.0
        reasons.append(f"p99 commit latency at most {latency_ms(commit_max)} (p99 write + p99 fdatasync)")
    else:
        reasons.append("fio reported no latency percentiles for the write or the fdatasync")
    return PostgresWal(
        commits_per_s=point.iops,
        p99_fdatasync_ms=None if sync_p99 is None else sync_p99 / 1000.0,
        p99_commit_ms_max=commit_max,
        cache_state=best.cache,
        block_size=size,
        basis=basis,
        reasons=reasons + extra,
    )


def _tier(crit: dict, bw_bytes: float) -> tuple[str, str]:
    """(tier, why) for a throughput in bytes per second."""
    mb_s = bw_bytes / 1e6
    bounds = [("excellent", crit["excellent_mb_s"]), ("good", crit["good_mb_s"]), ("marginal", crit["marginal_mb_s"])]
    for name, low in bounds:
        if mb_s >= low:
            return name, f"at least {low:g} MB/s"
    return "unsuitable", f"below {crit['marginal_mb_s']:g} MB/s"


def zfs_slog(crit: dict, crit_sizes: dict, best: Run) -> ZfsSlog:
    """The ZFS SLOG tier from the best safe run's size curve (see ``[zfs_slog]``)."""
    target = int(crit["block_size"])
    solo = best.solo
    iops_4k = solo.iops
    p99_4k = _p99_ms(solo.sync_lat_us)
    small = nearest(best.sizes, SWEEP_BLOCK, 1.0)  # the profile's own 4 KiB step, when there is one
    if small is not None:
        iops_4k, p99_4k = small.iops, _p99_ms(small.sync_lat_us)
    context = f"4 KiB: {iops_4k:.0f} writes+flushes per second at 1 job"
    if p99_4k is not None:
        context += f", p99 fdatasync {latency_ms(p99_4k)}"
    step = nearest(best.sizes, target, _ratio(crit_sizes))
    if step is not None:
        curve = {str(p.block_size): p.bw_bytes for p in best.sizes if p.block_size <= max(target, step.block_size)}
        tier, why = _tier(crit, step.bw_bytes)
        return ZfsSlog(
            tier=tier,
            block_size=step.block_size,
            bw_bytes=step.bw_bytes,
            iops_4k=iops_4k,
            p99_4k_ms=p99_4k,
            curve=curve,
            cache_state=best.cache,
            safe=True,
            basis=MEASURED,
            reasons=[
                f"synchronous {block_label(step.block_size)} writes at 1 job give {step.bw_bytes / 1e6:.0f} MB/s "
                f"with the write cache {best.cache}, {why} ({tier}; measured by the size profile)",
                context,
            ],
        )
    # a write of `target` bytes and its flush never complete sooner than a 4 KiB one
    at_most = iops_4k * target
    low = float(crit["marginal_mb_s"])
    if at_most / 1e6 < low:
        return ZfsSlog(
            tier="unsuitable",
            block_size=target,
            bw_bytes_at_most=at_most,
            iops_4k=iops_4k,
            p99_4k_ms=p99_4k,
            cache_state=best.cache,
            safe=True,
            basis=ESTIMATED,
            reasons=[
                f"synchronous {block_label(target)} writes could give at most {at_most / 1e6:.0f} MB/s "
                f"({iops_4k:.0f} 4 KiB writes+flushes per second, cache {best.cache}), below {low:g} MB/s "
                "(unsuitable; estimated from 4 KiB)",
                context,
            ],
        )
    return ZfsSlog(
        block_size=target,
        bw_bytes_at_most=at_most,
        iops_4k=iops_4k,
        p99_4k_ms=p99_4k,
        cache_state=best.cache,
        safe=True,
        basis=ESTIMATED,
        reasons=[
            f"synchronous {block_label(target)} writes could give up to {at_most / 1e6:.0f} MB/s "
            f"by the 4 KiB step (cache {best.cache}), which does not decide a tier; "
            "measure the size profile (diskq bench --profile sizes)",
            context,
        ],
    )


#: SLOG tiers, lowest first.
_ORDER = ("unsuitable", "marginal", "good", "excellent")


def _lowest(*tiers: str | None) -> str | None:
    known = [t for t in tiers if t is not None]
    return min(known, key=_ORDER.index) if known else None


def weigh_slog(
    crit: dict, crit_endurance: dict, slog: ZfsSlog, capacity_bytes: int | None, facts: LineFacts | None
) -> ZfsSlog:
    """``slog`` (tiered by its bandwidth alone) with capacity and endurance weighed: the tier becomes
    the lowest of the bandwidth's, the capacity's (``capacity / capacity_window_s`` as a rate) and
    the endurance's (:func:`diskq.analyse.endurance.slog_floor_tier`). A figure that is not known
    is not weighed, and the reasons say so."""
    window = float(crit["capacity_window_s"])
    reasons = list(slog.reasons)
    cap_tier = None
    if capacity_bytes:
        rate = capacity_bytes / window
        cap_tier, why = _tier(crit, rate)
        bw = slog.bw_bytes if slog.bw_bytes is not None else slog.bw_bytes_at_most
        limits = bw is not None and rate < bw
        reasons.append(
            f"capacity {capacity_bytes / 1e9:.0f} GB holds {window:g} s of sync writes (two transaction "
            f"groups) at up to {rate / 1e6:.0f} MB/s, {why}"
            + (": it limits the device below its bandwidth" if limits else "")
        )
    else:
        reasons.append("capacity not known: not weighed")
    tiers = [("excellent", crit["excellent_mb_s"]), ("good", crit["good_mb_s"]), ("marginal", crit["marginal_mb_s"])]
    end_tier, wear = endurance.slog_floor_tier(tiers, facts, capacity_bytes, crit_endurance)
    if end_tier is None:
        reasons.append("endurance not weighed: " + "; ".join(wear.reasons[1:]))
    else:
        reasons.append(
            f"endurance: rated {wear.rated_bytes_per_day / 1e9:.0f} GB per day sustains the "
            f"{end_tier} tier at the assumed duty ({float(crit_endurance['slog_duty']):.0%} of the day)"
            if end_tier != "unsuitable"
            else f"endurance: rated {wear.rated_bytes_per_day / 1e9:.0f} GB per day does not sustain even the "
            f"marginal floor for {float(crit_endurance['slog_duty']):.0%} of the day (unsuitable)"
        )
    if slog.safe is False or slog.tier == "unsuitable":
        tier = slog.tier
    elif slog.tier is not None:
        tier = _lowest(slog.tier, cap_tier, end_tier)
    else:
        tier = "unsuitable" if "unsuitable" in (cap_tier, end_tier) else None
    if tier != slog.tier and slog.tier is not None:
        reasons.append(f"{tier}, not {slog.tier}: capacity and endurance weigh as much as bandwidth")
    elif slog.tier is None and tier is not None:
        reasons.append("unsuitable by its capacity or endurance alone, whatever its bandwidth")
    return slog.model_copy(
        update={
            "tier": tier,
            "bandwidth_tier": slog.tier,
            "capacity_bytes": capacity_bytes,
            "endurance": wear,
            "reasons": reasons,
        }
    )


def zfs_slog_from_figure(
    crit: dict,
    crit_endurance: dict,
    bw_bytes: float,
    *,
    source: str,
    at_most: bool = False,
    block_size: int | None = None,
    capacity_bytes: int | None = None,
    facts: LineFacts | None = None,
    weak: str | None = None,
) -> ZfsSlog:
    """The SLOG verdict of a device diskq did not measure, from a figure for its synchronous
    throughput at ``block_size`` (128 KiB by the criteria; ``source`` says where it was read).
    ``at_most``: the figure is an upper bound (a datasheet's sequential write speed), which decides
    only "unsuitable" (below the lowest tier). ``weak``: why the figure is weak (a sub-second or
    buffered run); such a figure is read as an upper bound, never as a rate. Capacity and endurance
    are weighed as for a measurement (:func:`weigh_slog`)."""
    target = int(crit["block_size"])
    size = block_size or target
    if weak:
        at_most = True
        source = f"{source}; a weak figure ({weak}), read as an upper bound"
    if at_most:
        low = float(crit["marginal_mb_s"])
        tier = "unsuitable" if bw_bytes / 1e6 < low else None
        why = (
            f"below {low:g} MB/s (unsuitable)"
            if tier
            else "which bounds it from above and decides no tier; measure it (diskq bench --profile sizes)"
        )
        slog = ZfsSlog(
            tier=tier,
            block_size=size,
            bw_bytes_at_most=bw_bytes,
            basis="public figure",
            reasons=[
                f"synchronous {block_label(size)} writes give at most {bw_bytes / 1e6:.0f} MB/s ({source}), {why}"
            ],
        )
    else:
        tier, why = _tier(crit, bw_bytes)
        near = size == target
        slog = ZfsSlog(
            tier=tier if near else None,
            block_size=size,
            bw_bytes=bw_bytes,
            basis="public figure",
            reasons=[
                f"synchronous {block_label(size)} writes give {bw_bytes / 1e6:.0f} MB/s ({source})"
                + (
                    f", {why} ({tier})"
                    if near
                    else f": not the {block_label(target)} a SLOG writes, so it decides no tier"
                )
            ],
        )
    return weigh_slog(crit, crit_endurance, slog, capacity_bytes, facts)
