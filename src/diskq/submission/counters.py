"""Figures fio reports twice, checked against each other: what a forger who edits the headline
figures of fio's JSON (IOPS, I/O count, latencies) leaves behind.

fio counts the same step in several independent ways. Validation compares the figures a point
claims with fio's headline figures (:mod:`diskq.submission.figures`); this module compares
those headline figures with the counters fio reports beside them, per job entry:

* ``io_bytes`` is ``total_ios`` x 4 KiB (x the block size of a size-profile step), and ``clat_ns.N`` / ``lat_ns.N`` (and the fdatasync's
  ``lat_ns.N``, up to one missing sync per job) count the same I/Os as ``total_ios``;
* the latency histogram fio keeps apart from its percentiles (``latency_ns`` / ``latency_us`` /
  ``latency_ms``: the share of writes per latency range, the range ``[previous key, key)``)
  must put each write percentile where the percentile says (``p`` % of the writes below its
  value), within :data:`~diskq.submission.histogram.HISTOGRAM_SLACK` percentage points and
  :data:`~diskq.submission.histogram.EDGE_SLACK` of the value; with ``--output-format=json+``
  the bins (``clat_ns.bins``, ``lat_ns.bins`` of the write and of the fdatasync) must hold ``N``
  I/Os and agree with the percentiles the same way (:mod:`diskq.submission.histogram`);
* the kernel's own count of the target device (``disk_util``: ``write_ios`` + ``write_merges``)
  must have seen at least :data:`DISK_MIN` of the writes fio claims (a flush may add to it,
  never take away), less the end of the step fio's last sample may miss
  (:data:`DISK_LAG_MS`), when it names the device fio wrote to. Flushes are not counted apart:
  the kernel counts them as writes on some devices and separately (or not at all) on others;
* each job sleeps at least once per write it waits for (a block device completes I/O by
  interrupt), so ``ctx`` is at least :data:`CTX_MIN` per write, on a block device that is not a
  RAM disk or persistent memory (those complete in the caller's context);
* the jobs' time (``job_runtime``) is about ``runtime`` times the jobs in the entry, it holds
  every I/O's write and fdatasync latency, and fio's wall clock (``elapsed``) covers the step;
* fio's own clock against the step length is checked on every step, counters or not
  (:mod:`diskq.submission.clock`).

Tolerances accept every real fio output the tests hold (the recorded ones, runs made on loop
devices and on files); an output scaled tenfold is far outside every one. Counters that are
absent are not checked (fio 2.x and hand-made outputs lack some; a file target's ``disk_util``
describes another device): each check only raises what a forger must fake.

Cheap by design (validation runs it on every point of every file): each check first looks for
its counter and does nothing when it is missing.
"""

from __future__ import annotations

import os
from collections import Counter

from diskq.submission.clock import clock_problem  # noqa: F401 (validation reads it with the counters)
from diskq.submission.histogram import _bins_problem, _histogram_problem, _n

BLOCK = 4096
#: The device must have seen at least this share of the writes fio counted (0.9976 and 0.9994
#: are seen on real drives over long steps)...
DISK_MIN = 0.9
#: ... less what fio's last sample of the device's counters may miss at the end of the step:
#: it samples them every 250 ms, and a 1-second step on a loop device in "write through" shows
#: 0.855 of its writes counted.
DISK_LAG_MS = 500.0
#: Context switches per write at least (a write + fdatasync pair sleeps about twice; a write
#: alone, or a flush the kernel skips, once; real async runs at iodepth 8 show 0.89).
CTX_MIN = 0.5
#: Devices that complete I/O synchronously, in the caller's context: no context switch per write.
_SYNCHRONOUS_DEVICES = ("ram", "zram", "pmem", "nullb", "dax", "brd")


#: Counters of a job entry (any one present means there is something to check).
_JOB_COUNTERS = frozenset({"ctx", "latency_ns", "latency_us", "latency_ms", "job_runtime", "elapsed"})


def _has_counters(data: dict, jobs: list) -> bool:
    """Is any counter this module checks present? (Hand-made and synthetic outputs hold none: the
    usual case in a large database, so it is answered without the full walk.)"""
    if "disk_util" in data:
        return True
    for job in jobs:
        if not isinstance(job, dict):
            return False
        if not _JOB_COUNTERS.isdisjoint(job):
            return True
        write = job.get("write")
        if isinstance(write, dict):
            if "io_bytes" in write:
                return True
            for name in ("clat_ns", "lat_ns"):
                section = write.get(name)
                if isinstance(section, dict) and ("N" in section or "bins" in section):
                    return True
        sync = job.get("sync")
        section = sync.get("lat_ns") if isinstance(sync, dict) else None
        if isinstance(section, dict) and ("N" in section or "bins" in section):
            return True
    return False


