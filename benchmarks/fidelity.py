#!/usr/bin/env python3
"""Fidelity: does diskq report what fio itself measures?

For each numjobs, diskq measures one fixed step::

    diskq bench DEV --yes --json --cache keep --no-flush-check --no-steady-state --jobs N --runtime S

and raw fio runs with exactly the options diskq recorded in the result document
(``method.fio_params``, the same filename and numjobs), its JSON read by separate code. The two
alternate on the same loop device, diskq first in odd rounds and fio first in even ones (so that
neither always runs on the device the other has just warmed); each pair gives the ratio
diskq IOPS / fio IOPS. Goal: the median ratio within 1 +- 0.03.

Separate runs differ by the device's own noise. A second, noise-free check reads the raw fio JSON
that diskq keeps beside each point (``points[].fio``) with this script's own parser and compares
it with the IOPS diskq reported for that point: any difference there is diskq's, not the device's.

``--backing disk`` (default) puts the loop device over a file on the temp dir's filesystem, whose
fdatasync reaches the host's disk; ``--backing memory`` over a file in ``/dev/shm``, where the
device is bound by the CPU and back-to-back runs differ far less.

Run as root: ``.venv/bin/python benchmarks/fidelity.py [--quick] [--backing memory]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import diskqrun, rawfio, stats
from benchmarks.scratchdev import device_arguments, loop_device_of, require_root

TOLERANCE = 0.03


def verdict(ratios: list[float], tolerance: float = TOLERANCE) -> tuple[float, bool]:
    """(median of the diskq/fio ratios, whether it lies within 1 +- ``tolerance``)."""
    m = stats.median(ratios)
    return m, abs(m - 1.0) <= tolerance + 1e-12


def embedded_ratio(doc: dict) -> float:
    """diskq's reported IOPS of the first point / the IOPS in the raw fio JSON kept beside it."""
    point = doc["runs"][0]["points"][0]
    return stats.ratio(float(point["iops"]), rawfio.summarise(json.dumps(point["fio"]))[0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", default="1,4", help="numjobs to compare, comma separated (default 1,4)")
    ap.add_argument("--pairs", type=int, default=5, help="diskq/fio pairs per numjobs (default 5)")
    ap.add_argument("--runtime", type=float, default=10.0, help="seconds per step (default 10)")
    ap.add_argument(
        "--settle",
        type=float,
        default=5.0,
        help="idle seconds before every run, the same for both contenders (default 5)",
    )
    device_arguments(ap)
    ap.add_argument("--quick", action="store_true", help="numjobs 1 only, 3 pairs of 5 s steps, 512 MiB device")
    args = ap.parse_args(argv)
    if args.quick:
        args.jobs, args.pairs, args.runtime, args.size_mib = "1", 3, 5.0, 512
    jobs = [int(x) for x in args.jobs.split(",")]
    require_root()

    ratios: dict[int, list[float]] = {n: [] for n in jobs}
    figures: dict[int, list[tuple[float, float]]] = {n: [] for n in jobs}
    embedded: list[float] = []
    options: dict[int, dict] = {}  # fio's options as diskq recorded them, per numjobs
    with loop_device_of(args) as dev:
        print(
            f"# fidelity: {dev} ({args.size_mib} MiB loop device over a zero-filled file on {args.backing}), "
            f"numjobs {jobs}, "
            f"{args.pairs} pairs each, {args.runtime:g} s steps",
            flush=True,
        )
        for round_ in range(args.pairs):
            for n in jobs:
                time.sleep(args.settle)
                fio_first = round_ % 2 == 1 and options.get(n) is not None  # A B, then B A: no order bias
                if fio_first:
                    theirs = rawfio.run(dev, n, options[n]).iops
                    time.sleep(args.settle)
                run, doc = diskqrun.bench(
                    dev, "--no-flush-check", "--no-steady-state", "--jobs", str(n), "--runtime", f"{args.runtime:g}"
                )
                ours = run.points[0][1]
                embedded.append(embedded_ratio(doc))
                options[n] = dict(doc["method"]["fio_params"])
                if not fio_first:
                    time.sleep(args.settle)
                    theirs = rawfio.run(dev, n, options[n]).iops
                r = stats.ratio(ours, theirs)
                ratios[n].append(r)
                figures[n].append((ours, theirs))
                print(
                    f"round {round_ + 1}, {n} jobs{' (fio first)' if fio_first else ''}: diskq {ours:,.0f} IOPS, "
                    f"fio {theirs:,.0f} IOPS, "
                    f"ratio {r:.3f}",
                    flush=True,
                )

    print()
    rows, all_ratios = [], []
    for n in jobs:
        m, ok = verdict(ratios[n])
        all_ratios += ratios[n]
        rows.append(
            (
                n,
                len(ratios[n]),
                f"{stats.median(d for d, _ in figures[n]):,.0f}",
                f"{stats.median(f for _, f in figures[n]):,.0f}",
                f"{min(ratios[n]):.3f}",
                f"{m:.3f}",
                f"{max(ratios[n]):.3f}",
                "yes" if ok else "NO",
            )
        )
    print(
        stats.table(
            [
                "numjobs",
                "pairs",
                "diskq IOPS (median)",
                "fio IOPS (median)",
                "min ratio",
                "median ratio",
                "max ratio",
                "within 1 +- 0.03",
            ],
            rows,
        )
    )
    m, ok = verdict(all_ratios)
    print()
    print(f"all pairs: median ratio diskq/fio = {m:.3f}; goal (1 +- {TOLERANCE:g}) {'MET' if ok else 'NOT MET'}")
    print(f"diskq's reported IOPS / its own raw fio JSON, every run: min {min(embedded):.6f}, max {max(embedded):.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
