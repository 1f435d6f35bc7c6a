"""The sustained write (``diskq bench --profile sustained``): one long write that looks for the
cliff where a drive's write buffer (an SLC cache, a DRAM buffer) is full.

Two variants, each one fio job over the whole target, its throughput logged once a second
(``--write_bw_log`` with ``--log_avg_msec=1000``) until the budget (``--sustain``) is spent:

``fdatasync``
    128 KiB writes at iodepth 1, each followed by fdatasync (``--fdatasync=1``, direct I/O):
    synchronous writes like a WAL's, but with enough data per flush to reach a buffer's end
    within minutes. At 4 KiB a consumer drive that commits 1 000 to 2 000 flushes a second
    writes 4 to 8 MB/s, 2.4 to 4.8 GB in ten minutes: less than the SLC caches of tens of GB
    that make the cliffs, which such a run would never see. 128 KiB is ZFS's default record
    size and the largest size of the block-size profile below 1 MiB.
``sequential``
    1 MiB direct writes through libaio at iodepth 32, no flushes: the fastest way to fill a
    buffer. It runs only when the fdatasync variant found no cliff within the budget, because
    a drive may empty its cache into slower flash as fast as a flush-bound writer fills it, and
    only a writer at full speed outruns it (and because after a cliff it would start on a full
    cache and measure nothing new).

Writes wrap around the target (fio's ``--io_size`` larger than ``--size``, or ``--time_based``),
so the budget may exceed its capacity. ``--sustain`` is a size (``60G``, ``500M``, ``1T``: bytes,
binary units as everywhere in diskq) or a time (``90s``, ``10m``, ``2h``: a lower-case ``m`` is
minutes); the default is :data:`DEFAULT_BUDGET`.

The cliff itself is found by :func:`diskq.analyse.cliff.find_cliff` from the samples.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import tempfile
from dataclasses import dataclass

from diskq.bench import deadline, fio, fiojson
from diskq.errors import FioError, InvalidInput
from diskq.result import ProfileMethod, Sustained
from diskq.units import human_bytes, parse_size

METHOD_ID = "diskq-sustained-write"
METHOD_VERSION = 1
JOB_NAME = "diskq-sustained"
#: the throughput is logged as the mean of each such interval
SAMPLE_INTERVAL_MS = 1000
DEFAULT_BUDGET = "10m"
#: writes of either variant are aligned to this (the sequential variant's block)
ALIGN = 1024 * 1024
#: a byte budget is capped at this much time (fio's --runtime), like the longest sweep step
MAX_RUNTIME_S = fio.MAX_RUNTIME_S


@dataclass(frozen=True)
class Variant:
    name: str  # "fdatasync" | "sequential"
    block_size: int
    iodepth: int
    ioengine: str
    fdatasync: bool


FDATASYNC = Variant("fdatasync", 128 * 1024, 1, "psync", True)
SEQUENTIAL = Variant("sequential", 1024 * 1024, 32, "libaio", False)
#: in the order they run; the second only when the first found no cliff
VARIANTS = (FDATASYNC, SEQUENTIAL)


@dataclass(frozen=True)
class Budget:
    """How much one variant may write: ``bytes`` or ``seconds`` (exactly one is set)."""

    bytes: int | None = None
    seconds: int | None = None

    def describe(self) -> str:
        """``60 GiB`` or ``10 min`` / ``90 s``."""
        if self.bytes is not None:
            return human_bytes(self.bytes)
        s = self.seconds or 0
        if s % 3600 == 0:
            return f"{s // 3600} h"
        return f"{s // 60} min" if s % 60 == 0 else f"{s} s"


_TIME_UNITS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}
_BUDGET = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")
_HINT = "give a size (60G, 500M) or a time (90s, 10m, 2h); a lower-case m is minutes, an upper-case M mebibytes"


def parse_budget(text: str) -> Budget:
    """``--sustain`` as a :class:`Budget`. Case matters for one letter only: ``m`` is minutes,
    ``M`` mebibytes (every other unit is read as :func:`diskq.units.parse_size` reads it).

    >>> parse_budget("10m"), parse_budget("500M").bytes, parse_budget("60G").bytes
    (Budget(bytes=None, seconds=600), 524288000, 64424509440)
    """
    m = _BUDGET.match(text or "")
    if not m or not m.group(2):
        raise InvalidInput(f"--sustain needs a unit, got {text!r}", hint=_HINT)
    number, unit = m.group(1), m.group(2)
    if unit in _TIME_UNITS:
        seconds = float(number) * _TIME_UNITS[unit]
        if not math.isfinite(seconds) or seconds != int(seconds):
            raise InvalidInput(f"--sustain takes whole seconds, got {text!r}", hint=_HINT)
        if not 1 <= seconds <= MAX_RUNTIME_S:
            raise InvalidInput(f"--sustain must be between 1 s and {MAX_RUNTIME_S // 3600} h, got {text!r}", hint=_HINT)
        return Budget(seconds=int(seconds))
    try:
        size = parse_size(text)
    except InvalidInput:
        raise InvalidInput(f"--sustain is neither a size nor a time: {text!r}", hint=_HINT) from None
    size -= size % ALIGN
    if size < ALIGN:
        raise InvalidInput(f"--sustain must be at least 1 MiB, got {text!r}", hint=_HINT)
    return Budget(bytes=size)


def warning(budget: Budget, path: str, *, capacity_bytes: int) -> str:
    """What the sustained write will do to ``path``, said before it starts."""
    if budget.bytes is not None:
        amount = f"up to {budget.describe()}"
        if budget.bytes > capacity_bytes:
            amount += f" ({budget.bytes / capacity_bytes:.1f} times its capacity, wrapping around)"
        twice = f"and up to {budget.describe()} more"
    else:
        amount = f"for {budget.describe()} (as much as it takes in that time)"
        twice = f"and for {budget.describe()} more"
    return (
        f"--profile sustained writes to {path} {amount} with fdatasync after every write, {twice} at full "
        "speed if no cliff was found; this wears flash like any write of that size"
    )


def region(capacity_bytes: int) -> int:
    """The span of the target the write covers: all of it, aligned down to :data:`ALIGN`."""
    span = capacity_bytes - capacity_bytes % ALIGN
    if span < ALIGN:
        raise InvalidInput(
            f"the target is too small for a sustained write ({capacity_bytes} bytes)",
            hint="it needs at least 1 MiB: use a larger --size, or drop --profile sustained",
        )
    return span


def options(variant: Variant, budget: Budget, region_bytes: int, log_prefix: str) -> dict[str, str]:
    """Every fio option of one sustained write except ``filename``, in command-line order."""
    opts = {
        "name": JOB_NAME,
        "ioengine": variant.ioengine,
        "direct": "1",
        "fdatasync": "1" if variant.fdatasync else "0",
        "iodepth": str(variant.iodepth),
        "rw": "write",
        "bs": f"{variant.block_size // 1024}k",
        "size": str(region_bytes),
    }
    if budget.seconds is not None:
        opts.update({"time_based": "1", "runtime": str(budget.seconds)})
    else:
        opts.update({"io_size": str(budget.bytes), "runtime": str(MAX_RUNTIME_S)})
    opts.update({"write_bw_log": log_prefix, "log_avg_msec": str(SAMPLE_INTERVAL_MS)})
    return opts


def command(filename: str, opts: dict[str, str]) -> list[str]:
    """The fio argv: one job, JSON output."""
    return fio.command(filename, 1, opts)


def method(opts: dict[str, str]) -> ProfileMethod:
    """The method record: the options without the log's place, which differs on every run."""
    return ProfileMethod(
        id=METHOD_ID, version=METHOD_VERSION, fio_params={k: v for k, v in opts.items() if k != "write_bw_log"}
    )


