"""One answer per use (Ceph WAL/DB, ZFS SLOG, etcd, PostgreSQL WAL): a tier and the evidence it
rests on, the same shape for a drive diskq measured, a model known from public figures and a
product line known from its datasheet.

Each use gets ``{"tier", "basis", "reasons", ...}``: ``tier`` is one of :data:`TIERS` or
``unknown``; ``basis`` one of :data:`BASES`, strongest first (criteria.toml ``[answer]``):

* ``measured``: diskq's own measurement (the verdicts of :mod:`diskq.analyse.verdicts`);
* ``public-figure``: a published figure, whose method class decides what it can claim: only a
  flush per write at a known cache state gives a tier; a FUA or O_SYNC figure of unknown path,
  a figure at an unknown cache state, or a 4 KiB figure standing in for another write size is an
  upper bound (``ceiling``) that decides only "unsuitable";
* ``datasheet`` and ``estimate``: a product line's documented facts bound the tier, and the
  figures of its peers estimate it (:mod:`diskq.analyse.estimate`);
* ``unknown``: nothing decides; the reasons say what to measure next.

The Ceph WAL/DB answer carries the OSDs per device of the same model (``osds_per_device``): its
count never exceeds what the tier allows (``[osds_per_device] tier_max_osds``).
:func:`combine` joins the answers of several bases of one drive. Pure: the callers read
devices.db or a document and pass plain data.

>>> a = from_public([{"method_class": "fua/write/raw/direct", "write_cache": "unknown", "iops_1job": 61000.0}])
>>> (a["ceph_waldb"]["tier"], a["ceph_waldb"]["basis"], a["ceph_waldb"]["ceiling"])
('unknown', 'public-figure', 'excellent')
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence

from diskq.analyse import criteria

USES = ("ceph_waldb", "zfs_slog", "etcd", "postgres_wal")
NAMES = {"ceph_waldb": "Ceph WAL/DB", "zfs_slog": "ZFS SLOG", "etcd": "etcd", "postgres_wal": "PostgreSQL WAL"}
#: Tiers, best first; ``unknown`` is none of them.
TIERS = ("excellent", "good", "marginal", "unsuitable")
UNKNOWN = "unknown"
BASES = ("measured", "public-figure", "datasheet", "estimate", "unknown")
MEASURE = {
    "ceph_waldb": "measure it with `diskq bench` (a flush per write, cache on and off with the drive's own knob)",
    "zfs_slog": "measure the 128 KiB step with `diskq bench --profile sizes`",
    "etcd": "measure the 8 KiB step with `diskq bench --profile sizes`",
    "postgres_wal": "measure the 8 KiB step with `diskq bench --profile sizes`",
}


def _rank(tier: str | None) -> int:
    return TIERS.index(tier) if tier in TIERS else -1


def lower(a: str | None, b: str | None) -> str | None:
    """The lower of two tiers (None: no bound)."""
    if a is None or b is None:
        return a or b
    return a if _rank(a) >= _rank(b) else b


def tier_of(use: str, value: float, crit: dict | None = None) -> str:
    """The tier of a figure: 1-job IOPS (Ceph), MB/s at 128 KiB (SLOG), p99 ms (etcd), commits/s."""
    crit = crit or criteria.load()
    if use == "etcd":
        a = crit["answer"]
        bounds = [
            ("excellent", a["etcd_excellent_ms"]),
            ("good", a["etcd_good_ms"]),
            ("marginal", crit["etcd"]["p99_fdatasync_ms"]),
        ]
        return next((t for t, high in bounds if value < high), "unsuitable")
    if use == "zfs_slog":
        s = crit["zfs_slog"]
        bounds = [("excellent", s["excellent_mb_s"]), ("good", s["good_mb_s"]), ("marginal", s["marginal_mb_s"])]
    elif use == "postgres_wal":
        a = crit["answer"]
        bounds = [
            ("excellent", a["postgres_excellent"]),
            ("good", a["postgres_good"]),
            ("marginal", a["postgres_marginal"]),
        ]
    else:
        c = crit["ceph_waldb"]
        bounds = [("excellent", c["excellent"]), ("good", c["good"]), ("marginal", c["marginal"])]
    return next((t for t, low in bounds if value >= low), "unsuitable")


def osd_cap(tier: str | None, crit: dict | None = None) -> int | None:
    """The most OSDs per device a Ceph WAL/DB tier allows (None: no cap)."""
    caps = (crit or criteria.load())["osds_per_device"].get("tier_max_osds", {})
    return caps.get(tier) if tier else None


def verdict(tier: str, basis: str, reasons: Iterable[str], **extra) -> dict:
    """One use's answer in the shared shape (extra fields after the three the shape names)."""
    return {"tier": tier, "basis": basis, "reasons": list(reasons), **{k: v for k, v in extra.items() if v is not None}}


