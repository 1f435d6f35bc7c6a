"""What a plan is made of: the data devices of a host (``--data 12x16T``), the measured WAL/DB
device, each rule's answer with its reasons and source, and the plan itself
(:func:`diskq.plan.layout.make_plan` puts it together)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

from diskq.errors import InvalidInput

Workload = Literal["rbd", "rgw", "cephfs"]
Media = Literal["hdd", "ssd"]
WORKLOADS = ("rbd", "rgw", "cephfs")
#: The smallest data device an OSD is deployed on: ceph-volume refuses one below 5 GiB
#: (5368709120 bytes: "Insufficient space (<5GB)").
MIN_DATA_BYTES = 5 * 2**30


@dataclass(frozen=True)
class DataDevices:
    """The data devices of one host: ``count`` drives of ``size_bytes`` each."""

    count: int
    size_bytes: int
    media: Media = "hdd"


def parse_data(text: str, media: str = "hdd") -> DataDevices:
    """``12x16T`` -> 12 drives of 16 * 10^12 bytes (decimal, as on the label).

    >>> parse_data("8x8TB")
    DataDevices(count=8, size_bytes=8000000000000, media='hdd')
    """
    from diskq.units import parse_drive_size

    count, sep, size = text.strip().lower().partition("x")
    if not sep or not count.strip().isdigit():
        raise InvalidInput(f"not a COUNTxSIZE: {text!r}", hint="e.g. --data 12x16T (12 drives of 16 TB)")
    n = int(count)
    if not 1 <= n <= 10_000:
        raise InvalidInput(f"the data device count must be 1 to 10000, got {n}")
    if media not in ("hdd", "ssd"):
        raise InvalidInput(f"--data-media must be hdd or ssd, got {media!r}")
    if size.strip().replace(".", "", 1).isdigit():  # 12x16 is 16 bytes to parse_drive_size: surely meant 16T
        raise InvalidInput(
            f"the data device size in {text!r} has no unit",
            hint=f"e.g. --data {n}x{size.strip()}T (TB, decimal as on the label) or {n}x{size.strip()}TiB",
        )
    size_bytes = parse_drive_size(size)
    if size_bytes < MIN_DATA_BYTES:  # ceph-volume refuses a data device below 5 GiB
        raise InvalidInput(
            f"a data device of {size.strip()} is smaller than the 5 GiB ceph-volume accepts for an OSD",
            hint="give the size with its unit, e.g. --data 12x16T",
        )
    return DataDevices(n, size_bytes, media)  # type: ignore[arg-type]


@dataclass
class WalDbDevice:
    """What a plan needs to know about the measured WAL/DB device."""

    label: str  #: the model as shown
    capacity_bytes: int | None
    protocol: str  #: ata | scsi | nvme | unknown
    curve: list[tuple[int, float]]  #: (numjobs, IOPS) of the best safe cache setting
    cache: str  #: that setting's state: on | off | unknown
    knob: str  #: drive | kernel
    kernel_model: str | None = None  #: the model as the kernel reports it, when known
    basis: str = ""  #: where the figures come from
    legacy: bool = False  #: figures from the community table, not measured by diskq
    cache_off_faster: bool = False  #: "off" (drive knob) safe and faster than a measured "on"
    notes: list[str] = field(default_factory=list)
    #: the Ceph WAL/DB answer the plan rests on (:mod:`diskq.analyse.answer`): tier, basis, reasons
    verdict: dict | None = None


@dataclass
class Rule:
    """One number of the plan with how it was reached and where the rule comes from."""

    value: object
    reasons: list[str]
    source: str = ""


@dataclass
class Plan:
    device: str
    basis: str
    data: DataDevices
    workload: str
    release: str
    compression: bool
    capacity_bytes: int
    osds_per_device: int  #: the most data OSDs one WAL/DB device serves
    binding: list[str]  #: which limits gave osds_per_device: speed | capacity | guideline
    limits: dict[str, Rule]  #: speed, capacity, guideline
    speed: dict  #: the OSDs-per-device analysis: n, per_osd_iops, headroom, limited_by_sweep, ...
    db_fraction: Rule
    db_required_bytes: int  #: the block.db size each OSD needs at least
    db_devices: int  #: WAL/DB devices the data devices need
    db_slots: int  #: block.db volumes per WAL/DB device (data OSDs spread evenly)
    db_size_bytes: int  #: each block.db volume: an equal slice of the device
    layout_reasons: list[str]  #: how db_devices, db_slots and db_size_bytes follow
    wal: Rule
    write_cache: Rule
    mclock: Rule
    notes: list[str]
    rules_version: int
    verdict: dict | None = None  #: the Ceph WAL/DB answer planned from (tier, basis, reasons)
    warnings: list[str] = field(default_factory=list)  #: why the verdict is weak: unknown, unsuitable, noisy

    def to_dict(self) -> dict:
        return asdict(self)
