"""Part numbers: the strings drives report, read through each vendor's scheme to a product line
and the capacity the string encodes.

A :class:`Part` is one pattern of a line's ``sources/lines/`` entry: a regular expression matched
against the whole model string (case ignored, a leading vendor word such as ``INTEL`` or
``SAMSUNG`` and the vendor's ``Micron_``/``Crucial_`` prefix taken off first), whose named group
``cap`` holds the capacity code, read by the vendor's capacity scheme (``capacity``):

* ``gb``: digits are gigabytes, an optional ``G``/``GB`` (Kingston ``SEDC500M1920G``, Crucial
  ``CT1000MX500SSD1``, Seagate ``XS960SE70004``);
* ``intel``: three digits and ``G`` (gigabytes) or ``T`` (tenths of a terabyte): ``480G`` 480 GB,
  ``016T`` 1.6 TB, ``076T`` 7.68 TB (``INTEL SSDSC2KB076T8``);
* ``tcode``: Samsung's, Micron's and Kioxia's ``960`` (GB), ``1T9`` (1.92 TB), ``7T6`` (7.68 TB),
  ``8TA`` (8 TB), ``3T84`` (3.84 TB) (``SAMSUNG MZ7LH7T6HMLA-00005``, ``MTFDDAK1T9TDS``,
  ``KCD6XLUL3T84``);
* ``wd``: three digits and ``G`` (gigabytes) or ``T`` (hundredths of a terabyte): ``500G``,
  ``100T`` 1 TB, ``200T`` 2 TB (``WDC WDS200T2B0A``);
* ``tens``: three digits are tens of gigabytes: ``080`` 800 GB, ``192`` 1.92 TB (Toshiba's SAS
  ``PX05SMB080``, ``PX05SVB192Y``).

A decimal read of a capacity code (1.9, 7.6) is the marketing capacity it stands for (1.92, 7.68
TB): the capacities data-centre drives are sold in are multiples of 0.96 or 0.8 TB.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

#: Words a drive prints before its part number; the patterns are written without them.
VENDOR_PREFIXES = (
    "INTEL",
    "SAMSUNG",
    "SOLIDIGM",
    "KINGSTON",
    "WDC",
    "WD",
    "TOSHIBA",
    "KIOXIA",
    "SANDISK",
    "SEAGATE",
    "MICRON",
    "CRUCIAL",
    "HPE",
    "HP",
    "DELL",
    "LENOVO",
    "SK HYNIX",
    "HYNIX",
    "ADATA",
    "HGST",
    "PLEXTOR",
)
_PREFIX = re.compile(r"^(?:" + "|".join(re.escape(p) for p in VENDOR_PREFIXES) + r")[ _-]+", re.I)
#: Capacities sold as a decimal of a terabyte (a code such as ``1T9`` or ``019T`` gives the first digits).
_MARKETING_TB = (0.48, 0.8, 0.96, 1.6, 1.92, 3.2, 3.84, 6.4, 7.68, 12.8, 15.36, 25.6, 30.72, 61.44, 122.88)
SCHEMES = ("gb", "intel", "tcode", "wd", "tens")


class CapacityCodeError(ValueError):
    """A capacity code that the named scheme cannot read (a defect of a ``sources/lines`` entry)."""


def _marketing(tb: float) -> int:
    """1.9 -> 1.92 TB, 7.6 -> 7.68 TB, 3.2 -> 3.2 TB, in bytes: the sold capacity a truncated code
    stands for (the nearest one within 1.5 %, else the value itself)."""
    for m in _MARKETING_TB:
        if m >= tb and (m - tb) / m < 0.015:
            return round(m * 10**12)
    return round(tb * 10**12)


def decode_capacity(code: str, scheme: str) -> int:
    """The capacity in bytes that ``code`` encodes under ``scheme`` (module docstring).

    >>> decode_capacity("076T", "intel"), decode_capacity("1T9", "tcode"), decode_capacity("100T", "wd")
    (7680000000000, 1920000000000, 1000000000000)
    >>> decode_capacity("1920G", "gb"), decode_capacity("8TA", "tcode"), decode_capacity("480G", "intel")
    (1920000000000, 8000000000000, 480000000000)
    >>> decode_capacity("192", "tens"), decode_capacity("020", "tens")
    (1920000000000, 200000000000)
    """
    c = code.upper().strip()
    if scheme == "gb":
        m = re.fullmatch(r"(\d+)(?:G|GB)?", c)
        if m:
            return int(m.group(1)) * 10**9
    elif scheme == "intel":
        m = re.fullmatch(r"(\d{3})([GHT])", c)
        if m:
            n = int(m.group(1))
            return n * 10**9 if m.group(2) in "GH" else _marketing(n / 10)
    elif scheme == "tcode":
        if re.fullmatch(r"\d{3}", c):
            return int(c) * 10**9
        m = re.fullmatch(r"(\d{1,2})T(\d{1,2}|A)", c)
        if m:
            frac = 0 if m.group(2) == "A" else int(m.group(2)) / 10 ** len(m.group(2))
            return _marketing(int(m.group(1)) + frac)
    elif scheme == "wd":
        m = re.fullmatch(r"(\d{3})([GT])", c)
        if m:
            n = int(m.group(1))
            return n * 10**9 if m.group(2) == "G" else round(n / 100 * 10**12)
    elif scheme == "tens":
        if re.fullmatch(r"\d{3}", c):
            return int(c) * 10**10
    raise CapacityCodeError(f"capacity code {code!r} is not one of the {scheme!r} scheme")


def normalise(text: str) -> str:
    """The string a part pattern is matched against: upper case, runs of white space as one
    space, a leading vendor word and its separator off (``'INTEL  SSDSC2BB120G4'`` ->
    ``'SSDSC2BB120G4'``, ``'Micron_5300_MTFDDAK1T9TDS'`` -> ``'5300_MTFDDAK1T9TDS'``)."""
    t = " ".join(text.split()).upper()
    for _ in range(2):  # "HPE SAMSUNG ..." at most
        t2 = _PREFIX.sub("", t, count=1)
        if t2 == t:
            break
        t = t2
    return t


@dataclass(frozen=True)
class Part:
    """One part-number pattern of a line, with where the scheme is stated.

    ``certain`` is False where the source itself hedges the attribution (an OEM string read as
    "5200?"): such a match is a candidate, never the answer. ``shared`` is True where the source
    says one pattern is used by two lines (``MZ7L3``: PM893 and PM897): a match then lists both."""

    pattern: str
    capacity: str | None
    source: str
    certain: bool = True
    shared: bool = False

    def __post_init__(self) -> None:
        if self.capacity is not None and self.capacity not in SCHEMES:
            raise ValueError(f"unknown capacity scheme {self.capacity!r} (one of {', '.join(SCHEMES)})")
        if self.capacity is not None and "cap" not in self.regex.groupindex:
            raise ValueError(f"pattern {self.pattern!r} names a capacity scheme but has no (?P<cap>...) group")

    @functools.cached_property
    def regex(self) -> re.Pattern:
        return re.compile(self.pattern, re.I)

    @functools.cached_property
    def anchor(self) -> str:
        """The longest run of letters and digits every match contains (``MZ7LM`` of
        ``MZ7LM(?P<cap>...)HC...``): a string without it is passed over without compiling."""
        t = re.sub(r"\(\?(?:P<\w+>|:)", "(", self.pattern)
        q = r"(?:[?*+]|\{\d*,?\d*\})?"
        while re.search(r"\([^()]*\)", t):
            t = re.sub(r"\([^()]*\)" + q, " ", t)  # a group: alternatives, or optional
        if "|" in t:  # alternatives at the top level: no run is in every match
            return ""
        t = re.sub(r"(?:\[[^\]]*\]|\\.|.)(?:[?*]|\{0,?\d*\})", " ", t)  # optional pieces
        t = re.sub(r"\[[^\]]*\]" + q + r"|\\." + q + r"|[.^$+{}]", " ", t)
        return max(re.findall(r"[A-Za-z0-9]+", t), key=len, default="").upper()

    def match(self, normalised: str) -> tuple[bool, int | None]:
        """(does the whole string match, the capacity it encodes or None)."""
        if self.anchor and self.anchor not in normalised.upper():
            return False, None
        m = self.regex.fullmatch(normalised)
        if not m:
            return False, None
        code = m.groupdict().get("cap")
        if code is None or self.capacity is None:
            return True, None
        return True, decode_capacity(code, self.capacity)
