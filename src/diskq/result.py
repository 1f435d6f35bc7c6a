"""The result document that ``diskq bench`` writes: the contract between every stage.

bench fills it, analyse adds ``scaling``/``verdicts``, submission wraps and signs it, the database
reads it. One point is one fio step at a fixed ``numjobs``; one run is one sweep at one write
cache state. Latencies are in microseconds. ``lat_us`` is the latency of each 4 KiB ``write()``
(fio's completion latency); ``sync_lat_us`` is the latency of the ``fdatasync()`` that follows it
(fio's ``sync`` section). A commit as BlueStore sees it costs roughly their sum, so at iodepth 1
``iops ~= numjobs / (lat_us.mean + sync_lat_us.mean) * 1e6``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_serializer

from diskq.analyse.model import Cliff, FlushCheck, Peak, PlpFact, Scaling, Verdicts, json_integer, json_one  # noqa: F401 (Peak is re-exported)

CacheState = Literal["on", "off", "unknown"]
Protocol = Literal["ata", "nvme", "scsi", "unknown"]
Media = Literal["ssd", "hdd", "unknown"]
TargetKind = Literal["disk", "partition", "file"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Latency(_Strict):
    """Latency summary in microseconds; any figure fio did not report is null."""

    mean: float | None = Field(default=None, ge=0)
    p50: float | None = Field(default=None, ge=0)
    p99: float | None = Field(default=None, ge=0)
    p999: float | None = Field(default=None, ge=0)
    max: float | None = Field(default=None, ge=0)


class Point(_Strict):
    """One fio step: ``numjobs`` writers, each doing 4 KiB write + fdatasync at iodepth 1."""

    numjobs: int = Field(ge=1, le=4096)
    iops: float = Field(ge=0)
    bw_bytes: float = Field(ge=0, description="bytes per second, all jobs together")
    total_ios: int = Field(ge=0)
    runtime_ms: int = Field(ge=0)
    lat_us: Latency
    sync_lat_us: Latency | None = None
    steady_state: bool | None = Field(default=None, description="fio's steady-state detector ended the step early")
    interrupted: bool = False
    fio: dict[str, Any] | None = Field(default=None, description="fio's JSON output for this step, as printed")

    _json_ints = field_validator("numjobs", "total_ios", "runtime_ms", mode="before")(json_integer)


class ProfileMethod(_Strict):
    """How a workload profile's figures were produced. Like :class:`Method`, profiles with a
    different (id, version) are never compared; a document without profiles stays valid."""

    id: Literal["diskq-size-profile", "diskq-sustained-write"]
    version: int = 1
    fio_params: dict[str, str] = Field(
        default_factory=dict, description="fio options common to every step, except filename (and bs for sizes)"
    )
    runtime_s: float | None = Field(default=None, description="the longest a step may run (sizes)")

    _json_ints = field_validator("version", mode="before")(json_integer)


class SizePoint(_Strict):
    """One step of the block-size profile: 1 job writing ``block_size`` bytes, each write
    followed by fdatasync, at iodepth 1, ended by fio's steady-state detector or its runtime."""

    block_size: int = Field(ge=512, le=64 * 1024 * 1024, description="bytes per write")
    iops: float = Field(ge=0)
    bw_bytes: float = Field(ge=0, description="bytes per second")
    total_ios: int = Field(ge=0)
    runtime_ms: int = Field(ge=0)
    lat_us: Latency
    sync_lat_us: Latency | None = None
    steady_state: bool | None = Field(default=None, description="fio's steady-state detector ended the step early")
    interrupted: bool = False
    fio: dict[str, Any] | None = Field(default=None, description="fio's JSON output for this step, as printed")

    _json_ints = field_validator("block_size", "total_ios", "runtime_ms", mode="before")(json_integer)


class SizeProfile(_Strict):
    """The block-size profile of one write-cache state: one :class:`SizePoint` per size,
    smallest first."""

    method: ProfileMethod
    points: list[SizePoint] = Field(default_factory=list)
    interrupted: bool = False
    notes: list[str] = Field(default_factory=list)


