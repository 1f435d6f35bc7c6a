"""Which drive is this: model, firmware, capacity, protocol, media, wear, serial hash.

Three sources, merged by :func:`identify`: ``smartctl -j -x`` (drives smartctl can talk to),
``nvme id-ctrl`` (does the controller have a volatile write cache?) and sysfs (everything
else: loop, zram, virtio; the PCIe link of NVMe drives). The parsers are pure; :func:`identify`
is the thin probe around them.

The serial number is never stored: only :func:`serial_hash`, a salted SHA-256, so the same
drive always gives the same hash and the table can tell two drives of one model apart.

Every figure read from smartctl is checked before it is kept: a value of the wrong type, a
negative count, a value outside what a drive can report, or a placeholder string left by
redaction (``REDACTED``) becomes null, with a note saying so. Wear and data written carry a
note naming the field or attribute they were read from.
"""

from __future__ import annotations

import hashlib
import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from diskq import proc
from diskq.errors import DiskqError, IdentityError, TargetError
from diskq.probe import plp, sysfs
from diskq.probe.jsonvalues import json_int as _int
from diskq.result import Device

#: Public, fixed salt: hashes must be comparable across submissions, so it cannot be secret.
#: It still keeps a serial from matching unsalted SHA-256 tables of serial numbers.
DEFAULT_SALT = "diskq-serial-v1"

#: Serial strings that upstream tools or redaction leave behind; hashing them would make
#: unrelated drives look identical.
_PLACEHOLDER_SERIALS = {"", "redacted", "unknown", "none", "n/a", "0", "yes"}

#: Model, vendor and firmware strings that stand for "not known" rather than a name.
_PLACEHOLDER_TEXT = {"redacted", "<redacted>", "[redacted]", "unknown", "none", "null", "n/a", "na", "-", "?"}
#: Characters that masking tools repeat in place of a name (``XXXXXXXX``, ``********``).
_MASK_CHARS = set("x*#?")

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

#: Largest count or size kept from a parsed output. Anything above is certainly wrong, and every
#: kept value still fits a signed 64-bit integer (SQLite, JSON readers in other languages).
MAX_INT = 2**63 - 1

#: Sane ranges of the integer fields of :class:`Device`, inclusive.
_RANGES = {
    "capacity": (1, MAX_INT),
    "logical block size": (512, 1 << 20),
    "physical block size": (512, 1 << 20),
    "power-on hours": (0, 1_000_000),  # 114 years
    "temperature": (-60, 150),
    "wear": (0, 255),  # NVMe and ATA device statistics saturate at 255 %
    "data written": (0, MAX_INT),
}

#: ATA attribute 241/246 names (from smartctl's drive database) whose unit is clear from the name,
#: and the bytes one raw unit stands for. ``None``: counted in logical blocks.
_HOST_WRITES_UNITS: dict[str, int | None] = {
    "Total_LBAs_Written": None,
    "Total_Host_Sector_Write": None,
    "Host_Writes_32MiB": 32 * 1024**2,
    "Host_Writes_MiB": 1024**2,
    "Host_Writes_GiB": 1024**3,
    "Lifetime_Writes_GiB": 1024**3,
    "Total_Writes_GiB": 1024**3,
}
#: Attributes that count host writes, in order of preference. 246 is Micron's.
_HOST_WRITES_ATTRS = (241, 246)

#: ATA wear attributes diskq reads, in order of preference: (id, name as smartctl prints it,
#: which value holds the figure, vendor the drive must be from or None).
#:
#: - 177 ``Wear_Leveling_Count``: Samsung documents the normalized value as the remaining life in
#:   per cent. smartctl gives every SSD it does not know this name for 177, so it is read only on
#:   drives whose model or family says Samsung.
#: - 202 ``Percent_Lifetime_Remain`` (Micron, Crucial): smartctl's drive database says
#:   "norm = max(100-raw,0); raw = percent_lifetime_used"; the recorded Micron 5210/5300 outputs
#:   agree (value 100, raw 0). Used = raw, checked against the normalized value.
#: - 233 ``Media_Wearout_Indicator``: Intel documents the normalized value as counting down from
#:   100 as the NAND wears. Also smartctl's default name for 233 on unknown SSDs, so Intel only.
#: - 231 ``SSD_Life_Left`` (SandForce, Phison, Kingston, SK hynix...): only ever named by the
#:   drive database; the normalized value is the remaining life in per cent (the recorded Kingston
#:   SV300 gives 95 where smartctl's own endurance figure says 5 % used).
_WEAR_ATTRS = (
    (177, "Wear_Leveling_Count", "remaining", "samsung"),
    (202, "Percent_Lifetime_Remain", "raw_used", None),
    (233, "Media_Wearout_Indicator", "remaining", "intel"),
    (231, "SSD_Life_Left", "remaining", None),
)
#: Names of other attributes that look like a wear percentage (169 ``Remaining_Lifetime_Perc``,
#: 173 ``Percent_Life_Used``...) but whose raw/normalized meaning is not documented: not read.
_OTHER_WEAR_NAME = re.compile(r"(life|wear).*(perc|%|remain|left|used)|(perc|%|remain|left|used).*(life|wear)", re.I)

