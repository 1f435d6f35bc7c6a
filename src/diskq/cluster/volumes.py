"""Parsers of what the OSD hosts' provisioning tools list: which device each OSD's data, DB,
WAL or journal is on. Pure, like :mod:`diskq.cluster.parse`.

- ``ceph-volume lvm list`` (text, and ``--format json``): one OSD's logical volumes with their
  ``[block]``/``[db]``/``[wal]``/``[journal]`` role, the physical devices under each, and whether
  it is encrypted (dm-crypt);
- ``ceph-disk list`` (Jewel and Luminous, text and ``--format json``): partitions of
  ``ceph data`` with their journal or block.db/block.wal partitions;
- ``ceph-volume lvm batch --report`` (text and JSON): a plan of OSDs and the DB volume each would
  get, before anything is created.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from diskq.errors import InvalidInput

#: The roles a volume plays for its OSD, as the tools name them -> one name.
_ROLE = {
    "block": "data",
    "data": "data",
    "db": "db",
    "block.db": "db",
    "block_db": "db",
    "wal": "wal",
    "block.wal": "wal",
    "block_wal": "wal",
    "journal": "journal",
}


@dataclass
class Volume:
    role: str  #: data, db, wal or journal
    path: str | None  #: the LV or partition
    devices: list[str] = field(default_factory=list)  #: the physical devices under it
    encrypted: bool | None = None


@dataclass
class OsdVolumes:
    """One OSD's volumes as a host's ``ceph-volume lvm list`` or ``ceph-disk list`` lists them."""

    osd: int
    volumes: dict[str, Volume] = field(default_factory=dict)  #: role -> volume
    objectstore: str | None = None  #: bluestore, filestore where the listing says

    def device(self, role: str) -> str | None:
        v = self.volumes.get(role)
        return None if v is None else ",".join(v.devices) or v.path


def lvm_list(data) -> list[OsdVolumes]:
    """``ceph-volume lvm list`` (text) or ``ceph-volume lvm list --format json``. A sample of
    the text (Octopus 15.2.14, cut)::

        ====== osd.0 =======

          [block]       /dev/ceph-48858aa1-.../osd-block-48858aa1-...

              block device              /dev/ceph-48858aa1-.../osd-block-48858aa1-...
              encrypted                 0
              osd id                    0
              type                      block
              devices                   /dev/mapper/crypt-48858aa1-...

    and of the JSON: ``{"0": [{"type": "block", "path": ..., "devices": ["/dev/sdb"],
    "tags": {"ceph.osd_id": "0", "ceph.encrypted": "0", ...}}, {"type": "db", ...}]}``.
    """
    if isinstance(data, dict):
        return _lvm_json(data)
    if not isinstance(data, str) or not re.search(r"^=+ osd\.\d+ =+", data, re.M):
        raise InvalidInput("ceph-volume lvm list: expected `====== osd.N ======` sections or its JSON")
    out: list[OsdVolumes] = []
    current: Volume | None = None
    for ln in data.splitlines():
        if m := re.match(r"^=+ osd\.(\d+) =+", ln.strip()):
            out.append(OsdVolumes(int(m.group(1))))
            current = None
        elif out and (m := re.match(r"^\s*\[([\w.]+)\]\s+(\S+)", ln)):
            role = _ROLE.get(m.group(1))
            current = Volume(role, m.group(2)) if role else None
            if current:
                out[-1].volumes.setdefault(role, current)
        elif out and current is not None and (m := re.match(r"^\s+([a-z][a-z ]+?)\s{2,}(\S.*)$", ln)):
            key, value = m.group(1).strip(), m.group(2).strip()
            if key == "devices":
                current.devices = [d for d in re.split(r"[,\s]+", value) if d]
            elif key == "encrypted":
                current.encrypted = value == "1"
            elif key == "type" and value in ("journal", "data"):
                out[-1].objectstore = "filestore"
            elif key == "type" and value == "block":
                out[-1].objectstore = "bluestore"
    return out


def _lvm_json(data: dict) -> list[OsdVolumes]:
    out = []
    for key, lvs in data.items():
        if not str(key).isdigit() or not isinstance(lvs, list):
            raise InvalidInput("ceph-volume lvm list: expected OSD ids as keys (ceph-volume lvm list --format json)")
        osd = OsdVolumes(int(key))
        for lv in lvs:
            if not isinstance(lv, dict):
                continue
            role = _ROLE.get(str(lv.get("type") or ""))
            if role is None:
                continue
            tags = lv.get("tags") if isinstance(lv.get("tags"), dict) else {}
            enc = tags.get("ceph.encrypted")
            osd.volumes.setdefault(
                role,
                Volume(
                    role,
                    lv.get("lv_path") or lv.get("path"),
                    [str(d) for d in lv.get("devices") or []],
                    None if enc is None else str(enc) == "1",
                ),
            )
            osd.objectstore = osd.objectstore or {"block": "bluestore", "data": "filestore"}.get(str(lv.get("type")))
        out.append(osd)
    return sorted(out, key=lambda o: o.osd)


def ceph_disk_list(data) -> list[OsdVolumes]:
    """``ceph-disk list`` (Jewel, Luminous) or its ``--format json``. A sample of the text::

    /dev/sdb :
     /dev/sdb1 ceph data, active, cluster ceph, osd.1, journal /dev/sdc2
    /dev/sdc :
     /dev/sdc2 ceph journal, for /dev/sdb1
    """
    if isinstance(data, list):
        return _ceph_disk_json(data)
    if not isinstance(data, str):
        raise InvalidInput("ceph-disk list: expected its text or JSON")
    out = []
    for ln in data.splitlines():
        m = re.match(r"^\s*(/dev/\S+) ceph data, [^,]*, (?:cluster \S+, )?osd\.(\d+)(.*)$", ln)
        if not m:
            continue
        osd = OsdVolumes(int(m.group(2)), {"data": Volume("data", m.group(1), [_disk(m.group(1))])})
        for role, path in re.findall(r"(journal|block\.db|block\.wal|block) (/dev/\S+?)(?:,|$)", m.group(3)):
            name = _ROLE[role]
            osd.volumes[name if name != "data" else "data"] = Volume(name, path, [_disk(path)])
            osd.objectstore = "filestore" if role == "journal" else "bluestore"
        out.append(osd)
    return out


def _ceph_disk_json(data: list) -> list[OsdVolumes]:
    out = []
    for disk in data:
        for part in (disk.get("partitions") or []) if isinstance(disk, dict) else []:
            if not isinstance(part, dict) or part.get("type") != "data" or not str(part.get("whoami", "")).isdigit():
                continue
            osd = OsdVolumes(
                int(part["whoami"]), {"data": Volume("data", part.get("path"), [_disk(str(part.get("path")))])}
            )
            for key, role in (("journal_dev", "journal"), ("block.db_dev", "db"), ("block.wal_dev", "wal")):
                if part.get(key):
                    osd.volumes[role] = Volume(role, part[key], [_disk(str(part[key]))])
                    osd.objectstore = "filestore" if role == "journal" else "bluestore"
            out.append(osd)
    return out


def _disk(partition: str) -> str:
    """The disk of a partition.

    >>> _disk("/dev/sdc2"), _disk("/dev/nvme0n1p3"), _disk("/dev/sdd")
    ('/dev/sdc', '/dev/nvme0n1', '/dev/sdd')
    """
    m = re.fullmatch(r"(/dev/(?:nvme\d+n\d+|mmcblk\d+))p\d+", partition)
    if m:
        return m.group(1)
    return re.sub(r"(/dev/[a-z]+)\d+$", r"\1", partition)


@dataclass
class PlannedOsd:
    data: str
    data_size: str | None
    db: str | None = None
    db_size: str | None = None
    wal: str | None = None


def batch_report(data) -> list[PlannedOsd]:
    """``ceph-volume lvm batch --report`` (text, or ``--format json``): the OSDs the batch would
    create and the DB volume each would get. A sample of the text (Octopus and later)::

        Total OSDs: 2

          Type            Path                              LV Size         % of device
        ----------------------------------------------------------------------------------
          data            /dev/sdb                          99.00 GB        100.00%
          block_db        /dev/sdd                          49.50 GB        50.00%

    Nautilus prints ``[data]`` and ``[block.db]`` instead, and a ``Solid State VG`` block with
    the DB devices.
    """
    if isinstance(data, (list, dict)):
        return _batch_json(data)
    if not isinstance(data, str) or "Total OSDs" not in data:
        raise InvalidInput("lvm batch --report: expected `Total OSDs:` and its table")
    out: list[PlannedOsd] = []
    fast = re.search(r"Devices:\s+(.+)", data)
    per_lv = re.search(r"Size per LV:\s+([\d.]+ [KMGTP]i?B)", data)  # Nautilus: the row shows the VG's size
    for ln in data.splitlines():
        m = re.match(r"^\s*\[?(data|block[._]db|block[._]wal)\]?\s+(\S+)\s+([\d.]+ [KMGTP]i?B)", ln)
        if not m:
            continue
        role = _ROLE[m.group(1)] if m.group(1) != "data" else "data"
        if role == "data":
            out.append(PlannedOsd(m.group(2), m.group(3)))
        elif out:
            path = m.group(2) if m.group(2).startswith("/dev/") or not fast else fast.group(1).strip()
            if role == "db":
                out[-1].db, out[-1].db_size = path, per_lv.group(1) if per_lv else m.group(3)
            else:
                out[-1].wal = path
    return out


def _batch_json(data) -> list[PlannedOsd]:
    rows = data.get("osds") if isinstance(data, dict) else data
    if not isinstance(rows, list):
        raise InvalidInput("lvm batch --report: expected a list of OSDs")
    out = []
    for r in rows:
        if not isinstance(r, dict):
            continue
        if isinstance(r.get("data"), dict):  # Nautilus: {"data": {"path", "human_readable_size"}, "block.db": {...}}
            db = r.get("block.db") if isinstance(r.get("block.db"), dict) else {}
            out.append(
                PlannedOsd(
                    str(r["data"].get("path")),
                    r["data"].get("human_readable_size"),
                    db.get("path"),
                    db.get("human_readable_size"),
                )
            )
        elif r.get("data"):
            out.append(
                PlannedOsd(
                    str(r["data"]),
                    _hr(r.get("data_size")),
                    r.get("block_db") or None,
                    _hr(r.get("block_db_size")),
                    r.get("block_wal") or None,
                )
            )
    return out


def _hr(value) -> str | None:
    return None if value in (None, "", "None") else str(value)
