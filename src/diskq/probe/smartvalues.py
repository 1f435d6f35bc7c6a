"""What a figure read from smartctl must be to be kept, and the notes when it is not.

Every figure read from smartctl is checked before it is kept: a value of the wrong type, a
negative count, a value outside what a drive can report, or a placeholder string left by
redaction (``REDACTED``) becomes null, with a note saying so. A figure a signed result cannot
hold exactly is kept in a note only.
"""

from __future__ import annotations

from typing import Any

from diskq.probe.jsonvalues import json_int as _int

#: Model, vendor and firmware strings that stand for "not known" rather than a name.
_PLACEHOLDER_TEXT = {"redacted", "<redacted>", "[redacted]", "unknown", "none", "null", "n/a", "na", "-", "?"}
#: Characters that masking tools repeat in place of a name (``XXXXXXXX``, ``********``).
_MASK_CHARS = set("x*#?")

#: Largest count or size kept from a parsed output. Anything above is certainly wrong, and every
#: kept value still fits a signed 64-bit integer (SQLite, JSON readers in other languages).
MAX_INT = 2**63 - 1

#: Sane ranges of the integer fields of :class:`Device`, inclusive.
_RANGES = {
    "capacity": (1, MAX_INT),
    "logical block size": (512, 1 << 20),
    "physical block size": (512, 1 << 20),
    "power-on hours": (0, 1_000_000),  # 114 years
    "temperature": (-60, 150),
    "wear": (0, 255),  # NVMe and ATA device statistics saturate at 255 %
    "data written": (0, MAX_INT),
}


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return " ".join(value.split())
    return None


def _in_range(value: Any, what: str, notes: list[str], *, source: str = "smartctl") -> int | None:
    """``value`` as an int when it is one and lies in the sane range of ``what``; else None + a note."""
    n = _int(value)
    if n is None:
        if value is not None and not isinstance(value, (dict, list)):
            notes.append(f"{what} from {source} is not a whole number ({_show(value)}): ignored")
        return None
    lo, hi = _RANGES[what]
    if n < 0 <= lo:
        notes.append(f"{what} from {source} is negative ({n}): ignored")
        return None
    if not lo <= n <= hi:
        notes.append(f"{what} from {source} is out of range ({_show(n)}, expected {lo}..{hi}): ignored")
        return None
    return n


#: Largest integer a signed submission carries exactly: RFC 8785 canonical JSON writes numbers as
#: IEEE doubles, so validation refuses integers beyond 2^53 - 1.
MAX_SIGNABLE = 2**53 - 1


def _signable(value: int | None, what: str, notes: list[str]) -> int | None:
    """``value``, or None with the figure kept in a note when a signed document cannot hold it
    exactly (9 PB and more written is real on large enterprise drives)."""
    if value is None or value <= MAX_SIGNABLE:
        return value
    notes.append(f"{what}: {value} bytes, more than a signed result holds exactly (2^53 - 1): kept in this note only")
    return None


def _show(value: Any) -> str:
    """A short printable form of a rejected value (a 300-digit integer is not shown whole)."""
    text = repr(value)
    return text if len(text) <= 24 else f"{text[:20]}..."


def _is_placeholder(text: str) -> bool:
    low = text.lower()
    return low in _PLACEHOLDER_TEXT or set(low) <= _MASK_CHARS


def _name(value: Any, what: str, notes: list[str]) -> str | None:
    """A model, vendor or firmware string; placeholders become None with a note."""
    text = _str(value)
    if text is not None and _is_placeholder(text):
        notes.append(f"{what} is a placeholder ({text!r}, redacted or masked upstream): unknown")
        return None
    return text


def _times(count: int | None, unit: int, label: str, notes: list[str]) -> int | None:
    if count is None:
        return None
    if count * unit > MAX_INT:
        notes.append(f"{label}: {count} x {unit} bytes is beyond any drive: ignored")
        return None
    return count * unit
