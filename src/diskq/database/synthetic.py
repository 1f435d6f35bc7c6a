"""N synthetic but valid submissions, for the database tests and the build benchmark.

Every file passes the submission validator: ids derived from the result, files at their
canonical path, fio's JSON behind every measured point and agreeing with it, figures that obey
Little's law and the link speed. The curves follow the Universal Scalability Law with
per-device contention and coherency plus a few per cent of noise per submission, so all three
scaling classes occur. About one in ten submissions is a legacy import (two points, community
method, no raw data), like the rows of the community table; about one ATA/SAS model in eight
acknowledges fdatasync with its cache on almost as fast as plain writes (a failing flush check).

Nothing here is real data: every model name carries ``SYN`` and legacy provenance says
"synthetic". Same arguments -> same files, byte for byte.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

VENDORS = ("Samsung", "Intel", "Micron", "Kioxia", "WDC", "Seagate", "Solidigm", "Crucial", "Toshiba", "Kingston")
JOBS = (1, 2, 4, 8, 16, 32)
RUNTIME_MS = 20_000
#: Highest IOPS per protocol, well inside what the link carries (SATA 6 Gb/s: ~146 000).
CAP = {"ata": 120_000, "scsi": 400_000, "nvme": 1_500_000}
FIO_OPTIONS = {
    "rw": "write",
    "bs": "4k",
    "iodepth": "1",
    "direct": "1",
    "fdatasync": "1",
    "time_based": "1",
    "ramp_time": "1",
    "runtime": "20",
    "name": "diskq",
}


def _catalogue_entry(rng: random.Random, k: int) -> dict:
    vendor = rng.choice(VENDORS)
    protocol = rng.choices(("ata", "nvme", "scsi"), weights=(5, 4, 1))[0]
    media = "hdd" if protocol != "nvme" and rng.random() < 0.1 else "ssd"
    one = min(rng.lognormvariate(7.5, 1.2), 60_000) if media == "ssd" else rng.uniform(40, 160)
    return {
        "model": f"{vendor} SYN{k:05d}{rng.choice('ABCDEFGH')}",
        "vendor": vendor,
        "firmwares": [f"FW{rng.randrange(100, 999)}" for _ in range(rng.choice((1, 1, 2)))],
        "capacity_bytes": rng.choice((240, 480, 960, 1920, 3840, 7680)) * 10**9,
        "protocol": protocol,
        "media": media,
        "one": one,
        "sigma": rng.choice((0.0, 0.02, 0.1, 0.4, 1.2)),
        "kappa": rng.choice((0.0, 0.0, 0.001, 0.01, 0.05)),
        "cache_on_factor": rng.choice((1.0, 0.3, 2.5)),
        "lies": protocol != "nvme" and rng.random() < 0.125,
    }


def _iops(dev: dict, factor: float, n: int, rng: random.Random) -> float:
    x = dev["one"] * factor * n / (1 + dev["sigma"] * (n - 1) + dev["kappa"] * n * (n - 1))
    return round(min(x, CAP[dev["protocol"]] * 0.9) * rng.uniform(0.95, 1.05), 2)


def _fio(
    n: int,
    iops: float,
    bw: float,
    ios: int,
    lat_ns: float,
    sync_ns: float,
    pct: dict,
    sync_pct: dict,
    options: dict = FIO_OPTIONS,
) -> dict:
    return {
        "fio version": "fio-3.33",
        "global options": options,
        "jobs": [
            {
                "jobname": "diskq",
                "error": 0,
                "job options": {"numjobs": str(n)},
                "write": {
                    "iops": iops,
                    "bw_bytes": bw,
                    "total_ios": ios,
                    "runtime": RUNTIME_MS,
                    "clat_ns": {"mean": lat_ns, "percentile": pct},
                },
                "sync": {"lat_ns": {"mean": sync_ns, "percentile": sync_pct}},
            }
        ],
    }


#: The least time a 4 KiB write takes behind a SATA link, with a margin (diskq.analyse.physics).
LINK_WRITE_NS = 7200.0


def _point(n: int, iops: float, *, raw: bool) -> dict:
    if not raw:  # a legacy row: the community table gives IOPS only
        return {"numjobs": n, "iops": iops, "bw_bytes": iops * 4096, "total_ios": 0, "runtime_ms": 0, "lat_us": {}}
    commit_ns = n / iops * 1e9  # Little's law at iodepth 1
    lat_ns, sync_ns = round(commit_ns * 0.3, 1), round(commit_ns * 0.7, 1)
    if n == 1 and lat_ns < LINK_WRITE_NS < commit_ns * 0.6:  # a fast drive: its write still crosses a SATA link
        lat_ns, sync_ns = LINK_WRITE_NS, round(commit_ns - LINK_WRITE_NS, 1)
    pct = {"50.000000": int(lat_ns * 0.9), "99.000000": int(lat_ns * 2.1), "99.900000": int(lat_ns * 3.5)}
    bw, ios = iops * 4096, round(iops * RUNTIME_MS / 1000)
    return {
        "numjobs": n,
        "iops": iops,
        "bw_bytes": bw,
        "total_ios": ios,
        "runtime_ms": RUNTIME_MS,
        "lat_us": {
            "mean": lat_ns / 1000,
            "p50": pct["50.000000"] / 1000,
            "p99": pct["99.000000"] / 1000,
            "p999": pct["99.900000"] / 1000,
        },
        "sync_lat_us": {"mean": sync_ns / 1000, "p99": round(sync_ns * 1.9 / 1000, 3)},
        "fio": _fio(n, iops, bw, ios, lat_ns, sync_ns, pct, {"99.000000": round(sync_ns * 1.9)}),
    }


def _nosync_point(iops: float) -> dict:
    """The flush-check step (1 job, no fdatasync), with its raw fio JSON like every measured step."""
    lat_ns = round(1e9 / iops, 1)
    bw, ios = iops * 4096, round(iops * RUNTIME_MS / 1000)
    return {
        "numjobs": 1,
        "iops": iops,
        "bw_bytes": bw,
        "total_ios": ios,
        "runtime_ms": RUNTIME_MS,
        "lat_us": {"mean": lat_ns / 1000},
        "fio": _fio(1, iops, bw, ios, lat_ns, 0, {}, {}, options={**FIO_OPTIONS, "fdatasync": "0"}),
    }


SIZE_RUNTIME_MS = 7_000
#: the size profile's options (method version 2): the sweep's without bs, a 7 s window after the ramp
SIZE_OPTIONS = {k: v for k, v in FIO_OPTIONS.items() if k not in ("bs", "runtime", "ramp_time")} | {
    "ramp_time": "1",
    "runtime": "7",
}


def _size_point(block_size: int, iops: float) -> dict:
    """One block-size profile step (1 job, ``block_size`` bytes per write + fdatasync), its
    figures read back from its fio JSON by diskq's own parser, so the two always agree."""
    from diskq.bench.fiojson import point_from_json

    commit_ns = 1e9 / iops
    lat_ns, sync_ns = round(commit_ns * 0.3, 1), round(commit_ns * 0.7, 1)
    ios = round(iops * SIZE_RUNTIME_MS / 1000)
    data = {
        "fio version": "fio-3.33",
        "global options": {},
        "jobs": [
            {
                "jobname": "diskq",
                "error": 0,
                "job options": {**SIZE_OPTIONS, "bs": str(block_size), "numjobs": "1"},
                "write": {
                    "iops": iops,
                    "bw_bytes": iops * block_size,
                    "total_ios": ios,
                    "runtime": SIZE_RUNTIME_MS,
                    "clat_ns": {
                        "mean": lat_ns,
                        "percentile": {"50.000000": int(lat_ns * 0.9), "99.000000": int(lat_ns * 2.1)},
                    },
                },
                "sync": {
                    "total_ios": ios,
                    "lat_ns": {
                        "mean": sync_ns,
                        "percentile": {"50.000000": int(sync_ns * 0.9), "99.000000": int(sync_ns * 1.9)},
                    },
                },
            }
        ],
    }
    point = point_from_json(data, 1).model_dump(mode="json", exclude={"numjobs"})
    return {"block_size": block_size, **point}


