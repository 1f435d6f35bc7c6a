"""Product lines as data: the ``sources/lines/*.toml`` files, read into :class:`Line` (its
documented facts as :class:`~diskq.identity.facts.LineFacts`, the names and part numbers it is
known by, and the family keys of the figures that belong to it).

Each file holds ``[[line]]`` tables::

    [[line]]
    vendor = "Samsung"
    line = "PM863a"
    names = ["PM863a"]                  # what a query or a model string calls it
    segment = "data-centre"
    segment_basis = "naming only"
    interface = "SATA"
    sources = ["..."]
    [[line.part]]
    pattern = "MZ7LM(?P<cap>\\d{3}|\\dT\\d)HM[A-Z]{2}[-0-9A-Z]*"
    capacity = "tcode"                 # how the cap group reads (diskq.identity.parts)
    source = "model strings SAMSUNG MZ7LM3T8HMLP-00005 ... (drivedb.h; pastebin ...)"

A malformed file raises :class:`~diskq.errors.SourcesError` naming the file and the line, as the
public figures' catalogue does.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path

from diskq.errors import SourcesError
from diskq.identity.facts import PLP_CLAIMS, SEGMENTS, LineFacts
from diskq.identity.family import family_key
from diskq.identity.parts import Part

_FACT_FIELDS = {f.name for f in fields(LineFacts)}
_LINE_KEYS = _FACT_FIELDS | {"names", "families", "part", "model_strings_note"}
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class Line:
    """A product line: its facts, and what identifies a drive as one of it."""

    facts: LineFacts
    names: tuple[str, ...]
    parts: tuple[Part, ...] = ()
    #: family keys (``samsung:pm863a``) of devices and public models that are drives of this line
    families: tuple[str, ...] = ()
    model_strings_note: str | None = None

    @property
    def key(self) -> str:
        return self.facts.key

    @property
    def vendor(self) -> str:
        return self.facts.vendor

    @property
    def title(self) -> str:
        """``Samsung PM863a``: the vendor and the line's name."""
        vendor, name = main_vendor(self.facts.vendor), self.names[0] if self.names else self.facts.line
        return (
            name if name.casefold().startswith(vendor.casefold() + " ") or vendor == "unknown" else f"{vendor} {name}"
        )


def main_vendor(vendor: str) -> str:
    """``'Solidigm (Intel)'`` -> ``'Solidigm'``, ``'WD/HGST'`` -> ``'WD'``."""
    return re.split(r"\s*[(/]", vendor.strip(), maxsplit=1)[0]


def line_key(vendor: str, name: str) -> str:
    """The key a line is stored under: its family key (:func:`diskq.database.modelid.family_key`),
    so that the rows and public figures of the family join it."""
    return family_key(main_vendor(vendor), name)


def _int_keys(table: dict, where: str) -> dict[int, int]:
    try:
        return {int(k): int(v) for k, v in table.items()}
    except (TypeError, ValueError):
        raise SourcesError(f"{where}: tbw_by_capacity must map capacity bytes to bytes written") from None


def _line(raw: dict, where: str) -> Line:
    unknown = set(raw) - _LINE_KEYS
    if unknown:
        raise SourcesError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    for k in ("vendor", "line"):
        if not isinstance(raw.get(k), str) or not raw[k].strip():
            raise SourcesError(f"{where}: '{k}' must be a non-empty string")
    if raw.get("segment") not in (None, *SEGMENTS):
        raise SourcesError(f"{where}: segment {raw['segment']!r} is not one of {', '.join(SEGMENTS)}")
    if raw.get("plp") not in (None, *PLP_CLAIMS):
        raise SourcesError(f"{where}: plp {raw['plp']!r} is not one of {', '.join(PLP_CLAIMS)}")
    if not raw.get("sources"):
        raise SourcesError(f"{where}: a line needs its sources")
    names = tuple(raw.get("names") or (raw["line"],))
    try:
        parts = tuple(
            Part(p["pattern"], p.get("capacity"), p["source"], p.get("certain", True), p.get("shared", False))
            for p in raw.get("part", [])
        )
    except KeyError as exc:
        raise SourcesError(f"{where}: a part needs {exc.args[0]!r}") from None
    except (ValueError, re.error) as exc:
        raise SourcesError(f"{where}: {exc}") from None
    key = raw.get("key") or line_key(raw["vendor"], names[0])  # an explicit key where two names fold alike
    facts_in = {k: v for k, v in raw.items() if k in _FACT_FIELDS}
    for k in ("form_factors", "capacities", "sources", "notes"):
        if k in facts_in:
            facts_in[k] = tuple(facts_in[k])
    if "tbw_by_capacity" in facts_in:
        facts_in["tbw_by_capacity"] = _int_keys(facts_in["tbw_by_capacity"], where)
    facts_in["key"] = key
    try:
        facts = LineFacts(**facts_in)
    except TypeError as exc:
        raise SourcesError(f"{where}: {exc}") from None
    families = tuple(dict.fromkeys([key, *raw.get("families", [])]))
    return Line(facts, names, parts, families, raw.get("model_strings_note"))


def _line_numbers(text: str) -> list[int]:
    return [i + 1 for i, s in enumerate(text.splitlines()) if s.strip() == "[[line]]"]


def load(directory: Path) -> list[Line]:
    """Every line of every ``*.toml`` file in ``directory`` (sorted by file name); [] when the
    directory is absent. Two lines under one key are a defect of the data (one would hide the other)."""
    out: list[Line] = []
    seen: dict[str, str] = {}
    if not Path(directory).is_dir():
        return out
    for path in sorted(Path(directory).glob("*.toml")):
        text = path.read_text(encoding="utf-8")
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise SourcesError(f"{path.name}: {exc}") from None
        numbers = _line_numbers(text)
        for i, raw in enumerate(doc.get("line", [])):
            where = f"{path.name}:{numbers[i] if i < len(numbers) else '?'}"
            line = _line(raw, where)
            if line.key in seen:
                raise SourcesError(f"{where}: line key {line.key!r} is also {seen[line.key]}")
            seen[line.key] = where
            out.append(line)
    return out


@dataclass
class LineIndex:
    """Lines by key, and which line each family key belongs to."""

    lines: list[Line] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.by_key = {ln.key: ln for ln in self.lines}
        self.by_family = {f: ln for ln in self.lines for f in ln.families}

    def line_of_family(self, family_key: str | None) -> Line | None:
        return self.by_family.get(family_key or "")
