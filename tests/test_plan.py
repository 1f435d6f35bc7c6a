"""diskq plan: layout rules (properties), the cephadm specification and the ceph-volume line
against the Ceph documentation's names, refusals, and end to end on the committed devices.db
and on result documents."""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from diskq.analyse import criteria
from diskq.analyse.model import FlushCheck
from diskq.cli import main
from diskq.errors import InvalidInput, PlanRefused
from diskq.plan import ceph_volume, cephadm, layout, report
from diskq.plan import rules as plan_rules
from diskq.plan.model import WORKLOADS, DataDevices, WalDbDevice, parse_data
from diskq.result import Device, Latency, Method, Point, ResultDocument, Run
from diskq.units import parse_drive_size

REPO = Path(__file__).resolve().parent.parent
DEVICES_DB = REPO / "devices.db"
RULES = plan_rules.load()
CRIT = criteria.load()

# The Ceph documentation's names, checked by hand against
# https://docs.ceph.com/en/latest/cephadm/services/osd/#advanced-osd-service-specifications
# (service_type, service_id, placement.host_pattern, spec: data_devices, db_devices, wal_devices,
# db_slots, block_db_size, filters model, vendor, size, rotational, paths, limit, all).
CEPHADM_TOP = {"service_type", "service_id", "placement", "spec"}
CEPHADM_PLACEMENT = {"host_pattern", "label", "hosts", "count"}
CEPHADM_SPEC = {
    "data_devices",
    "db_devices",
    "wal_devices",
    "db_slots",
    "wal_slots",
    "block_db_size",
    "block_wal_size",
    "osds_per_device",
    "encrypted",
    "method",
    "filter_logic",
}
CEPHADM_FILTERS = {"model", "vendor", "size", "rotational", "paths", "limit", "all"}


def batch_parser(release: str = "squid") -> argparse.ArgumentParser:
    """``ceph-volume lvm batch`` as https://docs.ceph.com/en/latest/man/8/ceph-volume/ lists it;
    from Tentacle with ``--objectstore {bluestore,seastore}`` (ceph/ceph pull request 64323, backported
    by 65038: src/ceph-volume/ceph_volume/devices/lvm/batch.py), whose help marks ``--bluestore``
    deprecated."""
    p = argparse.ArgumentParser(prog="ceph-volume lvm batch", add_help=False, allow_abbrev=False)
    p.add_argument("devices", nargs="*")
    if release == "tentacle":
        p.add_argument("--objectstore", choices=["bluestore", "seastore"])
    for opt in ("--db-devices", "--wal-devices"):
        p.add_argument(opt, nargs="*")
    for opt in (
        "--block-db-size",
        "--block-wal-size",
        "--block-db-slots",
        "--block-wal-slots",
        "--osds-per-device",
        "--format",
        "--crush-device-class",
    ):
        p.add_argument(opt)
    for flag in ("--bluestore", "--report", "--yes", "--no-auto", "--dmcrypt", "--prepare", "--no-systemd"):
        p.add_argument(flag, action="store_true")
    return p


def device(curve=((1, 12680.0), (16, 59338.0)), capacity=7_680_000_000_000, protocol="ata", **kw):
    return WalDbDevice(
        label="test SSD",
        capacity_bytes=capacity,
        protocol=protocol,
        curve=list(curve),
        cache=kw.pop("cache", "off"),
        knob=kw.pop("knob", "drive"),
        **kw,
    )


def plan(dev=None, data="12x16T", workload="rgw", compression=True, release="squid", media="hdd", db_size=None):
    return layout.make_plan(
        dev or device(),
        parse_data(data, media),
        workload,
        compression=compression,
        release=release,
        rules=RULES,
        criteria=CRIT,
        db_size=db_size,
    )


def cli(*args, cwd: Path | None = None, monkeypatch=None):
    if cwd is not None:
        monkeypatch.chdir(cwd)
    try:
        main(list(args))
    except SystemExit as exc:
        return exc.code or 0
    return 0


# --- inputs ----------------------------------------------------------------------------------


