"""Hard disk drives by their model numbers: which strings are hard disks, and on what evidence.

A hard disk is not a WAL/DB, SLOG or etcd device (:mod:`diskq.analyse.harddisk` says why), and an
operator asking about one deserves that answer rather than "no device matches". The data is
``hard_disks.toml`` next to this module (shipped with the package, so a lookup on a machine without
the repository still knows a hard disk): ``[[family]]`` tables, the models a vendor's manual lists
as one family (and the rotation rate where a source states it), and ``[[scheme]]`` tables, a
vendor's model-number scheme as a public source states it. Only such strings are recognised: a
string no source places is never guessed to be a hard disk.

:func:`recognise` is consulted only when no product line (:mod:`diskq.identity.match`) names the
string, so a solid-state drive's part number always finds its line first; the patterns also leave
the vendors' solid-state numbers out by construction (Seagate FM/FN/HM, HGST HUSMM/HUSMR, WD WDS).
"""

from __future__ import annotations

import functools
import re
import tomllib
import unicodedata
from dataclasses import dataclass
from importlib import resources

from diskq.errors import SourcesError
from diskq.identity.parts import normalise

FILE = "hard_disks.toml"
KIND = "hard disk drive"
#: A dash and what follows it: the suffix WD and Seagate print after the model number
#: (``WD4003FFBX-68MU3N0``, ``ST4000NM0035-1V4107``).
_SUFFIX = r"(?:-[0-9A-Z]{4,8})?"


@dataclass(frozen=True)
class Rule:
    """One ``[[family]]`` or ``[[scheme]]`` entry."""

    kind: str  # "family" or "scheme"
    vendor: str
    family: str | None
    regex: re.Pattern
    source: str
    rpm: int | None = None
    rpm_source: str | None = None
    scheme: str | None = None
    #: the whole model numbers a family lists (empty for a pattern)
    models: tuple[str, ...] = ()


@dataclass(frozen=True)
class HardDisk:
    """A string recognised as a hard disk drive: the rule that says so and its evidence."""

    query: str
    model: str  # the model number read (vendor words and suffix off)
    rule: Rule

    @property
    def rpm(self) -> int | None:
        return self.rule.rpm

    def text(self, reported_rpm: int | None = None) -> str:
        """``a hard disk drive (Seagate Exos 7E8 family by its model number; 7,200 rpm per ...)``;
        where its sources leave the family or the rotation rate out, it says so (or gives the rate
        the drive reports, ``reported_rpm``)."""
        r = self.rule
        if r.kind == "family":
            what = f"{r.vendor} {r.family} family by its model number"
        else:
            what = f"by the {r.vendor}{' ' + r.family if r.family else ''} model-number scheme"
        rpm = (
            f"{r.rpm:,} rpm per {r.rpm_source}"
            if r.rpm
            else f"{reported_rpm:,} rpm as the drive reports"
            if reported_rpm
            else "rotation rate not stated by its sources"
        )
        return f"a {KIND} ({what}; {rpm})"

    def evidence(self) -> str:
        """Where the models are listed, or what the scheme says and where."""
        r = self.rule
        return f"listed in {r.source}" if r.kind == "family" else f"{r.scheme} ({r.source})"

    def to_dict(self) -> dict:
        r = self.rule
        return {
            "kind": KIND,
            "query": self.query,
            "model": self.model,
            "vendor": r.vendor,
            "family": r.family if r.kind == "family" else None,
            "how": "model list" if r.kind == "family" else "model-number scheme",
            "scheme": r.scheme,
            "pattern": None if r.models else r.regex.pattern,
            "source": r.source,
            "rpm": r.rpm,
            "rpm_source": r.rpm_source,
            "text": self.text(),
            "evidence": self.evidence(),
        }


