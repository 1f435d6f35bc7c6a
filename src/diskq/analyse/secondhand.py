"""Power-loss evidence at second hand: what others say of a product line, each statement with its
kind, its strength and its source, kept apart from the vendors' own words (:mod:`datasheets`).

``plp_secondhand.json`` next to this module holds one entry per statement::

    {"vendors": ["Intel", "Solidigm"],           # vendor names the line is sold under
     "lines": ["D3-S4510"],                      # line names as diskq's line facts spell them
     "model": "(INTEL|SOLIDIGM) SSDSC(2K|KK)B(240G|480G|960G|019T|038T|076T)8.?",  # optional
     "examples": ["INTEL SSDSC2KB480G8"],        # model strings the pattern is meant for
     "kind": "drive-database",                   # drive-database | hardware-list | review
     "claim": "capacitor-self-test",             # yes | no | at-rest-only | capacitor-self-test | no-dram-cache
     "strength": "secondary",                    # secondary | weak (never primary: that is a vendor's text)
     "quote": "...", "source": "https://...", "revision": "...", "read": "2026-11-28",
     "why": "why the statement has this strength",
     "checked": "against what the statement was checked (or: not checked, as compiled)"}

The kinds: ``drive-database``, smartmontools' ``drivedb.h`` names a capacitor self-test attribute for
the line (capacitors exist; weak where one entry covers client and data-centre drives alike, or where
the line is only inferred from a pattern); ``hardware-list``, the OpenZFS hardware page's list of
drives with power failure protection (weak: it admits drives that protect data at rest only);
``review``, a reviewer, a teardown or a forum answer. ``no-dram-cache`` (Optane) says there is no
volatile write cache to lose, not that capacitors exist. An entry without lines and with a
``segment`` speaks of a whole segment ("consumer SSDs"): it backs the segment prior, nothing more;
one with a model pattern and no lines (OEM part numbers) is matched by the model string alone.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from diskq.analyse.datasheets import _normal, _pattern, _plain, parse
from diskq.errors import InvalidInput

if TYPE_CHECKING:
    from diskq.identity.facts import LineFacts

FILE = "plp_secondhand.json"
Kind = Literal["drive-database", "hardware-list", "review"]
Claim = Literal["yes", "no", "at-rest-only", "capacitor-self-test", "no-dram-cache"]
#: Which way each claim points (the values of :class:`~diskq.analyse.model.PlpEvidence.points_to`).
POINTS_TO = {
    "yes": "plp",
    "capacitor-self-test": "plp",
    "no-dram-cache": "plp",
    "no": "no_plp",
    "at-rest-only": "no_plp",
}


class Statement(BaseModel):
    """One statement about the power-loss protection of one or more lines (or of a segment)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    vendors: list[str] = Field(max_length=10)
    lines: list[str] = Field(max_length=20)
    segment: Literal["data-centre", "client", "NAS"] | None = None
    model: str | None = None
    examples: list[str] = Field(default_factory=list, max_length=20)
    kind: Kind
    claim: Claim
    strength: Literal["secondary", "weak"]
    quote: str = Field(max_length=500)
    source: str = Field(max_length=500)
    revision: str = Field(max_length=300)
    read: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    why: str = Field(max_length=500)
    checked: str = Field(max_length=500, description="what was checked against what, or that it was not")

    @field_validator("vendors", "lines", "examples")
    @classmethod
    def _names(cls, v: list[str]) -> list[str]:
        return [_plain(x, "name") for x in v]

    @field_validator("model")
    @classmethod
    def _model(cls, v: str | None) -> str | None:
        return _pattern(v, "model")

    @field_validator("quote", "revision", "why", "checked")
    @classmethod
    def _text(cls, v: str) -> str:
        return _plain(v, "text")

    @field_validator("source")
    @classmethod
    def _source(cls, v: str) -> str:
        if not re.fullmatch(r"https://[A-Za-z0-9.-]+\.[A-Za-z]{2,}(/[^\s\"'`]*)?", _plain(v, "source")):
            raise ValueError("source must be an https URL")
        return v

    def about(self, facts: LineFacts | None = None, model: str | None = None) -> bool:
        """Whether the statement speaks of this line (by vendor and line name) or this model string."""
        if facts is not None and self.lines and _key(facts.line) in {_key(x) for x in self.lines}:
            vendor = _key(facts.vendor)
            if not self.vendors or any(_key(v) in vendor or vendor in _key(v) for v in self.vendors):
                return True
        return bool(model and self.model and re.fullmatch(self.model, _normal(model), re.I))


class Statements(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    format: Literal["diskq-plp-secondhand"]
    version: Literal[1]
    entries: list[Statement]


def _key(name: str) -> str:
    return " ".join(name.casefold().split())


def validate(data: object) -> list[str]:
    """Every problem of a statement list (parsed JSON), one line each; [] when it is valid."""
    try:
        parsed = Statements.model_validate(data)
    except ValidationError as exc:
        return [f"{'.'.join(str(p) for p in err['loc']) or '(top)'}: {err['msg']}" for err in exc.errors()]
    problems = []
    for i, s in enumerate(parsed.entries):
        if not s.lines and s.segment is None and s.model is None:
            problems.append(f"entries.{i}: names neither a line, a segment nor a model pattern")
        if s.lines and not s.vendors:
            problems.append(f"entries.{i}: names lines but no vendor")
        if s.model is None and s.examples:
            problems.append(f"entries.{i}: has examples but no model pattern")
        for ex in s.examples:
            if not re.fullmatch(s.model or "", _normal(ex), re.I):
                problems.append(f"entries.{i}: example {ex!r} does not match its own model pattern")
    return problems


@lru_cache(maxsize=1)
def load() -> tuple[Statement, ...]:
    """The statements shipped with diskq (validated; an invalid list is an error)."""
    data = parse(resources.files("diskq.analyse").joinpath(FILE).read_bytes(), FILE)
    problems = validate(data)
    if problems:
        raise InvalidInput(f"{FILE} is invalid: {problems[0]}")
    return tuple(Statements.model_validate(data).entries)


def about(
    facts: LineFacts | None, model: str | None = None, statements: tuple[Statement, ...] | None = None
) -> list[Statement]:
    """The statements that speak of the line of ``facts`` or of the drive model ``model``."""
    return [s for s in (load() if statements is None else statements) if s.about(facts, model)]


def about_segment(segment: str | None, statements: tuple[Statement, ...] | None = None) -> list[Statement]:
    """The statements that speak of a whole segment (no line named)."""
    if segment is None:
        return []
    return [
        s
        for s in (load() if statements is None else statements)
        if not s.lines and s.model is None and s.segment == segment
    ]
