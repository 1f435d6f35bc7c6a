"""Real sustained-write measurements for the database and site tests: fio on a device the test
made, its bandwidth log read back, filled into a :class:`diskq.result.Sustained` as a dict.

A test helper, not the bench's code: the same fio options as the two variants of
``diskq bench --profile sustained`` (128 KiB fdatasync writes at iodepth 1; 1 MiB direct
sequential writes through libaio at iodepth 32), a short time budget and a short log interval so
that a test of a few seconds still has a series of samples.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

VARIANTS = {
    "fdatasync": {"bs": "128k", "iodepth": "1", "ioengine": "psync", "fdatasync": "1"},
    "sequential": {"bs": "1M", "iodepth": "32", "ioengine": "libaio"},
}
BLOCK = {"fdatasync": 128 * 1024, "sequential": 1024 * 1024}


def read_bw_log(text: str) -> list[float]:
    """fio's bandwidth log (``time ms, KiB/s, direction, block size, offset``) as bytes per second."""
    return [float(int(line.split(",")[1]) * 1024) for line in text.splitlines() if line.strip()]


def write_cache(dev: str) -> str:
    text = Path("/sys/block", Path(dev).name, "queue", "write_cache").read_text().strip()
    return "on" if text == "write back" else "off"


def measure(dev: str, variant: str, seconds: int, workdir: Path, *, interval_ms: int = 250) -> dict:
    """Write ``seconds`` to ``dev`` as ``variant``; the measurement as a JSON-ready dict."""
    options = {
        "rw": "write",
        "direct": "1",
        **VARIANTS[variant],
        "time_based": "1",
        "runtime": str(seconds),
        "log_avg_msec": str(interval_ms),
    }
    prefix = workdir / f"bw-{variant}"
    cmd = [
        "fio",
        "--name=diskq-sustained",
        f"--filename={dev}",
        *(f"--{k}={v}" for k, v in options.items()),
        f"--write_bw_log={prefix}",
        "--output-format=json",
    ]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=seconds + 60).stdout
    fio = json.loads(out[out.index("{") :])
    write = fio["jobs"][0]["write"]
    samples = read_bw_log(Path(f"{prefix}_bw.1.log").read_text())
    try:
        from diskq.analyse.cliff import find_cliff
    except ImportError:  # the analysis of the cliff is not installed: the document says nothing of it
        cliff = None
    else:
        cliff = find_cliff(samples, interval_ms).model_dump(mode="json")
    return {
        "method": {"id": "diskq-sustained-write", "version": 1, "fio_params": options},
        "variant": variant,
        "write_cache": write_cache(dev),
        "cache_mechanism": "sysfs",
        "block_size": BLOCK[variant],
        "iodepth": int(VARIANTS[variant]["iodepth"]),
        "budget_s": seconds,
        "written_bytes": write["io_bytes"],
        "runtime_ms": write["runtime"],
        "iops": write["iops"],
        "bw_bytes": write["bw_bytes"],
        "sample_interval_ms": interval_ms,
        "bw_samples": samples,
        "cliff": cliff,
        "fio": fio,
    }
