"""fio's JSON for one step reduced to the figures a point holds (:func:`read_fio`,
:class:`FioFigures`): IOPS and bandwidth summed over job entries, mean latencies weighted by I/O
count, percentiles and maxima of the worst entry, and fio's options as short text. The JSON is
untrusted: every lookup is defensive."""

from __future__ import annotations

import math
from dataclasses import dataclass


def _num(d, key) -> float | None:
    if not isinstance(d, dict):
        return None
    v = d.get(key)
    if type(v) is not float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return None
        try:
            v = float(v)
        except OverflowError:  # an integer beyond any double: no more usable than an infinity
            return None
    return v if math.isfinite(v) else None


def _text(v) -> str:
    if type(v) is str and len(v) <= 200:
        return v
    try:
        return str(v)[:200]
    except ValueError:  # an integer too long to print
        return "?"


def _all_text(section: dict) -> bool:
    """Is ``section`` not empty, and every name and every value in it text, each value of at most
    200 characters?"""
    for k, v in section.items():
        if type(v) is not str or type(k) is not str or len(v) > 200:
            return False
    return bool(section)


def _options(section: dict) -> dict[str, str]:
    """fio's options as text of at most 200 characters; values of other JSON types left out."""
    if _all_text(section):
        return section  # the usual case, already text
    return {str(k): _text(v) for k, v in section.items() if isinstance(v, (str, int, float))}


#: Latency figures of a point other than the mean, and fio's percentile key of each.
_PERCENTILES = (("p50", "50.000000"), ("p99", "99.000000"), ("p999", "99.900000"))


@dataclass(slots=True)
class FioFigures:
    """What fio's JSON for one step says, reduced to the figures a Point holds.

    ``lat_pct_us`` and ``sync_pct_us`` hold p50, p99, p999 and max in microseconds; with one job
    entry (group_reporting) they are that entry's, with several the worst entry's (the bound
    ``diskq bench`` records). ``sync_*`` come from the entries whose fdatasync took any time.
    """

    version: str | None
    options: dict[str, str]
    entries: int
    iops: float
    bw_bytes: float
    total_ios: int
    runtime_ms: int
    lat_mean_us: float | None
    lat_pct_us: dict[str, float | None]
    sync_mean_us: float | None
    sync_pct_us: dict[str, float | None]
    errors: list[str]


_NO_TAIL = {"p50": None, "p99": None, "p999": None, "max": None}


def _tail(sections: list) -> dict[str, float | None]:
    """p50, p99, p999 and max in microseconds over fio latency sections (``clat_ns``, ``lat_ns``):
    each the largest any section reports, None where none reports it."""
    out: dict[str, float | None] = {}
    if len(sections) == 1:  # the usual case: group_reporting, one entry
        section = sections[0]
        table = section.get("percentile")
        for name, key in _PERCENTILES:
            v = _num(table, key)
            out[name] = v / 1000 if v is not None and v >= 0 else None
        v = _num(section, "max")
        out["max"] = v / 1000 if v is not None and v >= 0 else None
        return out
    tables = [s.get("percentile") for s in sections]
    for name, key in _PERCENTILES:
        vals = [v for v in (_num(t, key) for t in tables) if v is not None and v >= 0]
        out[name] = max(vals) / 1000 if vals else None
    vals = [v for v in (_num(s, "max") for s in sections) if v is not None and v >= 0]
    out["max"] = max(vals) / 1000 if vals else None
    return out


def read_fio(data) -> tuple[FioFigures | None, str | None]:
    """Reduce fio's JSON (3.x) to :class:`FioFigures`, or say why it cannot be read::

    {"fio version": "fio-3.33", "global options": {"rw": "write", ...},
     "jobs": [{"jobname": "ceph-iops", "error": 0, "job options": {"numjobs": "4"},
               "write": {"iops": 14921.08, "bw_bytes": 61116739, "total_ios": 14936,
                         "runtime": 1001, "clat_ns": {"mean": 52321.2, "percentile":
                         {"50.000000": 48640, "99.000000": 201728, ...}}},
               "sync": {"lat_ns": {"mean": 76597.9, ...}}}]}
    """
    if not isinstance(data, dict):
        return None, "fio data is not a JSON object"
    jobs = data.get("jobs")
    if not isinstance(jobs, list) or not jobs or not all(isinstance(j, dict) for j in jobs):
        return None, "fio data has no list of job objects"
    version = data.get("fio version")
    options: dict[str, str] = {}
    for section in (data.get("global options"), jobs[0].get("job options")):
        if isinstance(section, dict):
            options.update(_options(section))
    errors = []
    iops = bw = 0.0
    total = runtime = 0
    lat_weighted = sync_weighted = 0.0
    lat_n = sync_n = 0
    lat_sections: list[dict] = []
    sync_sections: list[dict] = []
    for job in jobs:
        err = job.get("error", 0)
        if err not in (0, None):
            errors.append(f"fio job reported error {_text(err)[:20]}")
        write = job.get("write")
        if not isinstance(write, dict):
            return None, "a fio job has no 'write' section"
        j_iops, j_bw = _num(write, "iops"), _num(write, "bw_bytes")
        j_ios, j_rt = _num(write, "total_ios"), _num(write, "runtime")
        if j_iops is None or j_ios is None or j_rt is None:
            return None, (
                "a fio job's 'write' section has no usable iops, total_ios or runtime (missing, or not a finite number)"
            )
        if j_bw is None:
            kib = _num(write, "bw")
            j_bw = kib * 1024 if kib is not None else None
        if j_bw is None:
            return None, "a fio job's 'write' section lacks bw_bytes"
        iops += j_iops
        bw += j_bw
        total += int(j_ios)
        runtime = max(runtime, int(j_rt))
        clat = write.get("clat_ns")
        if isinstance(clat, dict):
            lat_sections.append(clat)
            mean = _num(clat, "mean")
            if mean is not None:
                lat_weighted += mean * j_ios
                lat_n += int(j_ios)
        sync = job.get("sync")
        slat = sync.get("lat_ns") if isinstance(sync, dict) else None
        smean = _num(slat, "mean")
        if smean is not None and smean > 0:
            sync_sections.append(slat)
            sync_weighted += smean * j_ios
            sync_n += int(j_ios)
    return (
        FioFigures(
            version=version if isinstance(version, str) else None,
            options=options,
            entries=len(jobs),
            iops=iops,
            bw_bytes=bw,
            total_ios=total,
            runtime_ms=runtime,
            lat_mean_us=lat_weighted / lat_n / 1000 if lat_n else None,
            lat_pct_us=_tail(lat_sections) if lat_sections else dict(_NO_TAIL),
            sync_mean_us=sync_weighted / sync_n / 1000 if sync_n else None,
            sync_pct_us=_tail(sync_sections) if sync_sections else dict(_NO_TAIL),
            errors=errors,
        ),
        None,
    )
