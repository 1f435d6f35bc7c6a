"""The answer for a hard disk drive (:mod:`diskq.identity.disks`): unsuitable for every use that
waits on a flush, from the physics of a spinning platter, computed once here and read by
``lookup`` (text and ``--json``), ``plan`` and ``cluster``.

A flushed write completes only when its sector has passed under the head. When the flush returns,
the platter has turned on, so the next sector of a sequential log has just gone by: the next write
waits most of a revolution; a write to a random place waits half a revolution on average. One
revolution takes 60,000 / rpm milliseconds: 8.3 ms at 7,200 rpm, 4.2 ms average latency (Hitachi
7K320 SATA OEM specification, table 8, https://www.manualowl.com/m/Hitachi/7K320/Manual/334882?page=19);
11.1 ms at 5,400 rpm (Hitachi 5K320 SATA OEM specification, table 8,
https://manualsdump.com/en/manuals/hitachi-hts543280l9a300-hts543212l9sa00/112335/19). So one job makes
about rpm / 60 flushed writes a second (120 at 7,200 rpm) and never more than twice that, before
any seek: of the order of 100-200, where a marginal Ceph WAL/DB device commits 1,000
(criteria.toml ``[ceph_waldb]``). The public figures of hard disks (``figures``) agree: the one
of the Proxmox benchmark paper of 2018, a 7,200 rpm Seagate Constellation.2, 117 IOPS, is one write
per revolution. The fastest hard disks spin at 15,000 rpm (Seagate Enterprise Performance 15K):
even they make at most 500 a second.

The basis is ``datasheet``: what the drive is (and its rotation rate, where a source states it)
comes from the vendor's documents, the bound from physics, nothing from a measurement of the
drive. etcd is the one use whose bound is a latency: the 99th percentile of a flushed write is at
least 99 % of a revolution (a random sector's wait is spread evenly over one revolution; a
sequential one waits nearly all of it), which exceeds etcd's 10 ms only below about 6,000 rpm;
a faster disk gets no tier for etcd, only the best case the revolution allows (at most marginal at
7,200 rpm), and what to measure.
"""

from __future__ import annotations

from collections.abc import Sequence

from diskq.analyse import criteria
from diskq.analyse.answer import MEASURE, USES, _bounded

#: The fastest rotation rate hard disks are sold at (Seagate Enterprise Performance 15K HDD,
#: publication 100721324; Toshiba MK3001GRRB, 15,000 rpm), the bound where the rate is not stated.
FASTEST_RPM = 15000
#: Flushed writes per revolution a hard disk can make at most at one job (half a revolution's wait).
PER_REVOLUTION = 2
BASIS = "datasheet"


def revolution_ms(rpm: int) -> float:
    return 60_000 / rpm


def _rate(rpm: int | None, rpm_source: str | None) -> tuple[int, str]:
    """The rotation rate the bound rests on and how it is known."""
    if rpm:
        return rpm, f"{rpm:,} rpm ({rpm_source})" if rpm_source else f"{rpm:,} rpm"
    return FASTEST_RPM, (
        f"not stated by its sources; the bound is that of {FASTEST_RPM:,} rpm, the fastest hard disks spin at "
        "(Seagate Enterprise Performance 15K HDD)"
    )


def figure_reason(f: dict) -> str:
    """A public figure of a hard disk, with its source: ``public figure: Seagate Constellation.2 ...``."""
    rpm = f" ({f['rpm']:,} rpm)" if f.get("rpm") else ""
    return (
        f"public figure: {f['name']}{rpm}, {f['iops']:,.0f} IOPS at {f.get('numjobs', 1)} job "
        f"({f.get('method_class') or 'method not stated'}, cache {f.get('write_cache') or 'unknown'}; "
        f'{f.get("source_id")}: "{f.get("quote")}", {f.get("url")})'
    )


def answer(
    rpm: int | None = None, rpm_source: str | None = None, figures: Sequence[dict] = (), crit: dict | None = None
) -> dict[str, dict]:
    """The answer per use for a hard disk of ``rpm`` (None: not stated), in the shape of
    :mod:`diskq.analyse.answer`, with ``figures`` (public sync-write figures of hard disks) as
    evidence."""
    crit = crit or criteria.load()
    used, how = _rate(rpm, rpm_source)
    rev = revolution_ms(used)
    per_s = used / 60
    most = PER_REVOLUTION * per_s
    physics = [
        f"a flushed write waits for the platter to bring its sector under the head: a revolution takes {rev:.1f} ms "
        f"at {used:,} rpm, about {per_s:,.0f} flushed writes a second at one job, at most {most:,.0f}",
        f"rotation rate: {how}",
        *(figure_reason(f) for f in figures),
    ]
    marginal = crit["ceph_waldb"]["marginal"]
    slog = most * crit["zfs_slog"]["block_size"] / 1e6
    p99 = 0.99 * rev
    why = {
        "ceph_waldb": f"a hard disk drive: at most {most:,.0f} flushed writes a second at one job, below the "
        f"{marginal:,} of a marginal WAL/DB device",
        "zfs_slog": f"a hard disk drive: synchronous 128 KiB writes at most {slog:,.0f} MB/s",
        "etcd": f"a hard disk drive: the 99th percentile of a write and its flush is at least {p99:.1f} ms "
        "(99 % of a revolution)",
        "postgres_wal": f"a hard disk drive: one session commits at most {most:,.0f} times a second",
    }
    value = {"ceph_waldb": most, "zfs_slog": slog, "etcd": p99, "postgres_wal": most}
    out = {use: _bounded(use, value[use], BASIS, why[use], crit) for use in USES}
    out["ceph_waldb"]["reasons"].append(
        "a WAL/DB device exists to take the OSDs' small flushed writes from their hard disks: a hard disk "
        "cannot take them from another"
    )
    out["ceph_waldb"]["osds_per_device"] = {"n": 0, "reasons": ["a hard disk is no WAL/DB device"]}
    for use in USES:
        out[use]["reasons"] += physics
        if out[use]["tier"] != "unsuitable" and MEASURE[use] not in out[use]["reasons"]:
            out[use]["reasons"].append(MEASURE[use])
        out[use]["rpm"] = rpm
    return {use: out[use] for use in USES}


__all__ = ["BASIS", "FASTEST_RPM", "answer", "figure_reason", "revolution_ms"]
