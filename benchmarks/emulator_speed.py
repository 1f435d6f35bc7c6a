#!/usr/bin/env python3
"""The emulated drive's own speed: how many flushes a second it can carry at one job, and what its
own path costs per write and per flush.

A drive model whose writes and flushes cost nothing is mounted (emulator/diskemu.c under a loop
device with direct I/O); fio writes 4 KiB at 1 job, with ``--fdatasync=1`` and without, for
``--seconds`` each, ``--rounds`` times in turn. What is left is the emulator's own cost: fio to the
loop device, the loop device's worker, FUSE, the daemon and back. Goal: 20,000 write+flush pairs
a second at 1 job on a 2-core host, so that data-centre drives (tens of microseconds per flush)
can be modelled. Printed: the medians, their ratio to the goal, and the same fio on the FUSE file
directly (no loop device) to show where the time goes.

Run as root: ``.venv/bin/python benchmarks/emulator_speed.py [--quick]``; ``chrt -f 5`` before it
runs fio at real-time priority, as the tests do.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.scratchdev import loadavg, require_root
from emulator.drive import emulated_drive, fio_rate
from emulator.models import DriveModel

GOAL_FLUSHES = 20_000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5, help="rounds of each measurement (default 5)")
    ap.add_argument("--seconds", type=float, default=5.0, help="seconds per fio run (default 5)")
    ap.add_argument("--quick", action="store_true", help="2 rounds of 2 s")
    args = ap.parse_args(argv)
    if args.quick:
        args.rounds, args.seconds = 2, 2.0
    require_root()
    free = DriveModel("free", "writes and flushes cost nothing", "", True, True, {"write_us": 0, "empty_flush_us": 0})
    sync, nosync, fuse_sync = [], [], []
    print(f"# emulator speed: {args.rounds} rounds of {args.seconds:g} s; load average {loadavg()}", flush=True)
    with emulated_drive(free, path_us=0) as drive:
        disk = str(drive.mountpoint / "disk")
        for i in range(args.rounds):
            sync.append(fio_rate(drive.device, sync=True, seconds=args.seconds))
            nosync.append(fio_rate(drive.device, sync=False, seconds=args.seconds))
            fuse_sync.append(fio_rate(disk, sync=True, seconds=args.seconds))
            print(
                f"round {i + 1}: loop+fdatasync {sync[-1]:,.0f}/s, loop no sync {nosync[-1]:,.0f}/s, "
                f"FUSE file+fdatasync {fuse_sync[-1]:,.0f}/s; load {loadavg()}",
                flush=True,
            )
        stats = drive.stats()
    s, n, f = (statistics.median(x) for x in (sync, nosync, fuse_sync))
    write_us, cycle_us = 1e6 / n, 1e6 / s
    print()
    print("| measure | median |")
    print("|---|---:|")
    print(f"| write+flush pairs a second at 1 job (loop device) | {s:,.0f} |")
    print(f"| writes a second at 1 job without fdatasync (loop device) | {n:,.0f} |")
    print(f"| write+flush pairs a second at 1 job on the FUSE file itself | {f:,.0f} |")
    print(f"| the emulator's own cost per write | {write_us:.0f} us |")
    print(f"| the emulator's own cost per flush | {max(0.0, cycle_us - write_us):.0f} us |")
    print(
        f"flushes a second against the goal of {GOAL_FLUSHES:,}: {s / GOAL_FLUSHES:.2f}x "
        f"({'met' if s >= GOAL_FLUSHES else 'not met'})"
    )
    print(f"daemon counters: {stats['writes']:,.0f} writes, {stats['fsyncs']:,.0f} flushes")
    print(f"load average at the end: {loadavg(all_three=True)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
