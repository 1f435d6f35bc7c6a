"""RFC 8785 JSON Canonicalization Scheme (JCS): the exact bytes a submission signature covers.

The rules, from the RFC:

* no whitespace; object members sorted by the UTF-16 code units of their names;
* strings: only ``"`` ``\\`` and U+0000..U+001F are escaped (``\\b \\f \\n \\r \\t`` in short
  form, the rest as ``\\u00xx`` in lower case); everything else is written as UTF-8;
* numbers are IEEE 754 doubles written the way ECMAScript's ``Number.prototype.toString``
  writes them (shortest round-trip digits, ``1e+21`` but ``100000000000000000000``,
  ``0.000001`` but ``1e-7``, ``-0`` as ``0``); NaN and Infinity are not JSON and are refused.

Python's ``repr(float)`` already yields the shortest round-trip digits; only the layout
differs, so :func:`es_number` re-lays those digits out.
"""

from __future__ import annotations

import math
from json.encoder import encode_basestring  # C-accelerated; escapes exactly what JCS escapes

#: Deeper nesting than this is refused rather than risking the interpreter's recursion limit.
MAX_DEPTH = 200

_MAX_SAFE_INT = 2**53


class CanonicalError(ValueError):
    """The value cannot be written as canonical JSON (NaN, a lone surrogate, too deep, ...)."""


def es_number(x: float | int) -> str:
    """A number as ECMAScript writes it (RFC 8785 section 3.2.2.3).

    >>> es_number(1e21), es_number(1e20), es_number(1e-7), es_number(0.000001), es_number(4.50)
    ('1e+21', '100000000000000000000', '1e-7', '0.000001', '4.5')
    """
    if isinstance(x, int):
        if -_MAX_SAFE_INT <= x <= _MAX_SAFE_INT:
            return str(x)
        try:
            x = float(x)
        except OverflowError:
            raise CanonicalError("integer too large for an IEEE 754 double") from None
    if not math.isfinite(x):
        raise CanonicalError(f"{x!r} is not a JSON number")
    if x == 0:
        return "0"
    if x.is_integer() and abs(x) < _MAX_SAFE_INT:
        return str(int(x))
    sign = "-" if x < 0 else ""
    mantissa, _, exp = repr(abs(x)).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    point = len(whole) + (int(exp) if exp else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k, n = len(digits), point
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        esign = "+" if e >= 0 else "-"
        head = digits[0] + ("." + digits[1:] if k > 1 else "")
        out = f"{head}e{esign}{abs(e)}"
    return sign + out


def _string(s: str) -> str:
    out = encode_basestring(s)
    # Lone surrogates cannot be written as UTF-8: I-JSON (and so JCS) forbids them.
    if not s.isascii():
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:
            raise CanonicalError("string holds a lone UTF-16 surrogate") from None
    return out


def _utf16_key(name: str) -> bytes:
    return name.encode("utf-16-be", "surrogatepass")


def _sorted_names(obj: dict) -> list[str]:
    names = list(obj)
    for name in names:
        if type(name) is not str:
            raise CanonicalError("object member names must be strings")
    if all(name.isascii() for name in names):
        return sorted(names)
    return sorted(names, key=_utf16_key)


def _emit(value, parts: list[str], depth: int) -> None:
    t = type(value)
    if t is str:
        parts.append(_string(value))
    elif t is dict:
        if depth >= MAX_DEPTH:
            raise CanonicalError(f"nested deeper than {MAX_DEPTH} levels")
        if not value:
            parts.append("{}")
            return
        parts.append("{")
        first = True
        for name in _sorted_names(value):
            if not first:
                parts.append(",")
            first = False
            parts.append(_string(name))
            parts.append(":")
            _emit(value[name], parts, depth + 1)
        parts.append("}")
    elif t is list or t is tuple:
        if depth >= MAX_DEPTH:
            raise CanonicalError(f"nested deeper than {MAX_DEPTH} levels")
        parts.append("[")
        for i, item in enumerate(value):
            if i:
                parts.append(",")
            _emit(item, parts, depth + 1)
        parts.append("]")
    elif value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif t is float or t is int:
        parts.append(es_number(value))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        parts.append(es_number(value))
    else:
        raise CanonicalError(f"{t.__name__} is not a JSON value")


def canonicalize(obj) -> bytes:
    """The RFC 8785 canonical UTF-8 bytes of a JSON value (dicts, lists, str, numbers, bools, None).

    >>> canonicalize({"b": [1.0, 2.5e-7], "a": "\\u20ac"})
    b'{"a":"\\xe2\\x82\\xac","b":[1,2.5e-7]}'

    Raises :class:`CanonicalError` for anything that is not I-JSON.
    """
    parts: list[str] = []
    _emit(obj, parts, 0)
    return "".join(parts).encode("utf-8")