def _device_name(options: dict) -> str | None:
    """The block device fio wrote to (``sdb`` for ``--filename=/dev/sdb``), None for a file."""
    name = options.get("filename") if isinstance(options, dict) else None
    if not isinstance(name, str) or not name.startswith("/dev/") or ":" in name:
        return None
    base = os.path.basename(name)
    return base if base and "/" not in name[5:] else None


def counter_problems(data: dict, *, sync: bool = True) -> list[tuple[str, str]]:
    """``(field under fio, message)`` for every counter of fio's JSON that contradicts its own
    headline figures; ``sync`` is whether the step ran fdatasync after each write.

    ``data`` is untrusted and read defensively; absent counters are not checked.
    """
    out: list[tuple[str, str]] = []
    jobs = data.get("jobs")
    if not isinstance(jobs, list) or not jobs:
        return out
    if not _has_counters(data, jobs):
        return out
    version = data.get("fio version")
    if isinstance(version, str) and version.startswith("fio-2"):
        return out  # fio 2.x counts bytes in KiB and lacks most of these counters
    common = data.get("global options") if isinstance(data.get("global options"), dict) else {}
    device = None
    total = 0.0
    ctx = 0.0
    have_ctx = True
    numjobs_all = 0
    runtime_ms = 0.0
    names = Counter(_jobname(job) for job in jobs)
    for i, job in enumerate(jobs):
        if not isinstance(job, dict):
            return out
        where = f"fio.jobs[{i}]"
        own = job.get("job options") if isinstance(job.get("job options"), dict) else {}
        options = {**common, **own}
        if i == 0:
            device = _device_name(options)
        numjobs = _int_option(options, "numjobs", 1)
        numjobs_all += numjobs
        # with group_reporting one entry sums every job of its section; without, one job each
        # (fio's JSON does not always list group_reporting among the options: count the entries)
        per_entry = numjobs if names[_jobname(job)] < numjobs else 1
        depth = _int_option(options, "iodepth", 1)
        in_flight = depth * per_entry
        write = job.get("write")
        ios = _n(write, "total_ios")
        if ios is None:
            return out  # fiojson.read_fio reports the missing headline figure
        total += ios
        runtime_ms = max(runtime_ms, _n(write, "runtime") or 0.0)
        c = _n(job, "ctx")
        if c is None:
            have_ctx = False
        else:
            ctx += c
        io_bytes = _n(write, "io_bytes")
        bs = _bs(options)
        if io_bytes is not None and bs and abs(io_bytes - ios * bs) > bs * in_flight:
            what = "4 KiB" if bs == BLOCK else f"{bs} B"
            out.append((f"{where}.write.io_bytes", f"{io_bytes:.0f} bytes are not {ios:.0f} I/Os of {what}"))
        clat, lat = write.get("clat_ns"), write.get("lat_ns")
        for name, section in (("clat_ns", clat), ("lat_ns", lat)):
            count = _n(section, "N")
            if count is not None and abs(count - ios) > in_flight - 1:
                out.append((f"{where}.write.{name}.N", f"counts {count:.0f} writes, total_ios says {ios:.0f}"))
        slat = job.get("sync", {}).get("lat_ns") if isinstance(job.get("sync"), dict) else None
        syncs = _n(slat, "N")
        if sync and syncs is not None and syncs > 0 and not (ios - per_entry - 1 <= syncs <= ios + 1):
            out.append((f"{where}.sync.lat_ns.N", f"counts {syncs:.0f} fdatasyncs after {ios:.0f} writes"))
        why = _histogram_problem(job, clat)
        if why:
            out.append((f"{where}.latency_us", f"the write latency {why}"))
        for name, section in (("write.clat_ns", clat), ("write.lat_ns", lat)):
            why = _bins_problem(section, ios, "the write latency", in_flight - 1)
            if why:
                out.append((f"{where}.{name}.bins", why))
        if sync and syncs:
            why = _bins_problem(slat, syncs, "the fdatasync latency", 0)
            if why:
                out.append((f"{where}.sync.lat_ns.bins", why))
        out += _time_problems(job, write, ios, clat, slat if sync else None, per_entry, where, depth)
    if device is not None and have_ctx and total > 0 and not device.startswith(_SYNCHRONOUS_DEVICES):
        if ctx < CTX_MIN * total:
            out.append(
                (
                    "fio.jobs[].ctx",
                    f"{ctx:.0f} context switches for {total:.0f} writes on {device}: "
                    f"each write the job waits for costs at least {CTX_MIN:g}",
                )
            )
    if device is not None and total > 0:
        seen = _disk_writes(data.get("disk_util"), device)
        counted = DISK_MIN * max(0.0, 1 - DISK_LAG_MS / runtime_ms) if runtime_ms else 0.0
        if seen is not None and seen < counted * total - 2 * numjobs_all:
            out.append(("fio.disk_util", f"the kernel counted {seen:.0f} writes to {device}, fio claims {total:.0f}"))
    return out


