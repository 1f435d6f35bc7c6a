"""Parsers of what Ceph says about device health: BLUEFS_SPILLOVER in ``ceph health detail``
and wear levels in ``ceph device ls``. Pure, like :mod:`diskq.cluster.parse`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from diskq.errors import InvalidInput


@dataclass
class Spill:
    """One BLUEFS_SPILLOVER detail of ``ceph health detail``."""

    osd: int
    spilled_bytes: int
    used_bytes: int
    total_bytes: int
    line: str


_SPILL = re.compile(r"osd\.(\d+) spilled over ([\d.]+ ?[KMGTP]?i?B) metadata from '\w+' device "
                    r"\(([\d.]+ ?[KMGTP]?i?B) used of ([\d.]+ ?[KMGTP]?i?B)\) to slow device")
_UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50,
          "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "PB": 10**15}


def _bytes(text: str) -> int:
    m = re.fullmatch(r"([\d.]+) ?([KMGTP]?i?B)", text.strip())
    if not m or m.group(2) not in _UNITS:
        raise ValueError(text)
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def spillover(data) -> list[Spill]:
    """BLUEFS_SPILLOVER lines of ``ceph health detail`` (text, or ``-f json``, or the ``health``
    of a ``ceph report``). A sample (Pacific 16.2.14)::

        osd.76 spilled over 128 KiB metadata from 'db' device (56 GiB used of 60 GiB) to slow device

    >>> spillover("osd.76 spilled over 128 KiB metadata from 'db' device (56 GiB used of 60 GiB) to slow device")[0].spilled_bytes
    131072
    """
    if isinstance(data, dict):
        health = data.get("health") if isinstance(data.get("health"), dict) else data
        checks = health.get("checks") if isinstance(health.get("checks"), dict) else {}
        check = checks.get("BLUEFS_SPILLOVER") if isinstance(checks.get("BLUEFS_SPILLOVER"), dict) else {}
        detail = check.get("detail") if isinstance(check.get("detail"), list) else []
        lines = [str(d.get("message", "")) for d in detail if isinstance(d, dict)]
    else:
        lines = str(data).splitlines()
    out = []
    for ln in lines:
        m = _SPILL.search(ln)
        if m:
            out.append(Spill(int(m.group(1)), _bytes(m.group(2)), _bytes(m.group(3)), _bytes(m.group(4)), m.group()))
    return out


@dataclass
class DeviceHealth:
    device_id: str
    daemons: list[str]
    wear_level: float | None


def device_ls(data) -> list[DeviceHealth]:
    """``ceph device ls -f json``: each device with the daemons on it and its wear level
    (0..1, where the drive reports one). A cluster without device health monitoring prints
    ``[]``."""
    if not isinstance(data, list):
        raise InvalidInput("device ls: expected a JSON list (ceph device ls -f json)")
    out = []
    for d in data:
        if isinstance(d, dict) and d.get("devid"):
            wear = d.get("wear_level")
            out.append(DeviceHealth(str(d["devid"]), [str(x) for x in d.get("daemons") or []],
                                    float(wear) if isinstance(wear, (int, float)) else None))
    return out
