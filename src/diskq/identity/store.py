"""Product lines in devices.db: the ``lines`` and ``line_families`` tables the build writes from
``sources/lines/`` (:func:`write`), and the lines a lookup reads back (:func:`read`), so that a
copy of devices.db identifies drives on a machine without the repository or smartmontools.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path

from diskq.identity.facts import LineFacts
from diskq.identity.lines import Line, load
from diskq.identity.parts import Part

#: Tables and the order their rows are hashed in (the content digest).
TABLES = {"lines": "key", "line_families": "family_key"}


def lines_dir(sources: Path | None, checkout: Path) -> Path:
    """``lines/`` of the sources directory, else of the checkout's ``sources/`` (the lines are
    the repository's own data: a figures catalogue without them still gets them)."""
    if sources is not None and (Path(sources) / "lines").is_dir():
        return Path(sources) / "lines"
    return checkout / "sources" / "lines"


def facts_dict(facts: LineFacts) -> dict:
    d = dataclasses.asdict(facts)
    d["tbw_by_capacity"] = {str(k): v for k, v in facts.tbw_by_capacity.items()}
    return d


def _facts(d: dict) -> LineFacts:
    known = {f.name for f in dataclasses.fields(LineFacts)}
    d = {k: v for k, v in d.items() if k in known}
    for k in ("form_factors", "capacities", "sources", "notes"):
        d[k] = tuple(d.get(k) or ())
    d["tbw_by_capacity"] = {int(k): v for k, v in (d.get("tbw_by_capacity") or {}).items()}
    return LineFacts(**d)


def write(con: sqlite3.Connection, lines: list[Line]) -> int:
    """Store the lines and which family belongs to which line; returns how many lines."""
    for line in sorted(lines, key=lambda ln: ln.key):
        parts = [
            {"pattern": p.pattern, "capacity": p.capacity, "source": p.source, "certain": p.certain, "shared": p.shared}
            for p in line.parts
        ]
        con.execute(
            "INSERT INTO lines VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                line.key,
                line.vendor,
                line.facts.line,
                line.title,
                line.facts.segment,
                line.facts.interface,
                line.facts.plp,
                json.dumps(list(line.names)),
                json.dumps(parts),
                line.model_strings_note,
                json.dumps(facts_dict(line.facts), sort_keys=True),
            ),
        )
        for family in line.families:
            con.execute("INSERT OR IGNORE INTO line_families VALUES (?,?)", (family, line.key))
    return len(lines)


def has_lines(con: sqlite3.Connection) -> bool:
    return con.execute("SELECT 1 FROM sqlite_master WHERE name = 'lines'").fetchone() is not None


_ROW = "SELECT key, names, parts, model_strings, facts FROM lines"


def _line(row, families: list[str]) -> Line:
    parts = tuple(Part(p["pattern"], p["capacity"], p["source"], p["certain"], p["shared"]) for p in json.loads(row[2]))
    return Line(
        _facts(json.loads(row[4])), tuple(json.loads(row[1])), parts, tuple(dict.fromkeys([row[0], *families])), row[3]
    )


def read(con: sqlite3.Connection) -> list[Line]:
    """The lines devices.db holds ([] for a file built before it held any)."""
    if not has_lines(con):
        return []
    fams: dict[str, list[str]] = {}
    for family, key in con.execute("SELECT family_key, line_key FROM line_families ORDER BY family_key"):
        fams.setdefault(key, []).append(family)
    return [_line(r, fams.get(r[0], [])) for r in con.execute(_ROW + " ORDER BY key")]


def line_of_family(con: sqlite3.Connection, family_key: str | None) -> Line | None:
    """The line a family key (``devices.family_key``, ``models.family_key``) belongs to, or None."""
    if not family_key or not has_lines(con):
        return None
    hit = con.execute("SELECT line_key FROM line_families WHERE family_key = ?", (family_key,)).fetchone()
    if hit is None:
        return None
    row = con.execute(_ROW + " WHERE key = ?", (hit[0],)).fetchone()
    families = [
        r[0]
        for r in con.execute("SELECT family_key FROM line_families WHERE line_key = ? ORDER BY family_key", (hit[0],))
    ]
    return _line(row, families) if row is not None else None


def load_for_build(sources: Path | None, checkout: Path) -> list[Line]:
    return load(lines_dir(sources, checkout))
