"""One cluster's OSDs, their devices and the database's figures put together and judged.

:func:`build` takes :class:`~diskq.cluster.inputs.Inputs` and (optionally) a devices.db, and
returns a plain dict (``"format": "diskq-cluster"``): one row per OSD, one per DB drive, the
findings with their rules and evidence, the ``ceph config`` lines, and every input that was
missing or partial, by name. Models are matched as ``diskq lookup`` matches them (an exact
match only: a typo match is named, never used), after the operator's own ``aliases``
(``{"SSDSC2KB038T8": "Intel SSD S4510"}``: a part number Ceph reports -> a database model).
"""

from __future__ import annotations

import re
from dataclasses import asdict
from pathlib import Path

from diskq.cluster import health_findings, judge
from diskq.cluster.inputs import Inputs
from diskq.cluster.judge import counted
from diskq.cluster.merge import merge_volumes, places
from diskq.cluster.models import Matcher
from diskq.cluster.osd_rows import BLUEFS_SHOWN, _major, osd_row, spill_context
from diskq.cluster.parse import OsdMeta

FORMAT = "diskq-cluster"


def _db_key(o: OsdMeta) -> str | None:
    if o.db is None:
        return None
    return o.db.device_id or f"{o.host or '?'}:{','.join(o.db.names) or '?'}"


