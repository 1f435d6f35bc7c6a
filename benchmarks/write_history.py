#!/usr/bin/env python3
"""Write history: does the protocol's peak step read the same after more writing before it?

The community protocol measures its 32-job step after 100 s of writing (20 s at 1, 2, 4, 8 and
16 jobs); diskq's default search measures its own after 28 s (its 1-job step of 8 s and four
steering steps of 5 s). If a device's sync-write rate depends on how long it has been written,
the two figures differ by that dependence and not by the length of the window. This script
measures the protocol's own 32-job command (20 s, with a one-second IOPS log) in three states,
each after ``--rest`` idle seconds, in rotating order from one round to the next:

- ``rested``: nothing written before it;
- ``after-28s``: right after the protocol's command at 1, 2, 4, 8, 16 jobs for 8, 5, 5, 5, 5 s
  (the device time diskq spends before its last step);
- ``after-100s``: right after the protocol's own steps at 1, 2, 4, 8, 16 jobs, 20 s each.

For each measurement it prints fio's figure for the 20 s step (the protocol's), the figure of diskq's answer
window over the same trace (the mean of seconds 2-8: ``--ramp_time=1 --runtime=7``) and the
trace itself; at the end, the median of each state and each state's ratio to ``rested``.

Run as root: ``.venv/bin/python benchmarks/write_history.py [--rounds 3] [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import rawfio, stats
from benchmarks.scratchdev import device_arguments, loadavg, loop_device_of, require_root
from diskq.bench.steady import parse_iops_logs, window_iops

#: the writing before the measured step in each state: (numjobs, seconds) run back to back
HISTORY = {
    "rested": (),
    "after-28s": ((1, 8), (2, 5), (4, 5), (8, 5), (16, 5)),
    "after-100s": ((1, 20), (2, 20), (4, 20), (8, 20), (16, 20)),
}
#: diskq's answer window (method version 3): seconds left out, seconds measured
ANSWER = (1, 7)


def rotation(states: list[str], rounds: int) -> list[str]:
    """Every state once per round, each round starting one state later, so that no state always
    follows the same one.

    >>> rotation(["a", "b", "c"], 2)
    ['a', 'b', 'c', 'b', 'c', 'a']
    """
    return [states[(r + i) % len(states)] for r in range(rounds) for i in range(len(states))]


def measure(dev: str, numjobs: int, runtime_s: int, workdir: str) -> tuple[float, list[float]]:
    """The protocol's command for ``runtime_s`` with a one-second IOPS log: fio's own figure for
    the step (from its JSON, as the protocol reads it) and the one-second trace."""
    output, logs = rawfio.run_with_iops_log(
        dev, numjobs, rawfio.community_options(runtime_s), os.path.join(workdir, f"nj{numjobs}")
    )
    iops, _ = rawfio.summarise(output)
    return iops, parse_iops_logs(logs.values(), runtime_s)


def write_before(dev: str, history: tuple[tuple[int, int], ...]) -> None:
    for numjobs, seconds in history:
        rawfio.run(dev, numjobs, rawfio.community_options(seconds))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="measurements of each state (default 3)")
    ap.add_argument("--jobs", type=int, default=32, help="numjobs of the measured step (default 32)")
    ap.add_argument("--runtime", type=int, default=20, help="seconds of the measured step (default 20)")
    ap.add_argument("--rest", type=float, default=30.0, help="idle seconds before each state (default 30)")
    device_arguments(ap)
    ap.add_argument("--quick", action="store_true", help="1 round, 8 jobs, 10 s steps, 5 s rest, 512 MiB")
    args = ap.parse_args(argv)
    if args.quick:
        args.rounds, args.jobs, args.runtime, args.rest, args.size_mib = 1, 8, 10, 5.0, 512
    require_root()

    figures: dict[str, list[tuple[float, float]]] = {s: [] for s in HISTORY}
    with loop_device_of(args) as dev, tempfile.TemporaryDirectory(prefix="diskq-wh-") as workdir:
        print(
            f"# write history: {dev} ({args.size_mib} MiB over a file on {args.backing}), {args.jobs}-job "
            f"{args.runtime} s step, {args.rounds} rounds, {args.rest:g} s rest; load average {loadavg()}",
            flush=True,
        )
        for state in rotation(list(HISTORY), args.rounds):
            time.sleep(args.rest)
            write_before(dev, HISTORY[state])
            full, trace = measure(dev, args.jobs, args.runtime, workdir)
            window = window_iops(trace, *ANSWER)
            figures[state].append((full, window))
            print(
                f"{state:10}: load {loadavg()}, {args.runtime} s figure {full:,.0f} IOPS, answer window "
                f"{window:,.0f} | " + " ".join(f"{x:.0f}" for x in trace),
                flush=True,
            )
    print()
    print(report(figures))
    print(f"load average at the end: {loadavg()}")
    return 0


def report(figures: dict[str, list[tuple[float, float]]]) -> str:
    """Each state's median figures and their ratios to the rested state's.

    >>> print(report({"rested": [(100, 110)], "after-100s": [(80, 90)]}))
    | state | runs | step figure (median) | / rested | answer window (median) | / rested |
    |---|---|---|---|---|---|
    | rested | 1 | 100 | 1.000 | 110 | 1.000 |
    | after-100s | 1 | 80 | 0.800 | 90 | 0.818 |
    """
    rest_full = stats.median(f for f, _ in figures["rested"])
    rest_window = stats.median(w for _, w in figures["rested"])
    rows = []
    for state, runs in figures.items():
        full, window = stats.median(f for f, _ in runs), stats.median(w for _, w in runs)
        rows.append(
            (
                state,
                len(runs),
                f"{full:,.0f}",
                f"{stats.ratio(full, rest_full):.3f}",
                f"{window:,.0f}",
                f"{stats.ratio(window, rest_window):.3f}",
            )
        )
    return stats.table(
        ["state", "runs", "step figure (median)", "/ rested", "answer window (median)", "/ rested"], rows
    )


if __name__ == "__main__":
    sys.exit(main())
