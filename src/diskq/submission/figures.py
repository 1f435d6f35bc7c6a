"""Are a result's figures what its raw fio data says, and are they physically possible?

Every point that carries fio's JSON is recomputed from it (IOPS and bandwidth summed over job
entries, mean latencies weighted by I/O count, percentiles and maxima of the worst job entry as
``diskq bench`` records them: :mod:`diskq.submission.fiojson`) and must match what the point claims: every latency figure of the
write and of the fdatasync, and a figure left null where fio reports it is a disagreement too.
Every point, raw data or not, must also obey:

* bandwidth = IOPS x 4 KiB (each I/O writes one 4 KiB block);
* Little's law at iodepth 1: each job has one I/O in flight, so IOPS <= numjobs / (write latency
  + fdatasync latency), and far below that only if the latencies are wrong;
* the interface: no link carries more 4 KiB writes per second than its bandwidth allows
  (SATA 6 Gb/s with 8b/10b coding moves 600 MB/s, so at most ~146 000 IOPS).

fio's headline figures are in turn checked against the counters it reports beside them (the
kernel's ``disk_util``, the latency histogram, context switches, job time:
:mod:`diskq.submission.counters`), which a forger who scales IOPS and latencies leaves as measured.

The fio JSON is untrusted input: every lookup here is defensive and problems come back as
:class:`Problem` lines, never as exceptions.
"""

from __future__ import annotations

import re

from diskq.result import Device, Point, ResultDocument, SizePoint, SizeProfile
from diskq.submission import methods
from diskq.submission.counters import clock_problem, counter_problems
from diskq.submission.fiojson import read_fio
from diskq.submission.problems import Problem

BLOCK = methods.BLOCK_SIZE
#: No write + fdatasync pair completes in under a microsecond on any device and kernel.
MAX_IOPS_PER_JOB = 1_000_000
#: Little's law tolerance: measured IOPS may exceed numjobs / latency by this factor (rounding,
#: fio's sampling), and may fall short of it by the other factor (only checked when latencies
#: are long enough that per-I/O CPU overhead cannot explain the gap).
LITTLE_OVER = 1.2
LITTLE_UNDER = 3.0
LITTLE_UNDER_MIN_US = 200.0

#: Payload bytes per second a link carries, when the identity does not say its speed.
PROTOCOL_BYTES_PER_S = {
    "ata": 6e9 / 10,  # SATA 6 Gb/s, 8b/10b
    "scsi": 24e9 / 10,  # SAS-4 24 Gb/s, generous
    "nvme": 16 * 32e9 * 128 / 130 / 8,  # PCIe 5.0 x16
}


def _close(a: float, b: float, rel: float, abs_: float) -> bool:
    """Do ``a`` and ``b`` differ by at most ``abs_``, or by at most ``rel`` of the larger? Where a
    difference within ``abs_`` is the usual case, callers test ``-abs_ <= a - b <= abs_`` first."""
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def link_limit(device: Device) -> tuple[float, str] | None:
    """Payload bytes per second the device's link can carry, and how that was decided."""
    speed = device.interface_speed or ""
    m = re.search(r"(\d+(?:\.\d+)?)\s*GT/s.*?x\s*(\d+)", speed, re.I)
    if m:
        gt, lanes = float(m.group(1)), int(m.group(2))
        coding = 128 / 130 if gt >= 8 else 8 / 10
        return gt * 1e9 * lanes * coding / 8, f"PCIe {speed.strip()}"
    m = re.search(r"(\d+(?:\.\d+)?)\s*Gb/s", speed, re.I)
    if m and device.protocol in ("ata", "scsi"):
        return float(m.group(1)) * 1e9 / 10, f"{speed.strip()} link"
    if device.protocol in PROTOCOL_BYTES_PER_S:
        return PROTOCOL_BYTES_PER_S[device.protocol], f"fastest {device.protocol.upper()} link"
    return None


_LATENCY_FIELDS = ("mean", "p50", "p99", "p999", "max")


def _latency_problems(name: str, lat, mean: float | None, tail: dict[str, float | None], bad) -> None:
    """Every figure of ``lat`` (a :class:`~diskq.result.Latency`) against fio's: equal within
    0.01 us or 0.1 %."""
    for field, mine, theirs in zip(
        _LATENCY_FIELDS,
        (lat.mean, lat.p50, lat.p99, lat.p999, lat.max),
        (mean, tail["p50"], tail["p99"], tail["p999"], tail["max"]),
        strict=False,
    ):
        if mine is None:
            if theirs is not None:
                bad(f"{name}.{field}", f"is null but fio reports {theirs:g} us")
        elif theirs is None:
            bad(f"{name}.{field}", f"{mine:g} has no counterpart in the fio data")
        elif not (-0.01 <= mine - theirs <= 0.01 or _close(mine, theirs, 1e-3, 0.01)):
            bad(f"{name}.{field}", f"{mine:g} us does not match fio's {theirs:g} us")