#: smartctl's SAS phy log (``-x``): ``"negotiated_logical_link_rate": "phy enabled; 12 Gbps"``.
_SAS_RATE = re.compile(r"^phy enabled; (\d+(?:\.\d+)?) Gbps$")


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


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return " ".join(value.split())
    return None


def _in_range(value: Any, what: str, notes: list[str], *, source: str = "smartctl") -> int | None:
    """``value`` as an int when it is one and lies in the sane range of ``what``; else None + a note."""
    n = _int(value)
    if n is None:
        if value is not None and not isinstance(value, (dict, list)):
            notes.append(f"{what} from {source} is not a whole number ({_show(value)}): ignored")
        return None
    lo, hi = _RANGES[what]
    if n < 0 <= lo:
        notes.append(f"{what} from {source} is negative ({n}): ignored")
        return None
    if not lo <= n <= hi:
        notes.append(f"{what} from {source} is out of range ({_show(n)}, expected {lo}..{hi}): ignored")
        return None
    return n


#: Largest integer a signed submission carries exactly: RFC 8785 canonical JSON writes numbers as
#: IEEE doubles, so validation refuses integers beyond 2^53 - 1.
MAX_SIGNABLE = 2**53 - 1


def _signable(value: int | None, what: str, notes: list[str]) -> int | None:
    """``value``, or None with the figure kept in a note when a signed document cannot hold it
    exactly (9 PB and more written is real on large enterprise drives)."""
    if value is None or value <= MAX_SIGNABLE:
        return value
    notes.append(f"{what}: {value} bytes, more than a signed result holds exactly (2^53 - 1): kept in this note only")
    return None


def _show(value: Any) -> str:
    """A short printable form of a rejected value (a 300-digit integer is not shown whole)."""
    text = repr(value)
    return text if len(text) <= 24 else f"{text[:20]}..."


def _is_placeholder(text: str) -> bool:
    low = text.lower()
    return low in _PLACEHOLDER_TEXT or set(low) <= _MASK_CHARS


def _name(value: Any, what: str, notes: list[str]) -> str | None:
    """A model, vendor or firmware string; placeholders become None with a note."""
    text = _str(value)
    if text is not None and _is_placeholder(text):
        notes.append(f"{what} is a placeholder ({text!r}, redacted or masked upstream): unknown")
        return None
    return text


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


def _model(data: dict, notes: list[str]) -> tuple[str | None, str | None, bool]:
    """(model, vendor, named) for ATA/NVMe (``model_name``) and SCSI (three spellings across
    versions). ``named`` says whether the output had a model field at all, placeholder or not."""
    vendor = _name(_str(data.get("scsi_vendor")) or _str(data.get("vendor")), "vendor", notes)
    model_text = _str(data.get("model_name")) or _str(data.get("scsi_model_name"))
    product_text = _str(data.get("scsi_product")) or _str(data.get("product"))
    named = bool(model_text or product_text)
    model = _name(model_text, "model", []) if model_text else None
    if model is None:
        product = _name(product_text, "product", []) if product_text else None
        if product:
            model = f"{vendor} {product}" if vendor else product
    if model is None and named:
        notes.append(f"model is a placeholder ({model_text or product_text!r}, redacted or masked upstream): unknown")
    return model, vendor, named


def _capacity(data: dict, notes: list[str]) -> int | None:
    for value in (
        _dict(data.get("user_capacity")).get("bytes"),
        data.get("nvme_total_capacity"),
        _dict(_dict((_list(data.get("nvme_namespaces")) or [None])[0]).get("capacity")).get("bytes"),
    ):
        if value is not None and value != 0:
            return _in_range(value, "capacity", notes)
    return None


