"""Values read out of a tool's parsed JSON (smartctl, nvme-cli), taken only for what they are."""

from __future__ import annotations

import math
from typing import Any


def json_int(value: Any) -> int | None:
    """``value`` as an integer when it is one (``7``, ``7.0``); None for booleans, fractions,
    non-finite numbers and anything else.

    >>> json_int(7), json_int(7.0), json_int(True), json_int(7.5), json_int("7")
    (7, 7, None, None, None)
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None
