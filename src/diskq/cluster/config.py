"""Parsers of the outputs that say which mClock capacity is in force: ``ceph config dump``,
``ceph daemon osd.N config show`` and ``ceph tell osd.N bench``. Pure, like
:mod:`diskq.cluster.parse`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from diskq.errors import InvalidInput


@dataclass
class ConfigEntry:
    who: str  #: ``global``, ``osd``, ``osd.3``, ...
    option: str
    value: str
    mask: str = ""  #: ``class:hdd``, ``host:node1``, ... ; empty: every daemon of ``who``


def config_dump(data) -> list[ConfigEntry]:
    r"""``ceph config dump -f json`` (a list of ``section``/``name``/``value`` objects) or the
    plain table ``ceph config dump`` prints, read by the header's column positions. A sample::

        WHO    MASK  LEVEL     OPTION                                             VALUE      RO
        mon          advanced  auth_allow_insecure_global_id_reclaim              false
        osd.0        basic     osd_mclock_max_capacity_iops_hdd                   86.136079

    >>> config_dump("WHO    MASK  LEVEL     OPTION                                             VALUE      RO\n"
    ...             "osd.0        basic     osd_mclock_max_capacity_iops_hdd                   86.136079\n")
    [ConfigEntry(who='osd.0', option='osd_mclock_max_capacity_iops_hdd', value='86.136079', mask='')]
    """
    if isinstance(data, str):
        return _config_text(data)
    if not isinstance(data, list):
        raise InvalidInput("config dump: expected a JSON list (ceph config dump -f json)")
    out = []
    for e in data:
        if isinstance(e, dict) and e.get("section") is not None and e.get("name"):
            out.append(
                ConfigEntry(str(e["section"]), str(e["name"]), str(e.get("value", "")), str(e.get("mask") or ""))
            )
    return out


def _config_text(text: str) -> list[ConfigEntry]:
    lines = text.splitlines()
    head_i = next((i for i, ln in enumerate(lines) if ln.split()[:1] == ["WHO"] and "OPTION" in ln), None)
    if head_i is None:
        raise InvalidInput("config dump: no header line WHO ... OPTION VALUE")
    head = lines[head_i]
    starts = {m.group(): m.start() for m in re.finditer(r"\S+", head)}
    if "VALUE" not in starts:
        raise InvalidInput("config dump: no VALUE column in the header")
    o, v = starts["OPTION"], starts["VALUE"]
    m, lvl = starts.get("MASK"), starts.get("LEVEL")
    end = starts.get("RO", None)
    out = []
    for ln in lines[head_i + 1 :]:
        if not ln.strip():
            continue
        who = ln.split()[0]
        option = ln[o:v].strip()
        value = (ln[v:end] if end is not None and len(ln) > end and ln[end:].strip() in ("*", "") else ln[v:]).strip()
        mask = ln[m:lvl].strip() if m is not None and lvl is not None and lvl > m else ""
        if option:
            out.append(ConfigEntry(who, option, value, mask))
    return out


def config_show(data) -> dict[str, str]:
    """``ceph daemon osd.N config show``: every option in force on that OSD, as strings. A
    sample, cut (Octopus 15.2.14, before the mClock capacity options existed)::

        {"osd_op_queue": "wpq", "osd_mclock_scheduler_client_res": "1", ...}
    """
    if not isinstance(data, dict) or "osd_op_queue" not in data:
        raise InvalidInput("config show: expected the JSON of `ceph daemon osd.N config show`")
    return {str(k): str(v) for k, v in data.items() if not isinstance(v, (dict, list))}


def osd_bench(data) -> float | None:
    """IOPS of ``ceph tell osd.N bench`` (the measurement mClock's capacity comes from)::

    {"bytes_written": 12288000, "blocksize": 4096, "elapsed_sec": 2.868101647,
     "bytes_per_sec": 4284366.9828972416, "iops": 1045.9880329338969}
    """
    if isinstance(data, dict) and isinstance(data.get("iops"), (int, float)) and "blocksize" in data:
        return float(data["iops"])
    raise InvalidInput("osd bench: expected the JSON of `ceph tell osd.N bench` (with iops)")
