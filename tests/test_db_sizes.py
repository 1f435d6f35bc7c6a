"""Block-size profiles in devices.db: every step per submission, a median profile per device and
cache setting, the verdicts read from it (etcd, PostgreSQL at 8 KiB, ZFS SLOG at 128 KiB), and
`diskq lookup` showing them."""

from __future__ import annotations

import json
from datetime import UTC
from pathlib import Path

import pytest

from diskq.analyse import annotate
from diskq.database.build import build
from diskq.database.lookup import lookup
from diskq.database.synthetic import result_document, submission, write_submission
from diskq.result import ResultDocument
from tests.cli_support import cli, rows
from tests.conftest import needs_fio
from tests.size_profiles import SIZES, measure_profile, recorded, recorded_profile

CURVE = {1: 3000.0, 2: 5200.0, 4: 8000.0, 8: 9000.0}
NOSYNC = {"on": 60000.0}
A = {4096: 3000.0, 8192: 2600.0, 16384: 2300.0, 131072: 900.0, 1048576: 150.0}
B = {4096: 3400.0, 8192: 2800.0, 16384: 2500.0, 131072: 1100.0, 1048576: 170.0}


def add(root: Path, model: str, *, sizes=None, created="2025-01-01", result=None, k: float = 1.0) -> Path:
    """A submission of ``model``; ``k`` scales its sweep (the same sweep twice is a duplicate)."""
    from datetime import datetime

    curve = {n: x * k for n, x in CURVE.items()}
    result = result or result_document(
        model,
        {"on": curve},
        nosync=NOSYNC,
        cache_mechanism="hdparm",
        sizes=sizes,
        created=datetime.fromisoformat(created).replace(tzinfo=UTC),
    )
    return write_submission(root, submission(result))


@pytest.fixture
def db(tmp_path) -> Path:
    root = tmp_path / "subs"
    add(root, "Vendor PROFILED 1", sizes={"on": A}, created="2025-01-01")
    add(root, "Vendor PROFILED 1", sizes={"on": B}, created="2025-01-02", k=1.02)
    add(root, "Vendor PROFILED 1", created="2025-01-03", k=0.98)  # the sweep only
    add(root, "Vendor SWEEPONLY 2", k=1.05)
    out = tmp_path / "devices.db"
    report = build(root, out, jobs=1)
    assert report.skipped == [] and report.devices == 2
    return out


def test_every_step_is_stored_and_the_median_profile_per_device(db):
    stored = rows(db, "SELECT block_size, iops FROM size_points ORDER BY submission_id, seq")
    assert len(stored) == 10 and {r["block_size"] for r in stored} == set(A)
    med = rows(db, "SELECT * FROM device_sizes ORDER BY block_size")
    assert [m["block_size"] for m in med] == sorted(A)
    for m in med:
        a, b = A[m["block_size"]], B[m["block_size"]]
        assert m["iops"] == pytest.approx((a + b) / 2) and (m["iops_min"], m["iops_max"]) == (a, b)
        assert m["bw_bytes"] == pytest.approx((a + b) / 2 * m["block_size"]) and m["n"] == 2
        assert (m["write_cache"], m["knob"]) == ("on", "drive")


def test_verdicts_of_the_device_are_read_from_its_median_profile(db):
    (dev,) = rows(db, "SELECT zfs_slog, postgres_wal, verdicts FROM devices WHERE model LIKE '%PROFILED%'")
    v = json.loads(dev["verdicts"])
    assert v["etcd"]["basis"] == "measured" and v["etcd"]["block_size"] == 8192
    assert v["postgres_wal"]["block_size"] == 8192 and dev["postgres_wal"] == pytest.approx(2700.0)
    bw = 1000.0 * 131072  # the median of 900 and 1100 IOPS at 128 KiB: 131 MB/s
    assert v["zfs_slog"]["bw_bytes"] == pytest.approx(bw) and dev["zfs_slog"] == "marginal"
    # the same figures in a bench document give the same verdicts
    doc = ResultDocument.model_validate(
        result_document(
            "x", {"on": CURVE}, nosync=NOSYNC, cache_mechanism="hdparm", sizes={"on": {k: (A[k] + B[k]) / 2 for k in A}}
        )
    )
    assert annotate(doc).verdicts.zfs_slog.tier == "marginal"


