"""One OSD's row of ``diskq cluster``'s report: its devices, BlueFS usage and commit latencies
against the database's prediction, spillover with its cause, and the mClock capacity in force
(from ``config show`` or ``config dump``) against what its WAL/DB device gives."""

from __future__ import annotations

import re
from dataclasses import asdict

from diskq.cluster import explain, judge
from diskq.cluster.inputs import Inputs
from diskq.cluster.merge import encrypted as inp_encrypted
from diskq.cluster.models import Matcher, per_osd_rate
from diskq.cluster.parse import OsdMeta

#: The BlueFS counters a row shows.
BLUEFS_SHOWN = ("db_total_bytes", "db_used_bytes", "slow_total_bytes", "slow_used_bytes")
_MCLOCK_RELEASE = 17  # mclock_scheduler is the default op queue from Quincy


def _major(version: str | None) -> int | None:
    m = re.match(r"(\d+)\.", version or "")
    return int(m.group(1)) if m else None


def _mclock(o: OsdMeta, kind: str, inp: Inputs, crit: dict) -> dict:
    """The capacity in force on ``o`` and where it comes from."""
    option = f"osd_mclock_max_capacity_iops_{kind}"
    shown = inp.config_show.get(o.osd, {})
    if option in shown:
        return {"option": option, "value": float(shown[option]), "source": f"config show of osd.{o.osd}"}
    for who in (f"osd.{o.osd}", "osd", "global"):
        for e in inp.config or []:
            # a mask other than the OSD's own device class (a host, a CRUSH location) is not followed
            if e.who == who and e.option == option and e.mask in ("", f"class:{kind}"):
                try:
                    return {
                        "option": option,
                        "value": float(e.value),
                        "source": f"config dump ({who}{'/' + e.mask if e.mask else ''})",
                    }
                except ValueError:
                    continue
    return {"option": option, "value": float(crit[f"mclock_default_{kind}"]), "source": "Ceph's default"}


def _option(o: OsdMeta, inp: Inputs, option: str) -> str | None:
    """An option in force on ``o``: its config show, else the config dump (OSD, osd, global)."""
    if option in inp.config_show.get(o.osd, {}):
        return inp.config_show[o.osd][option]
    for who in (f"osd.{o.osd}", "osd", "global"):
        for e in inp.config or []:
            if e.who == who and e.option == option:
                return e.value
    return None


def _op_queue(o: OsdMeta, inp: Inputs) -> str | None:
    return _option(o, inp, "osd_op_queue")


def spill_context(o: OsdMeta | None, inp: Inputs) -> dict:
    """What explains a spillover of ``o``: its DB size, release, RocksDB levels, volume policy."""
    if o is None:
        return {}
    rocks = explain.rocksdb_levels(_option(o, inp, "bluestore_rocksdb_options"))
    return {
        "db_size": o.db.size_bytes if o.db else None,
        "major": _major(o.version),
        "rocksdb": rocks,
        "policy": _option(o, inp, "bluestore_volume_selection_policy"),
    }


