"""Helpers for the submission tests: real fio runs, result documents built from them, SSH keys.

No tests here. fio runs once per test session (two 1-second steps on a temp file) and is cached,
so hypothesis-driven tests can reuse the same real data.
"""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from diskq.result import Device, Latency, Method, Peak, Point, ResultDocument, Run

HAVE_FIO = shutil.which("fio") is not None
HAVE_SSH_KEYGEN = shutil.which("ssh-keygen") is not None

COMMUNITY_ARGS = [
    "--direct=1",
    "--fdatasync=1",
    "--iodepth=1",
    "--runtime=1",
    "--time_based",
    "--rw=write",
    "--bs=4k",
    "--group_reporting",
    "--name=ceph-iops",
    "--output-format=json",
]


def session_dir(prefix: str) -> Path:
    """A temporary directory for what a test module makes once and caches (keys, signed files),
    removed when the test process ends: cached helpers cannot use function-scoped fixtures."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    return work


@functools.cache
def _fio_runs_cached() -> str:
    work = Path(tempfile.mkdtemp(prefix="diskq-test-fio-"))
    target = work / "target.img"
    runs = {}
    try:
        for numjobs in (1, 2):
            out = subprocess.run(
                ["fio", f"--filename={target}", "--size=16M", *COMMUNITY_ARGS, f"--numjobs={numjobs}"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            runs[numjobs] = json.loads(out[out.index("{") :])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return json.dumps(runs)


@functools.cache
def _fio_nosync_cached() -> str:
    work = Path(tempfile.mkdtemp(prefix="diskq-test-fio-"))
    try:
        args = [a if a != "--fdatasync=1" else "--fdatasync=0" for a in COMMUNITY_ARGS]
        out = subprocess.run(
            ["fio", f"--filename={work / 'target.img'}", "--size=16M", *args, "--numjobs=1"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out[out.index("{") :]


def fio_nosync_run() -> dict:
    """Real fio JSON of the flush-check step: the community command at 1 job without fdatasync."""
    return json.loads(_fio_nosync_cached())


def nosync_point_from(data: dict) -> Point:
    """The flush-check step's Point: the write's figures only (fio's fdatasync section is empty)."""
    w = data["jobs"][0]["write"]
    return Point(
        numjobs=1,
        iops=w["iops"],
        bw_bytes=w["bw_bytes"],
        total_ios=w["total_ios"],
        runtime_ms=w["runtime"],
        lat_us=_latency(w["clat_ns"]),
        sync_lat_us=None,
        fio=data,
    )


def fio_runs() -> dict[int, dict]:
    """Real fio JSON for numjobs 1 and 2 of the community command (a fresh copy each call)."""
    return {int(k): v for k, v in json.loads(_fio_runs_cached()).items()}


def drive_fio_runs() -> dict[int, dict]:
    """:func:`fio_runs` as fio prints them for a drive whose disk statistics it does not report:
    without ``disk_util``. The runs write a file in the temp directory, whose ``disk_util`` names
    this machine's own disk (``vda`` on a virtual machine); a document that claims a drive while
    fio's own output names a virtual disk is, rightly, a measurement of the host
    (:mod:`diskq.analyse.rawtarget`)."""
    runs = fio_runs()
    for data in runs.values():
        data.pop("disk_util", None)
    return runs


def _latency(section: dict) -> Latency:
    pct = section["percentile"]
    return Latency(
        mean=section["mean"] / 1000,
        p50=pct["50.000000"] / 1000,
        p99=pct["99.000000"] / 1000,
        p999=pct["99.900000"] / 1000,
        max=section["max"] / 1000,
    )


def point_from(data: dict) -> Point:
    """A Point read straight from group-reported fio JSON (independent of diskq's parsers):
    every latency figure fio reports for the write and for the fdatasync."""
    job = data["jobs"][0]
    w = job["write"]
    return Point(
        numjobs=int(job["job options"].get("numjobs", data.get("global options", {}).get("numjobs", 1))),
        iops=w["iops"],
        bw_bytes=w["bw_bytes"],
        total_ios=w["total_ios"],
        runtime_ms=w["runtime"],
        lat_us=_latency(w["clat_ns"]),
        sync_lat_us=_latency(job["sync"]["lat_ns"]),
        fio=data,
    )


def result_from(runs: dict[int, dict], *, method_id: str = "community-fio-ceph-iops") -> ResultDocument:
    points = [point_from(runs[k]) for k in sorted(runs)]
    best = max(points, key=lambda p: p.iops)
    version = runs[min(runs)]["fio version"]
    return ResultDocument(
        device=Device(model="Samsung SSD 860 PRO 512GB", protocol="ata", media="ssd", serial_hash="ab" * 12),
        # the recorded runs write one shared region with no ramp: version 2 of diskq's method, or the community's
        method=Method(
            id=method_id,
            version=2 if method_id == "diskq-fdatasync-sweep" else 1,
            fio_version=version,
            search="manual",
            runtime_s=1,
        ),
        runs=[Run(write_cache="unknown", points=points, peak=Peak(numjobs=best.numjobs, iops=best.iops))],
    )


def keygen(directory: Path, kind: str = "ed25519", name: str | None = None) -> Path:
    """A new passphrase-less SSH key pair; returns the private key path."""
    key = Path(directory) / (name or f"id_{kind}")
    extra = ["-b", "3072"] if kind == "rsa" else []
    subprocess.run(["ssh-keygen", "-q", "-t", kind, *extra, "-N", "", "-C", "test", "-f", str(key)], check=True)
    return key


def public_line(key: Path) -> str:
    return " ".join(Path(f"{key}.pub").read_text().split()[:2])


def allowed_signers(path: Path, principal: str, key: Path, options: str = "") -> Path:
    path.write_text(f"{principal} {options + ' ' if options else ''}{public_line(key)}\n")
    return path