class Sustained(_Strict):
    """One long write that looks for the sustained-write cliff (an SLC cache filling up, a
    garbage-collection stall): fio's throughput per ``sample_interval_ms`` from its bandwidth log,
    until ``budget_bytes`` were written or ``budget_s`` passed."""

    method: ProfileMethod
    variant: Literal["fdatasync", "sequential"] = Field(
        description="fdatasync: 1 job, every write followed by fdatasync; sequential: plain direct "
        "sequential writes at a high queue depth, which fill a cache sooner"
    )
    write_cache: CacheState
    cache_mechanism: str | None = None
    block_size: int = Field(ge=512, le=64 * 1024 * 1024)
    iodepth: int = Field(ge=1, le=4096)
    budget_bytes: int | None = Field(default=None, ge=0)
    budget_s: int | None = Field(default=None, ge=0)
    written_bytes: int = Field(ge=0)
    runtime_ms: int = Field(ge=0)
    iops: float = Field(ge=0)
    bw_bytes: float = Field(ge=0, description="bytes per second over the whole write")
    sample_interval_ms: int = Field(default=1000, ge=1)
    bw_samples: list[float] = Field(
        default_factory=list, description="bytes per second in each sample interval, in order, from fio's log"
    )
    cliff: Cliff | None = None
    interrupted: bool = False
    fio: dict[str, Any] | None = Field(default=None, description="fio's JSON output, as printed")
    notes: list[str] = Field(default_factory=list)

    _json_ints = field_validator(
        "block_size",
        "iodepth",
        "budget_bytes",
        "budget_s",
        "written_bytes",
        "runtime_ms",
        "sample_interval_ms",
        mode="before",
    )(json_integer)


class Run(_Strict):
    """One numjobs sweep at one write-cache state."""

    write_cache: CacheState
    cache_mechanism: str | None = Field(
        default=None,
        description="how the state was read/set: hdparm, sdparm, nvme, sysfs (the kernel's knob); for imports "
        "drive, sysfs or unknown as declared; or null (not recorded: the drive's own setting)",
    )
    cache_changed: bool = Field(default=False, description="diskq switched the cache for this run")
    points: list[Point] = Field(default_factory=list)
    peak: Peak | None = None
    scaling: Scaling | None = None
    flush_check: FlushCheck | None = None
    nosync: Point | None = Field(
        default=None, description="the flush-honesty step: same pattern without fdatasync, 1 job"
    )
    sizes: SizeProfile | None = Field(
        default=None, description="the block-size profile at this cache state (diskq bench --profile sizes)"
    )
    interrupted: bool = False
    notes: list[str] = Field(default_factory=list)


class Device(_Strict):
    """What was measured. The serial number never appears, only ``serial_hash``."""

    path: str | None = None
    kind: TargetKind | None = None
    model: str | None = None
    vendor: str | None = None
    firmware: str | None = None
    serial_hash: str | None = None
    capacity_bytes: int | None = Field(default=None, ge=0)
    protocol: Protocol = "unknown"
    media: Media = "unknown"
    rotation_rpm: int | None = Field(default=None, ge=0)
    logical_block_size: int | None = None
    physical_block_size: int | None = None
    interface_speed: str | None = None
    percentage_used: int | None = None
    data_written_bytes: int | None = None
    power_on_hours: int | None = None
    temperature_c: int | None = None
    volatile_write_cache: bool | None = None
    write_cache: CacheState = "unknown"
    cache_toggle: str | None = Field(default=None, description="mechanism that can switch the cache, if any")
    plp_facts: list[PlpFact] = Field(
        default_factory=list, description="power-loss-relevant facts the drive reports (capacitor test, vwc, ...)"
    )
    filesystem: str | None = Field(default=None, description="file mode: filesystem holding the test file")
    backing_device: str | None = Field(default=None, description="file mode: block device under the filesystem")
    sources: list[str] = Field(default_factory=list, description="where the identity was read from")
    notes: list[str] = Field(default_factory=list)

    _json_ints = field_validator(
        "capacity_bytes",
        "rotation_rpm",
        "logical_block_size",
        "physical_block_size",
        "percentage_used",
        "data_written_bytes",
        "power_on_hours",
        "temperature_c",
        mode="before",
    )(json_integer)