def _point_problems(
    p: Point | SizePoint,
    where: str,
    limit: tuple[float, str] | None,
    spec: methods.MethodSpec | None,
    fio_version: str | None,
    *,
    sync: bool,
    block: int = BLOCK,
    size_version: int | None = None,
) -> list[Problem]:
    """The problems of one point; ``limit`` is :func:`link_limit` of the device. A
    :class:`SizePoint` is one job writing ``block`` bytes per I/O, held to the options of its
    profile's method ``size_version``."""
    out: list[Problem] = []
    numjobs = p.numjobs if isinstance(p, Point) else 1

    def bad(field: str, message: str) -> None:
        out.append(Problem("", f"{where}.{field}" if field else where, message))

    # --- raw fio data against the figures
    if p.fio is not None:
        fig, why = read_fio(p.fio)
        if fig is None:
            bad("fio", why or "unreadable fio data")
        else:
            for err in fig.errors:
                bad("fio", err)
            if fio_version and fig.version and fig.version != fio_version:
                bad("fio", f"fio version {fig.version!r:.40} differs from the method's {fio_version!r:.40}")
            if spec is not None:
                for issue in methods.option_problems(fig.options, spec, sync=sync):
                    bad("fio", f"fio ran with {issue}")
            if isinstance(p, SizePoint):
                for issue in methods.size_option_problems(fig.options, p.block_size, size_version):
                    bad("fio", f"fio ran with {issue}")
            nj = fig.options.get("numjobs")
            entries_jobs = fig.entries if fig.entries > 1 else None
            claimed = int(nj) if nj is not None and nj.isdigit() and len(nj) < 9 else (entries_jobs or 1)
            if claimed != numjobs:
                bad("numjobs", f"point says {numjobs} jobs but fio ran {claimed}")
            if not (-0.01 <= p.iops - fig.iops <= 0.01 or _close(p.iops, fig.iops, 1e-3, 0.01)):
                bad("iops", f"{p.iops:g} does not match fio's {fig.iops:g}")
            if not (-1.0 <= p.bw_bytes - fig.bw_bytes <= 1.0 or _close(p.bw_bytes, fig.bw_bytes, 1e-3, 1.0)):
                bad("bw_bytes", f"{p.bw_bytes:g} does not match fio's {fig.bw_bytes:g}")
            if p.total_ios != fig.total_ios:
                bad("total_ios", f"{p.total_ios} does not match fio's {fig.total_ios}")
            if p.runtime_ms != fig.runtime_ms:
                bad("runtime_ms", f"{p.runtime_ms} does not match fio's {fig.runtime_ms}")
            if clock := clock_problem(fig.runtime_ms, fig.options):  # fio's clock against the step's length
                bad("runtime_ms", clock)
            _latency_problems("lat_us", p.lat_us, fig.lat_mean_us, fig.lat_pct_us, bad)
            if p.sync_lat_us is not None:
                _latency_problems("sync_lat_us", p.sync_lat_us, fig.sync_mean_us, fig.sync_pct_us, bad)
            elif fig.sync_mean_us is not None:
                bad("sync_lat_us", f"is null but fio reports fdatasync latencies (mean {fig.sync_mean_us:g} us)")
            # fio's headline figures against the counters it reports beside them
            for field, message in counter_problems(p.fio, sync=sync):
                bad(field, f"fio's own counters contradict its figures: {message}")

    # --- physics, for every point
    if p.iops > 0 and not _close(p.bw_bytes, p.iops * block, 2e-3, block):
        what = "4 KiB" if block == BLOCK else f"{block} B"
        bad("bw_bytes", f"{p.bw_bytes:g} B/s is not IOPS x {what} ({p.iops * block:g} B/s)")
    if p.total_ios > 0 and p.runtime_ms > 0:
        expected = p.iops * p.runtime_ms / 1000
        if not _close(p.total_ios, expected, 0.02, 2):
            bad("total_ios", f"{p.total_ios} I/Os in {p.runtime_ms} ms is not {p.iops:g} IOPS")
    if p.iops > MAX_IOPS_PER_JOB * numjobs:
        bad("iops", f"{p.iops:g} IOPS from {numjobs} job(s) is more than 1 per microsecond per job")
    lat = p.lat_us.mean
    if lat is not None and lat > 0:
        service = lat + (p.sync_lat_us.mean if p.sync_lat_us and p.sync_lat_us.mean else 0.0)
        bound = numjobs * 1e6 / service
        if p.iops > bound * LITTLE_OVER + 1:
            bad(
                "iops",
                f"{p.iops:g} IOPS is more than {numjobs} job(s) at {service:g} us per I/O can do "
                f"(Little's law at iodepth 1: at most {bound:.0f})",
            )
        elif service >= LITTLE_UNDER_MIN_US and p.iops > 0 and p.iops * LITTLE_UNDER < bound:
            bad(
                "iops",
                f"{p.iops:g} IOPS is far below the {bound:.0f} that {numjobs} job(s) at {service:g} us "
                "per I/O complete (Little's law at iodepth 1)",
            )
    if limit is not None and p.iops * block > limit[0]:
        what = "4 KiB" if block == BLOCK else f"{block} B"
        bad(
            "iops",
            f"{p.iops:g} IOPS of {what} needs {p.iops * block / 1e6:.0f} MB/s, more than the "
            f"{limit[1]} carries ({limit[0] / 1e6:.0f} MB/s)",
        )
    return out


