"""The sustained-write measurements of the database: one row per measurement of a submission,
and per device what its measurements say about the cliff.

A submission's ``result.sustained`` list (``diskq bench --profile sustained``) becomes rows of
the ``sustained`` table as submitted, with fio's per-interval throughput kept as JSON and the
cliff as the validated document states it. The device's figures (``device_sustained``) are
computed from its counted submissions only (the ones :mod:`diskq.database.aggregate` counts):

* measurements of different variants (``fdatasync``, ``sequential``) or cache settings (state
  and knob, :func:`diskq.database.settings.knob`) are never aggregated together;
* only the device's most common version of the sustained-write method counts: profiles of
  different (id, version) are never compared;
* an interrupted measurement stays listed but is left out: its write stopped before its budget,
  so "no cliff" would mean nothing and a cliff it found is not comparable;
* the device's cliff is the earliest one any measurement found (``cliff_at_bytes_min``: the
  amount a buyer can write before the drop, at worst), with the largest drop seen
  (``drop_pct_max``) and the lowest throughput after a cliff (``after_bw_bytes_min``);
  ``written_bytes_max`` says how far the writes looked, so "no cliff" reads "none within that".

Pure functions over plain rows; no I/O.
"""

from __future__ import annotations

import json
import math
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass

from diskq.database.settings import knob, setting_label

#: Columns of the ``sustained`` table, in order (see devices.sql beside this module).
COLUMNS = (
    "submission_id",
    "seq",
    "method_version",
    "variant",
    "write_cache",
    "cache_mechanism",
    "block_size",
    "iodepth",
    "budget_bytes",
    "budget_s",
    "written_bytes",
    "runtime_ms",
    "iops",
    "bw_bytes",
    "sample_interval_ms",
    "bw_samples",
    "cliff_found",
    "cliff_at_s",
    "cliff_at_bytes",
    "cliff_before_bw_bytes",
    "cliff_after_bw_bytes",
    "cliff_drop_pct",
    "interrupted",
)
#: Columns of the ``device_sustained`` table, in order.
DEVICE_COLUMNS = (
    "device_id",
    "variant",
    "write_cache",
    "knob",
    "method_version",
    "measurements",
    "cliffs",
    "cliff_at_bytes_min",
    "cliff_at_bytes_max",
    "cliff_at_s_min",
    "drop_pct_max",
    "before_bw_bytes",
    "after_bw_bytes_min",
    "bw_bytes",
    "written_bytes_max",
    "block_size",
    "iodepth",
)
#: Order of the variants wherever they are listed.
VARIANTS = ("fdatasync", "sequential")


class NotFinite(ValueError):
    """A figure of a sustained measurement is not a finite number (the field is in ``args[0]``)."""


def _finite(value, field: str):
    if value is not None and not math.isfinite(value):
        raise NotFinite(field)
    return value