class Method(_Strict):
    """How the figures were produced; documents with different (id, version) are never compared."""

    id: str = "diskq-fdatasync-sweep"
    #: 4: after a 1 s ramp fio leaves out of its figures, fixed 4 s windows to steer the search and
    #: answer steps of at least 7 s that go on while their rate still trends (up to 19 s);
    #: 3: every step a fixed window after the 1 s ramp; 2: steps ended by
    #: fio's steady-state detector, every job writing one shared region from its start, as the
    #: community command does; 1: each job wrote its own region (``--offset_increment``), which
    #: reads lower at high job counts
    version: int = 4
    fio_version: str | None = None
    fio_params: dict[str, str] = Field(default_factory=dict, description="every fio option except filename/numjobs")
    search: Literal["adaptive", "explicit", "manual"] = "adaptive"
    runtime_s: float | None = None
    max_jobs: int | None = None
    cache_states: list[CacheState] | None = Field(
        default=None,
        description="the write-cache states the bench set out to measure, one run each, in order "
        "(from --cache: 'both' promises two runs)",
    )
    kernel: str | None = None
    diskq_version: str | None = None

    _json_ints = field_validator("version", "max_jobs", mode="before")(json_integer)

    @model_serializer(mode="wrap")
    def _omit_no_plan(self, handler):
        """A document without ``cache_states`` is written without it: the canonical form, and so the
        id and signature, of every document made before the plan was recorded stay what they were."""
        data = handler(self)
        if isinstance(data, dict) and data.get("cache_states") is None:
            data.pop("cache_states", None)
        return data


#: RFC 3339's date-time, the JSON Schema ``format: date-time`` the schema gives ``created``:
#: a ``T`` between date and time and a time zone (``Z`` or an offset), both required.
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z")


def rfc3339(value: Any) -> Any:
    """``created`` as the schema says it: an RFC 3339 date-time with its time zone, one rule for
    the model, ``diskq sign``, ``validate`` and any JSON Schema validator (a time without a zone
    names no instant; pydantic alone would take it, or a number, as local or epoch time).

    >>> rfc3339("2026-01-01T00:00:00Z").isoformat(), rfc3339("2026-01-01t02:00:00+02:00").isoformat()
    ('2026-01-01T00:00:00+00:00', '2026-01-01T02:00:00+02:00')
    >>> rfc3339("2026-01-01T00:00:00")
    Traceback (most recent call last):
    ...
    ValueError: created must be an RFC 3339 date-time with a time zone, e.g. 2026-01-01T00:00:00Z
    """
    if isinstance(value, datetime) and value.tzinfo is not None and value.utcoffset() is not None:
        return value
    if isinstance(value, str) and RFC3339.match(value):  # parsed here: strict validation takes no string
        return datetime.fromisoformat(value.upper())
    raise ValueError("created must be an RFC 3339 date-time with a time zone, e.g. 2026-01-01T00:00:00Z")


class ResultDocument(_Strict):
    format: Literal["diskq-result"] = "diskq-result"
    format_version: Literal[1] = 1
    created: datetime = Field(default_factory=lambda: datetime.now(UTC).replace(microsecond=0))
    device: Device
    method: Method
    runs: list[Run] = Field(default_factory=list)
    sustained: list[Sustained] = Field(
        default_factory=list, description="sustained-write cliff measurements (diskq bench --profile sustained)"
    )
    verdicts: Verdicts | None = None
    interrupted: bool = False
    notes: list[str] = Field(default_factory=list)

    _json_one = field_validator("format_version", mode="before")(json_one)
    _created = field_validator("created", mode="before")(rfc3339)

    def to_json(self, *, indent: int | None = 2) -> str:
        return self.model_dump_json(indent=indent)
