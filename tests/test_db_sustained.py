"""The sustained-write cliff in devices.db and in ``diskq lookup``: rows as submitted, the device's
aggregate (earliest cliff, largest drop, how far the writes looked), what is left out and why."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diskq.database import sustained
from diskq.database.build import build
from diskq.database.lookup import lookup
from diskq.database.synthetic import result_document, submission, write_submission
from diskq.database.synthetic_sustained import sustained_measurement, sustained_pair
from tests.cli_support import cli
from tests.cli_support import rows as _rows

CURVE = {"on": {1: 21000, 2: 38000, 4: 52000}}
MODEL = "Samsung SSD 990 PRO 2TB"


def _doc(seconds=60, cliff_at=40, *, seed=0, one_job=21000, pair=True, **kw):
    """A document of the drive: a sweep (``one_job`` IOPS alone, distinct per seed so that no
    two are duplicates) and, with ``pair``, the two sustained writes the bench makes when the
    fdatasync one finds no cliff."""
    from datetime import datetime

    curve = {state: {n: (one_job if n == 1 else iops) + seed for n, iops in c.items()} for state, c in CURVE.items()}
    return result_document(
        MODEL,
        curve,
        protocol="nvme",
        sustained=sustained_pair(seconds=seconds, cliff_at=cliff_at, seed=seed, **kw) if pair else None,
        created=datetime(2025, 1, 1 + seed, tzinfo=UTC),
    )


@pytest.fixture
def db(tmp_path):
    subs = tmp_path / "submissions"
    # three submissions of one drive: a cliff after 40 s, one after 25 s, and a sweep alone; a
    # fourth lies far outside the others (its 1-job IOPS 4.8x theirs) and is not aggregated
    write_submission(subs, submission(_doc(60, 40, seed=0)))
    write_submission(subs, submission(_doc(50, 25, seed=1, before_bw=1.7e9, after_bw=3.0e8)))
    write_submission(subs, submission(_doc(seed=2, pair=False)))
    write_submission(subs, submission(_doc(40, 20, seed=3, one_job=100000)))
    write_submission(subs, submission(result_document("Micron 5300 MAX", {"on": {1: 9000, 2: 15000}})))
    path = tmp_path / "devices.db"
    report = build(subs, path)
    assert report.skipped == [] and report.submissions == 5
    return path


def test_every_measurement_is_stored_as_submitted(db):
    rows = _rows(db, "SELECT * FROM sustained ORDER BY submission_id, seq")
    assert len(rows) == 6 and {(r["seq"], r["variant"]) for r in rows} == {(0, "fdatasync"), (1, "sequential")}
    expected = sustained_measurement("sequential", seconds=60, cliff_at=40, seed=0)
    (twin,) = [r for r in rows if r["bw_samples"] == json.dumps(expected["bw_samples"])]
    assert twin["written_bytes"] == expected["written_bytes"] == sum(expected["bw_samples"])
    assert twin["cliff_found"] == 1 and twin["cliff_at_bytes"] == expected["cliff"]["at_bytes"]
    assert twin["cliff_drop_pct"] == expected["cliff"]["drop_pct"]
    sync = next(r for r in rows if r["submission_id"] == twin["submission_id"] and r["variant"] == "fdatasync")
    assert (sync["cliff_found"], sync["cliff_at_bytes"], sync["block_size"], sync["iodepth"]) == (0, None, 131072, 1)
    assert {r["interrupted"] for r in rows} == {0}


def test_the_device_keeps_its_earliest_cliff_and_largest_drop(db):
    early = sustained_measurement("sequential", seconds=50, cliff_at=25, seed=1, before_bw=1.7e9, after_bw=3.0e8)
    late = sustained_measurement("sequential", seconds=60, cliff_at=40, seed=0)
    (seq,) = _rows(db, "SELECT * FROM device_sustained WHERE variant = 'sequential'")
    assert (seq["measurements"], seq["cliffs"], seq["write_cache"], seq["knob"]) == (2, 2, "on", "drive")
    assert (
        seq["cliff_at_bytes_min"] == early["cliff"]["at_bytes"] < late["cliff"]["at_bytes"] == seq["cliff_at_bytes_max"]
    )
    assert (
        seq["drop_pct_max"] == max(early["cliff"]["drop_pct"], late["cliff"]["drop_pct"]) == early["cliff"]["drop_pct"]
    )
    assert seq["after_bw_bytes_min"] == early["cliff"]["after_bw_bytes"]
    assert seq["written_bytes_max"] == late["written_bytes"]  # the outlier's write is not counted
    (sync,) = _rows(db, "SELECT * FROM device_sustained WHERE variant = 'fdatasync'")
    assert (sync["measurements"], sync["cliffs"], sync["cliff_at_bytes_min"], sync["drop_pct_max"]) == (
        2,
        0,
        None,
        None,
    )
    assert (
        _rows(
            db,
            "SELECT * FROM device_sustained d JOIN devices v ON v.id = d.device_id WHERE v.model = 'Micron 5300 MAX'",
        )
        == []
    )


def test_lookup_gives_the_cliff_in_json_and_text(db, capsys):
    (match,) = [m for m in lookup(db, "990 pro") if m.is_match]
    sync, seq = match.sustained  # the fdatasync variant first, as everywhere
    assert (seq["variant"], sync["variant"]) == ("sequential", "fdatasync")
    assert sorted(len(m["bw_samples"]) for m in seq["writes"]) == [50, 60]
    assert all(m["cliff_found"] for m in seq["writes"])
    left_out = match.sustained_left_out
    assert [m["variant"] for m in left_out] == ["fdatasync", "sequential"]
    assert all(m["reason"].startswith("its submission is not aggregated: 1-job IOPS 100,003") for m in left_out)
    assert cli("lookup", "990 pro", "--db", str(db), "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data[0]["sustained"][1]["cliff_at_bytes_min"] == seq["cliff_at_bytes_min"]
    assert data[0]["sustained"][1]["summary"] == seq["summary"]
    assert data[0]["sustained"][1]["measurements"] == len(data[0]["sustained"][1]["writes"]) == 2
    assert len(data[0]["sustained_not_aggregated"]) == 2
    assert cli("lookup", "990 pro", "--db", str(db)) == 0
    text = capsys.readouterr().out
    at = sustained.gigabytes(seq["cliff_at_bytes_min"])
    assert (
        f"sustained write (sequential, 1 MiB writes at queue depth 32, cache on): cliff after {at} written "
        "(the earliest of 2 found in 2 measurements)" in text
    )
    assert "sustained write (fdatasync, 128 KiB writes at queue depth 1, cache on): no cliff within" in text
    assert (
        "sustained write not aggregated: " in text
        and "(sequential): its submission is not aggregated: 1-job IOPS" in text
    )
    assert "\u2588" in text and "\u2582" in text  # the drop shows in the line of blocks


def test_an_interrupted_write_is_listed_and_never_aggregated(tmp_path, monkeypatch):
    """Validation refuses an interrupted sustained write; a database read without the validator
    (the models alone) keeps it out of the figures all the same."""
    from diskq.database import extract

    monkeypatch.setattr(extract, "_validator", lambda: None)
    subs = tmp_path / "submissions"
    whole = _doc(60, 40, seed=0)
    cut = _doc(30, None, seed=1)
    cut["sustained"][1]["interrupted"] = True
    for doc in (whole, cut):
        write_submission(subs, submission(doc))
    build(subs, tmp_path / "devices.db")
    (match,) = [m for m in lookup(tmp_path / "devices.db", "990 pro") if m.is_match]
    seq = match.sustained[1]
    assert (seq["variant"], len(seq["writes"]), seq["written_bytes_max"]) == (
        "sequential",
        1,
        whole["sustained"][1]["written_bytes"],
    )
    assert [(m["variant"], m["reason"]) for m in match.sustained_left_out] == [
        ("sequential", "interrupted before its budget was written")
    ]
    assert "1 interrupted sustained-write measurement(s) are listed but not aggregated" in match.device["notes"]


def test_a_device_without_sustained_writes_has_none(db):
    (match,) = [m for m in lookup(db, "micron 5300") if m.is_match]
    assert match.sustained == [] and match.sustained_left_out == []
    assert match.to_dict()["sustained"] == []


def test_memoised_build_gives_the_same_rows(tmp_path, db):
    subs = tmp_path / "submissions"
    memo = tmp_path / "memo.sqlite"
    first = build(subs, tmp_path / "a.db", memo=memo)
    again = build(subs, tmp_path / "b.db", memo=memo)  # answers come from the memo this time
    plain = build(subs, tmp_path / "c.db")
    assert first.digest == again.digest == plain.digest
    assert _rows(tmp_path / "b.db", "SELECT * FROM device_sustained") == _rows(db, "SELECT * FROM device_sustained")
    assert _rows(tmp_path / "b.db", "SELECT * FROM sustained") == _rows(db, "SELECT * FROM sustained")


def test_a_non_finite_sustained_figure_skips_the_file(tmp_path, monkeypatch):
    """The validator refuses such JSON; without the submission package the build reads files with
    the models alone, and its own check keeps the figure out of the database."""
    from diskq.database import extract

    monkeypatch.setattr(extract, "_validator", lambda: None)
    subs = tmp_path / "submissions"
    path = write_submission(subs, submission(_doc(10, None)))
    text = path.read_text()
    data = json.loads(text)
    value = data["result"]["sustained"][0]["bw_samples"][3]
    path.write_text(text.replace(json.dumps(value), "1e999", 1))  # a JSON number, infinite as a double
    report = build(subs, tmp_path / "devices.db")
    assert report.submissions == 0 and len(report.skipped) == 1
    assert (report.skipped[0].field, report.skipped[0].message) == (
        "result.sustained.0.bw_samples.3",
        "a figure is not a finite number",
    )


# --- the aggregate: properties over any set of measurements ---------------------------------------


def _measurement(i, variant, found, at, drop, written, interrupted, version):
    return sustained.Measurement(
        submission_id=f"s{i}",
        seq=0,
        method_version=version,
        variant=variant,
        write_cache="on",
        cache_mechanism="nvme",
        block_size=4096 if variant == "fdatasync" else 1 << 20,
        iodepth=1,
        written_bytes=written,
        bw_bytes=1e8,
        cliff_found=found,
        cliff_at_s=1.0 if found else None,
        cliff_at_bytes=at if found else None,
        cliff_before_bw_bytes=2e8 if found else None,
        cliff_after_bw_bytes=2e8 * (1 - drop / 100) if found else None,
        cliff_drop_pct=drop if found else None,
        interrupted=interrupted,
    )


measurements = st.lists(
    st.builds(
        _measurement,
        st.integers(0, 99),
        st.sampled_from(["fdatasync", "sequential"]),
        st.booleans(),
        st.integers(0, 10**12),
        st.floats(0, 100),
        st.integers(1, 10**12),
        st.booleans(),
        st.sampled_from([1, 1, 2]),
    ),
    max_size=12,
)


@given(measurements)
def test_the_device_figures_are_the_extremes_of_its_counted_measurements(ms):
    figures, notes = sustained.aggregate(ms)
    done = [m for m in ms if not m.interrupted]
    assert sum(f.measurements for f in figures) <= len(done)
    if any(m.interrupted for m in ms):
        assert any("interrupted" in n for n in notes)
    for f in figures:
        counted = [m for m in done if m.variant == f.variant and m.method_version == f.method_version]
        found = [m for m in counted if m.cliff_found]
        assert f.measurements == len(counted) and f.cliffs == len(found)
        assert f.written_bytes_max == max(m.written_bytes for m in counted)
        if found:
            assert f.cliff_at_bytes_min == min(m.cliff_at_bytes for m in found) <= f.cliff_at_bytes_max
            assert f.drop_pct_max == max(m.cliff_drop_pct for m in found)
            assert "cliff after" in sustained.summary(dict(zip(sustained.DEVICE_COLUMNS, f.row("d"), strict=False)))
        else:
            assert f.cliff_at_bytes_min is None and f.drop_pct_max is None
            assert sustained.summary(dict(zip(sustained.DEVICE_COLUMNS, f.row("d"), strict=False))).startswith(
                "no cliff within"
            )
    assert len({f.method_version for f in figures}) <= 1  # one method version is ever compared


def test_lookup_in_a_database_built_before_the_sustained_tables(db, tmp_path):
    old = tmp_path / "old.db"
    old.write_bytes(db.read_bytes())
    con = sqlite3.connect(old)
    con.execute("DROP TABLE sustained")
    con.execute("DROP TABLE device_sustained")
    con.commit()
    con.close()
    (match,) = [m for m in lookup(old, "990 pro") if m.is_match]
    assert match.sustained == [] and match.sustained_left_out == [] and match.device["model"] == MODEL


def test_check_says_a_database_of_the_older_schema_is_out_of_date(db, tmp_path):
    """A devices.db built before the sustained tables existed is out of date (exit 1), not unreadable."""
    from diskq.database.build import check
    from diskq.errors import DatabaseError, DatabasePathError

    subs = db.parent / "submissions"
    old = tmp_path / "old.db"
    old.write_bytes(db.read_bytes())
    con = sqlite3.connect(old)
    con.execute("DROP TABLE device_sustained")
    con.commit()
    con.close()
    with pytest.raises(DatabaseError) as err:
        check(subs, old)
    assert not isinstance(err.value, DatabasePathError) and "is out of date (content digest" in err.value.message
    assert check(subs, db).submissions == 5


def test_docstring_examples():
    import doctest

    result = doctest.testmod(sustained)
    assert result.attempted >= 5 and result.failed == 0