def _ata_devstat(data: dict, name: str) -> Any:
    """A value from ``-x``'s ATA device statistics (``ata_device_statistics.pages[].table[]``),
    as printed (the caller checks it), or None when absent or flagged invalid."""
    for page in _list(_dict(data.get("ata_device_statistics")).get("pages")):
        for row in _list(_dict(page).get("table")):
            row = _dict(row)
            if row.get("name") == name and _dict(row.get("flags")).get("valid", True) is not False:
                return row.get("value")
    return None


def _ata_attrs(data: dict) -> list[dict]:
    return [row for row in _list(_dict(data.get("ata_smart_attributes")).get("table")) if isinstance(row, dict)]


def _ata_attr(data: dict, attr_id: int) -> dict | None:
    return next((row for row in _ata_attrs(data) if _int(row.get("id")) == attr_id), None)


def _attr_raw(row: dict) -> int | None:
    return _int(_dict(row.get("raw")).get("value"))


def _vendor_is(data: dict, vendor: str) -> bool:
    """Whether the model name or smartctl's model family names ``vendor`` as a word."""
    text = " ".join(s for s in (_str(data.get("model_name")), _str(data.get("model_family"))) if s)
    return re.search(rf"\b{vendor}\b", text, re.I) is not None


def _default_name_caveat(data: dict) -> str:
    if data.get("in_smartctl_database") is False:
        return "; the drive is not in smartctl's database, so the name is smartctl's generic default"
    return ""


def _ata_wear(data: dict, notes: list[str]) -> int | None:
    """Percentage used of an ATA SSD: smartctl's own figure, then device statistics, then the
    vendor attributes of :data:`_WEAR_ATTRS`."""
    endurance = _dict(data.get("endurance_used")).get("current_percent")
    if endurance is not None:
        used = _in_range(endurance, "wear", notes)
        if used is not None:
            notes.append("wear from smartctl's endurance_used")
            return used
    devstat = _ata_devstat(data, "Percentage Used Endurance Indicator")
    if devstat is not None:
        used = _in_range(devstat, "wear", notes, source="ATA device statistics")
        if used is not None:
            notes.append("wear from ATA device statistics (Percentage Used Endurance Indicator)")
            return used
    for attr_id, name, kind, vendor in _WEAR_ATTRS:
        row = _ata_attr(data, attr_id)
        if row is None or row.get("name") != name:
            continue
        label = f"ATA attribute {attr_id} {name}"
        if vendor and not _vendor_is(data, vendor):
            notes.append(
                f"{label} is read as wear only on {vendor.capitalize()} drives; the model does not say "
                f"{vendor.capitalize()}{_default_name_caveat(data)}: wear left unknown"
            )
            continue
        value, raw = _int(row.get("value")), _attr_raw(row)
        if kind == "raw_used":
            if raw is None or not 0 <= raw <= 255:
                notes.append(f"{label} raw value {_show(raw)} is not a percentage: wear left unknown")
                continue
            if value is not None and 0 <= value <= 100 and value != max(100 - raw, 0):
                notes.append(
                    f"{label}: raw {raw} % used disagrees with normalized {value} % remaining: wear left unknown"
                )
                continue
            notes.append(f"wear from {label} (raw value = per cent used)")
            return raw
        if value is None or not 0 <= value <= 100:
            notes.append(f"{label} normalized value {_show(value)} is not a percentage: wear left unknown")
            continue
        if attr_id == 231 and raw is not None and 0 <= raw <= 100 and raw != value:
            notes.append(
                f"{label}: normalized {value} and raw {raw} disagree on the life left: wear left unknown"
            )
            continue
        notes.append(f"wear from {label} (100 - normalized value, which is the life left in per cent)")
        return 100 - value
    known = {(attr_id, name) for attr_id, name, _, _ in _WEAR_ATTRS}
    for row in _ata_attrs(data):
        name = row.get("name")
        if isinstance(name, str) and _OTHER_WEAR_NAME.search(name) and (_int(row.get("id")), name) not in known:
            notes.append(
                f"ATA attribute {_int(row.get('id'))} {name} may hold wear, but whether its raw or "
                "normalized value is the percentage is not documented: not read"
            )
    return None


