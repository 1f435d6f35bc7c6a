"""What the analysis adds to a result document: scaling class, USL fit, flush check, verdicts.

These models import nothing from :mod:`diskq.result`; ``result.py`` imports them (and ``Peak``,
which lives here for that reason), so there is no import cycle.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

ScalingClass = Literal["linear", "asymptotic", "regressing"]
#: Where a workload verdict's figures come from: the block-size profile's step at the workload's
#: write size, or the 4 KiB sweep's 1-job step standing in for it (:mod:`diskq.analyse.sizes`).
Basis = Literal["measured", "estimated from 4 KiB"]
Tier = Literal["excellent", "good", "marginal", "unsuitable"]
CacheState = Literal["on", "off", "unknown"]


def json_integer(value):
    """An integral number written with a fraction or an exponent (``1.0``, ``1e3``) as the integer
    it is. JSON, JSON Schema and RFC 8785 know one kind of number, so ``"numjobs": 1.0`` is
    ``"numjobs": 1`` to each of them (and to a signature); strict validation still refuses
    ``1.5``, ``"1"`` and ``true``. Used as a ``mode="before"`` validator of every integer field."""
    if type(value) is float and value.is_integer():
        return int(value)
    return value


def json_one(value):
    """:func:`json_integer` for a ``Literal[1]`` field, which must also refuse ``true``
    (``True == 1`` in Python, not in JSON)."""
    if type(value) is bool:
        raise PydanticCustomError("literal_error", "Input should be 1")
    return json_integer(value)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Peak(_Strict):
    """The highest measured throughput of a curve and the number of jobs that reached it."""

    numjobs: int = Field(ge=1)
    iops: float = Field(ge=0)

    _json_ints = field_validator("numjobs", mode="before")(json_integer)


class UslFit(_Strict):
    """Universal Scalability Law fit X(N) = lambda*N / (1 + sigma*(N-1) + kappa*N*(N-1)).

    ``sigma`` is contention (serialisation), ``kappa`` coherency (crosstalk), ``lambda`` the
    throughput of one job. ``n_max`` = sqrt((1-sigma)/kappa) is the job count with the highest
    predicted throughput, null when the model never turns down (kappa = 0 or sigma >= 1).
    """

    # JSON and Python alike know the rate of one job only as "lambda" (``lambda_`` is the attribute).
    model_config = ConfigDict(extra="forbid", validate_by_name=False, validate_by_alias=True, serialize_by_alias=True)

    sigma: float = Field(ge=0)
    kappa: float = Field(ge=0)
    lambda_: float = Field(ge=0, alias="lambda")
    n_max: float | None = None
    r2: float = Field(description="coefficient of determination of the fit on the measured points")
    rmse: float = Field(ge=0, description="root mean square error, in IOPS")
    points: int = Field(ge=0)

    _json_ints = field_validator("points", mode="before")(json_integer)

    def predict(self, n: float) -> float:
        """Predicted IOPS at ``n`` jobs."""
        return self.lambda_ * n / (1.0 + self.sigma * (n - 1.0) + self.kappa * n * (n - 1.0))


class QuestionablePoint(_Strict):
    """A figure without raw fio output held out of the class, the peak and every verdict because it
    conflicts with the curve's 1-job figure (see :mod:`diskq.analyse.plausibility`): shown with the
    conflict. A measured point (raw fio output that passes the counter checks) is never one."""

    numjobs: int = Field(ge=1)
    iops: float = Field(ge=0)
    ratio: float = Field(ge=0, description="its per-job rate over the 1-job rate")
    reason: str

    _json_ints = field_validator("numjobs", mode="before")(json_integer)


class Scaling(_Strict):
    """How throughput changes with the number of parallel fdatasync writers."""

    scaling: ScalingClass
    peak: Peak
    knee: int | None = Field(
        default=None,
        description="last measured job count before per-job throughput falls below the linear threshold; "
        "null when the whole tested range is linear; with method 'contributor' the knee the contributor's "
        "words name (null when they name none)",
    )
    description: str = Field(description="one line in the community's words")
    usl: UslFit | None = None
    method: Literal["usl", "shape", "contributor"] = Field(
        description="usl or shape: read off the figures; contributor: the figures could not decide and the "
        "contributor's own words (``words``) did"
    )
    peak_final: bool = Field(
        default=False, description="the source measured beyond the highest point and IOPS did not rise there"
    )
    words: str | None = Field(default=None, description="the contributor's own description of the curve, quoted")
    questionable: list[QuestionablePoint] = Field(
        default_factory=list,
        description="figures without raw fio output held out of the class, the peak and every "
        "verdict by a conflict with the 1-job figure, with the conflict (criteria [plausibility]); a measured point is "
        "never listed here",
    )
    notes: list[str] = Field(default_factory=list)

    _json_ints = field_validator("knee", mode="before")(json_integer)


class FlushCheck(_Strict):
    """Does fdatasync cost what a flush of a volatile write cache should cost?

    ``ratio`` is sync IOPS / no-sync IOPS at 1 job. ``honest`` is true when the flush clearly
    costs time with a volatile cache on, false when it costs almost nothing (``warning`` set),
    null when the check does not apply or cannot tell.
    """

    sync_iops: float = Field(ge=0)
    nosync_iops: float = Field(ge=0)
    ratio: float | None = Field(default=None, ge=0)
    threshold: float = Field(ge=0, description="ratio at or above which a flush counts as almost free")
    cache_state: CacheState
    volatile_write_cache: bool | None = None
    honest: bool | None = None
    warning: str | None = None
    notes: list[str] = Field(default_factory=list)


class Endurance(_Strict):
    """A load in bytes written per day against the device's rated endurance
    (:mod:`diskq.analyse.endurance`). Figures are null where they are not known; ``reasons`` say what
    the load assumes and where the rating comes from."""

    bytes_per_day: float | None = Field(default=None, ge=0, description="the load, bytes written per day")
    load_dwpd: float | None = Field(default=None, ge=0, description="the load in drive writes per day (capacity known)")
    rated_bytes_per_day: float | None = Field(default=None, ge=0, description="what the rating allows per day")
    rated_dwpd: float | None = Field(default=None, ge=0)
    rated_tbw_bytes: int | None = Field(default=None, ge=0, description="rated bytes written over the rating's life")
    share_of_rating: float | None = Field(default=None, ge=0, description="load / what the rating allows per day")
    years_to_rating: float | None = Field(default=None, ge=0, description="years until the load writes the rated bytes")
    basis: Literal["datasheet", "unknown"] = "unknown"
    reasons: list[str] = Field(default_factory=list)

    _json_ints = field_validator("rated_tbw_bytes", mode="before")(json_integer)


class CephWalDb(_Strict):
    """Ceph BlueStore WAL/DB suitability, on 1-job sync IOPS at the best safe cache setting."""

    tier: Tier | None = None
    iops: float | None = Field(default=None, ge=0, description="1-job sync IOPS the tier is based on")
    cache_state: CacheState | None = Field(default=None, description="write cache state of the run used")
    safe: bool | None = Field(default=None, description="the run used passed (or did not need) the flush check")
    reasons: list[str] = Field(default_factory=list)
    endurance: Endurance | None = Field(
        default=None, description="what the OSDs of osds_per_device would write per day against the rating"
    )


class OsdsPerDevice(_Strict):
    """How many OSDs can share the device while each still gets the commit rate one OSD needs.

    Criteria version 1 asked for a ``share`` of the device's own 1-job rate; from version 2 the
    demand is absolute (``demand_iops`` commits/s per OSD, see :mod:`diskq.analyse.osds`), and
    ``n`` is 0 when not even one OSD would get it.
    """

    n: int | None = Field(default=None, ge=0)
    share: float | None = Field(default=None, gt=0, le=1, description="criteria version 1 only")
    demand_iops: float | None = Field(default=None, gt=0, description="commits/s one OSD needs")
    osd_kind: Literal["hdd"] | None = Field(default=None, description="the kind of OSD the demand is for")
    per_osd_iops: float | None = Field(default=None, ge=0, description="IOPS(n)/n")
    solo_iops: float | None = Field(default=None, ge=0, description="IOPS(1)")
    limited_by_sweep: bool = Field(
        default=False, description="n is the largest job count measured: the device may carry more"
    )
    cache_state: CacheState | None = None
    reasons: list[str] = Field(default_factory=list)

    _json_ints = field_validator("n", mode="before")(json_integer)


class Etcd(_Strict):
    """etcd: the 99th percentile of fdatasync latency at 1 job must stay below a limit."""

    passes: bool | None = None
    p99_fdatasync_ms: float | None = Field(default=None, ge=0)
    limit_ms: float = Field(gt=0)
    cache_state: CacheState | None = None
    block_size: int | None = Field(default=None, ge=512, description="bytes per write of the step judged")
    basis: Basis | None = Field(
        default=None,
        description="measured: the size profile's step nearest etcd's write size; estimated from "
        "4 KiB: no such step, the sweep's 1-job step stands in (null: no figures at all)",
    )
    reasons: list[str] = Field(default_factory=list)

    _json_ints = field_validator("block_size", mode="before")(json_integer)


class PostgresWal(_Strict):
    """PostgreSQL WAL: one session commits about as often as the 1-job sync IOPS."""

    commits_per_s: float | None = Field(default=None, ge=0)
    p99_fdatasync_ms: float | None = Field(default=None, ge=0)
    p99_commit_ms_max: float | None = Field(
        default=None, ge=0, description="p99 of the write plus p99 of the fdatasync: an upper bound of the commit p99"
    )
    cache_state: CacheState | None = None
    block_size: int | None = Field(default=None, ge=512, description="bytes per write of the step used")
    basis: Basis | None = Field(
        default=None,
        description="measured: the size profile's 8 KiB step (a WAL page); estimated from 4 KiB: "
        "no such step, the sweep's 1-job step stands in (null: no figures at all)",
    )
    reasons: list[str] = Field(default_factory=list)

    _json_ints = field_validator("block_size", mode="before")(json_integer)


class ZfsSlog(_Strict):
    """ZFS separate intent log (SLOG): how much synchronous data the device takes per second in
    the ZIL's largest log blocks (1 writer, each block followed by a cache flush).

    With a size profile the tier comes from the step nearest :data:`block_size` (128 KiB by the
    criteria); ``curve`` lists the throughput at every measured size up to it. Without one,
    ``bw_bytes_at_most`` bounds it from the 4 KiB step (a larger write never completes sooner), which
    decides only when even the bound is below the lowest tier.
    """

    tier: Tier | None = None
    block_size: int | None = Field(default=None, ge=512, description="bytes per write of the step judged")
    bw_bytes: float | None = Field(default=None, ge=0, description="bytes per second measured at block_size")
    bw_bytes_at_most: float | None = Field(
        default=None, ge=0, description="estimated from 4 KiB: the most block_size writes could give"
    )
    iops_4k: float | None = Field(default=None, ge=0, description="1-job write+flush pairs per second at 4 KiB")
    p99_4k_ms: float | None = Field(default=None, ge=0, description="p99 fdatasync latency at 4 KiB")
    curve: dict[str, float] = Field(
        default_factory=dict, description="block size in bytes (as a string) -> bytes per second, measured sizes only"
    )
    cache_state: CacheState | None = None
    safe: bool | None = None
    basis: Basis | Literal["public figure"] | None = None
    capacity_bytes: int | None = Field(default=None, ge=0, description="the device's capacity, when known")
    bandwidth_tier: Tier | None = Field(
        default=None, description="the tier of the bandwidth alone, before capacity and endurance are weighed"
    )
    endurance: Endurance | None = Field(
        default=None, description="the tier's floor rate at the assumed duty against the rating"
    )
    reasons: list[str] = Field(default_factory=list)

    _json_ints = field_validator("block_size", "capacity_bytes", mode="before")(json_integer)


class Cliff(_Strict):
    """Where the throughput of a sustained write fell, and how far, from its per-interval samples.

    ``found`` is False when the throughput never dropped by the criteria's share for long enough;
    then the position fields are null and ``reasons`` say what was looked for. ``before_bw_bytes``
    and ``after_bw_bytes`` are typical (median) throughputs in bytes per second before and after
    the drop; ``drop_pct`` is how far the second lies below the first.
    """

    found: bool
    at_s: float | None = Field(default=None, ge=0, description="seconds into the write where the drop starts")
    at_bytes: int | None = Field(default=None, ge=0, description="bytes written when the drop starts")
    before_bw_bytes: float | None = Field(default=None, ge=0)
    after_bw_bytes: float | None = Field(default=None, ge=0)
    drop_pct: float | None = Field(default=None, ge=0, le=100)
    reasons: list[str] = Field(default_factory=list)

    _json_ints = field_validator("at_bytes", mode="before")(json_integer)


class Verdicts(_Strict):
    ceph_waldb: CephWalDb
    osds_per_device: OsdsPerDevice
    etcd: Etcd
    postgres_wal: PostgresWal
    power_loss_protection: PowerLossProtection | None = None
    zfs_slog: ZfsSlog | None = Field(default=None, description="from criteria version 4")
    criteria_version: int
    notes: list[str] = Field(default_factory=list)

    _json_ints = field_validator("criteria_version", mode="before")(json_integer)


PlpVerdict = Literal["confirmed", "likely", "unlikely", "unknown", "degraded", "not-applicable"]
#: How much a piece of power-loss evidence weighs: ``primary`` (the drive's own report, the vendor's
#: own text, diskq's measurement of the drive), ``secondary`` (a reviewer, an analyst, smartmontools'
#: drive database for the line), ``weak`` (a volunteer list, a catch-all database entry, a blog, the
#: segment prior, a free flush that cannot tell protection from ignored flushes): never decides alone.
PlpStrength = Literal["primary", "secondary", "weak"]


class PlpFact(_Strict):
    """One power-loss-relevant fact a drive reports about itself (smartctl, nvme id-ctrl).

    ``supports`` is "plp" when the fact is evidence that acknowledged writes survive a power
    loss (a capacitor self-test the drive runs, no volatile write cache at all), "neutral" when
    it is relevant but says nothing either way (a volatile cache reported present: drives with
    power-loss protection may report one too; a count of unsafe shutdowns). ``warning`` is set
    when the drive reports its backup failing (a failed capacitor test, NVMe critical warning
    bit 4).
    """

    source: str = Field(description="the tool that reported it: smartctl, nvme id-ctrl")
    field: str = Field(description="where in its output, e.g. 'ATA attribute 175 Power_Loss_Cap_Test'")
    raw: str = Field(description="the value as reported")
    meaning: str
    supports: Literal["plp", "neutral"] = "neutral"
    warning: bool = False


class PlpEvidence(_Strict):
    """One piece of evidence weighed by the power-loss-protection verdict."""

    kind: Literal["measured", "reported", "documented", "drive-database", "hardware-list", "review", "segment"]
    points_to: Literal["plp", "no_plp", "neutral", "failing"]
    text: str
    source: str | None = Field(default=None, description="where it comes from: a field, a run, a datasheet URL")
    strength: PlpStrength | None = Field(default=None, description="how much it weighs (none: neutral evidence)")


class PowerLossProtection(_Strict):
    """Does the drive keep acknowledged writes through a power loss? Evidence, not a promise.

    ``confirmed``: measured and (reported or documented) agree; ``likely``: reported or
    documented, or measured alone, with nothing against; ``unlikely``: documented as absent or
    measured against, nothing for; ``unknown``: too little evidence, or evidence that disagrees
    (listed in ``conflicts``); ``degraded``: the drive reports its backup failing;
    ``not-applicable``: the target is not a drive (a loop or zram device, a file, RAM).
    """

    verdict: PlpVerdict
    rule: str = Field(description="the rule of criteria.toml [power_loss_protection] that decided")
    evidence: list[PlpEvidence] = Field(default_factory=list)
    conflicts: list[str] = Field(
        default_factory=list, description="evidence that disagrees: flagged, never resolved silently"
    )
    reasons: list[str] = Field(default_factory=list)


Verdicts.model_rebuild()
