"""Model identity: the string smartctl prints, a part number or a marketing name finds the model,
through the product lines' part numbers and names (sources/lines), on every machine alike;
lookup and identify say so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from diskq.database import evidence, known, modelid
from diskq.database.build import build
from diskq.database.lookup import lookup
from diskq.submission import legacy
from tests.cli_support import cli

FIXTURES = Path(__file__).parent / "fixtures"
SMARTCTL = FIXTURES / "smartctl_json"


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("INTEL SSDSC2KB240G8", "intel:s4510"),
        ("INTEL SSDSC2KB960G7", "intel:s4500"),
        ("Intel SSD S4510", "intel:s4510"),
        ("Intel D3-S4510", "intel:s4510"),
        ("Intel SSD D3-S4510 Series", "intel:s4510"),
        ("Micron_5300_MTFDDAK3T8TDS", "micron:5300"),
        ("Micron 5300", "micron:5300"),
        ("SAMSUNG MZQL23T8HCLS-00A07", "samsung:pm9a3"),
        ("Samsung PM9A3 1.92 TB", "samsung:pm9a3"),
        ("Samsung MZQLW960HMJP-00003", "samsung:pm963"),
    ],
)
def test_part_numbers_and_marketing_names_agree(name, key):
    assert modelid.resolve(name).key == key


def test_a_part_number_two_lines_share_resolves_to_neither():
    """MZ7L3 is the PM893 and the PM897 (the source does not say which suffix is which): no
    family is assumed, so the build stores such a row under its own name, not under a guess."""
    assert modelid.resolve("SAMSUNG MZ7L3480HCHQ-00A07").key != "samsung:pm893"


def test_capacity_is_part_of_a_model_not_of_its_family():
    assert modelid.capacity_bytes("7.68TB") == 7_680_000_000_000 and modelid.capacity_bytes("400 GB") == 4 * 10**11
    assert modelid.capacity_bytes("big") is None
    assert modelid.from_name("Samsung PM883 7.68TB").capacity_bytes == 7_680_000_000_000
    assert modelid.from_name("Samsung PM883 7.68TB").key == modelid.from_name("Samsung PM883").key


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("identity")
    legacy.write_legacy(root / "submissions")
    shutil.copytree(FIXTURES / "sources", root / "sources")
    build(root / "submissions", root / "devices.db")
    return root / "devices.db"


def _smartctl_model(name: str) -> str:
    data = json.loads((SMARTCTL / name).read_text())
    return data["model_name"]


@pytest.mark.parametrize(
    ("query", "model"),
    [
        ("SAMSUNG MZ7LH7T6HMLA-00005", "Samsung PM883"),
        ("mz7lh7t6hmla", "Samsung PM883"),
        ("Samsung PM883", "Samsung PM883"),
    ],
)
def test_lookup_finds_the_pm883_by_part_number_or_name(db, query, model):
    best = lookup(db, query)[0]
    assert best.is_match and best.device["model"] == model


def test_lookup_with_recorded_smartctl_outputs(db, capsys):
    """The string smartctl printed for a drive finds its family's row (S4510) or, when no row
    has it, its public figures (PM9A3); a family known to neither answers nothing."""
    s4510 = _smartctl_model("sce__INTEL_SSDSC2KB240G8.json")
    best = lookup(db, s4510)[0]
    assert best.device["model"] == "Intel SSD S4510" and best.via.startswith("part number: ")
    assert best.capacity_note == "measured on the 480 GB model, not the 240 GB asked about"
    assert [m["name"] for m in best.public] == ["Intel D3-S4510 3.84 TB"]
    assert best.public[0]["classes"][0]["method_class"] == "flush/randwrite/raw/direct"
    pm9a3 = _smartctl_model("sce__SAMSUNG_MZQL23T8HCLS-00A07.json")
    assert cli("lookup", pm9a3, "--db", str(db)) == 0
    out = capsys.readouterr().out
    assert "Samsung PM9A3 1.92 TB" in out and "T1Q1 random write ~60000 iops" in out and "S06_vitastor" in out
    assert cli("lookup", pm9a3, "--db", str(db), "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc[0]["match"] == "public" and doc[0]["public_model"]["figures"][0]["iops"] == 60000
    s4500 = _smartctl_model("sce__INTEL_SSDSC2KB960G7.json")  # a DC S4500: not the S4510
    assert cli("lookup", s4500, "--db", str(db)) == 0  # a DC S4500: its own line, nothing measured
    out = capsys.readouterr().out
    assert out.startswith("Intel DC S4500  (not measured with diskq yet)")
    # the S4510 is never the answer: it appears only among the peers an estimate names
    assert not [line for line in out.splitlines() if "S4510" in line and "estimate:" not in line], out


def test_lookup_shows_other_methods_as_labelled_evidence(db, capsys):
    assert cli("lookup", "Intel SSD S4510", "--db", str(db)) == 0
    out = capsys.readouterr().out
    assert "class: flush per write · sequential · raw device · O_DIRECT" in out
    assert "public figures of this family (other methods: labelled, not merged)" in out
    line = next(x for x in out.splitlines() if "S06_vitastor:" in x)
    assert "27,000 IOPS" in line and "M_FSYNC_RAND_LIBAIO" in line and "cache unknown" in line


def test_known_lines_never_fail_and_stay_short(db, tmp_path):
    assert known.known_lines("INTEL SSDSC2KB240G8", db)[0].startswith("device database: Intel SSD S4510: 1-job 1,600")
    assert known.known_lines("INTEL SSDSC2KB240G8", tmp_path / "missing.db")[0].startswith("device database: not read")
    (tmp_path / "junk.db").write_text("not sqlite")
    assert known.known_lines("x", tmp_path / "junk.db")[0].startswith("device database: not read")
    assert known.known_lines(None, db) == []
    lines = known.known_lines("Samsung 950 PRO", db)
    figures = [line for line in lines if not line.startswith(("device database:", "  "))]
    assert 0 < len(figures) <= evidence.KNOWN_LINES  # the answer per use comes first, then the figures, trimmed
    assert lines[0].startswith("device database: Samsung 950 PRO") and lines[1].startswith("  Ceph WAL/DB: ")


def test_identify_prints_what_the_database_knows(db, capsys, monkeypatch):
    monkeypatch.chdir(db.parent)  # identify reads devices.db in the current directory
    assert cli("identify", "--smartctl-json", str(SMARTCTL / "sce__INTEL_SSDSC2KB240G8.json")) == 0
    assert "device database: Intel SSD S4510: 1-job 1,600 IOPS" in capsys.readouterr().out


def test_bench_progress_prints_what_the_database_knows_and_never_fails(db, monkeypatch):
    import io

    from rich.console import Console

    from diskq.cli._render import BenchProgress
    from diskq.result import Device

    buf = io.StringIO()
    progress = BenchProgress(Console(file=buf, width=200), 20, live=False)
    monkeypatch.chdir(db.parent)  # bench reads devices.db in the current directory
    progress.identified(Device(model="INTEL SSDSC2KB240G8"))
    assert "device database: Intel SSD S4510: 1-job 1,600 IOPS" in buf.getvalue()

    def broken(*a, **k):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("diskq.database.known.known_lines", broken)
    progress.identified(Device(model="INTEL SSDSC2KB240G8"))
    assert "device database: not read (disk on fire)" in buf.getvalue()


def test_a_row_stored_under_its_part_number_is_found_by_another_of_its_line(tmp_path):
    from diskq.database.synthetic import result_document, submission, write_submission

    subs = tmp_path / "submissions"
    write_submission(subs, submission(result_document("SAMSUNG MZ7LH960HAJR-00005", {"off": {1: 11000, 4: 30000}})))
    db = tmp_path / "devices.db"
    build(subs, db)
    best = lookup(db, "SAMSUNG MZ7LH7T6HMLA-00005")[0]  # the 7.68 TB PM883 finds the 960 GB row of its line
    assert best.is_match and best.device["model"] == "SAMSUNG MZ7LH960HAJR-00005"
    assert best.via.startswith("part number: ") and best.identity["capacity_bytes"] == 7_680_000_000_000
    assert best.capacity_note.startswith("measured on the ") and best.capacity_note.endswith(
        ", not the 7.68 TB asked about"
    )
    assert lookup(db, "Samsung PM883")[0].device["model"] == "SAMSUNG MZ7LH960HAJR-00005"


def test_a_devices_db_of_an_older_schema_answers_without_public_figures(db, tmp_path):
    import sqlite3

    old = tmp_path / "old.db"
    shutil.copy(db, old)
    con = sqlite3.connect(old)
    con.execute("DROP TABLE model_class")  # as a file built before the public figures had one
    con.commit()
    con.close()
    best = lookup(old, "Intel SSD S4510")[0]
    assert best.device["model"] == "Intel SSD S4510" and best.public == []
