"""Block-size profiles for the tests of what consumes them (verdicts, database, lookup, site).

Two sources, both real fio output parsed by diskq's own fio parser:

* :func:`recorded_profile`: the steps recorded on a loop device, cache "on" (write back) or "off"
  (write through, the kernel's knob): method version 1 (steps ended by fio's steady-state detector,
  ``tests/fixtures/fio_json/sizes``) or version 2 (fixed windows after a 1 s ramp,
  ``tests/fixtures/fio_json/sizes-v2``; SOURCES.md there);
* :func:`measure_profile`: fio run now, one short step per size, on a device or file the test made.
"""

from __future__ import annotations

import json
from pathlib import Path

from diskq import proc
from diskq.bench import fio, fiojson, windows
from diskq.bench import sizes as profile_sizes
from diskq.result import ProfileMethod, SizePoint, SizeProfile

RECORDED = Path(__file__).parent / "fixtures" / "fio_json" / "sizes"
RECORDED_V2 = Path(__file__).parent / "fixtures" / "fio_json" / "sizes-v2"
SIZES = (512, 4096, 8192, 16384, 65536, 131072, 1048576)


def size_point(data: dict, block_size: int, *, interrupted: bool = False) -> SizePoint:
    """One :class:`SizePoint` from fio's JSON of a 1-job step, parsed like a sweep point."""
    p = fiojson.point_from_json(data, 1, interrupted=interrupted)
    return SizePoint(block_size=block_size, **p.model_dump(exclude={"numjobs"}))


def method(opts: dict[str, str], version: int = 1) -> ProfileMethod:
    """The profile's method: the fio options of its steps, but the block size."""
    params = {k: v for k, v in opts.items() if k != "bs"}
    return ProfileMethod(id="diskq-size-profile", version=version, fio_params=params, runtime_s=float(opts["runtime"]))


#: the options the recorded steps ran with (SOURCES.md), but the block size: version 1, version 2
RECORDED_OPTIONS = fio.base_options(runtime_s=3, region_bytes=128 * 1024 * 1024, steady=windows.NAVIGATION)
RECORDED_OPTIONS_V2 = profile_sizes.options(runtime_s=3, region_bytes=128 * 1024 * 1024)


def recorded(cache: str, block_size: int, *, version: int = 1) -> dict:
    """fio's JSON of one recorded step: method version 2's fixed window, else version 1's."""
    folder = RECORDED_V2 if version == 2 else RECORDED
    return json.loads((folder / f"loop-cache-{cache}-bs{block_size}.json").read_text())


def recorded_profile(cache: str = "on", sizes=SIZES, *, version: int = 1) -> SizeProfile:
    """The recorded loop-device profile at ``cache`` ("on" or "off"), the given sizes only:
    the steps of method ``version`` 2 when it is 2, else version 1's steps labelled ``version``."""
    opts = RECORDED_OPTIONS_V2 if version == 2 else RECORDED_OPTIONS
    return SizeProfile(
        method=method(opts, version=version),
        points=[size_point(recorded(cache, bs, version=version), bs) for bs in sizes],
    )


def measure_profile(target: str, sizes=(4096, 8192, 131072), *, runtime_s: int = 1) -> SizeProfile:
    """Run fio now on ``target`` (a loop device or file the test made): one step per size, with
    the options ``diskq bench --profile sizes`` gives them (method version 2)."""
    opts = profile_sizes.options(runtime_s=runtime_s, region_bytes=16 * 1024 * 1024)
    points = []
    for bs in sizes:
        done = proc.run(fio.command(target, 1, profile_sizes.step_options(opts, bs)), timeout=60)
        assert done.returncode == 0, done.stderr
        points.append(size_point(fiojson.extract_json(done.stdout), bs))
    return SizeProfile(method=method(opts, version=profile_sizes.METHOD_VERSION), points=points)
