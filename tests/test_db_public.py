"""Public figures in devices.db: imported from sources/, classed by method, never mixed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from diskq.analyse import methodclass
from diskq.database.build import build, check
from diskq.database.synthetic import write_synthetic
from diskq.errors import DatabaseError, SourcesError
from diskq.submission import legacy
from tests.cli_support import cli, rows

FIXTURE = Path(__file__).parent / "fixtures" / "sources"


@pytest.fixture
def tree(tmp_path) -> Path:
    """submissions/ (the legacy rows and a few synthetic bench results) and sources/ beside it."""
    legacy.write_legacy(tmp_path / "submissions")
    write_synthetic(tmp_path / "submissions", 4, seed=3)
    shutil.copytree(FIXTURE, tmp_path / "sources")
    return tmp_path


def test_the_catalogue_beside_the_submissions_is_imported_with_quote_url_and_cache(tree):
    db = tree / "devices.db"
    report = build(tree / "submissions", db)
    assert report.devices >= 19
    figs = rows(db, "SELECT * FROM figures ORDER BY source_id, seq")
    assert len(figs) == 9
    slog = [f for f in figs if f["source_id"] == "S07_freebsd_diskinfo"][0]
    assert slog["quote"] == "4 kbytes: 2090.7 usec/IO = 1.9 Mbytes/s"
    assert slog["url"] == "https://freshbsd.org/commit/freebsd/src/321928"
    assert slog["write_cache"] == "unknown" and slog["derived"].startswith("1e6")
    assert slog["method_class"] == "flush/randwrite/raw/direct"
    src = {s["id"]: s for s in rows(db, "SELECT * FROM sources")}
    assert src["S01_shan2014"]["figures"] == 4 and src["S01_shan2014"]["attribution"]
    assert json.loads(src["S05_proxmox2018"]["method_ids"]) == ["M_SYNC_SEQ_LIBAIO"]
    assert {m["id"] for m in rows(db, "SELECT id FROM methods")} == {
        "M_SYNC_SEQ_PSYNC",
        "M_SYNC_SEQ_LIBAIO",
        "M_DISKINFO_SLOGBENCH",
        "M_FSYNC_RAND_LIBAIO",
    }
    meta = {r["key"]: r["value"] for r in rows(db, "SELECT * FROM meta")}
    assert (meta["public_sources"], meta["public_figures"]) == ("4", "9")


def test_figures_of_different_classes_are_never_one_number(tree):
    db = tree / "devices.db"
    build(tree / "submissions", db)
    per = rows(db, "SELECT m.name, c.* FROM model_class c JOIN models m ON m.id = c.model_id")
    for row in per:
        figs = rows(
            db,
            "SELECT iops, numjobs, method_class, write_cache, method_id FROM figures WHERE model_id = ?",
            row["model_id"],
        )
        same = [
            f["iops"]
            for f in figs
            if (f["method_class"], f["write_cache"], f["method_id"])
            == (row["method_class"], row["write_cache"], row["method_id"])
            and f["numjobs"] == 1
        ]
        assert row["iops_1job_min"] == min(same) and row["iops_1job_max"] == max(same)
    # the 950 PRO: O_SYNC on NVMe (FUA) and a flush per write are two classes, two rows, two ranks
    pro = [r for r in per if r["name"].startswith("Samsung 950 PRO")]
    assert sorted(r["method_class"] for r in pro) == ["flush/randwrite/raw/direct", "fua/write/raw/direct"]
    # the SM863: O_SYNC on SATA from two sources of two methods is one class, but two rows, one figure
    # per method: never their median
    sm = [r for r in per if r["name"].startswith("Samsung SM863")]
    assert len({r["method_class"] for r in sm}) == 1
    assert sorted((r["method_id"], r["iops_1job"]) for r in sm) == [
        ("M_SYNC_SEQ_LIBAIO", 17485),
        ("M_SYNC_SEQ_PSYNC", 16175),
    ]
    # ranks run 1..n within each class and cache state, over the rows that are not weak
    by_class: dict[tuple[str, str], list[int]] = {}
    for r in per:
        if r["weak"] is None:
            by_class.setdefault((r["method_class"], r["write_cache"]), []).append(r["class_rank"])
        else:
            assert r["class_rank"] is None
    assert all(sorted(v) == list(range(1, len(v) + 1)) for v in by_class.values())


def test_devices_rank_within_their_class_and_the_main_table_keeps_the_sata_legacy_rows(tree):
    db = tree / "devices.db"
    build(tree / "submissions", db)
    devs = rows(db, "SELECT * FROM devices WHERE rank IS NOT NULL ORDER BY rank")
    classes = [d["method_class"] for d in devs]
    # classes are contiguous in rank order, the main class first
    assert classes[0] == methodclass.MAIN
    assert classes == sorted(classes, key=methodclass.order)
    for cls in set(classes):
        mine = [d for d in devs if d["method_class"] == cls]
        assert [d["class_rank"] for d in mine] == list(range(1, len(mine) + 1))
        ones = [d["iops_1job"] or 0 for d in mine]
        assert ones == sorted(ones, reverse=True)
    legacy_rows = {d["model"]: d for d in devs if d["legacy"]}
    assert legacy_rows["Samsung PM883"]["method_class"] == methodclass.MAIN  # O_SYNC on SATA: a flush
    assert legacy_rows["Samsung PM883"]["method_id"] == "community-fio-journal-osync"
    assert legacy_rows["Intel SSD 750 PCIe"]["method_class"].startswith("fua/")  # O_SYNC on NVMe: FUA
    assert legacy_rows["Samsung PM1643a"]["method_class"].startswith("fua/")  # SAS
    assert sum(d["method_class"] == methodclass.MAIN for d in legacy_rows.values()) == 9
    assert legacy_rows["Intel SSD S4510"]["family_key"] == "intel:s4510"


def test_absent_or_empty_sources_is_no_public_figures(tree):
    shutil.rmtree(tree / "sources")
    build(tree / "submissions", tree / "a.db")
    (tree / "sources").mkdir()
    build(tree / "submissions", tree / "b.db")
    for db in ("a.db", "b.db"):
        assert rows(tree / db, "SELECT count(*) AS n FROM figures")[0]["n"] == 0
    assert rows(tree / "a.db", "SELECT value FROM meta WHERE key = 'content_digest'") == rows(
        tree / "b.db", "SELECT value FROM meta WHERE key = 'content_digest'"
    )


def test_a_changed_figure_makes_the_database_out_of_date(tree):
    db = tree / "devices.db"
    build(tree / "submissions", db)
    check(tree / "submissions", db)
    path = tree / "sources" / "figures" / "S07_freebsd_diskinfo.csv"
    path.write_text(path.read_text().replace(",478,", ",479,"))
    with pytest.raises(DatabaseError, match="out of date"):
        check(tree / "submissions", db)


def test_a_bad_catalogue_stops_the_build_with_one_line_and_keeps_the_old_database(tree, capsys):
    db = tree / "devices.db"
    build(tree / "submissions", db)
    before = db.read_bytes()
    path = tree / "sources" / "figures" / "S01_shan2014.csv"
    path.write_text(path.read_text().replace(",NVMe,", ",Floppy,"))
    with pytest.raises(SourcesError):
        build(tree / "submissions", db)
    assert cli("db", "build", "--no-memo", "--submissions", str(tree / "submissions"), "--db", str(db)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert [line for line in err if "error" in line] == [
        next(line for line in err if line.startswith("diskq: error: sources/figures/S01_shan2014.csv:2: interface:"))
    ]
    assert db.read_bytes() == before


def test_a_source_naming_the_family_of_a_rows_exact_name_settles_its_family(tree):
    path = tree / "sources" / "figures" / "S07_freebsd_diskinfo.csv"
    path.write_text(
        path.read_text() + "S07_freebsd_diskinfo,Intel SSD 545,Intel,545s,512GB,SATA,,"
        "M_DISKINFO_SLOGBENCH,1,1,900,unknown,,a made-up line for the test,"
        "https://freshbsd.org/commit/freebsd/src/321928,\n"
    )
    db = tree / "devices.db"
    build(tree / "submissions", db)
    row = rows(db, "SELECT family_key FROM devices WHERE model = 'Intel SSD 545'")[0]
    assert row["family_key"] == "intel:545s"  # not 'intel:545', what the name alone gives
    assert rows(db, "SELECT family_key FROM devices WHERE model = 'Samsung PM883'")[0]["family_key"] == "samsung:pm883"


def test_the_build_says_how_many_public_figures_it_imported(tree, capsys):
    assert (
        cli("db", "build", "--no-memo", "--submissions", str(tree / "submissions"), "--db", str(tree / "devices.db"))
        == 0
    )
    assert "9 public figures of 7 models from 4 sources" in capsys.readouterr().err


def test_cache_on_and_cache_off_figures_are_never_one_number(tree):
    """A source giving a drive's figure with its write cache on and off (the yourcmc.ru wiki does)
    gets two rows of one class, each with its own figure and rank."""
    path = tree / "sources" / "figures" / "S05_proxmox2018.csv"
    path.write_text(
        path.read_text() + "S05_proxmox2018,Intel DC S3510 120GB,Intel,DC S3510,120GB,SATA,,"
        "M_SYNC_SEQ_LIBAIO,1,1,600,on,,a made-up line for the test,https://www.proxmox.com/en/,\n"
    )
    db = tree / "devices.db"
    build(tree / "submissions", db)
    s3510 = rows(
        db,
        "SELECT c.write_cache, c.iops_1job FROM model_class c JOIN models m ON m.id = c.model_id "
        "WHERE m.name = 'Intel DC S3510 120 GB' ORDER BY c.write_cache",
    )
    assert s3510 == [{"write_cache": "on", "iops_1job": 600}, {"write_cache": "unknown", "iops_1job": 12518}]
