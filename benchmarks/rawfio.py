"""fio run by hand, the way people run the community method without diskq.

The command is the one the community Ceph WAL/DB table was made with, plus
``--output-format=json`` so the figures can be read back::

    fio --filename=/dev/X --direct=1 --fdatasync=1 --iodepth=1 --runtime=20 --time_based \
        --rw=write --bs=4k --group_reporting --name=ceph-iops --numjobs=N

Parsing here is independent of diskq's own parser on purpose: the fidelity benchmark compares
diskq's figures with what fio printed, read by separate code.
"""

from __future__ import annotations

import glob
import json
import os
import time
from dataclasses import dataclass

from benchmarks import child

COMMUNITY_OPTIONS = {
    "direct": "1",
    "fdatasync": "1",
    "iodepth": "1",
    "time_based": "1",
    "rw": "write",
    "bs": "4k",
    "group_reporting": "1",
    "name": "ceph-iops",
}


@dataclass(frozen=True)
class Step:
    """One fio run: ``numjobs`` writers, their summed IOPS and fio's own runtime."""

    numjobs: int
    iops: float
    runtime_s: float
    wall_s: float


def command(filename: str, numjobs: int, options: dict[str, str]) -> list[str]:
    """fio argv: ``--key=value`` for each option (bare ``--time_based``), then numjobs and JSON.

    >>> command("/dev/loop9", 2, {"runtime": "20", "time_based": "1"})
    ['fio', '--filename=/dev/loop9', '--runtime=20', '--time_based', '--numjobs=2', '--output-format=json']
    """
    argv = ["fio", f"--filename={filename}"]
    for key, value in options.items():
        argv.append(f"--{key}" if key == "time_based" and value == "1" else f"--{key}={value}")
    return argv + [f"--numjobs={numjobs}", "--output-format=json"]


def community_options(runtime_s: float) -> dict[str, str]:
    """The community method's options with the given step length."""
    return {**COMMUNITY_OPTIONS, "runtime": f"{runtime_s:g}"}


def summarise(text: str) -> tuple[float, float]:
    """(IOPS summed over all job entries, the longest write runtime in seconds) from fio's JSON
    output. fio may print ``note:`` lines before the JSON object; they are skipped."""
    start = text.find("{")
    if start < 0:
        raise ValueError("fio printed no JSON")
    data, _ = json.JSONDecoder().raw_decode(text[start:])
    jobs = data.get("jobs") or []
    if not jobs:
        raise ValueError("fio's JSON has no jobs")
    for job in jobs:
        if job.get("error"):
            raise ValueError(f"fio job {job.get('jobname')} failed with error {job['error']}")
    iops = sum(float(j["write"]["iops"]) for j in jobs)
    runtime_ms = max(int(j["write"]["runtime"]) for j in jobs)
    return iops, runtime_ms / 1000.0


def run(filename: str, numjobs: int, options: dict[str, str]) -> Step:
    """Run fio once and summarise it."""
    started = time.monotonic()
    done = child.run(command(filename, numjobs, options))
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise RuntimeError(f"fio exited with {done.returncode}: {done.stderr.strip()[-300:]}")
    iops, runtime_s = summarise(done.stdout)
    return Step(numjobs=numjobs, iops=iops, runtime_s=runtime_s, wall_s=wall)


def run_with_iops_log(filename: str, numjobs: int, options: dict[str, str], prefix: str) -> tuple[str, dict[str, str]]:
    """Run fio once with a one-second IOPS log per job (``--write_iops_log=PREFIX
    --log_avg_msec=1000``): fio's output and each job's log, by file name; the log files are
    removed once read."""
    done = child.run(command(filename, numjobs, {**options, "write_iops_log": prefix, "log_avg_msec": "1000"}))
    if done.returncode != 0:
        raise RuntimeError(f"fio exited with {done.returncode}: {done.stderr.strip()[-300:]}")
    logs = {}
    for path in sorted(glob.glob(prefix + "_iops.*.log")):
        with open(path) as f:
            logs[os.path.basename(path)] = f.read()
        os.unlink(path)
    return done.stdout, logs
