"""Public figures in devices.db: the catalogue of ``sources/`` (:mod:`diskq.database.sources`)
written to the ``sources``, ``methods``, ``models``, ``figures`` and ``model_class`` tables.

Every figure keeps its source, method, quote, URL and cache state, and gets the class of what
its method sent to the drive (:mod:`diskq.analyse.methodclass`, from the method and the
interface the source names). Figures are grouped into models (vendor + family + capacity,
:mod:`diskq.database.modelid`). Per model, class, cache state and method, the 1-job figure is the
median of the sources' 1-job figures of that method: never of another class, and never of two
methods (an O_SYNC and an fsync figure of one class are two rows, not one median). Rows are
ranked within their class and cache state only.

A row is weak (:func:`weak_reasons`), flagged wherever it is shown and never ranked, when its
figures come from a buffered run or a run under a second, or when on a raw device another
method of the same class gave the same model, at the same cache state, a figure more than
``[conflict] max_ratio`` times apart (``method_classes.toml``): then the class rule did not hold
for that drive, and both sides are shown rather than one chosen.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
from collections import defaultdict
from dataclasses import dataclass

from diskq.analyse import methodclass
from diskq.analyse.methodclass import Traits
from diskq.database import modelid
from diskq.database.keys import compact
from diskq.database.keys import device_id as slug_id
from diskq.database.sources import Catalogue, PublicFigure, PublicMethod
from diskq.submission import methods as submission_methods

TABLES = {  # name -> order of its rows in the content digest
    "sources": "id",
    "methods": "id",
    "models": "id",
    "figures": "source_id, seq",
    "model_class": "model_id, method_class, write_cache, method_id",
}


def figure_class(fig: PublicFigure, method: PublicMethod) -> methodclass.MethodClass:
    return methodclass.classify(
        Traits(
            method.sync,
            method.pattern,
            method.target,
            method.direct,
            method.iodepth,
            block_size=method.block_bytes,
            platform=method.platform,
        ),
        fig.protocol,
    )


def run_seconds(fig: PublicFigure, method: PublicMethod) -> float | None:
    """How long the figure's run lasted: the method's runtime, else its writes per job times the
    jobs over the IOPS (None when neither is known).

    >>> m = PublicMethod(id="M", command="fio", sync="fdatasync", pattern="write", engine="sync", iodepth=1,
    ...                  direct=False, target="raw", writes=5632, block_size="4k")
    >>> f = PublicFigure(source_id="S", model="M10", interface="NVMe", method_id="M", numjobs=1, iodepth=1,
    ...                  iops=18600, write_cache="unknown", quote="q", url="https://x")
    >>> round(run_seconds(f, m), 2)
    0.3
    """
    if method.runtime_s is not None:
        return float(method.runtime_s)
    if method.writes is not None:
        return method.writes * fig.numjobs / fig.iops
    return None


def weak_reasons(fig: PublicFigure, method: PublicMethod) -> list[str]:
    """Why one figure is weak evidence of the drive: a buffered run (the page cache between the
    program and the drive), a run under a second (cache and firmware effects dominate)."""
    out = []
    if not method.direct:
        out.append("buffered run (page cache)")
    seconds = run_seconds(fig, method)
    if seconds is not None and seconds < 1:
        out.append(f"a run of {seconds:.1g} s" if seconds < 0.1 else f"a run of {seconds:.1f} s")
    return out


def device_class(method_id: str, protocol: str | None) -> methodclass.MethodClass:
    """The class of a device row: its submissions' method on its protocol."""
    return methodclass.classify(submission_methods.traits(method_id), protocol)


def family_names(catalogue: Catalogue) -> dict[str, str]:
    """Model names as sources write them (letters and digits) -> the family key the source gives:
    a source that names the family of a drive by the exact name a device row has settles it."""
    out: dict[str, str] = {}
    for fig in sorted(catalogue.figures, key=lambda f: (f.source_id, f.where)):
        if fig.family:
            out.setdefault(compact(fig.model), _identity(fig).key)
    return out


