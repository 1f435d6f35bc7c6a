#!/usr/bin/env python3
"""``diskq fleet report`` over many result documents: wall time, CPU time and peak memory.

A fleet of ``--hosts`` hosts with ``--drives`` drives each (1 000 documents by default) is
written as a playbook leaves it (``<host>/<device>.json`` and ``<host>/status.json``), from the
synthetic result documents the database benchmarks use, a few models and firmwares, some drives
slowed down to be flagged. The report then runs several times as ``diskq fleet report DIR --json``
(the command a user runs, start-up included) and the median is printed against the goal of a few
seconds. No root needed.

Run: ``.venv/bin/python benchmarks/fleet_report.py [--quick] [--hosts 50 --drives 20]``
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

GOAL_S = 5.0
MODELS = [
    ("SAMSUNG MZ7LH960HAJR", "HXT7404Q", 12680),
    ("INTEL SSDSC2KB480G8", "XCV10132", 9800),
    ("Micron_5300_MTFDDAK3T8TDS", "D3MU001", 7400),
    ("KIOXIA KCD6XLUL3T84", "0108", 31000),
]


def write_fleet(root: Path, hosts: int, drives: int, seed: int = 0) -> int:
    """Write ``hosts`` x ``drives`` result documents and a status file per host; returns the count."""
    from diskq.database.synthetic import result_document

    rng = random.Random(seed)
    count = 0
    for h in range(hosts):
        host = root / f"osd-{h:03d}"
        host.mkdir(parents=True)
        model, firmware, solo = MODELS[h % len(MODELS)]
        benches = []
        for d in range(drives):
            f = rng.gauss(1.0, 0.04) * (0.5 if rng.random() < 0.02 else 1.0)
            curve = {n: solo * f * n**0.8 for n in (1, 2, 4, 8, 16)}
            name = f"sd{chr(ord('a') + d % 26)}{d // 26 or ''}"
            (host / f"{name}.json").write_text(json.dumps(result_document(model, {"off": curve}, firmware=firmware)))
            benches.append({"path": f"/dev/{name}", "name": name, "rc": 0, "result": f"{name}.json", "error": ""})
            count += 1
        (host / "status.json").write_text(
            json.dumps({"host": host.name, "state": "done", "candidates": [], "benches": benches})
        )
    return count


def run_once(results: Path) -> float:
    """Wall seconds of one ``diskq fleet report --json`` (its output must be a JSON report)."""
    exe = Path(sys.executable).with_name("diskq")
    argv = [str(exe)] if exe.exists() else [sys.executable, "-m", "diskq"]
    started = time.monotonic()
    proc = subprocess.Popen(
        [*argv, "fleet", "report", str(results), "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = proc.communicate()
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"diskq fleet report failed: {err.decode()[-500:]}")
    json.loads(out)
    return wall


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=50)
    ap.add_argument("--drives", type=int, default=20, help="drives per host")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="10 hosts x 10 drives, 3 runs")
    args = ap.parse_args(argv)
    if args.quick:
        args.hosts, args.drives, args.runs = 10, 10, 3
    with tempfile.TemporaryDirectory(prefix="diskq-fleet-bench-") as tmp:
        root = Path(tmp) / "results"
        n = write_fleet(root, args.hosts, args.drives)
        walls, cpus, rss = [], [], []
        for _ in range(args.runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall = run_once(root)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            walls.append(wall)
            cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
            rss.append(after.ru_maxrss * 1024)  # the largest child so far, in bytes
        med = statistics.median(walls)
        print("| documents | hosts | median wall | median CPU | peak RSS |")
        print("|---|---|---|---|---|")
        print(f"| {n} | {args.hosts} | {med:.2f} s | {statistics.median(cpus):.2f} s | {max(rss) / 2**20:.0f} MiB |")
        print(f"goal: under {GOAL_S:.0f} s for {n} documents: {'MET' if med < GOAL_S else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
