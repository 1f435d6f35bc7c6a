"""devices.db in the SQLite tools operators use: foreign keys declared (and kept), a full-text
index that sqlite-utils and Datasette find for ``devices``, and Datasette's metadata.json
published beside the database by the site build."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from diskq.database.build import build
from diskq.database.schema import trigram_supported
from diskq.publish.datasette import HIDDEN, TABLES, metadata
from diskq.publish.site import build_site

REPO = Path(__file__).resolve().parent.parent
SQLITE_UTILS = shutil.which("sqlite-utils", path=str(Path(sys.executable).parent))

#: every link between tables, as (table, columns, parent table)
LINKS = {
    ("submissions", ("device_id",), "devices"),
    ("runs", ("submission_id",), "submissions"),
    ("points", ("submission_id", "run"), "runs"),
    ("size_points", ("submission_id", "run"), "runs"),
    ("device_cache", ("device_id",), "devices"),
    ("curve", ("device_id", "write_cache", "knob"), "device_cache"),
    ("device_sizes", ("device_id", "write_cache", "knob"), "device_cache"),
    ("sustained", ("submission_id",), "submissions"),
    ("device_sustained", ("device_id",), "devices"),
    # the public figures of sources/
    ("figures", ("source_id",), "sources"),
    ("figures", ("method_id",), "methods"),
    ("figures", ("model_id",), "models"),
    ("model_class", ("model_id",), "models"),
    ("public_answers", ("model_id",), "models"),
    ("model_class", ("method_id",), "methods"),  # one row per method within a class (schema 10)
    ("line_families", ("line_key",), "lines"),
    ("line_answers", ("line_key",), "lines"),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """devices.db built from the committed submissions."""
    db = tmp_path_factory.mktemp("sqlite-tools") / "devices.db"
    build(REPO / "submissions", db, allowed_signers=REPO / "allowed_signers")
    return db


def _links(con: sqlite3.Connection) -> set:
    found = set()
    for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        by_id: dict[int, list] = {}
        for row in con.execute(f"PRAGMA foreign_key_list({table})"):  # noqa: S608 - names from sqlite_master
            by_id.setdefault(row[0], []).append(row)
        for rows in by_id.values():
            found.add((table, tuple(r[3] for r in sorted(rows, key=lambda r: r[1])), rows[0][2]))
    return found


def test_foreign_keys_are_declared_and_every_row_keeps_them(built):
    con = sqlite3.connect(built)
    try:
        assert _links(con) == LINKS
        assert con.execute("PRAGMA foreign_key_check").fetchall() == []
        assert con.execute("SELECT count(*) FROM submissions").fetchone()[0] > 0
    finally:
        con.close()


@pytest.mark.skipif(not trigram_supported(), reason="this SQLite has no FTS5 trigram tokenizer: no index is built")
def test_the_devices_full_text_index_is_attached_as_sqlite_utils_expects(built):
    con = sqlite3.connect(built)
    try:
        hits = con.execute(
            "SELECT d.model FROM devices d JOIN devices_fts f ON f.rowid = d.rowid WHERE devices_fts MATCH 'pm883'"
        ).fetchall()
        assert hits == [("Samsung PM883",)]
        assert (
            con.execute("SELECT count(*) FROM devices_fts").fetchone()
            == con.execute("SELECT count(*) FROM devices").fetchone()
        )
    finally:
        con.close()


@pytest.mark.skipif(SQLITE_UTILS is None, reason="sqlite-utils is not installed (pip install -e '.[test]' installs it)")
@pytest.mark.skipif(not trigram_supported(), reason="this SQLite has no FTS5 trigram tokenizer: no index is built")
def test_sqlite_utils_search_finds_a_device(built):
    done = subprocess.run(
        [SQLITE_UTILS, "search", str(built), "devices", "pm883", "--csv", "-c", "model"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["model", "Samsung PM883"]
    fks = subprocess.run([SQLITE_UTILS, "tables", str(built), "--schema"], capture_output=True, text=True)
    assert fks.returncode == 0 and "REFERENCES devices" in fks.stdout


def test_the_site_publishes_datasette_metadata_beside_the_database(built, tmp_path):
    build_site(built, tmp_path / "site", repository="https://github.com/example/diskq")
    site = tmp_path / "site"
    assert (site / "devices.db").is_file()
    doc = json.loads((site / "metadata.json").read_text())
    assert doc == metadata(repository="https://github.com/example/diskq", data_as_of=doc_as_of(built))
    assert doc["title"] and doc["license"] == "Apache-2.0" and doc["license_url"].startswith("https://")
    assert "CC0-1.0" in doc["about"] and doc["about_url"] == "https://github.com/TheJJ/ceph-diskbench"
    assert doc["source_url"] == "https://github.com/example/diskq/tree/main/submissions"
    tables = doc["databases"]["devices"]["tables"]
    con = sqlite3.connect(site / "devices.db")
    try:
        present = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for name, meta in tables.items():  # every table described exists, every label column too
            assert name in present, name
            if "label_column" in meta:
                con.execute(f"SELECT {meta['label_column']} FROM {name} LIMIT 1")  # noqa: S608 - fixed names
    finally:
        con.close()
    assert set(TABLES) | set(HIDDEN) == set(tables)
    assert {t for t in present if not t.startswith(HIDDEN)} <= set(TABLES)  # no table left undescribed


def doc_as_of(db: Path) -> str | None:
    con = sqlite3.connect(db)
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'data_as_of'").fetchone()
        return (row[0] or None) if row else None
    finally:
        con.close()
