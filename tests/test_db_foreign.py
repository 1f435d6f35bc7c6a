"""A devices.db from elsewhere is hostile input: `diskq db update` against a server on 127.0.0.1
that serves a foreign schema, a view that never ends, a damaged file, a trickle, an oversized
body, redirects; and every command that reads a database refuses a foreign one with one line."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from diskq.database import foreign
from diskq.database.update import UpdateError, follow_redirect, update
from tests.cli_support import cli

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "devices.db"
NEVER_ENDS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


class Server:
    """Answers ``files`` by path; ``redirects`` maps a path to a Location; ``trickle`` paths send
    their body one byte every ``pace`` seconds; ``length`` overrides a path's Content-Length."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.redirects: dict[str, str] = {}
        self.trickle: set[str] = set()
        self.length: dict[str, int] = {}
        self.pace = 0.2
        self.stop = threading.Event()
        self.requests: list[str] = []


@pytest.fixture
def server():
    state = Server()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):  # noqa: N802
            state.requests.append(self.path)
            if self.path in state.redirects:
                self.send_response(302)
                self.send_header("Location", state.redirects[self.path])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = state.files.get(self.path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(state.length.get(self.path, len(body))))
            self.end_headers()
            if self.path in state.trickle:
                for i in range(len(body)):
                    if state.stop.wait(state.pace):
                        return
                    try:
                        self.wfile.write(body[i : i + 1])
                        self.wfile.flush()
                    except OSError:
                        return
                return
            try:
                self.wfile.write(body)
            except OSError:
                pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    state.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    state.url = state.base + "/devices.db"
    try:
        yield state
    finally:
        state.stop.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def serve(server: Server, data: bytes, path: str = "/devices.db") -> None:
    server.files[path] = data
    server.files[path + ".sha256"] = f"{hashlib.sha256(data).hexdigest()}  devices.db\n".encode()


