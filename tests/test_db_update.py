"""`diskq db update` against a web server on 127.0.0.1: a good copy, a truncated one, a wrong
digest, a server that never answers, one that stalls mid-download; the previous copy survives
every failure. And `diskq site build` publishes the digest it is checked against."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from diskq.database import locate
from diskq.database.update import UpdateError, parse_digest, update
from diskq.errors import InvalidInput
from tests.cli_support import cli

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "devices.db"
TIMEOUT = 0.5  # seconds: the hanging server is given up on after this; nothing waits for it otherwise


class Site:
    """What the server answers: ``files`` by path; ``truncate`` paths send a full Content-Length
    and half the body, then close; ``hang`` paths never answer (until the test ends); ``stall``
    paths send their headers and half the body, then wait."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.truncate: set[str] = set()
        self.hang: set[str] = set()
        self.stall: set[str] = set()
        self.release = threading.Event()
        self.requests: list[str] = []


@pytest.fixture
def site():
    state = Site()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def do_GET(self):  # noqa: N802 (the http.server interface)
            state.requests.append(self.path)
            if self.path in state.hang:
                state.release.wait()
                return
            body = state.files.get(self.path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.path in state.truncate or self.path in state.stall:
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                if self.path in state.stall:
                    state.release.wait()
                self.close_connection = True
                return
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/devices.db"
    try:
        yield state
    finally:
        state.release.set()
        server.shutdown()
        server.server_close()
        thread.join()


def publish(site: Site, data: bytes, digest: str | None = None) -> None:
    site.files["/devices.db"] = data
    digest = digest or hashlib.sha256(data).hexdigest()
    site.files["/devices.db.sha256"] = f"{digest}  devices.db\n".encode()


@pytest.fixture
def home(tmp_path, monkeypatch):
    """The user's data directory, holding an older copy; the current directory is no checkout."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    dest = tmp_path / "data" / "diskq" / "devices.db"
    dest.parent.mkdir(parents=True)
    old = tmp_path / "old.db"
    con = sqlite3.connect(old)
    con.execute("CREATE TABLE devices (id TEXT)")
    con.execute("INSERT INTO devices VALUES ('old')")
    con.commit()
    con.close()
    shutil.copy(old, dest)
    return dest


def leftovers(dest: Path) -> list[str]:
    return sorted(p.name for p in dest.parent.iterdir() if p.name != dest.name)


def test_a_good_copy_replaces_the_previous_one_and_lookup_reads_it(site, home, capsys):
    data = COMMITTED.read_bytes()
    publish(site, data)
    assert cli("db", "update", "--url", site.url, "--timeout", str(TIMEOUT)) == 0
    assert home.read_bytes() == data and leftovers(home) == []
    err = capsys.readouterr().err
    assert f"{home} updated: " in err and hashlib.sha256(data).hexdigest()[:12] in err
    assert locate.find() == locate.Database(home, "user")
    assert cli("lookup", "pm883") == 0
    assert capsys.readouterr().err.splitlines()[-1] == f"database: {home} (your copy from `diskq db update`)"
    # a second update finds the same digest and says so, without downloading the database again
    site.requests.clear()
    assert cli("db", "update", "--url", site.url) == 0
    assert "is up to date" in capsys.readouterr().err and site.requests == ["/devices.db.sha256"]


@pytest.mark.parametrize("fault", ["truncated", "wrong digest", "hangs", "stalls", "no digest", "not a database"])
def test_a_failed_update_keeps_the_previous_copy(site, home, capsys, fault):
    before = home.read_bytes()
    data = COMMITTED.read_bytes()
    publish(site, data)
    expected = {
        "truncated": "the download was cut short",
        "wrong digest": "does not match its published digest",
        "hangs": "no answer within the timeout",
        "stalls": "the download failed after",
        "no digest": "HTTP 404",
        "not a database": "not a devices.db",
    }[fault]
    if fault == "truncated":
        site.truncate.add("/devices.db")
    elif fault == "wrong digest":
        publish(site, data, digest=hashlib.sha256(b"another file").hexdigest())
    elif fault == "hangs":
        site.hang.add("/devices.db.sha256")
    elif fault == "stalls":
        site.stall.add("/devices.db")
    elif fault == "no digest":
        del site.files["/devices.db.sha256"]
    else:
        publish(site, b"not sqlite at all" * 100)
    assert cli("db", "update", "--url", site.url, "--timeout", str(TIMEOUT)) == UpdateError.exit_code
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("diskq: error: ") and expected in err[0], err
    assert home.read_bytes() == before and leftovers(home) == []


def test_plain_http_is_refused_beyond_this_machine(home, capsys):
    assert cli("db", "update", "--url", "http://example.org/devices.db") == InvalidInput.exit_code
    assert capsys.readouterr().err.startswith("diskq: error: --url must be an https:// address")
    with pytest.raises(InvalidInput):
        update("ftp://127.0.0.1/devices.db", home)


def test_the_digest_file_is_read_as_sha256sum_writes_it():
    digest = "ab" * 32
    assert parse_digest(f"{digest}  devices.db\n", "u") == digest
    assert parse_digest(digest.upper(), "u") == digest
    for bad in ("", "ab" * 31, f"{digest}x  devices.db", "<html>not found</html>"):
        with pytest.raises(UpdateError):
            parse_digest(bad, "u")


def test_site_build_publishes_the_digest_beside_the_database(tmp_path, site, home, capsys):
    out = tmp_path / "site"
    assert cli("site", "build", "--db", str(COMMITTED), "--out", str(out)) == 0
    line = (out / "devices.db.sha256").read_text()
    assert line == f"{hashlib.sha256((out / 'devices.db').read_bytes()).hexdigest()}  devices.db\n"
    # what the site publishes is what the update accepts
    site.files["/devices.db"] = (out / "devices.db").read_bytes()
    site.files["/devices.db.sha256"] = line.encode()
    assert cli("db", "update", "--url", site.url, "--timeout", str(TIMEOUT)) == 0
    assert home.read_bytes() == COMMITTED.read_bytes()


def test_the_address_comes_from_the_option_the_environment_or_the_projects_site(monkeypatch):
    from diskq.database.update import default_url
    from diskq.package import project_url

    monkeypatch.delenv("DISKQ_DB_URL", raising=False)
    assert default_url() == project_url("Homepage").rstrip("/") + "/devices.db"
    assert default_url().startswith("https://")
    monkeypatch.setenv("DISKQ_DB_URL", "https://mirror.example/devices.db")
    assert default_url() == "https://mirror.example/devices.db"


def test_in_a_checkout_the_update_says_that_the_checkouts_database_comes_first(site, home, tmp_path, capsys):
    publish(site, COMMITTED.read_bytes())
    shutil.copy(COMMITTED, tmp_path / "devices.db")  # the current directory is tmp_path
    assert cli("db", "update", "--url", site.url, "--timeout", str(TIMEOUT)) == 0
    assert "note: here commands read devices.db first (the checkout's)" in capsys.readouterr().err
    assert home.read_bytes() == COMMITTED.read_bytes()