def _ata_written(data: dict, lbs: int | None, notes: list[str]) -> int | None:
    """Bytes written by the host to an ATA drive: device statistics, then attributes 241 and 246."""
    sector = lbs or 512
    sectors = _ata_devstat(data, "Logical Sectors Written")
    if sectors is not None:
        count = _in_range(sectors, "data written", notes, source="ATA device statistics")
        written = _times(count, sector, "ATA device statistics (Logical Sectors Written)", notes)
        if written is not None:
            notes.append(f"data written from ATA device statistics (Logical Sectors Written x {sector}-byte sectors)")
            return written
    for attr_id in _HOST_WRITES_ATTRS:
        row = _ata_attr(data, attr_id)
        name = row.get("name") if row else None
        if row is None or not isinstance(name, str):
            continue
        label = f"ATA attribute {attr_id} {name}"
        if name not in _HOST_WRITES_UNITS:
            if "writ" in name.lower() or "wts" in name.lower():
                notes.append(f"{label}: its unit is not clear from the name: data written left unknown")
            continue
        raw = _attr_raw(row)
        if raw is None:
            continue
        if raw < 0:
            notes.append(f"{label} raw value is negative ({raw}): ignored")
            continue
        unit = _HOST_WRITES_UNITS[name]
        written = _times(raw, unit or sector, label, notes)
        if written is None:
            continue
        how = f"x {sector}-byte logical sectors" if unit is None else "unit from the attribute name"
        notes.append(f"data written from {label} ({how}{_default_name_caveat(data) if unit is None else ''})")
        return written
    return None


def _times(count: int | None, unit: int, label: str, notes: list[str]) -> int | None:
    if count is None:
        return None
    if count * unit > MAX_INT:
        notes.append(f"{label}: {count} x {unit} bytes is beyond any drive: ignored")
        return None
    return count * unit


def _scsi_written(data: dict, notes: list[str]) -> int | None:
    """Bytes written from the SCSI error counter log. smartctl prints ``gigabytes_processed`` as a
    string with three decimals, in units of 10^9 bytes (``"2473.166"``)."""
    value = _dict(_dict(data.get("scsi_error_counter_log")).get("write")).get("gigabytes_processed")
    if value is None or isinstance(value, bool):
        return None
    try:
        gb = Decimal(value.strip() if isinstance(value, str) else repr(value) if isinstance(value, float) else value)
    except (InvalidOperation, TypeError, ValueError):
        notes.append(f"SCSI write gigabytes_processed is not a number ({_show(value)}): ignored")
        return None
    if not gb.is_finite() or gb < 0 or gb > Decimal(MAX_INT) / 10**9:
        notes.append(f"SCSI write gigabytes_processed is negative or out of range ({_show(value)}): ignored")
        return None
    notes.append("data written from the SCSI error counter log (write gigabytes processed, 1 GB = 10^9 bytes)")
    return int(gb * 10**9)


def _sas_link_rate(data: dict, notes: list[str]) -> str | None:
    """The negotiated SAS link rate from ``-x``'s phy log, when smartctl printed one."""
    rates: list[float] = []
    for key, port in data.items():
        if not (isinstance(key, str) and key.startswith("scsi_sas_port_")):
            continue
        for phy_key, phy in _dict(port).items():
            phy = _dict(phy)
            if not str(phy_key).startswith("phy_") or phy.get("attached_device_type") == "no device attached":
                continue
            m = _SAS_RATE.match(str(phy.get("negotiated_logical_link_rate", "")))
            if m:
                rates.append(float(m.group(1)))
    if not rates:
        return None
    if len(set(rates)) > 1:
        notes.append("SAS ports negotiated different rates: " + ", ".join(f"{r:g} Gb/s" for r in sorted(set(rates))))
    return f"{max(rates):g} Gb/s"


