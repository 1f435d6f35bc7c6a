"""The datasheet list: what vendors document about power-loss protection, model by model.

``plp_datasheets.json`` next to this module holds one entry per model family::

    {"model": "INTEL SSDSC2BX.*",           # regular expression, whole model, case ignored
     "firmware": null,                      # optional: regular expression on the firmware
     "examples": ["INTEL SSDSC2BX800G4"],   # model strings the entry is meant for (each must match)
     "plp": "yes",                          # yes | no | at-rest (protects data already written only)
     "title": "Intel SSD DC S3610 Series Product Specification",
     "source": "https://...",               # where the statement was read (https only)
     "read": "2026-11-25",                  # the date it was read
     "quote": "Enhanced power-loss data protection feature",
     "evidence": "primary"}                 # optional: primary (vendor text, default) | secondary

It is contributed by pull request like submissions and checked by :func:`validate` (``diskq
datasheets validate``, run by the submissions workflow and the tests): the schema, a source for
every entry, each example matched by its own pattern, no two entries claiming the same model
(an example of one matched by another, firmware patterns permitting) differently, and no markup
or control characters anywhere. At lookup a model that two entries claim differently gets no
documented answer, only a note: a contradiction is flagged, never resolved by order.
"""

from __future__ import annotations

import json
import re
from datetime import date
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from diskq.errors import InvalidInput

FORMAT = "diskq-plp-datasheets"
FILE = "plp_datasheets.json"
#: A list of a few thousand entries is far below this; anything larger is not one.
MAX_BYTES = 4 * 1024 * 1024
_MARKUP = re.compile(r"[<>\x00-\x1f\x7f]")
#: Length limit of a pattern: model names are short, and a short pattern keeps matching cheap.
MAX_PATTERN = 200
#: Constructs that can make a regular expression slow on hostile input (a repeated group, as in
#: ``(a+)+`` or ``(a|a)*``; backreferences; look-arounds): refused, a model pattern never needs
#: them (an optional group, ``(Crucial_)?``, is fine).
_SLOW = re.compile(r"\)[+*{]|\\[1-9]|\(\?[=!<]")

PlpClaim = Literal["yes", "no", "at-rest"]


def _plain(value: str, what: str) -> str:
    if _MARKUP.search(value):
        raise ValueError(f"{what} holds markup or control characters")
    if value != value.strip() or not value:
        raise ValueError(f"{what} is empty or has surrounding blanks")
    return value


def _pattern(value: str | None, what: str) -> str | None:
    if value is None:
        return None
    _plain(value, what)
    if len(value) > MAX_PATTERN:
        raise ValueError(f"{what} is longer than {MAX_PATTERN} characters")
    if _SLOW.search(value):
        raise ValueError(f"{what} repeats a group or uses backreferences or look-arounds (nested quantifiers)")
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"{what} is not a regular expression ({exc})") from None
    return value


class Entry(BaseModel):
    """One model family and what its vendor documents about power-loss protection."""

    model_config = ConfigDict(extra="forbid", strict=True)

    model: str = Field(description="regular expression matched against the whole model name, case ignored")
    firmware: str | None = Field(default=None, description="regular expression on the firmware, when it matters")
    examples: list[str] = Field(min_length=1, max_length=50, description="model names the entry is meant to match")
    plp: PlpClaim = Field(
        description="yes: acknowledged writes are protected; no: they are not; "
        "at-rest: only data already written is protected, not writes in flight"
    )
    title: str = Field(max_length=300, description="the document's title")
    source: str = Field(max_length=500, description="https URL where the statement was read")
    read: date = Field(description="the date the source was read")
    quote: str = Field(max_length=500, description="what the source says, word for word")
    evidence: Literal["primary", "secondary"] = Field(
        default="primary",
        description="primary: the vendor's own document (or a copy); secondary: an analyst or reviewer reporting it",
    )
    note: str | None = Field(default=None, max_length=500)

    @field_validator("model")
    @classmethod
    def _model(cls, v: str) -> str:
        return _pattern(v, "model")

    @field_validator("firmware")
    @classmethod
    def _firmware(cls, v: str | None) -> str | None:
        return _pattern(v, "firmware")

    @field_validator("examples")
    @classmethod
    def _examples(cls, v: list[str]) -> list[str]:
        return [_plain(x, "example") for x in v]

    @field_validator("title", "quote", "note")
    @classmethod
    def _text(cls, v: str | None) -> str | None:
        return None if v is None else _plain(v, "text")

    @field_validator("source")
    @classmethod
    def _source(cls, v: str) -> str:
        _plain(v, "source")
        if not re.fullmatch(r"https://[A-Za-z0-9.-]+\.[A-Za-z]{2,}(/[^\s\"'`]*)?", v):
            raise ValueError("source must be an https URL")
        return v

    @field_validator("read", mode="before")
    @classmethod
    def _read(cls, v):
        if isinstance(v, str):
            try:
                v = date.fromisoformat(v)
            except ValueError:
                raise ValueError("read must be a date, YYYY-MM-DD") from None
        return v

    def matches(self, model: str, firmware: str | None = None) -> bool:
        if not re.fullmatch(self.model, _normal(model), re.I):
            return False
        if self.firmware is None:
            return True
        return firmware is not None and re.fullmatch(self.firmware, firmware.strip(), re.I) is not None


