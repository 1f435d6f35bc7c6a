"""One validation finding: which file, which field, what is wrong, on one line."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    path: str
    field: str
    message: str

    def __str__(self) -> str:
        text = f"{self.field or '-'}: {self.message}"
        text = f"{self.path}: {text}" if self.path else text
        return " ".join(text.split())  # always one line, whatever the input held

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "field": self.field, "message": " ".join(self.message.split())}


def field_path(loc) -> str:
    """pydantic's ``("result", "runs", 0, "points", 2, "iops")`` -> ``result.runs[0].points[2].iops``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out
