#!/usr/bin/env python3
"""Steady-state tuning: how early could fio's detector end a step, and at what cost in accuracy?

diskq ends a step once fio's steady-state detector (``--ss=iops:T% --ss_dur=Ws --ss_ramp=Rs``)
sees every one-second IOPS sample of the last W seconds within T % of their mean. This script
records one-second IOPS traces of full-length steps with diskq's own fio options (plus
``--write_iops_log``), then replays the detector offline for a grid of (T, W, R): for each
setting, the share of steps it would end early, the mean step length, and how far the early
step's IOPS (the mean from 0 to the stop, as fio reports it) lies from the full step's IOPS.
One recording answers every setting, and the device time spent tuning stays small.

Run as root: ``.venv/bin/python benchmarks/steady_state.py [--quick]``.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import child, rawfio, stats
from benchmarks.scratchdev import MiB, loop_device, require_root

GRID_TOLERANCE = (5.0, 10.0, 15.0, 20.0)
GRID_WINDOW = (3, 5)
GRID_RAMP = (1, 2)


def detector_stop(samples: list[float], tolerance_pct: float, window: int, ramp: int) -> int | None:
    """Seconds after which fio's ``iops:T%`` detector would end the step, or None.

    ``samples[i]`` is the IOPS of second i+1. After ``ramp`` seconds, once ``window`` samples are
    in, the step ends at the first second whose last ``window`` samples all lie within
    ``tolerance_pct`` % of their mean.

    >>> detector_stop([100, 50, 100, 101, 99, 100], 5, 3, 1)
    5
    >>> detector_stop([100, 50, 100, 60, 99, 100], 5, 3, 1) is None
    True
    """
    for end in range(ramp + window, len(samples) + 1):
        win = samples[end - window:end]
        mean = sum(win) / window
        if mean > 0 and max(abs(x - mean) for x in win) / mean * 100 <= tolerance_pct:
            return end
    return None


def early_estimate(samples: list[float], stop: int | None) -> float:
    """The IOPS fio reports for a step ended after ``stop`` seconds (all seconds, or None: all)."""
    used = samples[: stop or len(samples)]
    return sum(used) / len(used)


def replay(traces: list[list[float]], tolerance_pct: float, window: int, ramp: int) -> dict:
    """The detector over many recorded steps: share stopped early, mean length, estimate errors."""
    lengths, errors, stopped = [], [], 0
    for samples in traces:
        stop = detector_stop(samples, tolerance_pct, window, ramp)
        stopped += stop is not None
        lengths.append(stop or len(samples))
        errors.append(abs(stats.ratio(early_estimate(samples, stop), early_estimate(samples, None)) - 1) * 100)
    return {
        "stopped": stopped / len(traces),
        "mean_length_s": sum(lengths) / len(lengths),
        "median_error_pct": stats.median(errors),
        "max_error_pct": max(errors),
    }


def parse_iops_logs(texts: list[str], seconds: int) -> list[float]:
    """Per-second IOPS of a step from fio's per-job ``--write_iops_log`` files written with
    ``--log_avg_msec=1000`` (lines ``time_ms, iops, direction, bs, offset``): summed over jobs,
    by the second each sample closes."""
    total = [0.0] * seconds
    last = 0
    for text in texts:
        for line in text.splitlines():
            parts = [p.strip() for p in line.split(",")]
            if len(parts) < 2 or not parts[0].isdigit():
                continue
            second = round(int(parts[0]) / 1000)
            if 1 <= second <= seconds:
                total[second - 1] += float(parts[1])
                last = max(last, second)
    return total[:last]  # a last second that never closed has no sample: it is not a zero


def traces_from_output(text: str) -> list[list[float]]:
    """The traces printed by an earlier run of this script (the part after ``|`` of each step
    line), so a replay can be repeated without writing to a device again."""
    traces = []
    for line in text.splitlines():
        if " jobs: mean " in line and "|" in line:
            traces.append([float(x) for x in line.split("|", 1)[1].split()])
    return traces


def record(dev: str, numjobs: int, runtime_s: int, region_bytes: int, workdir: str) -> list[float]:
    """One full-length step with diskq's fio options and a one-second IOPS log."""
    from diskq.bench import fio

    prefix = os.path.join(workdir, f"nj{numjobs}")
    options = fio.base_options(runtime_s=runtime_s, region_bytes=region_bytes, steady=None)
    options.update({"write_iops_log": prefix, "log_avg_msec": "1000"})
    done = child.run(rawfio.command(dev, numjobs, options))
    if done.returncode != 0:
        raise RuntimeError(f"fio exited with {done.returncode}: {done.stderr.strip()[-300:]}")
    logs = sorted(glob.glob(prefix + "_iops.*.log"))
    texts = [Path(p).read_text() for p in logs]
    for p in logs:
        os.unlink(p)
    return parse_iops_logs(texts, runtime_s)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", default="1,2,4,8,16,32", help="numjobs to record (default 1,2,4,8,16,32)")
    ap.add_argument("--rounds", type=int, default=2, help="recordings per numjobs (default 2)")
    ap.add_argument("--runtime", type=int, default=20, help="seconds per recorded step (default 20)")
    ap.add_argument("--size-mib", type=int, default=2048, help="loop device size in MiB (default 2048)")
    ap.add_argument("--quick", action="store_true", help="numjobs 1 and 4, one round, 512 MiB device")
    ap.add_argument("--replay", type=Path, help="replay the traces printed by an earlier run instead of recording")
    args = ap.parse_args(argv)
    if args.quick:
        args.jobs, args.rounds, args.size_mib = "1,4", 1, 512
    jobs = [int(x) for x in args.jobs.split(",")]
    if args.replay:
        traces = traces_from_output(args.replay.read_text())
        print(f"# steady state: {len(traces)} traces replayed from {args.replay}")
        print_grid(traces)
        return 0
    require_root()
    from diskq.bench.target import region_bytes

    traces = []
    with loop_device(args.size_mib * MiB) as dev, tempfile.TemporaryDirectory(prefix="diskq-ss-") as workdir:
        region = region_bytes(args.size_mib * MiB, max(jobs))
        print(f"# steady state: {dev}, numjobs {jobs}, {args.rounds} rounds of {args.runtime} s steps", flush=True)
        for _ in range(args.rounds):
            for n in jobs:
                samples = record(dev, n, args.runtime, region, workdir)
                traces.append(samples)
                mean = early_estimate(samples, None)
                spread = (max(samples) - min(samples)) / mean * 100 if mean else 0.0
                print(f"{n:>3} jobs: mean {mean:,.0f} IOPS, 1-s samples span {spread:.0f} % of the mean | "
                      + " ".join(f"{x:.0f}" for x in samples), flush=True)
    print_grid(traces)
    return 0


def print_grid(traces: list[list[float]]) -> None:
    rows = []
    for t in GRID_TOLERANCE:
        for w in GRID_WINDOW:
            for r in GRID_RAMP:
                s = replay(traces, t, w, r)
                rows.append((f"iops:{t:g}%", w, r, f"{s['stopped'] * 100:.0f} %", f"{s['mean_length_s']:.1f}",
                             f"{s['median_error_pct']:.1f}", f"{s['max_error_pct']:.1f}"))
    print()
    print(stats.table(["criterion", "window s", "ramp s", "steps ended early", "mean step s",
                       "median error %", "max error %"], rows))


if __name__ == "__main__":
    sys.exit(main())
