"""One validation finding: which file, which field, what is wrong, on one line."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass


def one_line(text: str) -> str:
    """``text`` safe to print on a terminal and to store: whitespace of any kind (newlines, tabs)
    becomes one space, and every other control, format or unassigned character (an ANSI escape's
    ESC, a bidirectional override) is written as its escape (``\\x1b``, ``\\u202e``), so a file
    name can neither inject a line nor drive the terminal.

    >>> one_line("a\\x1b[2Jb\\nskipped  0")
    'a\\\\x1b[2Jb skipped 0'
    """
    if text.isprintable() and " " not in text:
        return text
    out = []
    for ch in text:
        if ch.isspace():
            out.append(" ")
        elif ch.isprintable() or unicodedata.category(ch)[0] not in "CZ":
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return " ".join("".join(out).split())


@dataclass(frozen=True)
class Problem:
    path: str
    field: str
    message: str

    def __str__(self) -> str:
        text = f"{self.field or '-'}: {self.message}"
        text = f"{self.path}: {text}" if self.path else text
        return one_line(text)  # always one line of printable text, whatever the input held

    def to_dict(self) -> dict[str, str]:
        return {"path": one_line(self.path), "field": one_line(self.field), "message": one_line(self.message)}


def field_path(loc) -> str:
    """pydantic's ``("result", "runs", 0, "points", 2, "iops")`` -> ``result.runs[0].points[2].iops``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out
