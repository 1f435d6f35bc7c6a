"""The strict reader of untrusted JSON: submission files, and fio's own output inside them or
given to ``diskq import-fio``.

It refuses NaN, Infinity, duplicate member names (fio's output excepted: some fio versions
repeat a key), byte-order marks, invalid UTF-8, absurd nesting and integers a signature cannot
hold exactly (beyond 2^53 - 1, :class:`UnsafeInteger` naming the member); every refusal is a
:class:`~diskq.errors.SubmissionError` of one line.
"""

from __future__ import annotations

import json
import math

from diskq.errors import SubmissionError
from diskq.submission import integers


class _Reject(ValueError):
    pass


def _no_constants(name: str):
    raise _Reject(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Reject(f"number {text[:40]} is out of range")
    return value


def _unique(pairs: list) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        for k, _ in pairs:
            if k in seen:
                raise _Reject(f"member {k[:60]!r} appears twice in one object")
            seen.add(k)
    return obj


class _Unsafe(_Reject):
    pass


def _safe_int(text: str) -> int:
    if len(text) < 16:  # the usual case: far below 2^53
        return int(text)
    if integers.unsafe_text(text):
        raise _Unsafe(text)
    return int(text)


class _Big:
    """Where the second reading of a file found an integer beyond 2^53 - 1."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


def _marked_int(text: str):
    return _Big(text) if integers.unsafe_text(text) else int(text)


#: One strict decoder for every file (``json.loads`` with these hooks would build a new one per call).
_DECODER = json.JSONDecoder(parse_constant=_no_constants, parse_float=_finite, object_pairs_hook=_unique)
#: The same, refusing integers beyond 2^53 - 1: for text that may hold one (a hook per integer
#: costs about half as much again as the reading itself, so it runs only where it can matter).
_CHECKING = json.JSONDecoder(
    parse_constant=_no_constants, parse_float=_finite, object_pairs_hook=_unique, parse_int=_safe_int
)
#: The same, marking such integers instead of refusing them: used only to say where one is.
_MARKING = json.JSONDecoder(
    parse_constant=_no_constants, parse_float=_finite, object_pairs_hook=_unique, parse_int=_marked_int
)
_DIGITS_AS_D = bytes.maketrans(b"0123456789", b"D" * 10)
_SIXTEEN_DIGITS = b"D" * 16


def _may_hold_long_integer(data: bytes) -> bool:
    """Could ``data`` hold an integer of 16 digits or more (2^53 has 16)? False is certain: no run
    of 16 digits stands where an integer can (a run after ``.`` is a fraction, after ``e`` ``e+``
    ``e-`` an exponent). True may be a run inside a string: the exact reading then decides."""
    marked = data.translate(_DIGITS_AS_D)
    i = marked.find(_SIXTEEN_DIGITS)
    while i >= 0:  # i is where a run of digits starts: runs are skipped whole
        before = marked[i - 1 : i]
        if before == b"-" or before == b"+":
            before = marked[i - 2 : i - 1]
            if before not in (b"e", b"E"):
                return True
        elif before not in (b".", b"e", b"E"):
            return True
        i += 16
        while marked[i : i + 1] == b"D":
            i += 1
        i = marked.find(_SIXTEEN_DIGITS, i)
    return False


class UnsafeInteger(SubmissionError):
    """An integer beyond 2^53 - 1: ``field`` is its path, ``detail`` the message without it."""

    def __init__(self, field: str, text: str):
        self.field = field
        self.text = text
        self.detail = f"not acceptable JSON: {integers.describe(text)}"
        super().__init__(f"{field}: {self.detail}")


def _decode(decoder: json.JSONDecoder, text: str):
    try:
        return decoder.decode(text)
    except _Unsafe:
        raise
    except json.JSONDecodeError as exc:
        raise SubmissionError(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise SubmissionError("not acceptable JSON: nested too deeply") from None
    except ValueError as exc:  # _Reject
        raise SubmissionError(f"not acceptable JSON: {exc}") from None


def _utf8(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SubmissionError(f"not UTF-8 (bad byte at offset {exc.start})") from None


#: fio's own output: the same refusals, except that a repeated member keeps its last value (some
#: fio 3.x versions print the percentile key ``"0.00"`` twice).
_FIO_OUTPUT = json.JSONDecoder(parse_constant=_no_constants, parse_float=_finite)


def parse_fio_json(data: bytes):
    """fio's JSON as fio prints it, read like :func:`parse_json` but tolerating repeated keys."""
    return _decode(_FIO_OUTPUT, _utf8(data))


def parse_json(data: bytes):
    """Parse untrusted JSON strictly; raise :class:`SubmissionError` with a one-line reason
    (:class:`UnsafeInteger`, naming the member, for an integer beyond 2^53 - 1)."""
    if data.startswith(b"\xef\xbb\xbf"):
        raise SubmissionError("file starts with a byte-order mark; save it as plain UTF-8")
    text = _utf8(data)
    # Every float is checked for overflow to infinity: cheaper than scanning the text for numbers
    # that might overflow first (the scan cost more than the check it saved).
    try:
        return _decode(_CHECKING if _may_hold_long_integer(data) else _DECODER, text)
    except _Unsafe:
        pass
    # Read again, marking the integers instead of stopping at the first, to name its member.
    found = integers.find(_decode(_MARKING, text), lambda v: type(v) is _Big)
    raise UnsafeInteger(found[0][:200], found[1].text) if found else UnsafeInteger("-", "?")