def cross_checked(data, *, sync: bool = True) -> bool:
    """Does ``data`` (one step's raw fio JSON) hold the counters this module checks, with every one
    agreeing with fio's headline figures? True makes the step a measurement the plausibility rule
    never leaves out (:mod:`diskq.analyse.plausibility`); output without counters (hand-made, fio
    2.x) is not cross-checked."""
    if not isinstance(data, dict):
        return False
    jobs = data.get("jobs")
    if not isinstance(jobs, list) or not jobs or not _has_counters(data, jobs):
        return False
    version = data.get("fio version")
    if isinstance(version, str) and version.startswith("fio-2"):
        return False
    write = jobs[0].get("write") if isinstance(jobs[0], dict) else None
    if _n(write, "total_ios") is None:
        return False
    return not counter_problems(data, sync=sync)


def _disk_writes(disk_util, device: str) -> float | None:
    """Writes (requests + merges) the kernel counted on ``device`` or the disk it is part of."""
    if not isinstance(disk_util, list):
        return None
    for entry in disk_util:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name:
            continue
        if name == device or (device.startswith(name) and device[len(name) :].lstrip("p").isdigit()):
            ios, merges = _n(entry, "write_ios"), _n(entry, "write_merges")
            if ios is not None:
                return ios + (merges or 0.0)
    return None


def _int_option(options: dict, name: str, default: int) -> int:
    v = options.get(name)
    return int(v) if isinstance(v, str) and v.isascii() and v.isdigit() and len(v) < 6 and int(v) > 0 else default


def _jobname(job) -> str | None:
    name = job.get("jobname") if isinstance(job, dict) else None
    return name if isinstance(name, str) else None


_SIZES = {"4k": 4096, "4K": 4096, "4096": 4096, "4ki": 4096, "4KiB": 4096, "4kib": 4096}


def _bs(options: dict) -> int | None:
    """The block size of a job in bytes (the sweep's 4 KiB, or a size profile step's), None when
    its ``bs`` is absent or not one plain size."""
    from diskq.bench.sizes import parse_bs

    v = options.get("bs")
    if not isinstance(v, str):
        return None
    return _SIZES.get(v) or parse_bs(v)


def _time_problems(
    job: dict, write, ios: float, clat, slat, per_entry: int, where: str, depth: int
) -> list[tuple[str, str]]:
    out = []
    runtime = _n(write, "runtime")
    job_runtime = _n(job, "job_runtime")
    if (
        runtime
        and job_runtime is not None
        and not (0.5 * per_entry * runtime - 10 <= job_runtime <= 1.05 * per_entry * runtime + 10)
    ):
        out.append(
            (
                f"{where}.job_runtime",
                f"{job_runtime:.0f} ms of job time is not {per_entry} job(s) running {runtime:.0f} ms",
            )
        )
    elapsed = _n(job, "elapsed")
    if runtime and elapsed is not None and elapsed > 0 and elapsed * 1000 + 1000 < runtime:
        out.append((f"{where}.elapsed", f"{elapsed:.0f} s of wall clock cannot hold a {runtime:.0f} ms step"))
    busy_ns = (_n(clat, "mean") or 0.0) + (_n(slat, "mean") or 0.0)
    time_ms = job_runtime if job_runtime else (runtime * per_entry if runtime else None)
    if depth == 1 and time_ms and busy_ns and ios * busy_ns / 1e6 > 1.1 * time_ms + 10:
        out.append(
            (
                f"{where}.write.total_ios",
                f"{ios:.0f} I/Os of {busy_ns / 1000:g} us each need "
                f"{ios * busy_ns / 1e9:.1f} s, the jobs ran {time_ms / 1000:.1f} s",
            )
        )
    return out
