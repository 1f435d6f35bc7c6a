"""fio: the command line diskq runs, and the parser for fio's JSON output.

The method is the community's Ceph WAL/DB test, made machine-readable::

    fio --filename=/dev/X --direct=1 --fdatasync=1 --iodepth=1 --runtime=20 --time_based \
        --rw=write --bs=4k --group_reporting --name=ceph-iops --numjobs=N

plus ``--ioengine=psync`` (what fio picks on Linux anyway, now explicit), ``--size`` to bound the
region written, ``--ramp_time=1`` (a first second fio leaves out of its figures), a step length
set by the step's role (:class:`diskq.bench.windows.Window`), and ``--output-format=json``.

Every job writes the same region from its start, as the community command's jobs do (it gives fio
no offsets, so all N jobs write from offset 0). Method version 1 gave each job its own region
(``--offset_increment``); on a loop device that alone read up to 1.4x lower at 32 jobs than the
community command (``benchmarks/results.md``), so a version-1 "max IOPS" did not mean what the
table's column means. Version 2 writes the community layout; the two are never compared.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import signal

from diskq import proc
from diskq.bench import deadline
from diskq.bench.windows import SteadyState, Window
from diskq.errors import FioError, InvalidInput, StepCutShort, UnsupportedFio
from diskq.result import Latency, Point

BLOCK_SIZE = 4096
JOB_NAME = "ceph-iops"
MIN_VERSION = (3, 0)
TESTED_MAJOR = 3
#: the longest step diskq runs (a day): beyond that a typo is more likely than a plan
MAX_RUNTIME_S = 86400
#: A time-based step reports at least the runtime asked for (fio 3.33 on a loop device: 1001 to
#: 1005 ms for 1 s at 1 to 8 jobs); one that ran less than this share of it, and that fio's
#: steady-state detector did not end, was cut short.
FULL_STEP_SHARE = 0.98


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
    *, runtime_s: float, region_bytes: int, steady: SteadyState | None, fdatasync: bool = True, ramp_s: int = 0
) -> dict[str, str]:
    """Every fio option of a step except ``filename`` and ``numjobs``, in command-line order.
    ``ramp_s``: seconds written first and left out of the figures (``--ramp_time``)."""
    opts = {
        "name": JOB_NAME,
        "ioengine": "psync",
        "direct": "1",
        "fdatasync": "1" if fdatasync else "0",
        "iodepth": "1",
        "rw": "write",
        "bs": "4k",
        "time_based": "1",
        **({"ramp_time": str(ramp_s)} if ramp_s else {}),
        "runtime": f"{runtime_s:g}",
        "size": str(region_bytes),
        "group_reporting": "1",
    }
    if steady is not None:
        opts.update(steady.options())
    return opts


def window_options(window: Window, *, region_bytes: int, fdatasync: bool = True) -> dict[str, str]:
    """The fio options of a step of method version 4: a fixed window, or a settling one ended by
    fio's ``iops_slope`` detector."""
    return base_options(runtime_s=window.runtime_s, region_bytes=region_bytes, steady=window.detector(),
                        fdatasync=fdatasync, ramp_s=window.ramp_s)


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
    for job, w in zip(jobs, writes):
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
    lat = _combine([(_latency(w.get("clat_ns")), n) for w, n in zip(writes, ios)])
    sync_sections = []
    for job, n in zip(jobs, ios):
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




_TERMINATED = re.compile(r"fio: terminating on signal (\d+)")


