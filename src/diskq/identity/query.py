"""A query against devices.db: the lines a string names (:mod:`diskq.identity.match`), and what
the database holds of each: its measured devices, its public models and its datasheet facts,
each labelled with the capacity it is of.

:func:`find` is what ``lookup``, ``plan``, ``identify``/``bench`` (:func:`known_lines` in
:mod:`diskq.database.known`), the site and ``cluster`` read, so they agree on every string.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from diskq.identity import store
from diskq.identity.match import SURE, Candidate, Resolution, resolve


def capacity_text(n: int | None) -> str:
    """``1920000000000`` -> ``'1.92 TB'``, ``480000000000`` -> ``'480 GB'``."""
    if not n:
        return "unknown capacity"
    return f"{n / 1e12:g} TB" if n >= 10**12 else f"{n / 1e9:g} GB"


def same_capacity(a: int | None, b: int | None) -> bool:
    """Within 2 %: a 1.92 TB and a 1,920 GB drive are one capacity; 1.6 and 1.92 TB are not."""
    return bool(a) and bool(b) and abs(a - b) <= 0.02 * max(a, b)


def capacity_note(of: int | None, asked: int | None) -> str:
    """How a figure's capacity relates to the one asked about, in words:
    ``'measured on the 7.68 TB model, not the 960 GB asked about'``; ``'measured on the 960 GB model'``."""
    if not of:
        return "capacity not stated by its source"
    if asked and not same_capacity(of, asked):
        return f"measured on the {capacity_text(of)} model, not the {capacity_text(asked)} asked about"
    return f"measured on the {capacity_text(of)} model"


@dataclass
class LineMatch:
    """One candidate line, with the ids of its devices and public models in devices.db."""

    candidate: Candidate
    device_ids: list[str] = field(default_factory=list)
    model_ids: list[str] = field(default_factory=list)

    @property
    def measured(self) -> bool:
        return bool(self.device_ids)

    def line_dict(self) -> dict:
        """The ``line`` object of ``lookup --json``: the line's facts (LineFacts) with its title."""
        return {
            "key": self.candidate.line.key,
            "title": self.candidate.line.title,
            **store.facts_dict(self.candidate.line.facts),
        }


@dataclass
class Found:
    query: str
    resolution: Resolution
    lines: list[LineMatch] = field(default_factory=list)

    @property
    def sure(self) -> bool:
        return self.resolution.answer is not None

    @property
    def asked_capacity(self) -> int | None:
        return self.resolution.capacity_bytes


_DEVICES = "SELECT id FROM devices WHERE family_key IN ({}) ORDER BY rank IS NULL, rank, id"
_MODELS = "SELECT id FROM models WHERE family_key IN ({}) ORDER BY capacity_bytes IS NULL, capacity_bytes, id"


def _ids(con: sqlite3.Connection, sql: str, keys: tuple[str, ...]) -> list[str]:
    try:
        return [r[0] for r in con.execute(sql.format(",".join("?" * len(keys))), keys)]
    except sqlite3.OperationalError:  # a file without the public figures' tables
        return []


def find(con: sqlite3.Connection, query: str) -> Found:
    """The lines ``query`` names and what devices.db holds of each (module docstring); an empty
    :class:`Found` when the file holds no lines (built before it did) or none fits."""
    lines = store.read(con)
    res = resolve(lines, query)
    found = Found(query, res)
    for c in res.candidates:
        found.lines.append(LineMatch(c, _ids(con, _DEVICES, c.line.families), _ids(con, _MODELS, c.line.families)))
    return found


def device_line(con: sqlite3.Connection, family_key: str | None) -> dict | None:
    """The ``line`` object of a device's family (a device found by its model string, not through
    a line), or None when its family belongs to no line."""
    line = store.line_of_family(con, family_key)
    return {"key": line.key, "title": line.title, **store.facts_dict(line.facts)} if line is not None else None


def facts_of_family(con: sqlite3.Connection, family_key: str | None):
    """The :class:`~diskq.identity.facts.LineFacts` of the line a family belongs to, or None:
    what an answer about a device or a public model may rest on besides its figures."""
    line = store.line_of_family(con, family_key)
    return line.facts if line is not None else None


__all__ = [
    "SURE",
    "Found",
    "LineMatch",
    "capacity_note",
    "capacity_text",
    "device_line",
    "facts_of_family",
    "find",
    "same_capacity",
]
