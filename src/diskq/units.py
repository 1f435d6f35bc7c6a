"""Parsing and formatting of sizes and numbers as users type and read them."""

from __future__ import annotations

import math
import re

from diskq.errors import InvalidInput

#: Largest size accepted: every size must fit a signed 64-bit integer (fio, SQLite, JSON readers).
MAX_SIZE = 2**63 - 1

_UNITS = {
    "": 1,
    "b": 1,
    "k": 1024,
    "kb": 1000,
    "kib": 1024,
    "m": 1024**2,
    "mb": 1000**2,
    "mib": 1024**2,
    "g": 1024**3,
    "gb": 1000**3,
    "gib": 1024**3,
    "t": 1024**4,
    "tb": 1000**4,
    "tib": 1024**4,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(text: str | int) -> int:
    """Bytes in a size such as ``1G``, ``512MiB``, ``4096``. Bare K/M/G/T are binary (like fio).

    >>> parse_size("1G"), parse_size("1GB"), parse_size("4k")
    (1073741824, 1000000000, 4096)
    """
    if isinstance(text, int):
        if text <= 0:
            raise InvalidInput(f"size must be positive, got {text}")
        if text > MAX_SIZE:
            raise InvalidInput(f"size is too large: {text}")
        return text
    return _bytes(text, _UNITS, "a size", "use e.g. 1G, 512M, 4GiB or a byte count")


def _bytes(text: str, units: dict[str, int], what: str, hint: str) -> int:
    """``text`` as a whole positive number of bytes, its unit read from ``units``."""
    m = _SIZE.match(text)
    if not m or m.group(2).lower() not in units:
        raise InvalidInput(f"not {what}: {text!r}", hint=hint)
    number = float(m.group(1)) * units[m.group(2).lower()]
    if not math.isfinite(number) or number > MAX_SIZE:
        raise InvalidInput(f"size is too large: {text.strip()[:40]!r}")
    value = int(number)
    if value <= 0:
        raise InvalidInput(f"size must be positive, got {text!r}")
    return value


def human_bytes(n: float | int | None, *, si: bool = False) -> str:
    """``1073741824`` -> ``1.0 GiB`` (or ``1.1 GB`` with ``si``)."""
    if n is None:
        return "-"
    base, units = (
        (1000, ["B", "kB", "MB", "GB", "TB", "PB"]) if si else (1024, ["B", "KiB", "MiB", "GiB", "TiB", "PiB"])
    )
    try:
        value = float(n)
    except OverflowError:  # an integer beyond any float: whole units of the largest one
        return f"{int(n) // base ** (len(units) - 1)} {units[-1]}"
    if not math.isfinite(value):
        return "-"
    for unit in units:
        if abs(value) < base or unit == units[-1]:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= base
    return f"{value:.1f} {units[-1]}"  # pragma: no cover


def block_label(size: int) -> str:
    """Bytes per write as a block size reads: ``8192`` -> ``8 KiB``, ``1048576`` -> ``1 MiB``,
    ``512`` -> ``512 B``, a size that is no whole KiB in bytes.

    >>> [block_label(n) for n in (512, 4096, 131072, 1048576, 2300)]
    ['512 B', '4 KiB', '128 KiB', '1 MiB', '2300 B']
    """
    for unit, scale in (("MiB", 1024 * 1024), ("KiB", 1024)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def parse_int_list(text: str) -> list[int]:
    """``"1,2,4"`` -> ``[1, 2, 4]``; every value a positive integer, sorted, no duplicates."""
    try:
        values = sorted({int(p) for p in text.replace(" ", "").split(",") if p})
    except ValueError:
        raise InvalidInput(f"not a list of whole numbers: {text!r}", hint="e.g. --jobs 1,2,4,8") from None
    if not values:
        raise InvalidInput(
            f"no job counts in {text!r}", hint="e.g. --jobs 1,2,4,8, or leave --jobs out to let diskq search"
        )
    if values[0] < 1:
        raise InvalidInput(f"job counts must be whole numbers >= 1: {text!r}")
    return values


def plural(n: int | float, one: str, many: str | None = None) -> str:
    """``n`` and the word that goes with it: ``1 job``, ``2 jobs``, ``1 OSD``, ``3 OSDs``.

    >>> plural(1, "job"), plural(4, "OSD"), plural(1, "submission"), plural(0, "file")
    ('1 job', '4 OSDs', '1 submission', '0 files')
    """
    return f"{n} {one if n == 1 else (many or one + 's')}"


def capacity(n: float | int | None) -> str:
    """A drive's capacity as its label gives it: SI units, at most three significant digits, no
    trailing zeros (``480 GB``, ``3.84 TB``, ``1.6 TB``); ``-`` when unknown. Every place that
    shows a capacity (lookup, the site, the bench) uses this one form.

    >>> capacity(480_103_981_056), capacity(3_840_755_982_336), capacity(1_600_321_314_816), capacity(None)
    ('480 GB', '3.84 TB', '1.6 TB', '-')
    """
    if n is None:
        return "-"
    try:
        value = float(n)
    except OverflowError:
        return human_bytes(n, si=True)
    if not math.isfinite(value) or value < 0:
        return "-"
    units = ["B", "kB", "MB", "GB", "TB", "PB", "EB"]
    i = 0
    while value >= 999.5 and i < len(units) - 1:
        value /= 1000
        i += 1
    text = f"{value:.3g}" if value < 1000 else f"{value:.0f}"
    if "e" in text:  # only for absurd sizes beyond the largest unit
        text = f"{value:.0f}"
    return f"{text} {units[i]}"


def latency_ms(ms: float | None) -> str:
    """A latency given in milliseconds, never rounded to nothing: ``12.4 ms``, ``3.84 ms``,
    ``0.25 ms``, ``45 µs`` below 0.1 ms, ``< 1 µs`` below half a microsecond.

    >>> latency_ms(12.44), latency_ms(3.844), latency_ms(0.25), latency_ms(0.0451), latency_ms(0.0001)
    ('12.4 ms', '3.84 ms', '0.25 ms', '45 µs', '< 1 µs')
    """
    if ms is None or not math.isfinite(ms):
        return "-"
    if ms >= 10:
        return f"{ms:,.1f} ms"
    if ms >= 0.1:
        return f"{ms:.2f} ms"
    us = ms * 1000
    return "< 1 µs" if us < 0.5 else f"{us:.0f} µs"


#: Decimal units, as drive vendors print capacities (a 16 TB drive holds 16 * 10^12 bytes);
#: the binary ones only when asked for with an ``i``.
_DRIVE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "kib": 1024,
    "m": 1000**2,
    "mb": 1000**2,
    "mib": 1024**2,
    "g": 1000**3,
    "gb": 1000**3,
    "gib": 1024**3,
    "t": 1000**4,
    "tb": 1000**4,
    "tib": 1024**4,
    "p": 1000**5,
    "pb": 1000**5,
    "pib": 1024**5,
}


def parse_drive_size(text: str) -> int:
    """Bytes in a drive capacity as printed on its label: ``16T``, ``8TB``, ``960G`` are decimal
    (10^12, 10^9 bytes), ``7TiB`` binary.

    >>> parse_drive_size("16T"), parse_drive_size("960GB"), parse_drive_size("1TiB")
    (16000000000000, 960000000000, 1099511627776)
    """
    return _bytes(text, _DRIVE_UNITS, "a drive size", "use e.g. 16T, 8TB, 960G (decimal, as on the label) or 7TiB")