def test_drive_sizes_are_decimal_unless_binary_is_asked_for():
    assert parse_drive_size("16T") == 16 * 10**12 == parse_drive_size("16TB")
    assert parse_drive_size("960G") == 960 * 10**9
    assert parse_drive_size("7TiB") == 7 * 2**40
    assert parse_data("8x8TB") == DataDevices(8, 8 * 10**12, "hdd")


@pytest.mark.parametrize("text", ["12*16T", "x16T", "0x16T", "12x", "12x16Q", "-1x4T", "twelve x 4T"])
def test_bad_data_specs_are_one_line_errors(text):
    with pytest.raises(InvalidInput):
        parse_data(text)


# --- rules -----------------------------------------------------------------------------------


def test_every_rule_section_has_a_source():
    for name, section in RULES.items():
        if isinstance(section, dict):
            assert any(k.endswith("source") for k in section), name


def test_block_db_share_follows_workload_compression_and_release():
    assert layout.db_fraction("rbd", False, "reef", RULES).value == pytest.approx(0.02)
    assert layout.db_fraction("rgw", False, "reef", RULES).value == pytest.approx(0.04)
    assert layout.db_fraction("rgw", True, "reef", RULES).value == pytest.approx(0.04 / 2.68)
    # from Squid the documentation's 2.5 % minimum applies to every workload
    assert layout.db_fraction("rgw", True, "squid", RULES).value == pytest.approx(0.025)
    assert layout.db_fraction("rbd", True, "squid", RULES).value == pytest.approx(0.025)
    assert layout.db_fraction("cephfs", True, "squid", RULES).value == pytest.approx(0.04)


def test_compression_is_on_by_default_from_squid():
    assert layout.compression_default("squid", RULES) and layout.compression_default("tentacle", RULES)
    assert not layout.compression_default("reef", RULES)
    with pytest.raises(InvalidInput):
        layout.compression_default("pacifica", RULES)


def test_the_binding_limit_is_named_and_the_sweep_limit_is_said():
    p = plan()
    assert (p.osds_per_device, p.binding) == (5, ["guideline"])
    assert p.limits["speed"].value == 16 and p.speed["limited_by_sweep"]
    assert any("at least 16" in r for r in p.limits["speed"].reasons)
    assert (p.db_devices, p.db_slots) == (3, 4)
    small = plan(device(capacity=960 * 10**9))
    assert small.binding == ["capacity"] and small.osds_per_device == 2


def test_speed_binds_for_a_slow_drive():
    p = plan(device(curve=[(1, 1751), (2, 2225)], protocol="nvme"), data="4x4T", workload="rbd")
    assert p.binding == ["speed"] and p.osds_per_device == 2 and p.db_devices == 2


def test_refusals_say_why_and_what_to_do():
    with pytest.raises(PlanRefused, match="too small") as exc:
        plan(device(capacity=100 * 10**9))
    assert exc.value.hint
    with pytest.raises(PlanRefused, match="not recorded"):
        plan(device(capacity=None))
    with pytest.raises(PlanRefused, match="even one HDD OSD"):
        plan(device(curve=[(1, 300), (2, 400)]))
    with pytest.raises(PlanRefused, match="even one SSD OSD") as exc:
        plan(media="ssd")
    assert "data SSDs" in exc.value.hint


def test_mclock_ssd_figure_applies_to_ssd_osds_only():
    assert plan().mclock.value is None
    p = plan(device(curve=[(1, 64235), (8, 192440)], protocol="nvme"), data="4x3840G", media="ssd")
    assert p.mclock.value == 24055  # 192440 / 8


def test_write_cache_rule_only_for_a_faster_safe_drive_knob_off():
    rule = RULES["write_cache"]["udev_rule"]
    assert plan(device(cache_off_faster=True)).write_cache.value == rule
    assert plan(device(cache_off_faster=False)).write_cache.value is None
    assert plan(device(cache="on", cache_off_faster=True)).write_cache.value is None
    assert plan(device(knob="kernel", cache_off_faster=True)).write_cache.value is None
    scoped = plan(device(cache_off_faster=True, kernel_model="SAMSUNG MZ7LH960")).write_cache.value
    assert scoped == rule.replace(
        'SUBSYSTEM=="scsi_disk", ', 'SUBSYSTEM=="scsi_disk", ATTRS{model}=="SAMSUNG MZ7LH960*", '
    )
    nvme = plan(device(protocol="nvme", cache_off_faster=True)).write_cache
    assert nvme.value is None and any("set-feature" in r for r in nvme.reasons)


