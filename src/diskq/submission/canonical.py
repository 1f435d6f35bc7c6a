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

Documents of one kind hold many objects with the same member names (every fio step, every
latency summary), so :func:`canonicalize` remembers, per tuple of names, their sorted order and
written form. :func:`canonicalize_plain` writes every member afresh; it is the reference the
fast writer is tested against, and the one that words an error when there is one.
"""

from __future__ import annotations

import math
from json.encoder import encode_basestring  # C-accelerated; escapes exactly what JCS escapes

#: Deeper nesting than this is refused rather than risking the interpreter's recursion limit.
MAX_DEPTH = 200
#: Objects with at most this many members have their layout remembered, up to LAYOUTS_KEPT
#: different tuples of names (a bound on memory whatever the input).
LAYOUT_MAX_NAMES = 64
LAYOUTS_KEPT = 4096

_MAX_SAFE_INT = 2**53
_LAYOUTS: dict[tuple, tuple[tuple[str, str], ...]] = {}


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
    # Lone surrogates cannot be written as UTF-8: I-JSON (and so JCS) forbids them.
    if not s.isascii():
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:
            raise CanonicalError("string holds a lone UTF-16 surrogate") from None
    return encode_basestring(s)


def _utf16_key(name: str) -> bytes:
    return name.encode("utf-16-be", "surrogatepass")


def _sorted_names(obj: dict) -> list[str]:
    try:
        if "".join(obj).isascii():  # the common case: code point order is UTF-16 order
            return sorted(obj)
        return sorted(obj, key=_utf16_key)
    except TypeError:
        raise CanonicalError("object member names must be strings") from None


def _float(x: float) -> str:
    # Between 1e-4 and 1e16 Python's repr and ECMAScript lay out the same shortest digits the
    # same way; integral values and everything else go through es_number.
    if 1e-4 <= abs(x) < 1e16 and not x.is_integer():
        return repr(x)
    return es_number(x)


def _emit(value, parts: list[str], depth: int) -> None:
    append = parts.append
    t = type(value)
    if t is str:
        append(_string(value))
    elif t is float:
        append(_float(value))
    elif t is int:
        append(str(value) if -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT else es_number(value))
    elif t is dict:
        if depth >= MAX_DEPTH:
            raise CanonicalError(f"nested deeper than {MAX_DEPTH} levels")
        if not value:
            append("{}")
            return
        sep = "{"
        for name in _sorted_names(value):
            append(sep)
            sep = ","
            append(_string(name))
            append(":")
            item = value[name]
            ti = type(item)
            if ti is str:
                append(_string(item))
            elif ti is float:
                append(_float(item))
            elif ti is int and -_MAX_SAFE_INT <= item <= _MAX_SAFE_INT:
                append(str(item))
            else:
                _emit(item, parts, depth + 1)
        append("}")
    elif t is list or t is tuple:
        if depth >= MAX_DEPTH:
            raise CanonicalError(f"nested deeper than {MAX_DEPTH} levels")
        if not value:
            append("[]")
            return
        sep = "["
        for item in value:
            append(sep)
            sep = ","
            _emit(item, parts, depth + 1)
        append("]")
    elif value is None:
        append("null")
    elif value is True:
        append("true")
    elif value is False:
        append("false")
    elif isinstance(value, (int, float)):
        append(es_number(value))
    else:
        raise CanonicalError(f"{t.__name__} is not a JSON value")


def canonicalize_plain(obj) -> bytes:
    """:func:`canonicalize`, every member written afresh: the reference for the fast writer."""
    parts: list[str] = []
    _emit(obj, parts, 0)
    return "".join(parts).encode("utf-8")


def _layout(obj: dict) -> tuple[tuple[str, str], ...]:
    """(name, written prefix) per member in canonical order: ``{"a":`` first, ``,"b":`` after.

    Remembered per tuple of names in the object's order; names are compared as strings, as the
    C encoder of :mod:`json` does for its own key cache.
    """
    shape = tuple(obj)
    layout = _LAYOUTS.get(shape)
    if layout is None:
        names = _sorted_names(obj)
        layout = tuple((name, ("," if i else "{") + _string(name) + ":") for i, name in enumerate(names))
        if len(shape) <= LAYOUT_MAX_NAMES and len(_LAYOUTS) < LAYOUTS_KEPT:
            _LAYOUTS[shape] = layout
    return layout


def _scalar(value) -> str:
    t = type(value)
    if t is str:
        return _string(value)
    if t is float:
        return _float(value)
    if t is int:
        return str(value) if -_MAX_SAFE_INT <= value <= _MAX_SAFE_INT else es_number(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return es_number(value)
    raise CanonicalError(f"{t.__name__} is not a JSON value")


def _container(value, parts: list[str], depth: int) -> None:
    """Write a dict, list or tuple; scalars inside are written in place, not by a call each."""
    if depth >= MAX_DEPTH:
        raise CanonicalError(f"nested deeper than {MAX_DEPTH} levels")
    append = parts.append
    if type(value) is dict:
        if not value:
            append("{}")
            return
        for name, prefix in _layout(value):
            append(prefix)
            item = value[name]
            t = type(item)
            if t is str:
                append(_string(item))
            elif t is float:
                append(_float(item))
            elif t is int and -_MAX_SAFE_INT <= item <= _MAX_SAFE_INT:
                append(str(item))
            elif item is None:
                append("null")
            elif t is dict or t is list or t is tuple:
                _container(item, parts, depth + 1)
            else:
                append(_scalar(item))
        append("}")
    else:
        if not value:
            append("[]")
            return
        sep = "["
        for item in value:
            append(sep)
            sep = ","
            t = type(item)
            if t is dict or t is list or t is tuple:
                _container(item, parts, depth + 1)
            else:
                append(_scalar(item))
        append("]")


def canonicalize(obj) -> bytes:
    """The RFC 8785 canonical UTF-8 bytes of a JSON value (dicts, lists, str, numbers, bools, None).

    >>> canonicalize({"b": [1.0, 2.5e-7], "a": "\\u20ac"})
    b'{"a":"\\xe2\\x82\\xac","b":[1,2.5e-7]}'

    Raises :class:`CanonicalError` for anything that is not I-JSON, with the words of
    :func:`canonicalize_plain` (which writes members in the same order and stops at the first).
    """
    try:
        t = type(obj)
        if t is dict or t is list or t is tuple:
            parts: list[str] = []
            _container(obj, parts, 0)
            return "".join(parts).encode("utf-8")
        return _scalar(obj).encode("utf-8")
    except CanonicalError:
        return canonicalize_plain(obj)  # raises the error of the first bad member, as it is reached
