"""Model identity: which model a drive's name means, whatever name it goes by.

A model is vendor + family + capacity. Drives report a part number (smartctl prints
``SAMSUNG MZ7LH7T6HMLA-00005``), sources write a marketing name (``Samsung PM883 7.68TB``), and
OEM variants carry yet other strings. :func:`resolve` maps a name to its :class:`Identity`:

1. the curated aliases (``aliases.toml``: a pattern, the family and where that is stated), for
   part numbers smartmontools files under a family too coarse to tell models apart;
2. smartmontools' drive database (``drivedb.h``), where each model regex sits in an entry whose
   family smartctl prints as ``model_family``; an alternative followed by a comment naming a
   product (``"SAMSUNG MZ7LH...-.*|" //PM883, tested with ...``) gives that finer family;
3. a marketing name whose first word is a vendor (``Samsung PM883``, ``Intel SSD S4510``).

:func:`family_key` is what two identities are compared by: vendor and family as letters and
digits, with words that do not tell families apart left out (``SSD``, ``Series``, ``DC``,
Intel's ``D3``/``D5``/``D7`` prefixes), so ``Intel SSD S4510`` and ``Intel D3-S4510`` agree.
"""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from diskq.database.keys import compact

DRIVEDB_PATHS = (Path("/usr/share/smartmontools/drivedb.h"), Path("/var/lib/smartmontools/drivedb/drivedb.h"),
                 Path("/usr/local/share/smartmontools/drivedb.h"))
VENDORS = {
    "intel": "Intel", "samsung": "Samsung", "micron": "Micron", "crucial": "Crucial", "kingston": "Kingston",
    "seagate": "Seagate", "toshiba": "Toshiba", "kioxia": "Kioxia", "wd": "WD", "wdc": "WD",
    "western": "WD", "hgst": "HGST", "sandisk": "SanDisk", "solidigm": "Solidigm", "sk": "SK hynix",
    "skhynix": "SK hynix", "hynix": "SK hynix", "adata": "ADATA", "transcend": "Transcend", "pliant": "Pliant",
    "netlist": "Netlist", "ocz": "OCZ", "plextor": "Plextor", "lite-on": "Lite-On", "liteon": "Lite-On",
    "hitachi": "Hitachi", "dell": "Dell", "hp": "HP", "hpe": "HPE", "lenovo": "Lenovo", "memblaze": "Memblaze",
    "huawei": "Huawei", "sabrent": "Sabrent", "corsair": "Corsair", "teamgroup": "TeamGroup", "optane": "Intel",
}
#: words that never tell two families apart
_NOISE = {"ssd", "ssds", "series", "dc", "nvme", "sata", "sas", "pcie", "based", "datacenter", "enterprise"}
_INTEL_TIER = re.compile(r"^d[357]$")
#: what smartctl prints before a part number (``SAMSUNG MZ7LH7T6HMLA-00005``, ``INTEL SSDSC2KB480G8``)
_PART_PREFIXES = ("SAMSUNG", "INTEL")
_CAPACITY = re.compile(r"^(\d+(?:[.,]\d+)?)\s*(gb|tb|g|t)$", re.I)
_CAPACITY_IN_TEXT = re.compile(r"\b\d+(?:[.,]\d+)?\s*(?:gb|tb)\b", re.I)


@dataclass(frozen=True)
class Identity:
    vendor: str
    family: str
    capacity_bytes: int | None = None
    via: str = ""  # how it was found: "alias: <source>", "drivedb: <family>", "name"

    @property
    def key(self) -> str:
        return family_key(self.vendor, self.family)


def family_key(vendor: str | None, family: str | None) -> str:
    """``('Intel', 'SSD D3-S4510 Series')`` -> ``'intel:s4510'``."""
    vendor_c = compact(VENDORS.get(compact(vendor or ""), vendor or ""))
    family = _CAPACITY_IN_TEXT.sub(" ", family or "")
    words = [w for w in re.split(r"[^0-9a-z]+", family.casefold()) if w]
    if vendor_c == "intel":
        words = [w for w in words if not _INTEL_TIER.match(w)]
    kept = [w for w in words if w not in _NOISE and not _CAPACITY.match(w) and compact(w) != vendor_c]
    return f"{vendor_c}:{''.join(kept)}"


def capacity_bytes(text: str | None) -> int | None:
    """``'7.68TB'`` -> 7680000000000, ``'400 GB'`` -> 400000000000; None when not a size."""
    m = _CAPACITY.match((text or "").replace(" ", ""))
    if not m:
        return None
    return round(float(m.group(1).replace(",", ".")) * (10**12 if m.group(2).lower().startswith("t") else 10**9))


@dataclass(frozen=True, eq=False)
class _Pattern:
    pattern: str
    vendor: str
    family: str
    via: str

    @functools.cached_property
    def regex(self) -> re.Pattern | None:
        try:
            return re.compile(self.pattern, re.I)
        except re.error:
            return None

    @functools.cached_property
    def literal(self) -> str:
        """The pattern's leading literal text, case folded: strings not starting with it cannot
        match, so most patterns are never compiled for a lookup."""
        m = re.match(r"[A-Za-z0-9 _-]*", self.pattern)
        head = m.group(0) if m else ""
        if len(head) < len(self.pattern) and self.pattern[len(head)] in "?*{":
            head = head[:-1]  # the last character is optional or repeated
        return head.casefold()

    @functools.cached_property
    def stem(self) -> re.Pattern | None:
        """The pattern without its OEM suffix (a trailing ``-.*`` or ``.*``): a part number typed
        without ``-00005`` still names the model."""
        bare = re.sub(r"(\(-\.\*\|0D3\)|-\.\*|\.\*|\.\?)$", "", self.pattern)
        if bare == self.pattern or len(bare) < 6:
            return None
        try:
            return re.compile(bare, re.I)
        except re.error:
            return None

    def matches(self, text: str) -> bool:
        if not text.casefold().startswith(self.literal) or self.regex is None:
            return False
        return bool(self.regex.fullmatch(text) or (self.stem is not None and self.stem.fullmatch(text)))


