"""Which results a pull request may contribute to the device database.

The database ranks drives one can buy, by model. A result that measures the host instead (a
loop, zram or RAM device, a file on a filesystem, a virtual or stacked device: the rule of
:func:`diskq.analyse.hostdevice.not_a_drive`) or that names no model (it would be filed under
``submissions/unknown/unknown/``) tells a reader nothing about a drive. The pull-request check
(``diskq validate --contribution``) refuses such a file with the reason; ``diskq sign`` only
warns, so a result can still be signed and kept locally, and ``diskq bench`` does not suggest
contributing it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from diskq.result import ResultDocument


def not_contributable(result: ResultDocument) -> str | None:
    """Why a pull request may not contribute ``result``, or None when it may.

    >>> from diskq.result import Device, Method, ResultDocument
    >>> doc = ResultDocument(created="2026-01-01T00:00:00Z", method=Method(), device=Device(path="/dev/zram0"))
    >>> not_contributable(doc)
    'a Linux zram device (compressed RAM) (/dev/zram0): it measures the host, not a drive model'
    >>> not_contributable(doc.model_copy(update={"device": Device(path="/dev/sdb")}))
    'the result names no device model (it would be filed under unknown/unknown): run diskq bench where smartctl can read the drive, or give --model to import-fio'
    """
    from diskq.analyse.hostdevice import not_a_drive

    why = not_a_drive(result)
    if why:
        return why
    if not (result.device.model or "").strip():
        return (
            "the result names no device model (it would be filed under unknown/unknown): run diskq bench "
            "where smartctl can read the drive, or give --model to import-fio"
        )
    return None
