"""Running fio or diskq from a benchmark so that an interrupted benchmark stops them cleanly."""

from __future__ import annotations

import signal
import subprocess


def run(argv: list[str], *, grace_s: float = 30.0, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``argv`` capturing its output as text. If the benchmark is interrupted (Ctrl-C,
    SIGTERM) while it runs, the child gets SIGINT, which both fio and diskq answer by stopping
    their writes (diskq also restores what it changed); it is killed only after ``grace_s``."""
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        out, err = child.communicate()
    except BaseException:
        if child.poll() is None:
            child.send_signal(signal.SIGINT)
            try:
                child.communicate(timeout=grace_s)
            except subprocess.TimeoutExpired:
                child.kill()
                child.communicate()
        raise
    return subprocess.CompletedProcess(argv, child.returncode, out, err)