def check_figures(result: ResultDocument) -> list[Problem]:
    """Every disagreement between figures and raw fio data, and every implausible figure."""
    spec = methods.lookup(result.method.id, result.method.version)
    limit = link_limit(result.device)
    out: list[Problem] = []
    if spec is not None and result.method.fio_params:
        for issue in methods.option_problems(result.method.fio_params, spec):
            out.append(Problem("", "result.method.fio_params", f"method ran fio with {issue}"))
    for r, run in enumerate(result.runs):
        base = f"result.runs[{r}]"
        seen: set[int] = set()
        for i, p in enumerate(run.points):
            if p.numjobs in seen:
                out.append(Problem("", f"{base}.points[{i}].numjobs", f"numjobs {p.numjobs} appears twice in this run"))
            seen.add(p.numjobs)
            out += _point_problems(p, f"{base}.points[{i}]", limit, spec, result.method.fio_version, sync=True)
        if run.nosync is not None:
            out += _point_problems(run.nosync, f"{base}.nosync", limit, spec, result.method.fio_version, sync=False)
        if run.points:
            best = max(run.points, key=lambda p: p.iops)
            if run.peak is None:
                out.append(Problem("", f"{base}.peak", "missing although the run has points"))
            elif run.peak.iops != best.iops or (
                run.peak.numjobs != best.numjobs
                and not any(p.numjobs == run.peak.numjobs and p.iops == best.iops for p in run.points)
            ):
                out.append(
                    Problem(
                        "",
                        f"{base}.peak",
                        f"peak {run.peak.iops:g} IOPS at {run.peak.numjobs} jobs is not "
                        f"the best point ({best.iops:g} at {best.numjobs})",
                    )
                )
        elif run.peak is not None:
            out.append(Problem("", f"{base}.peak", "a peak without points"))
        if run.sizes is not None:
            out += _size_problems(run.sizes, f"{base}.sizes", limit, result.method.fio_version)
    return out


def _size_problems(
    profile: SizeProfile, where: str, limit: tuple[float, str] | None, fio_version: str | None
) -> list[Problem]:
    """A block-size profile's method, order and every point's figures against its fio data
    (:func:`_point_problems` with the point's block size)."""
    out: list[Problem] = []
    method = profile.method
    if methods.lookup_profile(method.id, method.version) is None:
        out.append(Problem("", f"{where}.method", f"unknown profile method {method.id} version {method.version}"))
        return out
    for issue in methods.size_option_problems(method.fio_params, None, method.version):
        out.append(Problem("", f"{where}.method.fio_params", f"method ran fio with {issue}"))
    last = 0
    for i, p in enumerate(profile.points):
        if p.block_size <= last:
            out.append(
                Problem(
                    "",
                    f"{where}.points[{i}].block_size",
                    f"{p.block_size} B comes after {last} B: the sizes must rise, each once",
                )
            )
        last = max(last, p.block_size)
        out += _point_problems(
            p,
            f"{where}.points[{i}]",
            limit,
            None,
            fio_version,
            sync=True,
            block=p.block_size,
            size_version=method.version,
        )
    return out
