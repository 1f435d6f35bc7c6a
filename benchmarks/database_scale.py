#!/usr/bin/env python3
"""Scale of the database side: ``diskq db build`` and ``diskq site build`` over N synthetic
submissions (goal: 100 000 in under 60 s and 1 GiB; growth close to linear).

The submissions come from :mod:`diskq.database.synthetic` (valid files: ids, paths, raw fio
JSON behind every point; about 20 submissions per device model). Each command runs as a user
runs it, in its own process; we record its wall time, its CPU time and peak memory two ways:
the largest single process (``wait4`` maxrss) and the sum over the command and all its worker
processes, sampled from /proc every 50 ms (what the machine must actually hold). The index
page's size is reported too. ``db build`` runs twice over the same files with an empty user cache
directory (``XDG_CACHE_HOME``) at first: a cold build, then a rebuild, which may reuse whatever the
first one cached.

Run: ``.venv/bin/python benchmarks/database_scale.py [--quick] [--sizes 1000,10000,100000]
[--keep DIR]`` (no root needed). Generating 100 000 submissions takes several minutes and
about 1.5 GB of disk; ``--keep DIR`` keeps them for the next run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import stats

GOAL_N, GOAL_S, GOAL_BYTES = 100_000, 60.0, 1024**3
DISKQ = [sys.executable, "-m", "diskq"]


@dataclass(frozen=True)
class Usage:
    """What one command cost."""

    wall_s: float
    cpu_s: float
    maxrss_bytes: int  # the largest single process
    tree_peak_bytes: int  # the command and its workers together, sampled


def parse_status_rss(text: str) -> int:
    """Resident set size in bytes from the text of /proc/PID/status (``VmRSS:  1234 kB``); 0 when
    absent (a zombie or kernel thread)."""
    for line in text.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def descendants(pid: int, children_of: dict[int, list[int]]) -> list[int]:
    """``pid`` and every process below it in a {parent: [children]} map."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children_of.get(p, []))
    return out


def _children_map() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def _tree_rss(pid: int) -> int:
    total = 0
    for p in descendants(pid, _children_map()):
        try:
            with open(f"/proc/{p}/status") as f:
                total += parse_status_rss(f.read())
        except OSError:
            pass
    return total


def run_measured(argv: list[str], env: dict[str, str] | None = None) -> Usage:
    """Run ``argv``; its wall time, CPU time (with its workers), maxrss and sampled tree peak."""
    started = time.monotonic()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, **(env or {})})
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _tree_rss(child.pid))
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stderr = child.stderr.read().decode(errors="replace")  # until the command closes it
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - started
    done.set()
    sampler.join()
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with {child.returncode}: {stderr.strip()[-500:]}")
    return Usage(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, peak[0])


def generate(root: Path, n: int) -> float:
    """Write ``n`` synthetic submissions under ``root`` unless a complete set is already there;
    returns the seconds spent (0 when reused)."""
    from diskq.database.synthetic import write_synthetic

    marker = root / ".complete"
    if marker.exists() and marker.read_text().strip() == str(n):
        return 0.0
    if root.exists():
        shutil.rmtree(root)
    started = time.monotonic()
    write_synthetic(root, n, seed=n)
    marker.write_text(f"{n}\n")
    return time.monotonic() - started


def linearity(sizes: list[int], seconds: list[float]) -> str:
    if len(sizes) < 2:
        return "needs two sizes"
    return f"time ~ N^{stats.growth_exponent(sizes, seconds):.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000", help="submission counts (default 1000,10000,100000)")
    ap.add_argument("--keep", type=Path, help="generate submissions here and keep them (reused when complete)")
    ap.add_argument("--quick", action="store_true", help="sizes 300 and 3000")
    args = ap.parse_args(argv)
    sizes = [300, 3000] if args.quick else [int(x) for x in args.sizes.split(",")]

    base = args.keep or Path(tempfile.mkdtemp(prefix="diskq-scale-"))
    rows, builds, rebuilds, sites = [], [], [], []
    try:
        print(
            f"# database scale: N = {sizes}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}", flush=True
        )
        for n in sizes:
            subs, out = base / f"submissions-{n}", base / f"out-{n}"
            gen_s = generate(subs, n)
            if out.exists():
                shutil.rmtree(out)
            out.mkdir(parents=True)
            db = out / "devices.db"
            env = {"XDG_CACHE_HOME": str(out / "cache")}
            build_argv = DISKQ + ["db", "build", "--submissions", str(subs), "--db", str(db)]
            b = run_measured(build_argv, env)
            warm = run_measured(build_argv, env)
            rebuilds.append(warm)
            s = run_measured(
                DISKQ + ["site", "build", "--db", str(db), "--out", str(out / "site"), "--submissions", str(subs)]
            )
            index = (out / "site" / "index.html").stat().st_size
            builds.append(b)
            sites.append(s)
            print(
                f"N={n}: generated in {gen_s:.0f} s; db build {b.wall_s:.1f} s (CPU {b.cpu_s:.1f} s, "
                f"{b.tree_peak_bytes / 2**20:.0f} MiB), rebuild {warm.wall_s:.1f} s "
                f"({warm.tree_peak_bytes / 2**20:.0f} MiB); site build {s.wall_s:.1f} s (CPU {s.cpu_s:.1f} s, "
                f"{s.tree_peak_bytes / 2**20:.0f} MiB); index.html {index / 1024:.0f} KiB, devices.db "
                f"{db.stat().st_size / 2**20:.1f} MiB",
                flush=True,
            )
            rows.append(
                (
                    f"{n:,}",
                    f"{b.wall_s:.1f}",
                    f"{b.cpu_s:.1f}",
                    f"{b.maxrss_bytes / 2**20:.0f}",
                    f"{b.tree_peak_bytes / 2**20:.0f}",
                    f"{warm.wall_s:.1f}",
                    f"{warm.tree_peak_bytes / 2**20:.0f}",
                    f"{s.wall_s:.1f}",
                    f"{s.cpu_s:.1f}",
                    f"{s.tree_peak_bytes / 2**20:.0f}",
                    f"{index / 1024:,.0f}",
                )
            )
            shutil.rmtree(out)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)

    print()
    print(
        stats.table(
            [
                "N",
                "db build s",
                "db CPU s",
                "db max proc MiB",
                "db all procs MiB",
                "rebuild s",
                "rebuild all procs MiB",
                "site build s",
                "site CPU s",
                "site all procs MiB",
                "index.html KiB",
            ],
            rows,
        )
    )
    print()
    print(
        f"growth: db build {linearity(sizes, [b.wall_s for b in builds])}, "
        f"rebuild {linearity(sizes, [w.wall_s for w in rebuilds])}, "
        f"site build {linearity(sizes, [s.wall_s for s in sites])}"
    )
    if GOAL_N in sizes:
        i = sizes.index(GOAL_N)
        for label, build in (("cold db build", builds[i]), ("rebuild", rebuilds[i])):
            total = build.wall_s + sites[i].wall_s
            mem = max(build.tree_peak_bytes, sites[i].tree_peak_bytes)
            ok = total < GOAL_S and mem < GOAL_BYTES
            print(
                f"N={GOAL_N:,}, {label} + site build: {total:.1f} s, peak {mem / 2**20:.0f} MiB; "
                f"goal (< {GOAL_S:g} s, < 1 GiB) {'MET' if ok else 'NOT MET'}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
