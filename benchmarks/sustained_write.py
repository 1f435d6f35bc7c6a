"""What ``--profile sustained`` adds to a bench, against the same write run with fio by hand.

On one loop device, in turns (``--rounds`` rounds, diskq first in each):

* **diskq**: ``diskq bench DEV --yes --json --cache keep --jobs 1 --runtime 2 --no-flush-check``
  once without and once with ``--profile sustained --sustain BUDGET``; the profile's wall time
  is the difference, its device time the sum of its writes' fio runtimes (both variants run on a
  loop device: it has no cliff, so the sequential variant follows the fdatasync one);
* **by hand**: the two fio commands a user would type for the same measurement, with the same
  options, each with ``--write_bw_log`` and ``--output-format=json``, wall time and fio runtime.

It prints the device time and wall time of each, their ratios (diskq / by hand: the goal is
about 1, the profile writing no longer than the hand-run commands) and the throughput each
reported, per variant.

    sudo .venv/bin/python benchmarks/sustained_write.py --quick
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks import child, diskqrun, scratchdev, stats  # noqa: E402

SWEEP = ["--jobs", "1", "--runtime", "2", "--no-flush-check"]


def hand_commands(device: str, budget: str, size_bytes: int, log_dir: str) -> list[tuple[str, list[str]]]:
    """The fio commands of both variants as typed by hand (``budget`` a size such as ``2G``).

    >>> [v for v, _ in hand_commands("/dev/loop9", "2G", 1 << 30, "/tmp/x")]
    ['fdatasync', 'sequential']
    >>> " ".join(hand_commands("/dev/loop9", "2G", 1 << 30, "/tmp/x")[0][1][:6])
    'fio --name=by-hand --filename=/dev/loop9 --direct=1 --rw=write --bs=128k'
    """
    common = ["--name=by-hand", f"--filename={device}", "--direct=1", "--rw=write"]
    tail = [f"--size={size_bytes}", f"--io_size={budget}", "--log_avg_msec=1000", "--output-format=json"]
    return [
        (
            "fdatasync",
            [
                "fio",
                *common,
                "--bs=128k",
                "--ioengine=psync",
                "--iodepth=1",
                "--fdatasync=1",
                *tail,
                f"--write_bw_log={os.path.join(log_dir, 'fdatasync')}",
            ],
        ),
        (
            "sequential",
            [
                "fio",
                *common,
                "--bs=1m",
                "--ioengine=libaio",
                "--iodepth=32",
                *tail,
                f"--write_bw_log={os.path.join(log_dir, 'sequential')}",
            ],
        ),
    ]


def by_hand(device: str, budget: str, size_bytes: int) -> dict[str, tuple[float, float, float]]:
    """variant -> (fio runtime s, wall s, bytes/s) of the hand-run commands."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="diskq-benchmark-logs-") as logs:
        for variant, argv in hand_commands(device, budget, size_bytes, logs):
            started = time.monotonic()
            done = child.run(argv)
            wall = time.monotonic() - started
            if done.returncode != 0:
                raise RuntimeError(f"fio exited with {done.returncode}: {done.stderr.strip()[-300:]}")
            write = json.loads(done.stdout[done.stdout.index("{") :])["jobs"][0]["write"]
            out[variant] = (write["runtime"] / 1000, wall, float(write["bw_bytes"]))
    return out


def with_diskq(device: str, budget: str) -> tuple[float, dict[str, tuple[float, float]]]:
    """(wall s the profile added, variant -> (fio runtime s, bytes/s))."""
    plain, _ = diskqrun.bench(device, *SWEEP)
    profiled, doc = diskqrun.bench(device, *SWEEP, "--profile", "sustained", "--sustain", budget)
    variants = {s["variant"]: (s["runtime_ms"] / 1000, float(s["bw_bytes"])) for s in doc["sustained"]}
    return profiled.wall_s - plain.wall_s, variants


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", default="4G", help="--sustain of each run, a size (default 4G)")
    ap.add_argument("--rounds", type=int, default=3)
    scratchdev.device_arguments(ap, size_mib=1024)
    ap.add_argument("--quick", action="store_true", help="one round, 1G budget, 512 MiB device")
    args = ap.parse_args(argv)
    if args.quick:
        args.rounds, args.budget, args.size_mib = 1, "1G", 512
    scratchdev.require_root()
    size = args.size_mib * scratchdev.MiB
    rows = []
    added_walls, hand_walls, device_ratios = [], [], []
    with scratchdev.loop_device_of(args) as dev:
        for order in stats.alternate(["diskq", "hand"], args.rounds):
            if order == "diskq":
                added, variants = with_diskq(dev, args.budget)
                added_walls.append(added)
                rows.append(
                    (
                        "diskq",
                        "both",
                        f"{sum(r for r, _ in variants.values()):.1f}",
                        f"{added:.1f}",
                        " / ".join(f"{v} {bw / 1e6:,.0f} MB/s" for v, (_, bw) in variants.items()),
                    )
                )
                last_diskq = sum(r for r, _ in variants.values())
            else:
                hand = by_hand(dev, args.budget, size)
                wall = sum(w for _, w, _ in hand.values())
                hand_walls.append(wall)
                rows.append(
                    (
                        "by hand",
                        "both",
                        f"{sum(r for r, _, _ in hand.values()):.1f}",
                        f"{wall:.1f}",
                        " / ".join(f"{v} {bw / 1e6:,.0f} MB/s" for v, (_, _, bw) in hand.items()),
                    )
                )
                last_hand = sum(r for r, _, _ in hand.values())
            if len(rows) % 2 == 0:
                device_ratios.append(stats.ratio(last_diskq, last_hand))
            print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    print(
        f"loop device {args.size_mib} MiB ({args.backing}), budget {args.budget} per variant, {args.rounds} rounds, "
        f"load average {os.getloadavg()[0]:.1f}\n"
    )
    print(
        stats.table(["contender", "variants", "device s", "wall s (diskq: added by the profile)", "throughput"], rows)
    )
    print()
    wall_ratio = stats.ratio(stats.median(added_walls), stats.median(hand_walls))
    print(f"median device time diskq / by hand: {stats.median(device_ratios):.3f}")
    print(f"median wall time the profile adds / by hand: {wall_ratio:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
