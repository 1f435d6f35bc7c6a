"""diskq cluster over real outputs of every kind it reads: health checks by name (text and
JSON, every spillover wording), ceph osd perf, ceph-volume lvm list, ceph-disk list, lvm batch
--report, FileStore, and what it refuses. The files are in tests/fixtures/ceph (each with its
address in SOURCES.md there); the larger recorded clusters are read from beside the checkout and
skip, with the reason, where absent. Where a case puts files of two clusters side by side, it
says so.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diskq.cluster import checks, inputs, report
from diskq.errors import InvalidInput
from tests.cluster_support import CLUSTERS, DB, FIX, needs_data


def answer_of(tmp_path: Path, *files: Path) -> dict:
    for f in files:
        shutil.copy(f, tmp_path)
    return report.build(inputs.read_dir(tmp_path), db=DB)


def rules(doc: dict) -> list[str]:
    return [f["rule"] for f in doc["findings"]]


def test_slow_bluestore_ops_in_text_are_read_by_name(tmp_path):
    """The text health detail the issue names: BLUESTORE_SLOW_OP_ALERT on five OSDs."""
    doc = answer_of(tmp_path, FIX / "keiretsu-2212.health-detail.txt")
    (f,) = doc["findings"]
    assert f["rule"] == "bluestore_slow_ops" and f["osds"] == [2, 5, 8, 11, 13]
    assert "_txc_committed_kv" in f["message"] and f["fixes"]
    assert doc["health"]["checks"] == ["BLUESTORE_SLOW_OP_ALERT"]


def test_the_first_spillover_wording_is_a_finding_not_a_clean_bill(tmp_path):
    """14.0/14.1's `osd:0 spilled over to slow device: 3 MiB`, beside two checks off the commit path."""
    doc = answer_of(tmp_path, FIX / "ceph-25703.health-detail.txt")
    spill = [f for f in doc["findings"] if f["rule"] == "spillover"]
    assert [f["osds"] for f in spill] == [[0], [1]]
    assert all(f["evidence"]["spilled_bytes"] == 3 * 2**20 and f["evidence"]["wording"] == "14.0/14.1" for f in spill)
    # the DB size is in neither line: full DB and level sizing are not told apart, and it says so
    assert all("cannot be told apart" in f["message"] for f in spill)
    assert {c["name"] for c in doc["health"]["other"]} == {"BLUESTORE_NO_COMPRESSION", "MGR_MODULE_DEPENDENCY"}


def test_spillover_from_a_20_gib_db_using_2_gib_is_level_sizing(tmp_path):
    """Nautilus, Rook: 11 GiB spilled while 1.9 GiB of a 20 GiB DB is used."""
    doc = answer_of(tmp_path, FIX / "rook-3448.excerpt.health-detail.txt")
    (f,) = doc["findings"]
    assert f["rule"] == "spillover" and f["osds"] == [32]
    assert "level sizing, not a full DB (1.9 GiB of 20.0 GiB used)" in f["message"]
    assert "256 MiB x10 (RocksDB's defaults)" in f["message"] and "1 GiB x8" in f["message"]
    # RocksDB's own levels (256 MiB x10): L1+L2 (2.8 GiB) fit, L3 (25 GiB) does not; Ceph's recent
    # (1 GiB x8): L1+L2 (9 GiB) fit, L3 (64 GiB) does not. Both given, the OSD's options unknown.
    assert "L1..L2 (2.8 GiB) and L3 (25.0 GiB)" in f["message"]
    assert "L1..L2 (9.0 GiB) and L3 (64.0 GiB)" in f["message"]
    assert "bluestore_rocksdb_options" in f["message"]
    assert f["config"] == ["ceph config set osd.32 bluestore_volume_selection_policy use_some_extra"]