def rows(submission_id: str, doc) -> list[tuple]:
    """The ``sustained`` rows of one validated result document (:data:`COLUMNS`), in its order.

    Raises :class:`NotFinite` naming the field (``sustained.<i>.<name>``) when a figure is NaN or
    infinite: such a file is skipped by the build, like a sweep point with one."""
    out = []
    for seq, s in enumerate(doc.sustained):
        where = f"sustained.{seq}"
        for name in ("iops", "bw_bytes"):
            _finite(getattr(s, name), f"{where}.{name}")
        for i, v in enumerate(s.bw_samples):
            _finite(v, f"{where}.bw_samples.{i}")
        c = s.cliff
        if c is not None:
            for name in ("at_s", "before_bw_bytes", "after_bw_bytes", "drop_pct"):
                _finite(getattr(c, name), f"{where}.cliff.{name}")
        out.append(
            (
                submission_id,
                seq,
                s.method.version,
                s.variant,
                s.write_cache,
                s.cache_mechanism,
                s.block_size,
                s.iodepth,
                s.budget_bytes,
                s.budget_s,
                s.written_bytes,
                s.runtime_ms,
                s.iops,
                s.bw_bytes,
                s.sample_interval_ms,
                json.dumps(s.bw_samples),
                None if c is None else int(c.found),
                None if c is None else c.at_s,
                None if c is None else c.at_bytes,
                None if c is None else c.before_bw_bytes,
                None if c is None else c.after_bw_bytes,
                None if c is None else c.drop_pct,
                int(s.interrupted),
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class Measurement:
    """What aggregation needs of one ``sustained`` row (the samples stay in the table)."""

    submission_id: str
    seq: int
    method_version: int
    variant: str
    write_cache: str
    cache_mechanism: str | None
    block_size: int
    iodepth: int
    written_bytes: int
    bw_bytes: float
    cliff_found: bool | None
    cliff_at_s: float | None
    cliff_at_bytes: int | None
    cliff_before_bw_bytes: float | None
    cliff_after_bw_bytes: float | None
    cliff_drop_pct: float | None
    interrupted: bool

    @classmethod
    def of(cls, row: tuple) -> Measurement:
        r = dict(zip(COLUMNS, row, strict=False))
        return cls(
            submission_id=r["submission_id"],
            seq=r["seq"],
            method_version=r["method_version"],
            variant=r["variant"],
            write_cache=r["write_cache"],
            cache_mechanism=r["cache_mechanism"],
            block_size=r["block_size"],
            iodepth=r["iodepth"],
            written_bytes=r["written_bytes"],
            bw_bytes=r["bw_bytes"],
            cliff_found=None if r["cliff_found"] is None else bool(r["cliff_found"]),
            cliff_at_s=r["cliff_at_s"],
            cliff_at_bytes=r["cliff_at_bytes"],
            cliff_before_bw_bytes=r["cliff_before_bw_bytes"],
            cliff_after_bw_bytes=r["cliff_after_bw_bytes"],
            cliff_drop_pct=r["cliff_drop_pct"],
            interrupted=bool(r["interrupted"]),
        )


@dataclass(frozen=True, slots=True)
class SustainedAggregate:
    """One device's sustained-write figures for one variant and cache setting (:data:`DEVICE_COLUMNS`)."""

    variant: str
    write_cache: str
    knob: str
    method_version: int
    measurements: int
    cliffs: int  # how many of them found a cliff
    cliff_at_bytes_min: int | None  # the earliest cliff, in bytes written
    cliff_at_bytes_max: int | None
    cliff_at_s_min: float | None
    drop_pct_max: float | None  # the largest drop any of them saw
    before_bw_bytes: float | None  # median over the cliffs found of the throughput before the drop
    after_bw_bytes_min: float | None  # the lowest throughput after a drop
    bw_bytes: float  # median throughput over each whole write
    written_bytes_max: int  # the longest write: "no cliff" means none within this many bytes
    block_size: int
    iodepth: int

    def row(self, device_id: str) -> tuple:
        return (
            device_id,
            self.variant,
            self.write_cache,
            self.knob,
            self.method_version,
            self.measurements,
            self.cliffs,
            self.cliff_at_bytes_min,
            self.cliff_at_bytes_max,
            self.cliff_at_s_min,
            self.drop_pct_max,
            self.before_bw_bytes,
            self.after_bw_bytes_min,
            self.bw_bytes,
            self.written_bytes_max,
            self.block_size,
            self.iodepth,
        )


def _most_common(values) -> int:
    counts = Counter(values)
    return min(counts, key=lambda v: (-counts[v], v))


def primary_version(measurements: list[Measurement]) -> int | None:
    """The most common method version among the measurements (ties: the newest), None if none."""
    counts = Counter(m.method_version for m in measurements)
    if not counts:
        return None
    return min(counts, key=lambda v: (-counts[v], -v))


def aggregate(measurements: list[Measurement]) -> tuple[list[SustainedAggregate], list[str]]:
    """The device's figures per (variant, cache state, knob), and notes on what was left out.

    ``measurements`` are those of the device's counted submissions (order does not matter)."""
    notes = []
    done = [m for m in measurements if not m.interrupted]
    if len(done) < len(measurements):
        n = len(measurements) - len(done)
        notes.append(f"{n} interrupted sustained-write measurement(s) are listed but not aggregated")
    version = primary_version(done)
    counted = [m for m in done if m.method_version == version]
    if len(counted) < len(done):
        notes.append(
            f"{len(done) - len(counted)} sustained-write measurement(s) of another method version than "
            f"v{version} are listed but not aggregated"
        )
    groups: dict[tuple[str, str, str], list[Measurement]] = defaultdict(list)
    for m in counted:
        groups[(m.variant, m.write_cache, knob(m.cache_mechanism, m.write_cache))].append(m)
    out = []
    for (variant, state, knob_), ms in sorted(groups.items(), key=lambda kv: (_variant_order(kv[0][0]), kv[0])):
        found = [m for m in ms if m.cliff_found]
        at = [m.cliff_at_bytes for m in found if m.cliff_at_bytes is not None]
        at_s = [m.cliff_at_s for m in found if m.cliff_at_s is not None]
        drops = [m.cliff_drop_pct for m in found if m.cliff_drop_pct is not None]
        before = [m.cliff_before_bw_bytes for m in found if m.cliff_before_bw_bytes is not None]
        after = [m.cliff_after_bw_bytes for m in found if m.cliff_after_bw_bytes is not None]
        out.append(
            SustainedAggregate(
                variant=variant,
                write_cache=state,
                knob=knob_,
                method_version=version,
                measurements=len(ms),
                cliffs=len(found),
                cliff_at_bytes_min=min(at, default=None),
                cliff_at_bytes_max=max(at, default=None),
                cliff_at_s_min=min(at_s, default=None),
                drop_pct_max=max(drops, default=None),
                before_bw_bytes=statistics.median(before) if before else None,
                after_bw_bytes_min=min(after, default=None),
                bw_bytes=statistics.median(m.bw_bytes for m in ms),
                written_bytes_max=max(m.written_bytes for m in ms),
                block_size=_most_common(m.block_size for m in ms),
                iodepth=_most_common(m.iodepth for m in ms),
            )
        )
        unknown = sum(m.cliff_found is None for m in ms)
        if unknown:
            notes.append(
                f"{unknown} sustained-write measurement(s) ({variant}, cache {setting_label(state, knob_)}) "
                "carry no cliff analysis: counted as no cliff found"
            )
    return out, notes


def _variant_order(variant: str) -> int:
    return VARIANTS.index(variant) if variant in VARIANTS else len(VARIANTS)


def summary(agg: dict) -> str:
    """One line about a ``device_sustained`` row (a dict of :data:`DEVICE_COLUMNS`), as ``diskq
    lookup`` prints it and the device page shows it.

    >>> summary({"variant": "sequential", "block_size": 1048576, "iodepth": 32, "measurements": 2, "cliffs": 1,
    ...          "cliff_at_bytes_min": 12_000_000_000, "drop_pct_max": 74.0, "before_bw_bytes": 1.9e9,
    ...          "after_bw_bytes_min": 4.8e8, "bw_bytes": 9e8, "written_bytes_max": 60_000_000_000})
    'cliff after 12.0 GB written (found in 1 of 2 measurements): 1,900 -> 480 MB/s, down 74%'
    >>> summary({"variant": "fdatasync", "block_size": 4096, "iodepth": 1, "measurements": 1, "cliffs": 0,
    ...          "cliff_at_bytes_min": None, "drop_pct_max": None, "before_bw_bytes": None,
    ...          "after_bw_bytes_min": None, "bw_bytes": 5.2e7, "written_bytes_max": 8_000_000_000})
    'no cliff within 8.0 GB written: 52 MB/s throughout'
    """
    from diskq.units import plural

    if not agg["cliffs"]:
        return (
            f"no cliff within {gigabytes(agg['written_bytes_max'])} written: "
            f"{megabytes_per_s(agg['bw_bytes'])} throughout"
        )
    where = (
        f"after {gigabytes(agg['cliff_at_bytes_min'])} written" if agg["cliff_at_bytes_min"] is not None else "found"
    )
    if agg["measurements"] == 1:
        which = ""
    elif agg["cliffs"] == 1:
        which = f" (found in 1 of {agg['measurements']} measurements)"
    else:
        which = f" (the earliest of {agg['cliffs']} found in {plural(agg['measurements'], 'measurement')})"
    speeds = ""
    if agg["before_bw_bytes"] is not None and agg["after_bw_bytes_min"] is not None:
        speeds = (
            f": {megabytes_per_s(agg['before_bw_bytes'], unit=False)} -> {megabytes_per_s(agg['after_bw_bytes_min'])}"
        )
    drop = f", down {agg['drop_pct_max']:.0f}%" if agg["drop_pct_max"] is not None else ""
    at_most = " at most" if drop and agg["cliffs"] > 1 else ""
    return f"cliff {where}{which}{speeds}{drop}{at_most}"


def gigabytes(n: int | float | None) -> str:
    """Bytes in decimal units, as drive makers state cache sizes: ``12000000000`` -> ``12.0 GB``.

    >>> gigabytes(12_000_000_000), gigabytes(None)
    ('12.0 GB', '\u2013')
    """
    from diskq.units import human_bytes

    return "\u2013" if n is None else human_bytes(n, si=True)


def megabytes_per_s(bw: float | None, *, unit: bool = True) -> str:
    """Bytes per second as MB/s: ``4.8e8`` -> ``480 MB/s`` (one decimal below 10).

    >>> megabytes_per_s(4.8e8), megabytes_per_s(5.25e6), megabytes_per_s(1.9e9, unit=False)
    ('480 MB/s', '5.2 MB/s', '1,900')
    """
    if bw is None:
        return "\u2013"
    v = bw / 1e6
    text = f"{v:,.1f}" if v < 10 else f"{v:,.0f}"
    return f"{text} MB/s" if unit else text


def block_text(n: int) -> str:
    """A write size as fio's options give it.

    >>> block_text(4096), block_text(1048576), block_text(512)
    ('4 KiB', '1 MiB', '512 B')
    """
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"