def test_a_device_without_a_profile_says_its_verdicts_were_estimated(db):
    (dev,) = rows(db, "SELECT id, zfs_slog, verdicts FROM devices WHERE model LIKE '%SWEEPONLY%'")
    v = json.loads(dev["verdicts"])
    assert v["etcd"]["basis"] == v["postgres_wal"]["basis"] == v["zfs_slog"]["basis"] == "estimated from 4 KiB"
    assert dev["zfs_slog"] is None  # 3000 x 128 KiB could still be 393 MB/s: no tier from 4 KiB
    assert rows(db, "SELECT * FROM device_sizes WHERE device_id = ?", dev["id"]) == []


def test_a_profile_with_an_interrupted_step_is_refused_like_an_interrupted_sweep(tmp_path):
    """An interrupted result is never a submission (docs/interruptions.md): a size profile stopped
    before its last size makes the whole file refused, with the step named, not half-aggregated."""
    root = tmp_path / "subs"
    result = result_document("Vendor CUT 3", {"on": CURVE}, nosync=NOSYNC, cache_mechanism="hdparm", sizes={"on": A})
    result["runs"][0]["sizes"]["points"][1]["interrupted"] = True  # the 8 KiB step
    add(root, "", result=result)
    report = build(root, tmp_path / "devices.db", jobs=1)
    assert report.submissions == 0 and report.skipped
    assert any(s.field.endswith("sizes.points[1].interrupted") and "cut short" in s.message for s in report.skipped), [
        (s.field, s.message) for s in report.skipped
    ]
    assert rows(tmp_path / "devices.db", "SELECT * FROM size_points") == []


def test_a_recorded_profile_reaches_the_database_as_fio_measured_it(tmp_path):
    root = tmp_path / "subs"
    result = result_document("Vendor LOOPREC 4", {"on": CURVE}, nosync=NOSYNC, cache_mechanism="hdparm")
    result["runs"][0]["sizes"] = recorded_profile("on", version=2).model_dump(mode="json")
    add(root, "", result=result)
    assert build(root, tmp_path / "devices.db", jobs=1).skipped == []
    med = {r["block_size"]: r for r in rows(tmp_path / "devices.db", "SELECT * FROM device_sizes")}
    assert sorted(med) == sorted(SIZES)
    for bs, m in med.items():
        write = recorded("on", bs, version=2)["jobs"][0]["write"]
        assert m["iops"] == pytest.approx(write["iops"], abs=1e-3)  # kept to the milli-IOPS
        assert m["bw_bytes"] == pytest.approx(write["bw_bytes"])


def test_a_version_1_profile_is_stored_but_never_mixed_into_the_medians(tmp_path):
    """Version 1 ended its steps with fio's detector, version 2 measures fixed windows: another
    method, so its steps are kept with the submission but no median mixes the two."""
    root = tmp_path / "subs"
    # NVMe: the recorded 1 MiB step (793 MB/s on a loop device) is more than a SATA link carries
    result = result_document("Vendor LOOPOLD 6", {"on": CURVE}, nosync=NOSYNC, cache_mechanism="nvme", protocol="nvme")
    result["runs"][0]["sizes"] = recorded_profile("on", version=1).model_dump(mode="json")
    add(root, "", result=result)
    assert build(root, tmp_path / "devices.db", jobs=1).skipped == []
    stored = rows(tmp_path / "devices.db", "SELECT block_size, method_version FROM size_points")
    assert sorted(r["block_size"] for r in stored) == sorted(SIZES) and {r["method_version"] for r in stored} == {1}
    assert rows(tmp_path / "devices.db", "SELECT * FROM device_sizes") == []
    (dev,) = rows(tmp_path / "devices.db", "SELECT verdicts FROM devices")
    assert json.loads(dev["verdicts"])["etcd"]["basis"] == "estimated from 4 KiB"


def test_the_memo_keeps_the_profiles(tmp_path, db):
    root = tmp_path / "subs"
    memo = tmp_path / "memo.sqlite"
    first = build(root, tmp_path / "a.db", jobs=1, memo=memo)
    again = build(root, tmp_path / "b.db", jobs=1, memo=memo)  # every file's answer from the memo
    plain = build(root, tmp_path / "c.db", jobs=1)
    assert first.digest == again.digest == plain.digest
    assert rows(tmp_path / "b.db", "SELECT * FROM device_sizes") == rows(db, "SELECT * FROM device_sizes")


