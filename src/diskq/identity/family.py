"""Family keys: what two names of one family are compared by, and what devices.db joins the
rows, the public models and the product lines on (``devices.family_key``, ``models.family_key``,
``line_families.family_key``).
"""

from __future__ import annotations

import re

from diskq.database.keys import compact

VENDORS = {
    "intel": "Intel",
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
    "hgst": "HGST",
    "sandisk": "SanDisk",
    "solidigm": "Solidigm",
    "sk": "SK hynix",
    "skhynix": "SK hynix",
    "hynix": "SK hynix",
    "adata": "ADATA",
    "transcend": "Transcend",
    "pliant": "Pliant",
    "netlist": "Netlist",
    "ocz": "OCZ",
    "plextor": "Plextor",
    "lite-on": "Lite-On",
    "liteon": "Lite-On",
    "hitachi": "Hitachi",
    "dell": "Dell",
    "hp": "HP",
    "hpe": "HPE",
    "lenovo": "Lenovo",
    "memblaze": "Memblaze",
    "huawei": "Huawei",
    "sabrent": "Sabrent",
    "corsair": "Corsair",
    "teamgroup": "TeamGroup",
    "optane": "Intel",
}
#: words that never tell two families apart
_NOISE = {"ssd", "ssds", "series", "dc", "nvme", "sata", "sas", "pcie", "based", "datacenter", "enterprise"}
_INTEL_TIER = re.compile(r"^d[357]$")
_CAPACITY = re.compile(r"^(\d+(?:[.,]\d+)?)\s*(gb|tb|g|t)$", re.I)
_CAPACITY_IN_TEXT = re.compile(r"\b\d+(?:[.,]\d+)?\s*(?:gb|tb)\b", re.I)


def family_key(vendor: str | None, family: str | None) -> str:
    """``('Intel', 'SSD D3-S4510 Series')`` -> ``'intel:s4510'``."""
    vendor_c = compact(VENDORS.get(compact(vendor or ""), vendor or ""))
    family = _CAPACITY_IN_TEXT.sub(" ", family or "")
    words = [w for w in re.split(r"[^0-9a-z]+", family.casefold()) if w]
    if vendor_c == "intel":
        words = [w for w in words if not _INTEL_TIER.match(w)]
    kept = [w for w in words if w not in _NOISE and not _CAPACITY.match(w) and compact(w) != vendor_c]
    return f"{vendor_c}:{''.join(kept)}"
