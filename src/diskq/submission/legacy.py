"""The legacy submissions: the 19 SSDs of the community table, as unsigned submissions.

Each table row becomes one submission under ``submissions/<vendor>/<model>/``, marked
``legacy`` with its provenance (source, licence and the row as published). Its points are the
1-job IOPS, the max IOPS at the peak job count, and every further ``jobs: IOPS`` figure the notes
quote; a "cache on: A @ 1job, B @16" note becomes a second run with the write cache on. Only
IOPS were published, so bandwidth is IOPS x 4 KiB, latencies are unknown (null), and
``total_ios``/``runtime_ms`` are 0 (not recorded).

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
from datetime import datetime, timezone
from pathlib import Path

from diskq.result import Device, Latency, Method, Peak, Point, ResultDocument, Run
from diskq.submission import methods, paths
from diskq.submission.legacy_table import LICENSE, SOURCE, TABLE
from diskq.submission.model import Provenance, Submission
from diskq.submission.sign import make_submission

#: When the table was imported into diskq (the table gives no measurement dates).
IMPORTED = datetime(2026, 11, 22, tzinfo=timezone.utc)
_PROTOCOLS = {"nvme": "nvme", "sas": "scsi", "sata": "ata"}
_CACHE = {"off": "off", "on": "on", "-": "unknown"}
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*(GB|TB)$")
_PAIR = re.compile(r"\b(\d+)\s*:\s*(\d+)\b")
_AT = re.compile(r"\b(\d+)\s*@\s*(\d+)")


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
        row = Row(line.rstrip(), cells[0], cells[1], cells[2], int(cells[3]), int(cells[4]), int(cells[5]),
                  cells[6], cells[7])
        for part in (p.strip() for p in row.notes.split(";")):
            if part.lower().startswith("cache on:"):
                row.cache_on = [(int(j), int(i)) for i, j in _AT.findall(part)]
            else:
                row.extra += [(int(j), int(i)) for j, i in _PAIR.findall(part)]
        rows.append(row)
    return rows


def _capacity(size: str) -> int | None:
    m = _SIZE.match(size.replace(" ", ""))
    if not m:
        return None
    return round(float(m.group(1)) * (10**9 if m.group(2) == "GB" else 10**12))


def _point(numjobs: int, iops: int) -> Point:
    return Point(numjobs=numjobs, iops=float(iops), bw_bytes=float(iops * methods.BLOCK_SIZE), total_ios=0,
                 runtime_ms=0, lat_us=Latency(), sync_lat_us=None, fio=None)


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


def result_for(row: Row) -> ResultDocument:
    cache = _CACHE.get(row.cache, "unknown")
    proto = _PROTOCOLS.get(re.split(r"[^A-Za-z]", row.proto.lower())[0], "unknown")
    runs = [
        _run(
            [(1, row.iops_1job), (row.peak_jobs, row.max_iops), *row.extra],
            cache,
            [f"table notes: {row.notes}", "only IOPS were published: latencies unknown, total_ios and runtime_ms 0"],
        )
    ]
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


def legacy_submissions(text: str = TABLE) -> list[Submission]:
    out = []
    for row in parse_table(text):
        provenance = Provenance(source=SOURCE, license=LICENSE, notes=[f"row as published: {row.text}"])
        out.append(make_submission(result_for(row), provenance=provenance, legacy=True))
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
