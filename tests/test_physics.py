"""Forgeries the format cannot catch, caught by physics: a result measured on RAM and relabelled
as a SATA SSD (every counter consistent, throughput under the link's ceiling) is held back with
the bound it breaks and shown so on its device page; fio's own clock is held to the step length."""

from __future__ import annotations

import json

from diskq.analyse.physics import curve_problems, link_floor_us
from diskq.database.build import build
from diskq.database.synthetic import result_document, submission, write_submission
from diskq.publish.names import PageKeys
from diskq.publish.site import build_site
from tests.cli_support import cli, rows

GENUINE = {"off": {1: 12680, 2: 24000, 4: 41000}}
#: what a loop device over tmpfs gives: far above any SATA drive at 1 job, under the link's
#: 146,484 writes of 4 KiB per second, so the throughput check alone passes it
RAM = {"off": {1: 110000, 2: 125000, 4: 140000}}


def test_the_bound_is_the_time_4_kib_take_on_a_sata_link():
    assert round(link_floor_us(), 2) == 6.83
    assert curve_problems("ata", [(1, 30000.0, 20.0, 13.0)]) == []
    assert curve_problems("ata", [(2, 30000.0, 2.0, 13.0)]) == []  # judged at 1 job only
    assert "2.7 µs at 1 job" in curve_problems("ata", [(1, 110000.0, 2.7, 6.4)])[0]
    assert curve_problems("nvme", [(1, 110000.0, 2.7, 6.4)]) == curve_problems("scsi", [(1, 1e5, 2.7, 6.4)]) == []


def test_a_relabelled_ram_result_is_held_back_beside_a_genuine_one(tmp_path):
    subs = tmp_path / "submissions"
    write_submission(subs, submission(result_document("Samsung PM883", GENUINE, protocol="ata")))
    forged = write_submission(subs, submission(result_document("Samsung PM883", RAM, protocol="ata")))
    report = build(subs, tmp_path / "devices.db")
    assert report.skipped == []  # every check of the format passes it
    (dev,) = rows(tmp_path / "devices.db", "SELECT iops_1job, submissions, notes FROM devices")
    assert dev["iops_1job"] == 12680 and dev["submissions"] == 1
    held = rows(tmp_path / "devices.db", "SELECT path, excluded FROM submissions WHERE aggregated = 0")
    assert [h["path"] for h in held] == [forged.relative_to(subs).as_posix()]
    assert held[0]["excluded"].startswith("beyond physics: a mean write latency of 2.7 µs at 1 job")


def test_a_first_submission_beyond_physics_never_ranks_and_its_page_says_why(tmp_path):
    subs = tmp_path / "submissions"
    write_submission(subs, submission(result_document("Kingston Fast SATA", RAM, protocol="ata")))
    write_submission(subs, submission(result_document("Samsung PM883", GENUINE, protocol="ata")))
    build(subs, tmp_path / "devices.db")
    devices = {d["model"]: d for d in rows(tmp_path / "devices.db", "SELECT id, model, rank FROM devices")}
    assert devices["Kingston Fast SATA"]["rank"] is None and devices["Samsung PM883"]["rank"] == 1
    out = tmp_path / "_site"
    build_site(tmp_path / "devices.db", out)
    page = (out / "devices" / f"{PageKeys().key(devices['Kingston Fast SATA']['id'])}.html").read_text()
    assert 'id="held-back"' in page and "beyond physics: a mean write latency of 2.7 µs" in page
    assert "Kingston Fast SATA" not in (out / "index.html").read_text().split('id="hosts"')[0].split("<tbody>")[1]


def test_fio_saying_it_measured_longer_than_its_step_is_refused(tmp_path, capsys):
    doc = result_document("Samsung PM883", GENUINE, protocol="ata")
    point = doc["runs"][0]["points"][0]
    fio = point["fio"]
    write = fio["jobs"][0]["write"]
    # three times the I/Os over three times the window, every figure agreeing: the same IOPS
    write["runtime"] *= 3
    write["total_ios"] *= 3
    point["runtime_ms"] *= 3
    point["total_ios"] *= 3
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(submission(doc).model_dump(mode="json")))
    assert cli("validate", str(path)) == 1
    out = capsys.readouterr().out
    step = fio["global options"]["runtime"]
    assert f"in a step it was told to run for {step} s: its own clock does not allow it" in out, out
