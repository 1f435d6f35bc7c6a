"""diskq on drives in software: the emulated drives of ``emulator/`` (a FUSE daemon whose writes
and flushes cost what a modelled drive's do, under a loop device), with real fio and the real CLI.

What is asserted is what the models make certain whatever the host's speed: the daemon sees one
flush per fdatasync; the flush-honesty check flags the drive that skips its flushes and passes
the one that performs them; the power-loss rules answer right for each model's behaviour; the
scaling class is one the model's curve allows. The models' absolute rates are not asserted: the
emulator's own path costs what a loaded 2-core host makes it cost (docs/emulated-drives.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from diskq.analyse import annotate
from diskq.result import ResultDocument
from emulator.drive import emulated_drive, missing, realtime
from emulator.models import load
from tests.conftest import needs_fio

pytestmark = [needs_fio, pytest.mark.skipif(missing() is not None, reason=f"emulated drives: {missing()}")]

MODELS = load()


def diskq(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*realtime(), sys.executable, "-m", "diskq", *args],
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **env},
    )


def fio_sync_writes(dev: str, count: int) -> int:
    """``count`` 4 KiB writes with fdatasync; the number of fdatasync calls fio made (it makes one
    after every write but the last: fio's own ``sync`` latency count)."""
    out = subprocess.run(
        [
            *realtime(),
            "fio",
            f"--filename={dev}",
            "--name=count",
            "--ioengine=psync",
            "--direct=1",
            "--fdatasync=1",
            "--rw=write",
            "--bs=4k",
            "--size=16M",
            f"--io_size={count * 4096}",
            "--numjobs=1",
            "--output-format=json",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    job = json.loads(out)["jobs"][0]
    assert job["write"]["total_ios"] == count
    return job["sync"]["lat_ns"]["N"]


def bench(dev: str, tmp_path: Path, *args: str) -> ResultDocument:
    out = tmp_path / "result.json"
    r = diskq(
        "bench",
        dev,
        "--yes",
        "--json",
        "--cache",
        "keep",
        "--runtime",
        "3",
        "-o",
        str(out),
        *args,
        env={"DISKQ_JOURNAL_DIR": str(tmp_path / "journal")},
    )
    assert r.returncode == 0, r.stderr
    return ResultDocument.model_validate_json(r.stdout)


def as_the_drive(doc: ResultDocument, model) -> ResultDocument:
    """The document judged as a run on the modelled drive: its identity as the drive would report
    it, and its cache switched by the drive's own mechanism (the emulator models cost, not
    identity; its cache switch is the loop device's knob, which the daemon follows), then every
    figure recomputed by the rules."""
    rep = model.reports
    path = "/dev/sdx" if rep["protocol"] == "ata" else "/dev/nvme9n1"  # where the modelled drive would be
    device = doc.device.model_copy(
        update={
            "model": rep["model"],
            "protocol": rep["protocol"],
            "media": "ssd",
            "path": path,
            "volatile_write_cache": rep["volatile_write_cache"],
        }
    )
    data = json.loads(doc.model_copy(update={"device": device}).model_dump_json())
    _rename_disk(data, os.path.basename(doc.device.path), os.path.basename(path))  # fio's own output names it too
    for run in data["runs"]:
        run["flush_check"] = run["scaling"] = None
        if run["cache_mechanism"] == "sysfs":
            run["cache_mechanism"] = "hdparm" if rep["protocol"] == "ata" else "nvme"
    data["verdicts"] = None
    return annotate(ResultDocument.model_validate(data))


def _rename_disk(node, old: str, new: str) -> None:
    """Every ``disk_util`` entry and ``filename`` option of fio's raw output that names ``old``
    renamed ``new``, in place."""
    if isinstance(node, dict):
        for entry in node.get("disk_util") or []:
            if isinstance(entry, dict) and entry.get("name") == old:
                entry["name"] = new
        if node.get("filename") == f"/dev/{old}":
            node["filename"] = f"/dev/{new}"
        for value in node.values():
            _rename_disk(value, old, new)
    elif isinstance(node, list):
        for value in node:
            _rename_disk(value, old, new)


def solo(doc: ResultDocument, cache: str) -> float:
    run = next(r for r in doc.runs if r.write_cache == cache)
    return next(p.iops for p in run.points if p.numjobs == 1)


def test_every_fdatasync_reaches_the_drive_as_one_flush():
    with emulated_drive(MODELS["consumer-sata"]) as drive:
        before = drive.stats()
        syncs = fio_sync_writes(drive.device, 200)
        after = drive.stats()
    assert syncs >= 199
    assert after["writes"] - before["writes"] == 200
    assert after["fsyncs"] - before["fsyncs"] == syncs
    assert after["drains"] - before["drains"] == syncs  # one job: every flush finds its write dirty


def test_a_drive_without_a_volatile_cache_gets_no_flushes():
    with emulated_drive(MODELS["optane-like"]) as drive:
        before = drive.stats()
        assert fio_sync_writes(drive.device, 100) >= 99  # fio calls fdatasync; the kernel sends no flush
        after = drive.stats()
    assert after["writes"] - before["writes"] == 100 and after["fsyncs"] == before["fsyncs"]


@pytest.mark.parametrize("name", ["consumer-sata", "liar", "dc-sata-plp"])
def test_flush_check_tells_performed_flushes_from_skipped_ones(name, tmp_path):
    model = MODELS[name]
    with emulated_drive(model) as drive:
        doc = bench(drive.device, tmp_path, "--jobs", "1")
        stats = drive.stats()
    judged = as_the_drive(doc, model)
    (run,) = judged.runs
    assert run.flush_check is not None
    assert run.flush_check.honest is model.expect["flush_honest"], run.flush_check
    if model.honest:
        assert stats["drains"] > 0
    else:
        assert stats["drains"] == 0 and stats["fsyncs"] > 0


@pytest.mark.parametrize("name", ["consumer-sata", "liar"])
def test_power_loss_rules_answer_right_on_each_model(name, tmp_path):
    model = MODELS[name]
    with emulated_drive(model) as drive:
        doc = bench(drive.device, tmp_path, "--jobs", "1")
    plp = as_the_drive(doc, model).verdicts.power_loss_protection
    assert plp.verdict == model.expect["plp"], plp
    # a drive that skips its flushes is never called protected: free flushes are PLP or a lie
    if not model.honest:
        assert any(e.points_to == "plp" and "flushes ignored" in e.text for e in plp.evidence), plp


def fast_sync_iops() -> float:
    from diskq.analyse import criteria

    return float(criteria.section("power_loss_protection")["fast_sync_iops"])


def test_cache_ab_of_a_protected_drive_that_honours_flushes(tmp_path):
    """The PM883 model: durable writes at 79 us with its cache off, flushes honoured (117 us) with
    it on. The A/B shows a drive that does not need its cache; the flush check shows flushes that
    cost time; the rules list both as a conflict and do not choose."""
    model = MODELS["dc-sata-plp"]
    with emulated_drive(model) as drive:
        doc = bench(drive.device, tmp_path, "--jobs", "1", "--cache", "both")
        assert drive.stats()["cache_off"] == 0  # the knob is back on after the bench
    judged = as_the_drive(doc, model)
    off, on = solo(judged, "off"), solo(judged, "on")
    assert off > 1.2 * on, (off, on)  # without its cache the drive skips the flush's 117 us
    on_run = next(r for r in judged.runs if r.write_cache == "on")
    assert on_run.flush_check.honest is True
    if off < fast_sync_iops():
        pytest.skip(
            f"the emulator's path on this host is too slow for this drive's durable writes: "
            f"{off:.0f} IOPS with the cache off, below the rule's {fast_sync_iops():.0f}"
        )
    plp = judged.verdicts.power_loss_protection
    assert plp.verdict == model.expect["plp"] and plp.conflicts, plp
    assert {e.points_to for e in plp.evidence if e.kind == "measured"} >= {"plp", "no_plp"}, plp


def test_cache_ab_of_a_consumer_drive_needs_its_cache(tmp_path):
    model = MODELS["consumer-sata"]
    with emulated_drive(model) as drive:
        doc = bench(drive.device, tmp_path, "--jobs", "1", "--cache", "both")
    judged = as_the_drive(doc, model)
    assert solo(judged, "off") < fast_sync_iops()
    assert judged.verdicts.power_loss_protection.verdict == "unlikely"


def test_a_drive_without_a_volatile_cache(tmp_path):
    model = MODELS["optane-like"]
    with emulated_drive(model) as drive:
        doc = bench(drive.device, tmp_path, "--jobs", "1")
    judged = as_the_drive(doc, model)
    rate = solo(judged, judged.runs[0].write_cache)
    if rate < fast_sync_iops():
        pytest.skip(
            f"the emulator's path on this host is too slow for this drive: {rate:.0f} IOPS at 1 job, "
            f"below the rule's {fast_sync_iops():.0f}"
        )
    assert judged.verdicts.power_loss_protection.verdict == model.expect["plp"]


def test_scaling_class_is_one_the_model_allows(tmp_path):
    model = MODELS["consumer-sata"]
    with emulated_drive(model) as drive:
        doc = bench(drive.device, tmp_path, "--jobs", "1,2,4,8", "--no-flush-check")
    (run,) = as_the_drive(doc, model).runs
    curve = {p.numjobs: p.iops for p in run.points}
    # one drain serves every write queued while it ran: more jobs, more writes per flush
    assert curve[8] > 1.5 * curve[1], curve
    assert run.scaling is not None and run.scaling.scaling in model.expect["scaling"], run.scaling
