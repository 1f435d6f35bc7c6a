"""The public figures' named mislabels and merges (issue: names that say what was measured), read
from a devices.db built of the repository's own sources/ and submissions/, and each checked
against the survey rows it came from (``../shared/data/public-figures`` beside the repository,
skipped with a reason where absent)."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from diskq.analyse import methodclass
from diskq.database.build import build
from tests.cli_support import rows

REPO = Path(__file__).resolve().parents[1]
#: the survey the catalogue was read from (DISKQ_SHARED names another place for ../shared)
SURVEY = Path(os.environ.get("DISKQ_SHARED") or REPO.parent / "shared") / "data" / "public-figures"


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("classes") / "devices.db"
    build(REPO / "submissions", path)
    return path


def _classes(db: Path, model_like: str) -> list[dict]:
    return rows(
        db,
        "SELECT c.*, m.name FROM model_class c JOIN models m ON m.id = c.model_id "
        "WHERE m.name LIKE ? ORDER BY c.method_class, c.write_cache, c.method_id",
        model_like,
    )


def _survey(name: str) -> list[dict]:
    path = SURVEY / name
    if not path.is_file():
        pytest.skip(f"the public-figures survey ({name}) is not beside the repository")
    return list(csv.DictReader(path.open(encoding="utf-8")))


def test_nytro_1351_cache_on_is_one_figure_per_method_and_their_disagreement_is_shown(db):
    """Was 'cache on 9,494, #1 in its class': the median of an O_SYNC 18,700 and an fsync 288."""
    on = [
        c
        for c in _classes(db, "Seagate Nytro 1351%")
        if c["method_class"] == "flush/randwrite/raw/direct" and c["write_cache"] == "on"
    ]
    assert {c["method_id"]: c["iops_1job"] for c in on} == {
        "M_SYNC_RAND_LIBAIO_QD1": 18700,
        "M_FSYNC_RAND_LIBAIO_QD1": 288,
    }
    assert all(c["iops_1job"] != 9494 for c in _classes(db, "Seagate Nytro 1351%"))
    for c in on:  # 65 times apart in one class on a raw device: the class rule did not hold, neither side ranked
        assert c["class_rank"] is None and "disagree" in json.loads(c["weak"])[0]
    survey = {
        (r["method_id"], r["write_cache"], r["iodepth"]): float(r["iops"])
        for r in _survey("S02_yourcmc.csv")
        if "Nytro 1351" in r["model"]
    }
    assert 18700 in survey.values() and 288 in survey.values()


def test_p4510_16k_figures_are_a_class_of_their_own_one_per_method(db):
    """Was 42,863 among 4 KiB figures: the median of three methods of 16 KiB writes (S13)."""
    p = _classes(db, "Intel DC P4510%")
    assert p and all(c["method_class"].endswith("/16k") for c in p)
    direct = {c["method_id"]: c["iops_1job"] for c in p if c["method_class"] == "flush/write/file/direct/16k"}
    assert direct == {
        "M_WALBENCH_FDATASYNC_DIRECT_INIT_16K": 60606,
        "M_WALBENCH_FSYNC_DIRECT_INIT_16K": 42863,
        "M_WALBENCH_FDATASYNC_DIRECT_APPEND_16K": 17443,
    }
    # 16,000 measured writes at these rates: runs under a second, weak and never ranked
    assert all(c["class_rank"] is None and any("run of" in w for w in json.loads(c["weak"])) for c in p)
    assert "16 KiB" in methodclass.label("flush/write/file/direct/16k")
    # no 16 KiB figure sits in a 4 KiB class
    sizes = {r["id"]: r["block_size"] for r in rows(db, "SELECT id, block_size FROM methods")}
    for f in rows(db, "SELECT method_id, method_class FROM figures"):
        assert f["method_class"].endswith("/16k") == (sizes[f["method_id"]].lower() == "16k")
    survey = {r["method_id"]: (float(r["iops"]), r["block_size"]) for r in _survey("S13_jinhelin_fsyncbench.csv")}
    assert sorted(survey.values()) == sorted((v, "16k") for v in (60606, 42863, 17443, 31636))


def test_s12_illumos_figures_are_not_fua_and_the_linux_buffered_ones_flush(db):
    """Was: S12's illumos raw-device and Linux buffered O_SYNC figures classed FUA."""
    p = _classes(db, "Intel DC P4600%")
    by_method = {c["method_id"]: c["method_class"] for c in p}
    # /dev/rdsk, illumos's raw character device: no page cache, whatever fio's --direct says
    assert by_method["M_OSYNC_SEQ_SYNCENG_RAW_32J"] == "sync-unknown/write/raw/direct"
    assert by_method["M_OSYNC_RAND_SYNCENG_RAW_32J"] == "sync-unknown/randwrite/raw/direct"
    assert by_method["M_OSYNC_SEQ_SYNCENG_FILE_32J"] == "flush/write/file/buffered"
    assert not any(cls.startswith("fua/") for cls in by_method.values())
    assert "not known" in methodclass.label("sync-unknown/write/raw/direct")
    survey = _survey("S12_smartos847.csv")
    assert {float(r["iops"]) for r in survey} == {c["best_iops"] for c in p}
    raw = [r for r in survey if "RAW" in r["method_id"]]  # the SmartOS comment's raw-device runs
    assert "SmartOS" in raw[0]["notes"] and {float(r["iops"]) for r in raw} == {
        c["best_iops"] for c in p if c["method_class"].startswith("sync-unknown/")
    }


