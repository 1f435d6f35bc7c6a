"""Which knob set a run's write-cache state, read from the mechanism the run records.

A state means something for data safety only together with how it was set:

* ``drive``: the drive's own setting (``hdparm``, ``sdparm``, ``nvme`` as ``diskq bench``
  records them, or ``drive`` as ``diskq import-fio --cache-mechanism drive`` declares it);
* ``kernel``: the kernel's ``/sys/block/X/queue/write_cache`` (``sysfs``). In ``write through``
  the kernel stops sending flushes, so "off" says nothing about the drive's cache;
* ``unknown``: declared without saying how (``diskq import-fio`` records ``unknown`` unless
  told ``--cache-mechanism drive`` or ``kernel``). It may be the kernel's knob, so it counts as
  unsafe exactly as that knob does.

A run that records no mechanism (null) counts as the drive's: ``diskq bench`` records one
whenever it can read the state, the legacy rows name theirs, and documents written before
imports recorded one keep the meaning they were validated with.

An "off" by the kernel's knob or by one not known (``[cache_knob] unsafe_off`` in
``criteria.toml``) is unsafe unless the device reports no volatile write cache (then the kernel
sends no flushes and none are needed).
"""

from __future__ import annotations

from diskq.analyse import criteria

DRIVE, KERNEL, UNKNOWN = "drive", "kernel", "unknown"
#: What ``diskq import-fio --cache-mechanism`` records for each knob it may declare.
DECLARED = {DRIVE: "drive", KERNEL: "sysfs", UNKNOWN: "unknown"}

KERNEL_OFF = "was set with the kernel's write_cache knob, which stops flushes reaching the device"
UNKNOWN_OFF = (
    "was declared without how it was set (drive or kernel knob not known); the kernel's knob "
    "stops flushes reaching the device"
)


def knob(mechanism: str | None, state: str | None = None) -> str:
    """``kernel``, ``unknown`` or ``drive`` for a run's ``cache_mechanism`` (``state``, its
    ``write_cache``, is accepted so callers need not care which rules use it)."""
    if mechanism == "sysfs":
        return KERNEL
    if mechanism == "unknown":
        return UNKNOWN
    return DRIVE


def unsafe_off(knob_: str, state: str, volatile_write_cache: bool | None) -> str | None:
    """Why a setting is unsafe because of its knob, or None: "off" by the kernel's knob or by one
    not known, on a device that may have a volatile write cache."""
    if state != "off" or volatile_write_cache is False or knob_ not in criteria.section("cache_knob")["unsafe_off"]:
        return None
    return {KERNEL: KERNEL_OFF, UNKNOWN: UNKNOWN_OFF}.get(knob_, f"was set with the {knob_} knob")
