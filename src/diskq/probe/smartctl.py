"""A drive's identity from ``smartctl --json -x``: model, firmware, capacity, protocol, media,
interface, wear, serial hash, write cache and power-loss facts.

smartctl names the same facts differently by protocol (``model_name`` for ATA and NVMe, three
spellings of vendor and product for SCSI; the SAS link rate only in the phy log); wear and data
written are read by :mod:`diskq.probe.wear`, and every figure is checked
(:mod:`diskq.probe.smartvalues`) before it is kept. The parser is pure.
"""

from __future__ import annotations

import re

from diskq.errors import IdentityError
from diskq.probe import plp
from diskq.probe.jsonvalues import json_int as _int
from diskq.probe.serialhash import DEFAULT_SALT, _hashable_serial, serial_hash
from diskq.probe.smartvalues import _dict, _in_range, _list, _name, _show, _signable, _str
from diskq.probe.wear import _wear_and_writes
from diskq.result import Device

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

#: smartctl's SAS phy log (``-x``): ``"negotiated_logical_link_rate": "phy enabled; 12 Gbps"``.
_SAS_RATE = re.compile(r"^phy enabled; (\d+(?:\.\d+)?) Gbps$")


def decode_exit_status(status: int) -> list[str]:
    """smartctl's exit status, bit by bit: one sentence per bit set."""
    return [text for bit, text in EXIT_STATUS_BITS.items() if status & (1 << bit)]


def _smartctl_messages(data: dict) -> list[str]:
    msgs = _dict(data.get("smartctl")).get("messages")
    if not isinstance(msgs, list):
        return []
    return [m["string"] for m in msgs if isinstance(m, dict) and isinstance(m.get("string"), str)]


def _no_identity(data: dict, status: int) -> str:
    """What an output that names no drive is, in one line: a ``smartctl --scan`` (the devices it
    lists), or a run whose options or device gave no identity (its command line, and the one that
    would give it)."""
    listed = [name for name in (_str(_dict(d).get("name")) for d in _list(data.get("devices"))) if name]
    if listed:
        shown = ", ".join(listed[:4]) + (f" and {len(listed) - 4} more" if len(listed) > 4 else "")
        return (
            f"this is a `smartctl --scan` output: it lists {shown}, no drive's identity; save "
            f"`smartctl --json -x {listed[0]}`" + (" or of another" if len(listed) > 1 else "")
        )
    device = _str(_dict(data.get("device")).get("name"))
    whose = f" of {device}" if device else ""
    if status:
        return f"smartctl output{whose} holds no device identity (exit status {status}: {'; '.join(decode_exit_status(status))})"
    argv = [a for a in (_str(a) for a in _list(_dict(data.get("smartctl")).get("argv"))) if a]
    ran = f"; it ran as `{' '.join(argv)[:200]}`" if argv else ""
    text = f"smartctl output{whose} holds no device identity (exit status 0: no model or product field{ran})"
    if _IDENTITY_OPTIONS & set(argv):  # it asked for the identity: another run would print the same
        return text
    return f"{text}; save `smartctl --json -x {device or 'DEVICE'}`"


#: smartctl options whose output holds the identity (smartctl(8): -i, -a, -x).
_IDENTITY_OPTIONS = {"-i", "--info", "-a", "--all", "-x", "--xall"}


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
        raise IdentityError(_no_identity(data, status))

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
    elif model and "dellboss" in model.lower():  # Dell KB 000177584: BOSS devices carry DELLBOSS in their model
        notes.append("this is a Dell BOSS card's virtual disk (two M.2 drives, RAID 1 by default), not a single drive")

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
