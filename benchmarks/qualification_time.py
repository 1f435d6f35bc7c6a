#!/usr/bin/env python3
"""Qualification time: diskq's default search against the community protocol, on one loop device.

The community protocol is plain fio, ``--runtime`` seconds (20) at numjobs 1, 2, 4, ... 32, one
run per step. diskq is run as a user runs it::

    diskq bench DEV --yes --json --cache keep --no-flush-check

The two alternate on the same device (community, diskq, community, diskq, ...). For each we
report device-seconds (fio's own runtimes summed: the time the device spends being written) and
wall seconds (the whole command, start-up and gaps included), and whether both find the same peak
(numjobs within one doubling step, IOPS within 5 %). Goal: at least 3x less device time, the
same peak job count, and a median peak IOPS within 5 % of the protocol's, or within the
protocol's own spread when that is wider (the largest distance of one of its runs' peak IOPS
from their median: no method can be asked to agree with the protocol better than the protocol
agrees with itself). diskq's device time counts every step it ran, the early-ended steps that
a confirmation replaced included.

"Same peak" is also asked of the community protocol against itself (each of its runs against the
next): on a device whose figures move by more than 5 % from one run to the next, no method can
reproduce another's answer more often than the protocol reproduces its own, and that rate is the
yardstick for diskq's.

The lean is asked too: over the pairs, how many of diskq's peaks read above the protocol's and
how many below (the exact sign test's p-value: a method without a lean falls on either side as
often), with the median ratio.

``--sizes`` adds the block-size profile beside the sweep: every diskq run adds ``--profile sizes``
(its device time is reported apart from the sweep's), and every community run adds the same
sizes run by hand with the community command at ``--runtime`` seconds each
(``benchmarks/size_profile.py``), so each size's figure is compared in the same turns.

``--backing disk`` (default) puts the loop device over a file on the temp dir's filesystem: its
fdatasync is real, reaches the host's disk and shares it with everything else the host does.
``--backing memory`` puts it over a file in ``/dev/shm``: flushes cost nothing there, the device
is bound by the CPU, and runs repeat far better; it measures the search, not a drive.

Run as root: ``.venv/bin/python benchmarks/qualification_time.py [--quick]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import diskqrun, rawfio, size_profile, stats
from benchmarks.scratchdev import device_arguments, loadavg, loop_device_of, require_root

GOAL_SPEEDUP = 3.0
IOPS_PCT = 5.0


@dataclass(frozen=True)
class Qualification:
    """One contender's answer: its measured curve, device time, wall time and peak."""

    who: str
    curve: list[tuple[int, float]]
    device_s: float
    wall_s: float
    peak: tuple[int, float]
    runtimes: tuple[float, ...] = ()
    #: the block-size profile run beside the sweep (``--sizes``): (block size, IOPS, seconds written)
    sizes: tuple[tuple[int, float, float], ...] = ()

    @property
    def sizes_s(self) -> float:
        return sum(t for _, _, t in self.sizes)


def community_jobs(max_jobs: int) -> list[int]:
    """1, 2, 4, ... up to ``max_jobs`` (and ``max_jobs`` itself when it is not a power of two).

    >>> community_jobs(32), community_jobs(12)
    ([1, 2, 4, 8, 16, 32], [1, 2, 4, 8, 12])
    """
    jobs, n = [], 1
    while n < max_jobs:
        jobs.append(n)
        n *= 2
    return jobs + [max_jobs]


def peak(curve: list[tuple[int, float]]) -> tuple[int, float]:
    """The best (numjobs, IOPS) of a curve, the fewest jobs among equals."""
    return max(curve, key=lambda p: (p[1], -p[0]))


def agree(a: tuple[int, float], b: tuple[int, float], *, pct: float = IOPS_PCT) -> tuple[bool, bool]:
    """(same peak numjobs within one doubling step, peak IOPS of ``a`` within ``pct`` % of ``b``)."""
    return stats.same_peak_jobs(a[0], b[0]), stats.within_pct(a[1], b[1], pct)


def self_agreement(runs: list[Qualification]) -> tuple[int, int, int]:
    """(pairs of consecutive runs with the same peak jobs, with peak IOPS within 5 %, pairs)."""
    pairs = list(zip(runs, runs[1:], strict=False))
    agreements = [agree(b.peak, a.peak) for a, b in pairs]
    return sum(j for j, _ in agreements), sum(i for _, i in agreements), len(pairs)


def own_spread(runs: list[Qualification]) -> float:
    """The largest distance of one run's peak IOPS from the median of all, as a fraction.

    >>> round(own_spread([Qualification("c", [], 0, 0, (32, v)) for v in (100, 90, 120)]), 3)
    0.2
    """
    med = stats.median(q.peak[1] for q in runs)
    return max(abs(stats.ratio(q.peak[1], med) - 1) for q in runs)


