"""Two figures without raw output that cannot both be right are a conflict: shown with both
figures, decided only by other evidence of the model, and otherwise used only as far as both
allow (criteria [plausibility]); through the database, `diskq lookup`, the device page and the
table."""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from diskq.analyse import conflicts
from diskq.analyse.conflicts import Conflict, Evidence, decide, find
from diskq.database.build import build
from diskq.database.synthetic import write_submission
from diskq.publish.site import build_site
from diskq.submission.legacy import legacy_submissions
from diskq.submission.legacy_table import TABLE
from tests.cli_support import cli
from tests.cli_support import rows as _rows

#: the community table's S4510 row as the later table gives it, without the older revision's notes
#: (which the repository's file reads: tests/test_legacy.py): its two figures alone, the conflict
(S4510_ROW,) = [line for line in TABLE.splitlines() if line.startswith("| Intel SSD S4510")]
# A second community-table-style row for the model, another capacity: its 1-job figure is 16x the
# first row's and fits the first row's 15-job figure (3,227 per job against 26,000 alone).
SECOND_ROW = "| Intel SSD S4510 | 960GB | SATA | 26000 | 52000 | 16 | off | linear until capped |"


def _row_alone(subs):
    """The S4510 row's submission from its two figures alone; its path."""
    (sub,) = legacy_submissions(S4510_ROW, history={})
    return write_submission(subs, sub)


def _build(tmp_path, *, second: bool):
    subs = tmp_path / "submissions"
    _row_alone(subs)
    if second:
        (sub,) = legacy_submissions(SECOND_ROW)
        write_submission(subs, sub)
    db = tmp_path / "devices.db"
    report = build(subs, db)
    assert report.skipped == []
    build_site(db, tmp_path / "_site")
    (dev,) = _rows(db, "SELECT * FROM devices WHERE model = 'Intel SSD S4510'")
    return db, tmp_path / "_site", dev


