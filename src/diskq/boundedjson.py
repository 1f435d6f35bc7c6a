"""JSON from elsewhere (saved ``ceph`` outputs, the documents a fleet run fetched), decoded within
bounds: what decoding costs is known from the size of the text before it starts, and no number
it yields is one no tool prints.

* **Numbers**: ``NaN``, ``Infinity`` and numbers beyond :data:`MAX_NUMBER` (``1e999`` would be
  infinity; a Ceph counter is a 64-bit unsigned integer) are refused, naming the number.
* **Size**: the text's objects and arrays (its ``{`` and ``[``) and values (its ``,``) are
  counted first, strings included, so the count is never below the truth; beyond
  :data:`MAX_CONTAINERS` or :data:`MAX_VALUES` the text is refused before a single object is
  built. Decoding is linear in the text and the memory it takes bounded by these counts.
* **Depth**: nesting deeper than the decoder's recursion allows (about a thousand levels; a
  perf dump nests 4 deep, a ``ceph report`` 9) is refused, not a traceback.

Every refusal is a :class:`Refused` (a ``ValueError``) of one line.

>>> decode('{"kv_commit_lat": {"avgcount": 3, "sum": 0.0123}}')
{'kv_commit_lat': {'avgcount': 3, 'sum': 0.0123}}
>>> decode('{"db_used_bytes": Infinity}')
Traceback (most recent call last):
...
diskq.boundedjson.Refused: Infinity is not a number any tool prints
"""

from __future__ import annotations

import json
import math

#: The largest magnitude accepted: 2^64, above every 64-bit counter.
MAX_NUMBER = 2**64
#: Objects and arrays in one text. A ``ceph report`` of 288 OSDs holds 10,925 (38 per OSD):
#: this allows a cluster of some 25,000 OSDs.
MAX_CONTAINERS = 1_000_000
#: Values (commas) in one text: the same ``ceph report`` holds about 350 per OSD.
MAX_VALUES = 10_000_000


class Refused(ValueError):
    """The text is not decoded: a number no tool prints, or beyond the bounds."""


def _constant(name: str):
    raise Refused(f"{name} is not a number any tool prints")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or abs(value) > MAX_NUMBER:
        raise Refused(f"the number {text[:40]} is out of range")
    return value


def _int(text: str) -> int:
    if len(text) > 21:  # 2^64 has 20 digits
        raise Refused(f"the number {text[:40]}... is out of range")
    value = int(text)
    if abs(value) > MAX_NUMBER:
        raise Refused(f"the number {text[:40]} is out of range")
    return value


_DECODER = json.JSONDecoder(parse_constant=_constant, parse_float=_float, parse_int=_int)


def decode(text: str, *, containers: int = MAX_CONTAINERS, values: int = MAX_VALUES):
    """``text`` decoded, or :class:`Refused` (see the module's docstring)."""
    opened = text.count("{") + text.count("[")
    if opened > containers:
        raise Refused(f"{opened:,} objects and arrays: more than {containers:,}, beyond any output read here")
    commas = text.count(",")
    if commas > values:
        raise Refused(f"{commas:,} values: more than {values:,}, beyond any output read here")
    try:
        return _DECODER.decode(text)
    except RecursionError:
        raise Refused("nested deeper than any output read here") from None
    except json.JSONDecodeError as exc:
        raise Refused(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
