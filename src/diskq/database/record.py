"""The compact record the database build keeps of one accepted submission: its table rows,
each run reduced to a packed curve and block-size profile (:class:`RunSummary`), and what
aggregation reads (:class:`SubmissionRecord`); and the record's JSON form for the validation
memo (:func:`encode`, :func:`decode`).

:mod:`diskq.database.extract` makes a record from a submission file; aggregation
(:mod:`diskq.database.aggregate`) and the build read it. No I/O.
"""

from __future__ import annotations

import json
import math
from array import array
from dataclasses import dataclass, field

from diskq.database import sustained
from diskq.database.keys import firmware_key, model_key

#: Fields of one packed curve entry in :attr:`RunSummary.curve`.
CURVE_FIELDS = ("numjobs", "iops", "lat_mean_us", "sync_mean_us", "sync_p99_us", "lat_p99_us")
_WIDTH = len(CURVE_FIELDS)
#: Fields of one packed size-profile step in :attr:`RunSummary.sizes`.
SIZE_FIELDS = ("block_size", "iops", "bw_bytes", "lat_p50_us", "lat_p99_us", "sync_p50_us", "sync_p99_us")
_SIZE_WIDTH = len(SIZE_FIELDS)
#: The size-profile method the database aggregates (``diskq.analyse.sizes.METHOD``, version 2:
#: fixed windows): steps of another method or version (version 1's detector-ended steps among
#: them) are stored as submitted but never enter a median, so the two are never mixed in one figure.
SIZE_METHOD = ("diskq-size-profile", 2)
NAN = float("nan")


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file the build did not accept, and why (same shape as the validator's ``Problem``)."""

    path: str
    field: str
    message: str


@dataclass(slots=True)
class RunSummary:
    """One sweep, reduced to what aggregation needs. ``curve`` is flat: 6 doubles per point
    (:data:`CURVE_FIELDS`, NaN where fio reported nothing), interrupted points left out.
    ``cache_mechanism`` is how the cache state was read or set (``sysfs``: the kernel's
    queue/write_cache knob, not the drive's own cache)."""

    index: int
    write_cache: str
    flush_ok: bool | None
    nosync_iops: float | None
    curve: array
    cache_mechanism: str | None = None
    cache_changed: bool = False
    peak_final: bool = False  # the source (community table) measured beyond the highest point
    source_words: str | None = None  # the contributor's own words about this curve
    solo_spread: float | None = None  # within-step spread of the 1-job step's IOPS (diskq.analyse.noise)
    sizes: array = field(default_factory=lambda: array("d"))  # SIZE_FIELDS per completed profile step
    #: points held out of ``curve`` by a conflict with the 1-job figure (CURVE_FIELDS each); the
    #: model's other evidence may put them back (:mod:`diskq.database.settle`)
    held: array = field(default_factory=lambda: array("d"))
    peak_final_if_kept: bool = False  # peak_final, were the held points kept
    #: what the plausibility review and the model's evidence found (notes for every verdict)
    findings: list[str] = field(default_factory=list)

    def held_points(self) -> list[tuple[float, ...]]:
        c = self.held
        return [tuple(c[i : i + _WIDTH]) for i in range(0, len(c), _WIDTH)]

    def points(self) -> list[tuple[float, ...]]:
        c = self.curve
        return [tuple(c[i : i + _WIDTH]) for i in range(0, len(c), _WIDTH)]

    def size_points(self) -> list[tuple[float, ...]]:
        """The completed steps of the run's block-size profile (:data:`SIZE_FIELDS`, NaN where
        fio reported nothing), smallest size first; empty without a profile of :data:`SIZE_METHOD`."""
        c = self.sizes
        return [tuple(c[i : i + _SIZE_WIDTH]) for i in range(0, len(c), _SIZE_WIDTH)]


@dataclass(slots=True)
class SubmissionRecord:
    """Everything the build keeps from one accepted submission."""

    id: str
    device_id: str
    model_key: str
    firmware_key: str
    row: tuple  # the ``submissions`` row, without device aggregation flags (see build.SUBMISSION_COLUMNS)
    run_rows: list[tuple]
    point_rows: list[tuple]
    runs: list[RunSummary]
    model: str
    vendor: str | None
    firmware: str | None
    capacity_bytes: int | None
    protocol: str
    media: str
    legacy: bool
    verified: bool
    method: tuple[str, int]
    created: str | None
    volatile_write_cache: bool | None = None  # what the drive reports: does it have a volatile cache?
    signature: str = "unsigned"  # one of extract.SIGNATURE_STATUSES
    plp_facts: list = field(default_factory=list)  # the power-loss facts the drive reported, as plain dicts
    figures_digest: str = ""  # of the measured figures: the same fio output signed again has the same
    not_drive: str | None = None  # why the result measures a host, not a drive model (None: a drive)
    size_rows: list[tuple] = field(default_factory=list)  # the ``size_points`` rows, every step as submitted
    sustained_rows: list[tuple] = field(default_factory=list)  # ``sustained`` table rows (database.sustained)
    sustained: list = field(default_factory=list)  # database.sustained.Measurement of each, for aggregation


def all_finite(values: tuple[float | None, ...]) -> bool:
    """Is every figure that is there a finite number?"""
    for v in values:
        if v is not None and not math.isfinite(v):
            return False
    return True


def pack_sizes(size_rows: list[tuple]) -> array:
    """The packed completed steps (:data:`SIZE_FIELDS`) of one run from its ``size_points`` rows:
    interrupted steps and steps of another method than :data:`SIZE_METHOD` left out."""
    packed = array("d")
    for row in sorted(size_rows, key=lambda r: (r[3], r[2])):
        _, _, _, block_size, iops, bw, lat_p50, lat_p99, sync_p50, sync_p99, interrupted, mid, mver = row
        if interrupted or (mid, mver) != SIZE_METHOD:
            continue
        packed.extend((block_size, iops, bw, _nan(lat_p50), _nan(lat_p99), _nan(sync_p50), _nan(sync_p99)))
    return packed


def _nan(x: float | None) -> float:
    return NAN if x is None else x


def _curve(point_rows: list[tuple], held: bool = False) -> array:
    """The packed curve (:data:`CURVE_FIELDS`) of one run from its ``points`` rows, interrupted
    steps and points held out by a conflict left out (with ``held``: those points alone): what
    :func:`read_submission` packs while it reads the points."""
    curve = array("d")
    for _, _, _, numjobs, iops, _, lat_mean, lat_p99, sync_mean, sync_p99, interrupted, _, out in point_rows:
        if not interrupted and bool(out) == held:
            curve.extend((numjobs, iops, _nan(lat_mean), _nan(sync_mean), _nan(sync_p99), _nan(lat_p99)))
    return curve


def encode(record: SubmissionRecord | None, skipped: list[Skipped]) -> str:
    """One file's outcome as JSON, for the validation memo (floats round-trip exactly).

    A record is kept as its table rows (without the id that each run and point row repeats) and
    the no-fdatasync IOPS of each run; :func:`decode` derives everything else from them again.
    """
    if record is None:
        return json.dumps({"skipped": [[s.path, s.field, s.message] for s in skipped]})
    return json.dumps(
        {
            "row": record.row,
            "runs": [r[1:] for r in record.run_rows],
            "points": [p[1:] for p in record.point_rows],
            "nosync": [r.nosync_iops for r in record.runs],
            "plp": record.plp_facts,
            "spread": [r.solo_spread for r in record.runs],
            "sizes": [r[1:] for r in record.size_rows],
            "sustained": [r[1:] for r in record.sustained_rows],
            "final_if_kept": [r.peak_final_if_kept for r in record.runs],
        }
    )


def decode(text: str) -> tuple[SubmissionRecord | None, list[Skipped]]:
    """The inverse of :func:`encode`."""
    d = json.loads(text)
    if "skipped" in d:
        return None, [Skipped(*s) for s in d["skipped"]]
    row = tuple(d["row"])
    sid, did, model, firmware = row[0], row[1], row[10], row[12]
    run_rows = [(sid, *r) for r in d["runs"]]
    point_rows = [(sid, *p) for p in d["points"]]
    runs = []
    size_rows = [(sid, *r) for r in d.get("sizes") or []]
    spreads = d.get("spread") or [None] * len(run_rows)
    sustained_rows = [(sid, *r) for r in d.get("sustained") or []]
    finals = d.get("final_if_kept") or [False] * len(run_rows)
    for r, nosync, spread, final in zip(run_rows, d["nosync"], spreads, finals, strict=False):
        _, index, write_cache, mechanism, changed, ok = r[:6]
        rows = [p for p in point_rows if p[1] == index]
        runs.append(
            RunSummary(
                index,
                write_cache,
                None if ok is None else bool(ok),
                nosync,
                _curve(rows),
                mechanism,
                bool(changed),
                peak_final=bool(r[10]),
                source_words=r[11],
                solo_spread=spread,
                sizes=pack_sizes([s for s in size_rows if s[1] == index]),
                held=_curve(rows, held=True),
                peak_final_if_kept=bool(final),
            )
        )
    return SubmissionRecord(
        id=sid,
        device_id=did,
        model_key=model_key(model),
        firmware_key=firmware_key(firmware),
        row=row,
        run_rows=run_rows,
        point_rows=point_rows,
        runs=runs,
        model=model,
        vendor=row[11],
        firmware=firmware,
        capacity_bytes=row[13],
        protocol=row[14],
        media=row[15],
        legacy=bool(row[5]),
        verified=bool(row[6]),
        method=(row[16], row[17]),
        created=row[4],
        volatile_write_cache=None if row[21] is None else bool(row[21]),
        signature=row[22],
        plp_facts=d.get("plp") or [],
        figures_digest=row[23],
        not_drive=row[24],
        size_rows=size_rows,
        sustained_rows=sustained_rows,
        sustained=[sustained.Measurement.of(r) for r in sustained_rows],
    ), []