# --- properties ------------------------------------------------------------------------------

curves = st.lists(
    st.tuples(st.sampled_from([1, 2, 4, 8, 16, 32]), st.floats(200, 300_000)),
    min_size=1,
    max_size=6,
    unique_by=lambda t: t[0],
)


@settings(max_examples=150, deadline=None)
@given(
    curve=curves,
    count=st.integers(1, 60),
    extra=st.integers(0, 40),
    size_tb=st.integers(1, 30),
    bigger=st.integers(0, 20),
    workload=st.sampled_from(WORKLOADS),
    compression=st.booleans(),
)
def test_more_or_larger_data_devices_never_need_fewer_db_devices(
    curve, count, extra, size_tb, bigger, workload, compression
):
    dev = device(curve=[(1, 100_000)] + [c for c in curve if c[0] != 1])
    args = dict(workload=workload, compression=compression)
    try:
        base = plan(dev, data=f"{count}x{size_tb}T", **args)
    except PlanRefused:
        return
    try:
        more = plan(dev, data=f"{count + extra}x{size_tb + bigger}T", **args)
    except PlanRefused as exc:  # larger data may outgrow the device: refused, never fewer devices
        assert "too small" in exc.message
        return
    assert more.db_devices >= base.db_devices


@settings(max_examples=150, deadline=None)
@given(
    curve=curves,
    factors=st.lists(st.floats(1.0, 5.0), min_size=6, max_size=6),
    capacity_gb=st.integers(100, 30_000),
    protocol=st.sampled_from(["ata", "nvme", "scsi", "unknown"]),
)
def test_a_faster_curve_never_gives_fewer_osds_per_device(curve, factors, capacity_gb, protocol):
    from hypothesis import assume

    from diskq.analyse import criteria

    faster = [(n, x * f) for (n, x), f in zip(curve, factors, strict=False)]
    # the rule is monotone over plausible curves: a point whose per-job rate beats one job alone
    # by more than the [plausibility] ratio is questionable and left out of every verdict
    ratio = criteria.load()["plausibility"]["max_per_job_ratio"]
    for c in (curve, faster):
        solo = dict(c).get(1)
        assume(solo is None or all(x / n <= ratio * solo for n, x in c))
    slow = device(curve=curve, capacity=capacity_gb * 10**9, protocol=protocol)
    fast = device(curve=faster, capacity=capacity_gb * 10**9, protocol=protocol)
    try:
        a = plan(slow, data="24x4T", workload="rbd")
    except PlanRefused:
        return
    b = plan(fast, data="24x4T", workload="rbd")
    assert b.osds_per_device >= a.osds_per_device
    assert b.limits["speed"].value >= a.limits["speed"].value


@settings(max_examples=200, deadline=None)
@given(
    curve=curves,
    capacity_gb=st.integers(50, 60_000),
    count=st.integers(1, 100),
    size_gb=st.integers(100, 40_000),
    workload=st.sampled_from(WORKLOADS),
    compression=st.booleans(),
    release=st.sampled_from(RULES["releases"]["known"]),
)
def test_the_db_sizes_always_fit(curve, capacity_gb, count, size_gb, workload, compression, release):
    try:
        p = plan(
            device(curve=curve, capacity=capacity_gb * 10**9),
            data=f"{count}x{size_gb}G",
            workload=workload,
            compression=compression,
            release=release,
        )
    except PlanRefused:
        return
    assert p.db_size_bytes >= p.db_required_bytes
    assert p.db_slots * p.db_size_bytes <= p.capacity_bytes
    assert p.db_slots <= p.osds_per_device and p.db_devices * p.db_slots >= count
    assert (p.db_devices - 1) * p.db_slots < count  # no idle WAL/DB device


# --- renderings ------------------------------------------------------------------------------


def _check_cephadm_fields(spec: dict) -> None:
    assert set(spec) <= CEPHADM_TOP and spec["service_type"] == "osd" and spec["service_id"]
    assert set(spec["placement"]) <= CEPHADM_PLACEMENT
    assert set(spec["spec"]) <= CEPHADM_SPEC
    for sel in ("data_devices", "db_devices", "wal_devices"):
        if sel in spec["spec"]:
            assert set(spec["spec"][sel]) <= CEPHADM_FILTERS


