"""diskq cluster read as an operator reads it, on the recorded outputs of real clusters
(../shared/data/ceph-clusters, each with its source in SOURCES.md there; skipped where absent):
nothing claimed that the inputs do not show, no advice a release cannot follow, no raw values.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from diskq.cluster import inputs, report
from tests.cluster_support import CLUSTERS, DB, FIX, needs_data


def answer(directory: Path) -> dict:
    return report.build(inputs.read_dir(directory), db=DB)


@needs_data
def test_an_osd_known_without_metadata_commits_to_a_device_not_known():
    """web3one's Rook cluster: its 36 HDD OSDs have their DBs on one Intel Optane 900P per 12
    (the repository's own report), which osd df and osd perf do not say: the answer must not say
    that they commit to their data devices, alone."""
    doc = answer(CLUSTERS / "web3one-rook-hdd-optane-900p-db")
    assert len(doc["osds"]) == 45
    assert all(o["commit_device"] is None and o["commit_device_shared_by"] is None for o in doc["osds"])
    from diskq.publish.cluster import render_html

    page = render_html(doc)
    assert '1 <span class="small">(data)' not in page and "None" not in page


def test_a_peer_finding_without_metadata_does_not_name_the_data_device(tmp_path):
    """Rook's three SSD OSDs of ceph osd perf, nothing else: where each commits is unknown."""
    shutil.copy(FIX / "rook-11005.osd-perf.2022-08-29.txt", tmp_path)
    doc = answer(tmp_path)
    (f,) = [f for f in doc["findings"] if f["rule"] == "commit_latency_peers"]
    assert "data device" not in f["message"] and "whether it has a DB or WAL device is unknown" in f["message"]


@needs_data
@pytest.mark.parametrize(
    "case, perf, config",
    [
        # Jewel, FileStore: no BlueFS, no ceph tell perf dump, no ceph config dump (Mimic's)
        ("frank6866-jewel-10.2.5-filestore", "the journals' commit latencies unknown (ceph daemon osd.N", None),
        ("nhanhoa-luminous-12.2.12-vm-single-device", "BlueFS usage", None),
        # Mimic: the config database exists, mClock is not the scheduler
        ("clyso-03-mimic-13.2.10-424osd-single-device", "(ceph daemon osd.N", "osd_op_queue"),
        ("clyso-02-pacific-16.2.10-hdd-24-per-nvme-db", "(ceph tell osd.N perf dump)", "osd_op_queue"),
        ("clyso-01-quincy-17.2.5-hdd-pm1733-nvme-db", "(ceph tell osd.N perf dump)", "mClock capacities"),
    ],
)
def test_what_is_missing_is_asked_for_as_the_release_gives_it(case, perf, config):
    missing = answer(CLUSTERS / case)["missing"]
    assert [m for m in missing if m.startswith("no perf dump") and perf in m]
    said = [m for m in missing if m.startswith("no config dump")]
    assert (config is None and not said) or (config and said and config in said[0])


@needs_data
def test_a_full_db_is_not_told_to_use_its_spare_space():
    """Ceph's documentation quotes osd.76 spilling with 56 of 60 GiB used and answers it with a
    larger DB volume (lvextend, bluefs-bdev-expand, bluefs-bdev-migrate): a full DB has no spare
    space for bluestore_volume_selection_policy=use_some_extra to give."""
    doc = answer(CLUSTERS / "ceph-docs-spillover-pacific-16.2.14")
    (f,) = doc["findings"]
    assert "the DB is full" in f["message"]
    assert not any("use_some_extra" in x for x in f["fixes"]) and not doc["config_lines"]
    assert any("bluefs-bdev-expand" in x for x in f["fixes"])


@needs_data
def test_a_spread_to_the_default_says_the_capacity_is_not_set(capsys, monkeypatch):
    """McGarrah's cluster: three OSDs carry a measured capacity (86-89), the six others none (the
    author's complaint), so Ceph's default 315 is in force on them: the finding says so."""
    from diskq.cli.cluster import _render

    doc = answer(CLUSTERS / "mcgarrah-alteredcarbon-proxmox-usb-hdd")
    (f,) = [f for f in doc["findings"] if f["rule"] == "mclock_spread"]
    assert f["evidence"]["default"] == [2, 3, 5, 6, 7, 8]
    assert (
        "osd.2, osd.3, osd.5, osd.6, osd.7, osd.8 have no capacity set: Ceph's default 315 is in force" in f["message"]
    )
    monkeypatch.setenv("COLUMNS", "200")  # the OSD table whole
    _render(doc)
    assert "315 (default)" in capsys.readouterr().out


def test_evidence_reads_without_python_reprs(tmp_path):
    """The 14.0 wording of BLUEFS_SPILLOVER gives no DB use or size, and a slow-ops check lists
    its detail lines: the page shows them as words and figures, never None or ['...']."""
    from diskq.publish.cluster import render_html

    for name in ("ceph-25703.health-detail.txt", "keiretsu-2212.health-detail.txt"):
        d = tmp_path / name
        d.mkdir()
        shutil.copy(FIX / name, d)
        page = render_html(answer(d))
        assert "None" not in page and "[&#39;" not in page and "= []" not in page


def test_a_page_without_osds_has_no_empty_osd_table(tmp_path):
    shutil.copy(FIX / "ceph-23075.excerpt.lvm-batch-report.txt", tmp_path)  # a plan: no OSD yet
    from diskq.publish.cluster import render_html

    assert "<h2>OSDs</h2>" not in render_html(answer(tmp_path))


@needs_data
def test_the_text_table_names_an_osd_whose_data_shares_the_db_drive(capsys, monkeypatch):
    """clyso-02: each Dell NVMe holds 24 HDD OSDs' DBs and, as another namespace, one flash
    OSD's data: its row says so, as the docs promise (the JSON has it in data_osds)."""
    from diskq.cli.cluster import _render

    monkeypatch.setenv("COLUMNS", "200")
    _render(answer(CLUSTERS / "clyso-02-pacific-16.2.10-hdd-24-per-nvme-db"))
    row = next(line for line in capsys.readouterr().out.splitlines() if "iospsc04n01" in line)
    assert "24 + osd.297 (data)" in row


def test_one_of_a_kind_is_counted_in_the_singular(tmp_path, capsys):
    """The one spillover line of the Ceph documentation: '1 finding on 1 OSD', not '1 findings'."""
    from diskq.cli.cluster import _render
    from diskq.publish.cluster import render_html

    shutil.copy(FIX / "ceph-docs-pacific-16.2.14.excerpt.health-detail.txt", tmp_path)
    doc = answer(tmp_path)
    _render(doc)
    out = capsys.readouterr().out
    assert out.startswith("1 OSD, 0 DB drives, 1 finding on 1 OSD ")
    assert "1 finding on\n1 OSD." in render_html(doc)


@needs_data
def test_a_file_of_another_name_is_named_not_passed_over():
    """web3one's raw monitoring logs (*.log) beside the outputs: named as not read, not ignored."""
    problems = inputs.read_dir(CLUSTERS / "web3one-rook-hdd-intel-p4610-db").problems
    assert any(p.startswith("raw-ceph_osd_df.log, raw-ceph_osd_perf.log: not read") for p in problems)


@needs_data
def test_a_caveat_counts_osds_not_devices():
    """Azure: 18 OSDs, 15 with a DB on its own virtual disk. The virtual-disk caveat names each
    OSD once with its devices (33 devices once read as '4 and 29 more' OSDs of 18)."""
    doc = answer(CLUSTERS / "clyso-04-octopus-15.2.14-azure-vm-db")
    virtual = next(c for c in doc["caveats"] if c["kind"] == "virtual")
    assert len(virtual["on"]) == 18
    assert "osd.3 (ceph-vm-az1-1: data sdf (Virtual Disk), DB sde (Virtual Disk))" in virtual["on"]


@needs_data
def test_bluefs_on_the_main_device_is_not_called_a_db(capsys, monkeypatch):
    """clyso's 30.7 TB flash OSD has no DB device: BlueFS counts the whole main device as its
    "db", which must not read as a 30,726 GB DB."""
    from diskq.cli.cluster import _render
    from diskq.publish.cluster import render_html

    doc = answer(CLUSTERS / "clyso-perf-dump-nvme-30tb")
    monkeypatch.setenv("COLUMNS", "250")
    _render(doc)
    out = capsys.readouterr().out
    assert "BlueFS on the main device (no dedicated DB) 214.4 of 30,726.0 GB" in out and "BlueFS DB" not in out
    assert "BlueFS DB" not in render_html(doc)


@needs_data
def test_a_bench_read_is_shown(capsys, monkeypatch):
    """McGarrah's `ceph tell osd.0 bench` (1,046 IOPS, against a capacity of 86 in force) is
    read: the table and the page show it, not the JSON alone."""
    from diskq.cli.cluster import _render
    from diskq.publish.cluster import render_html

    doc = answer(CLUSTERS / "mcgarrah-alteredcarbon-proxmox-usb-hdd")
    monkeypatch.setenv("COLUMNS", "250")
    _render(doc)
    row = next(line for line in capsys.readouterr().out.splitlines() if "osd.0 " in line and "│" in line)
    assert row.rstrip(" │").endswith("1,046")
    assert "ceph tell bench: 1,046 IOPS" in render_html(doc)


def test_the_first_spillover_wording_dates_its_release(tmp_path):
    """'osd:0 spilled over to slow device' is Nautilus 14.0/14.1's wording: no use_some_extra
    (a later release's option) is offered to it, nor a ceph config line for it."""
    shutil.copy(FIX / "ceph-25703.health-detail.txt", tmp_path)
    doc = answer(tmp_path)
    spill = [f for f in doc["findings"] if f["rule"] == "spillover"]
    assert len(spill) == 2 and not doc["config_lines"]
    assert all(not any("use_some_extra" in x for x in f["fixes"]) for f in spill)
    assert all(any("compact" in x for x in f["fixes"]) for f in spill)


def test_one_osd_of_a_listing_is_one_osd(tmp_path):
    shutil.copy(FIX / "ceph-18095.excerpt.lvm-list.txt", tmp_path)
    doc = answer(tmp_path)
    assert any(m.endswith("; 1 OSD known from the other outputs only") for m in doc["missing"])
    assert doc["inputs"]["read"] == ["ceph-18095.excerpt.lvm-list.txt: ceph-volume lvm list of unknown host (1 OSD)"]


@needs_data
def test_a_filestore_osd_is_named_as_one_in_the_text(capsys, monkeypatch):
    """Jewel's FileStore OSD: the text says where it commits (its journal), not a bare "No findings"."""
    from diskq.cli.cluster import _render

    monkeypatch.setenv("COLUMNS", "250")
    _render(answer(CLUSTERS / "frank6866-jewel-10.2.5-filestore"))
    assert "FileStore: osd.1 (ceph-1: journal /var/lib/ceph/osd/ceph-1/journal): commits go to the journal" in (
        capsys.readouterr().out
    )


def test_the_osds_a_health_check_names_are_counted(tmp_path):
    """Five OSDs with slow BlueStore operations and nothing else: '5 OSDs ... 1 finding on 5 OSDs',
    not '0 OSDs', and their unknown devices said once."""
    shutil.copy(FIX / "keiretsu-2212.health-detail.txt", tmp_path)
    doc = answer(tmp_path)
    assert doc["summary"]["osds"] == 5 and doc["summary"]["osds_flagged"] == 5
    (f,) = doc["findings"]
    assert "On osd.2, osd.5, osd.8, osd.11, osd.13 (host and devices unknown: no osd metadata)" in f["message"]
    # a spilling OSD has a DB device: nothing says otherwise of osd.76
    spill = tmp_path / "spill"
    spill.mkdir()
    shutil.copy(FIX / "ceph-docs-pacific-16.2.14.excerpt.health-detail.txt", spill)
    (f,) = answer(spill)["findings"]
    assert "whether it has a DB" not in f["message"]
