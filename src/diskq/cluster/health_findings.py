"""Findings from what Ceph itself observed: the health checks of ``ceph health detail`` that bear
on the commit path, ``ceph osd perf`` against peers, and ``ceph-volume lvm batch --report``
plans. Each finding names its OSDs, their hosts and the device each commits to (``place``, given
by the report, says where an OSD commits and what the database knows of that drive).

A health check that is recognised but whose detail lines name nothing diskq can read becomes a
``health_unparsed`` finding, never silence; checks off the commit path are listed, not judged.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from diskq.cluster import checks as hc
from diskq.cluster import explain, judge
from diskq.cluster.checks import Check

Place = Callable[[int], "dict | None"]


def _who(osds: list[int], place: Place) -> str:
    parts, unknown = [], []
    for o in osds[:6]:
        p = place(o)
        if p and p["commit"] is None and not p["host"]:  # nothing known of it but its number: said once
            unknown.append(f"osd.{o}")
            continue
        parts.append(f"osd.{o}" + (f" ({p['text']})" if p else " (not in the metadata)"))
    if unknown:
        parts.append(", ".join(unknown) + " (host and devices unknown: no osd metadata)")
    return "; ".join(parts) + (f"; and {len(osds) - 6} more" if len(osds) > 6 else "")


def from_checks(found: list[Check], place: Place, spill_context: Callable[[int], dict]) -> tuple[list, list[dict]]:
    """(findings, the checks off the commit path) of one health output."""
    findings: list[judge.Finding] = []
    other = []
    for c in found:
        rule_meaning = c.commit_path
        if rule_meaning is None:
            other.append(
                {"name": c.name, "severity": c.severity, "summary": c.summary, "details": len(c.details), "note": None}
            )
            continue
        rule, meaning = rule_meaning
        muted = " (muted)" if c.muted else ""
        daemons = {d for ln in [c.summary, *c.details] for d in re.findall(r"\b(mon|mds|mgr|osd)\.[\w.-]+", ln)}
        if daemons and "osd" not in daemons:  # slow ops of monitors, say: not an OSD's commit path
            other.append(
                {
                    "name": c.name,
                    "severity": c.severity,
                    "summary": c.summary,
                    "details": len(c.details),
                    "note": f"names {', '.join(sorted(daemons))} daemons only, no OSD: not the OSD commit path",
                }
            )
            continue
        if c.name == "BLUEFS_SPILLOVER":
            spills, rest = hc.spills(c)
            findings += [_spill(s, place, spill_context(s.osd)) for s in spills]
            if not spills and not rest:  # a summary and no detail: still a spillover, of OSDs unnamed
                rest = [c.summary]
        else:
            rest = []
            osds = sorted({o for ln in [c.summary, *c.details] for o in hc.subjects(ln).osds})
            named = sorted(
                {x for ln in [c.summary, *c.details] for x in hc.subjects(ln).devices + hc.subjects(ln).device_ids}
            )
            if osds or named:
                rest = [
                    ln
                    for ln in c.details
                    if not (hc.subjects(ln).osds or hc.subjects(ln).devices or hc.subjects(ln).device_ids)
                ]
                on = _who(osds, place) if osds else ", ".join(named)
                findings.append(
                    judge.Finding(
                        rule,
                        osds,
                        f"{c.name}{muted}: {c.summary}: {meaning}. On {on}",
                        {"check": c.name, "severity": c.severity, "details": c.details[:20], "devices": named},
                        fixes=_fixes(c.name, osds),
                    )
                )
            else:
                rest = c.details or [c.summary]
        if rest:
            findings.append(
                judge.Finding(
                    "health_unparsed",
                    [],
                    f"{c.name}{muted} is on the commit path ({meaning}), but diskq could not read "
                    f"which OSD or drive {len(rest)} of its lines name: " + " | ".join(rest[:3]),
                    {"check": c.name, "lines": rest[:20]},
                )
            )
    return findings, other


def _spill(s: hc.Spill, place: Place, ctx: dict) -> judge.Finding:
    total = s.total_bytes if s.total_bytes is not None else ctx.get("db_size")
    # the wording without the DB's use is 14.0/14.1's own: the line dates the OSD's release where nothing else does
    major = ctx.get("major") or (14 if s.used_bytes is None else None)
    cause, fixes, config = explain.spillover(
        s.osd, s.spilled_bytes, s.used_bytes, total, major, ctx.get("rocksdb"), ctx.get("policy")
    )
    p = place(s.osd)
    # a spilling OSD has a DB device, whatever the inputs say of its devices: only its host, if known
    on = f" ({p['text']})" if p and p["commit"] else f" (host {p['host']})" if p and p["host"] else ""
    return judge.Finding(
        "spillover",
        [s.osd],
        f"ceph health detail: {s.line}{on}. Cause: {cause}",
        {
            "check": "BLUEFS_SPILLOVER",
            "spilled_bytes": s.spilled_bytes,
            "db_used_bytes": s.used_bytes,
            "db_total_bytes": total,
            "wording": "14.0/14.1" if s.used_bytes is None else "14.2 and later",
        },
        config,
        fixes=fixes,
    )


def _fixes(name: str, osds: list[int]) -> list[str]:
    one = f"osd.{osds[0]}" if osds else "osd.N"
    if name == "BLUESTORE_SLOW_OP_ALERT":
        return [
            f"the OSD's log names each slow operation (`log_latency_fn slow operation observed for "
            f"_txc_committed_kv`: the commit); `ceph daemon {one} dump_historic_ops` shows the slowest",
            "a drive without power-loss protection flushes every commit to flash: it is the usual cause on "
            "consumer SSDs; the warning stays for bluestore_slow_ops_warn_lifetime after the last slow op",
        ]
    if name == "SLOW_OPS":
        return [
            f"`ceph daemon {one} dump_ops_in_flight` on the OSD's host shows where each op waits "
            "(`waiting for sub ops`: a peer; `commit_sent` late: this OSD's commit)"
        ]
    if name in ("BLUEFS_AVAILABLE_SPACE", "BLUEFS_LOW_SPACE", "BLUESTORE_BLUEFS_OVERSIZED"):
        return [
            f"`ceph tell {one} bluefs stats` (or `ceph daemon {one} bluefs stats`) shows each device's use; "
            "compact (`ceph tell osd.N compact`) or grow the DB (ceph-bluestore-tool bluefs-bdev-expand)"
        ]
    if name == "BLUESTORE_FRAGMENTATION":
        return [
            f"`ceph daemon {one} bluestore allocator score block` rates it (0 to 1); only redeploying the "
            "OSD defragments it"
        ]
    if name.startswith(("BLUESTORE_NO_PER", "BLUESTORE_LEGACY")):
        return [
            "`ceph-bluestore-tool repair --path /var/lib/ceph/osd/ceph-N` (OSD stopped) converts it; it reads "
            "the whole DB, so run it one OSD at a time, or mute the warning until you can"
        ]
    if name.startswith("DEVICE_HEALTH") or "STALLED_READ" in name or name.startswith("BLUESTORE_SPURIOUS"):
        return [
            "`ceph device ls` and `ceph device info DEVID` show the drive's health metrics; replace a failing "
            "DB drive before its OSDs go with it"
        ]
    return []


def from_osd_perf(rows: dict, classes: dict[int, str | None], place: Place, crit: dict) -> tuple[dict, list]:
    """``ceph osd perf``: a summary, and each OSD against the OSDs of its device class (all OSDs
    where the classes are not known)."""
    out = []
    for osd, row in sorted(rows.items()):
        cls = classes.get(osd)
        f = judge.commit_latency_peers(
            osd, row.commit_ms, [r.commit_ms for o, r in rows.items() if classes.get(o) == cls], crit
        )
        if f:
            p = place(osd)
            f.message += f" ({cls or 'device class unknown'}" + (f"; {p['text']})" if p else ")")
            f.fixes.append(
                "ceph osd perf is the mgr's last few seconds: repeat it, and compare kv_commit_lat in "
                f"`ceph tell osd.{osd} perf dump` with the device's own figures"
            )
            out.append(f)
    busy = sorted((r.commit_ms, o) for o, r in rows.items() if r.commit_ms > 0)
    summary = {
        "osds": len(rows),
        "committing": len(busy),
        "median_ms": busy[(len(busy) - 1) // 2][0] if busy else None,
        "max_ms": busy[-1][0] if busy else None,
        "max_osd": busy[-1][1] if busy else None,
    }
    return summary, out


def from_batch(name: str, plan: list, crit: dict, guide: dict) -> tuple[dict, list[judge.Finding]]:
    """A ``ceph-volume lvm batch --report`` plan: OSDs per DB device, and each DB's size against
    its data device and RocksDB's levels."""
    from diskq.cluster.checks import size_bytes

    by_db: dict[str, list] = {}
    for p in plan:
        if p.db:
            by_db.setdefault(p.db, []).append(p)
    summary = {"file": name, "osds": len(plan), "db_devices": {k: len(v) for k, v in by_db.items()}, "db_sizes": []}
    findings = []
    for dev, members in by_db.items():
        nvme = "nvme" in dev
        limit = int(guide["guideline_max_nvme" if nvme else "guideline_max_sata_sas"])
        if len(members) > limit:
            findings.append(
                judge.Finding(
                    "batch_plan",
                    [],
                    f"{name}: the plan puts {len(members)} OSDs' DBs on {dev}; "
                    f"Ceph's guideline is at most {limit} per {'NVMe' if nvme else 'SAS/SATA SSD'}",
                    {"osds_sharing": len(members), "guideline": limit},
                )
            )
    small: dict[tuple, list[str]] = {}
    for p in plan:
        try:
            # ceph-volume prints sizes in powers of 1024 labelled GB/TB, as size_bytes reads them
            db, data = (
                size_bytes(str(p.db_size)) if p.db_size else None,
                size_bytes(str(p.data_size)) if p.data_size else None,
            )
        except ValueError:
            continue
        if db is None:
            continue
        k, held = explain.fits(db, *explain.ROCKSDB_DEFAULT)
        summary["db_sizes"].append({"data": p.data, "db": p.db, "db_bytes": db, "levels_held_256MiBx10": k})
        if data and db / data < float(crit["db_min_share"]):
            small.setdefault((str(p.db_size), str(p.data_size), db, data), []).append(p.data)
    for (db_txt, data_txt, db, data), devs in small.items():
        shown = ", ".join(devs[:6]) + (f" and {len(devs) - 6} more" if len(devs) > 6 else "")
        findings.append(
            judge.Finding(
                "batch_plan",
                [],
                f"{name}: {shown} would get a {db_txt} block.db, "
                f"{db / data:.2%} of {data_txt}, below {float(crit['db_min_share']):.0%}",
                {"db_bytes": db, "data_bytes": data, "data_devices": devs},
            )
        )
    return summary, findings
