"""fio's JSON output, read: the JSON object in what fio printed (:func:`extract_json`), one
:class:`~diskq.result.Point` from it (:func:`point_from_json`), the durations fio was given
(:func:`option_seconds`), and fio's version (:func:`parse_version`, :func:`check_version`).

Nothing here runs fio (:mod:`diskq.bench.fio` does): the same parser reads every step diskq runs
and the fio JSON a contributor imports. fio 3.33 at ``--numjobs=4`` on a loop device writes, trimmed::

    {"fio version" : "fio-3.33",
     "global options" : {"filename" : "/dev/loop0", "direct" : "1", "fdatasync" : "1", "runtime" : "20", ...},
     "jobs" : [{"jobname" : "ceph-iops", "error" : 0,
                "job options" : {"name" : "ceph-iops", "numjobs" : "4", "ioengine" : "psync", ...},
                "write" : {"iops" : 10649.854264, "runtime" : 7891, "total_ios" : 84038, ...}, ...}]}
"""

from __future__ import annotations

import errno
import json
import os
import re

from diskq.errors import FioError, UnsupportedFio
from diskq.result import Latency, Point

MIN_VERSION = (3, 0)
TESTED_MAJOR = 3


_SECONDS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(us|ms|s|m|h|d)?\s*$")
_UNIT_S = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def option_seconds(data: object, name: str) -> float | None:
    """A duration option fio was given (``runtime``, ``ramp_time``), from its own JSON: ``job
    options`` of the first job, else ``global options``; None when absent or unreadable.

    >>> option_seconds({"jobs": [{"job options": {"runtime": "10"}}]}, "runtime")
    10.0
    >>> option_seconds({"global options": {"ramp_time": "1s"}}, "ramp_time"), option_seconds({}, "runtime")
    (1.0, None)
    """
    if not isinstance(data, dict):
        return None
    sources = []
    jobs = data.get("jobs")
    if isinstance(jobs, list) and jobs and isinstance(jobs[0], dict):
        sources.append(jobs[0].get("job options"))
    sources.append(data.get("global options"))
    for options in sources:
        value = options.get(name) if isinstance(options, dict) else None
        match = _SECONDS.match(value) if isinstance(value, str) else None
        if match:
            return float(match.group(1)) * _UNIT_S[match.group(2)]
    return None


def device_seconds(point: Point) -> float:
    """How long a step wrote to the device: fio's runtime plus the ramp it left out of its
    figures (``--ramp_time`` in the step's own JSON; 0 where it had none)."""
    return point.runtime_ms / 1000.0 + (option_seconds(point.fio, "ramp_time") or 0.0)


_VERSION = re.compile(r"fio-(\d+)\.(\d+)")


