"""One entry of the restore journal: what it records, its file's name and JSON, and how it is read.

An entry records a changed device's original write cache state, the mechanism that changed it,
the owner process (pid and start time, so a reused pid is not mistaken for it; boot id, so a
reboot ends it) and the device's ``diskseq`` (so a detached and re-created loop device, or a
replugged drive, is not "restored" by mistake). Its file is ``cache-NAME-MECHANISM.json``.

A file that cannot be read as an entry (empty, truncated, extended with junk, a field of the
wrong type) is a :class:`DamagedEntry`: its reason, its raw content and the device its name or
a legible ``"device"`` field points to. The journal (:mod:`diskq.probe.journal`) keeps it.

The parser is pure; this module imports only the standard library.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, fields
from pathlib import Path

#: the mechanisms an entry's name may end with (:mod:`diskq.probe.cache`)
MECHANISMS = ("sysfs", "hdparm", "sdparm", "nvme")
#: bytes of an entry read at most (a real entry has about 300)
RAW_LIMIT = 4096
#: the largest value of a pid_t (Linux hands out at most 2**22)
PID_MAX = 2**31 - 1


@dataclass
class JournalEntry:
    device: str
    mechanism: str
    original: str
    sysfs_root: str
    diskseq: str | None
    pid: int
    pid_start: str | None
    boot_id: str | None
    created: str
    file: str = ""

    @property
    def running(self) -> bool:
        """The process that wrote this entry is still alive (its run is in progress)."""
        return _process_alive(self.pid, self.pid_start, self.boot_id)


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _boot_id() -> str | None:
    return _read("/proc/sys/kernel/random/boot_id")


def _start_time(pid: int) -> str | None:
    """Field 22 of /proc/PID/stat: the process start time in clock ticks since boot."""
    stat = _read(f"/proc/{pid}/stat")
    if not stat:
        return None
    # the command name (field 2) may contain spaces and parentheses: split after the last ')'
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def _process_alive(pid: int, start: str | None, boot_id: str | None) -> bool:
    if boot_id and _boot_id() and boot_id != _boot_id():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return start is None or _start_time(pid) == start


def _printable(text: str) -> str:
    r"""``text`` as it is when every character prints, else with JSON string escapes.

    >>> _printable("cache-sdb-hdparm.json"), _printable("cache-\x1b[2J-sysfs.json")
    ('cache-sdb-hdparm.json', 'cache-\\u001b[2J-sysfs.json')
    """
    return text if text.isprintable() else json.dumps(text)[1:-1]


class DamagedEntry:
    """A journal file that cannot be read as an entry: ``reason`` says why, ``raw`` holds its
    content (at most :data:`RAW_LIMIT` bytes, undecodable bytes replaced), ``device`` the device
    its name points to, or None when its name does not tell."""

    def __init__(self, file: str, reason: str, raw: str, device: str | None):
        self.file, self.reason, self.raw, self.device = file, reason, raw, device

    @property
    def name(self) -> str:
        """The file name, as ``--discard`` takes it (control characters escaped)."""
        return _printable(Path(self.file).name)

    def shown(self, limit: int = 200) -> str:
        """The raw content as one printable line: JSON string escapes (no control character
        reaches the terminal), cut at ``limit`` characters."""
        text = json.dumps(self.raw)
        return text if len(text) <= limit else text[:limit] + "..."

    def describe(self) -> str:
        """One line for messages."""
        return f"{_printable(self.file)}: damaged journal entry ({self.reason}); raw content: {self.shown()}"

    def as_dict(self) -> dict:
        return {"file": self.file, "reason": self.reason, "raw": self.raw, "device": self.device}


_STRINGS = ("device", "mechanism", "sysfs_root", "created")
_OPTIONAL = ("diskseq", "pid_start", "boot_id")


def parse_entry(text: str, file: str = "") -> JournalEntry:
    """A journal entry from its JSON; ValueError saying what is wrong with anything else: not
    JSON, trailing junk, a missing or unknown field, a field of the wrong type. A sample::

        {"device": "/dev/sdb", "mechanism": "hdparm", "original": "on", "sysfs_root": "/sys",
         "diskseq": "12", "pid": 4242, "pid_start": "98765", "boot_id": "9c1e...",
         "created": "2026-11-26T07:00:00Z"}
    """
    if not text.strip():
        raise ValueError("it is empty")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"not JSON: {getattr(exc, 'msg', 'too deeply nested')}") from None
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    wanted = [f.name for f in fields(JournalEntry) if f.name != "file"]
    missing = [k for k in wanted if k not in data]
    unknown = [k for k in data if k not in wanted]
    if missing or unknown:
        parts = ([f"missing field(s) {', '.join(missing)}"] if missing else []) + (
            [f"unknown field(s) {', '.join(json.dumps(k)[:40] for k in unknown[:5])}"] if unknown else []
        )
        raise ValueError("; ".join(parts))
    for key in _STRINGS:
        if not isinstance(data[key], str) or not data[key]:
            raise ValueError(f"{key} is not a non-empty string: {json.dumps(data[key])[:40]}")
    for key in _OPTIONAL:
        if data[key] is not None and not isinstance(data[key], str):
            raise ValueError(f"{key} is neither a string nor null: {json.dumps(data[key])[:40]}")
    pid = data["pid"]
    if isinstance(pid, bool) or not isinstance(pid, int) or not 0 < pid <= PID_MAX:
        raise ValueError(f"pid is not a process id: {json.dumps(pid)[:40]}")
    if data["original"] not in ("on", "off"):
        raise ValueError(f'original is neither "on" nor "off": {json.dumps(data["original"])[:40]}')
    if not data["device"].startswith("/"):
        raise ValueError(f"device is not a path: {json.dumps(data['device'])[:40]}")
    return JournalEntry(**data, file=file)


def device_of_name(name: str) -> str | None:
    """The device an entry's file name points to (``cache-NAME-MECHANISM.json`` ->
    ``/dev/NAME``), or None when the name does not follow that form.

    >>> device_of_name("cache-nvme0n1-nvme.json"), device_of_name("cache-dm-3-sysfs.json"), device_of_name("cache-x.json")
    ('/dev/nvme0n1', '/dev/dm-3', None)
    """
    m = re.fullmatch(r"cache-(.+)-([a-z]+)\.json", name)
    if not m or m.group(2) not in MECHANISMS or "/" in m.group(1):
        return None
    return f"/dev/{m.group(1)}"


_DEVICE_FIELD = re.compile(r'"device"\s*:\s*"([^"\\]{1,200})"')


def _same_device(damaged: DamagedEntry, device: str) -> bool:
    """Whether a damaged entry may be ``device``'s: its name or a ``"device"`` field still
    legible in its raw content names it (by path, by the last part of the path, or by the
    node both resolve to); True when neither tells which device it was."""
    named = [damaged.device] if damaged.device else []
    legible = _DEVICE_FIELD.search(damaged.raw)
    if legible:
        named.append(legible.group(1))
    if not named:
        return True
    for other in named:
        if other == device or Path(other).name == Path(device).name:
            return True
        try:
            if os.path.realpath(other) == os.path.realpath(device):
                return True
        except (OSError, ValueError):  # an embedded NUL, say: not a path of this device
            continue
    return False


def _entry_name(device: str, mechanism: str) -> str:
    return f"cache-{Path(device).name}-{mechanism}.json"
