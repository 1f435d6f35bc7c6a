"""nvme-cli outputs: ``id-ctrl`` (is there a volatile write cache?) and feature 6 (is it on?).

Feature 0x06 is "Volatile Write Cache"; bit 0 of its value is WCE. Bit 0 of the controller's
``vwc`` field says whether a volatile write cache exists at all: without one there is nothing
to switch and every write is already durable when it completes.
"""

from __future__ import annotations

import json
import re

from diskq import proc
from diskq.errors import DiskqError

_TEXT_FIELD = re.compile(r"^\s*(\w+)\s*:\s*(.*?)\s*$")
_FEATURE_VALUE = re.compile(r"(?:Current value|value)\s*:\s*(0x)?([0-9a-fA-F]+)")


def _as_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip(), 0)
        except ValueError:
            return None
    return None


def parse_id_ctrl(text: str) -> dict:
    """``nvme id-ctrl`` output, JSON (``-o json``) or human text, as ``{model, serial, firmware, vwc}``.

    Human form (nvme-cli, trimmed)::

        NVME Identify Controller:
        vid     : 0x8086
        sn      : CVFT5123456789ABCD
        mn      : INTEL SSDPEDABCDEFG
        fr      : 8DV10131
        vwc     : 0

    Missing fields are None. Never raises on odd input.
    """
    fields: dict[str, object] = {}
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        if isinstance(data, dict):
            fields = data
    else:
        for line in text.splitlines():
            m = _TEXT_FIELD.match(line)
            if m and m.group(1) not in fields:
                fields[m.group(1)] = m.group(2)

    def text_field(key: str) -> str | None:
        value = fields.get(key)
        if not isinstance(value, str):
            return None
        return " ".join(value.split()) or None

    return {
        "model": text_field("mn"),
        "serial": text_field("sn"),
        "firmware": text_field("fr"),
        "vwc": _as_int(fields.get("vwc")),
    }


def parse_get_feature_6(text: str) -> str | None:
    """``nvme get-feature DEV -f 6`` -> ``"on"``/``"off"``, or None if no value is printed.

    nvme-cli builds differ in the ``0x`` prefix::

        get-feature:0x06 (Volatile Write Cache), Current value:0x00000001
        get-feature:0x06 (Volatile Write Cache), Current value:00000000
    """
    m = _FEATURE_VALUE.search(text)
    if not m:
        return None
    return "on" if int(m.group(2), 16) & 1 else "off"


def controller_of(path: str) -> str:
    """``/dev/nvme0n1`` -> ``/dev/nvme0`` (the character device that answers id-ctrl)."""
    m = re.match(r"^(/dev/nvme\d+)(?:n\d+(?:p\d+)?)?$", path)
    return m.group(1) if m else path


def probe_vwc(path: str) -> tuple[bool | None, str | None]:
    """(does the controller have a volatile write cache?, why unknown)."""
    raw, why = probe_vwc_field(path)
    return (None if raw is None else bool(raw & 1)), why


def probe_vwc_field(path: str) -> tuple[int | None, str | None]:
    """(the controller's ``vwc`` field as ``nvme id-ctrl`` prints it, why unknown)."""
    try:
        done = proc.run(["nvme", "id-ctrl", path, "-o", "json"], timeout=30)
    except DiskqError as exc:
        return None, f"nvme id-ctrl: {exc.message}"
    if not done.ok:
        tail = (done.stderr or done.stdout).strip()
        return None, f"nvme id-ctrl: {tail or f'exit status {done.returncode}'}"
    vwc = parse_id_ctrl(done.stdout)["vwc"]
    if vwc is None or not 0 <= vwc <= 255:
        return None, "nvme id-ctrl printed no vwc field"
    return vwc, None
