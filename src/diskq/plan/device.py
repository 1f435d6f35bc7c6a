"""The WAL/DB device a plan is for: from a result document (or a submission) or from devices.db.

Either way the plan gets the curve of the best safe cache setting (the one the verdicts use),
the capacity, the protocol, and whether "off" set with the drive's own knob measured faster and
safe than "on" (the write-cache advice). Refusals (:class:`~diskq.errors.PlanRefused`) say why
and what to do: no safe cache setting, a model not in the database (with the closest matches),
a row without a curve.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

from diskq.database.keys import compact
from diskq.errors import PlanRefused
from diskq.plan.model import WalDbDevice

#: Cache mechanisms that switch the drive's own cache (the others: sysfs, the kernel's knob).
DRIVE_KNOBS = ("hdparm", "sdparm", "nvme")


def looks_like_file(arg: str) -> bool:
    """A device argument names a result document when it is an existing file or ends in .json."""
    return arg.lower().endswith(".json") or Path(arg).is_file()


def from_document_file(path: Path) -> WalDbDevice:
    """Read a result document or a submission file and take its best safe run."""
    from diskq.submission.documents import read_document
    from diskq.submission.model import Submission

    loaded = read_document(path, hint="give a result document from `diskq bench`, or a model name from devices.db")
    doc = loaded.result if isinstance(loaded, Submission) else loaded
    legacy = bool(getattr(loaded, "legacy", False))
    return from_document(doc, basis=f"result document {path.name}", legacy=legacy)


def document_verdict(doc, *, legacy: bool = False) -> dict:
    """The Ceph WAL/DB answer of a document, judged now (:mod:`diskq.analyse.answer`)."""
    from diskq.analyse import annotate, answer
    from diskq.database.public import device_class

    judged = annotate(doc.model_copy(deep=True))
    cls = device_class(doc.method.id, doc.device.protocol).id
    known = any(r.write_cache in ("on", "off") for r in doc.runs)
    verdicts = judged.verdicts.model_dump(mode="json") if judged.verdicts is not None else None
    return answer.from_verdicts(verdicts, method_class=cls, public=legacy, cache_known=known, notes=judged.notes)[
        "ceph_waldb"
    ]


def from_document(doc, *, basis: str, legacy: bool = False) -> WalDbDevice:
    from diskq.analyse.verdicts import best_safe_run

    d = doc.device
    label = (
        " ".join(
            x
            for x in (d.vendor if d.vendor and d.model and d.vendor.lower() not in d.model.lower() else None, d.model)
            if x
        )
        or "the device"
    )
    run, points, why = best_safe_run(doc)
    if run is None:
        raise PlanRefused(
            f"{label} has no safe cache setting to plan with",
            why,
            hint="a WAL/DB device must not lose acknowledged commits: measure it with the write "
            "cache off (`diskq bench --cache off`) or choose a drive with power-loss protection",
        )
    knob = "kernel" if run.cache_mechanism == "sysfs" else "drive"
    others = [r for r in doc.runs if r is not run and r.write_cache == "on"]
    faster = (
        run.write_cache == "off" and knob == "drive" and run.cache_mechanism in DRIVE_KNOBS + (None,) and bool(others)
    )
    return WalDbDevice(
        label=label,
        capacity_bytes=d.capacity_bytes,
        protocol=d.protocol,
        curve=[(p.numjobs, p.iops) for p in points],
        cache=run.write_cache,
        knob=knob,
        kernel_model=_kernel_model(d.model, d.vendor, d.protocol),
        basis=basis,
        legacy=legacy,
        cache_off_faster=faster,
        notes=[f"not used: {w}" for w in why],
        verdict=document_verdict(doc, legacy=legacy),
    )


def _kernel_model(model: str | None, vendor: str | None, protocol: str) -> str | None:
    """The model as ``/sys/class/scsi_disk/*/device/model`` shows it: the 16-character product
    field of a SCSI INQUIRY. libata fills it with the first 16 characters of an ATA drive's model;
    a SAS drive reports its product, which smartctl prints after the vendor. NVMe drives have no
    scsi_disk. None when unknown.

    >>> _kernel_model("SAMSUNG MZ7LH960HAJR-00005", None, "ata")
    'SAMSUNG MZ7LH960'
    >>> _kernel_model("SEAGATE ST4000NM0023", "SEAGATE", "scsi")
    'ST4000NM0023'
    """
    if not model or protocol not in ("ata", "scsi"):
        return None
    if protocol == "scsi" and vendor and model.lower().startswith(vendor.lower() + " "):
        model = model[len(vendor) + 1 :]
    cut = model.strip()[:16].rstrip()
    return cut if cut and all(c.isprintable() and c not in '"\\*?[' for c in cut) else None


def from_database(db: Path, query: str) -> WalDbDevice:
    """The devices.db row the query names: the model it equals, else the one model `diskq lookup`
    finds for it (every word of the query in the model's words), or whose line a part number
    names (``SAMSUNG MZ7LH7T6HMLA-00005`` is a PM883). A typo's correction, or a query that
    names several models (``samsung 860``), is refused: a plan is never made from a guess; so is a
    hard disk drive (``ST4000NM0035``), with the reasons of its answer."""
    from diskq.database.lookup import answer
    from diskq.database.matching import EXACT
    from diskq.database.name_search import CANDIDATE
    from diskq.database.settings import setting_slug

    found = answer(db, query, limit=8)
    if found.hard_disk is not None:  # a hard disk is what a WAL/DB device takes the commits from
        disk = found.hard_disk
        raise PlanRefused(
            f"{disk['model']} is {disk['text']}: not a WAL/DB device",
            [*disk["verdicts"]["ceph_waldb"]["reasons"][:3], f"evidence: {disk['evidence']}"],
            hint="a WAL/DB device is a solid-state drive that takes the OSDs' flushed writes from their hard "
            "disks: plan with one (`diskq lookup` answers for a model)",
        )
    matches = found.matches
    if not any(m.is_match or m.kind == CANDIDATE for m in matches):  # a model known only from public figures
        public = from_public(db, query, found)
        if public is not None:
            return public
        if found.lines and not found.ambiguous:  # a line known from its datasheet: nothing to plan from
            from diskq.database.answers import lines as answer_lines

            la = found.lines[0]
            raise PlanRefused(
                f"{la.line['title']} is known from its datasheet only: nothing measured to plan from",
                [t.strip() for t in answer_lines(la.verdicts)[:2]] or ["no answer stored for the line"],
                hint="measure it with `diskq bench`, then plan from the result document",
            )
    q = compact(unicodedata.normalize("NFKC", query))
    # the model the name is, or the model a part number (the string smartctl prints) means
    exact = [m for m in matches if compact(m.device["model"]) == q or m.via is not None]
    # the matches `diskq lookup` answers with: every word of the query in the model (exact); a
    # typo's correction is a guess, and a plan is never made from a guess
    contains = [m for m in matches if m.kind == EXACT]
    names = [f"{m.device['model']} {m.device['firmware']}".strip() for m in matches]
    if not exact and any(m.kind == CANDIDATE for m in matches):  # several models fit: never plan from a guess
        raise PlanRefused(
            f"{query!r} names several models in {db}, none surely",
            [", ".join(names)],
            hint="give the whole model name or the part number smartctl prints (`diskq lookup` lists them)",
        )
    if exact:
        chosen = exact
    elif len({compact(m.device["model"]) for m in contains}) == 1:
        chosen = contains
    elif contains:
        raise PlanRefused(
            f"{query!r} names {len(contains)} devices in {db}", [", ".join(names)], hint="give more of the model name"
        )
    else:
        raise PlanRefused(
            f"no device in {db} is named {query!r}",
            [("closest matches: " + "; ".join(names)) if names else "no close match either"],
            hint="check the name with `diskq lookup`, or plan from a result document of `diskq bench`",
        )
    if len(chosen) > 1:  # same model, several firmware versions: the best ranked one
        chosen.sort(key=lambda m: m.device["rank"])
    m = chosen[0]
    dev = m.device
    label = dev["model"]
    legacy = dev["legacy"] == dev["submissions"] and dev["submissions"] > 0
    if not dev["cache"]:
        unsafe = [f"cache {c['write_cache']}: {c['unsafe_reason']}" for c in m.caches if not c["safe"]]
        raise PlanRefused(
            f"{label} has no safe cache setting in {db}",
            unsafe or ["no setting measured 1 job"],
            hint="measure it with the write cache off (`diskq bench --cache off`)",
        )
    slug = setting_slug(dev["cache"], dev["cache_knob"])
    curve = [(p["numjobs"], p["iops"]) for p in m.curves.get(slug, [])]
    if not curve:
        raise PlanRefused(
            f"{label}: the database row has no curve for its cache setting {slug}",
            hint="rebuild devices.db with `diskq db build`, or plan from a result document",
        )
    best = next((c for c in m.caches if c["write_cache"] == dev["cache"] and c["knob"] == dev["cache_knob"]), None)
    on = [c for c in m.caches if c["write_cache"] == "on" and c["knob"] == "drive"]
    faster = (
        dev["cache"] == "off"
        and dev["cache_knob"] == "drive"
        and best is not None
        and bool(on)
        and all((not c["safe"]) or (c["iops_1job"] or 0) < (best["iops_1job"] or 0) for c in on)
    )
    notes = [f"{dev['submissions']} submission(s) in {db.name}: {dev['verified']} verified, {dev['legacy']} legacy"]
    if m.capacity_note and ", not the " in m.capacity_note:  # the figures are of another capacity of the line
        notes.append(m.capacity_note)
    notes += [n for n in (json.loads(dev["notes"]) if isinstance(dev["notes"], str) else dev["notes"] or [])]
    from diskq.analyse import methodclass

    if dev.get("method_class") and dev["method_class"] != methodclass.MAIN:
        notes.append(
            f"measured as {methodclass.label(dev['method_class'])}, not a flush per write as an OSD's "
            "fdatasync sends: these figures may be higher than the OSD gets (see the methodology's method classes)"
        )
    return WalDbDevice(
        label=label,
        capacity_bytes=dev["capacity_bytes"],
        protocol=dev["protocol"],
        curve=curve,
        cache=dev["cache"],
        knob=dev["cache_knob"],
        kernel_model=None,
        basis=f"{db.name}: median curve of cache {slug}",
        legacy=legacy,
        cache_off_faster=faster,
        notes=notes,
        verdict=(m.verdicts or {}).get("ceph_waldb"),
    )


def from_public(db: Path, query: str, found) -> WalDbDevice | None:
    """The one public model the query names, planned from the figures its answer rests on (their
    class and cache state, one write at a time); None when the lines the one matcher found
    (``found``: :func:`diskq.database.lookup.answer`) have no public model. The answer's basis is
    public-figure, said in the plan's basis and warnings."""
    from diskq.database.evidence import PublicModel
    from diskq.database.locate import open_db
    from diskq.database.lookup import of_asked_capacity

    lines = [la for la in found.lines if la.public and not la.devices]
    if not lines:
        return None
    if found.ambiguous:
        raise PlanRefused(
            f"{query!r} names {len(found.lines)} models in {db}, none surely",
            ["; ".join(la.line["title"] for la in found.lines)],
            hint="give the whole model name or the part number smartctl prints (`diskq lookup` lists them)",
        )
    models = [d for d in lines[0].public if of_asked_capacity(d)]
    if len(models) > 1:  # a model of a stated capacity before one whose source states none
        models = [d for d in models if d["capacity_bytes"]] or models
    if len(models) > 1:
        raise PlanRefused(
            f"{query!r} names {len(models)} models known from public figures in {db}",
            ["; ".join(d["name"] for d in models)],
            hint="give more of the model name (and its capacity)",
        )
    d = models[0] if models else lines[0].public[0]
    m = PublicModel(d["id"], d["name"], d["family_key"], d["capacity_bytes"], d["classes"], d["figures"])
    verdict = (d.get("verdicts") or {}).get("ceph_waldb")
    con = open_db(db)
    try:
        protocol = con.execute("SELECT protocol FROM models WHERE id = ?", (m.id,)).fetchone()[0]
    finally:
        con.close()
    cls, cache = (verdict or {}).get("method_class"), (verdict or {}).get("cache_state")
    figures = [
        f
        for f in m.figures
        if f["method_class"] == cls and f["iodepth"] == 1 and (cache is None or f["write_cache"] == cache)
    ]
    by_jobs: dict[int, list[float]] = {}
    for f in figures:
        by_jobs.setdefault(int(f["numjobs"]), []).append(float(f["iops"]))
    import statistics

    curve = sorted((n, statistics.median(v)) for n, v in by_jobs.items())
    if not curve:
        raise PlanRefused(
            f"{m.name}: no public figure of the drive itself to plan from",
            (verdict or {}).get("reasons") or ["no 1-job figure"],
            hint="measure it with `diskq bench`, then plan from the result document",
        )
    sources = sorted({f["source_id"] for f in figures})
    return WalDbDevice(
        label=m.name,
        capacity_bytes=m.capacity_bytes,
        protocol=protocol or "unknown",
        curve=curve,
        cache=cache or "unknown",
        knob="drive",
        basis=f"{db.name}: public figures ({', '.join(sources)}; "
        f"{verdict.get('tier') if verdict else 'no'} verdict, basis public-figure)",
        legacy=True,
        notes=[f"not measured by diskq: planned from public figures of class {cls}"],
        verdict=verdict,
    )