def iops_tolerance(community: list[Qualification]) -> float:
    """The accepted distance of diskq's median peak IOPS from the protocol's: 5 %, or the
    protocol's own spread when that is wider."""
    return max(IOPS_PCT / 100, own_spread(community))


def summary(community: list[Qualification], diskq: list[Qualification]) -> dict:
    """Medians, the device-time ratio, the peak agreement of each pair and of the medians, and the
    community protocol's agreement with itself."""
    pairs = list(zip(community, diskq, strict=False))
    agreements = [agree(d.peak, c.peak) for c, d in pairs]
    med = {
        who: {
            "device_s": stats.median(q.device_s for q in runs),
            "wall_s": stats.median(q.wall_s for q in runs),
            "peak_iops": stats.median(q.peak[1] for q in runs),
            "peak_jobs": sorted(q.peak[0] for q in runs)[(len(runs) - 1) // 2],
        }
        for who, runs in (("community", community), ("diskq", diskq))
    }
    speedup = stats.ratio(med["community"]["device_s"], med["diskq"]["device_s"])
    jobs_ok, iops_ok = agree(
        (med["diskq"]["peak_jobs"], med["diskq"]["peak_iops"]),
        (med["community"]["peak_jobs"], med["community"]["peak_iops"]),
    )
    peak_ratio = stats.ratio(med["diskq"]["peak_iops"], med["community"]["peak_iops"])
    tolerance = iops_tolerance(community)
    peak_ok = abs(peak_ratio - 1) <= tolerance + 1e-12
    pair_ratios = [stats.ratio(d.peak[1], c.peak[1]) for c, d in pairs]
    return {
        "median": med,
        "peak_ratio": peak_ratio,
        "pair_ratios": pair_ratios,
        "community_spread": own_spread(community),
        "diskq_spread": own_spread(diskq),
        "iops_tolerance": tolerance,
        "peak_iops_ok": peak_ok,
        "device_speedup": speedup,
        "wall_speedup": stats.ratio(med["community"]["wall_s"], med["diskq"]["wall_s"]),
        "pairs_same_jobs": sum(j for j, _ in agreements),
        "pairs_same_iops": sum(i for _, i in agreements),
        "pairs": len(pairs),
        "median_same_jobs": jobs_ok,
        "median_same_iops": iops_ok,
        "community_self": self_agreement(community),
        "goal_met": speedup >= GOAL_SPEEDUP and jobs_ok and peak_ok,
    }


def run_community(dev: str, runtime_s: float, max_jobs: int, *, sizes: bool = False) -> Qualification:
    steps = [rawfio.run(dev, n, rawfio.community_options(runtime_s)) for n in community_jobs(max_jobs)]
    curve = [(s.numjobs, s.iops) for s in steps]
    by_hand: tuple[tuple[int, float, float], ...] = ()
    if sizes:
        runs = [(size, rawfio.run(dev, 1, size_profile.hand_options(size, runtime_s))) for size in size_profile.SIZES]
        by_hand = tuple((size, step.iops, step.runtime_s) for size, step in runs)
    return Qualification(
        "community",
        curve,
        sum(s.runtime_s for s in steps),
        sum(s.wall_s for s in steps),
        peak(curve),
        tuple(s.runtime_s for s in steps),
        by_hand,
    )


def run_diskq(
    dev: str, runtime_s: float, max_jobs: int, source: str | None = None, *, sizes: bool = False
) -> tuple[Qualification, list[str]]:
    extra = ("--profile", "sizes") if sizes else ()
    run, doc = diskqrun.bench(
        dev, "--no-flush-check", "--runtime", f"{runtime_s:g}", "--max-jobs", str(max_jobs), *extra, source=source
    )
    curve = [(n, iops) for n, iops, _ in run.points]
    profile = tuple(size_profile.profile_of(doc)) if sizes else ()
    # device_s counts the replaced early steps too; the curve shows the figures the document keeps
    return Qualification(
        "diskq", curve, run.device_s, run.wall_s, run.peak, tuple(t for _, _, t in run.points), profile
    ), run.notes


def _curve(q: Qualification) -> str:
    """``numjobs:IOPS(seconds)`` for each step."""
    return " ".join(f"{n}:{iops:,.0f}({t:.1f}s)" for (n, iops), t in zip(q.curve, q.runtimes, strict=False))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=3, help="community/diskq rounds (default 3)")
    ap.add_argument("--runtime", type=float, default=20.0, help="seconds per step (default 20)")
    ap.add_argument("--max-jobs", type=int, default=32, help="highest numjobs (default 32)")
    ap.add_argument(
        "--settle",
        type=float,
        default=5.0,
        help="idle seconds before every run, the same for both contenders (default 5)",
    )
    device_arguments(ap)
    ap.add_argument(
        "--baseline",
        metavar="SRC",
        help="also run the diskq of this source checkout (e.g. a 'git worktree' of an earlier "
        "commit) as a third contender, in turn with the other two",
    )
    ap.add_argument(
        "--sizes",
        action="store_true",
        help="also run the block-size profile: diskq's --profile sizes against the sizes by hand",
    )
    ap.add_argument("--quick", action="store_true", help="1 round, 10 s steps, up to 8 jobs, 512 MiB device")
    args = ap.parse_args(argv)
    if args.quick:
        args.pairs, args.runtime, args.max_jobs, args.size_mib = 1, 10.0, 8, 512
    require_root()

    community: list[Qualification] = []
    diskq: list[Qualification] = []
    baseline: list[Qualification] = []
    contenders = ["community", "diskq"] + (["baseline"] if args.baseline else [])
    with loop_device_of(args) as dev:
        print(
            f"# qualification time: {dev} ({args.size_mib} MiB loop device over a zero-filled file "
            f"on {args.backing}), "
            f"{args.pairs} rounds, {args.runtime:g} s steps, up to {args.max_jobs} jobs; "
            f"load average {loadavg()}",
            flush=True,
        )
        if args.baseline:
            print(f"# baseline: diskq from {args.baseline}", flush=True)
        for i, who in enumerate(stats.alternate(contenders, args.pairs)):
            time.sleep(args.settle)
            if who == "community":
                q = run_community(dev, args.runtime, args.max_jobs, sizes=args.sizes)
                community.append(q)
                extra = ""
            else:
                q, notes = run_diskq(
                    dev, args.runtime, args.max_jobs, args.baseline if who == "baseline" else None, sizes=args.sizes
                )
                (baseline if who == "baseline" else diskq).append(q)
                extra = "; " + "; ".join(
                    n for n in notes if n.startswith(("search stopped", "peak confirmed", "the best point"))
                )
            print(
                f"run {i + 1} {who:9}: load {loadavg()}, device {q.device_s:6.1f} s, wall {q.wall_s:6.1f} s, "
                f"peak {q.peak[1]:,.0f} IOPS at {q.peak[0]} jobs | {_curve(q)}{extra}",
                flush=True,
            )
            if q.sizes:
                print(
                    f"    sizes: device {q.sizes_s:6.1f} s | "
                    + " ".join(f"{size_profile.bs(b)}:{iops:,.0f}({t:.1f}s)" for b, iops, t in q.sizes),
                    flush=True,
                )

    report(community, diskq, "diskq")
    if args.sizes:
        print()
        report_sizes(community, diskq, "diskq")
    if baseline:
        print()
        print(f"## baseline (diskq from {args.baseline}) against the same community runs")
        report(community, baseline, "baseline")
    print(f"load average at the end: {loadavg()}")
    return 0