def test_a_full_db_is_not_called_level_sizing(tmp_path):
    doc = answer_of(tmp_path, FIX / "ceph-docs-pacific-16.2.14.excerpt.health-detail.txt")
    (f,) = doc["findings"]
    assert "the DB is full (56.0 GiB used of 60.0 GiB)" in f["message"]


def test_the_levels_come_from_the_osds_options_where_known():
    from diskq.cluster import explain

    rocks = explain.rocksdb_levels(
        "compression=kLZ4Compression,max_bytes_for_level_base=1073741824,"
        "max_bytes_for_level_multiplier=8,compaction_readahead_size=2MB"
    )
    cause, fixes, config = explain.spillover(3, 2**30, 5 * 2**30, 30 * 2**30, 17, rocks, "use_some_extra")
    assert "1 GiB x8 (bluestore_rocksdb_options)" in cause and "L1..L2 (9.0 GiB)" in cause
    assert not config and any("already use_some_extra" in x for x in fixes)
    # before Nautilus BlueFS cannot migrate: the fix is a redeploy
    _, fixes, config = explain.spillover(3, 2**30, 5 * 2**30, 30 * 2**30, 12, None, None)
    assert any("redeploy" in x for x in fixes) and not config


@pytest.mark.parametrize(
    "name, flagged",
    [
        ("rook-11005.osd-perf.2022-08-29.txt", [0]),
        ("rook-11005.osd-perf.2022-09-14.txt", [0, 4]),
        ("ceph-45566.osd-perf.txt", []),
    ],
)
def test_osd_perf_against_peers(tmp_path, name, flagged):
    """Hundreds of ms on some SSD OSDs against tens on their peer; three evenly slow OSDs are
    not outliers of one another."""
    doc = answer_of(tmp_path, FIX / name)
    assert sorted(o for f in doc["findings"] if f["rule"] == "commit_latency_peers" for o in f["osds"]) == flagged
    assert doc["osd_perf"]["osds"] == 3 and doc["osd_perf"]["committing"] == 3


@needs_data
def test_osd_perf_samples_of_a_mostly_idle_class_flag_nothing(tmp_path):
    """Rook, 36 HDD OSDs (DB on a P4610) and 9 NVMe OSDs, sampled every few seconds during a
    benchmark: in the sample with the highest latency (osd.28 at 122 ms) only two HDD OSDs
    committed, which is no class to compare with; the osd df beside it gives the classes."""
    import re

    case = CLUSTERS / "web3one-rook-hdd-intel-p4610-db"
    raw = (case / "raw-ceph_osd_perf.log").read_text()
    parts = re.split(r"^=+ \[(\d+)\] .*$", raw, flags=re.M)
    samples = dict(zip(parts[1::2], parts[2::2], strict=False))
    (tmp_path / "osd-perf.txt").write_text(samples["48"].split("===", 2)[-1].split("\n", 1)[1])
    shutil.copy(case / "osd-df.txt", tmp_path)
    doc = report.build(inputs.read_dir(tmp_path), db=DB)
    assert doc["osd_perf"]["max_ms"] == 122.0 and doc["osd_perf"]["max_osd"] == 28
    assert doc["osd_perf"]["committing"] == 2 and "commit_latency_peers" not in rules(doc)
    assert {o["device_class"] for o in doc["osds"]} == {"hdd", "nvme"}


def test_osd_perf_json_of_nautilus_and_later():
    from diskq.cluster.perf import osd_perf

    rows = osd_perf(
        {
            "osdstats": {
                "osd_perf_infos": [
                    {
                        "id": 1,
                        "perf_stats": {
                            "commit_latency_ms": 168,
                            "apply_latency_ms": 168,
                            "commit_latency_ns": 168000000,
                            "apply_latency_ns": 168000000,
                        },
                    }
                ]
            }
        }
    )
    assert rows[1].commit_ms == 168.0


