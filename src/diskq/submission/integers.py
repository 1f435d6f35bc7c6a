"""Integers a signature can hold exactly: at most 2^53 - 1 in size.

RFC 8785 writes every number as an IEEE 754 double, and a double holds every integer only up
to 2^53 - 1 in size (``Number.MAX_SAFE_INTEGER``): 2^60 and 2^60 + 1 have the same canonical
form, so a signature over one also covers the other. Signed documents therefore hold no larger
integers: the strict JSON reader refuses them, and so does signing.
"""

from __future__ import annotations

from collections.abc import Callable

MAX_SAFE_INTEGER = 2**53 - 1
#: Longest integer text that may still be safe: 16 digits and a sign (2^53 - 1 has 16 digits).
_MAX_SAFE_CHARS = 17


def unsafe_text(text: str) -> bool:
    """Is the JSON integer ``text`` beyond 2^53 - 1 in size? (no ``int()`` of thousands of digits)"""
    if len(text) < 16:
        return False
    return len(text) > _MAX_SAFE_CHARS or abs(int(text)) > MAX_SAFE_INTEGER


def unsafe_int(value) -> bool:
    return type(value) is int and not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER


def describe(text: str) -> str:
    """``integer 1152921504606846977 is beyond ...``, long integers shortened."""
    digits = text.lstrip("-")
    shown = text if len(text) <= 24 else f"{text[:20]}... ({len(digits)} digits)"
    return (
        f"integer {shown} is beyond +-(2^53-1): a signature over RFC 8785 JSON holds numbers as "
        "IEEE doubles, which cannot tell it from its neighbours"
    )


def find(obj, is_unsafe: Callable[[object], bool]) -> tuple[str, object] | None:
    """The path (``result.device.data_written_bytes``, ``a[2].b``) and value of the first member
    in document order for which ``is_unsafe`` holds, or None. Iterative: any nesting depth."""
    stack: list[tuple[str, object]] = [("", obj)]
    while stack:
        path, value = stack.pop()
        if type(value) is dict:
            stack.extend((f"{path}.{k}" if path else str(k), v) for k, v in reversed(list(value.items())))
        elif type(value) is list:
            stack.extend((f"{path}[{i}]", v) for i, v in reversed(list(enumerate(value))))
        elif is_unsafe(value):
            return path or "-", value
    return None