def _wear_and_writes(data: dict, protocol: str, lbs: int | None) -> tuple[int | None, int | None, list[str]]:
    """(percentage used, bytes written, notes) in whatever form the protocol reports them."""
    notes: list[str] = []
    if protocol == "nvme":
        log = _dict(data.get("nvme_smart_health_information_log"))
        src = "NVMe SMART/Health log"
        used = _in_range(log.get("percentage_used"), "wear", notes, source=src)
        if used is not None:
            notes.append(f"wear from the {src} (percentage_used)")
        # NVMe "data units" are 1000 512-byte blocks (NVMe base spec, SMART / Health log).
        units = _in_range(log.get("data_units_written"), "data written", notes, source=src)
        written = _times(units, 512_000, f"{src} data_units_written", notes)
        if written is not None:
            notes.append(f"data written from the {src} (data_units_written x 512 000 bytes)")
        return used, written, notes
    if protocol == "scsi":
        used = _in_range(data.get("scsi_percentage_used_endurance_indicator"), "wear", notes)
        if used is not None:
            notes.append("wear from the SCSI Solid State Media log (percentage used endurance indicator)")
        return used, _scsi_written(data, notes), notes
    return _ata_wear(data, notes), _ata_written(data, lbs, notes), notes


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
    checks: list[str] = []  # what was rejected on the way; goes after smartctl's own words
    status = _int(smartctl.get("exit_status")) or 0
    if not 0 <= status <= 255:
        checks.append(f"smartctl exit status {_show(status)} is not a status smartctl can return: ignored")
        status = 0
    messages = _smartctl_messages(data)
    model, vendor, named = _model(data, checks)
    if not named:
        if messages:
            raise IdentityError(f"smartctl: {'; '.join(messages)}")
        detail = "; ".join(decode_exit_status(status)) if status else "no model or product field"
        raise IdentityError(f"smartctl output holds no device identity (exit status {status}: {detail})")

    dev = _dict(data.get("device"))
    protocol = _PROTOCOLS.get(str(dev.get("protocol", "")).lower(), "unknown")
    notes = [f"smartctl exit status {status}: {text}" for text in decode_exit_status(status)]
    notes += [f"smartctl: {m}" for m in messages]
    notes += checks

    rpm = _int(data.get("rotation_rate"))
    if rpm is not None and not (rpm == 0 or 1025 <= rpm <= 65534):
        # ATA and SCSI both report 0x0401..0xFFFE rpm; smaller values are reserved codes
        notes.append(f"rotation rate from smartctl is not an rpm figure ({_show(rpm)}): media unknown")
        rpm = None
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

    lbs = _in_range(data.get("logical_block_size"), "logical block size", notes)
    pbs = _in_range(data.get("physical_block_size"), "physical block size", notes)
    used, written, wear_notes = _wear_and_writes(data, protocol, lbs)
    notes += wear_notes

    speed = _str(_dict(_dict(data.get("interface_speed")).get("current")).get("string"))
    if protocol == "scsi":
        transport = _str(_dict(data.get("scsi_transport_protocol")).get("name"))
        if transport:
            notes.append(f"SCSI transport: {transport}")
        speed = speed or _sas_link_rate(data, notes)

    serial = _hashable_serial(data.get("serial_number"))
    if serial is None and data.get("serial_number") is not None:
        notes.append("serial number is a placeholder (redacted or masked): no serial hash")

    firmware_text = _str(data.get("firmware_version")) or _str(data.get("scsi_revision")) or _str(data.get("revision"))
    hours = _dict(data.get("power_on_time")).get("hours")
    temperature = _dict(data.get("temperature")).get("current")

    wc = _dict(data.get("write_cache"))
    write_cache = "unknown"
    if isinstance(wc.get("enabled"), bool):
        write_cache = "on" if wc["enabled"] else "off"

    return Device(
        path=_str(dev.get("name")),
        model=model,
        vendor=vendor,
        firmware=_name(firmware_text, "firmware", notes),
        serial_hash=serial_hash(serial, salt=salt) if serial else None,
        capacity_bytes=_capacity(data, notes),
        protocol=protocol,
        media=media,
        rotation_rpm=rotation,
        logical_block_size=lbs,
        physical_block_size=pbs,
        interface_speed=speed,
        percentage_used=used,
        data_written_bytes=_signable(written, "data written", notes),
        power_on_hours=_in_range(hours, "power-on hours", notes) if hours is not None else None,
        temperature_c=_in_range(temperature, "temperature", notes) if temperature is not None else None,
        write_cache=write_cache,
        plp_facts=plp.facts_from_smartctl_json(data),
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
    ``device/{vendor,model,rev,firmware_rev,serial}``, the virtio ``serial`` and, for NVMe, the
    controller's PCIe link (:func:`sysfs.nvme_pcie_link`). Raises IdentityError when the device
    is not in sysfs. A partition is described by its own size and its disk's model and queue.
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

    link = None
    if protocol == "nvme":
        link, link_note = sysfs.nvme_pcie_link(disk, sysfs_root=sysfs_root)
        if link_note:
            notes.append(link_note)

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
        interface_speed=link,
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
        vwc, why = nvme.probe_vwc_field(f"/dev/{disk}")
        if vwc is not None:
            facts = [f for f in device.plp_facts if f.field != "NVMe Identify Controller vwc"]
            device = device.model_copy(update={"volatile_write_cache": bool(vwc & 1),
                                               "plp_facts": [*facts, plp.vwc_fact(vwc)]})
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
