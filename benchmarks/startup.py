#!/usr/bin/env python3
"""CLI start-up: wall time of ``diskq --help`` and ``diskq lookup`` (goal under 0.3 s).

Each command runs many times, the commands taking turns, and the median is reported with the
median CPU time (user + system, from ``wait4``), which is far less disturbed by other load on the
machine than the wall time. Two floors put the figures in proportion: the bare interpreter and
the import of the CLI framework alone. ``diskq lookup`` searches a small devices.db built from
synthetic submissions in a temp directory, and the committed devices.db (its product lines) by a
part number and by the name of a line with nothing measured.

Run: ``.venv/bin/python benchmarks/startup.py [--quick]`` (no root needed). To see which import is
slow: ``.venv/bin/python -X importtime -m diskq lookup X 2>&1 | sort -t'|' -k2 -n | tail``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import stats

GOAL_S = 0.3


def diskq_exe() -> list[str]:
    """The ``diskq`` console script next to this interpreter (what users run), else ``-m diskq``."""
    script = Path(sys.executable).with_name("diskq")
    return [str(script)] if script.exists() else [sys.executable, "-m", "diskq"]


def timed(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run; the output is discarded, a failure raises."""
    started = time.monotonic()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - started
    stderr = child.stderr.read().decode(errors="replace") if child.stderr else ""
    child.stderr.close()
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with {child.returncode}: {stderr.strip()[-300:]}")
    return wall, usage.ru_utime + usage.ru_stime


def measure(commands: dict[str, list[str]], runs: int) -> dict[str, tuple[list[float], list[float]]]:
    """Run every command ``runs`` times, taking turns; {label: (wall times, CPU times)}."""
    out: dict[str, tuple[list[float], list[float]]] = {label: ([], []) for label in commands}
    for _ in range(runs):
        for label, argv in commands.items():
            wall, cpu = timed(argv)
            out[label][0].append(wall)
            out[label][1].append(cpu)
    return out


def small_db(workdir: str) -> tuple[str, str]:
    """A devices.db of 200 synthetic submissions; returns (its path, a model name in it)."""
    from diskq.database.synthetic import synthetic_results, write_synthetic

    subs = os.path.join(workdir, "submissions")
    write_synthetic(Path(subs), 200, seed=7)
    db = os.path.join(workdir, "devices.db")
    subprocess.run(diskq_exe() + ["db", "build", "--submissions", subs, "--db", db], check=True, capture_output=True)
    model = next(synthetic_results(1, seed=7, devices=10))[0]["device"]["model"]
    return db, model


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=30, help="runs of each command (default 30)")
    ap.add_argument("--quick", action="store_true", help="10 runs of each command")
    args = ap.parse_args(argv)
    if args.quick:
        args.runs = 10
    exe = diskq_exe()
    with tempfile.TemporaryDirectory(prefix="diskq-startup-") as workdir:
        db, model = small_db(workdir)
        query = model.split()[-1].lower()  # a whole word: a model number is never matched by a fragment
        committed = str(Path(__file__).resolve().parent.parent / "devices.db")
        commands = {
            "python -c pass (floor)": [sys.executable, "-c", "pass"],
            "python -c 'import typer' (floor)": [sys.executable, "-c", "import typer"],
            "diskq --help": exe + ["--help"],
            "diskq lookup --help": exe + ["lookup", "--help"],
            f"diskq lookup {query}": exe + ["lookup", query, "--db", db],
            # the committed database: its product lines, a part number read through its scheme
            "diskq lookup 'INTEL SSDSC2KB240G8' (devices.db)": exe
            + ["lookup", "INTEL SSDSC2KB240G8", "--db", committed],
            "diskq lookup 'Micron 7450 MAX' (devices.db)": exe + ["lookup", "Micron 7450 MAX", "--db", committed],
        }
        results = measure(commands, args.runs)
    load = os.getloadavg()[0]
    print(f"# CLI start-up: {args.runs} runs each, taking turns; load average {load:.1f} on {os.cpu_count()} CPUs")
    rows = []
    for label, (walls, cpus) in results.items():
        is_goal = label.startswith("diskq")
        verdict = ("yes" if stats.median(walls) < GOAL_S else "NO") if is_goal else ""
        rows.append((label, f"{stats.median(walls):.3f}", f"{min(walls):.3f}", f"{stats.median(cpus):.3f}", verdict))
    print(stats.table(["command", "wall s (median)", "wall s (min)", "CPU s (median)", f"< {GOAL_S:g} s"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
