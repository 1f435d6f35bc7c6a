"""Turning measured curves into answers: USL fit, scaling class, workload verdicts.

    usl.py        the Universal Scalability Law fit (plain Python least squares)
    classify.py   linear / asymptotic / regressing, knee, description in the community's words
    flush.py      flush honesty check: sync vs no-sync IOPS at 1 job
    verdicts.py   Ceph WAL/DB tier, OSDs per device, etcd, PostgreSQL WAL
    harddisk.py   the answer for a hard disk drive: a flushed write waits for the platter
    osds.py       OSDs per device: the largest measured N at which each OSD gets its commit rate
    cliff.py      the sustained-write cliff: where a long write's throughput fell and stayed down
    plausibility.py  per-job rates above the 1-job rate: observations (measured) or conflicts (figures)
    conflicts.py  two figures that cannot both be right, decided only by other evidence
    source.py     what a curve's source says beyond its points (community table peak, words)
    hostdevice.py is a result a drive model's, or a host's (loop, zram, virtio, dm, md, RAID, file)?
    criteria.toml every threshold with its justification (read by criteria.py)
    model.py      the pydantic models all of the above return

This package never imports :mod:`diskq.result` at module level: ``result.py`` imports
``analyse.model`` for its field types.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from diskq.analyse.source import SourceSweep
    from diskq.result import ResultDocument, Run


def annotate(doc: ResultDocument, sources: Mapping[int, SourceSweep] | None = None) -> ResultDocument:
    """Fill ``scaling`` for every run with points, ``flush_check`` for every run with a
    no-fdatasync step (recomputed with the current criteria), the ``cliff`` of every sustained
    write and ``verdicts``; return ``doc``.

    The document is changed in place (and returned for convenience). Whatever was stored in
    these fields before is replaced, so imported results are judged by the current analysis.
    A run whose curve cannot be classified gets ``scaling = None`` and a note saying why.
    ``sources`` gives, per run index, what the curve's source says beyond its points (the
    community table's final peak and the contributor's words, :mod:`diskq.analyse.source`).
    """
    from diskq.analyse import plausibility, verdicts
    from diskq.analyse.classify import classify
    from diskq.errors import InvalidInput

    sources = sources or {}
    for index, run in enumerate(doc.runs):
        points = [(p.numjobs, p.iops) for p in run.points if not p.interrupted]
        source = sources.get(index)
        review = plausibility.run_review(run, filesystem=doc.device.filesystem, settled=bool(source and source.settled))
        run.scaling = None
        if len(points) >= 2:
            try:
                run.scaling = classify(points, source, review)
            except InvalidInput as exc:
                _note(run, f"scaling not classified: {exc.message}")
        elif run.points:
            _note(run, "scaling not classified: fewer than two completed steps")
        if run.peak is None and run.scaling is not None:
            run.peak = run.scaling.peak
        _flush_check(run, doc.device.volatile_write_cache)
    _cliffs(doc)
    doc.verdicts = verdicts.evaluate(doc, sources)
    return doc


def _cliffs(doc: ResultDocument) -> None:
    """The cliff of every sustained write, from its samples with the current criteria."""
    from diskq.analyse.cliff import find_cliff

    for sustained in doc.sustained:
        sustained.cliff = find_cliff(sustained.bw_samples, sustained.sample_interval_ms)


def _flush_check(run: Run, volatile_write_cache: bool | None) -> None:
    from diskq.analyse import flush

    if run.nosync is None:
        return
    solo = next((p for p in run.points if p.numjobs == 1 and not p.interrupted), None)
    if solo is None:
        _note(run, "flush check skipped: no completed 1-job step to compare with")
        return
    run.flush_check = flush.check(
        solo.iops, run.nosync.iops, cache_state=run.write_cache, volatile_write_cache=volatile_write_cache
    )
    if run.cache_mechanism == "sysfs" and run.write_cache == "off":
        run.flush_check.notes.append(
            "the cache was turned off with the kernel's write_cache knob: the kernel sent no flushes in this run"
        )
    elif run.cache_mechanism == "unknown" and run.write_cache == "off":
        run.flush_check.notes.append(
            "how the cache was turned off is not known: if it was the kernel's write_cache knob, the kernel sent "
            "no flushes in this run"
        )


def _note(run: Run, text: str) -> None:
    if text not in run.notes:
        run.notes.append(text)
