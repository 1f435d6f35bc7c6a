"""Parsers of what Ceph says about device health: wear levels in ``ceph device ls``. Pure, like
:mod:`diskq.cluster.parse`; the health checks of ``ceph health detail`` are read by
:mod:`diskq.cluster.checks`."""

from __future__ import annotations

from dataclasses import dataclass

from diskq.errors import InvalidInput


@dataclass
class DeviceHealth:
    device_id: str
    daemons: list[str]
    wear_level: float | None


def device_ls(data) -> list[DeviceHealth]:
    """``ceph device ls -f json``: each device with the daemons on it and its wear level
    (0..1, where the drive reports one). A cluster without device health monitoring prints
    ``[]``.

    >>> device_ls([{"devid": "INTEL_SSDPEDMD400G4_CVFT520200G7400BGN", "daemons": ["osd.0"], "wear_level": 0.04}])[0].wear_level
    0.04
    """
    if not isinstance(data, list):
        raise InvalidInput("device ls: expected a JSON list (ceph device ls -f json)")
    out = []
    for d in data:
        if isinstance(d, dict) and d.get("devid"):
            wear = d.get("wear_level")
            out.append(
                DeviceHealth(
                    str(d["devid"]),
                    [str(x) for x in d.get("daemons") or []],
                    float(wear) if isinstance(wear, (int, float)) else None,
                )
            )
    return out
