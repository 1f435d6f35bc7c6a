"""bench -> sign -> validate with the real CLI on a real document: a scratch loop device measured
by ``diskq bench`` (flush-check step, scaling, verdicts and raw fio output all present), signed
with a key made here, validated; then the figures that drive verdicts, the flush-check step and
the verdicts themselves are edited in the result before signing, and each edit is caught.

``--scratch`` makes and detaches its own loop device, so this needs root, fio and losetup.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import needs_fio, needs_loop
from tests.test_submission_support import HAVE_SSH_KEYGEN, allowed_signers, keygen

pytestmark = [needs_fio, needs_loop, pytest.mark.skipif(not HAVE_SSH_KEYGEN, reason="needs ssh-keygen")]


def diskq(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "diskq", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def bench_result(tmp_path_factory) -> Path:
    """A real result document from ``diskq bench --scratch`` (made once for this module)."""
    work = tmp_path_factory.mktemp("bench")
    out = diskq(
        "bench",
        "--scratch",
        "--yes",
        "--runtime",
        "2",
        "--jobs",
        "1,2",
        "-o",
        "r.json",
        cwd=work,
        env={"DISKQ_JOURNAL_DIR": str(work / "journal")},
    )
    assert out.returncode == 0, out.stderr
    return work / "r.json"


def _sign_and_validate(result: dict, work: Path, key: Path, allowed: Path) -> subprocess.CompletedProcess:
    work.mkdir()
    doc = work / "r.json"
    doc.write_text(json.dumps(result, indent=2))
    signed = diskq("sign", str(doc), "-f", str(key), "--github", "octocat", cwd=work)
    assert signed.returncode == 0, signed.stderr
    return diskq("validate", "submissions", "--allowed-signers", str(allowed), cwd=work)


def _problems(out: subprocess.CompletedProcess) -> list[tuple[str, str]]:
    """(field, message) of each problem line ``PATH: FIELD: message``."""
    assert "Traceback" not in out.stderr
    return [tuple(line.split(": ", 2)[1:]) for line in out.stdout.splitlines()]


def test_bench_sign_validate_and_edits_that_are_caught(bench_result, tmp_path):
    result = json.loads(bench_result.read_text())
    # the document has everything a bench result carries
    assert result["verdicts"] is not None
    for run in result["runs"]:
        assert run["nosync"]["fio"] is not None and run["scaling"] is not None and run["flush_check"] is not None
        assert all(p["fio"] is not None and p["sync_lat_us"]["p99"] is not None for p in run["points"])
    key = keygen(tmp_path)
    allowed = allowed_signers(tmp_path / "allowed", "octocat", key)

    ok = _sign_and_validate(result, tmp_path / "as-measured", key, allowed)
    assert ok.returncode == 0 and _problems(ok) == [], ok.stdout + ok.stderr

    # the 1-job fdatasync p99 decides etcd's verdict: claim a fortieth of it
    edited = json.loads(json.dumps(result))
    edited["runs"][0]["points"][0]["sync_lat_us"]["p99"] /= 40
    out = _sign_and_validate(edited, tmp_path / "p99", key, allowed)
    assert out.returncode == 1
    p99 = [msg for field, msg in _problems(out) if field == "result.runs[0].points[0].sync_lat_us.p99"]
    assert len(p99) == 1 and "does not match fio's" in p99[0], out.stdout

    # the flush-check step decides whether a run is safe
    edited = json.loads(json.dumps(result))
    nosync = edited["runs"][0]["nosync"]
    nosync["iops"] *= 4
    out = _sign_and_validate(edited, tmp_path / "nosync", key, allowed)
    assert out.returncode == 1
    assert "result.runs[0].nosync.iops" in [field for field, _ in _problems(out)], out.stdout

    # the verdicts themselves (a higher 1-job rate claims more whatever this machine measured)
    edited = json.loads(json.dumps(result))
    verdicts = edited["verdicts"]
    verdicts["ceph_waldb"]["tier"] = "excellent"
    verdicts["ceph_waldb"]["iops"] = (verdicts["ceph_waldb"]["iops"] or 1.0) * 10
    verdicts["etcd"]["passes"] = True
    out = _sign_and_validate(edited, tmp_path / "verdicts", key, allowed)
    assert out.returncode == 1
    lines = _problems(out)
    assert [field for field, _ in lines] == ["result.verdicts"], out.stdout
    assert lines[0][1].startswith("claims a better outcome than its figures give: ")
    assert "ceph_waldb.iops" in lines[0][1]
