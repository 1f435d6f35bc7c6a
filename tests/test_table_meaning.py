"""The table must mean what it says: OSDs per device ranked by what a device carries, the
community table's curves read as their contributors wrote them, conflicts between figures shown,
outliers and duplicates kept out of the figures, and hosts never ranked among drives; through the
database, `diskq lookup` and the site."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest

from diskq.analyse.answer import osd_cap
from diskq.analyse.source import read_words
from diskq.database.build import build, repo_root
from diskq.database.synthetic import result_document, submission, write_submission
from diskq.publish.site import build_site
from tests.cli_support import cli
from tests.cli_support import rows as _rows


@pytest.fixture(scope="module")
def legacy(tmp_path_factory):
    """devices.db and the site built from the committed community-table submissions."""
    root = tmp_path_factory.mktemp("legacy")
    db = root / "devices.db"
    report = build(repo_root() / "submissions", db)
    assert report.skipped == []
    build_site(db, root / "_site")
    return db, root / "_site"


def _device(db, model):
    (row,) = _rows(db, "SELECT * FROM devices WHERE model = ?", model)
    return row


def _osds_cell(html: str, device_id: str) -> tuple[float, str]:
    """(data-n, text) of the OSDs per device cell in the row linking to ``device_id``."""
    row = re.search(
        rf'<tr[^>]*>\s*<td[^>]*>\d+</td>\s*<td[^>]*><a href="devices/{device_id}.html">.*?</tr>', html, re.S
    ).group(0)
    cells = re.findall(r"<td([^>]*)>(.*?)</td>", row, re.S)
    attrs, text = cells[10]
    return float(re.search(r'data-n="([^"]*)"', attrs).group(1)), re.sub(r"<[^>]+>", "", text)


# --- 15.1: OSDs per device sorts by what a device can carry -----------------------------------


def test_the_pm883_sorts_above_the_ultra_ii_in_the_osds_column(legacy):
    db, site = legacy
    fast, slow = _device(db, "Samsung PM883"), _device(db, "Sandisk Ultra II")
    # the Ultra II's curve allowed 8 (455 commits/s each), but its tier is unsuitable: none, one answer
    assert (fast["osds_per_device"], slow["osds_per_device"], slow["ceph_waldb"]) == (16, 0, "unsuitable")
    assert round(fast["osds_per_osd_iops"]) == 3709 and slow["osds_per_osd_iops"] is None
    assert fast["osds_demand_iops"] == 315
    assert fast["osds_order"] > slow["osds_order"]
    html = (site / "index.html").read_text()
    n_fast, text_fast = _osds_cell(html, fast["id"])
    n_slow, text_slow = _osds_cell(html, slow["id"])
    assert n_fast > n_slow  # what table.js sorts by
    assert text_fast == "16 3,709/s each" and text_slow == "none"
    # the Intel SSD 750's figures are FUA writes at an unknown cache state: a best case, no count
    ssd750 = _device(db, "Intel SSD 750 PCIe")
    assert ssd750["osds_per_device"] is None and ssd750["ceph_waldb"] is None


def test_the_osds_column_never_ranks_a_device_below_one_that_carries_less(legacy):
    db, _ = legacy
    rows = _rows(
        db,
        "SELECT model, osds_per_device AS n, osds_per_osd_iops AS r, osds_order FROM devices WHERE osds_per_device > 0",
    )
    for a in rows:
        for b in rows:
            if a["n"] >= b["n"] and a["r"] >= b["r"]:
                assert a["osds_order"] >= b["osds_order"], (a, b)


def test_lookup_shows_the_per_osd_rate_beside_the_count(legacy, capsys):
    db, _ = legacy
    assert cli("lookup", "pm883", "--db", str(db)) == 0
    assert "OSDs per device: 16 (3,709/s each; one HDD OSD needs 315)" in capsys.readouterr().out
    assert cli("lookup", "pm883", "--db", str(db), "--json") == 0
    device = json.loads(capsys.readouterr().out)[0]["device"]
    assert (device["osds_per_device_text"], device["osds_rate_text"], device["osds_demand_iops"]) == (
        "16",
        "3,709/s each",
        315,
    )


def test_a_device_too_slow_for_one_osd_reads_none(tmp_path, capsys):
    subs = tmp_path / "submissions"
    write_submission(subs, submission(result_document("Slow SATA SSD X1", {"off": {1: 250, 2: 300}})))
    build(subs, tmp_path / "devices.db")
    assert cli("lookup", "slow sata", "--db", str(tmp_path / "devices.db")) == 0
    assert "OSDs per device: none (one HDD OSD needs 315 commits/s)" in capsys.readouterr().out
    build_site(tmp_path / "devices.db", tmp_path / "_site")
    html = (tmp_path / "_site" / "index.html").read_text()
    (dev,) = _rows(tmp_path / "devices.db", "SELECT id, osds_order FROM devices")
    n, text = _osds_cell(html, dev["id"])
    assert text == "none" and 0 < n < 1


# --- 15.2: the community table's curves, as their contributors wrote them ----------------------


def test_no_legacy_row_claims_more_osds_than_its_source_measured(legacy):
    db, _ = legacy
    # no row claims more OSDs than its contributor's sweep measured jobs, nor more than its tier allows
    rows = _rows(
        db,
        "SELECT id, model, osds_per_device, osds_limited_by_sweep, ceph_waldb FROM devices "
        "WHERE legacy > 0 AND osds_per_device IS NOT NULL",
    )
    assert rows
    for r in rows:
        (top,) = _rows(db, "SELECT MAX(numjobs) AS n FROM curve WHERE device_id = ?", r["id"])
        assert r["osds_per_device"] <= top["n"], r
        cap = osd_cap(r["ceph_waldb"])
        assert cap is None or r["osds_per_device"] <= cap, r
    # the S4510's notes show its sweep to 16 jobs (4,600 to 4,899 IOPS): its curve allows 8 OSDs, its
    # marginal Ceph WAL/DB tier at most 2, and "stopped at 1 job" is gone
    s4510 = _device(db, "Intel SSD S4510")
    assert (s4510["ceph_waldb"], s4510["osds_per_device"], s4510["peak_jobs"]) == ("marginal", 2, 8)


def test_every_legacy_class_agrees_with_its_contributors_words(legacy):
    db, site = legacy
    rows = _rows(
        db,
        "SELECT d.model, d.id, c.scaling_json, c.source_words FROM devices d JOIN device_cache c "
        "ON c.device_id = d.id AND c.write_cache = d.cache AND c.knob = d.cache_knob",
    )
    checked = 0
    for r in rows:
        scaling = json.loads(r["scaling_json"]) if r["scaling_json"] else None
        words = read_words(r["source_words"])
        if scaling is None or words is None:
            continue
        if r["model"] == "Samsung SSD 860 EVO":
            # its whole sweep (1 to 16 jobs, notes at 5ecb742) falls at 3 and after 14 jobs (1,728 to
            # 1,338): the points decide, not "linear until capped", which described two figures
            assert (scaling["scaling"], scaling["method"]) == ("regressing", "shape")
            checked += 1
            continue
        assert scaling["scaling"] == words.scaling, r["model"]
        if scaling["method"] == "contributor":
            assert scaling["description"] == r["source_words"], r["model"]
            page = (site / "devices" / f"{r['id']}.html").read_text()
            assert (
                f"In the contributor's words (two points cannot decide the shape, so these words do): "
                f"<q>{r['source_words']}</q>" in page
            )
        checked += 1
    assert checked == 19  # every row (the S4510's notes give it a curve beside its conflict)


def test_the_970_pro_and_the_mzqlw_read_as_their_contributors_wrote(legacy, capsys):
    db, _ = legacy
    assert _device(db, "Samsung SSD 970 PRO")["scaling"] == "asymptotic"  # was "linear, up to 2 jobs"
    assert cli("lookup", "970 pro", "--db", str(db)) == 0
    out = capsys.readouterr().out
    assert "cache unknown: 2 jobs already saturate (the contributor's words)" in out
    # its curve allows 2 (420/s each), its tier (even its FUA best case) is unsuitable: none
    assert "OSDs per device: none" in out and "the curve alone would allow 2" in out and "\u2265" not in out
    (cache,) = _rows(
        db, "SELECT scaling_json FROM device_cache WHERE device_id = ?", _device(db, "Samsung MZQLW960HMJP-00003")["id"]
    )
    assert json.loads(cache["scaling_json"])["knee"] == 8


# --- 15.3: conflicts between figures, outliers, duplicates --------------------------------------


def test_the_s4510_row_is_a_conflict_with_both_figures_shown(legacy, capsys):
    # (tests/test_conflicts.py holds the same row with a second source for the model)
    db, site = legacy
    dev = _device(db, "Intel SSD S4510")
    # the older notes' figures (2 to 16 jobs, at the low end of their ranges) stand; the table's 48,409
    # at 15 jobs is held out
    # the OSD count is the marginal tier's cap (2), below the 8 its curve allows
    assert (dev["max_iops"], dev["peak_jobs"], dev["scaling"], dev["osds_per_device"]) == (4600, 8, "asymptotic", 2)
    points = _rows(db, "SELECT numjobs, iops, conflict, held FROM points WHERE conflict IS NOT NULL")
    assert [(p["numjobs"], p["iops"], p["held"]) for p in points] == [(1, 1600, 0), (15, 48409, 1)]
    assert all("3,227 per job, 2.0x the 1-job figure) cannot both be right" in p["conflict"] for p in points)
    assert not any("typo" in p["conflict"] for p in points)
    assert cli("lookup", "s4510", "--db", str(db)) == 0
    assert (
        "conflict: cache off, 48,409 IOPS at 15 jobs: held out of the verdicts (undecided)" in capsys.readouterr().out
    )
    assert cli("lookup", "s4510", "--db", str(db), "--json") == 0
    assert [c["numjobs"] for c in json.loads(capsys.readouterr().out)[0]["conflicts"]] == [1, 15]
    page = (site / "devices" / f"{dev['id']}.html").read_text()
    assert 'id="conflicts"' in page and "<strong>48,409 IOPS at 15 jobs</strong>" in page
    html = (site / "index.html").read_text()
    assert re.search(
        rf'href="devices/{dev["id"]}.html"[^\n]*\n(?:<td[^\n]*\n)*?<td[^>]*>[^\n]*<span class="conflict"', html
    )


def test_a_submission_far_from_its_models_others_is_not_aggregated(tmp_path, capsys):
    subs = tmp_path / "submissions"
    for i, one in enumerate((1000, 1100, 950)):
        write_submission(
            subs,
            submission(
                result_document(
                    "Example SSD Z9", {"off": {1: one, 2: one * 1.8}}, created=datetime(2025, 1, 1 + i, tzinfo=UTC)
                )
            ),
        )
    forged = write_submission(
        subs,
        submission(
            result_document("Example SSD Z9", {"off": {1: 9800, 2: 17000}}, created=datetime(2025, 2, 1, tzinfo=UTC))
        ),
    )
    db = tmp_path / "devices.db"
    build(subs, db)
    dev = _device(db, "Example SSD Z9")
    assert dev["submissions"] == 3 and dev["iops_1job"] == 1000
    (row,) = _rows(db, "SELECT path, aggregated, excluded FROM submissions WHERE aggregated = 0")
    assert row["path"].endswith(forged.name)
    assert (
        "1-job IOPS 9,800 at cache off is 9.3x the median 1,050 of all 4 figures of this model (4 submissions)"
        in row["excluded"]
    )
    assert cli("lookup", "example ssd z9", "--db", str(db)) == 0
    assert "not aggregated: " in capsys.readouterr().out


def test_the_same_figures_signed_again_count_once(tmp_path):
    subs = tmp_path / "submissions"
    curve = {"off": {1: 5000, 2: 9000, 4: 15000}}
    first = write_submission(
        subs, submission(result_document("Example SSD D1", curve, created=datetime(2025, 3, 1, tzinfo=UTC)))
    )
    again = write_submission(
        subs, submission(result_document("Example SSD D1", curve, created=datetime(2025, 6, 1, tzinfo=UTC)))
    )
    assert first != again
    db = tmp_path / "devices.db"
    report = build(subs, db)
    assert report.submissions == 1 and _device(db, "Example SSD D1")["submissions"] == 1
    (skip,) = report.skipped
    # the earlier measurement stays, whichever path sorts first
    assert skip.path.endswith(again.name) and f"duplicate of {first.relative_to(subs).as_posix()}" in skip.message
    assert _rows(db, "SELECT path FROM skipped") == [{"path": skip.path}]


# --- 15.6: hosts are never ranked among drives --------------------------------------------------


def test_a_loop_device_is_stored_and_looked_up_but_never_ranked(tmp_path, capsys):
    subs = tmp_path / "submissions"
    loop = result_document(
        "Linux loop device",
        {"on": {1: 30000, 2: 52000}},
        protocol="unknown",
        cache_mechanism="sysfs",
        volatile_write_cache=None,
    )
    loop["device"]["path"] = "/dev/loop7"
    write_submission(subs, submission(loop))
    write_submission(subs, submission(result_document("Samsung PM883", {"off": {1: 12680, 16: 59338}})))
    db = tmp_path / "devices.db"
    build(subs, db)
    host = _device(db, "Linux loop device")
    assert host["rank"] is None and "a Linux loop device (/dev/loop7)" in host["not_drive"]
    assert _device(db, "Samsung PM883")["rank"] == 1
    assert cli("lookup", "loop device", "--db", str(db)) == 0
    out = capsys.readouterr().out
    assert "(not a drive: not ranked)" in out and "#" not in out.splitlines()[0]
    build_site(db, tmp_path / "_site")
    html = (tmp_path / "_site" / "index.html").read_text()
    table, _, rest = html.partition("</table>")
    assert "Linux loop device" not in table and "Samsung PM883" in table
    assert 'id="hosts"' in rest and f'href="devices/{host["id"]}.html"' in rest
    page = (tmp_path / "_site" / "devices" / f"{host['id']}.html").read_text()
    assert "not ranked" in page and "Not a drive, not ranked: a Linux loop device" in page
    doc = json.loads((tmp_path / "_site" / "devices.json").read_text())
    assert [d["rank"] for d in doc["devices"]] == [1, None]


@pytest.mark.parametrize(
    "device, why",
    [
        ({"path": "/dev/zram0"}, "zram"),
        ({"path": "/dev/vdb"}, "virtual machine"),
        ({"path": "/dev/dm-3"}, "device-mapper"),
        ({"path": "/dev/mapper/vg-lv"}, "device-mapper"),
        ({"path": "/dev/md127"}, "md RAID"),
        ({"model": "PERC H730P Mini"}, "RAID controller"),
        ({"model": "QEMU HARDDISK"}, "hypervisor"),
        ({"kind": "file", "filesystem": "ext4", "path": "/var/tmp/t.img"}, "file on a filesystem on ext4"),
    ],
)
def test_hosts_are_recognised_from_the_result(device, why):
    from diskq.analyse.hostdevice import not_a_drive
    from diskq.result import Device, Method, ResultDocument

    doc = ResultDocument(created="2026-01-01T00:00:00Z", device=Device(**{"model": "X", **device}), method=Method())
    assert why in not_a_drive(doc)
    drive = ResultDocument(
        created="2026-01-01T00:00:00Z",
        method=Method(),
        device=Device(path="/dev/sdb", model="Samsung SSD 860 PRO 512GB"),
    )
    assert not_a_drive(drive) is None


def test_readme_methodology_and_criteria_say_the_same(legacy):
    from diskq.analyse.verdicts import load_criteria

    crit = load_criteria()
    readme = (repo_root() / "README.md").read_text()
    ratio, outlier = crit["plausibility"]["max_per_job_ratio"], crit["outliers"]["max_ratio"]
    assert f"more than {ratio:g}× the curve's own 1-job rate" in readme
    assert f"max_per_job_ratio = {ratio}" in (repo_root() / "src/diskq/analyse/criteria.toml").read_text()
    assert f"more than {outlier:g}× or less than half the median" in readme
    assert (
        f"{crit['osds_per_device']['demand_hdd_osd']} commits/s (Ceph's `osd_mclock_max_capacity_iops_hdd`)" in readme
    )
    _, site = legacy
    page = " ".join((site / "methodology.html").read_text().split())
    assert f"more than {ratio} times the curve's own 1-job rate is never called a typo" in page
    for said in ("a lower bound", "observation", "conflict"):
        assert said in page and said in readme and said in crit["plausibility"]["justification"]
    assert f"more than {outlier} times away from the median of all {crit['outliers']['min_figures']} or more" in page
    for key in ("plausibility", "outliers", "contributor_words", "osds_per_device"):
        assert f'id="crit-{key}"' in page
    assert f"Criteria version {crit['version']}." in page


def test_a_drives_result_measured_through_device_mapper_is_not_aggregated(tmp_path):
    subs = tmp_path / "submissions"
    direct = result_document("Samsung PM883", {"off": {1: 12680, 16: 59338}})
    direct["device"]["path"] = "/dev/sdb"
    stacked = result_document("Samsung PM883", {"off": {1: 9000, 16: 40000}})
    stacked["device"]["path"] = "/dev/mapper/vg0-wal"
    write_submission(subs, submission(direct))
    write_submission(subs, submission(stacked))
    db = tmp_path / "devices.db"
    build(subs, db)
    dev = _device(db, "Samsung PM883")
    assert (dev["rank"], dev["submissions"], dev["iops_1job"], dev["not_drive"]) == (1, 1, 12680, None)
    (row,) = _rows(db, "SELECT not_drive, excluded FROM submissions WHERE aggregated = 0")
    assert "device-mapper" in row["not_drive"] and row["excluded"].endswith("not aggregated into a drive's figures")


def test_the_same_figures_under_another_model_name_count_once(tmp_path):
    subs = tmp_path / "submissions"
    curve = {"off": {1: 5000, 2: 9000, 4: 15000}}
    write_submission(subs, submission(result_document("Example SSD D1", curve)))
    write_submission(subs, submission(result_document("Example SSD D2", curve)))
    report = build(subs, tmp_path / "devices.db")
    assert report.submissions == 1 and report.devices == 1
    (skip,) = report.skipped
    assert "duplicate of" in skip.message and "the same measured figures" in skip.message
