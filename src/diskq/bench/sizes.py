"""The block-size profile (``diskq bench --profile sizes``): write+fdatasync at each block size.

The sweep measures BlueStore's 4 KiB commits; other workloads commit other sizes (etcd's own
disk check writes 2.3 KB or 8 000 bytes per fdatasync, PostgreSQL's WAL 8 KiB pages, BlueStore's
deferred writes up to 64 KiB, ZFS SLOG users test 512 B to 8 MiB). The profile is one fio step
per size, each the sweep's 1-job answer step with another ``--bs``::

    fio --filename=/dev/X --name=diskq-sizes --ioengine=psync --direct=1 --fdatasync=1 \
        --iodepth=1 --rw=write --bs=8k --time_based --ramp_time=1 --runtime=7 \
        --size=1073741824 --group_reporting --numjobs=1 --output-format=json

1 job, iodepth 1, sequential writes in one region (the target's first GiB at most), each step a
fixed window after a 1 s ramp that fio leaves out of its figures: the window of the sweep's answer
steps (:data:`diskq.bench.windows.FIXED_ANSWER`, 7 s), capped by ``--runtime``; ``--full-steps`` measures
``--runtime`` at every size. Seven sizes take 56 s of device time. 512 B is measured only where the
device's logical block size is 512 (a direct write below it fails). Method ``diskq-size-profile``
version 2; version 1 ended each step with fio's steady-state detector (5 % over 5 s after a 2 s
ramp, ``--runtime`` as the cap) and its documents stay valid, never compared with version 2. fio's
JSON is parsed by :func:`diskq.bench.fiojson.point_from_json`, like every sweep step.
"""

from __future__ import annotations

import re

from diskq.bench import deadline, fio, fiojson, windows
from diskq.result import Point, ProfileMethod, SizePoint

METHOD_ID = "diskq-size-profile"
METHOD_VERSION = 2
JOB_NAME = "diskq-sizes"
KiB = 1024
#: every size the profile may measure, smallest first
SIZES = (512, 4 * KiB, 8 * KiB, 16 * KiB, 64 * KiB, 128 * KiB, 1024 * KiB)
#: the window of each step with short steps (the default): the sweep's answer window
WINDOW = windows.FIXED_ANSWER


def block_sizes(logical_block_size: int | None, region_bytes: int) -> tuple[list[int], list[str]]:
    """The sizes to measure on a device, and a note for each size left out.

    512 B needs a logical block size of 512 (direct I/O below the logical block size fails with
    EINVAL; an unknown size is not assumed to allow it); a size larger than the region a step
    writes in is left out too.

    >>> block_sizes(512, 1 << 30)[0]
    [512, 4096, 8192, 16384, 65536, 131072, 1048576]
    >>> block_sizes(4096, 1 << 30)
    ([4096, 8192, 16384, 65536, 131072, 1048576], ['512 B left out: the logical block size is 4096 B'])
    >>> block_sizes(None, 1 << 30)[1]
    ['512 B left out: the logical block size is not known']
    """
    out, notes = [], []
    for size in SIZES:
        if size < 4 * KiB and logical_block_size != size:
            why = "not known" if logical_block_size is None else f"{logical_block_size} B"
            notes.append(f"{size} B left out: the logical block size is {why}")
        elif size > region_bytes:
            notes.append(f"{bs_text(size)} left out: larger than the {region_bytes} B region the steps write in")
        else:
            out.append(size)
    return out, notes


def bs_text(size: int) -> str:
    """fio's ``--bs`` value for a size, in fio's binary units.

    >>> [bs_text(s) for s in SIZES]
    ['512', '4k', '8k', '16k', '64k', '128k', '1m']
    """
    if size % (1024 * KiB) == 0:
        return f"{size // (1024 * KiB)}m"
    if size % KiB == 0:
        return f"{size // KiB}k"
    return str(size)


_BS = re.compile(r"^\s*(\d{1,12})\s*(k|ki|kib|m|mi|mib)?\s*$", re.I)


def parse_bs(text: object) -> int | None:
    """Bytes in a ``--bs`` value as fio prints it among a job's options (binary units, as fio's
    default ``kb_base=1024`` reads them); None for anything else (ranges, lists, junk).

    >>> parse_bs("8k"), parse_bs("1m"), parse_bs("512"), parse_bs("4KiB"), parse_bs("4k-8k")
    (8192, 1048576, 512, 4096, None)
    """
    if not isinstance(text, str):
        return None
    m = _BS.match(text)
    if not m:
        return None
    unit = (m.group(2) or "").lower()[:1]
    return int(m.group(1)) * {"": 1, "k": KiB, "m": KiB * KiB}[unit]


