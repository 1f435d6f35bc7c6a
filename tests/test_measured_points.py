"""A measurement is a fact: every point diskq measured (raw fio output that passes the counter
cross-checks) stays in the class and the verdicts, however its per-job rate compares with one
job alone. Real fio on a file on ext4 over a loop device and on tmpfs, and a recorded run on a
loaded host whose 1-job step was slowed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from diskq.analyse import annotate
from diskq.analyse.noise import CAVEAT
from diskq.analyse.osds import osds_per_device
from diskq.analyse.plausibility import OBSERVATION, max_per_job_ratio, measured
from diskq.result import ResultDocument
from tests.conftest import IS_ROOT, needs_fio, needs_loop

LOADED = Path(__file__).parent / "fixtures" / "bench" / "diskq-loaded-host-slow-1job-result.json"


def _above(run) -> set[int]:
    """Job counts whose per-job rate is above the [plausibility] ratio times the 1-job rate."""
    solo = next(p.iops for p in run.points if p.numjobs == 1)
    return {p.numjobs for p in run.points if p.numjobs > 1 and p.iops / p.numjobs > max_per_job_ratio() * solo}


def _every_point_counts(doc: ResultDocument) -> None:
    """What every measured curve must show: all points measured, classified with none held out,
    observations for exactly the points above the ratio, and no word of a typo."""
    (run,) = doc.runs
    assert all(measured(p.fio) for p in run.points), "real fio output passes the counter checks"
    s = run.scaling
    assert s is not None and s.questionable == []
    assert s.peak.iops == max(p.iops for p in run.points)
    seen = {int(n.split(" IOPS at ")[1].split(" ")[0]) for n in s.notes if n.startswith(OBSERVATION)}
    assert seen == _above(run)
    every = [*s.notes, *run.notes, *doc.notes]
    if doc.verdicts is not None:
        every += [*doc.verdicts.notes, *doc.verdicts.osds_per_device.reasons, *doc.verdicts.ceph_waldb.reasons]
    assert not any("typo" in n or "questionable" in n for n in every)


def _counts_every_point(doc, run) -> None:
    """The OSD count reads every point measured, then holds at what the Ceph WAL/DB tier allows
    (criteria [osds_per_device] tier_max_osds), saying what the curve alone would allow."""
    from diskq.analyse import criteria

    o = doc.verdicts.osds_per_device
    full = osds_per_device([(p.numjobs, p.iops) for p in run.points], o.demand_iops)
    cap = criteria.load()["osds_per_device"]["tier_max_osds"].get(doc.verdicts.ceph_waldb.tier)
    if cap is not None and full.n > cap:
        alone = f"the curve alone would allow {'at least ' if full.limited_by_sweep else ''}{full.n}"
        assert o.n == cap and alone in o.reasons[0]
    else:
        assert o.n == full.n


def test_a_loaded_hosts_slow_1job_step_keeps_every_point_with_the_noise_caveat():
    doc = annotate(ResultDocument.model_validate_json(LOADED.read_text()))
    (run,) = doc.runs
    assert _above(run) == {2, 4, 8}  # 119 IOPS alone, 489 per job at 8 jobs
    _every_point_counts(doc)
    assert run.scaling.scaling == "linear" and run.scaling.peak.numjobs == 8
    host = [n for n in run.scaling.notes if n.startswith(OBSERVATION)]
    assert all("the run is noisy and the host slowed the 1-job step" in n for n in host)
    assert any(n.startswith(CAVEAT) and "varied by 134%" in n for n in doc.verdicts.notes)
    o = doc.verdicts.osds_per_device
    # every point measured allows "at least 8"; 119 IOPS alone is unsuitable, so the one model gives none
    assert doc.verdicts.ceph_waldb.tier == "unsuitable" and (o.n, o.limited_by_sweep) == (0, False)
    assert "the curve alone would allow at least 8" in o.reasons[0]
    _counts_every_point(doc, run)


def _bench_file(target: Path, tmp_path: Path) -> ResultDocument:
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "diskq",
            "bench",
            str(target),
            "--size",
            "64M",
            "--jobs",
            "1,2,4",
            "--runtime",
            "3",
            "--no-flush-check",
            "--json",
            "-o",
            str(tmp_path / "result.json"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "DISKQ_JOURNAL_DIR": str(tmp_path / "journal")},
    )
    assert r.returncode == 0, r.stderr
    doc = ResultDocument.model_validate_json(r.stdout)
    assert [p.numjobs for p in doc.runs[0].points] == [1, 2, 4]
    return doc


@needs_fio
@needs_loop
def test_a_file_on_ext4_over_a_loop_device_is_classified_from_every_point(make_loop, tmp_path):
    dev = make_loop(256 * 1024 * 1024)
    subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True, capture_output=True)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", dev, str(mnt)], check=True)
    try:
        doc = _bench_file(mnt / "test.img", tmp_path)
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)
    assert doc.device.filesystem == "ext4"
    _every_point_counts(doc)
    (run,) = doc.runs
    assert all("the ext4 filesystem commits the flushes" in n for n in run.scaling.notes if n.startswith(OBSERVATION))
    o = doc.verdicts.osds_per_device
    assert o.n is not None  # an OSD count, read from every point measured
    _counts_every_point(doc, run)
    if _above(run):
        assert any(r.startswith("measured through the ext4 filesystem") for r in o.reasons)


@needs_fio
@pytest.mark.skipif(not IS_ROOT, reason="needs root to mount a private tmpfs")
def test_a_file_on_tmpfs_is_classified_from_every_point(tmp_path):
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96m", "tmpfs", str(mnt)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.decode().strip()}")
    try:
        r = subprocess.run(
            [
                "fio",
                "--name=probe",
                f"--filename={mnt / 'probe'}",
                "--size=1M",
                "--direct=1",
                "--rw=write",
                "--bs=4k",
                "--output-format=json",
            ],
            capture_output=True,
            timeout=60,
        )
        if r.returncode != 0:
            pytest.skip("this kernel's tmpfs does not support O_DIRECT (Linux 6.6 and later do)")
        (mnt / "probe").unlink(missing_ok=True)
        doc = _bench_file(mnt / "test.img", tmp_path)
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)
    assert doc.device.filesystem == "tmpfs"
    _every_point_counts(doc)
    assert doc.verdicts.osds_per_device.n is None  # memory-backed: no verdict applies, but the class stands


def test_the_database_keeps_every_measured_point_of_a_submission(tmp_path, capsys):
    import json

    from diskq.database.build import build
    from diskq.database.synthetic import submission, write_submission
    from tests.cli_support import cli
    from tests.cli_support import rows as _rows

    subs = tmp_path / "submissions"
    write_submission(subs, submission(json.loads(LOADED.read_text())))
    db = tmp_path / "devices.db"
    assert build(subs, db).skipped == []
    points = _rows(db, "SELECT numjobs, conflict, held FROM points ORDER BY numjobs")
    assert [(p["numjobs"], p["conflict"], p["held"]) for p in points] == [(n, None, 0) for n in (1, 2, 4, 8)]
    assert [r["numjobs"] for r in _rows(db, "SELECT numjobs FROM curve ORDER BY numjobs")] == [1, 2, 4, 8]
    (dev,) = _rows(db, "SELECT osds_per_device, verdicts FROM devices")
    # every point counted ("at least 8"), held at none by the unsuitable tier of 119 IOPS alone
    assert dev["osds_per_device"] == 0 and "the curve alone would allow at least 8" in dev["verdicts"]
    assert "rests on a conflict" not in dev["verdicts"] and "typo" not in dev["verdicts"]
    assert cli("lookup", "loop", "--db", str(db)) == 0
    out = capsys.readouterr().out
    assert "conflict: cache" not in out and "rest on two figures in a conflict" not in out