def size_profile(curve: dict[int, float]) -> dict:
    """A block-size profile (JSON-ready) with exactly the given ``{block size: IOPS}``."""
    return {
        "method": {"id": "diskq-size-profile", "version": 2, "fio_params": SIZE_OPTIONS, "runtime_s": 7},
        "points": [_size_point(bs, float(iops)) for bs, iops in sorted(curve.items())],
    }


def _run(rng: random.Random, dev: dict, state: str, legacy: bool, multi: bool) -> dict:
    factor = dev["cache_on_factor"] if state == "on" else 1.0
    points = [_point(n, _iops(dev, factor, n, rng), raw=not legacy) for n in JOBS]
    if legacy:
        top = max(points, key=lambda p: p["iops"])
        points = [p for p in points if p["numjobs"] == 1 or p is top]
    top = max(points, key=lambda p: p["iops"])
    run = {
        "write_cache": state,
        "cache_mechanism": None if legacy else ("nvme" if dev["protocol"] == "nvme" else "hdparm"),
        "cache_changed": state == "on" and multi,
        "points": points,
        "peak": {"numjobs": top["numjobs"], "iops": top["iops"]},
    }
    if not legacy and state == "on":
        solo = points[0]["iops"]
        nosync = round(min(solo * (1.05 if dev["lies"] else rng.uniform(5, 30)), CAP[dev["protocol"]], 900_000), 2)
        run["nosync"] = _nosync_point(nosync)
    return run