def window(*, runtime_s: float, short_steps: bool = True) -> windows.Window:
    """The fixed window of every step: :data:`WINDOW` capped by ``--runtime``, or ``--runtime``
    itself with ``--full-steps`` (``short_steps=False``); a 1 s ramp before it either way.

    >>> window(runtime_s=20).describe(), window(runtime_s=3).describe()
    ('7 s after a 1 s ramp', '3 s after a 1 s ramp')
    >>> window(runtime_s=20, short_steps=False).device_s
    21
    """
    if short_steps:
        return WINDOW.capped(runtime_s)
    return windows.Window(max(1, int(runtime_s)), windows.RAMP_S)


def options(*, runtime_s: float, region_bytes: int, short_steps: bool = True) -> dict[str, str]:
    """fio's options common to every step of the profile (all but ``filename`` and ``bs``), in
    command-line order: the document's ``method.fio_params``.

    >>> opts = options(runtime_s=20, region_bytes=1 << 30)
    >>> opts["ramp_time"], opts["runtime"], "ss" in opts, "bs" in opts
    ('1', '7', False, False)
    """
    opts = fio.window_options(window(runtime_s=runtime_s, short_steps=short_steps), region_bytes=region_bytes)
    opts["name"] = JOB_NAME
    del opts["bs"]
    opts.pop("offset_increment", None)  # one job: one region, from the start of the target
    return opts


def method(common: dict[str, str]) -> ProfileMethod:
    return ProfileMethod(
        id=METHOD_ID, version=METHOD_VERSION, fio_params=dict(common), runtime_s=float(common["runtime"])
    )


def step_options(common: dict[str, str], size: int) -> dict[str, str]:
    """The options of the step at ``size``: the common ones with ``bs`` in the sweep's place."""
    out: dict[str, str] = {}
    for key, value in common.items():
        out[key] = value
        if key == "rw":
            out["bs"] = bs_text(size)
    out.setdefault("bs", bs_text(size))
    return out


def size_point(point: Point, size: int) -> SizePoint:
    """The :class:`SizePoint` of a parsed 1-job step."""
    return SizePoint(
        block_size=size,
        iops=point.iops,
        bw_bytes=point.bw_bytes,
        total_ios=point.total_ios,
        runtime_ms=point.runtime_ms,
        lat_us=point.lat_us,
        sync_lat_us=point.sync_lat_us,
        steady_state=point.steady_state,
        interrupted=point.interrupted,
        fio=point.fio,
    )


def point_from_json(data: dict, size: int, *, interrupted: bool = False) -> SizePoint:
    """One :class:`SizePoint` from fio's JSON of one step (see :func:`diskq.bench.fiojson.point_from_json`
    for what it refuses). A step at 8 KiB (fio 3.33 on a loop device, trimmed)::

        {"fio version": "fio-3.33",
         "jobs": [{"jobname": "diskq-sizes", "error": 0, "job options": {"bs": "8k", ...},
                   "write": {"io_bytes": 172212224, "bw_bytes": 24598874, "iops": 3002.792,
                             "runtime": 7001, "total_ios": 21022, "clat_ns": {...}},
                   "sync": {"lat_ns": {"mean": 210311.2, ...}},
                   "steadystate": {"ss": "iops:5.000000%", "attained": 1}}]}
    """
    return size_point(fiojson.point_from_json(data, 1, interrupted=interrupted), size)


def run_step(filename: str, size: int, common: dict[str, str], *, clock: deadline.Clock | None = None) -> SizePoint:
    """Run the step at ``size`` and parse it, like :func:`diskq.bench.fio.run_step` (under the
    deadline of ``clock``): an interruption keeps fio's partial figures as ``exc.partial`` (a
    :class:`SizePoint`, marked interrupted); a step ended by something else raises
    :class:`~diskq.errors.StepCutShort` with its point, one past its deadline
    :class:`~diskq.errors.StepOverdue`."""
    try:
        point = fio.run_step(
            filename, 1, step_options(common, size), clock=clock, label=f"the size-profile step at {bs_text(size)}"
        )
    except BaseException as exc:
        partial = getattr(exc, "partial", None)
        if isinstance(partial, Point):
            exc.partial = size_point(partial, size)
        raise
    return size_point(point, size)
