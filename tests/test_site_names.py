"""`diskq site build` with a devices.db from elsewhere whose ids and paths are hostile: every
page is written inside --out under a safe, unique name; raw files only from inside the
submissions tree; links from data only to http(s) addresses."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from diskq.publish.names import PageKeys, raw_path, web_url
from diskq.publish.site import build_site

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "devices.db"


def hostile_db(tmp_path: Path, ids: list[str], paths: list[str] | None = None) -> Path:
    """The committed devices.db with its first devices renamed to ``ids`` and, when given, its
    first submissions' paths set to ``paths``."""
    db = tmp_path / "hostile.db"
    shutil.copyfile(COMMITTED, db)
    con = sqlite3.connect(db)
    con.execute("PRAGMA foreign_keys = OFF")
    rows = [r[0] for r in con.execute("SELECT id FROM devices ORDER BY id")]
    for old, new in zip(rows, ids, strict=False):
        con.execute("UPDATE devices SET id = ? WHERE id = ?", (new, old))
        con.execute("UPDATE submissions SET device_id = ? WHERE device_id = ?", (new, old))
    subs = [r[0] for r in con.execute("SELECT id FROM submissions ORDER BY id")]
    for sid, path in zip(subs, paths or [], strict=False):
        con.execute("UPDATE submissions SET path = ? WHERE id = ?", (path, sid))
    con.commit()
    con.close()
    return db


def files_under(root: Path) -> set[Path]:
    return {Path(d) / f for d, _, fs in os.walk(root) for f in fs}


def test_device_ids_that_are_paths_are_written_inside_out_under_safe_names(tmp_path):
    victim = tmp_path / "elsewhere" / "victim.html"
    victim.parent.mkdir()
    victim.write_text("precious")
    ids = ["../../../escaped", str(victim.with_suffix("")), "..", ".hidden", "a/b", "CASE", "case", "x\x1b[2J"]
    db = hostile_db(tmp_path, ids)
    before = files_under(tmp_path) - files_under(tmp_path / "work")
    out = tmp_path / "work" / "out" / "_site"
    out.parent.mkdir(parents=True)
    report = build_site(db, out)
    assert victim.read_text() == "precious"
    # nothing was written outside --out
    assert files_under(tmp_path) - files_under(out) == before
    pages = sorted(p.name for p in (out / "devices").iterdir())
    assert len(pages) == report.devices == len({p.lower() for p in pages})  # one page per device, case-blind unique
    assert all(p.endswith(".html") and not p.startswith(".") and "/" not in p for p in pages)
    index = (out / "index.html").read_text()
    assert "devices/../" not in index and "\x1b" not in index


def test_the_index_links_to_the_page_each_hostile_id_got(tmp_path):
    db = hostile_db(tmp_path, ["../../../escaped"])
    out = tmp_path / "_site"
    build_site(db, out)
    key = PageKeys().key("../../../escaped")
    assert (out / "devices" / f"{key}.html").is_file()
    con = sqlite3.connect(db)
    ranked = con.execute("SELECT rank FROM devices WHERE id = '../../../escaped'").fetchone()[0]
    con.close()
    if ranked is not None:
        assert f'href="devices/{key}.html"' in (out / "index.html").read_text()


def test_raw_copies_come_only_from_inside_the_submissions_tree(tmp_path):
    subs = tmp_path / "repo" / "submissions"
    shutil.copytree(REPO / "submissions", subs)
    secret = tmp_path / "repo" / "secret.json"
    secret.write_text('{"key": "not for the site"}')
    (subs / "vendor").mkdir()
    os.symlink(secret, subs / "vendor" / "link.json")
    db = hostile_db(tmp_path, [], ["../secret.json", str(secret), "vendor/link.json", "vendor/../../secret.json"])
    out = tmp_path / "_site"
    build_site(db, out, submissions=subs)
    published = files_under(out / "submissions")
    assert published, "the genuine raw files are still published"
    assert not any(p.read_bytes() == secret.read_bytes() for p in published)
    assert not (out / "secret.json").exists() and not (tmp_path / "secret.json").exists()
    for page in (out / "devices").iterdir():
        text = page.read_text()
        assert "submissions/../" not in text and 'secret.json">' not in text


@pytest.mark.parametrize(
    "path", ["/etc/passwd", "../x.json", "a/../b.json", "a//b.json", ".git/config", "a\\b.json", "a/\x1b[2J.json", ""]
)
def test_a_submission_path_that_is_not_plain_is_no_path(path):
    assert raw_path(path) is None


@pytest.mark.parametrize(
    "url", ["javascript:alert(1)", "data:text/html,x", "file:///etc/passwd", "//evil", "https://a b"]
)
def test_a_link_from_data_is_only_an_http_address(url):
    assert web_url(url) in ("#", "https://a")


def test_page_keys_are_stable_and_unique():
    keys = PageKeys()
    crafted = PageKeys().key("../x")  # a safe id equal to the key another id would get
    first = keys.key(crafted)
    second = keys.key("../x")
    assert first == crafted and second != crafted and keys.key("../x") == second
