"""Once `diskq bench` has begun an orderly stop, more signals change nothing: real signals sent
to a real bench on a loop device, several trials."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from diskq.probe.journal import Journal
from tests.conftest import needs_fio, needs_loop
from tests.test_cache import wc_file
from tests.test_kill_bench import holders


@needs_loop
@needs_fio
@pytest.mark.parametrize("trial", range(3))
@pytest.mark.parametrize("first", [signal.SIGINT, signal.SIGTERM])
def test_signals_after_the_first_do_not_change_the_outcome(make_loop, tmp_path, trial, first):
    dev = make_loop(128 * 1024 * 1024)
    jdir, out = tmp_path / "j", tmp_path / "r.json"
    bench = subprocess.Popen(
        [sys.executable, "-m", "diskq", "bench", dev, "--yes", "--jobs", "1,2", "--runtime", "3",
         "--cache", "both", "--no-flush-check", "-o", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "DISKQ_JOURNAL_DIR": str(jdir)},
    )
    try:
        deadline = time.monotonic() + 60
        while len(holders(dev) - {bench.pid}) < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
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