@functools.cache
def aliases() -> tuple[_Pattern, ...]:
    text = resources.files("diskq.database").joinpath("aliases.toml").read_text(encoding="utf-8")
    return tuple(_Pattern(a["pattern"], a["vendor"], a["family"], f"alias: {a['source']}")
                 for a in tomllib.loads(text)["alias"])


_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')


def parse_drivedb(text: str) -> list[tuple[str, str, str | None]]:
    """(model regex, entry family, finer family from the alternative's comment) for every model
    alternative of every entry of a ``drivedb.h``::

        { "Samsung based SSDs",
          "SAMSUNG MZ7LH(240|480|960|1T9|3T8|7T6)H[AM](HQ|JR|LT|LA)-.*|" //PM883, tested with ...
          "", "", "-v 233,raw48,Total_LBAs_Written " },

    gives ``('SAMSUNG MZ7LH(240|...)-.*', 'Samsung based SSDs', 'PM883')``. Entries whose family
    starts with ``$`` or ``USB:`` (defaults and USB bridges) are left out."""
    out = []
    body = text[text.find("{"):] if "{" in text else ""
    for entry in re.split(r"\n\s*\{\s*(?=\")", body):
        lines = entry.splitlines()
        if not lines:
            continue
        first = _LITERAL.search(lines[0])
        if not first:
            continue
        family = first.group(1)
        if family.startswith(("$", "USB:", "VERSION")) or not family:
            continue
        # the model regex: the string literals after the family, up to the first empty-string field
        for line in lines[1:]:
            code, _, comment = line.partition("//")
            literals = _LITERAL.findall(code)
            if not literals:
                if code.strip().startswith(","):
                    break
                continue
            done = False
            for lit in literals:
                if lit == "":
                    done = True
                    break
                sub = _product(comment)
                for alt in _top_level_alternatives(lit):
                    if alt:
                        out.append((alt.replace("\\\\", "\\"), family, sub))
            if done or code.rstrip().endswith('",') or code.rstrip().endswith('" ,'):
                break
    return out


def _product(comment: str) -> str | None:
    """``'PM883, tested with ...'`` -> ``'PM883'``; a comment that names no product -> None."""
    head = comment.strip().split(",")[0].strip()
    if not head or head.lower().startswith(("tested", "todo", "http", "see ", "from ")) or len(head) > 30:
        return None
    head = re.sub(r"\s+Series$", "", head, flags=re.I)
    head = re.sub(r"\([a-z]\)$", "", head)  # SM863(a): the family with or without its revision letter
    return head if re.search(r"\d", head) else None


def _top_level_alternatives(regex: str) -> list[str]:
    out, depth, cur = [], 0, []
    for ch in regex:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "|" and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


@functools.cache
def drivedb(path: Path | None = None) -> tuple[_Pattern, ...]:
    """The model patterns of the installed ``drivedb.h`` (empty when smartmontools is not installed)."""
    for candidate in ([path] if path else DRIVEDB_PATHS):
        if candidate and candidate.is_file():
            text = candidate.read_text(encoding="utf-8", errors="replace")
            break
    else:
        return ()
    out = []
    for regex, family, sub in parse_drivedb(text):
        vendor = _vendor_word(family) or ""
        if vendor:  # a family without a known vendor cannot name a model here
            out.append(_Pattern(regex, vendor, sub or family, f"drivedb: {family}"))
    return tuple(out)


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


def resolve(name: str, *, drivedb_path: Path | None = None, use_drivedb: bool = True) -> Identity | None:
    """The identity ``name`` means: a curated alias, else drivedb.h, else a vendor-led marketing
    name; None when none of them knows it. ``use_drivedb=False`` reads only what the repository
    holds (the aliases and the name itself): what ``db build`` stores, so that a build gives the
    same database whether or not smartmontools is installed, and whichever drivedb.h it has."""
    text = " ".join(name.split())
    if not text:
        return None
    # a bare part number: smartctl prints it after the vendor's name (SAMSUNG MZ7LH..., INTEL SSDSC...)
    texts = [text] if " " in text or len(text) < 6 else [text, *(f"{v} {text}" for v in _PART_PREFIXES)]
    for source in (aliases(), drivedb(drivedb_path) if use_drivedb else ()):
        for p in source:
            if p.vendor and any(p.matches(t) for t in texts):
                return Identity(p.vendor, p.family, None, p.via)
    return from_name(text)


def family_patterns(key: str, *, drivedb_path: Path | None = None) -> list[_Pattern]:
    """The alias and drivedb patterns of family ``key``."""
    return [p for p in (*aliases(), *drivedb(drivedb_path)) if p.vendor and family_key(p.vendor, p.family) == key]


def patterns_for(key: str, *, drivedb_path: Path | None = None) -> list[tuple[str, str]]:
    """(regex, where it comes from) of every alias and drivedb alternative of family ``key``:
    the part numbers a model is known by."""
    return [(p.pattern, p.via) for p in (*aliases(), *drivedb(drivedb_path))
            if p.vendor and family_key(p.vendor, p.family) == key]