@pytest.fixture
def home(tmp_path, monkeypatch):
    """The user's copy: an older build (the committed database with another meta row); the
    current directory is no checkout."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    dest = tmp_path / "data" / "diskq" / "devices.db"
    dest.parent.mkdir(parents=True)
    shutil.copy(COMMITTED, dest)
    sqlite_file(dest, "INSERT INTO meta VALUES ('older', 'yes')")
    return dest


def sqlite_file(path: Path, *statements: str) -> bytes:
    con = sqlite3.connect(path)
    for s in statements:
        con.execute(s)
    con.commit()
    con.close()
    return path.read_bytes()


def refused(server, home, capsys, expected: str, *extra: str) -> None:
    before = home.read_bytes()
    code = cli("db", "update", "--url", server.url, "--timeout", "2", *extra)
    err = capsys.readouterr().err.splitlines()
    assert code == UpdateError.exit_code, err
    assert err[0].startswith("diskq: error: ") and expected in err[0], err
    assert "Traceback" not in "\n".join(err)
    assert home.read_bytes() == before
    assert sorted(p.name for p in home.parent.iterdir()) == [home.name]  # no temporary left


def test_a_database_of_another_schema_is_not_installed(server, home, tmp_path, capsys):
    serve(server, sqlite_file(tmp_path / "x.db", "CREATE TABLE devices (id TEXT)", "INSERT INTO devices VALUES ('a')"))
    refused(server, home, capsys, "is not a devices.db")


def test_a_devices_view_that_never_ends_is_refused_at_once(server, home, tmp_path, capsys):
    serve(server, sqlite_file(tmp_path / "x.db", f"CREATE VIEW devices AS {NEVER_ENDS}"))
    started = time.monotonic()
    refused(server, home, capsys, "is not a devices.db")
    assert time.monotonic() - started < 30


def test_a_damaged_database_fails_the_integrity_check(server, home, tmp_path, capsys):
    data = bytearray(COMMITTED.read_bytes())
    con = sqlite3.connect(COMMITTED)
    page = con.execute("PRAGMA page_size").fetchone()[0]
    root = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'curve'").fetchone()[0]
    con.close()
    start = (root - 1) * page  # the curve table's root page: its cell pointers point nowhere now
    data[start + 8 : start + page] = bytes([0xA5]) * (page - 8)
    serve(server, bytes(data))
    refused(server, home, capsys, "damaged")


def test_a_server_that_sends_a_byte_at_a_time_is_given_up_at_the_deadline(server, home, capsys):
    serve(server, COMMITTED.read_bytes())
    server.trickle.add("/devices.db")
    started = time.monotonic()
    refused(server, home, capsys, "deadline of 1.5 s", "--deadline", "1.5")
    assert time.monotonic() - started < 10


def test_a_body_announced_larger_than_the_cap_is_refused_before_it_is_written(server, home, capsys):
    serve(server, COMMITTED.read_bytes())
    with pytest.raises(UpdateError, match="larger than 4096 bytes .* announced"):
        update(server.url, home, timeout=2, limit=4096)
    assert sorted(p.name for p in home.parent.iterdir()) == [home.name]


def test_temporary_files_of_a_killed_update_are_removed_by_the_next(server, home, capsys):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    stale = home.parent / f".devices.db.{gone.pid}.k1ll3d.tmp"
    stale.write_bytes(b"half a download")
    mine = home.parent / f".devices.db.{os.getpid()}.running.tmp"  # a live process keeps its own
    mine.write_bytes(b"in progress")
    serve(server, COMMITTED.read_bytes())
    assert cli("db", "update", "--url", server.url, "--timeout", "2") == 0
    assert not stale.exists() and mine.exists()


def test_a_redirect_to_an_address_url_refuses_is_not_followed(server, home, capsys):
    server.redirects["/devices.db.sha256"] = "http://example.org/devices.db.sha256"
    refused(server, home, capsys, "an address --url itself refuses")
    assert not any("example" in r for r in server.requests)


def test_a_redirect_within_the_rules_is_followed(server, home, capsys):
    serve(server, COMMITTED.read_bytes(), "/moved/devices.db")
    server.redirects["/devices.db.sha256"] = "/moved/devices.db.sha256"
    server.redirects["/devices.db"] = server.base + "/moved/devices.db"
    home.write_bytes(b"")
    assert cli("db", "update", "--url", server.url, "--timeout", "2") == 0
    assert home.read_bytes() == COMMITTED.read_bytes()


@pytest.mark.parametrize("target", ["http://mirror.example/devices.db", "ftp://x/devices.db", "file:///etc/passwd"])
def test_a_redirect_from_https_never_leads_to_another_scheme(target):
    with pytest.raises(UpdateError):
        follow_redirect("https://diskq.example/devices.db", target)


def test_a_query_that_never_ends_stops_at_its_deadline():
    con = sqlite3.connect(":memory:")
    started = time.monotonic()
    with pytest.raises(foreign.QueryStopped):
        with foreign.watched(con, 0.3):
            con.execute(NEVER_ENDS).fetchone()
    assert time.monotonic() - started < 10


def test_ctrl_c_stops_a_query_that_never_ends():
    con = sqlite3.connect(":memory:")
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            with foreign.watched(con, 60):
                con.execute(NEVER_ENDS).fetchone()
    finally:
        timer.cancel()


@pytest.mark.parametrize(
    "command", [("lookup", "pm883"), ("plan", "Samsung PM883", "--data", "4x8T"), ("site", "build", "--out", "_site")]
)
def test_every_command_that_reads_a_database_refuses_a_foreign_one_in_one_line(tmp_path, monkeypatch, capsys, command):
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "foreign.db"
    sqlite_file(db, "CREATE TABLE devices (id TEXT, model TEXT)", "CREATE TABLE meta (key TEXT, value TEXT)")
    code = cli(*command, "--db", str(db))
    err = capsys.readouterr().err.splitlines()
    assert code != 0 and err[0].startswith("diskq: error: ") and "is not a devices.db this diskq reads" in err[0], err
    assert "Traceback" not in "\n".join(err)


def test_a_view_in_place_of_one_of_the_tables_is_refused_when_read(tmp_path, capsys):
    db = tmp_path / "viewed.db"
    shutil.copy(COMMITTED, db)
    sqlite_file(db, "DROP TABLE curve", f"CREATE VIEW curve AS {NEVER_ENDS}")
    started = time.monotonic()
    assert cli("lookup", "pm883", "--db", str(db)) != 0
    err = capsys.readouterr().err.splitlines()
    assert "is not a devices.db this diskq reads" in err[0] and "differs in curve" in err[0], err
    assert time.monotonic() - started < 30


def test_a_database_of_an_older_schema_without_later_tables_is_still_read(tmp_path, capsys):
    db = tmp_path / "older.db"
    shutil.copy(COMMITTED, db)
    sqlite_file(db, "DROP TABLE device_sustained", "DROP TABLE sustained")
    assert cli("lookup", "pm883", "--db", str(db)) == 0