class DatasheetList(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    format: Literal["diskq-plp-datasheets"]
    version: Literal[1]
    entries: list[Entry]


def _normal(model: str) -> str:
    return " ".join(model.split())


def validate(data: object, *, today: date | None = None) -> list[str]:
    """Every problem of a datasheet list (parsed JSON), one line each; [] when it is valid."""
    try:
        parsed = DatasheetList.model_validate(data)
    except ValidationError as exc:
        return [f"{'.'.join(str(p) for p in err['loc']) or '(top)'}: {err['msg']}" for err in exc.errors()]
    problems: list[str] = []
    today = today or date.today()
    for i, e in enumerate(parsed.entries):
        for ex in e.examples:
            if not re.fullmatch(e.model, _normal(ex), re.I):
                problems.append(f"entries.{i}: example {ex!r} does not match its own model pattern {e.model!r}")
        if e.read > today:
            problems.append(f"entries.{i}: read date {e.read} is in the future")
    for i, a in enumerate(parsed.entries):
        for j, b in enumerate(parsed.entries):
            if j <= i:
                continue
            same = a.model == b.model and a.firmware == b.firmware
            shared = [x for x in a.examples if re.fullmatch(b.model, _normal(x), re.I)]
            shared += [x for x in b.examples if re.fullmatch(a.model, _normal(x), re.I)]
            firmware_overlap = a.firmware is None or b.firmware is None or a.firmware == b.firmware
            if not (same or (shared and firmware_overlap)):
                continue
            if a.plp != b.plp:
                what = f"model {shared[0]!r}" if shared else f"pattern {a.model!r}"
                problems.append(f"entries.{i} and entries.{j} claim {what} differently ({a.plp} / {b.plp})")
            elif same:
                problems.append(f"entries.{i} and entries.{j} are the same model and firmware pattern twice")
    return problems


def parse(raw: bytes, name: str) -> object:
    """The JSON of a datasheet list file's bytes; every way it is unusable is an InvalidInput."""
    if len(raw) > MAX_BYTES:
        raise InvalidInput(f"{name} is larger than {MAX_BYTES // 1024**2} MiB: not a datasheet list")
    try:
        return json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except UnicodeDecodeError:
        raise InvalidInput(f"{name} is not UTF-8 text") from None
    except RecursionError:
        raise InvalidInput(f"{name}: its JSON is nested too deeply") from None
    except ValueError as exc:
        raise InvalidInput(f"{name} is not JSON ({exc})") from None


def _no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError(f"duplicate key {next(k for k in keys if keys.count(k) > 1)!r}")
    return dict(pairs)


def packaged_path() -> Path:
    return Path(str(resources.files("diskq.analyse").joinpath(FILE)))


@lru_cache(maxsize=1)
def load() -> tuple[Entry, ...]:
    """The entries of the list shipped with diskq (validated; an invalid list is an error)."""
    raw = resources.files("diskq.analyse").joinpath(FILE).read_bytes()
    data = parse(raw, FILE)
    problems = validate(data)
    if problems:
        raise InvalidInput(f"{FILE} is invalid: {problems[0]}", hint="run `diskq datasheets validate`")
    return tuple(DatasheetList.model_validate(data).entries)


def lookup(
    model: str | None, firmware: str | None = None, entries: tuple[Entry, ...] | None = None
) -> tuple[Entry | None, str | None]:
    """(the entry documenting ``model``, or None; a note when entries contradict each other)."""
    if not model:
        return None, None
    found = [e for e in (load() if entries is None else entries) if e.matches(model, firmware)]
    claims = {e.plp for e in found}
    if len(claims) > 1:
        return None, (
            f"the datasheet list contradicts itself for {model!r} ("
            + "; ".join(f"{e.plp}: {e.source}" for e in found)
            + "): no documented answer"
        )
    return (found[0] if found else None), None
