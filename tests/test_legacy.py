"""The legacy submissions reproduce the community table's figures exactly."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from diskq.submission import legacy
from diskq.submission.legacy_table import HISTORY, TABLE
from diskq.submission.validate import validate_file

REPO = Path(__file__).resolve().parents[1]
SUBMISSIONS = REPO / "submissions"
SEED = REPO.parent / "shared" / "seeds" / "004_2bf1683b54d23d9d.txt"


def _files() -> dict[str, dict]:
    """Legacy files in the tree, by device model."""
    out = {}
    for path in SUBMISSIONS.rglob("*.json"):
        doc = json.loads(path.read_text())
        if doc.get("legacy"):
            out[doc["result"]["device"]["model"]] = doc
    return out


def _table_rows() -> list[list[str]]:
    rows = []
    for line in TABLE.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("|") and len(cells) == 8 and cells[3].isdigit():
            rows.append(cells)
    return rows


def test_table_copy_is_the_published_table():
    if not SEED.exists():
        pytest.skip("the published table is not beside the repository")
    assert TABLE in SEED.read_text()


def test_nineteen_ssds():
    assert len(_table_rows()) == 19
    assert sorted(_files()) == sorted(r[0] for r in _table_rows())


def test_files_are_exactly_what_the_generator_writes(tmp_path):
    written = legacy.write_legacy(tmp_path)
    assert len(written) == 19
    for path in written:
        rel = path.relative_to(tmp_path)
        committed = SUBMISSIONS / rel
        assert committed.exists(), (
            f"{rel} missing from submissions/ (run python -m diskq.submission.legacy submissions)"
        )
        assert committed.read_text() == path.read_text()


@pytest.mark.parametrize("row", _table_rows(), ids=lambda r: r[0])
def test_figures_match_the_table_row(row):
    model, _size, proto, one_job, max_iops, peak_jobs, cache, notes = row
    doc = _files()[model]
    run = doc["result"]["runs"][0]
    points = {p["numjobs"]: p["iops"] for p in run["points"]}
    assert points[1] == int(one_job)
    assert points[int(peak_jobs)] == int(max_iops)
    assert run["peak"] == {"numjobs": int(peak_jobs), "iops": int(max_iops)}
    main_notes = ";".join(part for part in notes.split(";") if "cache on" not in part)
    for jobs, iops in re.findall(r"(\d+): (\d+)", main_notes):
        assert points[int(jobs)] == int(iops)
    expected_jobs = {1, int(peak_jobs)} | {int(j) for j, _ in re.findall(r"(\d+): (\d+)", main_notes)}
    if (model, _size) in HISTORY:  # the older revision's per-job figures, read from its notes
        expected_jobs |= {j for j, _ in legacy.history_points(HISTORY[model, _size][2])[0]}
    assert set(points) == expected_jobs
    assert run["write_cache"] == {"off": "off", "-": "unknown"}[cache]
    for p in run["points"]:
        assert p["bw_bytes"] == p["iops"] * 4096
        assert p["lat_us"] == {"mean": None, "p50": None, "p99": None, "p999": None, "max": None}
        assert p["fio"] is None
    assert doc["legacy"] is True and doc["signature"] is None
    assert doc["provenance"]["license"] == "CC0-1.0"
    assert row[0] in doc["provenance"]["notes"][0]
    assert doc["result"]["method"]["id"] == "community-fio-journal-osync"
    assert (
        doc["result"]["method"]["fio_params"]["sync"] == "1"
        and "fdatasync" not in doc["result"]["method"]["fio_params"]
    )
    assert doc["result"]["device"]["protocol"] == {"NVMe": "nvme", "SAS": "scsi"}.get(proto, "ata")


def test_cache_on_note_becomes_a_second_run():
    doc = _files()["Samsung PM883"]
    runs = doc["result"]["runs"]
    assert [r["write_cache"] for r in runs] == ["off", "on"]
    assert {p["numjobs"]: p["iops"] for p in runs[1]["points"]} == {1: 5094, 16: 27521}
    pliant = _files()["Pliant LB206S MS04"]["result"]["runs"][0]
    assert {p["numjobs"]: p["iops"] for p in pliant["points"]} == {1: 5028, 2: 2651, 6: 1088, 8: 745, 10: 784}


def test_every_legacy_file_validates_and_is_refused_for_contributors():
    seen: set[str] = set()
    for path in SUBMISSIONS.rglob("*.json"):
        sub, problems = validate_file(path, seen_ids=seen)
        assert problems == [], [str(p) for p in problems]
        if sub.legacy:
            _, strict = validate_file(path, allow_legacy=False)
            assert [p.field for p in strict] == ["legacy"]
    assert len(seen) >= 19


def test_older_notes_are_read_for_what_they_say():
    """The S4510's notes at revision d9b7f08 show a sweep to 16 jobs at 46xx-48xx IOPS: its curve
    goes there (approximate figures at the low end of their range, said so), not 'stopped at 1 job'."""
    run = _files()["Intel SSD S4510"]["result"]["runs"][0]
    points = {p["numjobs"]: p["iops"] for p in run["points"]}
    assert points == {1: 1600, 2: 2800, 3: 3300, 6: 4200, 8: 4600, 15: 48409, 16: 4600}
    assert any("8-16 jobs: 46xx-48xx, entered as 4,600 at 8 and 16 jobs (the low end)" in n for n in run["notes"])
    assert any(n.startswith("table notes at revision d9b7f08 (2021-06-26): 1 job: 16xx") for n in run["notes"])
    pro = {p["numjobs"]: p["iops"] for p in _files()["Samsung SSD 860 PRO"]["result"]["runs"][0]["points"]}
    assert sorted(pro) == list(range(1, 17)) and (pro[2], pro[3], pro[16]) == (1937, 1889, 5897)
    evo = {p["numjobs"]: p["iops"] for p in _files()["Samsung SSD 860 EVO"]["result"]["runs"][0]["points"]}
    assert sorted(evo) == list(range(1, 17)) and (evo[7], evo[8], evo[16]) == (1027, 959, 1338)


def test_history_cells_are_the_published_ones():
    """Each older notes cell is the one the catalogue quotes from that revision (sources/figures,
    checked against the table's history), or the one the history survey read (when it is here)."""
    quotes = (REPO / "sources" / "figures" / "S00_thejj.csv").read_text()
    history = REPO.parent / "shared" / "data" / "public-figures" / "S00_thejj_history.csv"
    survey = history.read_text() if history.exists() else None
    for (model, _size), (revision, _date, cell) in HISTORY.items():
        if cell in quotes:
            continue
        if survey is None:
            pytest.skip("the seed table's history survey is not beside the repository")
        assert revision in survey and cell[:60] in survey, model