def parse_bw_log(text: str) -> list[tuple[int, float]]:
    """fio's bandwidth log as ``(time_ms, bytes_per_s)`` pairs of the write direction.

    Each line is ``time (ms), value (KiB/s), direction (0 read, 1 write, 2 trim), block size,
    offset`` and, in newer fio, a priority; with ``--log_avg_msec`` the value is the mean over
    the interval that ends at ``time``. fio 3.33, 128 KiB fdatasync writes to a file, 1 s means::

        1000, 601344, 1, 0, 0
        2000, 622446, 1, 0, 0
        3000, 669469, 1, 0, 0

    Raises :class:`FioError` on a line that is not of that form or goes back in time.
    """
    out: list[tuple[int, float]] = []
    last = -1
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < 5 or not all(re.fullmatch(r"\d+", f) for f in fields[:3]):
            raise FioError(
                f"fio's bandwidth log line {number} is not 'time, value, direction, bs, offset': {line[:80]!r}"
            )
        time_ms, kib, direction = int(fields[0]), int(fields[1]), int(fields[2])
        if direction != 1:
            continue
        if time_ms < last:
            raise FioError(f"fio's bandwidth log goes back in time at line {number} ({time_ms} ms after {last} ms)")
        last = time_ms
        out.append((time_ms, float(kib * 1024)))
    return out


def interval_note(entries: list[tuple[int, float]], interval_ms: int) -> str | None:
    """A note when the log's times are not one interval apart (a slot that fio did not log)."""
    gaps = [b - a for (a, _), (b, _) in zip(entries, entries[1:], strict=False)]
    odd = [g for g in gaps if abs(g - interval_ms) > interval_ms * 0.25]
    if not odd:
        return None
    return (
        f"{len(odd)} of fio's {len(gaps)} log intervals are not {interval_ms} ms long "
        f"(longest {max(odd)} ms): the samples follow fio's log as written"
    )


def _written(data: dict) -> int:
    """Bytes written, summed over fio's job entries (``io_bytes``, or ``io_kbytes`` x 1024)."""
    total = 0
    for job in data.get("jobs") or []:
        write = job.get("write") if isinstance(job, dict) else None
        value = write.get("io_bytes") if isinstance(write, dict) else None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            kib = write.get("io_kbytes") if isinstance(write, dict) else None
            if isinstance(kib, bool) or not isinstance(kib, int) or kib < 0:
                raise FioError("fio's JSON has no usable write io_bytes figure")
            value = kib * 1024
        total += value
    return total


