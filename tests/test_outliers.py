"""Outliers are judged against all the evidence for a model: every submission's figure and the
model's public figures, by a rule that still works with three submissions."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from diskq.analyse import criteria
from diskq.analyse.outliers import judge
from diskq.database.build import build
from diskq.database.synthetic import result_document, submission, write_submission
from tests.cli_support import cli, rows

LIMIT = criteria.section("outliers")["max_ratio"]


def test_two_genuine_and_one_forged_submission_single_out_the_forged_one():
    verdict = judge({"a": 1000, "b": 1150, "forged": 9800}, [], max_ratio=LIMIT, what="1-job IOPS")
    assert list(verdict.far) == ["forged"] and verdict.note is None
    assert verdict.far["forged"] == (
        "1-job IOPS 9,800 is 8.5x the median 1,150 of all 3 figures of this model (3 submissions) (more than 2x apart)"
    )


def test_two_submissions_alone_judge_nothing_and_wide_disagreement_singles_none_out():
    assert judge({"a": 1000, "b": 9800}, [], max_ratio=LIMIT).far == {}
    wide = judge({"a": 100, "b": 1000, "c": 10000}, [], max_ratio=LIMIT)
    assert wide.far == {} and "disagree widely" in wide.note


def test_a_first_submission_far_from_the_public_figures_is_held_back():
    public = [5028.0, 4800.0]
    far = judge({"new": 52000}, public, max_ratio=LIMIT, what="1-job IOPS")
    assert far.far["new"].startswith(
        "1-job IOPS 52,000 is 10x the median 5,028 of all 3 figures of this model (1 submission and 2 public figures)"
    )
    assert judge({"new": 6100}, public, max_ratio=LIMIT).far == {}
    one = judge({"new": 52000}, [5028.0], max_ratio=LIMIT)
    assert "the model's public figure 5,028" in one.far["new"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(1.0, 1.4), min_size=2, max_size=8), st.floats(100.0, 1e6), st.floats(2.05, 50.0), st.booleans()
)
def test_one_forged_figure_among_agreeing_genuine_ones_is_always_the_one_singled_out(spread, base, factor, high):
    genuine = {f"g{i}": base * s for i, s in enumerate(spread)}
    forged = max(genuine.values()) * factor if high else min(genuine.values()) / factor
    verdict = judge({**genuine, "forged": forged}, [], max_ratio=LIMIT)
    assert list(verdict.far) == ["forged"]


def _sub(subs, model, one, firmware="FW1", day=1, legacy=False):
    curve = {"unknown" if legacy else "off": {1: one, 2: one * 1.8}}
    doc = result_document(model, curve, firmware=firmware, legacy=legacy, created=datetime(2025, 1, day, tzinfo=UTC))
    return write_submission(subs, submission(doc, legacy=legacy))


def test_the_build_singles_out_a_forgery_among_three_submissions(tmp_path):
    subs = tmp_path / "submissions"
    _sub(subs, "Example SSD Q3", 1000, day=1)
    _sub(subs, "Example SSD Q3", 1150, day=2)
    forged = _sub(subs, "Example SSD Q3", 9800, day=3)
    db = tmp_path / "devices.db"
    build(subs, db)
    (dev,) = rows(db, "SELECT submissions, iops_1job FROM devices")
    assert (dev["submissions"], dev["iops_1job"]) == (2, 1075)
    (row,) = rows(db, "SELECT path, excluded FROM submissions WHERE aggregated = 0")
    assert row["path"].endswith(forged.name) and "9,800 at cache off is 8.5x the median 1,150" in row["excluded"]


def test_the_build_holds_back_a_first_submission_far_from_the_models_legacy_rows(tmp_path, capsys):
    subs = tmp_path / "submissions"
    _sub(subs, "Example SSD P7", 5028, firmware=None, legacy=True)  # the published figure, another firmware
    _sub(subs, "Example SSD P7", 4900, firmware="AB12", legacy=True)
    far = _sub(subs, "Example SSD P7", 52000, firmware="FW1")
    near = _sub(subs, "Example SSD P8", 6000, firmware="FW1")
    _sub(subs, "Example SSD P8", 5500, firmware=None, legacy=True)
    db = tmp_path / "devices.db"
    build(subs, db)
    held = rows(db, "SELECT path, excluded FROM submissions WHERE excluded IS NOT NULL")
    assert [r["path"] for r in held] == [far.relative_to(subs).as_posix()]
    assert "52,000 (its cache setting closest to them) is 10x the median 5,028 of all 3 figures" in held[0]["excluded"]
    assert held[0]["excluded"].endswith("held back until more evidence agrees with it")
    (row,) = rows(db, "SELECT submissions FROM devices WHERE model = 'Example SSD P8' AND firmware = 'FW1'")
    assert row["submissions"] == 1 and near.exists()
    (dev,) = rows(db, "SELECT rank, submissions FROM devices WHERE model = 'Example SSD P7' AND firmware = 'FW1'")
    assert dev == {"rank": None, "submissions": 0}  # held back: listed, never ranked
    assert cli("lookup", "example ssd p7 FW1", "--db", str(db)) == 0
    assert "(held back: not ranked)" in capsys.readouterr().out


def test_public_figures_are_never_held_back_by_each_other(tmp_path):
    subs = tmp_path / "submissions"
    _sub(subs, "Example SSD L2", 5000, firmware="A1", legacy=True)
    _sub(subs, "Example SSD L2", 16000, firmware="B2", legacy=True)
    db = tmp_path / "devices.db"
    build(subs, db)
    assert rows(db, "SELECT excluded FROM submissions WHERE excluded IS NOT NULL") == []
    assert [r["rank"] for r in rows(db, "SELECT rank FROM devices ORDER BY rank")] == [1, 2]