@pytest.mark.parametrize("media,data", [("hdd", "12x16T"), ("ssd", "6x7680G")])
def test_cephadm_yaml_parses_to_the_documented_fields(media, data):
    dev = device(curve=[(1, 64235), (8, 192440)], protocol="nvme", capacity=3_200_000_000_000)
    p = plan(dev, data=data, media=media, workload="rbd")
    doc = report.document(p, RULES)
    parsed = yaml.safe_load(doc["cephadm_spec_yaml"])
    assert parsed == doc["cephadm_spec"] == cephadm.spec(p, RULES)
    _check_cephadm_fields(parsed)
    assert parsed["spec"]["db_slots"] == p.db_slots and parsed["spec"]["db_devices"]["limit"] == p.db_devices
    assert parsed["spec"]["data_devices"]["rotational"] == (1 if media == "hdd" else 0)
    assert set(RULES["cephadm"]["spec_fields"]) == set(parsed["spec"])


def test_size_filters_hold_in_decimal_and_binary_units():
    for capacity in (240 * 10**9, 960 * 10**9, 7_680_000_000_000, 16 * 10**12):
        low, high = (int(x[:-1]) for x in cephadm.size_filter(capacity, 0.10).split(":"))
        for unit in (10**9, 2**30):
            assert low * unit <= capacity <= high * unit


def test_yaml_quotes_what_yaml_would_misread():
    text = cephadm.to_yaml({"a": "*", "b": "on", "c": "1:2", "d": "it's", "e": 3, "f": True})
    assert yaml.safe_load(text) == {"a": "*", "b": "on", "c": "1:2", "d": "it's", "e": 3, "f": True}


@pytest.mark.parametrize("release", ["quincy", "reef", "squid", "tentacle"])
def test_ceph_volume_line_round_trips_through_its_documented_options(release):
    p = plan(release=release)
    words = shlex.split(ceph_volume.line(p, RULES))
    args = batch_parser(release).parse_args(words[3:])
    assert words[:3] == ["ceph-volume", "lvm", "batch"]
    assert len(args.devices) == 12 and len(args.db_devices) == p.db_devices == 3
    assert int(args.block_db_slots) == p.db_slots and args.report and not args.yes
    if release == "tentacle":  # its ceph-volume deprecates --bluestore: --objectstore instead
        assert args.objectstore == "bluestore" and not args.bluestore and "--bluestore" not in words
    else:  # older ones know no --objectstore
        assert args.bluestore and "--objectstore" not in words


@pytest.mark.parametrize("release,honoured", [("quincy", False), ("reef", False), ("squid", False), ("tentacle", True)])
def test_where_plan_writes_db_slots_it_says_whether_the_release_honours_it(release, honoured):
    doc = report.document(plan(release=release), RULES)
    text = doc["cephadm_spec_yaml"]
    assert yaml.safe_load(text) == doc["cephadm_spec"]  # the caveat is a comment YAML ignores
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  db_slots:"))
    comment = []
    for line in reversed(lines[:at]):
        if not line.startswith("  # "):
            break
        comment.insert(0, line[4:])
    said = " ".join(comment)
    assert said == doc["cephadm_db_slots"]["note"] and "64893" in said
    assert said.startswith(f"{release}'s cephadm {'passes' if honoured else 'ignores'} db_slots")
    assert "https://github.com/ceph/ceph/pull/64893" in doc["cephadm_db_slots"]["source"]


def test_the_specification_and_the_ceph_volume_line_are_said_to_be_alternatives(clone, monkeypatch, capsys):
    assert cli("plan", "Samsung PM883", "--data", "12x16T", cwd=clone, monkeypatch=monkeypatch) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "are alternatives, not steps" in out and "never both" in out
    assert out.index("Either: cephadm OSD specification") < out.index("Or: ceph-volume")
    assert "alternatives, not steps" in report.document(plan(), RULES)["alternatives"]


# --- end to end ------------------------------------------------------------------------------


