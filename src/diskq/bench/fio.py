"""fio: the command line diskq runs, and the parser for fio's JSON output.

The method is the community's Ceph WAL/DB test, made machine-readable::

    fio --filename=/dev/X --direct=1 --fdatasync=1 --iodepth=1 --runtime=20 --time_based \
        --rw=write --bs=4k --group_reporting --name=ceph-iops --numjobs=N

plus ``--ioengine=psync`` (what fio picks on Linux anyway, now explicit), ``--size`` and
``--offset_increment`` so each job writes its own region, optional steady-state options that end
a step early once IOPS are stable, and ``--output-format=json``.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
from dataclasses import dataclass

from diskq import proc
from diskq.errors import FioError, InvalidInput, UnsupportedFio
from diskq.result import Latency, Point

BLOCK_SIZE = 4096
JOB_NAME = "ceph-iops"
MIN_VERSION = (3, 0)
TESTED_MAJOR = 3
#: the longest step diskq runs (a day): beyond that a typo is more likely than a plan
MAX_RUNTIME_S = 86400


@dataclass(frozen=True)
class SteadyState:
    """fio's steady-state detector: stop a step once IOPS stay within ``tolerance_pct`` of
    their mean over ``window_s`` seconds, measured after ``ramp_s`` seconds."""

    tolerance_pct: float = 5.0
    window_s: int = 3
    ramp_s: int = 1

    def options(self) -> dict[str, str]:
        return {
            "ss": f"iops:{self.tolerance_pct:g}%",
            "ss_dur": f"{self.window_s}s",
            "ss_ramp": f"{self.ramp_s}s",
        }


def check_runtime(runtime_s: float) -> None:
    """Refuse a ``--runtime`` fio would not run as written. diskq passes whole seconds, so the
    document's ``runtime_s`` is exactly what fio ran (fio reads ``--runtime=1.5`` as 1 s)."""
    hint = "give whole seconds, e.g. --runtime 20"
    if not math.isfinite(runtime_s):
        raise InvalidInput(f"--runtime must be a number of seconds, got {runtime_s}", hint=hint)
    if runtime_s != int(runtime_s):
        raise InvalidInput(f"--runtime takes whole seconds, got {runtime_s:g}", hint=hint)
    if not 1 <= runtime_s <= MAX_RUNTIME_S:
        raise InvalidInput(f"--runtime must be between 1 and {MAX_RUNTIME_S} seconds, got {runtime_s:g}", hint=hint)


def base_options(
    *, runtime_s: float, region_bytes: int, steady: SteadyState | None, fdatasync: bool = True
) -> dict[str, str]:
    """Every fio option of a step except ``filename`` and ``numjobs``, in command-line order."""
    opts = {
        "name": JOB_NAME,
        "ioengine": "psync",
        "direct": "1",
        "fdatasync": "1" if fdatasync else "0",
        "iodepth": "1",
        "rw": "write",
        "bs": "4k",
        "time_based": "1",
        "runtime": f"{runtime_s:g}",
        "size": str(region_bytes),
        "offset_increment": str(region_bytes),
        "group_reporting": "1",
    }
    if steady is not None:
        opts.update(steady.options())
    return opts


def command(filename: str, numjobs: int, options: dict[str, str]) -> list[str]:
    """The fio argv for one step."""
    argv = ["fio", f"--filename={filename}"]
    argv += [f"--{k}" if (k == "time_based" and v == "1") else f"--{k}={v}" for k, v in options.items()]
    argv += [f"--numjobs={numjobs}", "--output-format=json"]
    return argv


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


def installed_version() -> str:
    """The version string of the installed fio, e.g. ``fio-3.33``."""
    return proc.run(["fio", "--version"], check=True).stdout.strip()


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


