"""The answer per use (:mod:`diskq.analyse.answer`) as devices.db stores it: computed once by
``db build`` for every device row (``devices.answers``) and every public model
(``public_answers``), and read by every face (``lookup``, ``plan``, the site).

A device row is diskq's measurement when any of its submissions is (``legacy`` < ``submissions``);
a row of legacy submissions only is the community table's figures, so its answer's basis is
``public-figure`` and its method class and cache state decide what it may claim. The row's verdict
columns (``ceph_waldb``, ``osds_per_device``, ``etcd``, ``zfs_slog``) are read from the answer, so
the table, the device page and ``lookup`` cannot disagree with it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from diskq.analyse import answer as model
from diskq.database.devicefigures import DeviceAggregate

if TYPE_CHECKING:
    from diskq.analyse.estimate import Peer
    from diskq.identity.facts import LineFacts


def compact_json(answers: dict) -> str:
    """The stored form of an answer: sorted keys, no spaces."""
    return json.dumps(answers, sort_keys=True, separators=(",", ":"))


def device_answer(dev: DeviceAggregate, method_class: str) -> dict:
    """The answer for one device row from its verdicts (recomputed on its median curves)."""
    row = dev.row_cache
    public = dev.submissions > 0 and dev.legacy == dev.submissions
    return model.from_verdicts(
        dev.verdicts,
        method_class=method_class,
        public=public,
        cache_known=bool(row and row.write_cache in ("on", "off")),
        notes=dev.notes,
    )


def columns(answers: dict, cols: dict) -> dict:
    """The row's verdict columns, overridden by the answer: a tier only when the answer gives one,
    the OSD count the answer holds, etcd "pass" (marginal or better) or "fail" (unsuitable)."""
    from diskq.analyse.osds import order_value

    out = dict(cols)
    ceph = answers["ceph_waldb"]
    out["ceph_waldb"] = ceph["tier"] if ceph["tier"] in model.TIERS else None
    osds = ceph.get("osds_per_device") or {}
    n = osds.get("n")
    if n != cols.get("osds_per_device"):
        out["osds_per_device"] = n
        out["osds_limited_by_sweep"] = None if n is None else int(bool(osds.get("at_least")))
        out["osds_per_osd_iops"] = osds.get("per_osd_iops") if n is not None else None
        out["osds_order"] = order_value(n, out["osds_per_osd_iops"], cols.get("osds_demand_iops"), ceph.get("figure"))
    etcd = answers["etcd"]["tier"]
    out["etcd"] = None if etcd not in model.TIERS else ("fail" if etcd == "unsuitable" else "pass")
    slog = answers["zfs_slog"]["tier"]
    out["zfs_slog"] = slog if slog in model.TIERS else None
    return out


def write_public(con: sqlite3.Connection) -> int:
    """Fill ``public_answers`` from the public tables just written; returns how many models."""
    classes: dict[str, list[dict]] = {}
    for r in con.execute("SELECT model_id, method_class, write_cache, iops_1job, sources FROM model_class"):
        classes.setdefault(r[0], []).append(
            {"method_class": r[1], "write_cache": r[2], "iops_1job": r[3], "sources": json.loads(r[4])}
        )
    figures: dict[str, list[dict]] = {}
    for r in con.execute("SELECT model_id, method_class, write_cache, numjobs, iodepth, iops FROM figures"):
        figures.setdefault(r[0], []).append(
            {"method_class": r[1], "write_cache": r[2], "numjobs": r[3], "iodepth": r[4], "iops": r[5]}
        )
    ids = [r[0] for r in con.execute("SELECT id FROM models ORDER BY id")]
    con.executemany(
        "INSERT INTO public_answers VALUES (?,?)",
        [(i, compact_json(model.from_public(classes.get(i, []), figures.get(i, [])))) for i in ids],
    )
    return len(ids)


def peers(con: sqlite3.Connection, facts_of: Callable[[str], LineFacts | None]) -> list[Peer]:
    """The peers an estimate may read (:func:`diskq.analyse.estimate.from_datasheet`): every drive row
    and public model whose product line's facts ``facts_of(family_key)`` knows, with the figures its
    stored answer decided on; one per family (a drive row before the public model of its family)."""
    from diskq.analyse.estimate import Peer

    out: dict[str, Peer] = {}
    rows = con.execute(
        "SELECT model, family_key, answers FROM devices WHERE not_drive IS NULL AND answers IS NOT NULL "
        "ORDER BY rank IS NULL, rank, id"
    ).fetchall()
    rows += con.execute(
        "SELECT m.name, m.family_key, a.answers FROM models m JOIN public_answers a ON a.model_id = m.id ORDER BY m.id"
    ).fetchall()
    for name, family, stored in rows:
        facts = facts_of(family) if family not in out else None
        if facts is not None:
            out[family] = Peer.from_answer(name, facts, json.loads(stored))
    return list(out.values())


def write_lines(con: sqlite3.Connection) -> int:
    """Fill ``line_answers`` once the devices, the public answers and the lines are written: per
    product line, the answer its datasheet facts bound and its peers' figures estimate
    (:func:`diskq.analyse.estimate.from_datasheet`), and the power-loss verdict its facts give
    (:func:`diskq.analyse.plp.judge`, nothing measured); returns how many lines."""
    from diskq.analyse import plp
    from diskq.analyse.estimate import from_datasheet
    from diskq.identity import query, store

    known = peers(con, lambda family: query.facts_of_family(con, family))
    rows = []
    for line in store.read(con):
        answer = from_datasheet(line.facts, [p for p in known if p.name not in line.names])
        answer["power_loss_protection"] = plp.judge(line.facts, None, None, None).model_dump(mode="json")
        rows.append((line.key, json.dumps(answer, sort_keys=True)))
    con.executemany("INSERT INTO line_answers VALUES (?,?)", rows)
    return len(rows)


def _stored(con: sqlite3.Connection, sql: str, key: str) -> dict | None:
    """One stored answer by its key; None where there is none, or no such table (an older database)."""
    try:
        row = con.execute(sql, (key,)).fetchone()
    except sqlite3.OperationalError:
        return None
    return json.loads(row[0]) if row else None


def line_verdicts(con: sqlite3.Connection, line_key: str) -> dict | None:
    """The stored answer of a product line (None in a database built before schema 13)."""
    return _stored(con, "SELECT answers FROM line_answers WHERE line_key = ?", line_key)


def device_verdicts(con: sqlite3.Connection, device_id: str) -> dict | None:
    """The stored answer of a measured device row (None in a database built before schema 12)."""
    return _stored(con, "SELECT answers FROM devices WHERE id = ? AND answers IS NOT NULL", device_id)


def public_verdicts(con: sqlite3.Connection, model_id: str) -> dict | None:
    """The stored answer of a public model (None in a database built before schema 10)."""
    return _stored(con, "SELECT answers FROM public_answers WHERE model_id = ?", model_id)


def hard_disk_figures(con: sqlite3.Connection) -> list[dict]:
    """The 1-job, queue-depth-1 figures of the public models that are hard disks
    (:func:`diskq.identity.disks.figure_families`), each with its source and quote; [] in a
    database without the public tables."""
    from diskq.identity.disks import figure_families

    out = []
    for family, (rpm, _) in figure_families().items():
        try:
            rows = con.execute(
                "SELECT m.name, f.iops, f.numjobs, f.method_class, f.write_cache, f.source_id, f.quote, f.url "
                "FROM figures f JOIN models m ON m.id = f.model_id WHERE m.family_key = ? AND f.numjobs = 1 "
                "AND f.iodepth = 1 ORDER BY f.source_id, f.seq",
                (family,),
            ).fetchall()
        except sqlite3.OperationalError:
            return []
        keys = ("name", "iops", "numjobs", "method_class", "write_cache", "source_id", "quote", "url")
        out += [{**dict(zip(keys, r, strict=True)), "rpm": rpm} for r in rows]
    return out


def hard_disk(con: sqlite3.Connection, query: str, *, reported_rpm: int | None = None) -> dict | None:
    """What a hard disk drive the query names is (:mod:`diskq.identity.disks`) and its answer per
    use (:mod:`diskq.analyse.harddisk`), or None when no source places the string as a hard disk.

    ``reported_rpm``: the nominal rotation rate the drive itself reports (``smartctl``'s
    ``rotation_rate``, read by ``identify``): where its sources leave the rate out, the drive's
    report gives it; where no source places the model, a drive that reports one is a hard disk by
    its own report."""
    from diskq.analyse import harddisk
    from diskq.identity import disks

    found = disks.recognise(query)
    if found is None and not reported_rpm:
        return None
    if found is not None:
        out = found.to_dict()
        if not found.rpm and reported_rpm:
            out["rpm"], out["rpm_source"], out["text"] = reported_rpm, REPORTED_RPM, found.text(reported_rpm)
    else:
        out = {
            "kind": disks.KIND,
            "query": query,
            "model": query,
            "vendor": None,
            "family": None,
            "how": "reported rotation rate",
            "scheme": None,
            "pattern": None,
            "source": REPORTED_RPM,
            "rpm": reported_rpm,
            "rpm_source": REPORTED_RPM,
            "text": f"a {disks.KIND} by its own report ({reported_rpm:,} rpm); no source in the database names "
            "the model",
            "evidence": f"the drive reports a nominal rotation rate of {reported_rpm:,} rpm ({REPORTED_RPM}); "
            "a solid-state drive reports none",
        }
    verdicts = harddisk.answer(out["rpm"], out["rpm_source"], hard_disk_figures(con))
    return {**out, "verdicts": verdicts}


#: Where a rotation rate the drive reports comes from: ATA IDENTIFY DEVICE word 217 and the SCSI
#: Block Device Characteristics VPD page, as smartctl prints them.
REPORTED_RPM = "reported by the drive: smartctl rotation_rate"


def lines(answers: dict | None, osds: str | None = None) -> list[str]:
    """The answer in a few lines of text, one per use: tier (or "no verdict", with the best case
    the evidence allows), basis, first reason; after Ceph WAL/DB the OSDs per device (``osds``:
    the row's own text of the same count, else the answer's)."""
    if not answers:
        return []
    out = []
    for use in model.USES:
        a = answers.get(use) or {}
        tier = a.get("tier", model.UNKNOWN)
        first = (a.get("reasons") or ["-"])[0]
        head = tier
        if tier == model.UNKNOWN:
            head = "not applicable" if first.startswith("not applicable") else "no verdict"
            if a.get("ceiling"):
                head += f" (at most {a['ceiling']})"
        out.append(f"{model.NAMES[use]}: {head}, basis {a.get('basis', model.UNKNOWN)}: {first}")
        count = a.get("osds_per_device")
        if count is not None:
            n = count.get("n")
            text = osds or (
                ("none" if n == 0 else f"\u2265 {n}" if count.get("at_least") else str(n))
                if n is not None
                else f"no count (at most {count['at_most']})"
                if count.get("at_most") is not None
                else "no count"
            )
            out.append(f"  OSDs per device: {text}: {(count.get('reasons') or ['-'])[0]}")
    for c in dict.fromkeys(c for use in model.USES for c in (answers.get(use) or {}).get("caveats") or []):
        out.append(f"  {c}")
    plp = answers.get("power_loss_protection")  # a line's answer carries the verdict of its facts
    if plp:
        shown = "not applicable" if plp.get("rule") == "not_applicable" else plp.get("verdict")
        out.append(f"power-loss protection: {shown}, rule {plp.get('rule')}: {(plp.get('reasons') or ['-'])[0]}")
    return out
