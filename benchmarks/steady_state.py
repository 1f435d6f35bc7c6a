#!/usr/bin/env python3
"""Steady-state tuning: how early could fio's detector end a step, and at what cost in accuracy?

diskq ends a step once fio's steady-state detector (``--ss=iops:T% --ss_dur=Ws --ss_ramp=Rs``)
sees every one-second IOPS sample of the last W seconds within T % of their mean (``iops_slope``:
their least-squares slope below T % of the mean per second; :mod:`diskq.bench.steady`). This script
records one-second IOPS traces of full-length steps with diskq's own fio options (plus
``--write_iops_log``), then replays the detector offline for a grid of (T, W, R): for each
setting, the share of steps it would end early, the mean step length, and how far the early
step's IOPS (the mean from 0 to the stop, as fio reports it) lies from the full step's IOPS.
One recording answers every setting, and the device time spent tuning stays small.

Run as root: ``.venv/bin/python benchmarks/steady_state.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import rawfio, stats
from benchmarks.scratchdev import MiB, device_arguments, loadavg, loop_device_of, require_root
from diskq.bench.steady import Detector, parse_iops_logs, step_iops, stop_second, window_errors

#: the detector diskq used up to method version 1, and the candidates replayed beside it
GRID = (
    Detector("iops", 5, 3, 1),
    Detector("iops", 5, 5, 1),
    Detector("iops", 10, 3, 1),
    Detector("iops", 3, 3, 1),
    Detector("iops", 5, 3, 2),
    Detector("iops", 5, 5, 2),
    Detector("iops", 5, 6, 2),
    Detector("iops", 3, 5, 2),
    Detector("iops", 5, 8, 2),
    Detector("iops_slope", 1, 3, 1),
    Detector("iops_slope", 2, 3, 1),
    Detector("iops_slope", 2, 4, 1),
    Detector("iops_slope", 2, 4, 2),
    Detector("iops_slope", 1, 5, 1),
    Detector("iops_slope", 2, 5, 1),
    Detector("iops_slope", 3, 5, 1),
)
#: seconds left out of the reported figure (fio's --ramp_time): 0 is fio's plain mean
GRID_SKIP = (0, 1, 2)


def detector_stop(samples: list[float], tolerance_pct: float, window: int, ramp: int) -> int | None:
    """Seconds after which fio's ``iops:T%`` detector would end the step, or None.

    >>> detector_stop([100, 50, 100, 101, 99, 100], 5, 3, 1)
    5
    >>> detector_stop([100, 50, 100, 60, 99, 100], 5, 3, 1) is None
    True
    """
    return stop_second(samples, Detector("iops", tolerance_pct, window, ramp))


def early_estimate(samples: list[float], stop: int | None) -> float:
    """The IOPS fio reports for a step ended after ``stop`` seconds (all seconds, or None: all)."""
    return step_iops(samples, stop)


def replay(
    traces: list[list[float]], tolerance_pct: float, window: int, ramp: int, kind: str = "iops", skip: int = 0
) -> dict:
    """The detector over many recorded steps: share stopped early, mean length, estimate errors.

    With ``skip`` seconds (fio's ``--ramp_time``), those seconds count neither for the figure
    nor for the detector, but they are spent: the step length includes them. The reference is
    always the full step's plain mean, as the community protocol reports it.
    """
    det = Detector(kind, tolerance_pct, window, ramp)
    lengths, errors, signed, stopped = [], [], [], 0
    for samples in traces:
        rest = samples[skip:]
        stop = stop_second(rest, det)
        stopped += stop is not None
        lengths.append(skip + (stop or len(rest)))
        e = (stats.ratio(step_iops(rest, stop), step_iops(samples, None)) - 1) * 100
        errors.append(abs(e))
        signed.append(e)
    return {
        "stopped": stopped / len(traces),
        "mean_length_s": sum(lengths) / len(lengths),
        "median_error_pct": stats.median(errors),
        "median_signed_pct": stats.median(signed),
        "p90_error_pct": sorted(errors)[int(0.9 * (len(errors) - 1))],
        "max_error_pct": max(errors),
    }


def traces_from_output(text: str) -> list[list[float]]:
    """The traces printed by an earlier run of this script (the part after ``|`` of each step
    line), so a replay can be repeated without writing to a device again."""
    traces = []
    for line in text.splitlines():
        if " jobs: mean " in line and "|" in line:
            traces.append([float(x) for x in line.split("|", 1)[1].split()])
    return traces


def record(
    dev: str, numjobs: int, runtime_s: int, region_bytes: int, workdir: str, keep: Path | None = None, tag: str = ""
) -> list[float]:
    """One full-length step with diskq's fio options and a one-second IOPS log."""
    from diskq.bench import fio

    options = fio.base_options(runtime_s=runtime_s, region_bytes=region_bytes, steady=None)
    _, logs = rawfio.run_with_iops_log(dev, numjobs, options, os.path.join(workdir, f"nj{numjobs}"))
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        for name, text in logs.items():
            (keep / (tag + name)).write_text(text)
    return parse_iops_logs(logs.values(), runtime_s)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", default="1,2,4,8,16,32", help="numjobs to record (default 1,2,4,8,16,32)")
    ap.add_argument("--rounds", type=int, default=2, help="recordings per numjobs (default 2)")
    ap.add_argument("--runtime", type=int, default=20, help="seconds per recorded step (default 20)")
    device_arguments(ap)
    ap.add_argument("--quick", action="store_true", help="numjobs 1 and 4, one round, 512 MiB device")
    ap.add_argument("--keep-logs", type=Path, help="copy fio's per-job one-second IOPS logs into this directory")
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
    with loop_device_of(args) as dev, tempfile.TemporaryDirectory(prefix="diskq-ss-") as workdir:
        region = region_bytes(args.size_mib * MiB, max(jobs))
        print(
            f"# steady state: {dev} over a file on {args.backing}, numjobs {jobs}, {args.rounds} rounds of "
            f"{args.runtime} s steps; load average {loadavg(all_three=True)}",
            flush=True,
        )
        for rnd in range(args.rounds):
            for n in jobs:
                samples = record(dev, n, args.runtime, region, workdir, args.keep_logs, f"{args.backing}-r{rnd + 1}-")
                traces.append(samples)
                mean = early_estimate(samples, None)
                spread = (max(samples) - min(samples)) / mean * 100 if mean else 0.0
                print(
                    f"{n:>3} jobs: mean {mean:,.0f} IOPS, 1-s samples span {spread:.0f} % of the mean | "
                    + " ".join(f"{x:.0f}" for x in samples),
                    flush=True,
                )
    print(f"# load average at the end: {loadavg(all_three=True)}")
    print_grid(traces)
    return 0


def print_grid(traces: list[list[float]]) -> None:
    rows = []
    for det in GRID:
        for skip in GRID_SKIP:
            r = replay(traces, det.limit_pct, det.window_s, det.ramp_s, det.kind, skip)
            rows.append(
                (
                    f"{det.kind}:{det.limit_pct:g}%",
                    det.window_s,
                    det.ramp_s,
                    skip,
                    f"{r['stopped'] * 100:.0f} %",
                    f"{r['mean_length_s']:.1f}",
                    f"{r['median_signed_pct']:+.1f}",
                    f"{r['median_error_pct']:.1f}",
                    f"{r['p90_error_pct']:.1f}",
                    f"{r['max_error_pct']:.1f}",
                )
            )
    print()
    print(
        stats.table(
            [
                "criterion",
                "window s",
                "ramp s",
                "left out s",
                "steps ended early",
                "mean step s",
                "median error % (signed)",
                "median error %",
                "90th pct error %",
                "max error %",
            ],
            rows,
        )
    )
    print_windows(traces)


#: fixed windows (method version 3: --ramp_time, then --runtime), (ramp s, measured s)
WINDOWS = [(r, w) for r in (1, 2) for w in (3, 4, 5, 6, 7, 8, 10)]


def print_windows(traces: list[list[float]]) -> None:
    """Fixed windows replayed: the error of each step's figure against its whole trace's mean."""
    rows = []
    for ramp, window in WINDOWS:
        errors = window_errors(traces, ramp, window)
        if not errors:
            continue
        absolute = sorted(abs(e) for e in errors)
        rows.append(
            (
                ramp,
                window,
                ramp + window,
                f"{sorted(errors)[len(errors) // 2]:+.1f}",
                f"{absolute[len(absolute) // 2]:.1f}",
                f"{absolute[int(0.9 * (len(absolute) - 1))]:.1f}",
                f"{absolute[-1]:.1f}",
            )
        )
    print()
    print(
        stats.table(
            [
                "ramp s",
                "window s",
                "step s",
                "median error % (signed)",
                "median error %",
                "90th pct error %",
                "max error %",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    sys.exit(main())
