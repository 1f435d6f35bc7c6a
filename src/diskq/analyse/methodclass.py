"""The class of a synchronous-write method: what reaches the drive, from the method and the
drive's protocol.

Two figures are comparable only within a class. A class id reads
``KIND/PATTERN/TARGET/IO[/qdN][/SIZE]``: ``flush/write/raw/direct`` is a 4 KiB write followed by
a cache flush, sequential, on a raw device, with O_DIRECT, one write at a time (what
``diskq bench`` and the community fio command measure). The block size is part of the class:
4 KiB is the default and left out of the id, any other size ends it (``.../16k``), so 16 KiB
figures never sit among 4 KiB ones. The kind rules and their reasons are data
(``method_classes.toml``, shown on the methodology page)::

    >>> classify(Traits("o_sync", "write", "raw", True, 1), "ata").id
    'flush/write/raw/direct'
    >>> classify(Traits("o_sync", "write", "raw", True, 1), "nvme").id
    'fua/write/raw/direct'
    >>> classify(Traits("fdatasync", "write", "file", True, 1, block_size=16384), "nvme").id
    'flush/write/file/direct/16k'
    >>> classify(Traits("o_sync", "write", "raw", False, 1, platform="illumos"), "nvme").id
    'sync-unknown/write/raw/buffered'

Words that name a class (:func:`label`, :func:`short`) are what titles, headers and chart labels
show: a figure is called fdatasync only when its method called fdatasync.
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
    block_size: int = 4096  # bytes per write
    platform: str = "linux"  # linux | freebsd | illumos | windows | unknown: the system that ran it


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


def _matches(rule: dict, traits: Traits, protocol: str) -> bool:
    """Does a rule apply? ``sync`` and ``protocols`` always; ``platforms`` and ``direct`` where
    the rule names them."""
    return (
        traits.sync in rule["sync"]
        and ("*" in rule["protocols"] or protocol in rule["protocols"])
        and ("platforms" not in rule or traits.platform in rule["platforms"])
        and ("direct" not in rule or traits.direct == rule["direct"])
    )


def _kind(traits: Traits, protocol: str) -> tuple[str, str]:
    for rule in rules()["rule"]:
        if _matches(rule, traits, protocol):
            return rule["kind"], rule["reason"]
    raise ValueError(f"no method-class rule for sync={traits.sync!r} on protocol {protocol!r} ({traits.platform})")


def size_part(block_size: int) -> str | None:
    """The block size as a class id part: None for 4 KiB (the default), ``16k``, ``512``.

    >>> size_part(4096), size_part(16384), size_part(512)
    (None, '16k', '512')
    """
    if block_size == 4096:
        return None
    return f"{block_size // 1024}k" if block_size % 1024 == 0 else str(block_size)


def block_bytes(text: str) -> int:
    """``4k``, ``16K``, ``512`` -> bytes.

    >>> block_bytes("16k"), block_bytes("4K"), block_bytes("512")
    (16384, 4096, 512)
    """
    t = text.strip().lower().removesuffix("b").removesuffix("i")
    mult = {"k": 1024, "m": 1024 * 1024}.get(t[-1:], 1)
    return int(t[:-1] if mult > 1 else t) * mult


def classify(traits: Traits, protocol: str | None) -> MethodClass:
    """The class of ``traits`` on a drive speaking ``protocol`` (ata, scsi, nvme, pcie, unknown)."""
    kind, reason = _kind(traits, protocol or "unknown")
    io = "direct" if traits.direct else "buffered"
    parts = [kind, traits.pattern, traits.target, io]
    if traits.iodepth > 1:
        parts.append(f"qd{traits.iodepth}")
    if (size := size_part(traits.block_size)) is not None:
        parts.append(size)
    class_id = "/".join(parts)
    return MethodClass(class_id, kind, label(class_id), reason)


def label(class_id: str) -> str:
    """The words for a class id (the id itself when it is not one this module writes)."""
    data = rules()
    parts = class_id.split("/")
    try:
        words = [
            data["kinds"][parts[0]]["label"],
            data["pattern"][parts[1]],
            data["target"][parts[2]],
            data["io"][parts[3]],
        ]
    except (KeyError, IndexError):
        return class_id
    words += [f"queue depth {p[2:]}" for p in parts[4:] if p.startswith("qd")]
    sizes = [p for p in parts[4:] if not p.startswith("qd")]
    if sizes:  # 4 KiB, the size of every class without one, goes unsaid
        words.append(
            f"{sizes[0].upper().replace('K', ' KiB')} writes" if sizes[0].endswith("k") else f"{sizes[0]}-byte writes"
        )
    return " · ".join(words)


def short(class_id: str) -> str:
    """The few words a header or chart label names a class with: what follows each write, and
    the block size when it is not 4 KiB (``4 KiB write + flush``, ``16 KiB write + flush``,
    ``4 KiB FUA write``, ``4 KiB sync write, path not known``).

    >>> short("flush/write/raw/direct"), short("fua/write/raw/direct"), short("flush/write/file/direct/16k")
    ('4 KiB write + flush', '4 KiB FUA write', '16 KiB write + flush')
    """
    parts = class_id.split("/")
    sizes = [p for p in parts[4:] if not p.startswith("qd")]
    size = (
        sizes[0].upper().replace("K", " KiB")
        if sizes and sizes[0].endswith("k")
        else (f"{sizes[0]}-byte" if sizes else "4 KiB")
    )
    kind = rules()["kinds"].get(parts[0], {}).get("short")
    return f"{size} {kind}" if kind else class_id


#: What a method asks for with or after each write, as headers and titles write it.
SYNC_WORDS = {
    "fdatasync": "fdatasync",
    "fsync": "fsync",
    "o_sync": "O_SYNC",
    "o_dsync": "O_DSYNC",
    "o_sync+fsync": "O_SYNC + fsync",
    "flush": "an explicit flush",
}


def named(class_id: str, sync: str | None) -> str:
    """A class and the call that produced it, for titles and labels: ``4 KiB write + flush
    (fdatasync)``, ``4 KiB write + flush (O_SYNC)``, ``4 KiB FUA write (O_SYNC)``. A figure is
    called fdatasync only when its method called fdatasync.

    >>> named("flush/write/raw/direct", "o_sync"), named("flush/write/raw/direct", "fdatasync")
    ('4 KiB write + flush (O_SYNC)', '4 KiB write + flush (fdatasync)')
    """
    words = SYNC_WORDS.get(sync or "")
    return f"{short(class_id)} ({words})" if words else short(class_id)


def call(class_id: str, sync: str | None) -> str:
    """The fewest words for a title: the call, and what it sent when the call alone does not
    say (``fdatasync``, ``O_SYNC, flush``, ``O_SYNC, FUA``, ``O_SYNC, path not known``).

    >>> call("flush/write/raw/direct", "fdatasync"), call("fua/write/raw/direct", "o_sync")
    ('fdatasync', 'O_SYNC, FUA')
    """
    words = SYNC_WORDS.get(sync or "", "sync")
    kind = class_id.split("/", 1)[0]
    if sync in ("fdatasync", "fsync", "flush", "o_sync+fsync") and kind == "flush":
        return words
    return f"{words}, {dict(flush='flush', fua='FUA').get(kind, 'path not known')}"


def order(class_id: str) -> tuple:
    """Sort key of classes: the main table's first, then flush, FUA, unknown, each by id."""
    kinds = list(rules()["kinds"])
    kind = class_id.split("/", 1)[0]
    return (class_id != MAIN, kinds.index(kind) if kind in kinds else len(kinds), class_id)
