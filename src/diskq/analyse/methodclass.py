"""The class of a synchronous-write method: what reaches the drive, from the method and the
drive's protocol.

Two figures are comparable only within a class. A class id reads
``KIND/PATTERN/TARGET/IO[/qdN]``: ``flush/write/raw/direct`` is a 4 KiB write followed by a
cache flush, sequential, on a raw device, with O_DIRECT, one write at a time (what
``diskq bench`` and the community fio command measure). The kind rules and their reasons are
data (``method_classes.toml``, shown on the methodology page)::

    >>> classify(Traits("o_sync", "write", "raw", True, 1), "ata").id
    'flush/write/raw/direct'
    >>> classify(Traits("o_sync", "write", "raw", True, 1), "nvme").id
    'fua/write/raw/direct'
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from importlib import resources

#: The class of diskq bench's method and the community fdatasync command: the main table's.
MAIN = "flush/write/raw/direct"


@dataclass(frozen=True)
class Traits:
    """What a method does, as far as the drive can tell."""

    sync: str  # fdatasync | fsync | o_sync | o_dsync | o_sync+fsync | flush
    pattern: str  # write | randwrite
    target: str  # raw | file
    direct: bool
    iodepth: int


@dataclass(frozen=True)
class MethodClass:
    id: str
    kind: str
    label: str  # "flush per write · sequential · raw device · O_DIRECT"
    reason: str  # why this kind, for this sync mode and protocol


@functools.cache
def rules() -> dict:
    """The parsed ``method_classes.toml``."""
    text = resources.files("diskq.analyse").joinpath("method_classes.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def _kind(sync: str, protocol: str) -> tuple[str, str]:
    for rule in rules()["rule"]:
        if sync in rule["sync"] and ("*" in rule["protocols"] or protocol in rule["protocols"]):
            return rule["kind"], rule["reason"]
    raise ValueError(f"no method-class rule for sync={sync!r} on protocol {protocol!r}")


def classify(traits: Traits, protocol: str | None) -> MethodClass:
    """The class of ``traits`` on a drive speaking ``protocol`` (ata, scsi, nvme, pcie, unknown)."""
    data = rules()
    kind, reason = _kind(traits.sync, protocol or "unknown")
    io = "direct" if traits.direct else "buffered"
    parts = [kind, traits.pattern, traits.target, io]
    words = [data["kinds"][kind]["label"], data["pattern"][traits.pattern], data["target"][traits.target],
             data["io"][io]]
    if traits.iodepth > 1:
        parts.append(f"qd{traits.iodepth}")
        words.append(f"queue depth {traits.iodepth}")
    return MethodClass("/".join(parts), kind, " · ".join(words), reason)


def label(class_id: str) -> str:
    """The words for a class id (the id itself when it is not one this module writes)."""
    data = rules()
    parts = class_id.split("/")
    try:
        words = [data["kinds"][parts[0]]["label"], data["pattern"][parts[1]], data["target"][parts[2]],
                 data["io"][parts[3]]]
    except (KeyError, IndexError):
        return class_id
    words += [f"queue depth {p[2:]}" for p in parts[4:] if p.startswith("qd")]
    return " · ".join(words)


def order(class_id: str) -> tuple:
    """Sort key of classes: the main table's first, then flush, FUA, unknown, each by id."""
    kinds = list(rules()["kinds"])
    kind = class_id.split("/", 1)[0]
    return (class_id != MAIN, kinds.index(kind) if kind in kinds else len(kinds), class_id)