def test_lvm_list_names_dm_crypt_and_bcache_beside_the_metadata(tmp_path):
    """Octopus 15.2.14: the metadata (bcache, no device ids) and the OSD host's lvm list (dm-crypt)."""
    doc = answer_of(
        tmp_path,
        FIX / "hotsos-octopus-15.2.14.osd-metadata.json",
        FIX / "hotsos-octopus-15.2.14.ceph-volume-lvm-list.compute4.txt",
    )
    kinds = {c["kind"]: c for c in doc["caveats"]}
    assert set(kinds) == {"bcache", "dm-crypt"}
    assert len(kinds["bcache"]["on"]) == 3
    assert kinds["dm-crypt"]["on"] == ["osd.0 (compute4: data bcache1)"]
    assert any("lvm list of compute4" in r for r in doc["inputs"]["read"])


def test_a_filestore_lvm_list_and_ceph_disk_list_give_the_journal(tmp_path):
    from diskq.cluster import volumes

    (osd,) = volumes.lvm_list((FIX / "ceph-18095.excerpt.lvm-list.txt").read_text())
    assert osd.osd == 1 and osd.objectstore == "filestore" and osd.device("journal") == "/dev/journals/journal1"
    (osd,) = volumes.ceph_disk_list((FIX / "ceph-container-790.ceph-disk-list.txt").read_text())
    assert osd.osd == 1 and osd.device("data") == "/dev/sdb" and osd.device("journal") == "/dev/sdc"
    doc = answer_of(tmp_path, FIX / "ceph-container-790.ceph-disk-list.txt")
    (row,) = doc["osds"]
    assert row["commit_device"] == "journal" and row["objectstore"] == "filestore"


def test_a_batch_report_is_read_as_a_plan(tmp_path):
    doc = answer_of(tmp_path, FIX / "ceph-23075.excerpt.lvm-batch-report.txt")
    (plan,) = doc["plans"]
    assert plan["db_devices"] == {"/dev/nvme0n2": 1}
    assert plan["db_sizes"][0]["db_bytes"] == int(6.46 * 2**30)  # Size per LV, not the VG's 19.39 GB


@needs_data
def test_every_health_check_of_the_recorded_reports_is_judged_or_named():
    """No recorded health check is lost: each is a finding, a named other check, or unparsed."""
    seen = 0
    for d in sorted(p for p in CLUSTERS.iterdir() if (p / "ceph-report.json").is_file()):
        data = json.loads((d / "ceph-report.json").read_text())
        found = checks.checks(data) or []
        doc = report.build(inputs.read_dir(d), db=None)
        judged = {f["evidence"].get("check") for f in doc["findings"]}
        other = {c["name"] for c in (doc["health"] or {}).get("other", [])}
        for c in found:
            seen += 1
            assert c.name in judged | other, (d.name, c.name)
    assert seen


@needs_data
def test_slow_ops_of_monitors_only_are_named_not_an_osd_finding():
    """Mimic 13.2.10: SLOW_OPS naming three monitors and no OSD."""
    doc = report.build(inputs.read_dir(CLUSTERS / "clyso-03-mimic-13.2.10-424osd-single-device"), db=None)
    slow = [c for c in doc["health"]["other"] if c["name"] == "SLOW_OPS"]
    assert slow and "no OSD" in slow[0]["note"]
    assert "slow_ops" not in rules(doc)


@needs_data
def test_a_perf_dump_named_by_its_osd_is_judged_without_metadata(tmp_path):
    shutil.copy(CLUSTERS / "clyso-perf-dump-nvme-30tb" / "perf-dump-osd.json", tmp_path / "perf-dump.osd.0.json")
    doc = report.build(inputs.read_dir(tmp_path), db=DB)
    (row,) = doc["osds"]
    assert row["osd"] == 0 and row["bluefs"]["db_total_bytes"] == 30725969543168
    assert row["kv_ms"]["kv_commit_lat"] == pytest.approx(0.1903, abs=1e-3)
    assert not any("not judged" in m for m in doc["missing"])