def report(community: list[Qualification], diskq: list[Qualification], label: str) -> None:
    """The medians table, the ratios and the goal line of one contender against the protocol."""
    s = summary(community, diskq)
    rows = [
        (
            label if who == "diskq" else who,
            f"{m['device_s']:.1f}",
            f"{m['wall_s']:.1f}",
            m["peak_jobs"],
            f"{m['peak_iops']:,.0f}",
        )
        for who, m in s["median"].items()
    ]
    print()
    print(stats.table(["contender (median)", "device s", "wall s", "peak jobs", "peak IOPS"], rows))
    print()
    print(
        f"device time: community / {label} = {s['device_speedup']:.2f}x (goal >= {GOAL_SPEEDUP:g}x); "
        f"wall time: {s['wall_speedup']:.2f}x"
    )
    print(
        f"same peak jobs (+-1 doubling step): {s['pairs_same_jobs']}/{s['pairs']} pairs, medians "
        f"{'agree' if s['median_same_jobs'] else 'DIFFER'}"
    )
    print(
        f"peak IOPS within {IOPS_PCT:g} %: {s['pairs_same_iops']}/{s['pairs']} pairs, medians "
        f"{'agree' if s['median_same_iops'] else 'DIFFER'}"
    )
    print(
        f"peak IOPS {label}/community: median {s['peak_ratio']:.3f}, pairs "
        + ", ".join(f"{r:.3f}" for r in s["pair_ratios"])
        + f"; protocol's own spread +-{s['community_spread'] * 100:.1f} %, {label}'s +-{s['diskq_spread'] * 100:.1f} %; "
        f"accepted +-{s['iops_tolerance'] * 100:.1f} %: {'within' if s['peak_iops_ok'] else 'OUTSIDE'}"
    )
    above, below, p = stats.sign_test(s["pair_ratios"])
    print(
        f"lean: {label}'s peak above the protocol's in {above} pairs, below in {below} (sign test p = {p:.2f}); "
        f"median {s['peak_ratio']:.3f}: {'no lean shown' if p >= 0.05 and abs(s['peak_ratio'] - 1) <= 0.05 else 'LEAN'}"
    )
    points = per_point(community, diskq)
    if points:
        print(
            "every job count both measured in every run (median IOPS ratio; each one's own spread): "
            + ", ".join(f"{n}: {r:.3f} (+-{cs * 100:.0f} %, +-{ds * 100:.0f} %)" for n, r, cs, ds in points)
        )
    same_jobs, same_iops, n = s["community_self"]
    print(
        f"community against its own next run: same peak jobs {same_jobs}/{n}, "
        f"peak IOPS within {IOPS_PCT:g} % {same_iops}/{n}"
    )
    for who, runs in (("community", community), (label, diskq)):
        lo, hi = min(q.peak[1] for q in runs), max(q.peak[1] for q in runs)
        print(
            f"{who} against itself (noise floor): peak IOPS {lo:,.0f} .. {hi:,.0f} "
            f"({(stats.ratio(hi, lo) - 1) * 100:.0f} % apart), peak jobs {sorted(q.peak[0] for q in runs)}"
        )
    print(
        f"goal {'MET' if s['goal_met'] else 'NOT MET'} (>= {GOAL_SPEEDUP:g}x less device time: "
        f"{'yes' if s['device_speedup'] >= GOAL_SPEEDUP else 'no'}; same peak jobs: "
        f"{'yes' if s['median_same_jobs'] else 'no'}; median peak IOPS within the accepted spread: "
        f"{'yes' if s['peak_iops_ok'] else 'no'})"
    )


