"""Reading, switching and always restoring a device's write cache.

One mechanism per device, chosen by protocol:

    ata    hdparm -W / -W0 / -W1            the drive's volatile cache (ATA SET FEATURES)
    scsi   sdparm --get/--set/--clear WCE    the Caching mode page (SAS, and ATA behind SAT)
    nvme   nvme get-feature/set-feature -f 6 feature 0x06, Volatile Write Cache
    sysfs  /sys/block/X/queue/write_cache    the KERNEL's flag: with "write through" the kernel
                                             stops sending flushes; the device is untouched.
                                             The only knob on loop, zram and virtio devices.

Changes are never saved to the drive (no ``--save``, no ``-s`` save bit): a power cycle brings
the drive's default back. :class:`diskq.probe.cacheguard.CacheGuard` journals the original state
before the first change and puts it back on every way out (normal end, exception, SIGINT,
SIGTERM, SIGHUP).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from diskq import proc
from diskq.errors import CacheError, DiskqError
from diskq.probe import nvme, sysfs

State = Literal["on", "off", "unknown"]

SYSFS_NOTE = (
    "kernel flag only (queue/write_cache): with 'off' (write through) the kernel stops sending "
    "flushes; the device's own cache is not changed"
)

_HDPARM_DEV = re.compile(r"^(/\S+):\s*$")
_HDPARM_STATE = re.compile(r"write-caching\s*=\s*([01])\b")
_SDPARM_DEV = re.compile(r"^\s*(/\S+):")
_SDPARM_WCE = re.compile(r"^\s*WCE\s+([01])\b")


def parse_hdparm_w(text: str) -> dict[str, str]:
    """``hdparm -W DEV...`` -> ``{device: "on"|"off"}``; devices that printed no state are left out.

    Sample (one device; ``-W0`` adds a "setting drive write-caching" line first)::

        /dev/sda:
         write-caching =  1 (on)
    """
    states: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        m = _HDPARM_DEV.match(line.strip())
        if m:
            current = m.group(1)
            continue
        m = _HDPARM_STATE.search(line)
        if m and current:
            states[current] = "on" if m.group(1) == "1" else "off"
    return states


def parse_sdparm_wce(text: str) -> dict[str, str]:
    """``sdparm --get=WCE DEV...`` -> ``{device: "on"|"off"}``.

    Sample (an ATA drive behind the SCSI/ATA translation layer)::

            /dev/sda: ATA       TOSHIBA MG07ACA1  0101
        WCE           1  [cha: y]
    """
    states: dict[str, str] = {}
    current = "?"
    for line in text.splitlines():
        m = _SDPARM_DEV.match(line)
        if m:
            current = m.group(1)
            continue
        m = _SDPARM_WCE.match(line)
        if m:
            states[current] = "on" if m.group(1) == "1" else "off"
    return states


@dataclass
class CacheControl:
    """How the write cache of one whole disk is read and switched.

    ``device`` is the disk (a partition's cache is its disk's). ``reason`` says why the state is
    unknown or cannot be switched; ``note`` qualifies what the mechanism changes.
    """

    device: str
    mechanism: str | None
    state: State
    can_toggle: bool
    reason: str | None = None
    note: str | None = None
    sysfs_root: str = "/sys"

    @property
    def kernel_name(self) -> str:
        return Path(self.device).name


def _tail(done: proc.Completed) -> str:
    lines = (done.stderr.strip() or done.stdout.strip()).splitlines()
    return lines[-1].strip() if lines else f"exit status {done.returncode}"


def _probe_hdparm(path: str) -> tuple[str | None, str | None]:
    try:
        done = proc.run(["hdparm", "-W", path], timeout=30)
    except DiskqError as exc:
        return None, f"hdparm: {exc.message}"
    state = parse_hdparm_w(done.stdout).get(path)
    if state is None:
        return None, f"hdparm -W: {_tail(done) if not done.ok else 'no write-caching state reported'}"
    return state, None


def _probe_sdparm(path: str) -> tuple[str | None, str | None]:
    try:
        done = proc.run(["sdparm", "--get=WCE", path], timeout=30)
    except DiskqError as exc:
        return None, f"sdparm: {exc.message}"
    states = parse_sdparm_wce(done.stdout)
    if not done.ok or not states:
        return None, f"sdparm --get=WCE: {_tail(done)}"
    return next(iter(states.values())), None


def _probe_nvme(path: str) -> tuple[str | None, str | None]:
    try:
        done = proc.run(["nvme", "get-feature", path, "-f", "6"], timeout=30)
    except DiskqError as exc:
        return None, f"nvme: {exc.message}"
    state = nvme.parse_get_feature_6(done.stdout) if done.ok else None
    if state is None:
        return None, f"nvme get-feature -f 6: {_tail(done)}"
    return state, None


_PROBES = {"hdparm": _probe_hdparm, "sdparm": _probe_sdparm, "nvme": _probe_nvme}
_ORDER = {
    "ata": ("hdparm", "sdparm"),
    "scsi": ("sdparm",),
    "nvme": ("nvme",),
}


def _candidates(protocol: str, disk: str) -> tuple[str, ...]:
    if protocol in _ORDER:
        return _ORDER[protocol]
    if disk.startswith("nvme"):
        return ("nvme",)
    # Unknown protocol (loop, zram, virtio, or smartctl could not tell): the drive tools are
    # still asked, so the result says why they cannot help before falling back to sysfs.
    return ("hdparm", "sdparm")


def detect(path: str, *, protocol: str = "unknown", sysfs_root: str = "/sys") -> CacheControl:
    """Find how the write cache of ``path`` (or of the disk a partition is on) is read and set.

    Drive-level tools first, by protocol; the kernel's sysfs flag when none of them answers.
    Never raises for an unsupported device: the control says ``state="unknown"`` and why.
    """
    try:
        name = sysfs.block_name(path, sysfs_root=sysfs_root)
    except DiskqError as exc:
        return CacheControl(path, None, "unknown", False, f"no device write cache: {exc.message}", None, sysfs_root)
    disk = sysfs.disk_name(name, sysfs_root=sysfs_root)
    dev = f"/dev/{disk}"
    failures: list[str] = []
    for mechanism in _candidates(protocol, disk):
        state, why = _PROBES[mechanism](dev)
        if state is not None:
            return CacheControl(dev, mechanism, state, True, None, None, sysfs_root)
        failures.append(why or f"{mechanism}: no answer")

    wc_path = sysfs.write_cache_path(disk, sysfs_root=sysfs_root)
    text = sysfs.read_attr(sysfs_root, f"block/{disk}/queue/write_cache")
    tried = "; ".join(failures)
    if text is None:
        return CacheControl(dev, None, "unknown", False, f"no way to read the write cache ({tried})", None, sysfs_root)
    state = sysfs.parse_write_cache(text)
    note = SYSFS_NOTE + (f" (drive tools: {tried})" if tried else "")
    if not os.access(wc_path, os.W_OK):
        return CacheControl(dev, "sysfs", state, False, f"{wc_path} is not writable (needs root)", note, sysfs_root)
    return CacheControl(dev, "sysfs", state, True, None, note, sysfs_root)


def read_state(control: CacheControl) -> str:
    """The state right now, read again through the control's mechanism."""
    if control.mechanism == "sysfs":
        text = sysfs.read_attr(control.sysfs_root, f"block/{control.kernel_name}/queue/write_cache")
        return sysfs.parse_write_cache(text)
    probe = _PROBES.get(control.mechanism or "")
    if probe is None:
        return "unknown"
    state, _ = probe(control.device)
    return state or "unknown"


