"""import-fio records how the write cache was set, and an "off" whose knob is not known counts as
unsafe, as diskq bench judges the kernel's knob: runs made on a loop device in the kernel's
"write through" state must not import as "excellent, safe"."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from diskq.database.build import build
from diskq.database.synthetic import submission, write_submission
from diskq.submission.importfio import import_fio
from tests.cli_support import cli
from tests.conftest import needs_fio
from tests.test_submission_support import COMMUNITY_ARGS


def community_runs(dev: str, jobs=(1, 2)) -> dict[int, dict]:
    """Real fio JSON of the community command on ``dev``, one 1-second step per numjobs."""
    out = {}
    for n in jobs:
        text = subprocess.run(
            ["fio", f"--filename={dev}", "--size=16M", "--offset_increment=16M", *COMMUNITY_ARGS, f"--numjobs={n}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        out[n] = json.loads(text[text.index("{") :])
    return out


@pytest.fixture(scope="module")
def write_through_runs(tmp_path_factory):
    """fio runs on a loop device whose kernel knob says "write through" (the device is detached
    and its knob reset, whatever happens)."""
    from tests.conftest import HAVE_LOOP, _reset_write_cache

    if not HAVE_LOOP:
        pytest.skip("needs root, losetup and /dev/loop-control")
    backing = tmp_path_factory.mktemp("knob") / "backing.img"
    with open(backing, "wb") as f:
        f.truncate(64 * 1024 * 1024)
    dev = subprocess.run(
        ["losetup", "--find", "--show", str(backing)], check=True, capture_output=True, text=True
    ).stdout.strip()
    try:
        Path("/sys/block", Path(dev).name, "queue", "write_cache").write_text("write through")
        yield community_runs(dev)
    finally:
        _reset_write_cache(dev)
        subprocess.run(["losetup", "-d", dev], capture_output=True)


@needs_fio
def test_an_imported_off_of_unknown_knob_is_unsafe_like_the_kernel_knob(write_through_runs):
    docs = [(f"nj{k}.json", v) for k, v in write_through_runs.items()]

    unknown = import_fio(docs, write_cache="off")  # the default: how it was set is not known
    assert unknown.runs[0].cache_mechanism == "unknown"
    ceph = unknown.verdicts.ceph_waldb
    # nothing safe was measured: no verdict, never "unsuitable" or "fails"
    assert ceph.safe is False and ceph.tier is None
    assert "no safe cache setting" in ceph.reasons[0] and "knob not known" in ceph.reasons[0]
    assert unknown.verdicts.etcd.passes is None and unknown.verdicts.zfs_slog.tier is None

    kernel = import_fio(docs, write_cache="off", cache_mechanism="kernel")
    assert kernel.runs[0].cache_mechanism == "sysfs"
    assert (
        kernel.verdicts.ceph_waldb.safe is False
        and "kernel's write_cache knob" in kernel.verdicts.ceph_waldb.reasons[0]
    )

    # declared as the drive's own setting, the same figures are a safe "off" (the importer's word)
    drive = import_fio(docs, write_cache="off", cache_mechanism="drive")
    assert drive.runs[0].cache_mechanism == "drive" and drive.verdicts.ceph_waldb.safe is True

    # a device that reports no volatile cache needs no flushes: nothing to lose
    from diskq.result import Device

    plain = import_fio(docs, write_cache="off", device=Device(model="X", volatile_write_cache=False))
    assert plain.verdicts.ceph_waldb.safe is True


@needs_fio
def test_the_database_keys_an_unknown_knob_apart_and_never_counts_it_safe(write_through_runs, tmp_path, capsys):
    docs = [(f"nj{k}.json", v) for k, v in write_through_runs.items()]
    subs = tmp_path / "submissions"
    for mechanism in ("unknown", "drive"):
        result = import_fio(docs, write_cache="off", cache_mechanism=mechanism).model_dump(mode="json")
        result["device"].update(model="Example SSD 1", protocol="ata", media="ssd")
        if mechanism == "drive":  # another submission of the same model, its off set by hdparm -W
            result["runs"][0]["points"] = result["runs"][0]["points"][:1]
            result["runs"][0]["peak"] = {"numjobs": 1, "iops": result["runs"][0]["points"][0]["iops"]}
            result["runs"][0]["scaling"] = None
            result["verdicts"] = None
        write_submission(subs, submission(result))
    db = tmp_path / "devices.db"
    report = build(subs, db, jobs=1)
    assert not report.skipped, report.skipped
    import sqlite3

    con = sqlite3.connect(db)
    rows = con.execute("SELECT write_cache, knob, safe, unsafe_reason FROM device_cache ORDER BY knob").fetchall()
    assert [(r[0], r[1], r[2]) for r in rows] == [("off", "drive", 1), ("off", "unknown", 0)]
    assert "knob not known" in rows[1][3]
    assert cli("lookup", "example ssd", "--db", str(db)) == 0
    out = capsys.readouterr().out
    assert "cache off (knob not known): " in out and "unsafe" in out


def test_import_fio_refuses_a_mechanism_it_does_not_know(tmp_path, capsys):
    fio = Path(__file__).parent / "fixtures" / "fio_json" / "fio-3.33__loop__fdatasync_nj4_ss.json"
    assert cli("import-fio", str(fio), "--cache-mechanism", "hdparm", "-o", str(tmp_path / "x.json")) == 2
    err = capsys.readouterr().err
    assert err.startswith("diskq: error: --cache-mechanism must be drive, kernel or unknown")
