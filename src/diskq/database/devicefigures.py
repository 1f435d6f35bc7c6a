"""The figures of one device as the build aggregates them: a spread of medians, a point of the
median curve, a block size of the median profile, one cache setting, and the device with all its
settings (what :mod:`diskq.database.aggregate` computes and :mod:`diskq.database.build` writes).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from diskq.database.settings import setting_label


@dataclass(frozen=True, slots=True)
class Spread:
    median: float
    min: float
    max: float

    @classmethod
    def of(cls, values: list[float]) -> Spread | None:
        values = [v for v in values if v is not None and not math.isnan(v)]
        if not values:
            return None
        return cls(statistics.median(values), min(values), max(values))


@dataclass(frozen=True, slots=True)
class CurvePoint:
    numjobs: int
    iops: Spread
    n: int
    lat_mean_us: float | None
    sync_mean_us: float | None
    sync_p99_us: float | None
    lat_p99_us: float | None = None


@dataclass(frozen=True, slots=True)
class SizeAggregate:
    """One block size of a setting's median profile (medians over submissions)."""

    block_size: int
    iops: Spread
    bw_bytes: float
    n: int
    lat_p50_us: float | None = None
    lat_p99_us: float | None = None
    sync_p50_us: float | None = None
    sync_p99_us: float | None = None


@dataclass(slots=True)
class CacheAggregate:
    write_cache: str
    knob: str
    submissions: int
    verified: int
    legacy: int
    safe: bool
    iops_1job: Spread | None
    max_iops: Spread | None
    peak_jobs: int | None
    p99_sync_us: Spread | None
    curve: list[CurvePoint]
    nosync_iops: float | None = None
    scaling: dict | None = None
    unsafe_reason: str | None = None
    peak_final: bool = False  # one source row's curve whose highest point the contributor measured beyond
    source_words: str | None = None  # that contributor's words about the curve
    sizes: list[SizeAggregate] = field(default_factory=list)  # the median block-size profile, smallest first
    #: conflicts in the counted runs' figures, and what decided them (:mod:`diskq.database.settle`)
    findings: list[str] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str]:
        return (self.write_cache, self.knob)

    @property
    def label(self) -> str:
        return setting_label(self.write_cache, self.knob)


@dataclass(slots=True)
class DeviceAggregate:
    id: str
    model: str
    model_key: str
    vendor: str | None
    firmware: str
    capacity_bytes: int | None
    protocol: str
    media: str
    method: tuple[str, int]
    submissions: int
    verified: int
    legacy: int
    caches: dict[tuple[str, str], CacheAggregate]  # by (write_cache, knob)
    best: tuple[str, str] | None
    verdicts: dict | None = None
    notes: list[str] = field(default_factory=list)
    volatile_write_cache: bool | None = None
    unchecked: int = 0  # signature intact, signer not checked (no allowed-signers file)
    plp_facts: list = field(default_factory=list)  # power-loss facts reported by its submissions (plain dicts)
    excluded: dict[str, str] = field(default_factory=dict)  # submission id -> why it is not aggregated
    not_drive: str | None = None  # why the device measures a host, not a drive model: never ranked
    sustained: list = field(default_factory=list)  # database.sustained.SustainedAggregate per variant and setting

    @property
    def row_cache(self) -> CacheAggregate | None:
        return self.caches.get(self.best) if self.best else None