def _latency(section: dict | None) -> Latency | None:
    """fio's ``{clat_ns|lat_ns: {mean, max, percentile: {"99.000000": ns}}}`` -> Latency in us."""
    if not isinstance(section, dict):
        return None
    pct = section.get("percentile") or {}

    def us(v) -> float | None:
        return round(float(v) / 1000.0, 3) if isinstance(v, (int, float)) and v >= 0 else None

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
    total = sum(n for _, n in present) or 1

    def worst(attr: str) -> float | None:
        vals = [getattr(lat, attr) for lat, _ in present if getattr(lat, attr) is not None]
        return max(vals) if vals else None

    means = [(lat.mean, n) for lat, n in present if lat.mean is not None]
    mean = round(sum(m * n for m, n in means) / total, 3) if means else None
    return Latency(mean=mean, p50=worst("p50"), p99=worst("p99"), p999=worst("p999"), max=worst("max"))


def job_error(job: dict) -> str | None:
    """A readable description of a job's ``error`` field (an errno), or None when 0."""
    code = job.get("error", 0)
    if not code:
        return None
    name = errno.errorcode.get(code, "")
    return f"fio job {job.get('jobname', '?')!s} failed with error {code}" + (
        f" ({name}: {os.strerror(code)})" if name else ""
    )


def point_from_json(data: dict, numjobs: int, *, keep_raw: bool = True, interrupted: bool = False) -> Point:
    """One :class:`Point` from fio's JSON for one step (all jobs of ``numjobs``).

    Handles output with ``group_reporting`` (one job entry) and without (one entry per job:
    IOPS and bandwidth are summed). Raises :class:`FioError` when a job reported an error and
    :class:`UnsupportedFio` for fio 2.x JSON (latencies in ``clat`` usec rather than ``clat_ns``).
    """
    jobs = [j for j in data.get("jobs", []) if isinstance(j, dict)]
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
    writes = [j.get("write") or {} for j in jobs]
    if any("clat_ns" not in w and "clat" in w for w in writes):
        raise UnsupportedFio("fio 2.x JSON (latencies in usec) is not supported", hint="use fio 3.x")
    iops = sum(float(w.get("iops", 0.0)) for w in writes)
    bw = sum(float(w.get("bw_bytes", float(w.get("bw", 0)) * 1024)) for w in writes)
    total_ios = sum(int(w.get("total_ios", 0)) for w in writes)
    runtime_ms = max(int(w.get("runtime", 0)) for w in writes)
    lat = _combine([(_latency(w.get("clat_ns")), int(w.get("total_ios", 0))) for w in writes])
    sync_sections = []
    for job in jobs:
        s = (job.get("sync") or {}).get("lat_ns")
        if isinstance(s, dict) and (s.get("mean") or 0) > 0:
            sync_sections.append((_latency(s), int(job.get("write", {}).get("total_ios", 0))))
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


def run_step(filename: str, numjobs: int, options: dict[str, str]) -> Point:
    """Run one fio step and parse it.

    If the step is interrupted (Ctrl-C, SIGTERM, SIGHUP), fio is told to stop, the partial
    point it printed (if any) is attached to the exception as ``exc.partial`` and the
    interruption is re-raised.
    """
    argv = command(filename, numjobs, options)
    try:
        done = proc.run(argv, timeout=None)
    except BaseException as exc:  # interruption: keep what fio measured so far
        partial = getattr(exc, "completed", None)
        if partial is not None and partial.stdout.strip():
            try:
                exc.partial = point_from_json(extract_json(partial.stdout), numjobs, interrupted=True)
            except Exception:  # a half-written JSON is simply lost; the interruption matters more
                exc.partial = None
        raise
    if done.returncode != 0 and "{" not in done.stdout:
        tail = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit status {done.returncode}"
        raise FioError(f"fio failed: {tail}", hint=_hint_for(done.stderr))
    point = point_from_json(extract_json(done.stdout), numjobs)
    return point


def _hint_for(stderr: str) -> str | None:
    low = stderr.lower()
    if "invalid argument" in low and "direct" in low or "o_direct" in low:
        return (
            "the filesystem does not support O_DIRECT (ramfs, and tmpfs before Linux 6.6, do not); "
            "put the test file on a real filesystem"
        )
    if "permission denied" in low:
        return "writing to a block device needs root"
    if "no space left" in low:
        return "the target is too small for the requested --size"
    return None
