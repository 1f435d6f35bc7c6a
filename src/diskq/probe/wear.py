"""Wear and data written, as each protocol's part of ``smartctl -j -x`` reports them.

- NVMe: the SMART / Health log (``percentage_used``, ``data_units_written``).
- SCSI: the Solid State Media log (percentage used endurance indicator) and the write error
  counter log (gigabytes processed).
- ATA: smartctl's own endurance figure, then the device statistics, then the vendor attributes
  whose meaning is documented (:data:`_WEAR_ATTRS`, :data:`_HOST_WRITES_UNITS`); an attribute
  whose raw or normalized meaning is not known is named in a note and not read.

Each figure found carries a note naming the field or attribute it was read from.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

from diskq.probe.jsonvalues import json_int as _int
from diskq.probe.smartvalues import MAX_INT, _dict, _in_range, _list, _show, _str, _times

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
            notes.append(f"{label}: normalized {value} and raw {raw} disagree on the life left: wear left unknown")
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
