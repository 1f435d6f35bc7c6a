"""Public figures in devices.db: the catalogue of ``sources/`` (:mod:`diskq.database.sources`)
written to the ``sources``, ``methods``, ``models``, ``figures`` and ``model_class`` tables.

Every figure keeps its source, method, quote, URL and cache state, and gets the class of what
its method sent to the drive (:mod:`diskq.analyse.methodclass`, from the method and the
interface the source names). Figures are grouped into models (vendor + family + capacity,
:mod:`diskq.database.modelid`); per model and class the 1-job figure is the median of the
sources' 1-job figures of that class, never of another class, and models are ranked within
their class only.
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
    "model_class": "model_id, method_class, write_cache",
}


def figure_class(fig: PublicFigure, method: PublicMethod) -> methodclass.MethodClass:
    return methodclass.classify(Traits(method.sync, method.pattern, method.target, method.direct, method.iodepth),
                                fig.protocol)


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
    con.executemany("INSERT INTO sources VALUES (?,?,?,?,?,?,?,?,?,?)", [
        (s.id, s.title, s.url, s.author, s.date, s.licence, s.attribution, json.dumps(s.method_ids), s.notes,
         counts[s.id]) for s in sorted(catalogue.sources.values(), key=lambda s: s.id)])
    con.executemany("INSERT INTO methods VALUES (?,?,?,?,?,?,?,?,?,?,?)", [
        (m.id, m.command, m.sync, m.pattern, m.engine, m.iodepth, int(m.direct), m.target, m.runtime_s, m.block_size,
         m.notes) for m in sorted(catalogue.methods.values(), key=lambda m: m.id)])
    models: dict[str, _Model] = {}
    rows = []
    per_class: dict[tuple[str, str, str], list[PublicFigure]] = defaultdict(list)
    seq: dict[str, int] = defaultdict(int)
    for fig in catalogue.figures:
        ident = _identity(fig)
        mid = slug_id(f"{ident.key} {ident.capacity_bytes or ''}", "")
        models.setdefault(mid, _Model(mid, ident.key, ident.vendor, ident.family, ident.capacity_bytes, fig.protocol))
        cls = figure_class(fig, catalogue.methods[fig.method_id])
        rows.append((fig.source_id, seq[fig.source_id], mid, fig.model, fig.firmware, fig.interface, fig.protocol,
                     fig.method_id, cls.id, fig.numjobs, fig.iodepth, fig.iops, fig.write_cache, fig.derived,
                     fig.quote, fig.url, fig.checked, fig.where))
        seq[fig.source_id] += 1
        per_class[mid, cls.id, fig.write_cache].append(fig)
    con.executemany("INSERT INTO models VALUES (?,?,?,?,?,?,?)", [
        (m.id, m.key, m.vendor, m.family, m.capacity_bytes, model_name(m.vendor, m.family, m.capacity_bytes),
         m.protocol) for m in sorted(models.values(), key=lambda m: m.id)])
    con.executemany("INSERT INTO figures VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", sorted(rows))
    con.executemany("INSERT INTO model_class VALUES (?,?,?,?,?,?,?,?,?,?,?)", _model_classes(per_class))
    return {"public_sources": len(catalogue.sources), "public_figures": len(rows), "public_models": len(models)}


def _model_classes(per_class: dict[tuple[str, str, str], list[PublicFigure]]) -> list[tuple]:
    """One row per (model, class, cache state): 1-job median with its spread, the best figure and
    its job count, the sources; ranked within the class and cache state by 1-job IOPS (models
    without a 1-job figure last, by their best figure)."""
    out = []
    for (mid, cls, cache), figs in per_class.items():
        ones = [f.iops for f in figs if f.numjobs == 1 and f.iodepth == 1]
        best = max(figs, key=lambda f: (f.iops, -f.numjobs))
        one = statistics.median(ones) if ones else None
        out.append([mid, cls, cache, one, min(ones) if ones else None, max(ones) if ones else None, best.iops,
                    best.numjobs, json.dumps(sorted({f.source_id for f in figs})), len(figs), None])
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for row in out:
        groups[row[1], row[2]].append(row)
    for rows in groups.values():
        rows.sort(key=lambda r: (r[3] is None, -(r[3] or 0.0), -r[6], r[0]))
        for n, row in enumerate(rows, 1):
            row[10] = n
    return sorted(tuple(r) for r in out)
