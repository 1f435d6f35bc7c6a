"""Synthetic sustained-write measurements with a known shape, for the database and site tests:
a level, a few per cent of noise and, where asked, a cliff, every figure agreeing with the samples
and the fio JSON behind them. Nothing here is real data."""

from __future__ import annotations

import random

SUSTAINED_OPTIONS = {
    "fdatasync": {
        "rw": "write",
        "bs": "128k",
        "iodepth": "1",
        "direct": "1",
        "fdatasync": "1",
        "ioengine": "psync",
        "log_avg_msec": "1000",
    },
    "sequential": {
        "rw": "write",
        "bs": "1M",
        "iodepth": "32",
        "direct": "1",
        "ioengine": "libaio",
        "log_avg_msec": "1000",
    },
}


def sustained_measurement(
    variant: str = "sequential",
    *,
    seconds: int = 60,
    cliff_at: int | None = 40,
    before_bw: float = 1.8e9,
    after_bw: float = 4.5e8,
    write_cache: str = "on",
    cache_mechanism: str | None = "nvme",
    interrupted: bool = False,
    seed: int = 0,
) -> dict:
    """One sustained-write measurement (JSON-ready dict of :class:`diskq.result.Sustained`) with a
    known shape: ``before_bw`` bytes per second, a few per cent of noise, and from sample
    ``cliff_at`` on (None: never) ``after_bw``; a time budget of ``seconds``, one sample a second.
    Every figure agrees with the samples and with the fio JSON behind them, as validation
    recomputes them: bytes written are whole writes and the samples' sum (fio's KiB/s log values
    times 1024), IOPS and throughput are fio's, the options are the variant's. The cliff is what
    the analysis finds in the samples (:func:`diskq.analyse.cliff.find_cliff`), as validation
    recomputes it; where that module is not installed, the one built in: where the drop starts,
    the levels before and after, how far it fell."""
    rng = random.Random(seed)
    options = {**SUSTAINED_OPTIONS[variant], "runtime": str(seconds)}
    block = 128 * 1024 if variant == "fdatasync" else 1024 * 1024
    level = [before_bw if cliff_at is None or i < cliff_at else after_bw for i in range(seconds)]
    samples = [float(round(v * rng.uniform(0.97, 1.03) / 1024) * 1024) for v in level]
    samples[-1] -= sum(samples) % block  # whole writes: both are multiples of 1 KiB
    written = int(sum(samples))
    ios = written // block
    runtime_ms = seconds * 1000
    iops = ios * 1000 / runtime_ms
    bw = written * 1000 / runtime_ms
    fio = {
        "fio version": "fio-3.33",
        "global options": {"name": "diskq-sustained", **options},
        "jobs": [
            {
                "jobname": "diskq-sustained",
                "error": 0,
                "job options": {},
                "write": {
                    "io_bytes": written,
                    "io_kbytes": written // 1024,
                    "bw_bytes": round(bw),
                    "iops": iops,
                    "runtime": runtime_ms,
                    "total_ios": ios,
                },
            }
        ],
    }
    cliff: dict = {"found": False, "reasons": ["synthetic: no drop built in"]}
    try:
        from diskq.analyse.cliff import find_cliff
    except ImportError:
        find_cliff = None
    if find_cliff is not None:
        cliff = find_cliff(samples, 1000).model_dump(mode="json")
    elif cliff_at is not None and cliff_at < seconds:
        before = sorted(samples[:cliff_at])[len(samples[:cliff_at]) // 2]
        after = sorted(samples[cliff_at:])[len(samples[cliff_at:]) // 2]
        cliff = {
            "found": True,
            "at_s": float(cliff_at),
            "at_bytes": int(sum(samples[:cliff_at])),
            "before_bw_bytes": before,
            "after_bw_bytes": after,
            "drop_pct": round(100 * (1 - after / before), 1),
            "reasons": ["synthetic: a drop built in"],
        }
    return {
        "method": {"id": "diskq-sustained-write", "version": 1, "fio_params": options},
        "variant": variant,
        "write_cache": write_cache,
        "cache_mechanism": cache_mechanism,
        "block_size": block,
        "iodepth": int(options["iodepth"]),
        "budget_s": seconds,
        "written_bytes": written,
        "runtime_ms": runtime_ms,
        "iops": iops,
        "bw_bytes": bw,
        "sample_interval_ms": 1000,
        "bw_samples": samples,
        "cliff": cliff,
        "interrupted": interrupted,
        "fio": fio,
    }


def sustained_pair(
    *, seconds: int = 60, cliff_at: int | None = 40, sync_seconds: int = 30, seed: int = 0, **kw
) -> list[dict]:
    """What ``diskq bench --profile sustained`` writes when its fdatasync variant finds no cliff:
    that write (about 52 MB/s throughout) and then the sequential one
    (:func:`sustained_measurement` with ``kw``)."""
    cache = {k: kw[k] for k in ("write_cache", "cache_mechanism") if k in kw}
    return [
        sustained_measurement(
            "fdatasync", seconds=sync_seconds, cliff_at=None, before_bw=5.2e7, seed=seed + 100, **cache
        ),
        sustained_measurement("sequential", seconds=seconds, cliff_at=cliff_at, seed=seed, **kw),
    ]