def _bounded(use: str, value: float, basis: str, why: str, crit: dict) -> dict:
    """A figure that is only a best case: a tier only when even it is unsuitable."""
    ceiling = tier_of(use, value, crit)
    if ceiling == "unsuitable":
        return verdict("unsuitable", basis, [f"{why}: even this best case is unsuitable"], figure=value)
    return verdict(
        UNKNOWN, basis, [f"{why}: a best case, at most {ceiling}", MEASURE[use]], ceiling=ceiling, figure=value
    )


# ---------------------------------------------------------------- measured verdicts (and legacy rows)


def class_words(method_class: str | None) -> str:
    """What a figure's method sent to the drive, in the words of its class (never "fdatasync"
    for a figure measured otherwise): ``flush per write · sequential · raw device · O_DIRECT``."""
    from diskq.analyse import methodclass

    return methodclass.label(method_class or methodclass.MAIN)


def from_verdicts(
    verdicts: dict | None,
    *,
    method_class: str = "flush/write/raw/direct",
    public: bool = False,
    cache_known: bool = True,
    notes: Sequence[str] = (),
    crit: dict | None = None,
) -> dict[str, dict]:
    """The answer for a curve's verdicts (``Verdicts`` as JSON). ``public``: the figures are a
    source's (legacy rows), not diskq's measurement; with a method class other than a flush per
    write, or at an unknown cache state (``cache_known`` False), they are upper bounds."""
    crit = crit or criteria.load()
    v = verdicts or {}
    basis = "public-figure" if public else "measured"
    bound = public and (method_class.split("/", 1)[0] != "flush" or not cache_known)
    why_bound = []
    if public and method_class.split("/", 1)[0] != "flush":
        why_bound.append("a figure of this class may skip the flush")
    if public and not cache_known:
        why_bound.append("the source does not say the write-cache state")
    caveats = [n for n in notes if n.startswith("caveat:")] + [
        n for n in v.get("notes") or [] if n.startswith("caveat:")
    ]
    out = {
        "ceph_waldb": _ceph(
            v.get("ceph_waldb") or {}, v.get("osds_per_device") or {}, basis, bound, why_bound, method_class, crit
        ),
        "zfs_slog": _sized("zfs_slog", v.get("zfs_slog") or {}, basis, bound, why_bound, crit),
        "etcd": _sized("etcd", v.get("etcd") or {}, basis, bound, why_bound, crit),
        "postgres_wal": _sized("postgres_wal", v.get("postgres_wal") or {}, basis, bound, why_bound, crit),
    }
    for use in USES:
        if caveats:
            out[use]["caveats"] = caveats
        if public:
            out[use]["method_class"] = method_class
    return out


def _no_figure(use: str, reasons: list[str]) -> dict:
    return verdict(UNKNOWN, "unknown", [*(reasons or ["no figure"]), "no verdict: " + MEASURE[use]])


def _ceph(ceph: dict, osds: dict, basis: str, bound: bool, why_bound: list[str], method_class: str, crit: dict) -> dict:
    iops = ceph.get("iops")
    if ceph.get("tier") is None or iops is None:
        out = _no_figure("ceph_waldb", list(ceph.get("reasons") or []))
        out["osds_per_device"] = {"n": None, "reasons": ["no OSD count without a verdict"]}
        return out
    what = f"1-job IOPS {iops:,.0f} ({class_words(method_class)})"
    if bound:
        out = _bounded("ceph_waldb", iops, basis, "; ".join([what, *why_bound]), crit)
    else:
        out = verdict(
            ceph["tier"],
            basis,
            [f"{what} at cache {ceph.get('cache_state')}: {ceph['tier']}"]
            + [r for r in ceph.get("reasons") or [] if r.startswith(("cache ", "rests on", "measured through"))],
            figure=iops,
            cache_state=ceph.get("cache_state"),
        )
    out["osds_per_device"] = carry(osds, out["tier"], out.get("ceiling"), crit)
    return out


