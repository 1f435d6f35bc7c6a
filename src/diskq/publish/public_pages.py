"""The public figures on the site: what each device page and the index show of them, and one
page per model known only from public figures (``public/<id>.html``).

Every figure shows its source (with the attribution its licence asks for), its method and the
method's class; figures of different classes are never merged or ranked against each other.
"""

from __future__ import annotations

import json
import re
import sqlite3

from diskq.analyse import methodclass
from diskq.database import evidence, modelid

#: Short words for a class's kind, for a badge beside a name and the filter.
KIND_WORDS = {"flush": "flush", "fua": "FUA", "sync-unknown": "O_SYNC?"}
DISKQ_SOURCE, LEGACY_SOURCE = "diskq", "community table"


def class_badge(class_id: str | None) -> str:
    return KIND_WORDS.get((class_id or "").split("/", 1)[0], class_id or "")


def js_vendors() -> str:
    """The vendor words a model string may start with (:data:`diskq.identity.parts.VENDOR_PREFIXES`)
    as one JavaScript alternation: the site's search drops one before it tests the part-number
    patterns, as diskq itself reads a model string. Written once per page, not once per row."""
    from diskq.identity.parts import VENDOR_PREFIXES

    return "|".join(re.escape(v) for v in VENDOR_PREFIXES)


def js_patterns(family_key: str) -> list[str]:
    """The part-number patterns of a family's product line (:mod:`diskq.identity.parts`), as
    JavaScript regular expressions the site's search tests a whole query against (after an
    optional leading vendor word: :func:`js_vendors`)."""
    out = []
    for pattern, _ in modelid.patterns_for(family_key):
        js = re.sub(r"[(][?]P<[a-z]+>", "(", pattern)
        if js not in out:
            out.append(js)
    return out


def family_keys(dev: dict) -> list[str]:
    """The families a device row belongs to: the one it is stored under, and the one its model
    string names through its product line."""
    keys = [dev.get("family_key") or ""]
    ident = modelid.resolve(dev["model"])
    if ident is not None and ident.key not in keys:
        keys.append(ident.key)
    return [k for k in keys if k]


def family_public(con: sqlite3.Connection, dev: dict) -> list[evidence.PublicModel]:
    return [m for k in family_keys(dev) for m in evidence.public_models_of_family(con, k)]


def known_as(con: sqlite3.Connection, dev: dict) -> dict:
    """The names a device is known by: what its drives reported, what sources wrote, and the
    part-number patterns of its family with where each comes from."""
    reported = sorted(
        {r[0] for r in con.execute("SELECT DISTINCT model FROM submissions WHERE device_id = ?", (dev["id"],))}
    )
    keys = family_keys(dev)
    written: set[str] = set()
    if evidence.has_public_tables(con):
        for k in keys:
            written |= {
                r[0]
                for r in con.execute(
                    "SELECT DISTINCT f.model FROM figures f JOIN models m ON m.id = f.model_id WHERE m.family_key = ?",
                    (k,),
                )
            }
    return {
        "reported": reported,
        "written": sorted(written),
        "patterns": [(re.sub(r"[(][?]P<[a-z]+>", "(", p), via) for k in keys for p, via in modelid.patterns_for(k)],
    }


def device_sources(con: sqlite3.Connection, dev: dict) -> list[str]:
    """Source ids with figures for a device row: diskq measurements, the community table
    (legacy rows), and every public source with a figure of its family."""
    out = []
    if dev["submissions"] > dev["legacy"]:
        out.append(DISKQ_SOURCE)
    if dev["legacy"]:
        out.append(LEGACY_SOURCE)
    if evidence.has_public_tables(con):
        for k in family_keys(dev):
            out += [
                r[0]
                for r in con.execute(
                    "SELECT DISTINCT f.source_id FROM figures f JOIN models m ON m.id = f.model_id WHERE m.family_key = ? "
                    "ORDER BY f.source_id",
                    (k,),
                )
                if r[0] not in out
            ]
    return out


def sources_of(models: list[evidence.PublicModel]) -> list[dict]:
    """Each source the figures name once, with title, author, date, licence and attribution."""
    seen: dict[str, dict] = {}
    for m in models:
        for f in m.figures:
            seen.setdefault(
                f["source_id"],
                {
                    "id": f["source_id"],
                    "title": f["source_title"],
                    "author": f["source_author"],
                    "date": f["source_date"],
                    "url": f["source_url"],
                    "licence": f["licence"],
                    "attribution": f["attribution"],
                },
            )
    return [seen[k] for k in sorted(seen)]


def class_named(dev: dict) -> str:
    """What a device row's figures are, in a few words (``4 KiB write + flush (O_SYNC)``): its
    method class and the call its method made, for the page title and labels."""
    from diskq.submission import methods

    return methodclass.named(dev["method_class"], methods.traits(dev["method_id"]).sync)


def class_call(dev: dict) -> str:
    """The call a device row's figures were made with, for its page title (``fdatasync``,
    ``O_SYNC, FUA``): a title is kept short."""
    from diskq.submission import methods

    return methodclass.call(dev["method_class"], methods.traits(dev["method_id"]).sync)


def public_rows(con: sqlite3.Connection, device_keys: set[str]) -> list[dict]:
    """One row per (model, class) of the public figures, ranked within its class; each says
    whether a device of the table has the model's family (its page then shows the figures)."""
    if not evidence.has_public_tables(con):
        return []
    out = []
    for r in con.execute(
        "SELECT c.*, m.name, m.family_key, m.protocol, m.capacity_bytes FROM model_class c "
        "JOIN models m ON m.id = c.model_id"
    ):
        row = dict(r)
        row["sources"] = json.loads(row["sources"])
        row["weak"] = json.loads(row["weak"]) if row.get("weak") else []
        row["label"] = methodclass.label(row["method_class"])
        row["badge"] = class_badge(row["method_class"])
        row["written"] = sorted(
            {x[0] for x in con.execute("SELECT DISTINCT model FROM figures WHERE model_id = ?", (row["model_id"],))}
        )
        row["patterns"] = js_patterns(row["family_key"])
        row["in_table"] = row["family_key"] in device_keys
        out.append(row)
    out.sort(
        key=lambda r: (
            methodclass.order(r["method_class"]),
            r["write_cache"],
            r["class_rank"] is None,
            r["class_rank"] or 0,
            r["model_id"],
            r["method_id"],
        )
    )
    return out


def public_models(con: sqlite3.Connection) -> list[evidence.PublicModel]:
    if not evidence.has_public_tables(con):
        return []
    return [evidence.model_of(con, r) for r in con.execute("SELECT * FROM models ORDER BY id")]


def facets(con: sqlite3.Connection, devices: list[dict], rows: list[dict]) -> dict:
    """The class and source filters' options: classes in table order, sources by id."""
    classes = sorted(
        {d["method_class"] for d in devices if d.get("method_class")} | {r["method_class"] for r in rows},
        key=methodclass.order,
    )
    sources = [DISKQ_SOURCE, LEGACY_SOURCE] if devices else []
    sources = [s for s in sources if any(s in d.get("sources", []) for d in devices)]
    if evidence.has_public_tables(con):
        sources += [r[0] for r in con.execute("SELECT id FROM sources WHERE figures > 0 ORDER BY id")]
    return {"classes": [(c, methodclass.label(c)) for c in classes], "sources": sources}