def test_lookup_json_and_text_show_the_profile_and_the_slog_verdict(db, capsys):
    (match,) = [m for m in lookup(db, "profiled") if "PROFILED" in m.device["model"]]
    assert [z["block_size"] for z in match.to_dict()["sizes"]["on"]] == sorted(A)
    assert match.device["zfs_slog"] == "marginal"
    assert cli("lookup", "profiled", "--db", str(db), "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data[0]["sizes"]["on"][-1]["block_size"] == 1048576 and data[0]["device"]["zfs_slog"] == "marginal"
    assert cli("lookup", "profiled", "--db", str(db)) == 0
    text = capsys.readouterr().out
    assert "ZFS SLOG: marginal" in text and "block-size profile, write cache on" in text
    assert "128 KiB" in text and "etcd: read at 8 KiB from the block-size profile" in text
    assert cli("lookup", "sweeponly", "--db", str(db)) == 0
    text = capsys.readouterr().out
    assert "etcd: estimated from 4 KiB" in text and "block-size profile, write cache" not in text


# --- the site ------------------------------------------------------------------------------------


def test_the_device_page_has_a_block_size_chart_table_and_the_slog_verdict(db, tmp_path):
    from diskq.publish.site import build_site

    build_site(db, tmp_path / "site")
    (profiled,) = rows(db, "SELECT id FROM devices WHERE model LIKE '%PROFILED%'")
    (sweep,) = rows(db, "SELECT id FROM devices WHERE model LIKE '%SWEEPONLY%'")
    page = (tmp_path / "site" / "devices" / f"{profiled['id']}.html").read_text()
    chart = page[page.index('id="size-chart-on"') :]
    chart = chart[: chart.index("</svg>")]
    assert chart.count('class="dot"') == 5 and chart.count('class="dot dot2"') == 5
    assert "128K: 131.1 MB/s" in chart and "MB/s" in chart and "IOPS (dashed)" in chart
    assert "<td>128 KiB</td><td>1,000</td><td>900</td><td>1,100</td><td>131.1</td>" in page
    slog = page[page.index('<th scope="row">ZFS SLOG</th>') :]
    assert slog.startswith('<th scope="row">ZFS SLOG</th><td class="t-marginal">marginal (131 MB/s)')
    other = (tmp_path / "site" / "devices" / f"{sweep['id']}.html").read_text()
    assert "size-chart-" not in other and 'id="sizes"' not in other
    assert "estimated from 4 KiB" in other[other.index('<th scope="row">ZFS SLOG</th>') :]
    export = json.loads((tmp_path / "site" / "devices.json").read_text())
    by_id = {d["id"]: d for d in export["devices"]}
    assert [z["block_size"] for z in by_id[profiled["id"]]["sizes"]["on"]] == sorted(A)
    assert by_id[sweep["id"]]["sizes"] == {} and by_id[profiled["id"]]["zfs_slog"] == "marginal"


@needs_fio
def test_a_profile_measured_now_on_a_loop_device_reaches_lookup(make_loop, tmp_path, capsys):
    dev = make_loop(64 * 1024 * 1024)
    profile = measure_profile(dev, sizes=(4096, 8192, 131072), runtime_s=1)
    root = tmp_path / "subs"
    result = result_document("Vendor LOOPNOW 5", {"on": CURVE}, nosync=NOSYNC, cache_mechanism="hdparm")
    result["runs"][0]["sizes"] = profile.model_dump(mode="json")
    add(root, "", result=result)
    db = tmp_path / "devices.db"
    assert build(root, db, jobs=1).skipped == []
    med = {r["block_size"]: r for r in rows(db, "SELECT * FROM device_sizes")}
    assert sorted(med) == [4096, 8192, 131072]
    for p in profile.points:
        assert med[p.block_size]["iops"] == pytest.approx(p.iops)
        assert med[p.block_size]["sync_p99_us"] == pytest.approx(p.sync_lat_us.p99)
    (row,) = rows(db, "SELECT verdicts FROM devices")
    etcd = json.loads(row["verdicts"])["etcd"]
    assert etcd["basis"] == "measured" and etcd["p99_fdatasync_ms"] == pytest.approx(med[8192]["sync_p99_us"] / 1000)
    assert cli("lookup", "loopnow", "--db", str(db)) == 0
    assert "etcd: read at 8 KiB from the block-size profile" in capsys.readouterr().out
