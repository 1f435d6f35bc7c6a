"""An interrupted bench result is never taken for a complete sweep: `diskq sign` refuses it,
`diskq validate` reports it, `db build` skips it and says why. The result is a real `diskq bench`
on a loop device stopped with a real SIGINT in its second step."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from diskq.result import ResultDocument
from diskq.submission import paths
from diskq.submission.legacy import dump
from diskq.submission.model import Contributor
from diskq.submission.sign import make_submission, sign_submission
from tests.conftest import needs_fio, needs_loop
from tests.test_bench_interruptions import fio_main, holders
from tests.test_submission_support import HAVE_SSH_KEYGEN, keygen

pytestmark = [needs_fio, needs_loop, pytest.mark.skipif(not HAVE_SSH_KEYGEN, reason="needs ssh-keygen")]


def diskq(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "diskq", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory) -> dict:
    """A real result document of a bench stopped by Ctrl-C (SIGINT) during its 2-job step."""
    work = tmp_path_factory.mktemp("bench")
    img = work / "disk.img"
    with open(img, "wb") as f:
        f.truncate(128 * 1024 * 1024)
    dev = subprocess.run(
        ["losetup", "--find", "--show", str(img)], check=True, capture_output=True, text=True
    ).stdout.strip()
    try:
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
                "keep",
                "--no-flush-check",
                "-o",
                str(work / "r.json"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "DISKQ_JOURNAL_DIR": str(work / "j")},
        )
        deadline = time.monotonic() + 60
        while (fio_main(dev, 2) is None or len(holders(dev) - {bench.pid}) < 2) and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)
        bench.send_signal(signal.SIGINT)
        _, err = bench.communicate(timeout=60)
        assert bench.returncode == 130, err
        assert "partial" in err and "diskq sign" not in err  # no invitation to contribute it
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True)
    doc = json.loads((work / "r.json").read_text())
    assert doc["interrupted"] is True and doc["runs"][0]["points"][1]["interrupted"] is True
    return doc


def _submit(result: dict, root: Path, key: Path) -> Path:
    """Sign ``result`` the way `diskq sign` would, without its refusal, into ``root``."""
    sub = make_submission(ResultDocument.model_validate(result), contributor=Contributor(github="octocat"))
    signed = sign_submission(sub, key, principal="octocat")
    path = root / "submissions" / paths.relative_path(signed.result.device, signed.id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump(signed), encoding="utf-8")
    return path


def _fields(out: subprocess.CompletedProcess) -> list[str]:
    assert "Traceback" not in out.stderr
    return [line.split(": ", 2)[1] for line in out.stdout.splitlines()]


def test_sign_refuses_an_interrupted_result(interrupted, tmp_path):
    doc = tmp_path / "r.json"
    doc.write_text(json.dumps(interrupted))
    key = keygen(tmp_path)
    out = diskq("sign", str(doc), "-f", str(key), "--github", "octocat", cwd=tmp_path)
    assert out.returncode == 5, out.stderr
    assert f"diskq: error: cannot sign {doc}: result.interrupted: the bench was stopped before the end" in out.stderr
    assert "Traceback" not in out.stderr and not (tmp_path / "submissions").exists()


def test_validate_and_db_build_refuse_an_interrupted_result(interrupted, tmp_path):
    path = _submit(interrupted, tmp_path, keygen(tmp_path))
    out = diskq("validate", "submissions", cwd=tmp_path)
    assert out.returncode == 1
    fields = _fields(out)
    assert {"result.interrupted", "result.runs[0].interrupted", "result.runs[0].points[1].interrupted"} <= set(fields)
    assert "a partial result is not a submission" in out.stdout

    built = diskq("db", "build", "--submissions", "submissions", "--db", "devices.db", "--no-memo", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    # the three marks at least; a step cut short may also disagree with fio's own counters or peak
    import re

    problems = re.search(
        rf"skipped {re.escape(str(path.relative_to(tmp_path / 'submissions')))}: (\d+) problems", built.stderr
    )
    assert problems and int(problems.group(1)) >= 3, built.stderr
    with sqlite3.connect(tmp_path / "devices.db") as db:
        skipped = db.execute("SELECT field, message FROM skipped").fetchall()
        assert {"result.interrupted", "result.runs[0].interrupted", "result.runs[0].points[1].interrupted"} <= {
            field for field, _ in skipped
        }
        assert (
            "result.interrupted",
            "the bench was stopped before the end; a partial result is not a submission: "
            "run the bench again to its end",
        ) in skipped
        assert db.execute("SELECT count(*) FROM submissions").fetchone()[0] == 0
        assert db.execute("SELECT count(*) FROM devices").fetchone()[0] == 0
    assert (
        diskq(
            "db", "build", "--submissions", "submissions", "--db", "strict.db", "--no-memo", "--strict", cwd=tmp_path
        ).returncode
        == 1
    )


def test_an_interrupted_step_with_its_marks_removed_is_still_refused(interrupted, tmp_path):
    # a contributor deletes the marks before signing: fio's own output still shows the short step
    edited = json.loads(json.dumps(interrupted))
    edited["interrupted"] = False
    edited["notes"] = [n for n in edited["notes"] if "stopped" not in n]
    for run in edited["runs"]:
        run["interrupted"] = False
        for point in run["points"]:
            point["interrupted"] = False
    key = keygen(tmp_path)
    doc = tmp_path / "r.json"
    doc.write_text(json.dumps(edited))
    refused = diskq("sign", str(doc), "-f", str(key), "--github", "octocat", cwd=tmp_path)
    assert refused.returncode == 5 and "result.runs[0].points[1].runtime_ms: fio ran this step" in refused.stderr

    _submit(edited, tmp_path, key)
    out = diskq("validate", "submissions", cwd=tmp_path)
    assert out.returncode == 1
    assert "result.runs[0].points[1].runtime_ms" in _fields(out)
    assert "of the 3 s it was given (its own output says so): a step cut short" in out.stdout
    assert "result.runs[0].points[0].runtime_ms" not in _fields(out)  # the completed step is fine