@pytest.fixture
def clone(tmp_path):
    """The committed devices.db in a fresh directory, as in a clone's root."""
    shutil.copy(DEVICES_DB, tmp_path / "devices.db")
    return tmp_path


def test_first_example_on_the_committed_database(clone, monkeypatch, capsys):
    rc = cli(
        "plan",
        "Samsung PM883",
        "--data",
        "12x16T",
        "--workload",
        "rgw",
        "--cephadm-spec",
        "osd-spec.yaml",
        cwd=clone,
        monkeypatch=monkeypatch,
    )
    out = capsys.readouterr().out
    assert rc == 0
    spec = yaml.safe_load((clone / "osd-spec.yaml").read_text())
    _check_cephadm_fields(spec)
    assert spec["spec"]["db_devices"]["limit"] == 3 and spec["spec"]["db_slots"] == 4
    assert "5 data OSDs per WAL/DB device" in out and "guideline binds" in out
    assert 'ATTR{cache_type}:="write through"' in out and "legacy" in out


def test_the_string_smartctl_prints_plans_for_its_model(clone, monkeypatch, capsys):
    rc = cli(
        "plan",
        "SAMSUNG MZ7LH7T6HMLA-00005",
        "--data",
        "12x16T",
        "--workload",
        "rgw",
        "--json",
        cwd=clone,
        monkeypatch=monkeypatch,
    )
    assert rc == 0
    assert json.loads(capsys.readouterr().out)["device"] == "Samsung PM883"


def test_a_row_of_another_method_class_says_so(clone, monkeypatch, capsys):
    # the community table's SAS rows were O_SYNC writes: FUA, not the flush an OSD's fdatasync sends
    assert cli("plan", "Samsung PM1643a", "--data", "12x16T", "--json", cwd=clone, monkeypatch=monkeypatch) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any(n.startswith("measured as FUA write, may skip the flush") for n in notes)
    assert cli("plan", "Samsung PM883", "--data", "12x16T", "--json", cwd=clone, monkeypatch=monkeypatch) == 0
    assert not any("FUA" in n for n in json.loads(capsys.readouterr().out)["notes"])


def test_model_not_in_the_database_lists_the_closest(clone, monkeypatch, capsys):
    rc = cli("plan", "Samsung PM884", "--data", "12x16T", cwd=clone, monkeypatch=monkeypatch)
    err = capsys.readouterr().err
    assert rc == 4
    assert err.startswith("diskq: error: no device in devices.db is named 'Samsung PM884'")
    assert "Samsung PM883" in err and "hint:" in err and "Traceback" not in err


def test_bad_inputs_are_one_line_errors(clone, monkeypatch, capsys):
    for args in (
        ["--data", "12y16T"],
        ["--data", "2x4T", "--workload", "s3"],
        ["--data", "2x4T", "--release", "x"],
        ["--data", "2x4T", "--compression", "maybe"],
    ):
        assert cli("plan", "Samsung PM883", *args, cwd=clone, monkeypatch=monkeypatch) == 2
        err = capsys.readouterr().err
        assert err.startswith("diskq: error: ") and "Traceback" not in err


def _point(n, iops):
    return Point(
        numjobs=n,
        iops=iops,
        bw_bytes=iops * 4096,
        total_ios=int(iops * 10),
        runtime_ms=10_000,
        lat_us=Latency(p99=20.0),
        sync_lat_us=Latency(p99=500.0),
    )


def _document(runs, capacity=960_197_124_096):
    return ResultDocument(
        device=Device(
            model="SAMSUNG MZ7LH960HAJR-00005",
            protocol="ata",
            media="ssd",
            capacity_bytes=capacity,
            volatile_write_cache=True,
        ),
        method=Method(),
        runs=runs,
    )