def cut_short(point: Point, asked_s: float, *, returncode: int = 0, output: str = "") -> str | None:
    """Why a step did not run as it was asked to, or None when it did.

    A step was cut short when fio says it was terminated by a signal (``fio: terminating on
    signal 15`` before its JSON, exit status 128), exited with another failure status after
    printing its JSON, or ran less than :data:`FULL_STEP_SHARE` of ``asked_s`` seconds without
    its steady-state detector having ended it (``steadystate.attained`` in the JSON: a
    legitimate early end). fio 3.33 stopped by SIGTERM 0.65 s into a 10 s step prints::

        fio: terminating on signal 15
        {"fio version" : "fio-3.33", "jobs" : [{"write" : {"runtime" : 191, ...}, ...}]}
    """
    reasons = []
    terminated = _TERMINATED.search(output)
    if terminated:
        number = int(terminated.group(1))
        try:
            name = f" ({signal.Signals(number).name})"
        except ValueError:
            name = ""
        reasons.append(f"fio was terminated by signal {number}{name}")
    elif returncode != 0:
        reasons.append(killed_by(returncode) or f"fio exited with status {returncode}")
    if point.steady_state is not True and point.runtime_ms < asked_s * 1000 * FULL_STEP_SHARE:
        reasons.append(f"it ran {point.runtime_ms / 1000:g} s of the {asked_s:g} s asked")
    return " and ".join(reasons) or None


def killed_by(returncode: int) -> str | None:
    """``fio was killed by signal 9 (SIGKILL)`` for a fio that died of a signal (a negative
    status, as :mod:`subprocess` reports it), else None.

    >>> killed_by(-9), killed_by(1)
    ('fio was killed by signal 9 (SIGKILL)', None)
    """
    if returncode >= 0:
        return None
    try:
        name = f" ({signal.Signals(-returncode).name})"
    except ValueError:
        name = ""
    return f"fio was killed by signal {-returncode}{name}"


def run_step(filename: str, numjobs: int, options: dict[str, str], *, clock: deadline.Clock | None = None,
             label: str | None = None) -> Point:
    """Run one fio step and parse it.

    If the step is interrupted (Ctrl-C, SIGTERM, SIGHUP), fio is told to stop, the partial
    point it printed (if any) is attached to the exception as ``exc.partial`` and the
    interruption is re-raised. A step that fio ended early without diskq asking (see
    :func:`cut_short`), or that fio did not live to report (killed by a signal from elsewhere,
    the OOM killer's SIGKILL say), raises :class:`StepCutShort` with the point, marked
    interrupted, where fio printed one. A step still running past its deadline (``clock``, see
    :mod:`diskq.bench.deadline`) is killed with everything fio started: :class:`StepOverdue`.
    ``label`` names the step in messages (default ``the step at N jobs``).
    """
    argv = command(filename, numjobs, options)
    label = label or f"the step at {numjobs} job" + ("s" if numjobs != 1 else "")
    try:
        done = (clock or deadline.Clock()).run(argv, deadline.writing_seconds(options), label)
    except BaseException as exc:  # interruption: keep what fio measured so far
        partial = getattr(exc, "completed", None)
        if partial is not None and partial.stdout.strip():
            try:
                exc.partial = point_from_json(extract_json(partial.stdout), numjobs, interrupted=True)
            except Exception:  # a half-written JSON is simply lost; the interruption matters more
                exc.partial = None
        raise
    if done.returncode != 0 and "{" not in done.stdout:
        killed = killed_by(done.returncode)
        if killed:
            raise cut_short_error(label, killed, None)
        tail = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit status {done.returncode}"
        raise FioError(f"fio failed: {tail}", hint=_hint_for(done.stderr))
    point = point_from_json(extract_json(done.stdout), numjobs)
    why = cut_short(point, float(options["runtime"]), returncode=done.returncode, output=done.stdout + done.stderr)
    if why:
        raise cut_short_error(label, why, point.model_copy(update={"interrupted": True}))
    return point


def cut_short_error(step: str, why: str, partial) -> StepCutShort:
    """The error for a step that something other than diskq stopped (``why``, from
    :func:`cut_short`), carrying what fio measured (``partial``, marked interrupted)."""
    return StepCutShort(
        f"{step} was cut short, not by diskq: {why}",
        partial=partial,
        hint="something else stopped fio (a kill, the OOM killer, a shutdown); "
        "the steps that completed are kept: run the bench again for a complete result",
    )


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
