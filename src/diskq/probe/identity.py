"""Which drive is this: model, firmware, capacity, protocol, media, wear, serial hash.

Three sources, merged by :func:`identify`: ``smartctl -j -x`` (drives smartctl can talk to,
parsed by :mod:`diskq.probe.smartctl`), ``nvme id-ctrl`` (does the controller have a volatile
write cache?) and sysfs (everything else: loop, zram, virtio; the PCIe link of NVMe drives).
The parsers are pure; :func:`identify` is the thin probe around them.

The serial number is never stored: only its salted hash (:mod:`diskq.probe.serialhash`).
"""

from __future__ import annotations

import json
from typing import Any

from diskq import proc
from diskq.errors import DiskqError, IdentityError, TargetError
from diskq.probe import plp, sysfs
from diskq.probe.serialhash import _hashable_serial, serial_hash
from diskq.probe.smartctl import identity_from_smartctl_json
from diskq.result import Device

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
            device = device.model_copy(
                update={"volatile_write_cache": bool(vwc & 1), "plp_facts": [*facts, plp.vwc_fact(vwc)]}
            )
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
