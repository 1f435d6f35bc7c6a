"""The vendor of devices and submissions rows: the reported one unless a bus's placeholder, else
the one the model name gives (diskq.database.vendor); unknown (NULL) only when neither says."""

from __future__ import annotations

import sqlite3

from diskq.database.build import build, repo_root
from diskq.database.synthetic import result_document, submission, write_submission

CURVE = {"on": {1: 9000, 2: 15000, 4: 21000}}


def test_vendor_is_filled_from_the_report_or_the_name_and_left_unknown_otherwise(tmp_path):
    subs = tmp_path / "submissions"
    cases = {  # model, reported vendor -> the row's vendor
        ("SAMSUNG MZ7LH7T6HMLA-00005", "ATA"): "Samsung",  # libata's placeholder; a part number smartctl prints
        ("Micron 5300 MAX", None): "Micron",  # a marketing name
        ("INTEL SSDSC2KB960G7", None): "Intel",  # a part number of the curated aliases
        ("SEAGATE ST4000NM0023", "SEAGATE"): "Seagate",  # a SAS drive's own report
        ("Linux loop device", None): None,  # names no vendor: unknown, not guessed
    }
    for i, (model, vendor) in enumerate(cases):  # figures of their own: never duplicates of each other
        curve = {state: {n: iops + 101 * i for n, iops in points.items()} for state, points in CURVE.items()}
        write_submission(subs, submission(result_document(model, curve, vendor=vendor)))
    db = tmp_path / "devices.db"
    build(subs, db)
    con = sqlite3.connect(db)
    try:
        subs_rows = dict(con.execute("SELECT model, vendor FROM submissions"))
        dev_rows = dict(con.execute("SELECT model, vendor FROM devices"))
    finally:
        con.close()
    expected = {model: want for (model, _), want in cases.items()}
    assert subs_rows == expected
    assert dev_rows == expected


def test_the_committed_database_names_a_vendor_wherever_the_name_gives_one():
    con = sqlite3.connect(repo_root() / "devices.db")
    try:
        missing = [m for (m,) in con.execute("SELECT model FROM devices WHERE vendor IS NULL")]
        total = con.execute("SELECT count(*) FROM devices").fetchone()[0]
    finally:
        con.close()
    assert total and len(missing) <= 1, missing  # LENSE20512GMSP34MEAT2TA names no vendor