def test_second_example_on_a_result_document(tmp_path, monkeypatch, capsys):
    off = Run(
        write_cache="off",
        cache_mechanism="hdparm",
        cache_changed=True,
        points=[_point(1, 12680), _point(2, 20000), _point(4, 31000), _point(8, 40000)],
    )
    on = Run(write_cache="on", cache_mechanism="hdparm", points=[_point(1, 5094), _point(8, 27521)])
    on.flush_check = FlushCheck(
        sync_iops=5094,
        nosync_iops=60000,
        ratio=0.085,
        threshold=0.5,
        cache_state="on",
        volatile_write_cache=True,
        honest=True,
    )
    (tmp_path / "result.json").write_text(_document([off, on]).to_json())
    rc = cli(
        "plan", "result.json", "--data", "8x8T", "--workload", "rbd", "--json", cwd=tmp_path, monkeypatch=monkeypatch
    )
    out = capsys.readouterr().out
    assert rc == 0
    doc = json.loads(out)
    assert doc["format"] == "diskq-plan" and doc["workload"] == "rbd" and doc["compression"] is True
    assert doc["db_required_bytes"] == 200 * 10**9  # 2.5 % of 8 TB from Squid on
    assert doc["limits"]["capacity"]["value"] == 4 and doc["binding"] == ["capacity"]
    assert doc["db_devices"] == 2 and doc["db_slots"] == 4
    assert doc["speed"]["n"] == 8 and doc["speed"]["limited_by_sweep"] is True
    assert 'ATTRS{model}=="SAMSUNG MZ7LH960*"' in doc["write_cache"]["value"]
    _check_cephadm_fields(yaml.safe_load(doc["cephadm_spec_yaml"]))


def test_a_document_without_a_safe_setting_is_refused(tmp_path, monkeypatch, capsys):
    on = Run(write_cache="on", cache_mechanism="hdparm", points=[_point(1, 40000), _point(8, 90000)])
    on.flush_check = FlushCheck(
        sync_iops=40000,
        nosync_iops=42000,
        ratio=0.95,
        threshold=0.5,
        cache_state="on",
        volatile_write_cache=True,
        honest=False,
        warning="flushes may be ignored",
    )
    (tmp_path / "result.json").write_text(_document([on]).to_json())
    assert cli("plan", "result.json", "--data", "8x8T", cwd=tmp_path, monkeypatch=monkeypatch) == 4
    err = capsys.readouterr().err
    assert "no safe cache setting" in err and "failed the flush check" in err


def test_missing_result_document_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    assert cli("plan", "result.json", "--data", "8x8T", cwd=tmp_path, monkeypatch=monkeypatch) == 2
    assert capsys.readouterr().err.startswith("diskq: error: result.json does not exist")


@pytest.mark.fio
@pytest.mark.skipif(shutil.which("fio") is None, reason="needs the fio binary")
def test_on_a_real_fio_result_without_a_recorded_size(tmp_path, monkeypatch, capsys):
    from tests.test_submission_support import fio_runs, result_from

    (tmp_path / "result.json").write_text(result_from(fio_runs()).to_json())
    assert cli("plan", "result.json", "--data", "2x4T", "--json", cwd=tmp_path, monkeypatch=monkeypatch) == 4
    assert "--db-size" in capsys.readouterr().err
    rc = cli(
        "plan", "result.json", "--data", "2x4T", "--db-size", "480G", "--json", cwd=tmp_path, monkeypatch=monkeypatch
    )
    captured = capsys.readouterr()
    if rc == 4:  # a file on this machine too slow for one HDD OSD: refused with the measured rate
        assert "cannot commit fast enough" in captured.err
        return
    assert rc == 0
    doc = json.loads(captured.out)
    assert doc["capacity_bytes"] == 480 * 10**9 and doc["db_devices"] >= 1


def _db_copy(tmp_path, sql: str) -> Path:
    import sqlite3

    db = tmp_path / "devices.db"
    shutil.copy(DEVICES_DB, db)
    con = sqlite3.connect(db)
    con.execute(sql)
    con.commit()
    con.close()
    return db


