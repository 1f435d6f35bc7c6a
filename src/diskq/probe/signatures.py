"""Does a block device hold data? The on-disk signatures libblkid finds, named for an operator.

Any signature (partition table, filesystem, LVM PV, md superblock, Ceph BlueStore label, ZFS
label, swap) refuses a device unless ``--force``; the refusal names each one
(:func:`diskq.probe.safety.check_block_device`). :func:`signatures` runs ``wipefs --no-act``
(libblkid probing every known signature, writing nothing); its parser is pure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from diskq import proc
from diskq.errors import TargetError

DATA_HINT = (
    "if nothing on it is wanted any more, add --force (with --yes) to overwrite it; "
    "otherwise pick an empty device, or bench a file on a filesystem instead"
)

#: libblkid type names and what an operator would call them.
_KINDS = {
    "gpt": "GPT partition table",
    "PMBR": "protective MBR (GPT)",
    "dos": "MBR partition table",
    "LVM2_member": "LVM physical volume",
    "linux_raid_member": "md RAID member superblock",
    "ceph_bluestore": "Ceph BlueStore OSD label",
    "zfs_member": "ZFS pool label",
    "swap": "swap signature",
    "crypto_LUKS": "LUKS encrypted volume",
    "bcache": "bcache superblock",
    "VMFS_volume_member": "VMware VMFS volume",
    "ddf_raid_member": "DDF RAID member",
    "isw_raid_member": "Intel RST RAID member",
}
_FILESYSTEMS = {
    "ext2",
    "ext3",
    "ext4",
    "xfs",
    "btrfs",
    "vfat",
    "ntfs",
    "exfat",
    "f2fs",
    "jfs",
    "reiserfs",
    "iso9660",
    "udf",
    "squashfs",
}


@dataclass(frozen=True)
class Signature:
    type: str
    offset: str
    label: str | None = None

    def describe(self) -> str:
        kind = _KINDS.get(self.type) or (
            f"{self.type} filesystem" if self.type in _FILESYSTEMS else f"{self.type} signature"
        )
        label = f", label {self.label!r}" if self.label else ""
        return f"{kind} at offset {self.offset}{label}"


def parse_wipefs_json(text: str) -> list[Signature]:
    """``wipefs --no-act --json DEV`` -> signatures found by libblkid. Sample::

        {"signatures": [{"device": "loop0", "offset": "0x438", "type": "ext4",
                         "uuid": "2ceed6dd-...", "label": null}]}

    Empty output means no signature. Output that is not JSON raises :class:`TargetError`;
    entries of an unexpected shape (no ``type`` string) are skipped, never guessed at.
    """
    text = text.strip()
    if not text:
        return []
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, an absurd number, or absurdly deep nesting
        raise TargetError(
            "wipefs printed no JSON", hint="run `wipefs --no-act` on the device to see what it says"
        ) from None
    entries = data.get("signatures") if isinstance(data, dict) else None
    found = []
    for sig in entries if isinstance(entries, list) else []:
        if not isinstance(sig, dict) or not isinstance(sig.get("type"), str) or not sig["type"]:
            continue
        offset = sig.get("offset")
        label = sig.get("label")
        found.append(
            Signature(
                sig["type"],
                str(offset) if isinstance(offset, (str, int)) and not isinstance(offset, bool) else "?",
                label if isinstance(label, str) and label else None,
            )
        )
    return found


def signatures(path: str) -> list[Signature]:
    """Every signature libblkid finds on ``path`` (``wipefs --no-act``: reads, never writes)."""
    done = proc.run(["wipefs", "--no-act", "--json", path], timeout=60)
    if not done.ok:
        raise TargetError(
            f"cannot probe {path} for existing data: {done.stderr.strip() or done.returncode}",
            hint=f"check the device with `wipefs --no-act {path}`",
        )
    try:
        return parse_wipefs_json(done.stdout)
    except TargetError as exc:
        raise TargetError(f"cannot probe {path} for existing data: {exc.message}", hint=exc.hint) from None
