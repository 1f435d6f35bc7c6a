"""Are a result's sustained-write figures what its raw fio data says?

Each :class:`~diskq.result.Sustained` of a submission carries fio's JSON. From it are
recomputed, and must match: ``iops``, ``bw_bytes``, ``runtime_ms`` (as for the sweep's points)
and ``written_bytes`` (fio's ``io_bytes``); fio's options must be the variant's
(:mod:`diskq.bench.sustained`: block size, queue depth, fdatasync, the sample interval, the
budget). The samples come from fio's bandwidth log, which is not kept; they must add up to the
bytes written:

* at most :data:`SAMPLES_OVER` more, plus the rounding of each sample to whole KiB/s: a
  sample is the mean of its interval, and fio's log times drift by at most a few milliseconds
  per interval (12 ms in 22 s in ``tests/fixtures/sustained``), far below that share;
* at most the bytes of the time the log does not cover less: fio logs an interval only when
  it has ended while the job still runs, so the rest of the last interval is never logged and
  a whole interval may be missing too (3 s writes gave 2 or 3 one-second samples with 3.001 s
  of runtime); that time, at the fastest sampled rate (the unlogged end of a write is taken to
  run no faster than its fastest logged second), plus :data:`SAMPLES_OVER` of the total.

The ``cliff`` is recomputed from the samples with the current criteria
(:func:`diskq.analyse.cliff.find_cliff`) and must match. Problems come back as
:class:`Problem` lines, never as exceptions: the fio JSON is untrusted input.
"""

from __future__ import annotations

import math

from diskq.analyse.cliff import find_cliff
from diskq.result import ResultDocument, Sustained
from diskq.submission.counters import counter_problems
from diskq.submission.figures import _close
from diskq.submission.fiojson import read_fio
from diskq.submission.problems import Problem

#: the share of the bytes written by which the samples may exceed or fall short of them, beyond
#: the rounding and the unlogged time (see the module's text)
SAMPLES_OVER = 0.01
METHOD_VERSIONS = {"diskq-sustained-write": {1}}

#: fio options each variant ran with (name -> accepted values)
_VARIANT_OPTIONS = {
    "fdatasync": {"rw": {"write"}, "direct": {"1"}, "fdatasync": {"1"}, "iodepth": {"1"}, "ioengine": {"psync"}},
    "sequential": {
        "rw": {"write"},
        "direct": {"1"},
        "iodepth": {"32"},
        "ioengine": {"libaio"},
        "fdatasync": {"0", None},
    },
}
_KIB = {"k": 1024, "m": 1024**2}


def _block(text: str | None) -> int | None:
    """``128k`` -> 131072, ``1024k`` / ``1m`` -> 1048576, ``4096`` -> 4096; None if unreadable."""
    if not isinstance(text, str) or not text or len(text) > 20:
        return None
    t = text.strip().lower().removesuffix("ib").removesuffix("b")
    if t.isdigit():
        return int(t)
    if t[:-1].isdigit() and t[-1] in _KIB:
        return int(t[:-1]) * _KIB[t[-1]]
    return None


def _written(data: dict) -> int | None:
    total = 0
    jobs = data.get("jobs") if isinstance(data, dict) else None
    for job in jobs if isinstance(jobs, list) else []:
        write = job.get("write") if isinstance(job, dict) else None
        if not isinstance(write, dict):
            return None
        value = write.get("io_bytes")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            kib = write.get("io_kbytes")
            if isinstance(kib, bool) or not isinstance(kib, int) or kib < 0:
                return None
            value = kib * 1024
        total += value
    return total