@needs_data
def test_filestore_is_never_shown_as_an_empty_bluefs(tmp_path, capsys):
    from diskq.cli.cluster import _render

    shutil.copy(CLUSTERS / "telegraf-filestore-perf-dump" / "perf-dump-osd.json", tmp_path / "perf-dump.osd.3.json")
    doc = report.build(inputs.read_dir(tmp_path), db=DB)
    (row,) = doc["osds"]
    assert row["commit_device"] == "journal" and row["bluefs"] is None
    assert row["kv_ms"]["journal_latency"] == pytest.approx(290.981036 / 1108008 * 1000, rel=1e-3)
    _render(doc)
    assert "0.0 of 0.0" not in capsys.readouterr().out


def test_a_db_named_only_in_bluefs_db_devices_is_a_db_device():
    """An OSD whose metadata names its DB device without the bluefs_dedicated_db flag."""
    from diskq.cluster import parse

    meta = json.loads((FIX / "hotsos-octopus-15.2.14.osd-metadata.json").read_text())[0]
    for k in ("bluefs_dedicated_db", "bluefs_single_shared_device"):
        meta.pop(k)
    meta.update({"bluefs_db_devices": "nvme0n1", "bluefs_db_rotational": "0"})
    (o,) = parse.osd_metadata([meta])
    assert o.db is not None and o.db.names == ["nvme0n1"] and o.dedicated_db
    assert any("bluefs_db_devices" in n for n in o.notes)
    meta["bluefs_db_devices"] = meta["bluestore_bdev_devices"]  # Luminous: the main device, no DB
    (o,) = parse.osd_metadata([meta])
    assert o.db is None


@pytest.mark.parametrize(
    "text, what",
    [
        ("  cluster:\n    id:     x\n    health: HEALTH_WARN\n            1 osds down\n", "ceph status"),
        (
            "2022-03-18T18:36:14.293172+0000 mon.a (mon.0) 9766581 : cluster [WRN] Health check update: 3 slow ops, "
            "oldest one blocked for 65 sec, daemons [osd.12,osd.22,osd.6] have slow ops. (SLOW_OPS)\n",
            "SLOW_OPS",
        ),
    ],
)
def test_what_is_not_read_is_named(tmp_path, text, what):
    (tmp_path / "x.txt").write_text(text)
    with pytest.raises(InvalidInput) as exc:
        inputs.read_dir(tmp_path)
    # one line of message, and why each file was left aside under it
    assert "no output diskq cluster reads" in exc.value.message
    assert any(what in reason for reason in exc.value.reasons), exc.value.reasons


COMMIT = sorted(n.rstrip("*") + ("_X" if n.endswith("*") else "") for n in checks.COMMIT_PATH)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(COMMIT),
    st.lists(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=60), max_size=4),
    st.booleans(),
)
def test_a_commit_path_check_never_gives_no_findings(name, details, as_json):
    """Whatever its detail lines say, a check on the commit path is a finding (read, or reported
    unparsed), never "No findings"."""
    if as_json:
        data = {
            "checks": {
                name: {
                    "severity": "HEALTH_WARN",
                    "summary": {"message": "s"},
                    "detail": [{"message": d} for d in details],
                }
            }
        }
    else:
        data = "HEALTH_WARN s\n" + f"[WRN] {name}: s\n" + "".join(f"    {d.strip() or 'x'}\n" for d in details)
    found = checks.checks(data)
    assert found and found[0].name == name
    inp = inputs.Inputs(source="t", checks=found)
    doc = report.build(inp, db=None)
    assert doc["findings"] or doc["health"]["other"]
    if not doc["findings"]:  # only a check naming other daemons and no OSD is set aside, and it says so
        assert all("no OSD" in c.get("note", "") for c in doc["health"]["other"])


