"""What fio's own output says about the target, whatever the document's identity and notes say.

The identity (path, model) and the notes of a result are text a submitter can edit; the raw fio
JSON of every step must stay consistent with the figures (:mod:`diskq.submission.figures` and
:mod:`diskq.submission.counters` check that), and it carries two witnesses of the target:

* the names fio used: its ``filename`` option and the kernel's per-device counters
  (``disk_util[].name``), e.g. ``/dev/ram0`` and ``ram0`` for a RAM disk, ``loop3`` for a loop
  device. A name of a memory-backed or virtual device is evidence whatever the identity says;
* the context switches of the jobs (``ctx``): a drive completes a write by interrupt, so a job
  that waits for each write (iodepth 1, and each fdatasync) sleeps about once per write or more;
  memory completes the write in the caller's context, and the job hardly ever sleeps.

From a 1-job step on a file on tmpfs (fio 3.33, trimmed; ``tests/fixtures/bench``)::

    "global options": {"filename": "/dev/shm/diskq-mem-test.bin", ...},
    "jobs": [{"ctx": 702, "write": {"total_ios": 186396, "clat_ns": {"mean": 7006.1, ...}}, ...}]

gives 0.0038 context switches per write. The threshold and its evidence are
``[memory_backed]`` in ``criteria.toml``. A latency floor does not separate memory from drives
in the recorded outputs (the fastest write a SATA SSD completed, 2.7 us, is close to a RAM disk's
1.8 us), so none is used.
"""

from __future__ import annotations

import os
import re

from diskq.analyse import criteria

#: kernel names of devices whose writes land in memory
_MEMORY_NAMES = [
    (re.compile(r"^ram\d+$"), "a Linux RAM disk"),
    (re.compile(r"^zram\d+$"), "a Linux zram device (compressed RAM)"),
    (re.compile(r"^pmem\d+"), "a persistent-memory namespace"),
    (re.compile(r"^nullb\d+$"), "the kernel's null block device"),
]


def _n(d, key) -> float | None:
    v = d.get(key) if isinstance(d, dict) else None
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 else None


def _steps(doc):
    """Every fdatasync step of every sweep that carries fio's JSON, as (numjobs, fio)."""
    for run in doc.runs:
        for p in run.points:
            if isinstance(p.fio, dict):
                yield p.numjobs, p.fio


def device_names(fio: dict) -> list[str]:
    """Kernel names of the devices fio's JSON names: its ``filename`` option when that is a
    ``/dev`` path, and every ``disk_util`` entry."""
    out = []
    sections = [fio.get("global options")]
    jobs = fio.get("jobs")
    if isinstance(jobs, list) and jobs and isinstance(jobs[0], dict):
        sections.append(jobs[0].get("job options"))
    for section in sections:
        name = section.get("filename") if isinstance(section, dict) else None
        if isinstance(name, str) and name.startswith("/dev/") and ":" not in name:
            out.append(os.path.basename(name))
    util = fio.get("disk_util")
    for entry in util if isinstance(util, list) else []:
        name = entry.get("name") if isinstance(entry, dict) else None
        if isinstance(name, str) and 0 < len(name) <= 64:
            out.append(name)
    return out


def switches_per_write(fio: dict) -> tuple[float, float] | None:
    """(context switches, writes) summed over the job entries, None when fio did not count both."""
    jobs = fio.get("jobs")
    if not isinstance(jobs, list) or not jobs:
        return None
    ctx = ios = 0.0
    for job in jobs:
        c = _n(job, "ctx")
        w = _n(job.get("write") if isinstance(job, dict) else None, "total_ios")
        if c is None or w is None:
            return None
        ctx, ios = ctx + c, ios + w
    return ctx, ios


def memory_evidence(doc, crit: dict | None = None) -> str | None:
    """Why fio's own output shows ``doc`` measured memory, not a drive; None when it does not."""
    for _numjobs, fio in _steps(doc):
        for name in device_names(fio):
            for pattern, what in _MEMORY_NAMES:
                if pattern.match(name):
                    return f"fio's own output names {name}, {what}"
    crit = crit if crit is not None else criteria.section("memory_backed")
    limit, least = float(crit["max_switches_per_write"]), float(crit["min_writes"])
    for numjobs, fio in _steps(doc):
        counted = switches_per_write(fio)
        if counted is None:
            continue
        ctx, ios = counted
        if ios >= least and ctx < limit * ios:
            return (
                f"fio's own counters: {ctx:.0f} context switches for {ios:.0f} writes at {numjobs} "
                f"{'job' if numjobs == 1 else 'jobs'} ({ctx / ios:.4f} per write, below {limit:g}): the writes "
                "completed without the jobs ever waiting for a device"
            )
    return None


def named_target(doc, patterns) -> str | None:
    """The first device fio's own output names that matches one of ``patterns`` (regex, what),
    as ``"{what} (fio wrote to or counted {name})"``; None when none does."""
    for _, fio in _steps(doc):
        for name in device_names(fio):
            for pattern, what in patterns:
                if pattern.match(name):
                    return f"{what} ({name}, named in fio's own output)"
    return None