def device_family_key(model: str, vendor: str | None, named: dict[str, str] | None = None) -> str:
    """The family a device row is stored under: the family a source gives for its exact name,
    else from the curated aliases and the name (drivedb.h differs between machines; lookups add
    its families at query time)."""
    if named and compact(model) in named:
        return named[compact(model)]
    ident = modelid.resolve(model, use_drivedb=False)
    if ident is None and vendor:
        ident = modelid.from_name(f"{vendor} {model}")
    return ident.key if ident is not None else modelid.family_key(vendor, model)


@dataclass
class _Model:
    id: str
    key: str
    vendor: str
    family: str
    capacity_bytes: int | None
    protocol: str


def _identity(fig: PublicFigure) -> modelid.Identity:
    capacity = modelid.capacity_bytes(fig.capacity)
    if fig.vendor and fig.family:
        return modelid.Identity(fig.vendor, fig.family, capacity, "source")
    ident = modelid.resolve(fig.model, use_drivedb=False)
    if ident is not None:
        return modelid.Identity(ident.vendor, ident.family, capacity or ident.capacity_bytes, ident.via)
    return modelid.Identity(fig.vendor, fig.family or fig.model, capacity, "as written")


def _capacity_text(n: int | None) -> str:
    if n is None:
        return ""
    return f"{n / 1e12:g} TB" if n >= 10**12 else f"{n / 1e9:g} GB"


def model_name(vendor: str, family: str, capacity: int | None) -> str:
    return " ".join(x for x in (vendor, family, _capacity_text(capacity)) if x)


def write(con: sqlite3.Connection, catalogue: Catalogue) -> dict[str, int]:
    """Write the catalogue's tables; returns counts for ``meta``."""
    counts: dict[str, int] = defaultdict(int)
    for fig in catalogue.figures:
        counts[fig.source_id] += 1
    con.executemany(
        "INSERT INTO sources VALUES (?,?,?,?,?,?,?,?,?,?)",
        [
            (
                s.id,
                s.title,
                s.url,
                s.author,
                s.date,
                s.licence,
                s.attribution,
                json.dumps(s.method_ids),
                s.notes,
                counts[s.id],
            )
            for s in sorted(catalogue.sources.values(), key=lambda s: s.id)
        ],
    )
    con.executemany(
        "INSERT INTO methods VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        [
            (
                m.id,
                m.command,
                m.sync,
                m.pattern,
                m.engine,
                m.iodepth,
                int(m.direct),
                m.target,
                m.runtime_s,
                m.block_size,
                m.notes,
            )
            for m in sorted(catalogue.methods.values(), key=lambda m: m.id)
        ],
    )
    models: dict[str, _Model] = {}
    rows = []
    per_class: dict[tuple[str, str, str], list[PublicFigure]] = defaultdict(list)
    seq: dict[str, int] = defaultdict(int)
    for fig in catalogue.figures:
        ident = _identity(fig)
        mid = slug_id(f"{ident.key} {ident.capacity_bytes or ''}", "")
        models.setdefault(mid, _Model(mid, ident.key, ident.vendor, ident.family, ident.capacity_bytes, fig.protocol))
        cls = figure_class(fig, catalogue.methods[fig.method_id])
        method = catalogue.methods[fig.method_id]
        rows.append(
            (
                fig.source_id,
                seq[fig.source_id],
                mid,
                fig.model,
                fig.firmware,
                fig.interface,
                fig.protocol,
                fig.method_id,
                cls.id,
                fig.numjobs,
                fig.iodepth,
                fig.iops,
                fig.write_cache,
                fig.derived,
                fig.quote,
                fig.url,
                fig.checked,
                fig.where,
                "; ".join(weak_reasons(fig, method)),
            )
        )
        seq[fig.source_id] += 1
        per_class[mid, cls.id, fig.write_cache, fig.method_id].append(fig)
    con.executemany(
        "INSERT INTO models VALUES (?,?,?,?,?,?,?)",
        [
            (
                m.id,
                m.key,
                m.vendor,
                m.family,
                m.capacity_bytes,
                model_name(m.vendor, m.family, m.capacity_bytes),
                m.protocol,
            )
            for m in sorted(models.values(), key=lambda m: m.id)
        ],
    )
    con.executemany("INSERT INTO figures VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", sorted(rows))
    con.executemany(
        "INSERT INTO model_class VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", _model_classes(per_class, catalogue.methods)
    )
    return {"public_sources": len(catalogue.sources), "public_figures": len(rows), "public_models": len(models)}


