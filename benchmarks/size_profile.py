#!/usr/bin/env python3
"""Size profile: the device time ``diskq bench --profile sizes`` adds, against the same sizes run
by hand with plain fio, on one loop device.

By hand, a block-size profile is one fio command per size, each run for a fixed time, the way the
community's 4 KiB command runs (20 s)::

    fio --filename=/dev/X --direct=1 --fdatasync=1 --iodepth=1 --runtime=20 --time_based \
        --rw=write --bs=8k --group_reporting --name=sizes --numjobs=1 --output-format=json

at 512 B (the loop device has 512-byte logical blocks), 4, 8, 16, 64, 128 KiB and 1 MiB. diskq is
run as a user runs it, at its default settings, with only the sweep cut to one step::

    diskq bench DEV --yes --json --cache keep --no-flush-check --jobs 1 --profile sizes

The two alternate on the same device (hand, diskq, hand, diskq, ...). For each we report the
profile's device time (fio's own runtimes of its steps, summed: the time the device spends being
written for the profile; diskq's 4 KiB sweep step is not counted), and each size's IOPS, diskq's
against the hand-run command's (medians). Goal: the profile in under a minute of device time at
default settings on a steady device (``--backing memory``: a loop device over a file in
``/dev/shm``, whose flushes cost nothing and whose IOPS settle at once); the ratios say how much
device time diskq's steps save against the hand-run 20 s steps, and whether their figures agree.
Method version 2 of the profile measures a fixed 7 s window after a 1 s ramp per size (56 s for
seven sizes); version 1 ended each step with fio's steady-state detector.

Run as root: ``.venv/bin/python benchmarks/size_profile.py [--quick] [--backing memory]``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import diskqrun, rawfio, stats
from benchmarks.scratchdev import MiB, device_arguments, loop_device_of, require_root
from diskq.bench.fiojson import option_seconds

SIZES = (512, 4096, 8192, 16384, 65536, 131072, 1048576)
GOAL_S = 60.0


def bs(size: int) -> str:
    """fio's ``--bs`` for a size.

    >>> [bs(s) for s in SIZES]
    ['512', '4k', '8k', '16k', '64k', '128k', '1m']
    """
    if size % MiB == 0:
        return f"{size // MiB}m"
    return f"{size // 1024}k" if size % 1024 == 0 else str(size)


def hand_options(size: int, runtime_s: float) -> dict[str, str]:
    """The hand-run command's options at one size: the community command with another bs."""
    return {**rawfio.community_options(runtime_s), "bs": bs(size), "name": "sizes"}


def profile_of(doc: dict) -> list[tuple[int, float, float]]:
    """(block size, IOPS, seconds written) of each step of the first run's size profile: fio's
    runtime plus the ramp it left out of its figures (``ramp_time`` in the step's fio JSON; method
    version 2 has a 1 s ramp, version 1 none).

    >>> profile_of({"runs": [{"sizes": {"points": [{"block_size": 8192, "iops": 10.5, "runtime_ms": 7000,
    ...     "fio": {"jobs": [{"job options": {"ramp_time": "1"}}]}}]}}]})
    [(8192, 10.5, 8.0)]
    >>> profile_of({"runs": [{"sizes": {"points": [{"block_size": 8192, "iops": 10.5, "runtime_ms": 7001}]}}]})
    [(8192, 10.5, 7.001)]
    """
    runs = doc.get("runs") or []
    sizes = (runs[0].get("sizes") or {}) if runs else {}
    if not sizes.get("points"):
        raise ValueError("the result document has no size profile")
    return [
        (
            int(p["block_size"]),
            float(p["iops"]),
            int(p["runtime_ms"]) / 1000.0 + (option_seconds(p.get("fio"), "ramp_time") or 0.0),
        )
        for p in sizes["points"]
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=2, help="hand/diskq pairs (default 2)")
    ap.add_argument(
        "--runtime",
        type=float,
        default=20.0,
        help="seconds per hand-run step, and diskq's --runtime cap (default 20, both defaults)",
    )
    device_arguments(ap, size_mib=1024)
    ap.add_argument("--quick", action="store_true", help="1 pair, 10 s steps, 256 MiB device")
    args = ap.parse_args()
    if args.quick:
        args.pairs, args.runtime, args.size_mib = 1, 10.0, 256
    require_root()
    hand: dict[int, list[float]] = {s: [] for s in SIZES}
    ours: dict[int, list[float]] = {s: [] for s in SIZES}
    hand_s: list[float] = []
    ours_s: list[float] = []
    ours_wall: list[float] = []
    steady: list[int] = []
    with loop_device_of(args) as dev:
        print(
            f"# size profile: {dev} ({args.size_mib} MiB loop device over a zero-filled file on {args.backing}), "
            f"{args.pairs} pair(s), {args.runtime:g} s steps by hand",
            flush=True,
        )
        for who in stats.alternate(["hand", "diskq"], args.pairs):
            load = os.getloadavg()[0]
            if who == "hand":
                total = 0.0
                for size in SIZES:
                    step = rawfio.run(dev, 1, hand_options(size, args.runtime))
                    hand[size].append(step.iops)
                    total += step.runtime_s
                hand_s.append(total)
                print(f"  hand:  {total:6.1f} s of device time (load {load:.1f})", flush=True)
            else:
                run, doc = diskqrun.bench(
                    dev, "--no-flush-check", "--jobs", "1", "--profile", "sizes", "--runtime", f"{args.runtime:g}"
                )
                points = profile_of(doc)
                for size, iops, _ in points:
                    ours[size].append(iops)
                total = sum(t for _, _, t in points)
                ours_s.append(total)
                ours_wall.append(run.wall_s)
                steady.append(sum(1 for p in doc["runs"][0]["sizes"]["points"] if p.get("steady_state")))
                print(
                    f"  diskq: {total:6.1f} s of device time for the profile, {run.wall_s:.1f} s wall for "
                    f"the whole bench (ramps counted), {steady[-1]}/{len(points)} steps ended by the detector "
                    f"(load {load:.1f})",
                    flush=True,
                )
                print(
                    "         " + " ".join(f"{bs(size)}:{iops:,.0f}({t:.1f}s)" for size, iops, t in points), flush=True
                )
    print()
    rows = []
    for size in SIZES:
        h, o = stats.median(hand[size]), stats.median(ours[size])
        rows.append((bs(size), f"{h:,.0f}", f"{o:,.0f}", f"{stats.ratio(o, h):.3f}"))
    print(stats.table(["size", "hand IOPS (median)", "diskq IOPS (median)", "diskq / hand"], rows))
    print()
    h_s, o_s = stats.median(hand_s), stats.median(ours_s)
    print(
        stats.table(
            ["contender", "profile device time (median)", "runs"],
            [
                ("hand-run fio, fixed steps", f"{h_s:.1f} s", len(hand_s)),
                ("diskq --profile sizes", f"{o_s:.1f} s", len(ours_s)),
            ],
        )
    )
    print()
    print(
        f"device time: {stats.ratio(h_s, o_s):.2f}x less with diskq; "
        f"diskq's whole bench (one 4 KiB step and the profile) took {stats.median(ours_wall):.1f} s wall (median)"
    )
    met = max(ours_s) < GOAL_S
    print(
        f"goal (the profile in under {GOAL_S:g} s of device time at default settings): "
        f"{'met' if met else 'NOT met'} (longest {max(ours_s):.1f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
