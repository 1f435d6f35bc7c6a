"""What ``diskq lookup`` and a device's page show of one device beyond its ``devices`` row:
the OSD count as text, the figures caught in a conflict, the submissions listed but not
aggregated, the median block-size profiles and the sustained-write figures, each read from
devices.db (an open connection whose rows are :class:`sqlite3.Row`).
"""

from __future__ import annotations

import json
import sqlite3

from diskq.database.settings import setting_slug


def osds_text(n: int | None, limited_by_sweep) -> str | None:
    """OSDs per device as shown: ``'4'``, ``'≥ 16'`` when the sweep's largest job count still
    passed (the device may carry more; never extrapolated), ``'none'`` when not even one OSD
    gets the commit rate it needs."""
    if n is None:
        return None
    if n == 0:
        return "none"
    return f"\u2265 {n}" if limited_by_sweep else str(n)


def osds_rate_text(per_osd_iops: float | None, demand_iops: float | None) -> str | None:
    """The commit rate beside the count: ``'24,055/s each'`` (None when there is no count)."""
    if per_osd_iops is None:
        return None
    return f"{per_osd_iops:,.0f}/s each"


#: What became of a figure in a conflict, by (decided by other evidence, held out of the verdicts).
CONFLICT_STATUS = {
    (False, False): "in the verdicts only as a lower bound (undecided)",
    (False, True): "held out of the verdicts (undecided)",
    (True, False): "kept: the model's other evidence decided",
    (True, True): "set aside: the model's other evidence decided",
}


#: The prefix :mod:`diskq.analyse.plausibility` gives a decided conflict's text (a lookup does not
#: import that module and the JSON models it needs; a test checks the two agree).
DECIDED = "conflict decided: "


def conflict_points(con: sqlite3.Connection, device_id: str) -> list[dict]:
    """Every figure of the device's submissions that is part of a conflict, as submitted, with the
    conflict, what became of the figure (``status``) and whether it is held out of the verdicts.
    Both figures of each pair are listed."""
    query = (
        "SELECT p.submission_id, r.write_cache, p.numjobs, p.iops, p.{text}, {held} FROM points p "
        "JOIN runs r ON r.submission_id = p.submission_id AND r.run = p.run "
        "JOIN submissions s ON s.id = p.submission_id "
        "WHERE s.device_id = ? AND p.{text} IS NOT NULL ORDER BY p.submission_id, p.run, p.seq"
    )
    try:
        rows = con.execute(query.format(text="conflict", held="p.held"), (device_id,)).fetchall()
    except sqlite3.OperationalError:  # a database from before schema 8: its points held out, as it said why
        rows = con.execute(query.format(text="questionable", held="1"), (device_id,)).fetchall()
    return [
        {
            "submission_id": r[0],
            "write_cache": r[1],
            "numjobs": r[2],
            "iops": r[3],
            "reason": r[4],
            "held": bool(r[5]),
            "status": CONFLICT_STATUS[(r[4].startswith(DECIDED), bool(r[5]))],
        }
        for r in rows
    ]


SIZE_COLUMNS = (
    "block_size",
    "iops",
    "iops_min",
    "iops_max",
    "bw_bytes",
    "lat_p50_us",
    "lat_p99_us",
    "sync_p50_us",
    "sync_p99_us",
    "n",
)


def size_profiles(con: sqlite3.Connection, device_id: str) -> dict[str, list[dict]]:
    """The device's median block-size profile per setting ('on', 'off-kernel', ...), smallest
    size first; empty when no submission measured one (or a database from before schema 5)."""
    try:
        rows = con.execute(
            "SELECT * FROM device_sizes WHERE device_id = ? ORDER BY write_cache, knob, block_size", (device_id,)
        ).fetchall()
    except sqlite3.OperationalError:
        return {}
    out: dict[str, list[dict]] = {}
    for r in rows:
        out.setdefault(setting_slug(r["write_cache"], r["knob"]), []).append({k: r[k] for k in SIZE_COLUMNS})
    return out


def excluded_submissions(con: sqlite3.Connection, device_id: str) -> list[dict]:
    """The device's submissions that are listed but not aggregated, with why."""
    rows = con.execute(
        "SELECT id, path, excluded FROM submissions WHERE device_id = ? AND aggregated = 0 ORDER BY id", (device_id,)
    )
    return [{"submission_id": r[0], "path": r[1], "reason": r[2]} for r in rows]


def sustained_writes(con: sqlite3.Connection, device_id: str) -> tuple[list[dict], list[dict]]:
    """(the device's sustained-write figures, its measurements that are not aggregated).

    Each figure is a ``device_sustained`` row with ``setting`` (``'on'``, ``'off-kernel'``, ...),
    ``summary`` (one line, :func:`diskq.database.sustained.summary`) and ``writes``: the
    counted measurements, each with its samples and cliff. A measurement that is not counted
    (interrupted, of another method version, or of a submission that is not aggregated) is in the
    second list with the reason. A database built before these tables existed (schema version 4)
    has none: both lists are empty."""
    from diskq.database import sustained
    from diskq.database.settings import knob

    if con.execute("SELECT 1 FROM sqlite_master WHERE name = 'device_sustained'").fetchone() is None:
        return [], []
    figures = []
    for r in con.execute("SELECT * FROM device_sustained WHERE device_id = ?", (device_id,)):
        agg = {k: r[k] for k in sustained.DEVICE_COLUMNS if k != "device_id"}
        agg["setting"] = setting_slug(agg["write_cache"], agg["knob"])
        agg["summary"] = sustained.summary(agg)
        agg["writes"] = []
        figures.append(agg)
    figures.sort(
        key=lambda a: (
            sustained.VARIANTS.index(a["variant"]) if a["variant"] in sustained.VARIANTS else 9,
            a["setting"],
        )
    )
    by_key = {(a["variant"], a["write_cache"], a["knob"]): a for a in figures}
    left_out = []
    rows = con.execute(
        "SELECT m.*, s.aggregated, s.excluded FROM sustained m JOIN submissions s ON s.id = m.submission_id "
        "WHERE s.device_id = ? ORDER BY m.submission_id, m.seq",
        (device_id,),
    )
    for r in rows:
        m = {k: r[k] for k in sustained.COLUMNS}
        m["bw_samples"] = json.loads(m["bw_samples"])
        m["interrupted"] = bool(m["interrupted"])
        m["cliff_found"] = optional_bool(m["cliff_found"])
        m["knob"] = knob(m["cache_mechanism"], m["write_cache"])
        m["setting"] = setting_slug(m["write_cache"], m["knob"])
        agg = by_key.get((m["variant"], m["write_cache"], m["knob"]))
        if not r["aggregated"]:
            m["reason"] = f"its submission is not aggregated: {r['excluded'] or 'not counted'}"
        elif m["interrupted"]:
            m["reason"] = "interrupted before its budget was written"
        elif agg is None or agg["method_version"] != m["method_version"]:
            m["reason"] = f"method version v{m['method_version']}, not the device's most common one"
        else:
            agg["writes"].append(m)
            continue
        left_out.append(m)
    return figures, left_out


def optional_bool(value) -> bool | None:
    return None if value is None else bool(value)
