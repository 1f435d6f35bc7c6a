"""How submissions are grouped into devices, and the stable ids devices get.

A device is a model (case and white space normalised: drives report ``Samsung SSD 860 PRO``,
``SAMSUNG SSD 860 PRO`` or ``Samsung  SSD 860 PRO `` for the same thing) plus a firmware
version (white space normalised; an unknown firmware is the empty string, its own group).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def model_key(model: str) -> str:
    """``'  Samsung  SSD 860 PRO '`` -> ``'samsung ssd 860 pro'``."""
    return " ".join(model.split()).casefold()


def firmware_key(firmware: str | None) -> str:
    """``' RVT04B6Q '`` -> ``'RVT04B6Q'``; unknown -> ``''``."""
    return " ".join((firmware or "").split())


def compact(text: str) -> str:
    """Letters and digits only, NFKC-normalised and case folded: what a lookup compares when
    separators or character widths differ (``Micron_5300`` vs ``micron 5300``, ``ＰＭ８８３``)."""
    return _NOT_SLUG.sub("", unicodedata.normalize("NFKC", text).casefold())


def device_id(mkey: str, fkey: str) -> str:
    """URL-safe, stable id: readable slug plus a short hash of the exact key.

    >>> device_id("samsung ssd 860 pro", "RVM01B6Q")
    'samsung-ssd-860-pro-rvm01b6q-e82fc3'
    """
    slug = _NOT_SLUG.sub("-", f"{mkey} {fkey}".casefold()).strip("-")[:80].rstrip("-") or "device"
    digest = hashlib.sha256(f"{mkey}\0{fkey}".encode()).hexdigest()[:6]
    return f"{slug}-{digest}"