def build(inp: Inputs, *, db: Path | None, aliases: dict[str, str] | None = None) -> dict:
    from diskq.analyse import criteria
    from diskq.plan import rules as plan_rules

    crit = criteria.section("cluster")
    guide = plan_rules.load()["osds"]
    match = Matcher(db, aliases)
    missing: list[str] = []
    findings: list[judge.Finding] = []
    osds = inp.osds or _osds_without_metadata(inp)
    if inp.osds is None:
        missing.append(
            "no osd metadata (ceph osd metadata -f json, or ceph report): devices and models unknown"
            + (f"; {counted(len(osds), 'OSD')} known from the other outputs only" if osds else "")
        )
    if db is None:
        missing.append("no devices.db: no model could be looked up (give --db)")
    missing += _missing_outputs(inp, osds)
    known = {o.osd for o in osds}
    for osd in sorted(set(inp.perf) - known):
        missing.append(f"perf dump of osd.{osd}, which the metadata does not list: not judged")
    merge_volumes(osds, inp)

    groups: dict[str, list[OsdMeta]] = {}
    for o in osds:
        if (key := _db_key(o)) is not None:
            groups.setdefault(key, []).append(o)
    # the whole drive (ceph-volume inventory) and its wear (device ls), by Ceph's device id
    inventory = {d.device_id: d for devs in inp.inventory.values() for d in devs if d.device_id}
    wear = {d.device_id: d.wear_level for d in inp.devices or [] if d.wear_level is not None}
    db_rows = []
    for key, members in sorted(groups.items(), key=lambda kv: (kv[1][0].host or "", kv[0])):
        dev = members[0].db
        facts = match.facts(dev.model)
        ids = [o.osd for o in members]
        whole = inventory.get(key)
        row = {
            "key": key,
            "host": members[0].host,
            "names": dev.names,
            "model": dev.model,
            "nvme": dev.nvme,
            "rotational": dev.rotational,
            "osds": ids,
            "database": facts,
            "line": match.lines.get(dev.model) if dev.model else None,
            "drive_size_bytes": whole.size_bytes if whole else None,
            "wear_level": wear.get(key),
            "data_osds": [],
            "notes": [],
        }
        if dev.model is None:
            row["notes"].append("model unknown (no device id in the metadata)")
        elif facts is None and dev.model in match.hard_disks:
            row["notes"].append(f"{dev.model} is {match.hard_disks[dev.model]}: not a WAL/DB device")
        elif facts is None and dev.model in match.lines:
            row["notes"].append(f"{dev.model} is a {match.lines[dev.model]['line']}, not measured with diskq yet")
        elif facts is None and db is not None:
            row["notes"].append(f"{dev.model} is not in the database")
        findings += [
            f
            for f in (
                judge.db_guideline(ids, dev.nvme, guide),
                facts and judge.db_unsuitable(ids, dev.model, facts["tier"]),
                facts and judge.db_shared(ids, dev.model, facts["osds_per_device"], facts["osds_limited_by_sweep"]),
            )
            if f
        ]
        if (
            facts
            and facts["osds_limited_by_sweep"]
            and facts["osds_per_device"]
            and len(ids) > facts["osds_per_device"]
        ):
            row["notes"].append(
                f"{len(ids)} OSDs share it; the database measured up to {facts['osds_per_device']} "
                "(at least that many): more is not known"
            )
        db_rows.append(row)

    # an OSD whose data device is a DB drive (another namespace or partition of it) commits there too
    on_db_drive: dict[str, list[int]] = {}
    for o in osds:
        if o.db is None and o.data.device_id in groups:
            on_db_drive.setdefault(o.data.device_id, []).append(o.osd)
    for row in db_rows:
        if row["key"] in on_db_drive:
            others = on_db_drive[row["key"]]
            row["data_osds"] = others
            row["notes"].append("also the data device of " + ", ".join(f"osd.{i}" for i in others))
    sharing = {o.osd: len(g) + len(on_db_drive.get(k, [])) for k, g in groups.items() for o in g}
    for k, ids in on_db_drive.items():
        sharing.update({i: len(groups[k]) + len(ids) for i in ids})
    # RocksDB's WAL, and so each commit, goes to a dedicated WAL device where there is one
    wal_groups: dict[str, list[int]] = {}
    for o in osds:
        if o.wal is not None:
            wal_groups.setdefault(o.wal.device_id or f"{o.host or '?'}:{','.join(o.wal.names) or '?'}", []).append(
                o.osd
            )
    sharing.update({i: len(ids) for ids in wal_groups.values() for i in ids})
    by_id = {o.osd: o for o in osds}
    place = places(osds, match, sharing, inp)
    health_doc, spilled = None, set()
    if inp.checks is not None:
        found, other = health_findings.from_checks(inp.checks, place, lambda i: spill_context(by_id.get(i), inp))
        findings += found
        spilled = {f.osds[0] for f in found if f.rule == "spillover"}
        health_doc = {"source": inp.checks_from, "checks": [c.name for c in inp.checks], "other": other}
    rows, capacities = [], {"hdd": {}, "ssd": {}}
    for o in osds:
        rows.append(
            osd_row(o, inp, match, crit, sharing.get(o.osd, 1), o.osd in spilled, findings, capacities, missing)
        )
    default = sorted(r["osd"] for r in rows if r["mclock"] and r["mclock"]["source"] == "Ceph's default")
    for kind, caps in capacities.items():
        if f := judge.mclock_spread(kind, caps, crit):
            # an end that is Ceph's default was never measured: a capacity not set is the finding there
            if unset := [i for i in f.osds if i in default]:
                f.message += (
                    f"; {judge.ids(unset)} {'has' if len(unset) == 1 else 'have'} no capacity set: "
                    f"Ceph's default {crit[f'mclock_default_{kind}']:,.0f} is in force"
                )
                f.evidence["default"] = unset
            findings.append(f)
    osd_perf = None
    if inp.osd_perf is not None:
        classes = {o: r.device_class for o, r in (inp.df or {}).items()}
        osd_perf, found = health_findings.from_osd_perf(inp.osd_perf, classes, place, crit)
        findings += found
    plans = []
    for name, plan in sorted(inp.batch.items()):
        summary, found = health_findings.from_batch(name, plan, crit, guide)
        plans.append(summary)
        findings += found
    for f in findings:
        f.hosts = sorted({p["host"] for i in f.osds if (p := place(i)) and p["host"]})
        f.drives = sorted({p["drive"] for i in f.osds if (p := place(i)) and p["drive"]})
    unnamed = []
    for name, perf in sorted(inp.perf_unnamed.items()):
        b = perf.bluefs
        unnamed.append(
            {
                "file": name,
                "store": perf.store,
                "bluefs": {k: b.get(k) for k in BLUEFS_SHOWN} if perf.store != "filestore" else None,
                "kv_ms": {k: round(v.avg_s * 1000, 4) for k, v in perf.latencies.items()},
                "dedicated_db": (b.get("slow_total_bytes") or 0) > 0,
                "missing": perf.missing,
            }
        )
        if (b.get("slow_total_bytes") or 0) > 0 and b.get("slow_used_bytes"):
            missing.append(
                f"{name}: BlueFS spilled {b['slow_used_bytes'] / 1e9:,.1f} GB onto the slow device, "
                "but the file does not say which OSD it is"
            )
    missing += match.notes
    absent = sorted(
        m for m, f in match.cache.items() if f is None and m not in match.hard_disks and m not in match.lines
    )
    disks = sorted(match.hard_disks)
    if disks:
        missing.append(f"hard disk drives by their model numbers ({len(disks)}): " + "; ".join(disks))
    if absent:
        missing.append(f"not in the database ({len(absent)}): " + "; ".join(absent))
    rules = {f.rule for f in findings}
    return {
        "format": FORMAT,
        "format_version": 1,
        "source": inp.source,
        "version": inp.version or _common_version(osds),
        "summary": {
            "osds": len(osds),
            "db_devices": len(db_rows),
            "findings": len(findings),
            "osds_flagged": len({i for f in findings for i in f.osds}),
            "by_rule": {r: sum(f.rule == r for f in findings) for r in judge.RULES if r in rules},
        },
        "osds": rows,
        "db_devices": db_rows,
        "unnamed_perf_dumps": unnamed,
        "findings": [asdict(f) for f in findings],
        "health": health_doc,
        "plans": plans,
        "osd_perf": osd_perf,
        "caveats": _caveats(rows),
        "config_lines": [line for f in findings for line in f.config],
        "missing": missing,
        "inputs": {"read": inp.read, "problems": inp.problems},
        "criteria": {k: v for k, v in crit.items() if k not in ("justification", "title")},
    }