def _option_problems(s: Sustained, options: dict[str, str], bad) -> None:
    for name, accepted in _VARIANT_OPTIONS[s.variant].items():
        value = options.get(name)
        if value not in accepted:
            bad(
                "fio",
                f"the {s.variant} variant runs fio with {name}={'/'.join(sorted(a for a in accepted if a))}, "
                f"this one ran with {value if value is not None else '(unset)'}",
            )
    if _block(options.get("bs")) != s.block_size:
        bad("block_size", f"{s.block_size} does not match fio's bs={options.get('bs')}")
    if options.get("iodepth") != str(s.iodepth):
        bad("iodepth", f"{s.iodepth} does not match fio's iodepth={options.get('iodepth')}")
    if options.get("log_avg_msec") != str(s.sample_interval_ms):
        bad(
            "sample_interval_ms",
            f"{s.sample_interval_ms} does not match fio's log_avg_msec={options.get('log_avg_msec')}",
        )
    if (s.budget_s is None) == (s.budget_bytes is None):
        bad("budget_s", "a sustained write has either a time budget or a size budget")
    elif s.budget_s is not None:  # fio's JSON does not list the flag --time_based: no io_size then
        if options.get("runtime") != str(s.budget_s) or options.get("io_size") is not None:
            bad(
                "budget_s",
                f"{s.budget_s} s does not match fio's runtime={options.get('runtime')} "
                f"and io_size={options.get('io_size')}",
            )
    elif _block(options.get("io_size")) != s.budget_bytes:
        bad("budget_bytes", f"{s.budget_bytes} does not match fio's io_size={options.get('io_size')}")


def _samples_problems(s: Sustained, bad) -> None:
    n = len(s.bw_samples)
    dt = s.sample_interval_ms / 1000
    if any(not math.isfinite(v) or v < 0 for v in s.bw_samples):
        bad("bw_samples", "a sample is negative or not a number")
        return
    if n > s.runtime_ms / s.sample_interval_ms + 1:
        bad("bw_samples", f"{n} samples of {dt:g} s do not fit in {s.runtime_ms / 1000:g} s of writing")
        return
    logged = sum(s.bw_samples) * dt
    over = SAMPLES_OVER * s.written_bytes + n * 1024 * dt  # the share, and KiB/s rounding per sample
    unlogged_s = max(0.0, s.runtime_ms / 1000 - n * dt) + dt
    under = unlogged_s * max(s.bw_samples, default=s.bw_bytes) * 1.0 + SAMPLES_OVER * s.written_bytes
    if logged > s.written_bytes + over:
        bad("bw_samples", f"the samples add up to {logged:,.0f} bytes, more than the {s.written_bytes:,} written")
    elif logged < s.written_bytes - under:
        bad(
            "bw_samples",
            f"the samples add up to {logged:,.0f} bytes, less than the {s.written_bytes:,} written "
            f"by more than {unlogged_s:g} s of writing at their highest rate can explain",
        )


def _cliff_problems(s: Sustained, bad) -> None:
    expected = find_cliff(s.bw_samples, s.sample_interval_ms)
    got = s.cliff
    if got is None:
        bad("cliff", "missing: it is computed from the samples")
        return
    if got.found != expected.found:
        bad("cliff.found", f"is {str(got.found).lower()}, the samples say {str(expected.found).lower()}")
        return
    if not expected.found:
        return
    if got.at_s is None or abs(got.at_s - (expected.at_s or 0)) > 1e-3:
        bad("cliff.at_s", f"{got.at_s} does not match the samples' {expected.at_s:g} s")
    if (got.at_bytes is None) != (expected.at_bytes is None) or (
        got.at_bytes is not None and abs(got.at_bytes - (expected.at_bytes or 0)) > 1
    ):
        bad("cliff.at_bytes", f"{got.at_bytes} does not match the samples' {expected.at_bytes}")
    if got.drop_pct is None or abs(got.drop_pct - (expected.drop_pct or 0)) > 0.05:
        bad("cliff.drop_pct", f"{got.drop_pct} does not match the samples' {expected.drop_pct:g}")
    for name in ("before_bw_bytes", "after_bw_bytes"):
        mine, theirs = getattr(got, name), getattr(expected, name)
        if mine is None or not _close(mine, theirs or 0.0, 1e-6, 0.1):
            bad(f"cliff.{name}", f"{mine} does not match the samples' {theirs:g}")


