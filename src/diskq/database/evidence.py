"""What devices.db knows about a drive beyond its own table row: the model a part number means,
and the public figures of its family, each labelled with its source and method class.

Used by ``diskq lookup``, ``plan``, ``identify``/``bench`` (what the database knows before a
measurement), the fleet report and the site. Figures of different classes are listed apart,
never merged or ranked against each other (:mod:`diskq.analyse.methodclass`).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from diskq.analyse import methodclass
from diskq.database import modelid


def has_public_tables(con: sqlite3.Connection) -> bool:
    """Does this devices.db have the public-figures tables as this code reads them (schema 8)?
    An older file has none: it answers without public figures until it is rebuilt."""
    columns = {r[1] for r in con.execute("PRAGMA table_info(model_class)")}
    return (
        "write_cache" in columns
        and con.execute("SELECT 1 FROM sqlite_master WHERE name = 'figures'").fetchone() is not None
    )


def devices_of(con: sqlite3.Connection, query: str) -> tuple[list[str], modelid.Identity | None]:
    """(ids of the devices of the line the query names with certainty, the identity it resolved
    to): a part number (``SAMSUNG MZ7LH7T6HMLA-00005``), the string smartctl prints, or a name.
    A file without product lines (built before schema 10) is read by the family key alone."""
    if not has_public_tables(con):
        return [], None
    from diskq.identity import query as identity_query

    found = identity_query.find(con, query)
    if found.lines:
        if not found.sure:
            return [], None
        line = found.lines[0].candidate.line
        return found.lines[0].device_ids, modelid.Identity(
            modelid.main_vendor(line.vendor),
            line.names[0],
            found.asked_capacity,
            f"{found.lines[0].candidate.how}: {found.lines[0].candidate.evidence}",
            line.key,
        )
    ident = modelid.from_name(query)
    if ident is None:
        return [], None
    ids = [
        r[0]
        for r in con.execute(
            "SELECT id FROM devices WHERE family_key = ? ORDER BY rank IS NULL, rank, id", (ident.key,)
        )
    ]
    return ids, ident


@dataclass
class PublicModel:
    """A model of the public figures, with its figures by class."""

    id: str
    name: str
    family_key: str
    capacity_bytes: int | None
    classes: list[dict] = field(default_factory=list)  # model_class rows + 'label'
    figures: list[dict] = field(default_factory=list)  # figures rows + source title/licence/attribution

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "name": self.name,
            "family_key": self.family_key,
            "capacity_bytes": self.capacity_bytes,
            "classes": self.classes,
            "figures": self.figures,
        }


_FIGURES = """
SELECT f.*, s.title AS source_title, s.author AS source_author, s.date AS source_date, s.licence,
       s.attribution, s.url AS source_url, m.command
FROM figures f JOIN sources s ON s.id = f.source_id JOIN methods m ON m.id = f.method_id
WHERE f.model_id = ? ORDER BY f.method_class, f.source_id, f.numjobs, f.seq
"""


def model_of(con: sqlite3.Connection, row: sqlite3.Row) -> PublicModel:
    """A ``models`` row with its classes and figures."""
    model = PublicModel(row["id"], row["name"], row["family_key"], row["capacity_bytes"])
    for c in con.execute(
        "SELECT * FROM model_class WHERE model_id = ? ORDER BY method_class, write_cache", (row["id"],)
    ):
        c = dict(c)
        c["sources"] = json.loads(c["sources"])
        c["weak"] = json.loads(c["weak"]) if c.get("weak") else []
        c["label"] = methodclass.label(c["method_class"])
        c["short"] = methodclass.short(c["method_class"])
        model.classes.append(c)
    model.classes.sort(key=lambda c: (methodclass.order(c["method_class"]), c["write_cache"], c["method_id"]))
    model.figures = [
        {**dict(f), "class_label": methodclass.label(f["method_class"])} for f in con.execute(_FIGURES, (row["id"],))
    ]
    return model


def public_models_of_family(con: sqlite3.Connection, family_key: str) -> list[PublicModel]:
    """Every public model of a family (each capacity its own model), by capacity."""
    if not has_public_tables(con) or not family_key:
        return []
    return [
        model_of(con, r)
        for r in con.execute(
            "SELECT * FROM models WHERE family_key = ? ORDER BY capacity_bytes IS NULL, capacity_bytes, id",
            (family_key,),
        )
    ]


def rank_words(c: dict) -> str:
    """``#2 in its class and cache state``, or why a weak row is not ranked."""
    if c.get("class_rank") is None:
        return f"weak figure, not ranked ({'; '.join(c.get('weak') or ['no reason recorded'])})"
    return f"#{c['class_rank']} in its class and cache state"


def class_summary(model: PublicModel) -> list[str]:
    """One line per class, cache state and method: ``flush per write · ..., cache off, method
    M_SYNC_SEQ_PSYNC: 1-job 16,830 IOPS ...``; a weak row says so instead of a rank."""
    out = []
    for c in model.classes:
        one = f"1-job {c['iops_1job']:,.0f} IOPS" if c["iops_1job"] is not None else "no 1-job figure"
        spread = (
            f" ({c['iops_1job_min']:,.0f}-{c['iops_1job_max']:,.0f})"
            if c["iops_1job"] is not None and c["iops_1job_min"] != c["iops_1job_max"]
            else ""
        )
        best = f", best {c['best_iops']:,.0f} at {c['best_numjobs']} jobs" if c["best_numjobs"] != 1 else ""
        out.append(
            f"{c['label']}, cache {c['write_cache']}, method {c['method_id']}: {one}{spread}{best}; "
            f"sources {', '.join(c['sources'])}; {rank_words(c)}"
        )
    return out


#: Most figure lines :func:`diskq.database.known.known_lines` gives: one short block before a measurement.
KNOWN_LINES = 6


def default_db() -> Path:
    """The devices.db every command reads without ``--db`` (:mod:`diskq.database.locate`: the
    checkout's, the user's copy, the shipped snapshot)."""
    from diskq.database.locate import find

    return find().path
