"""fio: the command line diskq runs, and running one step of it (its JSON output is read by
:mod:`diskq.bench.fiojson`).

The method is the community's Ceph WAL/DB test, made machine-readable::

    fio --filename=/dev/X --direct=1 --fdatasync=1 --iodepth=1 --runtime=20 --time_based \
        --rw=write --bs=4k --group_reporting --name=ceph-iops --numjobs=N

plus ``--ioengine=psync`` (what fio picks on Linux anyway, now explicit), ``--size`` to bound the
region written, ``--ramp_time=1`` (a first second fio leaves out of its figures), a step length
set by the step's role (:class:`diskq.bench.windows.Window`), and ``--output-format=json``.

Every job writes the same region from its start, as the community command's jobs do (it gives fio
no offsets, so all N jobs write from offset 0). Method version 1 gave each job its own region
(``--offset_increment``); on a loop device that alone read up to 1.4x lower at 32 jobs than the
community command (``benchmarks/results.md``), so a version-1 "max IOPS" did not mean what the
table's column means. Version 2 writes the community layout; the two are never compared.
"""

from __future__ import annotations

import math
import re
import signal

from diskq import proc
from diskq.bench import deadline
from diskq.bench.fiojson import extract_json, point_from_json
from diskq.bench.windows import SteadyState, Window
from diskq.errors import FioError, InvalidInput, StepCutShort
from diskq.result import Point

BLOCK_SIZE = 4096
JOB_NAME = "ceph-iops"
#: the longest step diskq runs (a day): beyond that a typo is more likely than a plan
MAX_RUNTIME_S = 86400
#: A time-based step reports at least the runtime asked for (fio 3.33 on a loop device: 1001 to
#: 1005 ms for 1 s at 1 to 8 jobs); one that ran less than this share of it, and that fio's
#: steady-state detector did not end, was cut short.
FULL_STEP_SHARE = 0.98


def check_runtime(runtime_s: float) -> None:
    """Refuse a ``--runtime`` fio would not run as written. diskq passes whole seconds, so the
    document's ``runtime_s`` is exactly what fio ran (fio reads ``--runtime=1.5`` as 1 s)."""
    hint = "give whole seconds, e.g. --runtime 20"
    if not math.isfinite(runtime_s):
        raise InvalidInput(f"--runtime must be a number of seconds, got {runtime_s}", hint=hint)
    if runtime_s != int(runtime_s):
        raise InvalidInput(f"--runtime takes whole seconds, got {runtime_s:g}", hint=hint)
    if not 1 <= runtime_s <= MAX_RUNTIME_S:
        raise InvalidInput(f"--runtime must be between 1 and {MAX_RUNTIME_S} seconds, got {runtime_s:g}", hint=hint)


def base_options(
    *, runtime_s: float, region_bytes: int, steady: SteadyState | None, fdatasync: bool = True, ramp_s: int = 0
) -> dict[str, str]:
    """Every fio option of a step except ``filename`` and ``numjobs``, in command-line order.
    ``ramp_s``: seconds written first and left out of the figures (``--ramp_time``)."""
    opts = {
        "name": JOB_NAME,
        "ioengine": "psync",
        "direct": "1",
        "fdatasync": "1" if fdatasync else "0",
        "iodepth": "1",
        "rw": "write",
        "bs": "4k",
        "time_based": "1",
        **({"ramp_time": str(ramp_s)} if ramp_s else {}),
        "runtime": f"{runtime_s:g}",
        "size": str(region_bytes),
        "group_reporting": "1",
    }
    if steady is not None:
        opts.update(steady.options())
    return opts


def window_options(window: Window, *, region_bytes: int, fdatasync: bool = True) -> dict[str, str]:
    """The fio options of a step of method version 4: a fixed window, or a settling one ended by
    fio's ``iops_slope`` detector."""
    return base_options(
        runtime_s=window.runtime_s,
        region_bytes=region_bytes,
        steady=window.detector(),
        fdatasync=fdatasync,
        ramp_s=window.ramp_s,
    )


def command(filename: str, numjobs: int, options: dict[str, str]) -> list[str]:
    """The fio argv for one step."""
    argv = ["fio", f"--filename={filename}"]
    argv += [f"--{k}" if (k == "time_based" and v == "1") else f"--{k}={v}" for k, v in options.items()]
    argv += [f"--numjobs={numjobs}", "--output-format=json"]
    return argv


def installed_version() -> str:
    """The version string of the installed fio, e.g. ``fio-3.33``."""
    return proc.run(["fio", "--version"], check=True).stdout.strip()


_TERMINATED = re.compile(r"fio: terminating on signal (\d+)")


