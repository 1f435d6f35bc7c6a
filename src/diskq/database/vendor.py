"""The vendor a database row names: the one the drive reported, unless that is a bus's placeholder,
else the one its model name gives.

libata reports ``ATA`` as the vendor of every SATA drive and virtio a PCI id (``0x1af4``), and
smartctl reports none for ATA and NVMe drives, so most documents carry no vendor. The model name
usually does: the curated aliases map a part number to its maker (``INTEL SSDSC2KB960G7``), and a
marketing name starts with one (``Samsung PM883``). Only what the repository holds is read (not
drivedb.h, which differs between machines), so a build gives the same rows everywhere; a name that
names no known vendor (``Linux loop device``) leaves the vendor unknown (None).
"""

from __future__ import annotations

from diskq.database import modelid
from diskq.database.keys import compact

#: what a bus or a tool reports in the vendor field instead of a maker
PLACEHOLDERS = {"ata", "nvme", "scsi", "unknown", "none", "generic"}


def row_vendor(model: str | None, reported: str | None) -> str | None:
    """The vendor of a drive reported as ``reported`` with model ``model``, or None when unknown.

    >>> row_vendor("SAMSUNG MZ7LH7T6HMLA-00005", "ATA")
    'Samsung'
    >>> row_vendor("SEAGATE ST4000NM0023", "SEAGATE")
    'Seagate'
    >>> row_vendor("HUSMM1640ASS204", "HGST")
    'HGST'
    >>> row_vendor("Linux loop device", None) is None
    True
    """
    given = (reported or "").strip()
    if given and compact(given) not in PLACEHOLDERS and not given.lower().startswith("0x"):
        return modelid.VENDORS.get(given.casefold(), given)
    ident = modelid.resolve(model or "", use_drivedb=False) if model else None
    return ident.vendor if ident is not None else None
