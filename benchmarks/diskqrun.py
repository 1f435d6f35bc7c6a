"""``diskq bench`` run as a user runs it (a separate process, ``--json`` on stdout), and the
figures the benchmarks read from its result document."""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass

from benchmarks import child
from diskq.bench.fiojson import option_seconds

#: the same interpreter (and so the same installed diskq) as the benchmark itself
DISKQ = [sys.executable, "-m", "diskq"]


@dataclass(frozen=True)
class BenchRun:
    """One ``diskq bench``: its points as (numjobs, IOPS, fio runtime in s), and its wall time."""

    points: list[tuple[int, float, float]]
    wall_s: float
    notes: list[str]

    @property
    def device_s(self) -> float:
        """Seconds of fio I/O, summed over the steps (what the device spent being measured),
        the early-ended steps a confirmation replaced included."""
        return sum(runtime for _, _, runtime in self.points) + sum(t for _, _, t in replaced_steps(self.notes))

    @property
    def peak(self) -> tuple[int, float]:
        """(numjobs, IOPS) of the best point, the fewest jobs among equals."""
        n, iops, _ = max(self.points, key=lambda p: (p[1], -p[0]))
        return n, iops


#: a peak or a point an OSD count turns on, measured again with the longer window
_CONFIRMED = re.compile(r"confirmed at (\d+) jobs .*?: ([\d,.]+) IOPS after ([\d.]+) s")


def replaced_steps(notes: list[str]) -> list[tuple[int, float, float]]:
    """(numjobs, IOPS, seconds) of the short steps that a confirmation replaced, from the run's
    notes (the document keeps the confirmed point; the replaced step is named there with the
    seconds it wrote, its ramp included).

    >>> replaced_steps(["peak confirmed at 32 jobs with the longer window: 16,262 IOPS "
    ...                 "after 5.0 s, then 20,011 IOPS after 8.0 s", "search stopped: ...",
    ...                 "point deciding the OSD count confirmed at 8 jobs with the longer window: 9,000 IOPS "
    ...                 "after 5.0 s, then 9,100 IOPS after 8.0 s"])
    [(32, 16262.0, 5.0), (8, 9000.0, 5.0)]
    """
    out = []
    for note in notes:
        m = _CONFIRMED.search(note)
        if m:
            out.append((int(m.group(1)), float(m.group(2).replace(",", "")), float(m.group(3))))
    return out


def points_of(doc: dict) -> list[tuple[int, float, float]]:
    """(numjobs, IOPS, seconds written) of every fdatasync point of the first run of a result
    document: fio's runtime plus the ramp it left out of its figures (``ramp_time`` in the
    point's fio JSON). The flush-check step (``nosync``) is not a point and is not counted here.

    >>> points_of({"runs": [{"points": [{"numjobs": 1, "iops": 10.0, "runtime_ms": 7000,
    ...     "fio": {"jobs": [{"job options": {"ramp_time": "1", "runtime": "7"}}]}}]}]})
    [(1, 10.0, 8.0)]
    """
    runs = doc.get("runs") or []
    if not runs:
        raise ValueError("the result document has no runs")
    return [
        (
            int(p["numjobs"]),
            float(p["iops"]),
            int(p["runtime_ms"]) / 1000.0 + (option_seconds(p.get("fio"), "ramp_time") or 0.0),
        )
        for p in runs[0]["points"]
    ]


def notes_of(doc: dict) -> list[str]:
    runs = doc.get("runs") or [{}]
    return list(doc.get("notes") or []) + list(runs[0].get("notes") or [])


def bench(device: str, *args: str, source: str | None = None) -> tuple[BenchRun, dict]:
    """``diskq bench DEVICE --yes --json --cache keep ARGS...``; the result file goes to a temp dir.
    ``source``: a checkout of another diskq version (its ``src`` directory goes first on the
    module path), to run an earlier method beside the current one."""
    env = None
    if source is not None:
        env = dict(os.environ, PYTHONPATH=os.path.join(os.path.abspath(source), "src"))
    with tempfile.TemporaryDirectory(prefix="diskq-benchmark-out-") as out:
        argv = DISKQ + [
            "bench",
            device,
            "--yes",
            "--json",
            "--cache",
            "keep",
            "-o",
            os.path.join(out, "result.json"),
            *args,
        ]
        started = time.monotonic()
        done = child.run(argv, env=env)
        wall = time.monotonic() - started
    if done.returncode != 0:
        raise RuntimeError(f"diskq bench exited with {done.returncode}: {done.stderr.strip()[-500:]}")
    doc = json.loads(done.stdout)
    return BenchRun(points=points_of(doc), wall_s=wall, notes=notes_of(doc)), doc
