"""Model identity: which family a drive's name means, whatever name it goes by.

A model is vendor + family + capacity. Drives report a part number (smartctl prints
``SAMSUNG MZ7LH7T6HMLA-00005``), sources write a marketing name (``Samsung PM883 7.68TB``), and
OEM variants carry yet other strings. :func:`resolve` maps a name to its :class:`Identity`:

1. the product line the one matcher (:mod:`diskq.identity.match`) names with certainty, from
   the repository's ``sources/lines/`` (part numbers read through each vendor's scheme, names by
   whole words); the family is the line's;
2. else a marketing name whose first word is a vendor (``Samsung PM883``, ``Intel SSD S4510``).

Nothing here reads the host's smartmontools ``drivedb.h``: the answer is the same on every
machine, with or without smartmontools (docs/identity.md says why).

:func:`family_key` is what two identities are compared by: vendor and family as letters and
digits, with words that do not tell families apart left out (``SSD``, ``Series``, ``DC``,
Intel's ``D3``/``D5``/``D7`` prefixes), so ``Intel SSD S4510`` and ``Intel D3-S4510`` agree.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from diskq.identity.family import _CAPACITY, VENDORS, family_key  # noqa: F401 (the names this module always gave)


@dataclass(frozen=True)
class Identity:
    vendor: str
    family: str
    capacity_bytes: int | None = None
    via: str = ""  # how it was found: "part number: <pattern> (<source>)", "name: ...", "name"
    line_key: str | None = None  # the product line's key, when a line was named

    @property
    def key(self) -> str:
        return self.line_key or family_key(self.vendor, self.family)


def capacity_bytes(text: str | None) -> int | None:
    """``'7.68TB'`` -> 7680000000000, ``'400 GB'`` -> 400000000000; None when not a size."""
    m = _CAPACITY.match((text or "").replace(" ", ""))
    if not m:
        return None
    return round(float(m.group(1).replace(",", ".")) * (10**12 if m.group(2).lower().startswith("t") else 10**9))


@functools.cache
def _lines() -> tuple:
    """The checkout's product lines (``sources/lines``), else those of the shipped devices.db."""
    from diskq.identity import lines as lines_mod

    root = Path(__file__).resolve().parents[3] / "sources" / "lines"
    found = lines_mod.load(root) if root.is_dir() else []
    if not found:
        import sqlite3

        from diskq.identity import store

        shipped = Path(__file__).resolve().parents[1] / "data" / "devices.db"
        if shipped.is_file():
            con = sqlite3.connect(f"file:{shipped}?mode=ro", uri=True)
            try:
                found = store.read(con)
            except sqlite3.Error:
                found = []
            finally:
                con.close()
    return tuple(found)


def _vendor_word(text: str) -> str | None:
    first = re.split(r"[\s_]+", text.strip(), maxsplit=1)[0] if text.strip() else ""
    return VENDORS.get(first.casefold())


def from_name(name: str) -> Identity | None:
    """A marketing name whose first word is a vendor: ``Samsung PM883 7.68TB`` -> Samsung / PM883."""
    name = re.sub(r"(\d)\s+(GB|TB)\b", r"\1\2", name, flags=re.I)
    parts = re.split(r"[\s_]+", name.strip())
    vendor = _vendor_word(name)
    if vendor is None or len(parts) < 2:
        return None
    rest = [p for p in parts[1:] if not _CAPACITY.match(p)]
    caps = [capacity_bytes(p) for p in parts[1:] if _CAPACITY.match(p)]
    family = " ".join(rest)
    if not family_key(vendor, family).split(":", 1)[1]:
        return None
    return Identity(vendor, family, caps[0] if caps else None, "name")


def resolve(name: str, *, lines: tuple | None = None, use_drivedb: bool = False) -> Identity | None:
    """The identity ``name`` means: the line the one matcher names with certainty, else a
    vendor-led marketing name; None when neither knows it. (``use_drivedb`` is accepted from
    callers of the earlier signature; no drivedb.h is ever read.)"""
    from diskq.identity.match import resolve as resolve_line

    text = " ".join(name.split())
    if not text:
        return None
    answer = resolve_line(list(lines if lines is not None else _lines()), text).answer
    if answer is not None:
        line = answer.line
        return Identity(
            main_vendor(line.vendor), line.names[0], answer.capacity_bytes, f"{answer.how}: {answer.evidence}", line.key
        )
    return from_name(text)


def main_vendor(vendor: str) -> str:
    from diskq.identity.lines import main_vendor as mv

    return mv(vendor)


def patterns_for(key: str) -> list[tuple[str, str]]:
    """(regex, where it is stated) of every part number of the line whose family is ``key``:
    the part numbers a model is known by."""
    return [(p.pattern, p.source) for line in _lines() if key in line.families for p in line.parts]