def parse_version(text: str) -> tuple[int, int] | None:
    """``"fio-3.33"`` or ``"fio-3.6-31-g4386"`` -> ``(3, 33)`` / ``(3, 6)``; None if unrecognised."""
    m = _VERSION.search(text or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def check_version(version: str) -> list[str]:
    """Raise :class:`UnsupportedFio` for a fio diskq cannot parse; return notes for untested ones."""
    parsed = parse_version(version)
    if parsed is None:
        raise UnsupportedFio(f"cannot read fio's version from {version!r}", hint="diskq needs fio 3.x")
    if parsed < MIN_VERSION:
        raise UnsupportedFio(
            f"{version} is not supported: fio 2.x reports latencies in a different JSON layout",
            hint="install fio 3.x (Debian 10 and later ship it)",
        )
    if parsed[0] > TESTED_MAJOR:
        return [f"{version} is newer than the fio 3.x diskq was tested with; figures are parsed the same way"]
    return []


def extract_json(text: str) -> dict:
    """The JSON object in fio's output. fio may print notes before it, e.g.::

    note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1
    {
      "fio version" : "fio-3.33",
      ...
    """
    start = text.find("{")
    if start < 0:
        snippet = text.strip().splitlines()[0] if text.strip() else "nothing"
        raise FioError(f"fio printed no JSON (it printed: {snippet[:200]})")
    try:
        data, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as exc:
        raise FioError(f"fio's JSON output is malformed: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), list):
        raise FioError("fio's JSON output has no 'jobs' list")
    return data


#: Largest figure taken from fio's JSON (fits a signed 64-bit integer, like fio's own counters).
_MAX_FIGURE = 2**63 - 1


def _number(value: object) -> float | None:
    """A finite, non-negative number that fits 64 bits, as fio writes its figures; else None."""
    from math import isfinite

    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int):
        return float(value) if 0 <= value <= _MAX_FIGURE else None
    return value if isfinite(value) and 0 <= value <= _MAX_FIGURE else None


def _latency(section: object) -> Latency | None:
    """fio's ``{clat_ns|lat_ns: {mean, max, percentile: {"99.000000": ns}}}`` -> Latency in us.
    A figure that is missing, negative or not a number is null."""
    if not isinstance(section, dict):
        return None
    pct = section.get("percentile")
    pct = pct if isinstance(pct, dict) else {}

    def us(v) -> float | None:
        n = _number(v)
        return round(n / 1000.0, 3) if n is not None else None

    return Latency(
        mean=us(section.get("mean")),
        p50=us(pct.get("50.000000")),
        p99=us(pct.get("99.000000")),
        p999=us(pct.get("99.900000")),
        max=us(section.get("max")),
    )


def _combine(lats: list[tuple[Latency | None, int]]) -> Latency | None:
    """Latency over several job entries (fio run without group_reporting): means weighted by
    I/O count; percentiles and max are the worst job's (a conservative bound, noted as such)."""
    present = [(lat, n) for lat, n in lats if lat is not None]
    if not present:
        return None
    if len(present) == 1:
        return present[0][0]

    def worst(attr: str) -> float | None:
        vals = [getattr(lat, attr) for lat, _ in present if getattr(lat, attr) is not None]
        return max(vals) if vals else None

    means = [(lat.mean, n) for lat, n in present if lat.mean is not None]
    weight = sum(n for _, n in means)
    if not means:
        mean = None
    elif weight:
        mean = round(sum(m * n for m, n in means) / weight, 3)
    else:  # no job counted any I/O: plain average
        mean = round(sum(m for m, _ in means) / len(means), 3)
    return Latency(mean=mean, p50=worst("p50"), p99=worst("p99"), p999=worst("p999"), max=worst("max"))


def job_error(job: dict) -> str | None:
    """A readable description of a job's ``error`` field (an errno), or None when 0."""
    code = job.get("error", 0)
    if code is None or code is False or code == 0:
        return None
    jobname = str(job.get("jobname", "?"))[:60]
    if isinstance(code, bool) or not isinstance(code, int):
        return f"fio job {jobname} failed with error {str(code)[:40]!r}"
    name = errno.errorcode.get(code, "")
    return f"fio job {jobname} failed with error {code}" + (f" ({name}: {os.strerror(code)})" if name else "")


def _write_figure(write: dict, key: str, jobname: str, *, integer: bool = False) -> float:
    """A figure of a job's ``write`` section; FioError when it is missing, null or not a count."""
    value = write.get(key)
    n = _number(value)
    if n is None or (integer and not float(n).is_integer()):
        what = "no" if key not in write else "a null" if value is None else f"an unusable ({str(value)[:40]!r})"
        raise FioError(f"fio job {jobname} has {what} write {key!r} figure")
    return n


def point_from_json(data: dict, numjobs: int, *, keep_raw: bool = True, interrupted: bool = False) -> Point:
    """One :class:`Point` from fio's JSON for one step (all jobs of ``numjobs``).

    Handles output with ``group_reporting`` (one job entry) and without (one entry per job:
    IOPS and bandwidth are summed). Raises :class:`FioError` when a job reported an error, has
    no ``write`` section or a write figure that is missing, null, negative or not a number, or
    when no job wrote anything; :class:`UnsupportedFio` for fio 2.x JSON (latencies in ``clat``
    usec rather than ``clat_ns``). Nothing else is raised, whatever the input.

    Sample (fio 3.33, the community method at ``--numjobs=4`` on a loop device, trimmed)::

        {"fio version": "fio-3.33",
         "jobs": [{"jobname": "ceph-iops", "error": 0,
                   "write": {"io_bytes": 344219648, "bw_bytes": 43621803, "iops": 10649.854264,
                             "runtime": 7891, "total_ios": 84038,
                             "clat_ns": {"mean": 134699.409696, "max": 8798259,
                                         "percentile": {"50.000000": 114176, "99.000000": 342016}}},
                   "sync": {"total_ios": 0,
                            "lat_ns": {"mean": 239107.57433, "percentile": {"99.000000": 643072}}},
                   "steadystate": {"ss": "iops:5.000000%", "attained": 1}}]}
    """
    if not isinstance(data, dict):
        raise FioError("fio's JSON output is not an object")
    jobs = data.get("jobs")
    jobs = [j for j in jobs if isinstance(j, dict)] if isinstance(jobs, list) else []
    if not jobs:
        raise FioError("fio's JSON output has no jobs")
    version = str(data.get("fio version", ""))
    parsed = parse_version(version)
    if parsed is not None and parsed < MIN_VERSION:
        check_version(version)
    for job in jobs:
        err = job_error(job)
        if err:
            raise FioError(err)
    writes = []
    for job in jobs:
        write = job.get("write")
        if not isinstance(write, dict) or not write:
            raise FioError(f"fio job {str(job.get('jobname', '?'))[:60]} has no write section: the step wrote nothing")
        writes.append(write)
    if any("clat_ns" not in w and "clat" in w for w in writes):
        raise UnsupportedFio("fio 2.x JSON (latencies in usec) is not supported", hint="use fio 3.x")
    iops = bw = 0.0
    runtime_ms = 0
    ios: list[int] = []
    for job, w in zip(jobs, writes, strict=False):
        name = str(job.get("jobname", "?"))[:60]
        iops += _write_figure(w, "iops", name)
        bw += _write_figure(w, "bw_bytes", name) if "bw_bytes" in w else _write_figure(w, "bw", name) * 1024
        ios.append(int(_write_figure(w, "total_ios", name, integer=True)))
        runtime_ms = max(runtime_ms, int(_write_figure(w, "runtime", name, integer=True)))
    total_ios = sum(ios)
    if total_ios == 0:
        raise FioError("fio's jobs wrote nothing (0 write I/Os)")
    if total_ios > _MAX_FIGURE or bw > _MAX_FIGURE:
        raise FioError("fio's write figures add up beyond any run")
    lat = _combine([(_latency(w.get("clat_ns")), n) for w, n in zip(writes, ios, strict=False)])
    sync_sections = []
    for job, n in zip(jobs, ios, strict=False):
        sync = job.get("sync")
        s = sync.get("lat_ns") if isinstance(sync, dict) else None
        if isinstance(s, dict) and (_number(s.get("mean")) or 0) > 0:
            sync_sections.append((_latency(s), n))
    ss = [j.get("steadystate") for j in jobs if isinstance(j.get("steadystate"), dict)]
    return Point(
        numjobs=numjobs,
        iops=round(iops, 3),
        bw_bytes=round(bw, 1),
        total_ios=total_ios,
        runtime_ms=runtime_ms,
        lat_us=lat or Latency(),
        sync_lat_us=_combine(sync_sections),
        steady_state=bool(ss[0].get("attained")) if ss else None,
        interrupted=interrupted,
        fio=data if keep_raw else None,
    )
