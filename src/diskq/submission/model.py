"""The submission file: a result document plus who contributed it, where it came from, and
an SSH signature over its canonical form. This module is the one source of truth for the
format; ``schema/submission.schema.json`` is generated from it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from diskq.analyse.model import json_one
from diskq.result import ResultDocument


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


#: Characters that change how text around them is displayed without being seen: the Unicode
#: bidirectional controls (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069, which can
#: make "NVMe 970" read as something else) and the zero-width and invisible ones (U+00AD,
#: U+180E, U+200B to U+200D, U+2060 to U+2064, U+FEFF). Written as ``\uXXXX`` escapes, which
#: Python, pydantic and ECMA-262 (JSON Schema validators) all read alike.
INVISIBLE = r"\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
#: Free text shown on the site: printable, without characters that mean markup (< > & " \\),
#: control characters (C0, DEL, C1), bidirectional or invisible ones. A valid ECMA-262 pattern
#: in Unicode mode too: no escape of a character that needs none (``\\"`` is refused there).
SAFE_TEXT = r'^[^<>&"\\\x00-\x1f\x7f-\x9f' + INVISIBLE + r"]*$"


class Contributor(_Strict):
    name: str | None = Field(default=None, max_length=200, pattern=SAFE_TEXT)
    github: str | None = Field(default=None, max_length=39, pattern=r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$")


class Provenance(_Strict):
    """Where figures that were not measured by diskq came from (legacy and imported data)."""

    source: str = Field(max_length=500)
    license: str | None = Field(default=None, max_length=100)
    notes: list[str] = Field(default_factory=list, max_length=50)


class Signature(_Strict):
    namespace: str = Field(max_length=100)
    principal: str = Field(max_length=100, description="who signed: the contributor's GitHub login")
    public_key: str = Field(max_length=16384, description="OpenSSH public key line of the signing key")
    signature: str = Field(
        max_length=65536,
        description="armored SSH signature (ssh-keygen -Y sign) of the RFC 8785 canonical document without this block",
    )


class Submission(_Strict):
    # Required, as ``diskq validate`` requires it: the schema must not accept what validation refuses.
    format: Literal["diskq-submission"]
    format_version: Literal[1] = 1
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{7,80}$")
    legacy: bool = False
    contributor: Contributor | None = None
    provenance: Provenance | None = None
    result: ResultDocument
    signature: Signature | None = None

    _json_one = field_validator("format_version", mode="before")(json_one)
