"""Which devices.db a command reads: --db, the checkout's, the user's copy (`diskq db update`),
the snapshot shipped in the package -- in that order, and every command says which."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from diskq.database import locate
from diskq.errors import DatabasePathError
from tests.cli_support import cli

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "devices.db"


@pytest.fixture
def nowhere(tmp_path, monkeypatch):
    """A current directory outside any checkout and an empty user data directory."""
    cwd = tmp_path / "somewhere" / "else"
    cwd.mkdir(parents=True)
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return cwd


def test_the_option_wins_even_when_it_names_nothing(nowhere):
    (nowhere / "devices.db").write_bytes(b"")
    assert locate.find(Path("x.db")) == locate.Database(Path("x.db"), "option")


def test_the_current_directorys_database_then_the_checkout_roots(nowhere, tmp_path):
    shipped = locate.find()
    assert shipped.source == "snapshot"
    root = tmp_path / "somewhere"
    (root / "devices.db").write_bytes(b"")
    assert locate.find().source == "snapshot"  # a parent's devices.db alone is no checkout
    (root / "submissions").mkdir()
    assert locate.find() == locate.Database(root / "devices.db", "checkout")
    (nowhere / "devices.db").write_bytes(b"")
    assert locate.find() == locate.Database(Path("devices.db"), "checkout")  # as the user would type it


def test_the_users_copy_comes_before_the_snapshot(nowhere, tmp_path, monkeypatch):
    user = tmp_path / "data" / "diskq" / "devices.db"
    user.parent.mkdir(parents=True)
    user.write_bytes(b"")
    assert locate.find() == locate.Database(user, "user")
    monkeypatch.setenv("XDG_DATA_HOME", "relative/data")  # invalid by the XDG specification: ignored
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert locate.user_data_dir() == tmp_path / "home" / ".local" / "share" / "diskq"


def test_the_snapshot_is_the_committed_database(nowhere):
    found = locate.find()
    assert found.source == "snapshot" and found.path.read_bytes() == COMMITTED.read_bytes()


def test_no_database_anywhere_is_a_clear_error(nowhere, monkeypatch, capsys):
    monkeypatch.setattr(locate, "snapshot", lambda: None)
    with pytest.raises(DatabasePathError):
        locate.find()
    assert cli("lookup", "pm883") == DatabasePathError.exit_code
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("diskq: error: no devices.db found") and "diskq db update" in err[1]


def test_lookup_from_any_directory_reads_the_snapshot_and_says_so(nowhere, capsys):
    assert cli("lookup", "pm883") == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("Samsung PM883 ")
    assert captured.err.splitlines()[-1] == f"database: {locate.snapshot()} (the snapshot shipped with diskq)"
    assert cli("lookup", "pm883", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data[0]["database"] == {"path": str(locate.snapshot()), "source": "snapshot"}


def test_a_failed_lookup_names_the_database_under_its_error(nowhere, capsys):
    shutil.copy(COMMITTED, nowhere / "devices.db")
    assert cli("lookup", "qqqqzzzz") == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "diskq: error: no device matches 'qqqqzzzz'"
    assert "  - database: devices.db (the checkout's)" in err


def test_plan_by_name_says_which_database_it_read(nowhere, tmp_path, capsys):
    user = tmp_path / "data" / "diskq" / "devices.db"
    user.parent.mkdir(parents=True)
    shutil.copy(COMMITTED, user)
    assert cli("plan", "Samsung PM883", "--data", "12x16T", "--db-size", "7.68T", "--json") == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["database"] == {"path": str(user), "source": "user"}
    assert captured.err.splitlines()[-1] == f"database: {user} (your copy from `diskq db update`)"


def test_site_build_says_which_database_it_published(nowhere, capsys):
    assert cli("site", "build", "--out", "site") == 0
    assert (nowhere / "site" / "index.html").is_file()
    assert f"database: {locate.snapshot()} (the snapshot shipped with diskq)" in capsys.readouterr().err
