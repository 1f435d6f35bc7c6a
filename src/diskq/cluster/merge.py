"""OSDs as the metadata describes them, completed by what the hosts' ``ceph-volume lvm list`` /
``ceph-disk list`` say, and where each OSD commits, in words a finding can carry.

Where the two disagree (the metadata says no dedicated DB, a listing names a ``[db]``), both
are shown in the OSD's notes; the listing fills in only what the metadata does not say.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePosixPath

from diskq.cluster.inputs import Inputs
from diskq.cluster.parse import Device, OsdMeta
from diskq.cluster.volumes import OsdVolumes

_ROLE_NAMES = {"wal": "WAL device", "db": "DB device", "data": "data device", "journal": "journal"}


def _listed(inp: Inputs) -> dict[int, tuple[str, OsdVolumes]]:
    return {v.osd: (host, v) for host, vs in inp.volumes.items() for v in vs}


def _names(devices: list[str], path: str | None) -> list[str]:
    return [PurePosixPath(d).name for d in devices] or ([PurePosixPath(path).name] if path else [])


def merge_volumes(osds: list[OsdMeta], inp: Inputs) -> None:
    """Fill in, from the listings, the DB/WAL/journal devices and hosts the metadata lacks."""
    listed = _listed(inp)
    for o in osds:
        if o.osd not in listed:
            continue
        host, vols = listed[o.osd]
        o.devices_known = True  # the listing names its data, DB, WAL or journal volumes
        o.host = o.host or (host if host != "unknown host" else None)
        if not o.data.names and "data" in vols.volumes:
            o.data.names = _names(vols.volumes["data"].devices, vols.volumes["data"].path)
        for role in ("db", "wal"):
            v = vols.volumes.get(role)
            if v is None:
                continue
            names = _names(v.devices, v.path)
            if getattr(o, role) is None:
                if role == "db" and o.dedicated_db is False:
                    o.notes.append(
                        f"the metadata says no dedicated DB (bluefs_dedicated_db=0), but the listing of {host} "
                        f"names a [db] on {', '.join(names)}: both shown, the metadata used"
                    )
                    continue
                setattr(o, role, Device(names=names))
                o.notes.append(
                    f"{role.upper()} device {', '.join(names)} from the listing of {host} (no model: Ceph's "
                    "metadata would name it)"
                )
            elif not set(names) & set(getattr(o, role).names) and names:
                o.notes.append(
                    f"the listing of {host} names the {role.upper()} on {', '.join(names)}, the metadata on "
                    f"{', '.join(getattr(o, role).names)}"
                )
        if "journal" in vols.volumes and o.journal is None:
            v = vols.volumes["journal"]
            o.journal = Device(names=_names(v.devices, v.path))
            o.objectstore = o.objectstore or "filestore"


def encrypted(inp: Inputs, osd: int, role: str) -> bool | None:
    """Whether the listing says ``osd``'s volume of ``role`` is encrypted (dm-crypt)."""
    hit = _listed(inp).get(osd)
    if hit is None:
        return None
    v = hit[1].volumes.get({"DB": "db", "WAL": "wal"}.get(role, "data"))
    if v is None:
        return None
    return bool(v.encrypted) or any("crypt" in d for d in v.devices)


def places(osds: list[OsdMeta], match, sharing: dict[int, int], inp: Inputs) -> Callable[[int], dict | None]:
    """``osd`` -> where it commits: host, device role, drive and what the database knows of it."""
    by_id = {o.osd: o for o in osds}
    cache: dict[int, dict | None] = {}

    def place(osd: int) -> dict | None:
        if osd in cache:
            return cache[osd]
        o = by_id.get(osd)
        if o is None:
            cache[osd] = None
            return None
        if not o.devices_known:
            text = (
                f"host {o.host or 'unknown'}; commits to a device the inputs do not name (no osd metadata: "
                "whether it has a DB or WAL device is unknown)"
            )
            cache[osd] = {"host": o.host, "commit": None, "drive": None, "text": text}
            return cache[osd]
        role = "wal" if o.wal else "db" if o.db else "journal" if o.journal else "data"
        dev = o.wal or o.db or o.journal or o.data
        names = ",".join(dev.names) or "?"
        facts = match.facts(dev.model)
        if dev.model is None:
            known = "model unknown"
        elif facts is None and dev.model in match.hard_disks:
            known = f"{dev.model}: {match.hard_disks[dev.model]}"
        elif facts is None and dev.model in match.lines:
            known = f"{dev.model}: a {match.lines[dev.model]['line']}, not measured with diskq yet"
        elif facts is None:
            known = f"{dev.model}: not in the database" if match.db is not None else f"{dev.model} (no database given)"
        else:
            known = f"{dev.model}: the database's {facts['model']}, tier {facts['tier'] or 'unknown'} for WAL/DB"
        shared = sharing.get(osd, 1)
        device = (
            f"{_ROLE_NAMES[role]} {names}, {known}"
            if dev.names
            else f"{_ROLE_NAMES[role]}, which the inputs do not name"
        )
        text = f"host {o.host or 'unknown'}; commits to its {device}" + (
            f"; {shared} OSDs commit there" if shared > 1 else ""
        )
        drive = f"{o.host or '?'}:{names}" + (f" ({dev.model})" if dev.model else "") if dev.names else None
        cache[osd] = {"host": o.host, "commit": role, "drive": drive, "text": text}
        return cache[osd]

    return place