def test_a_row_without_capacity_needs_db_size(tmp_path, monkeypatch, capsys):
    _db_copy(tmp_path, "UPDATE devices SET capacity_bytes = NULL WHERE model = 'Samsung PM883'")
    assert cli("plan", "Samsung PM883", "--data", "12x16T", cwd=tmp_path, monkeypatch=monkeypatch) == 4
    assert "hint: give it with --db-size" in capsys.readouterr().err
    assert (
        cli(
            "plan",
            "Samsung PM883",
            "--data",
            "12x16T",
            "--db-size",
            "7.68T",
            "--json",
            cwd=tmp_path,
            monkeypatch=monkeypatch,
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["capacity_bytes"] == 7_680_000_000_000


def test_a_row_without_a_curve_is_refused(tmp_path, monkeypatch, capsys):
    _db_copy(tmp_path, "DELETE FROM curve WHERE device_id LIKE 'samsung-pm883-%'")
    assert cli("plan", "Samsung PM883", "--data", "12x16T", cwd=tmp_path, monkeypatch=monkeypatch) == 4
    assert "no curve" in capsys.readouterr().err


def test_a_row_without_a_safe_setting_is_refused(tmp_path, monkeypatch, capsys):
    _db_copy(tmp_path, "UPDATE devices SET cache = NULL, cache_knob = NULL WHERE model = 'Samsung PM883'")
    assert cli("plan", "Samsung PM883", "--data", "12x16T", cwd=tmp_path, monkeypatch=monkeypatch) == 4
    assert "no safe cache setting" in capsys.readouterr().err


def test_ambiguous_model_names_every_candidate(clone, monkeypatch, capsys):
    assert cli("plan", "Samsung", "--data", "12x16T", cwd=clone, monkeypatch=monkeypatch) == 4
    err = capsys.readouterr().err
    assert "names" in err and "Samsung PM883" in err and "Samsung PM863a" in err


def test_the_plan_uses_the_run_the_verdicts_use():
    from diskq.analyse.verdicts import best_safe_run, evaluate

    kernel_off = Run(write_cache="off", cache_mechanism="sysfs", points=[_point(1, 90000), _point(4, 200000)])
    slow_on = Run(write_cache="on", cache_mechanism="hdparm", points=[_point(1, 3000), _point(4, 9000)])
    doc = _document([kernel_off, slow_on])
    run, points, why = best_safe_run(doc)
    verdicts = evaluate(doc)
    assert run is slow_on and verdicts.osds_per_device.cache_state == "on"
    assert (
        verdicts.osds_per_device.n
        == layout.make_plan(
            WalDbDevice("x", 10**12, "ata", [(p.numjobs, p.iops) for p in points], "on", "drive"),
            DataDevices(4, 4 * 10**12),
            "rbd",
            compression=True,
            release="squid",
            rules=RULES,
            criteria=CRIT,
        )
        .limits["speed"]
        .value
    )
    assert any("write_cache knob" in w for w in why)


def test_compression_before_squid_is_said_to_need_a_setting():
    reasons = layout.db_fraction("rgw", True, "reef", RULES).reasons
    assert any("kLZ4Compression" in r for r in reasons)
    assert not any("kLZ4Compression" in r for r in layout.db_fraction("rgw", True, "squid", RULES).reasons)


def test_help_shows_both_examples():
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "diskq", "plan", "--help"],
        capture_output=True,
        text=True,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    assert 'diskq plan "Samsung PM883" --data 12x16T --workload rgw --cephadm-spec osd-spec.yaml' in text
    assert "diskq plan result.json --data 8x8T --workload rbd --json" in text


@pytest.mark.fio
@pytest.mark.skipif(shutil.which("fio") is None, reason="needs the fio binary")
def test_on_an_imported_result_with_a_recorded_identity(tmp_path, monkeypatch, capsys):
    """Real fio runs of the community command, imported with a recorded smartctl output of a real
    drive (its model, protocol and capacity), then planned."""
    from tests.test_submission_support import fio_runs

    files = []
    for k, v in fio_runs().items():
        files.append(tmp_path / f"nj{k}.json")
        files[-1].write_text(json.dumps(v))
    smart = REPO / "tests" / "fixtures" / "submission" / "sce__INTEL_SSDSCKKB480G8.json"
    assert (
        cli(
            "import-fio",
            *map(str, files),
            "--smartctl-json",
            str(smart),
            "-o",
            "result.json",
            cwd=tmp_path,
            monkeypatch=monkeypatch,
        )
        == 0
    )
    capsys.readouterr()
    rc = cli(
        "plan", "result.json", "--data", "8x8T", "--workload", "rbd", "--json", cwd=tmp_path, monkeypatch=monkeypatch
    )
    captured = capsys.readouterr()
    if rc == 4:  # the temp file here was too slow for one HDD OSD: refused with the measured rate
        assert "cannot commit fast enough" in captured.err
        return
    assert rc == 0, captured.err
    doc = json.loads(captured.out)
    assert doc["device"].startswith("INTEL SSDSCKKB480G8") and doc["capacity_bytes"] == 480_103_981_056
    assert doc["db_required_bytes"] == 200 * 10**9 and doc["limits"]["capacity"]["value"] == 2
    assert doc["osds_per_device"] <= 2 and doc["db_devices"] >= 4
    assert doc["basis"] == "result document result.json"


def test_on_a_committed_legacy_submission_file(monkeypatch, capsys):
    path = next((REPO / "submissions" / "samsung" / "samsung-pm883").glob("*.json"))
    rc = cli("plan", str(path), "--data", "8x8T", "--workload", "rbd", "--json")
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["speed"]["n"] == 16 and doc["speed"]["limited_by_sweep"]
    assert any("legacy" in n for n in doc["notes"])
    assert doc["write_cache"]["value"] is not None and "legacy" in doc["write_cache"]["reasons"][0]


# --- papercuts -------------------------------------------------------------------------------


def test_a_data_size_without_a_unit_is_refused_not_read_as_bytes(clone, monkeypatch, capsys):
    with pytest.raises(InvalidInput, match="no unit"):
        parse_data("12x16")
    assert cli("plan", "Samsung PM883", "--data", "12x16", cwd=clone, monkeypatch=monkeypatch) == 2
    err = capsys.readouterr().err
    assert err.startswith("diskq: error: the data device size in '12x16' has no unit") and "12x16T" in err
    assert "Traceback" not in err and not (clone / "osd-spec.yaml").exists()


def test_plan_finds_a_model_where_lookup_finds_it(clone, monkeypatch, capsys):
    from diskq.database.lookup import lookup

    first = lookup(clone / "devices.db", "samsung 860 pro", limit=1)[0]
    assert first.is_match and first.device["model"] == "Samsung SSD 860 PRO"
    assert cli("plan", "samsung 860 pro", "--data", "2x4T", "--json", cwd=clone, monkeypatch=monkeypatch) == 0
    assert json.loads(capsys.readouterr().out)["device"] == "Samsung SSD 860 PRO"
    # the 860 EVO is found too, and refused by the answer it rests on: unsuitable, no OSD
    assert lookup(clone / "devices.db", "samsung 860 evo", limit=1)[0].device["model"] == "Samsung SSD 860 EVO"
    assert cli("plan", "samsung 860 evo", "--data", "2x4T", cwd=clone, monkeypatch=monkeypatch) != 0
    assert "the Ceph WAL/DB tier is unsuitable" in capsys.readouterr().err


def test_small_sizes_and_single_counts_read_as_they_are(clone, monkeypatch, capsys):
    assert layout._gb(4_294_967_296) == "4.29 GB" and layout._gb(960 * 10**9) == "960 GB"
    # one OSD per device because the WAL/DB device holds one block.db (the speed row's single OSD,
    # "at 1 OSD:", is read in test_one_ssd_osd_reads_as_one: no drive in devices.db whose tier
    # allows any OSD stops at one)
    assert cli("plan", "Samsung PM883", "--data", "1x100G", "--db-size", "3G", cwd=clone, monkeypatch=monkeypatch) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert " 0 GB" not in out and "block.db: at least 2.5 GB per OSD" in out
    assert "1 data OSD per WAL/DB device" in out and "1 data OSDs" not in out
    assert "1 block.db volume of 3 GB" in out


def test_a_sweep_stopped_at_one_job_says_one_job():
    p = plan(device(curve=[(1, 40000.0)]), data="2x4T")
    assert any("the sweep stopped at 1 job:" in r for r in p.limits["speed"].reasons)


def test_one_ssd_osd_reads_as_one():
    slow = device(curve=[(1, 30000.0), (2, 31000.0)], protocol="nvme")
    p = plan(slow, data="1x4T", media="ssd", workload="rbd")
    assert p.speed["n"] == 1 and p.mclock.reasons[0].startswith("the one SSD OSD commits at most")
    assert "1 SSD OSDs" not in " ".join(p.mclock.reasons)