def from_output(
    data: dict,
    log_text: str,
    variant: Variant,
    budget: Budget,
    opts: dict[str, str],
    *,
    write_cache: str,
    mechanism: str | None,
    interrupted: bool = False,
) -> Sustained:
    """One :class:`Sustained` from fio's JSON and its bandwidth log (the cliff is left to the
    analysis)."""
    point = fiojson.point_from_json(data, 1, interrupted=interrupted)
    entries = parse_bw_log(log_text)
    note = interval_note(entries, SAMPLE_INTERVAL_MS)
    return Sustained(
        method=method(opts),
        variant=variant.name,
        write_cache=write_cache if write_cache in ("on", "off") else "unknown",
        cache_mechanism=mechanism,
        block_size=variant.block_size,
        iodepth=variant.iodepth,
        budget_bytes=budget.bytes,
        budget_s=budget.seconds,
        written_bytes=_written(data),
        runtime_ms=point.runtime_ms,
        iops=point.iops,
        bw_bytes=point.bw_bytes,
        sample_interval_ms=SAMPLE_INTERVAL_MS,
        bw_samples=[v for _, v in entries],
        interrupted=interrupted,
        fio=data,
        notes=[note] if note else [],
    )


def cut_short(s: Sustained, budget: Budget, *, returncode: int, output: str) -> str | None:
    """Why a sustained write did not spend its budget, or None when it did: fio was stopped by
    a signal or failed (:func:`diskq.bench.fio.cut_short`), a time budget ran less than
    :data:`diskq.bench.fio.FULL_STEP_SHARE` of its time, or a byte budget wrote less than asked
    before its time cap."""
    point = fiojson.point_from_json(s.fio, 1) if s.fio else None
    asked = float(budget.seconds) if budget.seconds is not None else 0.0
    why = fio.cut_short(point, asked, returncode=returncode, output=output) if point is not None else None
    if why is None and budget.bytes is not None and s.written_bytes < budget.bytes:
        if s.runtime_ms < MAX_RUNTIME_S * 1000 * fio.FULL_STEP_SHARE:
            why = f"it wrote {human_bytes(s.written_bytes)} of the {human_bytes(budget.bytes)} asked"
    return why


def run(
    filename: str,
    variant: Variant,
    budget: Budget,
    region_bytes: int,
    *,
    write_cache: str,
    mechanism: str | None,
    clock: deadline.Clock | None = None,
) -> Sustained:
    """Run one sustained write and read its figures and samples.

    Interrupted (Ctrl-C, SIGTERM, SIGHUP), fio is told to stop; what it printed and logged is
    attached to the exception as ``exc.partial`` (a :class:`Sustained` marked interrupted, or
    None) and the interruption is re-raised. A write that fio ended before its budget without
    diskq asking, or that fio did not live to report (killed by a signal), raises
    :class:`StepCutShort` with the measurement, marked interrupted, where fio printed one. Its
    deadline (``clock``, :mod:`diskq.bench.deadline`) follows from its budget: the time budget,
    or fio's runtime cap for a byte budget, plus the margin; past it fio is killed with every
    process it started (:class:`~diskq.errors.StepOverdue`).
    """
    workdir = tempfile.mkdtemp(prefix="diskq-sustained-")
    try:
        prefix = os.path.join(workdir, "bw")
        opts = options(variant, budget, region_bytes, prefix)
        log_path = f"{prefix}_bw.1.log"

        def log_text() -> str:
            try:
                with open(log_path, encoding="ascii", errors="replace") as f:
                    return f.read()
            except FileNotFoundError:
                return ""

        def build(stdout: str, *, interrupted: bool) -> Sustained:
            return from_output(
                fiojson.extract_json(stdout),
                log_text(),
                variant,
                budget,
                opts,
                write_cache=write_cache,
                mechanism=mechanism,
                interrupted=interrupted,
            )

        label = f"the sustained write ({variant.name})"
        try:
            done = (clock or deadline.Clock()).run(command(filename, opts), deadline.writing_seconds(opts), label)
        except BaseException as exc:  # interruption: keep what fio measured so far
            partial = getattr(exc, "completed", None)
            if partial is not None and partial.stdout.strip():
                try:
                    exc.partial = build(partial.stdout, interrupted=True)
                except Exception:  # a half-written JSON is lost; the interruption matters more
                    exc.partial = None
            raise
        if done.returncode != 0 and "{" not in done.stdout:
            killed = fio.killed_by(done.returncode)
            if killed:
                raise fio.cut_short_error(label, killed, None)
            tail = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit status {done.returncode}"
            raise FioError(f"fio failed in the sustained write ({variant.name}): {tail}")
        measured = build(done.stdout, interrupted=False)
        why = cut_short(measured, budget, returncode=done.returncode, output=done.stdout + done.stderr)
        if why:
            raise fio.cut_short_error(label, why, measured.model_copy(update={"interrupted": True}))
        return measured
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
