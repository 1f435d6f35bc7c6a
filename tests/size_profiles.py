"""Block-size profiles for the tests of what consumes them (verdicts, database, lookup, site).

Two sources, both real fio output parsed by diskq's own fio parser:

* :func:`recorded_profile`: the steps recorded on a loop device (``tests/fixtures/fio_json/sizes``,
  see SOURCES.md there), cache "on" (write back) or "off" (write through, the kernel's knob);
* :func:`measure_profile`: fio run now, one short step per size, on a device or file the test made.
"""

from __future__ import annotations

import json
from pathlib import Path

from diskq import proc
from diskq.bench import fio
from diskq.result import ProfileMethod, SizePoint, SizeProfile

RECORDED = Path(__file__).parent / "fixtures" / "fio_json" / "sizes"
SIZES = (512, 4096, 8192, 16384, 65536, 131072, 1048576)


def size_point(data: dict, block_size: int, *, interrupted: bool = False) -> SizePoint:
    """One :class:`SizePoint` from fio's JSON of a 1-job step, parsed like a sweep point."""
    p = fio.point_from_json(data, 1, interrupted=interrupted)
    return SizePoint(block_size=block_size, **p.model_dump(exclude={"numjobs"}))


def method(opts: dict[str, str], version: int = 1) -> ProfileMethod:
    """The profile's method: the fio options of its steps, but the block size."""
    params = {k: v for k, v in opts.items() if k != "bs"}
    return ProfileMethod(id="diskq-size-profile", version=version, fio_params=params,
                         runtime_s=float(opts["runtime"]))


#: the options the recorded steps ran with (SOURCES.md), but the block size
RECORDED_OPTIONS = fio.base_options(runtime_s=3, region_bytes=128 * 1024 * 1024, steady=fio.NAVIGATION)


def recorded(cache: str, block_size: int) -> dict:
    return json.loads((RECORDED / f"loop-cache-{cache}-bs{block_size}.json").read_text())


def recorded_profile(cache: str = "on", sizes=SIZES, *, version: int = 1) -> SizeProfile:
    """The recorded loop-device profile at ``cache`` ("on" or "off"), the given sizes only."""
    return SizeProfile(method=method(RECORDED_OPTIONS, version=version),
                       points=[size_point(recorded(cache, bs), bs) for bs in sizes])


def measure_profile(target: str, sizes=(4096, 8192, 131072), *, runtime_s: int = 1) -> SizeProfile:
    """Run fio now on ``target`` (a loop device or file the test made): one step per size."""
    opts = fio.base_options(runtime_s=runtime_s, region_bytes=16 * 1024 * 1024, steady=None)
    points = []
    for bs in sizes:
        done = proc.run(fio.command(target, 1, {**opts, "bs": str(bs)}), timeout=60)
        assert done.returncode == 0, done.stderr
        points.append(size_point(fio.extract_json(done.stdout), bs))
    return SizeProfile(method=method(opts), points=points)