def synthetic_results(n: int, *, seed: int = 0, devices: int | None = None) -> Iterator[tuple[dict, bool]]:
    """``n`` pairs of (result document as a JSON-ready dict, legacy)."""
    rng = random.Random(seed)
    catalogue = [_catalogue_entry(rng, k) for k in range(devices or max(1, n // 20))]
    start = datetime(2024, 1, 1, tzinfo=UTC)
    for i in range(n):
        dev = rng.choice(catalogue)
        legacy = rng.random() < 0.1
        if legacy:
            states = ["off" if dev["protocol"] == "ata" else "unknown"]
        elif dev["protocol"] == "nvme":
            states = ["on"]
        else:
            states = ["off", "on"]
        method = {"id": "community-fio-ceph-iops", "version": 1} if legacy else {"fio_version": "fio-3.33"}
        yield (
            {
                "created": (start + timedelta(minutes=37 * i)).isoformat(),
                "device": {
                    "model": dev["model"],
                    "vendor": dev["vendor"],
                    "firmware": rng.choice(dev["firmwares"]),
                    "capacity_bytes": dev["capacity_bytes"],
                    "protocol": dev["protocol"],
                    "media": dev["media"],
                    "volatile_write_cache": None if legacy else True,
                },
                "method": method,
                "runs": [_run(rng, dev, s, legacy, len(states) > 1) for s in states],
                "notes": [f"synthetic #{i}"],
            },
            legacy,
        )


def result_document(
    model: str,
    curves: dict[str, dict[int, float]],
    *,
    firmware: str | None = "FW1",
    vendor: str | None = None,
    protocol: str = "ata",
    media: str = "ssd",
    legacy: bool = False,
    nosync: dict[str, float] | None = None,
    created: datetime | None = None,
    cache_mechanism: str | None = None,
    volatile_write_cache: bool | None = True,
    sizes: dict[str, dict[int, float]] | None = None,
    sustained: list[dict] | None = None,
) -> dict:
    """One result document (JSON-ready dict) with exactly the given curves: ``{cache state:
    {numjobs: IOPS}}``; ``nosync`` adds a no-fdatasync 1-job step per state for the flush check.
    ``cache_mechanism`` is recorded on every run (``"sysfs"``: the kernel's write_cache knob, as
    ``diskq bench`` does on loop and virtio devices); ``volatile_write_cache`` is what the drive
    reports (legacy documents never say); ``sizes`` adds a block-size profile per state:
    ``{cache state: {block size: IOPS}}``; ``sustained`` is the document's list of sustained-write
    measurements (:func:`sustained_measurement`)."""
    runs = []
    for state, curve in curves.items():
        points = [_point(n, float(iops), raw=not legacy) for n, iops in sorted(curve.items())]
        top = max(points, key=lambda p: p["iops"])
        run = {"write_cache": state, "points": points, "peak": {"numjobs": top["numjobs"], "iops": top["iops"]}}
        if cache_mechanism is not None:
            run["cache_mechanism"] = cache_mechanism
            run["cache_changed"] = state == "off"
        if nosync and state in nosync:
            if legacy:
                run["nosync"] = _point(1, float(nosync[state]), raw=False)
                run["nosync"]["lat_us"] = {"mean": round(1e6 / nosync[state], 3)}
            else:
                run["nosync"] = _nosync_point(float(nosync[state]))
        if sizes and state in sizes:
            run["sizes"] = size_profile(sizes[state])
        runs.append(run)
    return {
        "created": (created or datetime(2025, 1, 1, tzinfo=UTC)).isoformat(),
        "device": {
            "model": model,
            "vendor": vendor,
            "firmware": firmware,
            "protocol": protocol,
            "media": media,
            "capacity_bytes": 480 * 10**9,
            "volatile_write_cache": None if legacy else volatile_write_cache,
        },
        "method": {"id": "community-fio-ceph-iops", "version": 1} if legacy else {"fio_version": "fio-3.33"},
        "runs": runs,
        **({"sustained": sustained} if sustained else {}),
    }


def submission(result: dict, *, legacy: bool = False, contributor: str | None = "Synthetic Contributor"):
    """An unsigned :class:`~diskq.submission.model.Submission` around a result document dict."""
    from diskq.result import ResultDocument
    from diskq.submission.model import Contributor, Provenance
    from diskq.submission.sign import make_submission

    doc = ResultDocument.model_validate(result)
    if legacy:
        return make_submission(
            doc, legacy=True, provenance=Provenance(source="synthetic legacy row", license="CC0-1.0")
        )
    return make_submission(doc, contributor=Contributor(name=contributor) if contributor else None)


def write_submission(root: Path, sub) -> Path:
    """Write ``sub`` at its canonical place under ``root``; returns the path."""
    from diskq.submission.paths import relative_path

    path = Path(root) / relative_path(sub.result.device, sub.id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(sub.model_dump_json(indent=1) + "\n")
    return path


def synthetic_submissions(n: int, *, seed: int = 0, devices: int | None = None):
    """``n`` unsigned :class:`~diskq.submission.model.Submission` objects."""
    for i, (result, legacy) in enumerate(synthetic_results(n, seed=seed, devices=devices)):
        yield submission(result, legacy=legacy, contributor=f"Synthetic Contributor {i % 97}")


def write_synthetic(root: Path, n: int, *, seed: int = 0, devices: int | None = None) -> list[Path]:
    """Write ``n`` submissions as ``root/<vendor>/<model>/<id>.json``; returns the paths."""
    return [write_submission(root, sub) for sub in synthetic_submissions(n, seed=seed, devices=devices)]