def osd_row(
    o: OsdMeta,
    inp: Inputs,
    match: Matcher,
    crit: dict,
    sharing: int,
    spill,
    findings: list,
    capacities: dict,
    missing: list[str],
) -> dict:
    df = (inp.df or {}).get(o.osd)
    commit_dev = o.wal or o.db or o.data
    facts = match.facts(commit_dev.model)
    perf = inp.perf.get(o.osd)
    row = {
        "osd": o.osd,
        "host": o.host,
        "objectstore": o.objectstore,
        "version": o.version,
        "status": df.status if df else None,
        "device_class": df.device_class if df else None,
        "data": asdict(o.data),
        "db": asdict(o.db) if o.db else None,
        "wal": asdict(o.wal) if o.wal else None,
        # unknown for an OSD no metadata or listing describes: it may have a DB device
        "commit_device_shared_by": sharing if o.devices_known else None,
        "commit_device": ("wal" if o.wal else "db" if o.db else "data") if o.devices_known else None,
        "database": facts,
        "bluefs": None,
        "kv_ms": None,
        "predicted_commit_ms": None,
        "mclock": None,
        "per_osd_rate": None,
        "bench_iops": inp.bench.get(o.osd),
        "notes": list(o.notes),
    }
    if df and df.status and df.status != "up":
        row["notes"].append(f"{df.status} (osd df / osd tree)")
    row["caveats"] = [
        c
        for role, dev in (("data", o.data), ("DB", o.db), ("WAL", o.wal))
        if dev is not None
        for c in explain.caveats(role, dev.names, dev.model, dev.rotational, inp_encrypted(inp, o.osd, role))
    ]
    if o.objectstore == "filestore" or (perf is not None and perf.store == "filestore"):
        row["commit_device"] = "journal"
        if o.journal is not None:
            row["journal"] = asdict(o.journal)
        if perf is not None:
            row["kv_ms"] = {k: round(v.avg_s * 1000, 4) for k, v in perf.latencies.items()}
        return row
    if o.db is not None:
        for f in (
            judge.db_rotational(o.osd, o.db.rotational),
            judge.db_small(o.osd, o.db.size_bytes, o.data.size_bytes, crit),
        ):
            if f:
                findings.append(f)
    if perf is not None:
        b = perf.bluefs
        row["bluefs"] = {k: b.get(k) for k in BLUEFS_SHOWN}
        row["kv_ms"] = {k: round(v.avg_s * 1000, 4) for k, v in perf.latencies.items()}
        if perf.missing:
            row["notes"].append("perf dump lacks " + ", ".join(perf.missing))
        if (
            o.db is not None
            and not spill
            and (f := judge.spillover(o.osd, b.get("slow_used_bytes"), b.get("db_used_bytes"), b.get("db_total_bytes")))
        ):
            ctx = spill_context(o, inp)
            cause, f.fixes, f.config = explain.spillover(
                o.osd,
                b.get("slow_used_bytes"),
                b.get("db_used_bytes"),
                b.get("db_total_bytes"),
                ctx["major"],
                ctx["rocksdb"],
                ctx["policy"],
            )
            f.message += f". Cause: {cause}"
            findings.append(f)
        if facts and "kv_commit_lat" in perf.latencies:
            pred = judge.predicted_commit_s(facts["curve"], sharing, facts["p99_sync_us"])
            if pred:
                row["predicted_commit_ms"] = {"value": round(pred[0] * 1000, 4), "from": pred[1]}
                role = {"wal": "WAL device", "db": "DB device", "data": "data device"}[row["commit_device"]]
                if f := judge.commit_latency(o.osd, perf.latencies["kv_commit_lat"].avg_s, pred[0], crit, role):
                    f.evidence["prediction"] = pred[1]
                    findings.append(f)
    elif inp.perf:
        row["notes"].append("no perf dump of this OSD (it did not answer, or was not collected)")
    _judge_mclock(o, row, inp, facts, sharing, crit, findings, capacities)
    return row


def _judge_mclock(
    o: OsdMeta, row: dict, inp: Inputs, facts: dict | None, sharing: int, crit: dict, findings: list, capacities: dict
) -> None:
    if inp.config is None and o.osd not in inp.config_show:
        return
    rot = o.data.rotational
    if rot is None and row["device_class"] in ("hdd", "ssd", "nvme"):
        rot = row["device_class"] == "hdd"
    if rot is None:
        row["notes"].append("media unknown: which mClock capacity applies is unknown")
        return
    kind = "hdd" if rot else "ssd"
    queue = _op_queue(o, inp)
    major = _major(o.version)
    if queue is not None and queue != "mclock_scheduler":
        row["notes"].append(f"osd_op_queue is {queue}: mClock capacities are not in force")
        return
    if queue is None and major is not None and major < _MCLOCK_RELEASE:
        row["notes"].append(
            f"Ceph {o.version}: mclock_scheduler is not the default before Quincy; capacities not judged"
        )
        return
    mc = _mclock(o, kind, inp, crit)
    row["mclock"] = mc
    capacities[kind][o.osd] = mc["value"]
    if mc["source"] != "Ceph's default" and (f := judge.mclock_threshold(o.osd, kind, mc["value"], crit)):
        findings.append(f)
    if facts and facts["curve"]:
        rate = per_osd_rate(facts["curve"], sharing)
        row["per_osd_rate"] = None if rate is None else round(rate, 1)
        if rate is not None and (f := judge.mclock_vs_device(o.osd, kind, mc["value"], rate, crit)):
            findings.append(f)