_LINES = sorted({ln for f in FIX.glob("*.txt") for ln in f.read_text().splitlines()})


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                [
                    "a.txt",
                    "health.txt",
                    "ceph-volume-lvm-list.h1.txt",
                    "osd-perf.txt",
                    "perf-dump.osd.1.txt",
                    "disk-list.h2.txt",
                ]
            ),
            st.lists(st.sampled_from(_LINES) | st.text(max_size=40), max_size=12),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_any_text_of_recorded_lines_is_read_or_refused_in_one_line(files):
    """Text made of the recorded outputs' lines, in any order and mixed with noise: the answer
    is built, rendered and written as HTML, or one InvalidInput says why; never a traceback."""
    import tempfile

    from diskq.cli.cluster import _render
    from diskq.publish.cluster import render_html

    with tempfile.TemporaryDirectory() as tmp:
        for name, lines in files:
            Path(tmp, name).write_text("\n".join(lines) + "\n")
        try:
            inp = inputs.read_dir(Path(tmp))
        except InvalidInput as exc:
            assert "\n" not in exc.message
            return
        doc = report.build(inp, db=None)
        json.dumps(doc)
        _render(doc)
        assert render_html(doc).startswith("<!DOCTYPE html>")


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["0", "1", "12"]),
        st.lists(
            st.fixed_dictionaries(
                {
                    "type": st.sampled_from(["block", "db", "wal", "journal", "data", "x"]),
                    "devices": st.lists(
                        st.sampled_from(["/dev/sdb", "/dev/nvme0n1", "/dev/mapper/crypt-1"]), max_size=2
                    ),
                    "tags": st.dictionaries(
                        st.sampled_from(["ceph.encrypted", "ceph.osd_id"]), st.sampled_from(["0", "1"])
                    ),
                }
            ),
            max_size=3,
        ),
        min_size=1,
    )
)
def test_lvm_list_json_is_read_whatever_its_volumes(data):
    """The JSON shape of `ceph-volume lvm list --format json`: each OSD's roles, never a crash."""
    from diskq.cluster import volumes

    got = volumes.lvm_list(data)
    assert sorted(o.osd for o in got) == sorted(int(k) for k in data)
    for o in got:
        assert set(o.volumes) <= {"data", "db", "wal", "journal"}


@needs_data
@pytest.mark.parametrize(
    "case, name",
    [
        ("hotsos-octopus-15.2.14-juju-bcache", "osd-df-tree.txt"),
        ("hotsos-octopus-15.2.14-juju-bcache", "osd-df-tree.json"),
        ("nilesh-reef-18.2.4-rook-hyperv-vm", "osd-tree.txt"),
    ],
)
def test_a_tree_names_each_osds_host_without_metadata(tmp_path, case, name):
    """`ceph osd df tree` / `ceph osd tree`: the host above each OSD, for findings to name."""
    shutil.copy(CLUSTERS / case / name, tmp_path)
    doc = report.build(inputs.read_dir(tmp_path), db=None)
    hosts = {o["osd"]: o["host"] for o in doc["osds"]}
    if case.startswith("hotsos"):
        assert hosts == {0: "compute4", 1: "compute1", 2: "compute2"}
    else:
        assert set(hosts.values()) == {"f-titan-aio-001-ct-lan"} and len(hosts) >= 3


@needs_data
def test_a_jewel_clusters_other_outputs_are_named():
    """Jewel 10.2.5: `ceph osd stat` and a tree without device classes, beside FileStore metadata."""
    inp = inputs.read_dir(CLUSTERS / "frank6866-jewel-10.2.5-filestore")
    assert "osd-stat.txt: `ceph osd stat`: counts only; left aside" in inp.problems
    assert any(p.startswith("osd-tree.txt: `ceph osd tree` of a release before Luminous") for p in inp.problems)
    doc = report.build(inp, db=None)
    (row,) = doc["osds"]
    assert row["commit_device"] == "journal" and row["journal"]["names"] == ["/var/lib/ceph/osd/ceph-1/journal"]
