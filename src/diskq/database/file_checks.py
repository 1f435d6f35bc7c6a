"""What the analysis package says of one submission file as the database build reads it: whether
a run passed the flush check, which figures a conflict holds out of a run's curve, a legacy row's
facts from the table it was imported from, and whether the file measures a host rather than a
drive. Each answer is empty (None, {}) where the analysis package is not installed."""

from __future__ import annotations

import functools
import math

from diskq.errors import DiskqError


def flush_ok(run, volatile_write_cache: bool | None) -> bool | None:
    """Did the run pass the flush check, recomputed with the current criteria from its 1-job
    step and its no-fdatasync step? False: fdatasync cost almost nothing with a volatile cache
    on, the drive may be ignoring flushes. None: no such step, or the check cannot tell."""
    if run.nosync is None:
        return None
    solo = next((p for p in run.points if p.numjobs == 1 and not p.interrupted), None)
    flush = _flush()
    if solo is None or flush is None:
        return None
    try:
        return flush.check(
            solo.iops, run.nosync.iops, cache_state=run.write_cache, volatile_write_cache=volatile_write_cache
        ).honest
    except DiskqError:
        return None


@functools.cache
def _flush():
    """The analysis package's flush check module, or None where it is not installed."""
    try:
        from diskq.analyse import flush
    except ImportError:
        return None
    return flush


@functools.cache
def _analysis():
    """(plausibility, source, hostdevice) modules of the analysis package, or None."""
    try:
        from diskq.analyse import hostdevice, plausibility, source
    except ImportError:
        return None
    return plausibility, source, hostdevice


def conflicts_of(run, filesystem: str | None = None) -> tuple[dict[int, str], dict[int, str]]:
    """``(held, paired)`` for one run (:mod:`diskq.analyse.plausibility`): numjobs -> the conflict
    of each figure without raw output held out of the curve, and numjobs -> the conflicts its
    1-job figure is part of (it stays in the curve, as a lower bound). Measured points are never
    held."""
    mods = _analysis()
    if mods is None or not all(math.isfinite(p.iops) for p in run.points):
        return {}, {}
    review = mods[0].run_review(run, filesystem=filesystem)
    held = {q.numjobs: q.reason for q in review.held}
    paired = {1: "; ".join(q.reason for q in review.held)} if held else {}
    return held, paired


def legacy_sources(sub) -> dict[int, tuple[bool, str | None]]:
    """run index -> (peak_final, contributor's words) of a legacy submission, read from the row
    as published that its provenance quotes (the community table's "peak #jobs" is the peak of
    the contributor's sweep, which went further). Empty for anything else."""
    mods = _analysis()
    if mods is None or not sub.legacy or sub.provenance is None:
        return {}
    from diskq.submission.legacy import parse_table

    prefix = "row as published: "
    rows = [parse_table(n[len(prefix) :]) for n in sub.provenance.notes if n.startswith(prefix)]
    rows = [r[0] for r in rows if r]
    if len(rows) != 1 or not sub.result.runs:
        return {}
    row = rows[0]
    run = sub.result.runs[0]
    top = max((p for p in run.points if not p.interrupted), key=lambda p: (p.iops, -p.numjobs), default=None)
    # a final peak only where the peak is a point the verdicts use (the caller holds a figure in a
    # conflict out, and puts it back with this fact when the model's evidence keeps it)
    final = top is not None and top.numjobs == row.peak_jobs == max(p.numjobs for p in run.points)
    return {0: (final, mods[1].shape_words(row.notes))}


def not_a_drive(doc) -> str | None:
    """Why ``doc`` measures a host, not a drive model (:mod:`diskq.analyse.hostdevice`)."""
    mods = _analysis()
    return mods[2].not_a_drive(doc) if mods is not None else None