def report_sizes(community: list[Qualification], diskq: list[Qualification], label: str) -> None:
    """The block-size profile beside the sweep: device time of each side, each size's median IOPS
    and their ratio, and the minute goal."""
    h_s = stats.median(q.sizes_s for q in community)
    d_s = stats.median(q.sizes_s for q in diskq)
    sweep_s = stats.median(q.device_s for q in diskq)
    by_hand = [{b: i for b, i, _ in q.sizes} for q in community]
    ours = [{b: i for b, i, _ in q.sizes} for q in diskq]
    rows = []
    for size in size_profile.SIZES:
        h = [run.get(size) for run in by_hand]
        d = [run.get(size) for run in ours]
        if None in h or None in d:
            continue
        rows.append(
            (
                size_profile.bs(size),
                f"{stats.median(h):,.0f}",
                f"{stats.median(d):,.0f}",
                f"{stats.ratio(stats.median(d), stats.median(h)):.3f}",
            )
        )
    print(stats.table(["size", "by hand IOPS (median)", f"{label} IOPS (median)", f"{label} / by hand"], rows))
    print()
    print(
        f"size profile: {d_s:.1f} s of device time against {h_s:.1f} s by hand ({stats.ratio(h_s, d_s):.2f}x less), "
        f"beside {sweep_s:.1f} s for the sweep; goal (under {size_profile.GOAL_S:g} s): "
        f"{'met' if max(q.sizes_s for q in diskq) < size_profile.GOAL_S else 'NOT met'} "
        f"(longest {max(q.sizes_s for q in diskq):.1f} s)"
    )


def _spread(values: list[float]) -> float:
    """The largest distance of one value from their median, as a fraction."""
    med = stats.median(values)
    return max(abs(stats.ratio(v, med) - 1) for v in values)


def per_point(community: list[Qualification], diskq: list[Qualification]) -> list[tuple[int, float, float, float]]:
    """For every job count both measured in every run: (numjobs, median diskq IOPS / median
    community IOPS, the protocol's own spread there, diskq's own spread there). Verdicts and the
    table use more points than the peak (the 1-job point, the OSD count's), so each is compared.

    >>> c = [Qualification("c", [(1, 100), (2, 200)], 0, 0, (2, 200)), Qualification("c", [(1, 110), (2, 180)], 0, 0, (2, 180))]
    >>> d = [Qualification("d", [(1, 105), (2, 190)], 0, 0, (2, 190)), Qualification("d", [(1, 105), (4, 300)], 0, 0, (4, 300))]
    >>> [(n, round(r, 3)) for n, r, _, _ in per_point(c, d)]
    [(1, 1.0)]
    """
    rows = []
    common = set.intersection(*(set(n for n, _ in q.curve) for q in community + diskq))
    for n in sorted(common):
        c = [dict(q.curve)[n] for q in community]
        d = [dict(q.curve)[n] for q in diskq]
        rows.append((n, stats.ratio(stats.median(d), stats.median(c)), _spread(c), _spread(d)))
    return rows


if __name__ == "__main__":
    sys.exit(main())
