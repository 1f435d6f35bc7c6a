"""Which drive is this: model, firmware, capacity, protocol, media, wear, serial hash.

Three sources, merged by :func:`identify`: ``smartctl -j -x`` (drives smartctl can talk to),
``nvme id-ctrl`` (does the controller have a volatile write cache?) and sysfs (everything
else: loop, zram, virtio). The parsers are pure; :func:`identify` is the thin probe around them.

The serial number is never stored: only :func:`serial_hash`, a salted SHA-256, so the same
drive always gives the same hash and the table can tell two drives of one model apart.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from diskq import proc
from diskq.errors import DiskqError, IdentityError, TargetError
from diskq.probe import sysfs
from diskq.result import Device

#: Public, fixed salt: hashes must be comparable across submissions, so it cannot be secret.
#: It still keeps a serial from matching unsalted SHA-256 tables of serial numbers.
DEFAULT_SALT = "diskq-serial-v1"

#: Serial strings that upstream tools or redaction leave behind; hashing them would make
#: unrelated drives look identical.
_PLACEHOLDER_SERIALS = {"", "redacted", "unknown", "none", "n/a", "0", "yes"}

#: smartctl's exit status is a bitmask (smartctl(8), "RETURN VALUES").
EXIT_STATUS_BITS = {
    0: "command line did not parse",
    1: "device open failed, or device did not return an IDENTIFY DEVICE structure",
    2: "some SMART or other ATA command to the disk failed, or a checksum error",
    3: "SMART status check returned DISK FAILING",
    4: "prefail attributes found <= threshold",
    5: "SMART status OK, but usage/prefail attributes were <= threshold in the past",
    6: "the device error log contains records of errors",
    7: "the device self-test log contains records of errors",
}

_PROTOCOLS = {"ata": "ata", "nvme": "nvme", "scsi": "scsi"}

#: ATA attribute 241 names (from smartctl's drive database) and the bytes one raw unit stands for.
#: ``Total_LBAs_Written`` is in logical blocks and is handled separately.
_HOST_WRITES_UNITS = {
    "Host_Writes_32MiB": 32 * 1024**2,
    "Host_Writes_MiB": 1024**2,
    "Host_Writes_GiB": 1024**3,
}


def serial_hash(serial: str, *, salt: str = DEFAULT_SALT) -> str:
    """Salted SHA-256 of a serial number (surrounding blanks ignored), as 24 hex digits.

    >>> serial_hash("S3Z9NB0K123456") == serial_hash("  S3Z9NB0K123456 ")
    True
    """
    normal = serial.strip()
    if not normal:
        raise ValueError("empty serial number")
    digest = hashlib.sha256(f"{salt}\0{normal}".encode()).hexdigest()
    return digest[:24]


def decode_exit_status(status: int) -> list[str]:
    """smartctl's exit status, bit by bit: one sentence per bit set."""
    return [text for bit, text in EXIT_STATUS_BITS.items() if status & (1 << bit)]


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _str(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return " ".join(value.split())
    return None


def _hashable_serial(serial: Any) -> str | None:
    text = _str(serial)
    if text is None or text.lower() in _PLACEHOLDER_SERIALS or set(text.lower()) <= {"x", "0"}:
        return None
    return text


def _smartctl_messages(data: dict) -> list[str]:
    msgs = _dict(data.get("smartctl")).get("messages")
    if not isinstance(msgs, list):
        return []
    return [m["string"] for m in msgs if isinstance(m, dict) and isinstance(m.get("string"), str)]


def _model(data: dict) -> tuple[str | None, str | None]:
    """(model, vendor) for ATA/NVMe (``model_name``) and SCSI (three spellings across versions)."""
    vendor = _str(data.get("scsi_vendor")) or _str(data.get("vendor"))
    model = _str(data.get("model_name")) or _str(data.get("scsi_model_name"))
    if model is None:
        product = _str(data.get("scsi_product")) or _str(data.get("product"))
        if product:
            model = f"{vendor} {product}" if vendor else product
    return model, vendor


def _capacity(data: dict) -> int | None:
    cap = _int(_dict(data.get("user_capacity")).get("bytes"))
    if cap:
        return cap
    total = _int(data.get("nvme_total_capacity"))
    if total:
        return total
    namespaces = data.get("nvme_namespaces")
    if isinstance(namespaces, list) and namespaces:
        return _int(_dict(_dict(namespaces[0]).get("capacity")).get("bytes"))
    return None


def _ata_devstat(data: dict, name: str) -> int | None:
    """A value from ``-x``'s ATA device statistics (``ata_device_statistics.pages[].table[]``)."""
    for page in _dict(data.get("ata_device_statistics")).get("pages") or []:
        for row in _dict(page).get("table") or []:
            row = _dict(row)
            if row.get("name") == name and _dict(row.get("flags")).get("valid", True):
                return _int(row.get("value"))
    return None


def _ata_attr(data: dict, attr_id: int) -> dict | None:
    for row in _dict(data.get("ata_smart_attributes")).get("table") or []:
        if _dict(row).get("id") == attr_id:
            return row
    return None


def _wear_and_writes(data: dict, protocol: str, lbs: int | None) -> tuple[int | None, int | None, list[str]]:
    """(percentage used, bytes written, notes) in whatever form the protocol reports them."""
    notes: list[str] = []
    if protocol == "nvme":
        log = _dict(data.get("nvme_smart_health_information_log"))
        units = _int(log.get("data_units_written"))
        # NVMe "data units" are 1000 512-byte blocks (NVMe base spec, SMART / Health log).
        return _int(log.get("percentage_used")), units * 512_000 if units is not None else None, notes
    if protocol == "scsi":
        return _int(data.get("scsi_percentage_used_endurance_indicator")), None, notes
    used = _int(_dict(data.get("endurance_used")).get("current_percent"))
    if used is None:
        used = _ata_devstat(data, "Percentage Used Endurance Indicator")
    written = None
    sectors = _ata_devstat(data, "Logical Sectors Written")
    if sectors is not None:
        written = sectors * (lbs or 512)
    else:
        row = _ata_attr(data, 241)
        raw = _int(_dict(_dict(row).get("raw")).get("value")) if row else None
        name = _dict(row).get("name") if row else None
        if raw is not None and name == "Total_LBAs_Written":
            written = raw * (lbs or 512)
            notes.append("data written from ATA attribute 241 (Total_LBAs_Written x logical block size)")
        elif raw is not None and name in _HOST_WRITES_UNITS:
            written = raw * _HOST_WRITES_UNITS[name]
            notes.append(f"data written from ATA attribute 241 ({name})")
    return used, written, notes


def identity_from_smartctl_json(data: dict, *, salt: str = DEFAULT_SALT) -> Device:
    """A :class:`Device` from one ``smartctl --json -x`` (or ``-a``/``-i``) output.

    Raises :class:`IdentityError` carrying smartctl's own message when the output names no
    device (open failed, "Unable to detect device type", health- or attributes-only output).
    A non-zero ``exit_status`` is not a failure by itself: each bit is decoded into ``notes``.

    Sample (smartctl 7.3 on an NVMe drive, trimmed)::

        {"smartctl": {"version": [7, 3], "exit_status": 0},
         "device": {"name": "/dev/nvme2", "type": "nvme", "protocol": "NVMe"},
         "model_name": "INTEL SSDPE2KX020T8", "firmware_version": "VDV10170",
         "nvme_total_capacity": 2000398934016,
         "nvme_smart_health_information_log": {"percentage_used": 3, "data_units_written": 2643181154},
         "power_on_time": {"hours": 36959}, "temperature": {"current": 29}}
    """
    if not isinstance(data, dict):
        raise IdentityError("smartctl output is not a JSON object")
    smartctl = _dict(data.get("smartctl"))
    status = _int(smartctl.get("exit_status")) or 0
    messages = _smartctl_messages(data)
    model, vendor = _model(data)
    if model is None:
        if messages:
            raise IdentityError(f"smartctl: {'; '.join(messages)}")
        detail = "; ".join(decode_exit_status(status)) if status else "no model or product field"
        raise IdentityError(f"smartctl output holds no device identity (exit status {status}: {detail})")

    dev = _dict(data.get("device"))
    protocol = _PROTOCOLS.get(str(dev.get("protocol", "")).lower(), "unknown")
    notes = [f"smartctl exit status {status}: {text}" for text in decode_exit_status(status)]
    notes += [f"smartctl: {m}" for m in messages]

    rpm = _int(data.get("rotation_rate"))
    if rpm == 0:
        media, rotation = "ssd", 0
    elif rpm:
        media, rotation = "hdd", rpm
    elif protocol == "nvme":
        media, rotation = "ssd", 0
    else:
        media, rotation = "unknown", None

    dtype = str(dev.get("type") or "")
    if any(tag in dtype for tag in ("megaraid", "cciss", "areca", "3ware", "aacraid", "hpt", "sssraid")):
        notes.append(f"read through a RAID controller ({dtype}): the controller's own cache may hide the drive's")
    elif dtype.startswith("usb"):
        notes.append(f"read through a USB bridge ({dtype}): the bridge may not pass flushes or cache commands")
    if protocol == "scsi" and model and "raid" in model.lower():
        notes.append("this is a RAID volume, not a single drive")

    lbs = _int(data.get("logical_block_size"))
    used, written, wear_notes = _wear_and_writes(data, protocol, lbs)
    notes += wear_notes

    speed = _str(_dict(_dict(data.get("interface_speed")).get("current")).get("string"))
    if speed is None and protocol == "scsi":
        speed = _str(_dict(data.get("scsi_transport_protocol")).get("name"))

    serial = _hashable_serial(data.get("serial_number"))
    if serial is None and data.get("serial_number") is not None:
        notes.append("serial number is a placeholder (redacted or masked): no serial hash")

    wc = _dict(data.get("write_cache"))
    write_cache = "unknown"
    if isinstance(wc.get("enabled"), bool):
        write_cache = "on" if wc["enabled"] else "off"

    return Device(
        path=_str(dev.get("name")),
        model=model,
        vendor=vendor,
        firmware=_str(data.get("firmware_version")) or _str(data.get("scsi_revision")) or _str(data.get("revision")),
        serial_hash=serial_hash(serial, salt=salt) if serial else None,
        capacity_bytes=_capacity(data),
        protocol=protocol,
        media=media,
        rotation_rpm=rotation,
        logical_block_size=lbs,
        physical_block_size=_int(data.get("physical_block_size")),
        interface_speed=speed,
        percentage_used=used,
        data_written_bytes=written,
        power_on_hours=_int(_dict(data.get("power_on_time")).get("hours")),
        temperature_c=_int(_dict(data.get("temperature")).get("current")),
        write_cache=write_cache,
        sources=["smartctl"],
        notes=notes,
    )


_SYSFS_MODELS = {
    "loop": "Linux loop device",
    "zram": "Linux zram device",
    "ram": "Linux RAM disk",
    "nbd": "Linux network block device",
    "rbd": "Ceph RBD image",
    "dm-": "device-mapper device",
    "md": "Linux md RAID device",
    "vd": "virtio block device",
    "xvd": "Xen virtual block device",
}


def identity_from_sysfs(dev_name: str, *, sysfs_root: str = "/sys") -> Device:
    """What the kernel knows about ``dev_name`` (``loop0``, ``sda``, ``nvme0n1``, ``vda``).

    Reads ``size``, ``queue/{rotational,logical_block_size,physical_block_size,write_cache}``,
    ``device/{vendor,model,rev,firmware_rev,serial}`` and the virtio ``serial``. Raises
    IdentityError when the device is not in sysfs. A partition is described by its own size and
    its disk's model and queue.
    """
    disk = sysfs.disk_name(dev_name, sysfs_root=sysfs_root)
    base = f"block/{disk}"
    own = sysfs.device_dir(dev_name, sysfs_root=sysfs_root)
    if not own.exists():
        raise IdentityError(f"{dev_name} is not in {sysfs_root}/block")
    rel_own = own.relative_to(sysfs_root).as_posix()
    notes: list[str] = []
    sectors = sysfs.read_int(sysfs_root, f"{rel_own}/size")
    model = sysfs.read_attr(sysfs_root, f"{base}/device/model")
    vendor = sysfs.read_attr(sysfs_root, f"{base}/device/vendor")
    firmware = sysfs.read_attr(sysfs_root, f"{base}/device/firmware_rev") or sysfs.read_attr(
        sysfs_root, f"{base}/device/rev"
    )
    serial = sysfs.read_attr(sysfs_root, f"{base}/device/serial") or sysfs.read_attr(sysfs_root, f"{base}/serial")

    if disk.startswith("nvme"):
        protocol = "nvme"
    elif disk.startswith("sd"):
        protocol = "ata" if (vendor or "").strip().upper() == "ATA" else "scsi"
    else:
        protocol = "unknown"
    if protocol == "ata":
        vendor = None  # libata reports "ATA" here, not the maker
    if vendor and vendor.startswith("0x"):
        vendor = None  # virtio reports a PCI vendor id, not a name
    if not model:
        model = next((m for prefix, m in _SYSFS_MODELS.items() if disk.startswith(prefix)), None)
    elif vendor and protocol == "scsi" and not model.startswith(vendor):
        model = f"{vendor} {model}"

    rotational = sysfs.read_int(sysfs_root, f"{base}/queue/rotational")
    if sysfs.is_virtual(disk):
        media, rpm = "unknown", None
        notes.append(f"{disk} is a virtual device: its rotational flag says nothing about the media")
    elif protocol == "nvme" or rotational == 0:
        media, rpm = "ssd", 0
    elif rotational == 1:
        media, rpm = "hdd", None
    else:
        media, rpm = "unknown", None

    wc_text = sysfs.read_attr(sysfs_root, f"{base}/queue/write_cache")
    serial = _hashable_serial(serial)
    return Device(
        path=f"/dev/{dev_name}",
        kind="partition" if disk != dev_name else "disk",
        model=model,
        vendor=vendor,
        firmware=firmware,
        serial_hash=serial_hash(serial) if serial else None,
        capacity_bytes=sectors * 512 if sectors is not None else None,  # sysfs counts 512-byte sectors
        protocol=protocol,
        media=media,
        rotation_rpm=rpm,
        logical_block_size=sysfs.read_int(sysfs_root, f"{base}/queue/logical_block_size"),
        physical_block_size=sysfs.read_int(sysfs_root, f"{base}/queue/physical_block_size"),
        write_cache=sysfs.parse_write_cache(wc_text),
        cache_toggle="sysfs" if wc_text is not None else None,
        sources=["sysfs"],
        notes=notes,
    )


def merge(primary: Device, fallback: Device) -> Device:
    """``primary`` with every empty field filled from ``fallback``; sources and notes joined."""
    data = primary.model_dump()
    other = fallback.model_dump()
    for key, value in other.items():
        if key in ("sources", "notes"):
            data[key] = list(dict.fromkeys([*data[key], *value]))
        elif key in ("protocol", "media", "write_cache"):
            if data[key] == "unknown":
                data[key] = value
        elif data[key] is None:
            data[key] = value
    return Device(**data)


def _run_smartctl(path: str) -> tuple[Device | None, str | None]:
    try:
        done = proc.run(["smartctl", "-j", "-x", path], timeout=60)
    except DiskqError as exc:
        return None, f"smartctl: {exc.message}"
    try:
        data = json.loads(done.stdout)
    except ValueError:
        tail = (done.stderr or done.stdout).strip().splitlines()
        return None, f"smartctl printed no JSON (exit {done.returncode}){': ' + tail[-1] if tail else ''}"
    try:
        return identity_from_smartctl_json(data), None
    except IdentityError as exc:
        return None, exc.message


def identify(path: str, *, sysfs_root: str = "/sys") -> Device:
    """Best-effort identity of the block device at ``path``.

    smartctl first (model, firmware, wear...), then ``nvme id-ctrl`` for NVMe (volatile write
    cache present?), then sysfs for whatever is still missing; every probe that fails leaves a
    note saying why. Then the write cache: its state and the mechanism that can switch it.
    Raises TargetError if ``path`` is not a block device, IdentityError if nothing identifies it.
    """
    from diskq.probe import cache, nvme

    name = sysfs.block_name(path, sysfs_root=sysfs_root)
    disk = sysfs.disk_name(name, sysfs_root=sysfs_root)
    notes: list[str] = []
    device, why = _run_smartctl(path)
    if why:
        notes.append(why)
    try:
        from_sysfs = identity_from_sysfs(name, sysfs_root=sysfs_root)
    except IdentityError as exc:
        if device is None:
            raise TargetError(f"{path}: nothing identifies this device ({why}; {exc.message})") from None
        notes.append(exc.message)
    else:
        device = from_sysfs if device is None else merge(device, from_sysfs)
    assert device is not None

    if device.protocol == "nvme":
        vwc, why = nvme.probe_vwc(f"/dev/{disk}")
        if vwc is not None:
            device = device.model_copy(update={"volatile_write_cache": vwc})
            device.sources.append("nvme-cli")
        else:
            notes.append(why or "nvme id-ctrl: no vwc field")

    control = cache.detect(f"/dev/{disk}", protocol=device.protocol, sysfs_root=sysfs_root)
    update: dict[str, Any] = {
        "path": path,
        "kind": "partition" if disk != name else "disk",
        "cache_toggle": control.mechanism if control.can_toggle else None,
    }
    if control.state != "unknown":
        update["write_cache"] = control.state
    if control.note:
        notes.append(control.note)
    if control.reason:
        notes.append(control.reason)
    if disk != name:
        notes.append(f"{name} is a partition of {disk}: model, wear and write cache are the whole disk's")
    device = device.model_copy(update=update)
    device.notes[:0] = [n for n in notes if n not in device.notes]
    return device
