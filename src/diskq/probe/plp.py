"""Power-loss facts a drive reports about itself, read from ``smartctl --json -x`` and ``nvme id-ctrl``.

Pure parsers: each fact carries its source, the raw value, what it means, whether it is evidence
of power-loss protection and whether it is a warning. What the facts are worth together (with
the measurement and the datasheets) is decided in :mod:`diskq.analyse.plp`.

What is read, and why:

- NVMe Identify Controller ``vwc`` bit 0 (NVMe base specification): 0 means the controller
  has no volatile write cache, so a completed write is already in non-volatile media; 1 means
  it has one (drives with power-loss protection may still report one).
- NVMe SMART / Health log ``critical_warning`` bit 4: "the volatile memory backup device has
  failed". Only a drive with such a backup (capacitors) can set it; clear says nothing.
- ATA SMART attributes that smartctl's drive database (``drivedb.h``) names for a capacitor
  self-test or health: ``Power_Loss_Cap_Test`` (Intel DC S3500/S3610/S3700 and
  S4500/S4510/S4600/S4610 families, attribute 175, and 235 on the S4x10), ``Capacitor_Health``
  (SanDisk CloudSpeed, 235). smartctl prints these names only for drives its database knows,
  so the name itself says the attribute is the capacitor test. The normalized value at or
  below the drive's threshold, or smartctl's ``when_failed``, is a failing test.
- Counters of unexpected power losses (``Unsafe_Shutdown_Count``, ``Unexpect_Power_Loss_Ct``):
  how often the drive lost power without warning; informative, neither for nor against.
- ``write_cache.enabled`` (ATA ``-g wcache`` in ``-x``; SCSI WCE): whether a volatile write
  cache is on, which is what makes flushes matter.
"""

from __future__ import annotations

import re
from typing import Any

from diskq.analyse.model import PlpFact
from diskq.probe.jsonvalues import json_int as _int

#: smartctl attribute names that drivedb.h gives a capacitor self-test or capacitor health
#: (Intel DC SATA families: 175 and 235 "Power_Loss_Cap_Test"; SanDisk CloudSpeed: 235
#: "Capacitor_Health"). Only names found in drivedb.h are listed: a guessed name could match an
#: unrelated attribute.
_CAPACITOR_NAME = re.compile(r"^(Power_Loss_Cap_Test|Capacitor_Health)$")
#: smartctl attribute names of unexpected-power-loss counters.
_POWER_LOSS_COUNTER = re.compile(r"^(Unsafe_Shutdown_Count|Unexpect_Power_Loss(_Ct)?|Unclean_Shutdown_Ct)$", re.I)
#: NVMe SMART / Health critical warning bit 4: volatile memory backup device failed.
NVME_BACKUP_FAILED = 0x10


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def vwc_fact(vwc: int, *, source: str = "nvme id-ctrl") -> PlpFact:
    """The fact NVMe Identify Controller ``vwc`` gives (bit 0: a volatile write cache is present).

    >>> vwc_fact(0).supports
    'plp'
    >>> vwc_fact(1).supports
    'neutral'
    """
    if vwc & 1:
        return PlpFact(
            source=source,
            field="NVMe Identify Controller vwc",
            raw=f"0x{vwc:x}",
            meaning="the controller has a volatile write cache: writes it acknowledges before a flush "
            "survive a power loss only if it has power-loss protection",
        )
    return PlpFact(
        source=source,
        field="NVMe Identify Controller vwc",
        raw=f"0x{vwc:x}",
        supports="plp",
        meaning="no volatile write cache: a completed write is already in non-volatile media",
    )


