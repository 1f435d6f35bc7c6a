"""diskq cluster over the recorded outputs of real clusters (../shared/data/ceph-clusters).

The recordings are not part of the project; every test here that needs them skips, with the
reason, where they are absent. No recording holds `osd metadata` and `perf dump` of the same
cluster, nor a spillover `perf dump`: the combined cases below put real files of different
clusters side by side in a temporary directory, and each says which. No counter is invented.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from diskq.cluster import collect, inputs, report
from diskq.cluster.perf import perf_dump
from tests.cli_support import cli
from tests.cluster_support import CLUSTERS, DB, REPO, needs_data


def case(name: str) -> Path:
    return CLUSTERS / name


def answer(directory: Path, **kw) -> dict:
    return report.build(inputs.read_dir(directory), db=DB, **kw)


def by_rule(doc: dict, rule: str) -> list[dict]:
    return [f for f in doc["findings"] if f["rule"] == rule]


@needs_data
def test_pm1733_namespaces_six_osds_each():
    doc = answer(case("clyso-01-quincy-17.2.5-hdd-pm1733-nvme-db"))
    assert doc["summary"]["osds"] == 72
    assert {d["model"] for d in doc["db_devices"]} == {"MZXLR6T4HALA-000H3"}
    assert sorted(len(d["osds"]) for d in doc["db_devices"]) == [6] * 12
    assert not by_rule(doc, "db_guideline")  # 6 per NVMe namespace is within 15
    assert any("not in the database" in m and "MZXLR6T4HALA-000H3" in m for m in doc["missing"])


@needs_data
def test_24_osds_per_nvme_beyond_the_guideline_and_undersized_db():
    doc = answer(case("clyso-02-pacific-16.2.10-hdd-24-per-nvme-db"))
    guide = by_rule(doc, "db_guideline")
    assert len(guide) == 12 and all(len(f["osds"]) == 24 and f["evidence"]["guideline"] == 15 for f in guide)
    small = by_rule(doc, "db_small")
    assert len(small) == 288  # 33.5 GB of a 12 TB HDD, 0.28 %
    assert all(f["evidence"]["share"] < 0.01 for f in small)
    # the 12 flash OSDs without a DB device sit on the other namespace of each host's DB drive
    # (the same device id): named on the drive's row, and counted among those committing to it
    flash = [o for o in doc["osds"] if o["db"] is None]
    assert len(flash) == 12 and all(o["commit_device_shared_by"] == 25 for o in flash)
    assert sorted(i for d in doc["db_devices"] for i in d["data_osds"]) == sorted(o["osd"] for o in flash)
    assert all(len(d["data_osds"]) == 1 for d in doc["db_devices"])


@needs_data
def test_sata_ssd_db_six_per_drive_is_beyond_five():
    doc = answer(case("clyso-13-pacific-16.2.10-hdd-sata-ssd-db"))
    sizes = sorted(len(d["osds"]) for d in doc["db_devices"])
    flagged = sorted(len(f["osds"]) for f in by_rule(doc, "db_guideline"))
    assert flagged == [n for n in sizes if n > 5] and flagged


@needs_data
def test_db_on_a_device_ceph_calls_rotational():
    doc = answer(case("clyso-04-octopus-15.2.14-azure-vm-db"))
    assert len(by_rule(doc, "db_rotational")) == 6


@needs_data
def test_filestore_and_pre_nautilus_are_named_not_judged():
    doc = answer(case("frank6866-jewel-10.2.5-filestore"))
    assert doc["osds"][0]["notes"][0].startswith("FileStore OSD")
    assert doc["findings"] == []
    mimic = answer(case("clyso-03-mimic-13.2.10-424osd-single-device"))
    assert mimic["summary"]["osds"] == 424 and mimic["db_devices"] == []
    assert "models unknown" in mimic["osds"][0]["notes"][0]


@needs_data
def test_perf_dump_counters_read_as_recorded():
    perf = perf_dump(json.loads((case("clyso-perf-dump-nvme-30tb") / "perf-dump-osd.json").read_text()))
    assert perf.bluefs["db_total_bytes"] == 30725969543168 and perf.bluefs["slow_used_bytes"] == 0
    assert perf.latencies["kv_commit_lat"].count == 1409956451
    assert perf.latencies["kv_commit_lat"].avg_s == pytest.approx(0.000190295, rel=1e-4)
    old = perf_dump(json.loads((case("telegraf-filestore-perf-dump") / "perf-dump-osd.json").read_text()))
    # FileStore: its journal takes the commits; read as such, never as "BlueFS 0.0 of 0.0 GB"
    assert old.store == "filestore" and old.bluefs == {} and not old.missing
    assert old.latencies["journal_latency"].count == 1108008
    assert old.latencies["journal_latency"].avg_s == pytest.approx(290.981036 / 1108008)


@needs_data
def test_mclock_capacities_from_the_plain_config_table():
    doc = answer(case("mcgarrah-alteredcarbon-proxmox-usb-hdd"))
    caps = {o["osd"]: o["mclock"]["value"] for o in doc["osds"]}
    assert caps[0] == pytest.approx(86.136079) and caps[2] == 315.0  # 3 of 9 set; the others use the default
    spread = by_rule(doc, "mclock_spread")
    assert len(spread) == 1 and spread[0]["evidence"]["low"] == [0, 1, 4]
    assert doc["osds"][0]["bench_iops"] == pytest.approx(1045.988, rel=1e-5)


@needs_data
def test_an_octopus_osd_with_wpq_is_not_judged_for_mclock():
    doc = answer(case("hotsos-octopus-15.2.14-juju-bcache"))
    osd0 = next(o for o in doc["osds"] if o["osd"] == 0)
    assert osd0["mclock"] is None and any("wpq" in n for n in osd0["notes"])
    assert {o["status"] for o in doc["osds"]} == {"up"}


@needs_data
def test_combined_spillover_from_health_detail(tmp_path):
    """Combined case: the metadata of clyso-02 (which has an osd.76) and the one recorded
    BLUEFS_SPILLOVER line (osd.76 of another Pacific cluster, from the Ceph documentation)."""
    shutil.copy(case("clyso-02-pacific-16.2.10-hdd-24-per-nvme-db") / "osd-metadata.json", tmp_path)
    shutil.copy(case("ceph-docs-spillover-pacific-16.2.14") / "health-detail.excerpt.txt", tmp_path)
    doc = answer(tmp_path)
    spill = by_rule(doc, "spillover")
    assert [f["osds"] for f in spill] == [[76]]
    ev = spill[0]["evidence"]
    assert (ev["spilled_bytes"], ev["db_used_bytes"], ev["db_total_bytes"]) == (128 * 1024, 56 * 2**30, 60 * 2**30)
    # 56 of 60 GiB used: a full DB, not level sizing; the fix is a bigger DB, for this release
    assert "Cause: the DB is full" in spill[0]["message"]
    assert any("bluefs-bdev-expand" in x and "bluefs-bdev-migrate" in x for x in spill[0]["fixes"])
    assert any("compact" in x for x in spill[0]["fixes"])
    # the OSD's host and the drive it commits to (its DB namespace of the Dell NVMe) are named
    osd76 = next(o for o in doc["osds"] if o["osd"] == 76)
    assert spill[0]["hosts"] == [osd76["host"]] and osd76["host"] in spill[0]["message"]
    assert spill[0]["drives"] and "Dell Ent NVMe" in spill[0]["drives"][0]


@needs_data
def test_combined_s4510_osd_with_a_flash_osd_perf_dump(tmp_path):
    """Combined case: the S4510 all-flash cluster's metadata, and the recorded perf dump of a
    flash OSD without a DB device from another cluster, saved as osd.0's. Ceph reports the
    S4510 by its part number SSDSC2KB038T8 (Intel D3-S4510 3.84 TB), mapped with --as."""
    shutil.copy(case("clyso-quincy-17.2.6-s4510-allflash") / "osd-metadata.json", tmp_path)
    shutil.copy(case("clyso-perf-dump-nvme-30tb") / "perf-dump-osd.json", tmp_path / "perf-dump.osd.0.json")
    doc = answer(tmp_path, aliases={"SSDSC2KB038T8": "Intel SSD S4510"})
    osd0 = next(o for o in doc["osds"] if o["osd"] == 0)
    assert osd0["database"]["model"] == "Intel SSD S4510"
    assert osd0["kv_ms"]["kv_commit_lat"] == pytest.approx(0.1903, rel=1e-3)
    # 1 / 1,600 IOPS at 1 job = 0.625 ms: the recorded 0.19 ms is well within it
    assert osd0["predicted_commit_ms"]["value"] == pytest.approx(0.625)
    assert by_rule(doc, "commit_latency") == [] and by_rule(doc, "spillover") == []
    others = [o for o in doc["osds"] if o["osd"] != 0]
    assert all(any("no perf dump of this OSD" in n for n in o["notes"]) for o in others)
    # without --as the part number finds the model too: the database knows the S4510's part
    # numbers (smartmontools' drive database and the curated aliases)
    without = answer(tmp_path)
    assert without["osds"][0]["database"]["model"] == "Intel SSD S4510"
    assert not any("INTEL SSDSC2KB038T8" in m for m in without["missing"])


@needs_data
def test_a_perf_dump_without_its_osd_is_shown_and_named():
    doc = answer(case("clyso-perf-dump-nvme-30tb"))
    [u] = doc["unnamed_perf_dumps"]
    assert (
        u["file"] == "perf-dump-osd.json" and u["dedicated_db"] is False
    )  # slow_total_bytes 0: BlueFS on the main device
    assert u["kv_ms"]["kv_commit_lat"] == pytest.approx(0.1903, rel=1e-3)
    assert any("does not give" in r for r in doc["inputs"]["read"])
    assert any("no osd metadata" in m for m in doc["missing"])


def test_a_directory_with_nothing_to_read_is_one_error(tmp_path, capsys):
    from tests.cli_support import cli

    (tmp_path / "notes.txt").write_text("nothing from ceph here\n")
    assert cli("cluster", "--from", str(tmp_path)) == 2
    err = capsys.readouterr().err
    assert err.startswith("diskq: error:") and "no output diskq cluster reads" in err and "Traceback" not in err


@needs_data
@pytest.mark.parametrize("name", sorted(p.name for p in CLUSTERS.iterdir() if p.is_dir()) if CLUSTERS.is_dir() else [])
def test_every_recorded_cluster_answers_end_to_end(name, tmp_path, capsys):
    from tests.cli_support import cli

    html = tmp_path / "cluster.html"
    rc = cli("cluster", "--from", str(CLUSTERS / name), "--db", str(DB), "--json", "--html", str(html))
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "Traceback" not in err
    doc = json.loads(out)
    assert doc["format"] == "diskq-cluster"
    # something was read, and whatever was missing is named
    assert doc["inputs"]["read"], doc["inputs"]["problems"]
    assert doc["summary"]["osds"] > 0 or doc["findings"] or doc["missing"]
    for f in doc["findings"]:
        assert f["rule"] and f["message"]
        assert f["osds"] or f["rule"] in ("health_unparsed", "batch_plan"), f
    assert all(line.startswith("ceph config ") for line in doc["config_lines"])
    assert html.read_text().startswith("<!DOCTYPE html>")
    rc = cli("cluster", "--from", str(CLUSTERS / name), "--db", str(DB))
    text, err = capsys.readouterr()
    assert rc == 0 and " OSD" in text and "Traceback" not in err


@pytest.fixture
def recorded_ceph(monkeypatch):
    """``diskq.proc.run`` answering as ``ceph`` would: the recorded outputs of the Octopus bcache
    cluster answer the cluster-wide commands; osd.0's perf dump is the recorded one of a flash
    OSD from another cluster (combined case); osd.1 and osd.2 time out; the release answers
    `config dump` with an error. Returns the list of calls."""
    from diskq import proc
    from diskq.errors import CommandTimedOut

    if not CLUSTERS.is_dir():
        pytest.skip(f"recorded cluster outputs absent ({CLUSTERS.name} next to the repository)")
    juju = case("hotsos-octopus-15.2.14-juju-bcache")
    recorded = {
        ("osd", "metadata"): (juju / "osd-metadata.json").read_text(),
        ("osd", "df"): (juju / "osd-df.json").read_text(),
        ("device", "ls"): (juju / "device-ls.json").read_text(),
        ("health", "detail"): (juju / "health-detail.json").read_text(),
        ("tell", "osd.0"): (case("clyso-perf-dump-nvme-30tb") / "perf-dump-osd.json").read_text(),
    }
    calls = []

    def fake_run(argv, **kw):
        calls.append(argv)
        assert argv[0] == "ceph" and kw.get("timeout")
        if argv[1:3] in (["tell", "osd.1"], ["tell", "osd.2"]):
            raise CommandTimedOut(argv, kw["timeout"])
        out = recorded.get(tuple(argv[1:3]))
        return proc.Completed(argv, 0 if out is not None else 22, out or "", "")

    monkeypatch.setattr(proc, "run", fake_run)
    monkeypatch.setattr(proc, "which", lambda tool: "/usr/bin/ceph" if tool == "ceph" else None)
    return calls


def test_collect_saves_what_ceph_printed_and_names_what_did_not_answer(tmp_path, recorded_ceph):
    calls = recorded_ceph
    out = tmp_path / "saved"
    errors = collect.collect(out)
    assert [c for c in calls if c[1] == "tell"] == [["ceph", "tell", f"osd.{i}", "perf", "dump"] for i in range(3)]
    assert any("config dump" in e for e in errors)
    assert [e.split()[0] for e in errors if "did not answer" in e] == ["osd.1", "osd.2"]
    assert sorted(p.name for p in out.iterdir()) == [
        "collect-status.json",
        "device-ls.json",
        "health-detail.json",
        "osd-df.json",
        "osd-metadata.json",
        "perf-dump.osd.0.json",
    ]
    doc = answer(out)
    assert doc["osds"][0]["kv_ms"]["kv_commit_lat"] == pytest.approx(0.1903, rel=1e-3)
    assert any("osd.1 did not answer" in p for p in doc["inputs"]["problems"])
    assert any("no perf dump of this OSD" in n for n in doc["osds"][1]["notes"])
    assert any("no config dump" in m for m in doc["missing"])


def test_without_ceph_or_saved_outputs_one_error(monkeypatch, capsys):
    from diskq import proc
    from tests.cli_support import cli

    monkeypatch.setattr(proc, "which", lambda tool: None)
    assert cli("cluster") == 3
    err = capsys.readouterr().err
    assert "ceph is not installed" in err and "ceph-common" in err and "Traceback" not in err
    assert cli("cluster", "--from", ".", "--as", "no-equals-sign") == 2
    assert "--as needs REPORTED=MODEL" in capsys.readouterr().err


def test_without_from_the_ceph_command_is_asked(recorded_ceph, capsys):
    from tests.cli_support import cli

    assert cli("cluster", "--json", "--db", str(DB)) == 0
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["source"] == "the ceph command of this host" and doc["summary"]["osds"] == 3
    assert "osd.1 did not answer" in err and "Traceback" not in err


@needs_data
def test_combined_mclock_default_against_the_s4510(tmp_path):
    """Combined case: the S4510 all-flash cluster's metadata (Quincy 17.2.6, where mClock is the
    default scheduler) and the recorded `ceph config dump` of another cluster, which sets
    capacities only for HDD OSDs: every S4510 OSD runs with Ceph's default SSD capacity, 21,500,
    against the 1,600 commits/s the community table measured for the S4510 at one job."""
    shutil.copy(case("clyso-quincy-17.2.6-s4510-allflash") / "osd-metadata.json", tmp_path)
    shutil.copy(case("mcgarrah-alteredcarbon-proxmox-usb-hdd") / "config-dump.txt", tmp_path)
    doc = answer(tmp_path, aliases={"SSDSC2KB038T8": "Intel SSD S4510"})
    found = by_rule(doc, "mclock_vs_device")
    assert len(found) == 25
    first = found[0]
    assert first["evidence"] == {"osd_mclock_max_capacity_iops_ssd": 21500.0, "per_osd_commit_rate": 1600.0}
    assert "13.4x above" in first["message"]
    assert doc["config_lines"][0] == f"ceph config set osd.{first['osds'][0]} osd_mclock_max_capacity_iops_ssd 1600"
    assert all(o["mclock"]["source"] == "Ceph's default" for o in doc["osds"])
    assert by_rule(doc, "mclock_spread") == []  # osd.0/1/4's HDD entries do not apply to SSD OSDs


def test_a_db_drive_of_a_line_nothing_was_measured_of_is_named_with_its_stored_answer(tmp_path, capsys):
    # a real cluster's DB drives (Kioxia CM6, KCM61VUL1T60): once "not found" in the table and
    # "not in the database" beside the note that named the line
    src = CLUSTERS / "clyso-08-pacific-16.2.10-hdd-cm6-nvme-db"
    if not src.is_dir():
        pytest.skip(f"the recorded cluster outputs are not at {CLUSTERS}")
    db = REPO / "devices.db"
    assert cli("cluster", "--from", str(src), "--db", str(db), "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    rows = [d for d in doc["db_devices"] if d["model"] == "KCM61VUL1T60"]
    assert rows and all(d["database"] is None and d["line"]["line"] == "Kioxia CM6" for d in rows)
    assert all("KCM61VUL1T60 is a Kioxia CM6, not measured with diskq yet" in d["notes"] for d in rows)
    assert not any(m.startswith("not in the database") and "KCM61VUL1T60" in m for m in doc["missing"])
    assert cli("cluster", "--from", str(src), "--db", str(db)) == 0
    out = capsys.readouterr().out
    assert "Kioxia CM6, not" in out and "not found" not in out