def _missing_outputs(inp: Inputs, osds: list[OsdMeta]) -> list[str]:
    """No perf dump, no config dump: what each would have told, asked for as the OSDs' release
    can give it. ``ceph tell`` runs an OSD's admin socket commands from Octopus (ceph/ceph pull
    request 30217), before it ``ceph daemon`` on the OSD's host; ``ceph config dump`` exists from
    Mimic (the monitors' configuration database); mClock is the default scheduler from Quincy."""
    majors = [m for o in osds if (m := _major(o.version)) is not None]
    out = []
    if not inp.perf and osds:
        command = (
            "ceph daemon osd.N perf dump on each OSD's host; ceph tell runs it from Octopus"
            if majors and min(majors) < 15
            else "ceph tell osd.N perf dump"
        )
        if all(o.objectstore == "filestore" for o in osds):
            out.append(f"no perf dump: the journals' commit latencies unknown ({command})")
        else:
            out.append(f"no perf dump: BlueFS usage, spillover counters and commit latencies unknown ({command})")
    if inp.config is None and not inp.config_show and not (majors and max(majors) < 13):
        if majors and max(majors) < 17:
            out.append(
                "no config dump: the options in force (osd_op_queue, bluestore_rocksdb_options) are unknown "
                "(ceph config dump -f json)"
            )
        else:
            out.append("no config dump: the mClock capacities in force are unknown (ceph config dump -f json)")
    return out


def _osds_without_metadata(inp: Inputs) -> list[OsdMeta]:
    """OSDs that ``osd df`` (with their device class), per-OSD mClock entries of ``config dump``
    (whose option names the media Ceph's bench assumed), perf dumps named by OSD, ``osd perf``
    or a host's ``ceph-volume lvm list`` name, when there is no metadata."""
    from diskq.cluster.checks import subjects
    from diskq.cluster.parse import Device

    media: dict[int, bool | None] = {}
    for osd, row in (inp.df or {}).items():
        media[osd] = {"hdd": True, "ssd": False, "nvme": False}.get(row.device_class or "")
    for e in inp.config or []:
        m = re.fullmatch(r"osd\.(\d+)", e.who)
        if m and e.option.startswith("osd_mclock_max_capacity_iops_") and media.get(int(m.group(1))) is None:
            media[int(m.group(1))] = e.option.endswith("_hdd")
    # the OSDs a health check on the commit path names (a spillover line, slow BlueStore ops)
    named = [i for c in inp.checks or [] if c.commit_path for ln in [c.summary, *c.details] for i in subjects(ln).osds]
    for osd in [*inp.perf, *(inp.osd_perf or {}), *(v.osd for vs in inp.volumes.values() for v in vs), *named]:
        media.setdefault(osd, None)
    hosts = {osd: row.host for osd, row in (inp.df or {}).items() if row.host}
    hosts.update({v.osd: h for h, vs in inp.volumes.items() for v in vs if h != "unknown host"})
    stores = {osd: "filestore" if p.store == "filestore" else "bluestore" for osd, p in inp.perf.items()}
    return [
        OsdMeta(
            osd,
            hosts.get(osd),
            stores.get(osd),
            None,
            Device([], rotational=rot),
            None,
            None,
            None,
            ["no metadata: devices unknown"],
            devices_known=False,
        )
        for osd, rot in sorted(media.items())
    ]


def _caveats(rows: list[dict]) -> list[dict]:
    """Each kind of caveat once, with the OSDs it applies to, one entry per OSD naming its
    devices of that kind (``osd.3 (az1-1: data sdf (Virtual Disk), DB sde (Virtual Disk))``)."""
    out: dict[str, dict] = {}
    for r in rows:
        devices: dict[str, list[str]] = {}
        for c in r.get("caveats") or []:
            out.setdefault(c["kind"], {"kind": c["kind"], "text": c["text"], "on": []})
            devices.setdefault(c["kind"], []).append(c["device"])
        for kind, names in devices.items():
            out[kind]["on"].append(f"osd.{r['osd']} ({r['host'] or 'host unknown'}: {', '.join(names)})")
    return list(out.values())


def _common_version(osds: list[OsdMeta]) -> str | None:
    versions = sorted({o.version for o in osds if o.version})
    return ", ".join(versions) or None