def facts_from_smartctl_json(data: Any) -> list[PlpFact]:
    """Every power-loss-relevant fact in one ``smartctl --json -x`` (or ``-a``) output.

    Never raises on odd input: fields of the wrong type are left out. Sample (smartctl 7.3,
    Intel DC S4510, trimmed)::

        {"ata_smart_attributes": {"table": [
           {"id": 175, "name": "Power_Loss_Cap_Test", "value": 100, "thresh": 10,
            "when_failed": "", "raw": {"value": 3118146194033, "string": "2673 (725 65535)"}},
           {"id": 174, "name": "Unsafe_Shutdown_Count", "value": 100, "raw": {"value": 721}}]},
         "nvme_smart_health_information_log": {"critical_warning": 0}}
    """
    if not isinstance(data, dict):
        return []
    facts: list[PlpFact] = []
    log = data.get("nvme_smart_health_information_log")
    if isinstance(log, dict) and _int(log.get("critical_warning")) is not None:
        warning = _int(log["critical_warning"])
        if 0 <= warning <= 255:
            field = "NVMe SMART/Health critical_warning bit 4"
            if warning & NVME_BACKUP_FAILED:
                facts.append(
                    PlpFact(
                        source="smartctl",
                        field=field,
                        raw=f"0x{warning:02x}",
                        supports="plp",
                        warning=True,
                        meaning="the volatile memory backup device (power-loss capacitors) has failed: writes in the "
                        "drive's cache may be lost on power failure",
                    )
                )
            else:
                facts.append(
                    PlpFact(
                        source="smartctl",
                        field=field,
                        raw=f"0x{warning:02x}",
                        meaning="no failed volatile memory backup reported (a drive without such a backup reports the same)",
                    )
                )
    for row in _list(_dict(data.get("ata_smart_attributes")).get("table")):
        if not isinstance(row, dict) or not isinstance(row.get("name"), str):
            continue
        attr_id, name = _int(row.get("id")), row["name"]
        raw = _dict(row.get("raw"))
        raw_text = raw.get("string") if isinstance(raw.get("string"), str) else raw.get("value")
        label = f"ATA attribute {attr_id} {name}"
        if _CAPACITOR_NAME.match(name):
            value, thresh = _int(row.get("value")), _int(row.get("thresh"))
            failed = bool(row.get("when_failed")) or (
                value is not None and thresh is not None and 0 < thresh and value <= thresh
            )
            if failed:
                meaning = (
                    f"the drive's power-loss capacitor test fails (normalized {value}, threshold {thresh}"
                    f"{', smartctl: ' + str(row['when_failed']) if row.get('when_failed') else ''}): "
                    "the backup that protects its cache cannot be relied on"
                )
            else:
                meaning = (
                    f"the drive runs a power-loss capacitor self-test (named by smartctl's drive database), "
                    f"passing: normalized {value}, threshold {thresh}"
                )
            facts.append(
                PlpFact(
                    source="smartctl",
                    field=label,
                    raw=_short(raw_text),
                    supports="plp",
                    warning=failed,
                    meaning=meaning,
                )
            )
        elif _POWER_LOSS_COUNTER.match(name):
            facts.append(
                PlpFact(
                    source="smartctl",
                    field=label,
                    raw=_short(raw_text),
                    meaning="how many times the drive lost power without a clean shutdown",
                )
            )
    enabled = _dict(data.get("write_cache")).get("enabled")
    if isinstance(enabled, bool):
        facts.append(
            PlpFact(
                source="smartctl",
                field="write_cache.enabled",
                raw=str(enabled).lower(),
                meaning="a volatile write cache is on: acknowledged writes depend on flushes or power-loss protection"
                if enabled
                else "the volatile write cache is off: every write is durable when it completes",
            )
        )
    return facts


#: Fact fields this module writes, and for each what ``supports`` and ``warning`` may be given
#: the raw value: a submitted fact must be one of these, as the parser would have made it.
_COUNTER_FIELD = re.compile(
    r"^ATA attribute \d{1,3} (Unsafe_Shutdown_Count|Unexpect_Power_Loss(_Ct)?|Unclean_Shutdown_Ct)$"
)
_CAPACITOR_FIELD = re.compile(r"^ATA attribute \d{1,3} (Power_Loss_Cap_Test|Capacitor_Health)$")


def fact_problem(fact: PlpFact) -> str | None:
    """Why ``fact`` is not one this module could have written (an unknown field, or a claim its
    raw value does not support), or None. Submissions are checked with it, so a hand-edited
    document cannot report a capacitor it never read."""
    if _CAPACITOR_FIELD.match(fact.field):
        return None if fact.supports == "plp" else "a capacitor test is evidence for protection (supports 'plp')"
    if _COUNTER_FIELD.match(fact.field) or fact.field == "write_cache.enabled":
        if fact.supports != "neutral" or fact.warning:
            return f"{fact.field} is neither evidence nor a warning"
        return None
    if fact.field in ("NVMe Identify Controller vwc", "NVMe SMART/Health critical_warning bit 4"):
        try:
            value = int(fact.raw, 16)
        except ValueError:
            return f"raw value {fact.raw!r} is not the hexadecimal field"
        if fact.field.endswith("vwc"):
            ok = (fact.supports == ("neutral" if value & 1 else "plp")) and not fact.warning
        else:
            failed = bool(value & NVME_BACKUP_FAILED)
            ok = fact.warning == failed and fact.supports == ("plp" if failed else "neutral")
        return None if ok else f"supports/warning do not follow from raw value {fact.raw}"
    return f"unknown power-loss fact field {fact.field!r}"
