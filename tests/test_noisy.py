"""A run diskq itself found noisy carries that caveat into its verdicts: the verdict lines, the
document's verdict notes, the database's device notes and the device page. The run is a real one
(tests/fixtures/bench/SOURCES.md): one job's IOPS varied by 30 % within its step."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from diskq.analyse import annotate
from diskq.analyse.noise import CAVEAT, NOISY_SPREAD, iops_spread, noisy_caveat
from diskq.cli._render import result_table, verdict_lines
from diskq.result import ResultDocument

NOISY = Path(__file__).parent / "fixtures" / "bench" / "diskq-noisy-loop-result.json"


def noisy_doc() -> ResultDocument:
    doc = ResultDocument.model_validate_json(NOISY.read_text())
    annotate(doc)  # the analysis as this diskq makes it
    return doc


def test_the_recorded_run_is_noisy_by_fios_own_figures():
    doc = ResultDocument.model_validate_json(NOISY.read_text())
    on = next(r for r in doc.runs if r.write_cache == "on")
    spread = iops_spread(next(p for p in on.points if p.numjobs == 1).fio)
    assert spread is not None and spread > NOISY_SPREAD
    assert any("varied by 30%" in n for n in on.notes)  # what the search itself noted


def test_verdicts_of_a_noisy_run_carry_the_caveat():
    doc = noisy_doc()
    caveats = [n for n in doc.verdicts.notes if n.startswith(CAVEAT)]
    assert caveats == [noisy_caveat("on", iops_spread(next(p for p in doc.runs[0].points if p.numjobs == 1).fio))]
    assert "varied by 30% within its step" in caveats[0]
    # the document written says so too
    assert CAVEAT in json.loads(doc.to_json())["verdicts"]["notes"][0]


def test_verdict_lines_say_they_rest_on_a_noisy_run():
    doc = noisy_doc()
    lines = verdict_lines(doc.verdicts)
    # the workload verdicts (the power-loss-protection lines that follow weigh more than this run)
    verdicts = [
        line for line in lines if line.split(":")[0] in ("Ceph WAL/DB", "OSDs per device", "etcd", "PostgreSQL WAL")
    ]
    assert len(verdicts) == 4
    assert verdicts and all(line.endswith("(noisy run: see caveat)[/]") for line in verdicts)
    out = io.StringIO()
    result_table(doc, Console(file=out, width=200, highlight=False))
    text = out.getvalue()
    assert "caveat: cache on: one job's IOPS varied by 30%" in text
    assert "Ceph WAL/DB: " in text and "(noisy run: see caveat)" in text


def test_a_steady_run_has_no_caveat():
    doc = noisy_doc()
    steady = [r for r in doc.runs if r.write_cache == "off"]
    doc.runs = steady
    annotate(doc)
    assert not [n for n in doc.verdicts.notes if n.startswith(CAVEAT)]
    assert not any("noisy" in line for line in verdict_lines(doc.verdicts))


def test_database_and_device_page_show_the_caveat(tmp_path, monkeypatch):
    from diskq.cli import main
    from diskq.submission.legacy import dump
    from diskq.submission.paths import relative_path
    from diskq.submission.sign import make_submission

    monkeypatch.chdir(tmp_path)
    sub = make_submission(noisy_doc())
    path = tmp_path / "submissions" / relative_path(sub.result.device, sub.id)
    path.parent.mkdir(parents=True)
    path.write_text(dump(sub))
    for argv in (
        ["db", "build", "--no-memo", "--submissions", "submissions", "--db", "d.db"],
        ["site", "build", "--db", "d.db", "--out", "site", "--submissions", "submissions"],
    ):
        try:
            main(argv)
        except SystemExit as exc:
            assert exc.code in (0, None)
    import sqlite3

    notes = json.loads(sqlite3.connect("d.db").execute("SELECT notes FROM devices").fetchone()[0])
    assert any(
        n.startswith("caveat: 1 submission of 1 measured while one job's IOPS varied by more than 20%")
        and "up to 30%" in n
        for n in notes
    )
    page = next((tmp_path / "site" / "devices").glob("*.html")).read_text()
    assert '<li class="caveat">caveat: 1 submission of 1' in page
