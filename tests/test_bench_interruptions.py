"""Interruptions of a real `diskq bench` on a loop device, with real signals: once an orderly stop
has begun, more signals change nothing; a step that something else stopped is not a point."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from diskq.probe.journal import Journal
from tests.conftest import fio_processes, needs_fio, needs_loop, wc_file
from tests.test_kill_bench import holders


@needs_loop
@needs_fio
@pytest.mark.parametrize("trial", range(3))
@pytest.mark.parametrize("first", [signal.SIGINT, signal.SIGTERM])
def test_signals_after_the_first_do_not_change_the_outcome(make_loop, tmp_path, trial, first):
    dev = make_loop(128 * 1024 * 1024)
    jdir, out = tmp_path / "j", tmp_path / "r.json"
    bench = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "diskq",
            "bench",
            dev,
            "--yes",
            "--jobs",
            "1,2",
            "--runtime",
            "3",
            "--cache",
            "both",
            "--no-flush-check",
            "-o",
            str(out),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "DISKQ_JOURNAL_DIR": str(jdir)},
    )
    try:
        deadline = time.monotonic() + 60  # until fio's first step writes (probes open the device too)
        while (fio_main(dev, 1) is None or len(holders(dev) - {bench.pid}) < 1) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert fio_main(dev, 1) is not None, "the first step never started"
        time.sleep(0.2 * trial)
        bench.send_signal(first)
        # a second Ctrl-C, a `kill`, a closing terminal: keep them coming until diskq has exited,
        # through the stop, the restore, the document and the interpreter's exit
        later = [signal.SIGTERM, signal.SIGINT, signal.SIGHUP]
        deadline = time.monotonic() + 60
        n = 0
        while bench.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005 if n else 0.1)  # the first follow-up 0.1 s after, then a stream
            try:
                bench.send_signal(later[n % 3])
            except ProcessLookupError:
                break
            n += 1
        err = bench.stderr.read()
        bench.wait(timeout=30)
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.wait()
    assert bench.returncode == 130, f"exit {bench.returncode} after {n} more signals: {err}"
    doc = json.loads(out.read_text())
    assert doc["interrupted"] is True
    assert wc_file(dev).read_text().strip() == "write back"
    assert Journal(jdir).pending() == []
    assert "Traceback" not in err


def fio_main(dev: str, numjobs: int) -> int | None:
    """The pid of fio's main process running ``numjobs`` jobs on ``dev`` (its jobs are fio
    processes whose parent is fio)."""
    fios = fio_processes(dev)
    wanted = f"--numjobs={numjobs}".encode()
    return next((pid for pid, (ppid, argv) in fios.items() if wanted in argv and ppid not in fios), None)


@needs_loop
@needs_fio
def test_a_step_stopped_by_someone_else_is_not_an_ordinary_point(make_loop, tmp_path):
    dev = make_loop(128 * 1024 * 1024)
    out = tmp_path / "r.json"
    bench = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "diskq",
            "bench",
            dev,
            "--yes",
            "--jobs",
            "1,2",
            "--runtime",
            "4",
            "--cache",
            "keep",
            "--no-flush-check",
            "-o",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "DISKQ_JOURNAL_DIR": str(tmp_path / "j")},
    )
    try:
        deadline = time.monotonic() + 60
        while (fio_main(dev, 2) is None or len(holders(dev) - {bench.pid}) < 2) and time.monotonic() < deadline:
            time.sleep(0.02)
        pid = fio_main(dev, 2)
        assert pid is not None, "the 2-job step never started"
        time.sleep(0.3)
        os.kill(pid, signal.SIGTERM)  # not diskq's doing
        _, err = bench.communicate(timeout=60)
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.wait()
    assert bench.returncode == 1, err
    assert (
        "diskq: error: the step at 2 jobs was cut short, not by diskq: fio was terminated by signal 15 (SIGTERM)" in err
    )
    assert "Traceback" not in err and f"partial result written to {out}" in err.replace("\n", "")
    doc = json.loads(out.read_text())  # the partial result is kept, and says what it is
    assert doc["interrupted"] is True
    [run] = doc["runs"]
    assert run["interrupted"] is True
    assert [(p["numjobs"], p["interrupted"]) for p in run["points"]] == [(1, False), (2, True)]
    assert run["points"][1]["runtime_ms"] < 4000 * 0.98
    assert run["peak"]["numjobs"] == 1  # the cut-short step is left out of the peak
    assert run["scaling"] is None  # and of the curve: one completed step cannot be classified
    assert "cache on: interrupted steps left out" in doc["verdicts"]["notes"]
    assert any("cut short" in note for note in doc["notes"])