def carry(osds: dict, tier: str, ceiling: str | None, crit: dict | None = None) -> dict:
    """OSDs per device from the verdict's count, bounded by the tier (or, for an unknown tier,
    given only as "at most" under its ceiling): ``{n, at_least, at_most, per_osd_iops, reasons}``."""
    crit = crit or criteria.load()
    n = osds.get("n")
    reasons = list(osds.get("reasons") or [])
    if n is None:
        return {"n": None, "reasons": reasons or ["no OSD count: no figure"]}
    if tier == UNKNOWN:
        cap = osd_cap(ceiling, crit)
        most = n if cap is None else min(n, cap)
        return {
            "n": None,
            "at_most": most,
            "reasons": [f"no OSD count: the figures are a best case, at most {most}", *reasons],
        }
    cap = osd_cap(tier, crit)
    if cap is not None and n > cap:
        reasons = [f"{cap or 'none'}: the tier {tier} allows at most {cap} (the curve alone would allow {n})"] + reasons
        return {"n": cap, "at_least": False, "per_osd_iops": None, "capped_by_tier": tier, "reasons": reasons}
    return {
        "n": n,
        "at_least": bool(osds.get("limited_by_sweep")),
        "per_osd_iops": osds.get("per_osd_iops"),
        "reasons": reasons,
    }


def _sized(use: str, v: dict, basis: str, bound: bool, why_bound: list[str], crit: dict) -> dict:
    """etcd, PostgreSQL WAL and the SLOG: a tier from a step at the use's write size; a 4 KiB
    stand-in (or a public bound) is a best case."""
    reasons = list(v.get("reasons") or [])
    if use == "zfs_slog":
        value = v.get("bw_bytes")
        value = None if value is None else value / 1e6
        best = v.get("bw_bytes_at_most")
        best = None if best is None else best / 1e6
    elif use == "etcd":
        value, best = v.get("p99_fdatasync_ms"), None
    else:
        value, best = v.get("commits_per_s"), None
    if value is None and best is None:
        if use == "zfs_slog" and v.get("tier") is not None:  # a tier without its figure: older analyses
            return verdict(v["tier"], basis, reasons, cache_state=v.get("cache_state"))
        return _no_figure(use, reasons)
    # the verdicts read etcd off the 4 KiB p99 when no 8 KiB step was measured (named so in its
    # reasons, as the bench says it); PostgreSQL's and the SLOG's 4 KiB stand-ins are best cases
    estimated = v.get("basis") not in (None, "measured") and use != "etcd"
    if value is None or estimated or bound:
        figure = best if value is None else value
        what = {
            "zfs_slog": f"synchronous 128 KiB writes at most {figure:,.0f} MB/s",
            "etcd": f"p99 latency of a write and its flush at least {figure:,.2f} ms",
            "postgres_wal": f"one session commits at most {figure:,.0f} times per second",
        }[use]
        size = (
            "by the 4 KiB figure (a larger write and its flush never complete sooner)"
            if (estimated or value is None)
            else f"at {v.get('block_size') or 4096} bytes"
        )
        out = _bounded(use, figure, basis, "; ".join([f"{what} {size}", *why_bound]), crit)
        out["reasons"] += [r for r in reasons if not r.startswith(("estimated from 4 KiB", "synchronous 128"))]
        return out
    return verdict(
        tier_of(use, value, crit),
        basis,
        reasons,
        figure=value,
        cache_state=v.get("cache_state"),
        block_size=v.get("block_size"),
    )


# ---------------------------------------------------------------- public figures of a model


def _on_the_drive(class_id: str) -> bool:
    """A class whose figures measure the drive alone, 4 KiB one write at a time: a raw device with
    O_DIRECT, no queue, no other block size. A file on a filesystem (its journal, its merged
    flushes) or the page cache may be slower or faster than the drive, so such a figure is neither
    a tier nor a bound; nor is a figure of a queue or of larger writes, which measure another thing.

    >>> _on_the_drive("flush/write/raw/direct"), _on_the_drive("fua/write/raw/direct/qd32")
    (True, False)
    """
    parts = class_id.split("/")
    four_k = {"4k", "bs4k", "4kib", "4096", "bs4096"}  # a block size named in the class: 4 KiB only
    return (
        len(parts) >= 4 and parts[2] == "raw" and parts[3] == "direct" and all(p.lower() in four_k for p in parts[4:])
    )


