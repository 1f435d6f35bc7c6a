"""Is a result a drive model's, or a host's? Loop, zram, virtio, device-mapper, md and RAID
volumes and files on a filesystem measure the host's stack, not a drive one can buy.

Such results are validated, stored and looked up like any other, but never ranked among drives
(the site lists them apart, ``diskq lookup`` says "not a drive: not ranked"). The rule, in order
(the first that applies gives the reason):

1. the target is a file (``device.kind == "file"`` or a filesystem recorded): it measures the
   filesystem, its journal and the device under it;
2. the document carries the memory-backed note (:data:`diskq.analyse.memorybacked.MEMORY_BACKED`);
3. the device path's kernel name is a virtual or stacked block device: ``loopN``, ``zramN``,
   ``ramN``, ``nbdN``, ``rbdN``, ``drbdN``, ``dm-N`` or ``/dev/mapper/...``, ``mdN`` or
   ``/dev/md/...``, ``vdX`` (virtio), ``xvdX`` (Xen), ``pmemN`` (and partitions of these);
4. the model is one the kernel gives such devices (``Linux loop device``, ``virtio block
   device``, ...), or a hypervisor's or RAID controller's virtual disk (QEMU, VirtualBox,
   VMware, Hyper-V, Dell PERC, HPE Smart Array ``LOGICAL VOLUME``, Broadcom/LSI MegaRAID
   ``MR...`` volumes, Dell BOSS cards' ``DELLBOSS VD`` (Dell KB 000177584: "BOSS devices contain
   the string DELLBOSS in the device's Model property", two M.2 drives "defaulting to a RAID 1
   configuration", https://www.dell.com/support/kbdoc/en-us/000177584), any model naming RAID).

5. fio's own output, whatever the identity and notes say (:mod:`diskq.analyse.rawtarget`): it
   shows a memory-backed target (a RAM disk, zram, pmem or null block device named in its
   ``filename`` or ``disk_util``, or jobs that hardly ever waited for a write), or it names one of
   the virtual or stacked devices of rule 3.

Drives behind a plain HBA keep their own model and are drives. The rule reads only the result
(path, kind, model, vendor, notes, the raw fio output of its steps), so a legacy row or an
import is judged the same way.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from diskq.result import ResultDocument

_KERNEL_NAMES = [
    (re.compile(r"^loop\d+(p\d+)?$"), "a Linux loop device"),
    (re.compile(r"^zram\d+$"), "a Linux zram device (compressed RAM)"),
    (re.compile(r"^ram\d+$"), "a Linux RAM disk"),
    (re.compile(r"^nbd\d+(p\d+)?$"), "a network block device"),
    (re.compile(r"^rbd\d+(p\d+)?$"), "a Ceph RBD image"),
    (re.compile(r"^drbd\d+$"), "a DRBD replicated device"),
    (re.compile(r"^dm-\d+$"), "a device-mapper device (LVM, dm-crypt, multipath)"),
    (re.compile(r"^md\d+(p\d+)?$"), "a Linux md RAID device"),
    (re.compile(r"^x?vd[a-z]+\d*$"), "a virtual machine's block device (virtio or Xen)"),
    (re.compile(r"^pmem\d+"), "a persistent-memory namespace"),
]
_PATH_PREFIXES = [
    ("/dev/mapper/", "a device-mapper device (LVM, dm-crypt, multipath)"),
    ("/dev/md/", "a Linux md RAID device"),
]
_MODELS = [
    (
        re.compile(r"^linux (loop|zram|md raid|ram disk|network block) device$|^linux ram disk$", re.I),
        "a Linux virtual block device",
    ),
    (
        re.compile(r"^(virtio|xen virtual) block device$|^device-mapper device$|^ceph rbd image$", re.I),
        "a virtual or stacked block device",
    ),
    (
        re.compile(r"\b(qemu|vbox|virtualbox|vmware|virtual ?disk|virtual hd|msft virtual)\b", re.I),
        "a hypervisor's virtual disk",
    ),
    (
        re.compile(r"\bperc\b|\blogical volume\b|^mr\d{4}|\bmegaraid\b|\braid\b|\bdellboss\b", re.I),
        "a RAID controller's volume",
    ),
]


def _kernel_name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def not_a_drive(doc: ResultDocument) -> str | None:
    """Why ``doc`` measures a host rather than a drive model, or None for a drive.

    >>> from diskq.result import Device, Method, ResultDocument
    >>> doc = ResultDocument(created="2026-01-01T00:00:00Z", method=Method(),
    ...                      device=Device(path="/dev/loop3", model="Linux loop device"))
    >>> not_a_drive(doc)
    'a Linux loop device (/dev/loop3): it measures the host, not a drive model'
    """
    from diskq.analyse.memorybacked import MEMORY_BACKED

    dev = doc.device
    tail = ": it measures the host, not a drive model"
    if dev.kind == "file" or dev.filesystem:
        where = f" on {dev.filesystem}" if dev.filesystem else ""
        return f"a file on a filesystem{where}: it measures the filesystem and the host, not a drive model"
    if any(n.startswith(MEMORY_BACKED) for n in doc.notes):
        return "a memory-backed target" + tail
    path = dev.path or ""
    for prefix, what in _PATH_PREFIXES:
        if path.startswith(prefix):
            return f"{what} ({path})" + tail
    name = _kernel_name(path) if path else ""
    for pattern, what in _KERNEL_NAMES:
        if name and pattern.match(name):
            return f"{what} ({path})" + tail
    for text in (dev.model or "", dev.vendor or ""):
        for pattern, what in _MODELS:
            if text and pattern.search(text):
                return f"{what} ({text})" + tail
    from diskq.analyse import rawtarget

    memory = rawtarget.memory_evidence(doc)
    if memory:
        return f"a memory-backed target ({memory})" + tail
    named = rawtarget.named_target(doc, _KERNEL_NAMES)
    if named:
        return named + tail
    return None