def _model_classes(
    per_class: dict[tuple[str, str, str, str], list[PublicFigure]], methods: dict[str, PublicMethod]
) -> list[tuple]:
    """One row per (model, class, cache state, method): the 1-job median over the sources of that
    method with its spread, the best figure and its job count, the sources, why it is weak; the
    rows not weak ranked within the class and cache state by 1-job IOPS (rows without a 1-job
    figure last, by their best figure)."""
    out = []
    for (mid, cls, cache, method_id), figs in per_class.items():
        ones = [f.iops for f in figs if f.numjobs == 1 and f.iodepth == 1]
        best = max(figs, key=lambda f: (f.iops, -f.numjobs))
        one = statistics.median(ones) if ones else None
        weak = sorted({w for f in figs for w in weak_reasons(f, methods[method_id])})
        out.append(
            [
                mid,
                cls,
                cache,
                method_id,
                one,
                min(ones) if ones else None,
                max(ones) if ones else None,
                best.iops,
                best.numjobs,
                json.dumps(sorted({f.source_id for f in figs})),
                len(figs),
                weak,
                None,
            ]
        )
    _mark_disagreements(out, methods)
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for row in out:
        row[11] = json.dumps(row[11]) if row[11] else None
        if row[11] is None:
            groups[row[1], row[2]].append(row)
    for rows in groups.values():
        rows.sort(key=lambda r: (r[4] is None, -(r[4] or 0.0), -r[7], r[0], r[3]))
        for n, row in enumerate(rows, 1):
            row[12] = n
    return sorted(tuple(r) for r in out)


def _mark_disagreements(rows: list[list], methods: dict[str, PublicMethod]) -> None:
    """On a raw device, two methods of one class should send the drive the same commands: where
    their 1-job figures for one model and cache state are more than ``max_ratio`` apart, the class
    rule did not hold for that drive (the Nytro 1351 with its cache on: O_SYNC 18,700, fsync 288),
    and every such row of the model says so."""
    ratio = methodclass.rules()["conflict"]["max_ratio"]
    by_key: dict[tuple[str, str, str, bool], list[list]] = defaultdict(list)
    for row in rows:  # the 1-job figure where there is one, else the best (rows of a queue depth above 1)
        if methods[row[3]].target == "raw":
            by_key[row[0], row[1], row[2], row[4] is not None].append(row)
    for (*_, one), group in by_key.items():

        def fig(r, one=one):
            return r[4] if one else r[7]

        lo, hi = min(group, key=fig), max(group, key=fig)
        if fig(hi) > ratio * fig(lo):
            what = "at 1 job" if one else "at their best"
            syncs = [methods[r[3]].sync for r in group]
            name = (lambda r: methods[r[3]].sync) if len(set(syncs)) == len(syncs) else (lambda r: r[3])
            words = ", ".join(f"{name(r)} {fig(r):,.0f}" for r in sorted(group, key=lambda r: -fig(r)))
            for row in group:
                row[11] = sorted(
                    {
                        *row[11],
                        f"methods of this class disagree on this drive ({words} IOPS {what}): "
                        "what reached the drive is not certain",
                    }
                )