def _switch(control: CacheControl, state: str) -> None:
    on = state == "on"
    dev = control.device
    if control.mechanism == "sysfs":
        path = sysfs.write_cache_path(control.kernel_name, sysfs_root=control.sysfs_root)
        try:
            path.write_text("write back" if on else "write through")
        except OSError as exc:
            raise CacheError(f"cannot write {path}: {exc.strerror}") from None
        return
    argv = {
        "hdparm": ["hdparm", f"-W{1 if on else 0}", dev],
        "sdparm": ["sdparm", "--set" if on else "--clear", "WCE", dev],
        "nvme": ["nvme", "set-feature", dev, "-f", "6", "-v", "1" if on else "0"],
    }.get(control.mechanism or "")
    if argv is None:
        raise CacheError(f"no mechanism to switch the write cache of {dev}")
    done = proc.run(argv, timeout=60)
    if not done.ok:
        raise CacheError(f"`{' '.join(argv)}` failed: {_tail(done)}")


def set_state(control: CacheControl, state: Literal["on", "off"]) -> None:
    """Switch the write cache and check by reading it back. Raises CacheError."""
    if state not in ("on", "off"):
        raise CacheError(f"write cache state must be 'on' or 'off', not {state!r}")
    if not control.can_toggle or control.mechanism is None:
        raise CacheError(
            f"cannot switch the write cache of {control.device}: {control.reason or 'no mechanism'}",
            hint="run with --cache keep",
        )
    try:
        _switch(control, state)
    except DiskqError as exc:
        if isinstance(exc, CacheError):
            raise
        raise CacheError(f"cannot switch the write cache of {control.device}: {exc.message}") from None
    now = read_state(control)
    if now != state:
        raise CacheError(
            f"asked {control.mechanism} to turn the write cache of {control.device} {state}, but it now reads {now}"
        )
    control.state = state