def cut_short(point: Point, asked_s: float, *, returncode: int = 0, output: str = "") -> str | None:
    """Why a step did not run as it was asked to, or None when it did.

    A step was cut short when fio says it was terminated by a signal (``fio: terminating on
    signal 15`` before its JSON, exit status 128), exited with another failure status after
    printing its JSON, or ran less than :data:`FULL_STEP_SHARE` of ``asked_s`` seconds without
    its steady-state detector having ended it (``steadystate.attained`` in the JSON: a
    legitimate early end). fio 3.33 stopped by SIGTERM 0.65 s into a 10 s step prints::

        fio: terminating on signal 15
        {"fio version" : "fio-3.33", "jobs" : [{"write" : {"runtime" : 191, ...}, ...}]}
    """
    reasons = []
    terminated = _TERMINATED.search(output)
    if terminated:
        number = int(terminated.group(1))
        try:
            name = f" ({signal.Signals(number).name})"
        except ValueError:
            name = ""
        reasons.append(f"fio was terminated by signal {number}{name}")
    elif returncode != 0:
        reasons.append(killed_by(returncode) or f"fio exited with status {returncode}")
    if point.steady_state is not True and point.runtime_ms < asked_s * 1000 * FULL_STEP_SHARE:
        reasons.append(f"it ran {point.runtime_ms / 1000:g} s of the {asked_s:g} s asked")
    return " and ".join(reasons) or None


def killed_by(returncode: int) -> str | None:
    """``fio was killed by signal 9 (SIGKILL)`` for a fio that died of a signal (a negative
    status, as :mod:`subprocess` reports it), else None.

    >>> killed_by(-9), killed_by(1)
    ('fio was killed by signal 9 (SIGKILL)', None)
    """
    if returncode >= 0:
        return None
    try:
        name = f" ({signal.Signals(-returncode).name})"
    except ValueError:
        name = ""
    return f"fio was killed by signal {-returncode}{name}"


def run_step(
    filename: str,
    numjobs: int,
    options: dict[str, str],
    *,
    clock: deadline.Clock | None = None,
    label: str | None = None,
) -> Point:
    """Run one fio step and parse it.

    If the step is interrupted (Ctrl-C, SIGTERM, SIGHUP), fio is told to stop, the partial
    point it printed (if any) is attached to the exception as ``exc.partial`` and the
    interruption is re-raised. A step that fio ended early without diskq asking (see
    :func:`cut_short`), or that fio did not live to report (killed by a signal from elsewhere,
    the OOM killer's SIGKILL say), raises :class:`StepCutShort` with the point, marked
    interrupted, where fio printed one. A step still running past its deadline (``clock``, see
    :mod:`diskq.bench.deadline`) is killed with everything fio started: :class:`StepOverdue`.
    ``label`` names the step in messages (default ``the step at N jobs``).
    """
    argv = command(filename, numjobs, options)
    label = label or f"the step at {numjobs} job" + ("s" if numjobs != 1 else "")
    try:
        done = (clock or deadline.Clock()).run(argv, deadline.writing_seconds(options), label)
    except BaseException as exc:  # interruption: keep what fio measured so far
        partial = getattr(exc, "completed", None)
        if partial is not None and partial.stdout.strip():
            try:
                exc.partial = point_from_json(extract_json(partial.stdout), numjobs, interrupted=True)
            except Exception:  # a half-written JSON is simply lost; the interruption matters more
                exc.partial = None
        raise
    if done.returncode != 0 and "{" not in done.stdout:
        killed = killed_by(done.returncode)
        if killed:
            raise cut_short_error(label, killed, None)
        tail = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit status {done.returncode}"
        raise FioError(f"fio failed: {tail}", hint=_hint_for(done.stderr))
    point = point_from_json(extract_json(done.stdout), numjobs)
    why = cut_short(point, float(options["runtime"]), returncode=done.returncode, output=done.stdout + done.stderr)
    if why:
        raise cut_short_error(label, why, point.model_copy(update={"interrupted": True}))
    return point


def cut_short_error(step: str, why: str, partial) -> StepCutShort:
    """The error for a step that something other than diskq stopped (``why``, from
    :func:`cut_short`), carrying what fio measured (``partial``, marked interrupted)."""
    return StepCutShort(
        f"{step} was cut short, not by diskq: {why}",
        partial=partial,
        hint="something else stopped fio (a kill, the OOM killer, a shutdown); "
        "the steps that completed are kept: run the bench again for a complete result",
    )


def _hint_for(stderr: str) -> str | None:
    low = stderr.lower()
    if "invalid argument" in low and "direct" in low or "o_direct" in low:
        return (
            "the filesystem does not support O_DIRECT (ramfs, and tmpfs before Linux 6.6, do not); "
            "put the test file on a real filesystem"
        )
    if "permission denied" in low:
        return "writing to a block device needs root"
    if "no space left" in low:
        return "the target is too small for the requested --size"
    return None