def _rule(kind: str, raw: dict, where: str) -> Rule:
    known = {"vendor", "family", "models", "pattern", "suffix", "source", "rpm", "rpm_source", "scheme"}
    unknown = set(raw) - known
    if unknown:
        raise SourcesError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    if not raw.get("vendor") or not raw.get("source"):
        raise SourcesError(f"{where}: a {kind} needs its vendor and its source")
    if bool(raw.get("rpm")) != bool(raw.get("rpm_source")):
        raise SourcesError(f"{where}: a rotation rate needs its source (rpm and rpm_source together)")
    if kind == "family":
        if not raw.get("family") or bool(raw.get("models")) == bool(raw.get("pattern")):
            raise SourcesError(f"{where}: a family needs its name and either models or a pattern")
        body = "|".join(re.escape(m) for m in raw.get("models") or ()) or raw["pattern"]
    else:
        if not raw.get("pattern") or not raw.get("scheme"):
            raise SourcesError(f"{where}: a scheme needs its pattern and what the source says it means")
        body = raw["pattern"]
    try:
        regex = re.compile(f"(?:{body}){_SUFFIX if raw.get('suffix') else ''}", re.I)
    except re.error as exc:
        raise SourcesError(f"{where}: {exc}") from None
    return Rule(
        kind,
        raw["vendor"],
        raw.get("family"),
        regex,
        raw["source"],
        raw.get("rpm"),
        raw.get("rpm_source"),
        raw.get("scheme"),
        tuple(raw.get("models") or ()),
    )


def parse(text: str, name: str = FILE) -> tuple[Rule, ...]:
    """The rules of a ``hard_disks.toml`` text, families first; :class:`SourcesError` on a defect."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SourcesError(f"{name}: {exc}") from None
    unknown = set(doc) - {"family", "scheme", "figure"}
    if unknown:
        raise SourcesError(f"{name}: unknown table(s) {', '.join(sorted(unknown))}")
    families = [_rule("family", r, f"{name}: family {i + 1}") for i, r in enumerate(doc.get("family", []))]
    schemes = [_rule("scheme", r, f"{name}: scheme {i + 1}") for i, r in enumerate(doc.get("scheme", []))]
    return (*families, *schemes)


@functools.lru_cache(maxsize=1)
def _text() -> str:
    return resources.files("diskq.identity").joinpath(FILE).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=1)
def rules() -> tuple[Rule, ...]:
    """The shipped rules (``hard_disks.toml``)."""
    return parse(_text())


def figure_families() -> dict[str, tuple[int | None, str | None]]:
    """The public models of devices.db that are hard disks: family key -> (rpm, its source)."""
    out = {}
    for i, raw in enumerate(tomllib.loads(_text()).get("figure", [])):
        if not raw.get("family_key") or bool(raw.get("rpm")) != bool(raw.get("rpm_source")):
            raise SourcesError(f"{FILE}: figure {i + 1} needs its family_key, and a rotation rate its source")
        out[raw["family_key"]] = (raw.get("rpm"), raw.get("rpm_source"))
    return out


def _candidates(query: str) -> list[str]:
    """The model numbers a string may hold: the whole string and each of its words, read as a part
    number is (``ATA_WDC_WD4003FFBX-68MU3N0`` -> ``WD4003FFBX-68MU3N0``)."""
    text = " ".join(unicodedata.normalize("NFKC", query).replace("_", " ").split()).upper()
    text = re.sub(r"^ATA\s+", "", text)
    whole = normalise(text)
    words = [w for w in whole.split() if len(w) >= 6 and re.search(r"\d", w) and re.search(r"[A-Z]", w)]
    return list(dict.fromkeys([whole, *words]))


def recognise(query: str, table: tuple[Rule, ...] | None = None) -> HardDisk | None:
    """The hard disk ``query`` names by a listed model or a stated scheme, else None (module
    docstring). A family is tried before a scheme."""
    table = rules() if table is None else table
    for candidate in _candidates(query):
        for rule in table:
            if rule.regex.fullmatch(candidate):
                return HardDisk(query, candidate, rule)
    return None