def from_public(classes: Sequence[dict], figures: Sequence[dict] = (), crit: dict | None = None) -> dict[str, dict]:
    """The answer for a public model from its ``model_class`` rows (and its figures, for the OSD
    count): the best 1-job figure of a flush per write at a known cache state gives the tier;
    every other 1-job figure bounds it from above."""
    from diskq.analyse import osds as osds_rule

    crit = crit or criteria.load()
    rows = [c for c in classes if c.get("iops_1job") is not None and _on_the_drive(c["method_class"])]
    decisive = [c for c in rows if c["method_class"].startswith("flush/") and c["write_cache"] in ("on", "off")]
    bounds = [c for c in rows if c not in decisive]
    aside = sorted({c["method_class"] for c in classes if not _on_the_drive(c["method_class"])})

    def label(c: dict) -> str:
        return (
            f"1-job IOPS {c['iops_1job']:,.0f} ({class_words(c['method_class'])}, "
            f"cache {c['write_cache']}; {', '.join(c.get('sources') or [])})"
        )

    ceiling_row = min(bounds, key=lambda c: c["iops_1job"], default=None)
    if not decisive:
        if ceiling_row is None:
            none = (
                [
                    "no 1-job figure of the drive itself (raw device, O_DIRECT, one write at a time) in the public "
                    "sources"
                ]
                if classes
                else ["no public figure"]
            )
            none += [
                f"not used: {class_words(a)} (not 4 KiB writes one at a time on the raw device: it measures "
                "a filesystem, the page cache, a queue or larger writes too)"
                for a in aside
            ]
            return {use: _no_figure(use, list(none)) for use in USES}
        why = "may skip the flush" if not ceiling_row["method_class"].startswith("flush/") else "cache state not known"
        ceph = _bounded("ceph_waldb", ceiling_row["iops_1job"], "public-figure", f"{label(ceiling_row)}: {why}", crit)
        ceph["osds_per_device"] = {"n": None, "reasons": ["no OSD count: the figures are a best case"]}
        ceph["method_class"] = ceiling_row["method_class"]
        src = ceph
    else:
        best = max(decisive, key=lambda c: c["iops_1job"])
        tier = tier_of("ceph_waldb", best["iops_1job"], crit)
        reasons = [f"{label(best)}: {tier}"]
        if ceiling_row is not None and _rank(tier_of("ceph_waldb", ceiling_row["iops_1job"], crit)) > _rank(tier):
            capped = tier_of("ceph_waldb", ceiling_row["iops_1job"], crit)
            reasons.append(f"conflict: {label(ceiling_row)} is a best case below it: the tier is held at {capped}")
            tier = capped
        curve: dict[int, list[float]] = {}
        for f in figures:
            if (f.get("method_class"), f.get("write_cache"), f.get("iodepth", 1)) == (
                best["method_class"],
                best["write_cache"],
                1,
            ):
                curve.setdefault(int(f["numjobs"]), []).append(float(f["iops"]))
        share = osds_rule.osds_per_device(
            ((n, statistics.median(v)) for n, v in curve.items()), osds_rule.demand_iops(crit["osds_per_device"])
        )
        ceph = verdict(
            tier,
            "public-figure",
            reasons,
            figure=best["iops_1job"],
            cache_state=best["write_cache"],
            method_class=best["method_class"],
        )
        ceph["osds_per_device"] = carry(
            {
                "n": share.n if curve else None,
                "limited_by_sweep": share.limited_by_sweep,
                "per_osd_iops": share.per_osd_iops,
                "reasons": share.reasons,
            },
            tier,
            None,
            crit,
        )
        src = best
    figure = src["iops_1job"] if "iops_1job" in src else src["figure"]
    out = {"ceph_waldb": ceph}
    for use in ("zfs_slog", "postgres_wal"):
        value = figure * crit["zfs_slog"]["block_size"] / 1e6 if use == "zfs_slog" else figure
        what = (
            f"synchronous 128 KiB writes could give at most {value:,.0f} MB/s by the 4 KiB figure"
            if use == "zfs_slog"
            else f"one session commits at most {value:,.0f} times per second by the 4 KiB figure"
        )
        out[use] = _bounded(use, value, "public-figure", what, crit)
    out["etcd"] = _no_figure("etcd", ["the public figures give no fdatasync latency"])
    for use in ("zfs_slog", "postgres_wal", "etcd"):
        out[use]["method_class"] = ceph.get("method_class")
    return out


def combine(*answers: dict[str, dict] | None) -> dict[str, dict]:
    """Answers of one drive by several bases, strongest first, into one: per use the strongest
    that decides a tier, held under the ceilings of the stronger ones; else the strongest
    evidence, its ceiling and what to measure."""
    given = [a for a in answers if a]
    out = {}
    for use in USES:
        cands = [a[use] for a in given if use in a]
        if not cands:
            out[use] = _no_figure(use, [])
            continue
        ceiling = None
        for c in cands:
            if c["tier"] in TIERS:
                chosen = dict(c, reasons=list(c["reasons"]))
                if ceiling is not None and lower(c["tier"], ceiling) != c["tier"]:
                    chosen["reasons"].append(f"held at {ceiling}, the best case the stronger evidence allows")
                    chosen["tier"] = ceiling
                break
            ceiling = lower(ceiling, c.get("ceiling"))
        else:
            first = next((c for c in cands if c["basis"] != "unknown"), cands[0])
            chosen = dict(first, reasons=[r for c in cands for r in c["reasons"]])
            if ceiling is not None:
                chosen["ceiling"] = ceiling
        out[use] = chosen
    return out
