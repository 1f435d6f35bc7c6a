#!/usr/bin/env python3
"""Stop rule and lean: replayed over recorded one-second IOPS traces of full 20 s steps.

Two questions, answered without writing to a device:

1. **A stop rule.** Would ending each step once the 95 % interval of its mean is narrow enough
   (:mod:`diskq.bench.stoprule`; a floor of 3 s, the current 7 s window as the cap, after the 1 s
   ramp) save device time, and how far would its figure lie from the full step's mean (the
   community protocol's 20 s figure)? One row per interval width, beside the fixed 7 s window
   that method version 3 measures.
2. **The lean.** Does the rate move within a step, and by how much does diskq's answer window
   (seconds 1-8) read above or below the full step? Per backing and job count: the window's
   figure over the full step's, the trend across the whole step and across the window.
3. **Settling windows** (method version 4's answer steps): the 7 s window goes on while the slope
   of its last 7 seconds is steeper than a limit (fio's ``iops_slope``), up to a cap. Per limit
   and cap, at 16 jobs and more and below: steps above and below the full step, the median ratio,
   the share within 5 %, and the seconds measured.

A trace's last second is one that not every job closed (it reads 4-100 % of the step's rate), so
"the full step" is the mean of every closed second: all but the last.

Traces: ``tests/fixtures/fio_iops_log/traces_20s*.json`` (each a ``{"traces": [{"backing",
"numjobs", "iops": [...]}, ...]}``), plus any file given with ``--traces``.

Run: ``.venv/bin/python benchmarks/stop_rule.py [--traces FILE ...]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import stats
from diskq.bench.steady import settling_iops, window_iops
from diskq.bench.stoprule import StopRule, rule_iops, stop_second, trend_pct

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "fio_iops_log"
WIDTHS = (1.0, 2.0, 3.0, 5.0, 7.5, 10.0, 15.0)
#: the answer window of method version 3: 7 s after a 1 s ramp
RAMP_S, WINDOW_S = 1, 7


def load(paths: list[Path]) -> list[dict]:
    """Every trace of the given files, each tagged with the file it came from."""
    out = []
    for path in paths:
        for t in json.loads(path.read_text())["traces"]:
            out.append({**t, "file": path.name})
    return out


def full_mean(samples: list[float]) -> float:
    """The full step's figure: the mean of every closed second (the last one, which not every job
    closed, left out).

    >>> full_mean([100, 110, 90, 12])
    100.0
    """
    closed = samples[:-1] if len(samples) > 1 else samples
    return sum(closed) / len(closed)


#: the settling windows replayed: (slope limit in % a second, cap in measured seconds); None: the
#: fixed 7 s window of method version 3
SETTLING = ((None, WINDOW_S), (2.0, 19), (1.0, 12), (1.0, 19), (0.75, 19), (0.5, 12), (0.5, 19))


def error_pct(figure: float, reference: float) -> float:
    """``figure`` against ``reference``, in % (positive: reads high).

    >>> round(error_pct(110, 100), 9), round(error_pct(90, 100), 9)
    (10.0, -10.0)
    """
    return (figure / reference - 1) * 100 if reference else 0.0


def rule_rows(traces: list[list[float]]) -> list[tuple]:
    """One row per stop rule, and the fixed window first: steps, measured s, device time against
    the fixed window, signed median error, median, 90th percentile and largest error, share within 10 %."""

    def row(label: str, lengths: list[int], errors: list[float]) -> tuple:
        absolute = sorted(abs(e) for e in errors)
        device = sum(RAMP_S + t for t in lengths) / (len(lengths) * (RAMP_S + WINDOW_S))
        return (
            label,
            len(lengths),
            f"{sum(lengths) / len(lengths):.1f}",
            f"{device:.2f}",
            f"{stats.median(errors):+.1f}",
            f"{stats.median(absolute):.1f}",
            f"{absolute[int(0.9 * (len(absolute) - 1))]:.1f}",
            f"{absolute[-1]:.1f}",
            f"{sum(a <= 10 for a in absolute) / len(absolute) * 100:.0f} %",
        )

    fixed = [error_pct(window_iops(t, RAMP_S, WINDOW_S), full_mean(t)) for t in traces]
    rows = [row(f"fixed {WINDOW_S} s window (method 3)", [WINDOW_S] * len(traces), fixed)]
    for width in WIDTHS:
        rule = StopRule(width, floor_s=3, cap_s=WINDOW_S, ramp_s=RAMP_S)
        lengths = [stop_second(t, rule) for t in traces]
        errors = [error_pct(rule_iops(t, rule), full_mean(t)) for t in traces]
        rows.append(row(f"CI within {width:g} %", lengths, errors))
    return rows


def lean_rows(tagged: list[dict]) -> list[tuple]:
    """Per (file, backing, numjobs): the answer window over the full step, and the trends."""
    groups: dict[tuple, list[list[float]]] = defaultdict(list)
    for t in tagged:
        groups[(t["file"], t["backing"], t["numjobs"])].append(t["iops"])
    rows = []
    for (name, backing, numjobs), traces in sorted(groups.items()):
        ratios = [window_iops(t, RAMP_S, WINDOW_S) / full_mean(t) for t in traces]
        whole = [trend_pct(t) for t in traces]
        window = [trend_pct(t[RAMP_S : RAMP_S + WINDOW_S]) for t in traces]
        rows.append(
            (
                name.removesuffix(".json"),
                backing,
                numjobs,
                len(traces),
                f"{stats.median(ratios):.3f}",
                " ".join(f"{r:.2f}" for r in ratios),
                f"{stats.median(whole):+.0f}",
                f"{stats.median(window):+.0f}",
            )
        )
    return rows


def settle_rows(tagged: list[dict]) -> list[tuple]:
    """One row per settling window and group of job counts: steps above and below the full step,
    the median ratio, the share within 5 %, and the mean and longest measured seconds."""
    rows = []
    for label, chosen in (("16 and more", lambda j: j >= 16), ("below 16", lambda j: j < 16)):
        for limit, cap in SETTLING:
            ratios, lengths = [], []
            for t in tagged:
                if not chosen(t["numjobs"]):
                    continue
                closed = t["iops"][:-1]
                if limit is None:
                    figure, measured = window_iops(closed, RAMP_S, WINDOW_S), WINDOW_S
                else:
                    figure, measured = settling_iops(closed, RAMP_S, WINDOW_S, limit, cap)
                ratios.append(figure / full_mean(t["iops"]))
                lengths.append(measured)
            name = "fixed 7 s (method 3)" if limit is None else f"slope {limit:g} %/s, up to {cap} s"
            rows.append(
                (
                    label,
                    name,
                    len(ratios),
                    sum(r > 1 for r in ratios),
                    sum(r < 1 for r in ratios),
                    f"{stats.median(ratios):.3f}",
                    f"{sum(abs(r - 1) <= 0.05 for r in ratios) / len(ratios) * 100:.0f} %",
                    f"{sum(lengths) / len(lengths):.1f}",
                    max(lengths),
                )
            )
    return rows


def sign_test(tagged: list[dict], min_jobs: int) -> tuple[int, int, float]:
    """Steps at ``min_jobs`` jobs or more whose window reads above / below the full step, and the
    median ratio."""
    ratios = [
        window_iops(t["iops"], RAMP_S, WINDOW_S) / full_mean(t["iops"]) for t in tagged if t["numjobs"] >= min_jobs
    ]
    return sum(r > 1 for r in ratios), sum(r < 1 for r in ratios), stats.median(ratios)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--traces", type=Path, action="append", default=[], help="another JSON file of recorded traces (repeatable)"
    )
    args = ap.parse_args(argv)
    tagged = load(sorted(FIXTURES.glob("traces_20s*.json")) + args.traces)
    traces = [t["iops"] for t in tagged]
    print(f"# stop rule and lean: {len(traces)} recorded 20 s steps")
    print()
    print(
        stats.table(
            [
                "rule",
                "steps",
                "measured s",
                "device time vs fixed",
                "median error % (signed)",
                "median error %",
                "90th pct error %",
                "max error %",
                "within 10 %",
            ],
            rule_rows(traces),
        )
    )
    print()
    print(
        stats.table(
            [
                "traces",
                "backing",
                "jobs",
                "steps",
                "window / full (median)",
                "each",
                "trend over 20 s %",
                "trend over the window %",
            ],
            lean_rows(tagged),
        )
    )
    print()
    print(
        stats.table(
            [
                "jobs",
                "answer step",
                "steps",
                "above",
                "below",
                "median ratio",
                "within 5 %",
                "measured s (mean)",
                "measured s (max)",
            ],
            settle_rows(tagged),
        )
    )
    above, below, median = sign_test(tagged, 16)
    print()
    print(
        f"16 jobs and more: the answer window reads above the full step in {above} steps, below in {below}; "
        f"median {median:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