def _one(s: Sustained, where: str) -> list[Problem]:
    out: list[Problem] = []

    def bad(field: str, message: str) -> None:
        out.append(Problem("", f"{where}.{field}" if field else where, message))

    if s.method.version not in METHOD_VERSIONS.get(s.method.id, set()):
        bad("method", f"unknown method {s.method.id!r} version {s.method.version}")
        return out
    # --- physics, for every measurement
    if s.iops > 0 and not _close(s.bw_bytes, s.iops * s.block_size, 2e-3, s.block_size):
        bad("bw_bytes", f"{s.bw_bytes:g} B/s is not IOPS x {s.block_size} bytes ({s.iops * s.block_size:g} B/s)")
    if s.runtime_ms > 0 and not _close(s.written_bytes, s.bw_bytes * s.runtime_ms / 1000, 0.02, s.block_size):
        bad("written_bytes", f"{s.written_bytes:,} bytes in {s.runtime_ms} ms is not {s.bw_bytes:g} B/s")
    if s.fio is None:
        bad("fio", "raw fio output is missing")
    else:
        fig, why = read_fio(s.fio)
        if fig is None:
            bad("fio", why or "unreadable fio data")
        else:
            for err in fig.errors:
                bad("fio", err)
            if fig.entries != 1 or fig.options.get("numjobs", "1") != "1":
                bad("fio", "a sustained write is one fio job")
            _option_problems(s, fig.options, bad)
            if not (-0.01 <= s.iops - fig.iops <= 0.01 or _close(s.iops, fig.iops, 1e-3, 0.01)):
                bad("iops", f"{s.iops:g} does not match fio's {fig.iops:g}")
            if not (-1.0 <= s.bw_bytes - fig.bw_bytes <= 1.0 or _close(s.bw_bytes, fig.bw_bytes, 1e-3, 1.0)):
                bad("bw_bytes", f"{s.bw_bytes:g} does not match fio's {fig.bw_bytes:g}")
            if s.runtime_ms != fig.runtime_ms:
                bad("runtime_ms", f"{s.runtime_ms} does not match fio's {fig.runtime_ms}")
            written = _written(s.fio)
            if written is None:
                bad("fio", "fio's JSON has no usable io_bytes figure")
            elif written != s.written_bytes:
                bad("written_bytes", f"{s.written_bytes} does not match fio's {written}")
            for field, message in counter_problems(s.fio, sync=s.variant == "fdatasync"):
                if field == "fio.jobs[].ctx" and s.variant == "sequential":
                    continue  # libaio at iodepth 32 reaps many writes per wait: no switch per write
                bad(field, f"fio's own counters contradict its figures: {message}")
    _samples_problems(s, bad)
    _cliff_problems(s, bad)
    return out


def sustained_problems(result: ResultDocument) -> list[Problem]:
    """Every disagreement of the sustained writes with their raw data; the fdatasync variant
    first, the sequential one only after it, once each."""
    out: list[Problem] = []
    variants = [s.variant for s in result.sustained]
    if variants not in ([], ["fdatasync"], ["fdatasync", "sequential"]):
        out.append(
            Problem(
                "",
                "result.sustained",
                f"variants {variants} are not what diskq bench runs "
                "(fdatasync, then sequential when it found no cliff)",
            )
        )
    elif (
        variants == ["fdatasync", "sequential"]
        and result.sustained[0].cliff is not None
        and result.sustained[0].cliff.found
    ):
        out.append(
            Problem("", "result.sustained[1]", "the sequential variant runs only when the fdatasync one found no cliff")
        )
    for i, s in enumerate(result.sustained):
        out += _one(s, f"result.sustained[{i}]")
    return out
