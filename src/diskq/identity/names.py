"""Names: how a marketing name or the words of a query name a product line.

A name is compared by its *words* (runs of letters and digits, case folded), with what never tells
two lines apart taken off: the vendor (``Samsung``), ``SSD``, ``Series``, Intel's ``DC`` and
``D3``/``D5``/``D7`` tiers, form factors (``M.2``, ``2.5``, ``mSATA``, ``2280``) and a capacity
(``500GB``, ``1.92 TB``), which is kept apart as the capacity asked for. A model number is one
word: ``PM863`` is never ``PM863a``, ``510`` never ``S4510``, ``5300`` never ``S3500``.

:func:`compare` says how a query's words name a line's name:

* ``exact``: the same words (or the same letters and digits once separators are gone:
  ``983DCT`` is ``983 DCT``);
* ``part``: every word of the query is a whole word of the name, which has more (``860`` of
  ``860 EVO``, ``905P`` of ``Optane 905P``): one line so named is the answer, several are
  candidates;
* ``typo``: exact once two neighbouring characters of one word of four or more are swapped;
* None: anything else (an extra word the name lacks, a different number, interface words alone:
  ``SATA SSD`` names no line).

Interface words (``SATA``, ``NVMe``, ``PCIe``, ``SAS``) count only where the name has them:
``Exceria SATA`` and ``Exceria NVMe`` are two lines, ``Intel SSD 750 PCIe`` is the 750.
"""

from __future__ import annotations

import re
import unicodedata

EXACT, PART, TYPO = "exact", "part", "typo"
#: Vendor words (first words of names and queries) -> the vendor as the lines name it.
VENDORS = {
    "intel": "Intel",
    "solidigm": "Solidigm",
    "samsung": "Samsung",
    "micron": "Micron",
    "crucial": "Crucial",
    "kingston": "Kingston",
    "seagate": "Seagate",
    "toshiba": "Toshiba",
    "kioxia": "Kioxia",
    "wd": "WD",
    "wdc": "WD",
    "western": "WD",
    "digital": "WD",
    "hgst": "HGST",
    "sandisk": "SanDisk",
    "sk": "SK hynix",
    "hynix": "SK hynix",
    "skhynix": "SK hynix",
    "adata": "ADATA",
    "xpg": "ADATA",
    "sabrent": "Sabrent",
    "corsair": "Corsair",
    "teamgroup": "TeamGroup",
    "team": "TeamGroup",
    "group": "TeamGroup",
    "lexar": "Lexar",
    "patriot": "Patriot",
    "transcend": "Transcend",
    "netac": "Netac",
    "plextor": "Plextor",
    "liteon": "Lite-On",
    "lite": "Lite-On",
    "on": "Lite-On",
    "apacer": "Apacer",
    "pliant": "Pliant",
    "netlist": "Netlist",
    "fusionio": "Fusion-io",
    "fusion": "Fusion-io",
    "io": "Fusion-io",
    "ocz": "OCZ",
    "tesla": "Tesla",
    "hitachi": "HGST",
}
#: Vendors that are one for naming: a line sold under either name answers a query naming the other.
VENDOR_GROUPS = (
    {"Intel", "Solidigm"},
    {"Micron", "Crucial"},
    {"WD", "HGST", "SanDisk"},
    {"Toshiba", "Kioxia"},
    {"Toshiba", "OCZ"},
)
#: Words that never tell two lines apart.
NOISE = {
    "ssd",
    "ssds",
    "series",
    "dc",
    "drive",
    "solid",
    "state",
    "internal",
    "enterprise",
    "datacenter",
    "d3",
    "d5",
    "d7",
    "msata",
    "aic",
    "hhhl",
    "u2",
    "m2",
}
#: Words that count only where the line's name has them.
SOFT = {"sata", "nvme", "pcie", "sas", "sed", "fips"}
_FORM = re.compile(r"\b(?:m\.2|u\.2|[123]\.[58]\s*(?:\"|in(?:ch)?\b)?|22(?:30|42|60|80|110))(?=\s|$|_)", re.I)
_CAPACITY = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)?)\s*(gb|tb|g|t)(?![\w.])", re.I)
_WORD = re.compile(r"[^\W_]+")


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def capacity_in(text: str) -> int | None:
    """The capacity a name or query states: ``'Samsung SSD 860 EVO 500GB'`` -> 500 GB,
    ``'PM9A3 3.84 TB'`` -> 3.84 TB; None when it states none."""
    m = _CAPACITY.search(_fold(text))
    if not m:
        return None
    value = float(m.group(1).replace(",", "."))
    return round(value * (10**12 if m.group(2).lower().startswith("t") else 10**9))


def vendor_of(text: str) -> str | None:
    """The vendor a name or query starts with (``'WD_BLACK SN770'`` -> ``'WD'``), else None."""
    words = _WORD.findall(_fold(text))
    return VENDORS.get(words[0]) if words else None


def same_vendor(a: str, b: str) -> bool:
    return a == b or any(a in g and b in g for g in VENDOR_GROUPS)


def words(text: str, *, vendor: str | None = None) -> list[str]:
    """The words that tell lines apart: ``'Samsung SSD 860 EVO mSATA 1TB'`` -> ``['860', 'evo']``.
    ``vendor``: the line's vendor, whose words are left out too."""
    t = _CAPACITY.sub(" ", _FORM.sub(" ", _fold(text)))
    out = _WORD.findall(t)
    drop = set(NOISE) | {w for w, v in VENDORS.items() if v == vendor or (vendor and same_vendor(v, vendor))}
    # a leading vendor word of any vendor ("WD_BLACK": wd; "Team Group T253": team, group)
    lead = 0
    while lead < len(out) and out[lead] in VENDORS and lead < 2:
        lead += 1
    return [w for i, w in enumerate(out) if i >= lead and w not in drop]


def _swaps(word: str):
    for i in range(len(word) - 1):
        if word[i] != word[i + 1]:
            yield word[:i] + word[i + 1] + word[i] + word[i + 2 :]


def compare(query_words: list[str], name_words: list[str]) -> str | None:
    """How the words of a query name a line's name (module docstring).

    >>> compare(["pm863"], ["pm863a"]), compare(["860"], ["860", "evo"]), compare(["983dct"], ["983", "dct"])
    (None, 'part', 'exact')
    >>> compare(["510"], ["s4510"]), compare(["s4150"], ["s4510"]), compare(["970", "evo", "plus"], ["970", "evo"])
    (None, 'typo', None)
    """
    q = [w for w in query_words if w not in SOFT or w in name_words]
    if not q or all(w in SOFT for w in q):  # an interface alone ("SATA SSD") names no line
        return None
    if q == name_words or "".join(q) == "".join(name_words) or sorted(q) == sorted(name_words):
        return EXACT
    names = set(name_words)
    if all(w in names for w in q):
        return PART
    missing = [w for w in q if w not in names]
    if len(missing) == 1 and len(missing[0]) >= 4:
        w = missing[0]
        fixed = next((s for s in _swaps(w) if s in names), None)
        if fixed is not None:
            return TYPO if compare([fixed if x == w else x for x in q], name_words) == EXACT else None
    return None