def test_the_s4510_row_alone_is_a_conflict_shown_with_both_figures(tmp_path, capsys):
    db, site, dev = _build(tmp_path, second=False)
    points = _rows(db, "SELECT numjobs, iops, conflict, held FROM points ORDER BY numjobs")
    assert [(p["numjobs"], p["iops"], p["held"]) for p in points] == [(1, 1600, 0), (15, 48409, 1)]
    assert all(p["conflict"].startswith("conflict: 1,600 IOPS at 1 job and 48,409 at 15 jobs") for p in points)
    assert all("no other evidence for the model" in p["conflict"] for p in points)
    assert not any("typo" in p["conflict"] for p in points)
    # the verdicts use what both figures allow: the 1-job figure as a lower bound, and say so
    assert (dev["iops_1job"], dev["ceph_waldb"], dev["osds_per_device"], dev["osds_limited_by_sweep"]) == (
        1600,
        "marginal",
        1,
        1,
    )
    verdicts = json.loads(dev["verdicts"])
    for name in ("ceph_waldb", "osds_per_device", "postgres_wal"):
        assert any(r.startswith("rests on a conflict between two figures") for r in verdicts[name]["reasons"]), name

    assert cli("lookup", "s4510", "--db", str(db)) == 0
    out = capsys.readouterr().out
    assert "conflict: cache off, 1,600 IOPS at 1 job: in the verdicts only as a lower bound (undecided)" in out
    assert "conflict: cache off, 48,409 IOPS at 15 jobs: held out of the verdicts (undecided)" in out
    assert "Ceph WAL/DB, OSDs per device, PostgreSQL WAL, ZFS SLOG: rest on two figures in a conflict" in out
    assert cli("lookup", "s4510", "--db", str(db), "--json") == 0
    shown = json.loads(capsys.readouterr().out)[0]["conflicts"]
    assert [(c["numjobs"], c["iops"], c["held"]) for c in shown] == [(1, 1600, False), (15, 48409, True)]

    page = (site / "devices" / f"{dev['id']}.html").read_text()
    assert 'id="conflicts"' in page and "rests on a conflict between two figures" in page  # the verdicts say so
    assert "<strong>1,600 IOPS at 1 job</strong>, in the verdicts only as a lower bound (undecided)" in page
    assert "<strong>48,409 IOPS at 15 jobs</strong>, held out of the verdicts (undecided)" in page
    html = (site / "index.html").read_text()
    row = re.search(
        rf'<tr[^>]*>\s*<td[^>]*>\d+</td>\s*<td[^>]*><a href="devices/{dev["id"]}.html">.*?</tr>', html, re.S
    ).group(0)
    cells = [re.sub(r"<[^>]+>", " ", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
    shown = " ".join(" ".join(cells).split())  # both figures, and both job counts
    assert 'class="conflict"' in row and "1,600 &ne;&#8239;48,409 1 &ne;&#8239;15" in shown


def test_a_second_source_for_the_model_decides_and_the_page_says_so(tmp_path, capsys):
    db, site, dev = _build(tmp_path, second=True)
    points = {(p["numjobs"], p["iops"]): p for p in _rows(db, "SELECT numjobs, iops, conflict, held FROM points")}
    kept, aside = points[(15, 48409)], points[(1, 1600)]
    assert (kept["held"], aside["held"]) == (0, 1)
    assert kept["conflict"].startswith("conflict decided: ")
    assert "decided by 26,000 IOPS at 1 job (community-table row" in kept["conflict"]
    assert "960 GB" in kept["conflict"] and "kept 48,409 at 15 jobs, set aside 1,600 at 1 job" in kept["conflict"]
    assert points[(1, 26000)]["conflict"] is None and points[(16, 52000)]["conflict"] is None
    # the kept figure is in the curve, the set-aside one is not
    curve = {
        r["numjobs"]: r["iops"] for r in _rows(db, "SELECT numjobs, iops FROM curve WHERE device_id = ?", dev["id"])
    }
    assert curve == {1: 26000, 15: 48409, 16: 52000}
    assert dev["ceph_waldb"] == "excellent" and dev["iops_1job"] == 26000
    verdicts = json.loads(dev["verdicts"])
    assert any(
        r.startswith("rests on figures of which other evidence of the model decided a conflict")
        for r in verdicts["ceph_waldb"]["reasons"]
    )
    assert not any(r.startswith("rests on a conflict between") for r in verdicts["ceph_waldb"]["reasons"])

    assert cli("lookup", "s4510", "--db", str(db)) == 0
    out = capsys.readouterr().out
    assert "conflict: cache off, 48,409 IOPS at 15 jobs: kept: the model's other evidence decided" in out
    assert "conflict: cache off, 1,600 IOPS at 1 job: set aside: the model's other evidence decided" in out
    page = (site / "devices" / f"{dev['id']}.html").read_text()
    assert (
        "<strong>1,600 IOPS at 1 job</strong>, set aside: the model&#39;s other evidence decided" in page
        or "<strong>1,600 IOPS at 1 job</strong>, set aside: the model's other evidence decided" in page
    )
    assert "decided by 26,000 IOPS at 1 job" in page


# --- the pure module -----------------------------------------------------------------------------


def test_evidence_that_contradicts_both_or_neither_reading_does_not_decide():
    (c,) = find([Evidence(1600, 1, "off", "row"), Evidence(48409, 15, "off", "row")], 1.5)
    # 5,000 at 15 jobs contradicts the 15-job figure, 30,000 at 1 job the 1-job figure
    both = decide(c, [Evidence(5000, 15, "off", "a"), Evidence(30000, 1, "off", "b")], 1.5, 2.0)
    assert both.kept is None and both.reason == "undecided: the other evidence contradicts both figures"
    # a figure of another job count within reach of both readings decides nothing; one whose
    # per-job rate no 1-job rate of 1,600 explains (even across units) contradicts that reading
    assert (
        decide(c, [Evidence(20000, 8, "off", "a")], 1.5, 2.0).reason
        == "undecided: the other evidence fits both figures"
    )
    assert decide(c, [Evidence(40000, 8, "off", "a")], 1.5, 2.0).kept.numjobs == 15
    # nor does a figure of another method class or the other cache state
    assert decide(c, [Evidence(27000, 1, "off", "a", method="other")], 1.5, 2.0).kept is None
    assert decide(c, [Evidence(27000, 1, "on", "a")], 1.5, 2.0).kept is None
    # a 1-job figure near 1,600 fits both readings across units (3,227 per job is within 1.5 x 2 of
    # 1,500); a 15-job figure far below 48,409 keeps the 1-job figure
    assert decide(c, [Evidence(1500, 1, "off", "a")], 1.5, 2.0).kept is None
    d = decide(c, [Evidence(4841, 15, "off", "a")], 1.5, 2.0)
    assert (d.kept.value, d.set_aside.value) == (1600, 48409)


def test_two_measured_figures_are_never_a_conflict():
    assert find([Evidence(1600, 1, source="r", raw=True), Evidence(48409, 15, source="r", raw=True)], 1.5) == []
    assert len(find([Evidence(1600, 1, source="r", raw=True), Evidence(48409, 15, source="r")], 1.5)) == 1


@given(
    solo=st.floats(1, 1e6),
    n=st.integers(2, 64),
    per_job=st.floats(0.01, 10),
    other=st.floats(1, 1e6),
    other_jobs=st.integers(1, 64),
)
def test_a_decision_keeps_a_figure_no_evidence_contradicts(solo, n, per_job, other, other_jobs):
    items = [Evidence(solo, 1, source="s"), Evidence(solo * n * per_job, n, source="s")]
    found = find(items, 1.5)
    assert bool(found) == (round(per_job - 1.5, 9) > 0)
    for c in found:
        e = Evidence(other, other_jobs, source="o")
        d = decide(c, [e], 1.5, 2.0)
        if d.kept is not None:
            assert {d.kept, d.set_aside} == {c.low, c.high} and d.decided_by == [e]
            assert not conflicts._against(d.kept, e, 1.5, 2.0) and conflicts._against(d.set_aside, e, 1.5, 2.0)
        assert conflicts.bound(c) == (c.low, c.high)
        assert isinstance(c, Conflict)


def test_a_figure_from_another_source_decides_through_the_same_interface(tmp_path):
    # public figures imported from elsewhere are fed as evidence items by model key
    from diskq.database.extract import read_submission
    from diskq.database.keys import model_key
    from diskq.database.settle import settle

    subs = tmp_path / "submissions"
    record, problems = read_submission(_row_alone(subs), subs)
    assert problems == []
    (run,) = record.runs
    vitastor = Evidence(27000, 1, None, "Vitastor documentation, raw drive performance (Intel D3-S4510 3.84 TB)")
    points, runs = settle([record], sources={model_key("Intel SSD S4510"): [vitastor]})
    assert [p[1:] for p in points] == [(0, record.id, 0, 15), (1, record.id, 0, 1)]
    assert "decided by 27,000 IOPS at 1 job (Vitastor documentation" in points[0][0]
    assert [int(p[0]) for p in run.points()] == [15] and [int(p[0]) for p in run.held_points()] == [1]
    # kept, 15 jobs is again the peak of the contributor's sweep ("peak #jobs"): nothing claimed beyond it
    assert runs == [(1, None, 48409.0, 15, None, record.id, 0)] and run.peak_final
    assert run.findings[0].startswith("conflict decided: ")