def test_micron_5100_eco_o_sync_and_fsync_are_two_figures_not_23650(db):
    m = _classes(db, "Micron 5100%")
    off = {
        c["method_id"]: c["iops_1job"]
        for c in m
        if c["method_class"] == "flush/write/raw/direct" and c["write_cache"] == "off"
    }
    assert off == {"M_SYNC_SEQ_LIBAIO_QD1": 22200, "M_FSYNC_SEQ_LIBAIO_QD1": 25100}
    assert all(c["iops_1job"] != 23650 for c in m)
    # close enough to agree: both ranked, each on its own figure
    assert all(c["class_rank"] is not None for c in m if c["method_class"] == "flush/write/raw/direct")
    survey = [float(r["iops"]) for r in _survey("S02_yourcmc.csv") if "5100" in r["model"]]
    assert 22200 in survey and 25100 in survey


def test_optane_m10_from_a_buffered_0_3_s_run_is_weak_and_not_ranked(db):
    """Was '#1 in its class' for SLOG from a 0.3 s buffered run (5,632 writes at 18,600 IOPS)."""
    (m10,) = _classes(db, "Intel Optane Memory M10%")
    assert m10["iops_1job"] == 18600 and m10["class_rank"] is None
    assert json.loads(m10["weak"]) == ["a run of 0.3 s", "buffered run (page cache)"]
    (fig,) = rows(db, "SELECT weak FROM figures WHERE model_id = ?", m10["model_id"])
    assert "0.3 s" in fig["weak"]
    survey = [r for r in _survey("S03_duzlov.csv") if "M10" in r["model"]]
    assert any(float(r["iops"]) == 18600 for r in survey)


def test_no_weak_row_is_ranked_first_in_any_class(db):
    for c in rows(db, "SELECT * FROM model_class"):
        assert (c["weak"] is None) == (c["class_rank"] is not None)


def test_the_860_pro_and_evo_sweeps_of_the_seed_history_are_imported_with_their_source(db):
    for name, sweep in (
        (
            "Samsung SSD 860 PRO",
            [1033, 1937, 1889, 2257, 2477, 2775, 3218, 3731, 4196, 4598, 4879, 5186, 5410, 5774, 5915, 5897],
        ),
        (
            "Samsung SSD 860 EVO",
            [490, 868, 603, 734, 758, 928, 1027, 959, 1085, 1249, 1372, 1429, 1659, 1728, 1602, 1338],
        ),
    ):
        got = rows(db, "SELECT numjobs, iops, url, method_class FROM figures WHERE model = ? ORDER BY numjobs", name)
        assert [(g["numjobs"], g["iops"]) for g in got] == list(enumerate(sweep, 1))
        assert all("5ecb742aedb6" in g["url"] and g["method_class"] == methodclass.MAIN for g in got)
    history = _survey("S00_thejj_history.csv")
    for r in history:
        if "860" in r["model"]:
            assert rows(
                db,
                "SELECT 1 FROM figures WHERE model = ? AND numjobs = ? AND iops = ?",
                r["model"],
                int(r["numjobs"]),
                float(r["iops"]),
            ), r["model"]


def test_the_third_pass_990_pro_figures_are_8k_classes_one_per_call(db):
    """S20 (pg_test_fsync on a 990 Pro): 8 kB writes on XFS are classes of their own; the buffered
    fdatasync and fsync lines are weak; the O_DIRECT open_datasync/open_sync lines are FUA writes."""
    rows_ = {c["method_id"]: c for c in _classes(db, "Samsung 990 PRO%")}
    assert {m: (c["method_class"], c["iops_1job"]) for m, c in rows_.items()} == {
        "M_PGTESTFSYNC_OPEN_DATASYNC_8K": ("fua/write/file/direct/8k", 249.578),
        "M_PGTESTFSYNC_OPEN_SYNC_8K": ("fua/write/file/direct/8k", 185.095),
        "M_PGTESTFSYNC_FDATASYNC_8K": ("flush/write/file/buffered/8k", 608.573),
        "M_PGTESTFSYNC_FSYNC_8K": ("flush/write/file/buffered/8k", 177.431),
    }
    assert rows_["M_PGTESTFSYNC_FDATASYNC_8K"]["class_rank"] is None
    assert json.loads(rows_["M_PGTESTFSYNC_FDATASYNC_8K"]["weak"]) == ["buffered run (page cache)"]
    survey = {r["sync_call"].split()[0]: float(r["iops"]) for r in _survey("S20_tanelpoder_pgtestfsync.csv")}
    assert survey == {"open_datasync": 249.578, "fdatasync": 608.573, "fsync": 177.431, "open_sync": 185.095}


def test_lookup_flags_the_weak_figure_and_gives_no_rank(db, capsys):
    from tests.cli_support import cli

    assert cli("lookup", "Optane Memory M10", "--db", str(db)) == 0
    out = capsys.readouterr().out
    assert "weak figure, not ranked (a run of 0.3 s; buffered run (page cache))" in out
    assert "weak: buffered run (page cache); a run of 0.3 s" in out and "#1 in its class" not in out
