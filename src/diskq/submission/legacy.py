"""The legacy submissions: the 19 SSDs of the community table, as unsigned submissions.

Each table row becomes one submission under ``submissions/<vendor>/<model>/``, marked
``legacy`` with its provenance (source, licence and the row as published). Its points are the
1-job IOPS, the max IOPS at the peak job count, and every further ``jobs: IOPS`` figure the notes
quote; a "cache on: A @ 1job, B @16" note becomes a second run with the write cache on. Only
IOPS were published, so bandwidth is IOPS x 4 KiB, latencies are unknown (null), and
``total_ios``/``runtime_ms`` are 0 (not recorded).

Where an older revision's notes held the contributor's per-job figures that the later table
dropped (``legacy_table.HISTORY``), they are read for what they say (:func:`history_points`):
``N IOPS=X`` and ``N: X`` are figures; ``N:28xx`` and ``8-16:46xx-48xx`` are approximate, a range
per job count, and enter at the low end of the range (a lower bound), said so in the run's notes.
The Intel S4510's notes ("1 job: 16xx, 2:28xx, 3:33xx, 6: 42xx, 8-16:46xx-48xx") so show a sweep
to 16 jobs at 4,600 to 4,899 IOPS, which the table's "48409 at 15 jobs" contradicts.

The rows were measured with the table's guide as it stood until 2021-06-26: ``--sync=1``
(O_SYNC) for 60 s, not ``--fdatasync=1`` (``methods.COMMUNITY_OSYNC``). On SATA behind libata
that sends the same commands as fdatasync; on NVMe and SAS it sends FUA writes
(``diskq.analyse.methodclass``), so those rows are a class of their own.

Regenerate the files with ``python -m diskq.submission.legacy [SUBMISSIONS_DIR]``.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from diskq.result import Device, Latency, Method, Peak, Point, ResultDocument, Run
from diskq.submission import methods, paths
from diskq.submission.legacy_table import HISTORY, LICENSE, SOURCE, TABLE
from diskq.submission.model import Provenance, Submission
from diskq.submission.sign import make_submission

#: When the table was imported into diskq (the table gives no measurement dates).
IMPORTED = datetime(2026, 11, 22, tzinfo=UTC)
_PROTOCOLS = {"nvme": "nvme", "sas": "scsi", "sata": "ata"}
_CACHE = {"off": "off", "on": "on", "-": "unknown"}
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*(GB|TB)$")
_PAIR = re.compile(r"\b(\d+)\s*:\s*(\d+)\b")
_AT = re.compile(r"\b(\d+)\s*@\s*(\d+)")
_IOPS_EQ = re.compile(r"\b(\d+)\s+IOPS=(\d+)\b")
#: ``2:28xx``, ``1 job: 16xx``, ``8-16:46xx-48xx``: job count (or range), hundreds (or a range of them)
_APPROX = re.compile(r"\b(\d+)(?:-(\d+))?(?:\s*jobs?)?\s*:\s*(\d+)xx(?:-(\d+)xx)?", re.I)
_EXACT = re.compile(r"\b(\d+)(?:\s*jobs?)?\s*:\s*(\d+)\b(?!xx)", re.I)


@dataclass
class Row:
    """One table row, as published."""

    text: str
    model: str
    size: str
    proto: str
    iops_1job: int
    max_iops: int
    peak_jobs: int
    cache: str
    notes: str
    extra: list[tuple[int, int]] = field(default_factory=list)  # (numjobs, iops) from the notes
    cache_on: list[tuple[int, int]] = field(default_factory=list)  # second run, write cache on


def parse_table(text: str = TABLE) -> list[Row]:
    """The rows of the SSD table::

    | Samsung PM883 | 7.68TB | SATA3.2 6G | 12680 | 59338 | 16 | off | asymptotic; cache on: 5094 @ 1job, 27521 @16 |
    """
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 8 or not cells[3].isdigit():
            continue
        row = Row(
            line.rstrip(), cells[0], cells[1], cells[2], int(cells[3]), int(cells[4]), int(cells[5]), cells[6], cells[7]
        )
        for part in (p.strip() for p in row.notes.split(";")):
            if part.lower().startswith("cache on:"):
                row.cache_on = [(int(j), int(i)) for i, j in _AT.findall(part)]
            else:
                row.extra += [(int(j), int(i)) for j, i in _PAIR.findall(part)]
        rows.append(row)
    return rows


def history_points(notes: str) -> tuple[list[tuple[int, int]], list[str]]:
    """(numjobs, IOPS) pairs an older notes cell gives, and how each approximate one was entered.

    >>> history_points("1 IOPS=490, 2 IOPS=868, 7 IOPS=1027 8 IOPS=959")[0]
    [(1, 490), (2, 868), (7, 1027), (8, 959)]
    >>> pts, how = history_points("1 job: 16xx, 2:28xx, 8-16:46xx-48xx")
    >>> pts
    [(1, 1600), (2, 2800), (8, 4600), (16, 4600)]
    >>> how[-1]
    '8-16 jobs: 46xx-48xx, entered as 4,600 at 8 and 16 jobs (the low end)'
    """
    pairs = [(int(j), int(i)) for j, i in _IOPS_EQ.findall(notes)]
    how = []
    for part in re.split(r",\s*", notes):
        if m := _APPROX.search(part):
            lo_jobs, hi_jobs = int(m.group(1)), int(m.group(2) or m.group(1))
            low = int(m.group(3)) * 100
            jobs = sorted({lo_jobs, hi_jobs})
            pairs += [(j, low) for j in jobs]
            where = (
                f"{lo_jobs}-{hi_jobs} jobs" if hi_jobs != lo_jobs else f"{lo_jobs} {'job' if lo_jobs == 1 else 'jobs'}"
            )
            at = " and ".join(str(j) for j in jobs)
            how.append(
                f"{where}: {m.group(3)}xx{'-' + m.group(4) + 'xx' if m.group(4) else ''}, entered as "
                f"{low:,} at {at} {'job' if jobs == [1] else 'jobs'} (the low end)"
            )
        elif not _IOPS_EQ.search(part) and (m := _EXACT.search(part)):
            pairs.append((int(m.group(1)), int(m.group(2))))
    return sorted(pairs), how


def _capacity(size: str) -> int | None:
    m = _SIZE.match(size.replace(" ", ""))
    if not m:
        return None
    return round(float(m.group(1)) * (10**9 if m.group(2) == "GB" else 10**12))


def _point(numjobs: int, iops: int) -> Point:
    return Point(
        numjobs=numjobs,
        iops=float(iops),
        bw_bytes=float(iops * methods.BLOCK_SIZE),
        total_ios=0,
        runtime_ms=0,
        lat_us=Latency(),
        sync_lat_us=None,
        fio=None,
    )


def _run(pairs: list[tuple[int, int]], cache: str, notes: list[str]) -> Run:
    by_jobs: dict[int, int] = {}
    for jobs, iops in pairs:
        if by_jobs.get(jobs, iops) != iops:
            raise ValueError(f"table gives two IOPS figures for {jobs} jobs: {by_jobs[jobs]} and {iops}")
        by_jobs[jobs] = iops
    points = [_point(j, by_jobs[j]) for j in sorted(by_jobs)]
    best = max(points, key=lambda p: p.iops)
    return Run(
        write_cache=cache,
        cache_mechanism="hdparm" if cache != "unknown" else None,
        cache_changed=False,
        points=points,
        peak=Peak(numjobs=best.numjobs, iops=best.iops),
        notes=notes,
    )


def result_for(row: Row, history: dict | None = None) -> ResultDocument:
    """The result document of one table row; ``history`` (default ``HISTORY``) gives older notes
    cells by (model, size)."""
    cache = _CACHE.get(row.cache, "unknown")
    proto = _PROTOCOLS.get(re.split(r"[^A-Za-z]", row.proto.lower())[0], "unknown")
    notes = [f"table notes: {row.notes}", "only IOPS were published: latencies unknown, total_ios and runtime_ms 0"]
    older: list[tuple[int, int]] = []
    history = HISTORY if history is None else history
    if (row.model, row.size) in history:
        revision, date, cell = history[row.model, row.size]
        older, how = history_points(cell)
        notes.append(f"table notes at revision {revision} ({date}): {cell}")
        if how:
            notes.append("approximate figures of those notes: " + "; ".join(how))
    runs = [_run([(1, row.iops_1job), (row.peak_jobs, row.max_iops), *row.extra, *older], cache, notes)]
    if row.cache_on:
        runs.append(_run(row.cache_on, "on", ["from the table notes: write cache on"]))
    return ResultDocument(
        created=IMPORTED,
        device=Device(
            model=row.model,
            capacity_bytes=_capacity(row.size),
            protocol=proto,
            media="ssd",
            write_cache=cache,
            sources=["community Ceph disk benchmark table"],
            notes=[f"table columns: size {row.size}, protocol {row.proto}, cache {row.cache}"],
        ),
        method=Method(
            id=methods.COMMUNITY_OSYNC[0],
            version=methods.COMMUNITY_OSYNC[1],
            fio_params=dict(methods.COMMUNITY_OSYNC_PARAMS),
            search="manual",
            runtime_s=60,
        ),
        runs=runs,
        notes=["legacy: transcribed from the community table, not measured by diskq"],
    )


def legacy_submissions(text: str = TABLE, history: dict | None = None) -> list[Submission]:
    """One submission per table row; ``history={}`` reads no older notes (the row alone)."""
    out = []
    for row in parse_table(text):
        provenance = Provenance(source=SOURCE, license=LICENSE, notes=[f"row as published: {row.text}"])
        out.append(make_submission(result_for(row, history), provenance=provenance, legacy=True))
    return out


def dump(sub: Submission) -> str:
    """The file text of a submission: indented JSON, fields as set, one trailing newline."""
    return json.dumps(sub.model_dump(mode="json", exclude_unset=True), indent=2, ensure_ascii=False) + "\n"


def write_legacy(submissions_dir: Path) -> list[Path]:
    """(Re)write every legacy submission below ``submissions_dir``; returns the paths written."""
    written = []
    for sub in legacy_submissions():
        path = Path(submissions_dir) / paths.relative_path(sub.result.device, sub.id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump(sub), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":  # pragma: no cover - maintenance entry point
    target = Path(sys.argv[1] if len(sys.argv) > 1 else paths.SUBMISSIONS_DIR)
    for p in write_legacy(target):
        print(p)
