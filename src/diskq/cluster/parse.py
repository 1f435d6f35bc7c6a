"""Pure parsers of what a Ceph cluster prints: no I/O, no guessing of absent figures.

Every parser takes the decoded JSON (or the text) of one command's output and returns plain
data; a field the output does not hold is ``None`` and, where it matters, named in ``missing``.
A wrong shape raises :class:`~diskq.errors.InvalidInput` with one line saying what was expected.
Samples in the docstrings are cut from real clusters' outputs.
Here: the OSDs and their devices (``osd metadata``, ``osd df``, ``ceph-volume inventory``); the
performance counters (``perf dump``, ``osd perf``) are read by :mod:`diskq.cluster.perf`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from diskq.errors import InvalidInput

#: Transport prefixes the kernel puts before a model in a device id (``ATA_SAMSUNG_MZ7KM240HMHQ-00005``).
_TRANSPORTS = ("ATA_",)


@dataclass
class Device:
    """One device an OSD uses, as its metadata describes it."""

    names: list[str]  #: kernel names (``nvme1n2``, ``sda``)
    model: str | None = None  #: from Ceph's device id, underscores as spaces
    device_id: str | None = None  #: Ceph's device id (``MODEL_SERIAL``), which ``ceph device ls`` prints
    size_bytes: int | None = None  #: of the volume the OSD uses (an LV for a DB), not of the drive
    rotational: bool | None = None

    @property
    def nvme(self) -> bool:
        return any(n.startswith("nvme") for n in self.names)


@dataclass
class OsdMeta:
    """One OSD of ``ceph osd metadata``."""

    osd: int
    host: str | None
    objectstore: str | None
    version: str | None
    data: Device
    db: Device | None  #: a dedicated DB device, else None
    wal: Device | None  #: a dedicated WAL device, else None
    dedicated_db: bool | None  #: None when the metadata does not say
    notes: list[str] = field(default_factory=list)
    journal: Device | None = None  #: a FileStore OSD's journal (a file or a device)
    #: False for an OSD only other outputs name (no metadata, no listing): whether it has a DB or
    #: WAL device, and so where it commits, is unknown
    devices_known: bool = True


def int_or_none(value) -> int | None:
    """``value`` as a whole number (``7``, ``"7"``, ``" 7 "``), or None."""
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def _str(value) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _bool01(value) -> bool | None:
    v = str(value).strip() if value is not None else ""
    return {"1": True, "0": False}.get(v)


def device_ids(text: str | None) -> dict[str, str]:
    """``device_ids`` of an OSD's metadata: kernel name -> Ceph device id.

    >>> device_ids("nvme1n2=MZXLR6T4HALA-000H3_S6C1NA0T400820,sda=HPE_MB012000JYCJF_ZV706H3E")
    {'nvme1n2': 'MZXLR6T4HALA-000H3_S6C1NA0T400820', 'sda': 'HPE_MB012000JYCJF_ZV706H3E'}
    """
    out = {}
    for part in (text or "").split(","):
        name, sep, ident = part.partition("=")
        if sep and name.strip() and ident.strip():
            out[name.strip()] = ident.strip()
    return out


def model_of_id(device_id: str | None) -> str | None:
    """The model in a Ceph device id (``VENDOR_MODEL_SERIAL``, spaces as underscores): all but
    the serial, without the ``ATA`` transport prefix. None when the id is a serial alone.

    >>> model_of_id("ATA_SAMSUNG_MZ7KM240HMHQ-00005_S3F5NX0K402192")
    'SAMSUNG MZ7KM240HMHQ-00005'
    >>> model_of_id("Dell_Ent_NVMe_AGN_MU_AIC_6.4TB_S61MNE0RA00856")
    'Dell Ent NVMe AGN MU AIC 6.4TB'
    >>> model_of_id("6ea8b7f0-696a-47e3-b") is None
    True
    """
    if not device_id or "_" not in device_id:
        return None
    model = device_id.rsplit("_", 1)[0]
    for prefix in _TRANSPORTS:
        if model.startswith(prefix) and len(model) > len(prefix):
            model = model[len(prefix) :]
    model = " ".join(model.replace("_", " ").split())
    return model or None


def _device(meta: dict, prefix: str, ids: dict[str, str]) -> Device:
    names = [n.strip() for n in str(meta.get(f"{prefix}_devices") or "").split(",") if n.strip()]
    idents = [ids[n] for n in names if n in ids]
    models = sorted({m for m in (model_of_id(i) for i in idents) if m})
    model = " / ".join(models) or (str(meta.get(f"{prefix}_model") or "").strip() or None)
    return Device(
        names=names,
        model=model,
        device_id=idents[0] if len(idents) == 1 else None,
        size_bytes=int_or_none(meta.get(f"{prefix}_size")),
        rotational=_bool01(meta.get(f"{prefix}_rotational")),
    )


def osd_metadata(data) -> list[OsdMeta]:
    """``ceph osd metadata -f json`` (a list), ``ceph osd metadata N`` (one object) or a
    ``ceph report`` (its ``osd_metadata``), as :class:`OsdMeta` sorted by id. A sample, cut::

        [{"id": 0, "bluefs": "1", "bluefs_dedicated_db": "1", "bluefs_dedicated_wal": "0",
          "bluefs_db_devices": "nvme1n2", "bluefs_db_rotational": "0", "bluefs_db_size": "266715791360",
          "bluestore_bdev_devices": "sda", "bluestore_bdev_rotational": "1",
          "bluestore_bdev_size": "12000134430720", "ceph_version_short": "17.2.5",
          "device_ids": "nvme1n2=MZXLR6T4HALA-000H3_S6C1NA0T400820,sda=HPE_MB012000JYCJF_ZV706H3E",
          "hostname": "ceph104", "osd_objectstore": "bluestore", ...}]

    Releases differ: Luminous has no ``bluefs_dedicated_db`` and describes the main device in
    ``bluefs_db_*`` when there is no DB device (``bluefs_single_shared_device`` says so);
    Mimic has no ``device_ids``; FileStore OSDs have no BlueFS keys at all.
    """
    if isinstance(data, dict) and isinstance(data.get("osd_metadata"), list):
        data = data["osd_metadata"]
    if isinstance(data, dict) and "id" in data:
        data = [data]
    if not isinstance(data, list):
        raise InvalidInput("osd metadata: expected a list of OSDs (ceph osd metadata -f json) or a ceph report")
    out = []
    for meta in data:
        if not isinstance(meta, dict) or int_or_none(meta.get("id")) is None:
            continue
        out.append(_one_osd(meta))
    return sorted(out, key=lambda o: o.osd)


def _one_osd(meta: dict) -> OsdMeta:
    ids = device_ids(meta.get("device_ids"))
    store = meta.get("osd_objectstore")
    notes = []
    data = _device(meta, "bluestore_bdev", ids)
    dedicated = _bool01(meta.get("bluefs_dedicated_db"))
    shared = _bool01(meta.get("bluefs_single_shared_device"))
    if dedicated is None and shared is not None:
        dedicated = not shared
    db_names = str(meta.get("bluefs_db_devices") or "").strip()
    if (
        dedicated is None
        and store != "filestore"
        and db_names
        and db_names != str(meta.get("bluestore_bdev_devices") or "").strip()
    ):
        # neither flag, but bluefs_db_* names a device other than the main one: that is a DB device
        dedicated = True
        notes.append(f"no bluefs_dedicated_db flag in the metadata; DB device read from bluefs_db_devices ({db_names})")
    db = wal = journal = None
    if store == "filestore":
        node = str(meta.get("backend_filestore_dev_node") or "")
        data = Device(names=[node] if node and node != "unknown" else [], rotational=_bool01(meta.get("rotational")))
        jpath = str(meta.get("osd_journal") or "").strip()
        journal = Device(names=[jpath] if jpath else [], rotational=_bool01(meta.get("journal_rotational")))
        notes.append(
            "FileStore OSD: commits go to its journal"
            + (f" ({jpath})" if jpath else "")
            + ", not to BlueFS; no DB device to judge"
        )
    elif dedicated:
        db = _device(meta, "bluefs_db", ids)
    if _bool01(meta.get("bluefs_dedicated_wal")):
        wal = _device(meta, "bluefs_wal", ids)
    if not ids and store != "filestore":
        notes.append(
            "no device_ids in the metadata (none before Nautilus, nor for a device Ceph cannot "
            "identify, such as bcache): models unknown"
        )
    return OsdMeta(
        osd=int(meta["id"]),
        host=_str(meta.get("hostname")),
        objectstore=_str(store),
        version=_str(meta.get("ceph_version_short")) or _version(meta.get("ceph_version")),
        data=data,
        db=db,
        wal=wal,
        dedicated_db=dedicated,
        notes=notes,
        journal=journal,
    )


def _version(text) -> str | None:
    m = re.search(r"ceph version (\S+)", str(text or ""))
    return m.group(1) if m else None


@dataclass
class DfRow:
    osd: int
    device_class: str | None
    status: str | None
    kb: int | None = None
    kb_used_meta: int | None = None
    host: str | None = None  #: the CRUSH host above it (``osd df tree``, ``osd tree``)


def osd_df(data) -> dict[int, DfRow]:
    """``ceph osd df -f json`` (its ``nodes``), or the plain table ``ceph osd df`` prints. A
    sample, cut::

        {"nodes": [{"id": 1, "device_class": "ssd", "name": "osd.1", "kb": 104837120,
                    "kb_used": 1048984, "kb_used_meta": 1048570, "status": "up", ...}], ...}

        ID  CLASS  WEIGHT    REWEIGHT  SIZE     RAW USE  DATA     OMAP     META     AVAIL    %USE   VAR   PGS  STATUS
         9    hdd  14.57399   1.00000   15 TiB   23 GiB   925 MiB    9 KiB   775 MiB   15 TiB  0.15  1.02  176      up
    """
    if isinstance(data, str):
        return _osd_df_text(data)
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
        raise InvalidInput("osd df: expected the JSON of `ceph osd df -f json` (with nodes)")
    hosts = {
        c: str(n.get("name"))
        for n in data["nodes"]
        if isinstance(n, dict) and n.get("type") == "host"
        for c in (n.get("children") if isinstance(n.get("children"), list) else [])
    }
    out = {}
    for n in data["nodes"]:
        osd = int_or_none(n.get("id")) if isinstance(n, dict) and n.get("type", "osd") == "osd" else None
        if osd is not None and osd >= 0:
            out[osd] = DfRow(
                osd,
                _str(n.get("device_class")),
                _str(n.get("status")),
                int_or_none(n.get("kb")),
                int_or_none(n.get("kb_used_meta")),
                hosts.get(osd),
            )
    return out


def _osd_df_text(text: str) -> dict[int, DfRow]:
    lines = text.splitlines()
    head = next((ln.split() for ln in lines if ln.split()[:2] == ["ID", "CLASS"]), None)
    if head is None:
        raise InvalidInput("osd df: no header line starting with ID CLASS")
    out = {}
    host = None
    for ln in lines:
        tok = ln.split()
        if len(tok) >= 2 and "host" in tok[:-1] and int_or_none(tok[0]) is not None and int(tok[0]) < 0:
            host = tok[tok.index("host") + 1]  # a tree's host row: the OSDs below it are its own
            continue
        if len(tok) < 3 or int_or_none(tok[0]) is None or int(tok[0]) < 0:
            continue
        status = next((t for t in tok if t in ("up", "down", "destroyed")), None)
        out[int(tok[0])] = DfRow(int(tok[0]), tok[1], status, host=host)
    return out


@dataclass
class InventoryDevice:
    path: str
    device_id: str | None
    model: str | None
    size_bytes: int | None
    rotational: bool | None


def inventory(data) -> list[InventoryDevice]:
    """``ceph-volume inventory --format json`` of one host: a list of devices with ``path``,
    ``device_id`` and ``sys_api`` (``model``, ``vendor``, ``size`` in bytes, ``rotational``
    "0"/"1"). Gives the size of a whole DB drive, which ``osd metadata`` does not (it has the
    size of each OSD's DB volume)."""
    if not isinstance(data, list):
        raise InvalidInput("ceph-volume inventory: expected a JSON list (ceph-volume inventory --format json)")
    out = []
    for d in data:
        if not isinstance(d, dict) or not d.get("path"):
            continue
        sys_api = d.get("sys_api") if isinstance(d.get("sys_api"), dict) else {}
        vendor, model = str(sys_api.get("vendor") or "").strip(), str(sys_api.get("model") or "").strip()
        name = " ".join(
            x for x in (vendor if vendor and vendor.upper() != "ATA" and vendor not in model else "", model) if x
        )
        size = sys_api.get("size")
        out.append(
            InventoryDevice(
                str(d["path"]),
                d.get("device_id") or None,
                name or None,
                int(size) if isinstance(size, (int, float)) else None,
                _bool01(sys_api.get("rotational")),
            )
        )
    return out
