"""``diskq db update``: the current devices.db from the published site, into the user's data
directory (:func:`diskq.database.locate.user_data_dir`).

The site publishes ``devices.db`` and beside it ``devices.db.sha256`` (``sha256sum`` format:
``<64 hex digits>  devices.db``, written by ``diskq site build``). The update fetches the digest,
then the database into a temporary file beside the destination, and renames it over the
destination only when its SHA-256 is the published one, its schema is exactly the one this diskq
writes and SQLite's integrity check passes within a deadline (:mod:`diskq.database.foreign`). Any
failure (no answer within the timeout, the whole update past its deadline, a refused or broken
connection, a truncated download, one larger than the cap, a wrong digest, a foreign or damaged
file) leaves the previous copy as it was; temporary files a killed update left are removed by the
next one.

Addresses are https://; plain http:// is accepted only for this machine (127.0.0.1, ::1,
localhost), which is what the tests serve from. A redirect is held to the same rules (and never
leads from https:// to http://).
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
import sqlite3
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from diskq.database.files import TMP_SUFFIX, remove_stale_temporaries, temporary_prefix
from diskq.errors import DatabaseError, InvalidInput

DIGEST_SUFFIX = ".sha256"
#: Seconds a connection or a read may take before the update gives up (``--timeout``).
TIMEOUT_S = 30.0
#: The largest database accepted: far above the published one, low enough not to fill a disk.
MAX_BYTES = 1 << 30
#: Seconds the whole update may take (``--deadline``), however the server paces its bytes.
DEADLINE_S = 600.0
#: Redirects followed, each held to the rules of ``--url``.
MAX_REDIRECTS = 5
LOCAL_HOSTS = ("127.0.0.1", "::1", "localhost")
_DIGEST = re.compile(r"\A([0-9a-f]{64})(?:[ \t]+\*?\S+)?[ \t]*\n?\Z")


class UpdateError(DatabaseError):
    """The published database could not be fetched or was not the one its digest names."""


@dataclass
class UpdateReport:
    path: Path
    url: str
    digest: str
    bytes: int
    devices: int
    changed: bool  # False: the copy there already had this digest


def default_url() -> str:
    """``DISKQ_DB_URL``, else ``devices.db`` under the site the package metadata names (Homepage)."""
    from diskq.package import project_url

    env = os.environ.get("DISKQ_DB_URL")
    if env:
        return env
    site = project_url("Homepage")
    if not site:
        raise InvalidInput("no address to update from", hint="give one with --url https://.../devices.db")
    return site.rstrip("/") + "/devices.db"


def check_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return url
    if parts.scheme == "http" and parts.hostname in LOCAL_HOSTS:
        return url
    raise InvalidInput(f"--url must be an https:// address (http:// only on this machine), got {url!r}")


def parse_digest(text: str, url: str) -> str:
    """``"<hex>  devices.db\\n"`` (or the bare digest) -> the lowercase hex digest."""
    m = _DIGEST.match(text.strip().lower() + "\n")
    if not m:
        raise UpdateError(f"{url} is not a SHA-256 digest", hint="the site publishes it as `sha256sum devices.db` writes it")
    return m.group(1)


class _Deadline:
    """The whole update's clock: every connection and read is given at most what is left, and a
    watchdog shuts the socket at the end, so a server that sends a byte every few seconds (each
    read within ``--timeout``) still cannot hold the update past ``--deadline``."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.expired = False

    def left(self) -> float:
        return self.end - time.monotonic()

    def check(self, url: str) -> None:
        if self.expired or self.left() <= 0:
            self.expired = True
            raise UpdateError(f"{url}: the update did not finish within its deadline of {self.seconds:g} s",
                              hint="try again later, or give a longer --deadline")

    def watch(self, connection) -> threading.Timer:
        def expire() -> None:
            self.expired = True
            sock = getattr(connection, "sock", None)
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        timer = threading.Timer(max(self.left(), 0.0), expire)
        timer.daemon = True
        timer.start()
        return timer


class _Response:
    """An open GET: the response, its connection and the deadline's watchdog, closed together."""

    def __init__(self, url, connection, response, timer):
        self.url, self.connection, self.response, self.timer = url, connection, response, timer
        self.headers = response.headers

    def read(self, n: int) -> bytes:
        return self.response.read1(n)  # whatever one receive brings: the deadline is looked at between them

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.timer.cancel()
        self.connection.close()


def follow_redirect(url: str, location: str | None) -> str:
    """The address a redirect from ``url`` leads to, held to :func:`check_url`'s rules, and
    never from https:// down to http://."""
    if not location:
        raise UpdateError(f"{url}: a redirect without a Location")
    target = urljoin(url, location.strip())
    try:
        check_url(target)
    except InvalidInput:
        raise UpdateError(f"{url} redirects to {target[:200]!r}, an address --url itself refuses") from None
    if urlsplit(url).scheme == "https" and urlsplit(target).scheme != "https":
        raise UpdateError(f"{url} redirects to {target[:200]!r}: from https:// down to http://")
    return target


def _open(url: str, timeout: float, deadline: _Deadline | None = None) -> _Response:
    """GET ``url``, following at most :data:`MAX_REDIRECTS` redirects, each held to --url's rules."""
    import http.client

    from diskq.package import version

    deadline = deadline or _Deadline(timeout * 4)
    first = url
    for _ in range(MAX_REDIRECTS + 1):
        deadline.check(first)
        parts = urlsplit(check_url(url))
        kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        connection = kind(parts.hostname, parts.port, timeout=max(0.001, min(timeout, deadline.left())))
        timer = deadline.watch(connection)
        try:
            connection.request("GET", (parts.path or "/") + (f"?{parts.query}" if parts.query else ""),
                               headers={"User-Agent": f"diskq/{version()}"})
            response = connection.getresponse()
        except (TimeoutError, OSError, http.client.HTTPException) as exc:
            timer.cancel()
            connection.close()
            deadline.check(url)
            raise UpdateError(f"cannot fetch {url}: {_reason(exc)}") from None
        if response.status in (301, 302, 303, 307, 308):
            location = response.getheader("Location")
            timer.cancel()
            connection.close()
            url = follow_redirect(url, location)
            continue
        if response.status != 200:
            timer.cancel()
            connection.close()
            raise UpdateError(f"{url}: HTTP {response.status} {response.reason}")
        return _Response(url, connection, response, timer)
    raise UpdateError(f"{first}: more than {MAX_REDIRECTS} redirects")


def _reason(exc) -> str:
    if isinstance(exc, TimeoutError):
        return "no answer within the timeout"
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def _read(response, url: str, limit: int, sink, deadline: _Deadline | None = None) -> int:
    """Copy the body to ``sink`` in blocks; the number of bytes. A body shorter than its
    Content-Length, a stall longer than the timeout, one past the deadline or one beyond ``limit``
    is an error; a Content-Length beyond ``limit`` is refused before anything is written."""
    import http.client

    expected = response.headers.get("Content-Length")
    if expected is not None and expected.isdigit() and int(expected) > limit:
        raise UpdateError(f"{url} is larger than {limit} bytes ({int(expected)} announced)", hint="check the address")
    total = 0
    try:
        while block := response.read(1 << 16):
            if total + len(block) > limit:
                raise UpdateError(f"{url} is larger than {limit} bytes", hint="check the address")
            total += len(block)
            sink(block)
            if deadline is not None:
                deadline.check(url)
    except http.client.IncompleteRead as exc:
        raise UpdateError(f"{url}: the download was cut short ({total + len(exc.partial)} bytes)") from None
    except (TimeoutError, OSError, http.client.HTTPException) as exc:
        if deadline is not None:
            deadline.check(url)
        raise UpdateError(f"{url}: the download failed after {total} bytes: {_reason(exc)}") from None
    if deadline is not None:
        deadline.check(url)
    if expected is not None and expected.isdigit() and int(expected) != total:
        raise UpdateError(f"{url}: the download was cut short ({total} of {expected} bytes)")
    return total


def _devices(path: Path, *, integrity: bool = False) -> int:
    """The number of devices in ``path`` once it is known to be a devices.db of this diskq's
    schema (and, with ``integrity``, undamaged): :mod:`diskq.database.foreign`."""
    from diskq.database import foreign

    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            foreign.check(con, "the downloaded file", strict=True, integrity=integrity)
            with foreign.watched(con, foreign.CHECK_SECONDS):
                return con.execute("SELECT count(*) FROM devices").fetchone()[0]
        finally:
            con.close()
    except foreign.ForeignDatabase as exc:
        raise UpdateError(exc.message.replace("is not a devices.db this diskq reads", "is not a devices.db", 1),
                          hint=exc.hint) from None
    except foreign.QueryStopped:
        raise UpdateError("the downloaded file: counting its devices did not end in time") from None
    except sqlite3.Error as exc:
        raise UpdateError(f"the downloaded file is not a devices.db: {exc}") from None


def update(url: str, dest: Path, *, timeout: float = TIMEOUT_S, limit: int = MAX_BYTES,
           deadline: float = DEADLINE_S) -> UpdateReport:
    """Fetch ``url`` and its digest (``url + .sha256``) into ``dest``, atomically; ``dest`` is
    left as it was on any failure. ``deadline`` bounds the whole update in seconds."""
    check_url(url)
    clock = _Deadline(deadline)
    remove_stale_temporaries(dest)  # left by an update that was killed
    with _open(url + DIGEST_SUFFIX, timeout, clock) as response:
        chunks: list[bytes] = []
        _read(response, url + DIGEST_SUFFIX, 4096, chunks.append, clock)
    want = parse_digest(b"".join(chunks).decode("ascii", "replace"), url + DIGEST_SUFFIX)
    if dest.is_file() and hashlib.sha256(dest.read_bytes()).hexdigest() == want:
        return UpdateReport(dest, url, want, dest.stat().st_size, _devices(dest), changed=False)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=temporary_prefix(dest), suffix=TMP_SUFFIX, dir=dest.parent)
    except OSError as exc:
        raise DatabaseError(f"cannot write in {dest.parent}: {exc.strerror or exc}") from None
    try:
        h = hashlib.sha256()
        with os.fdopen(fd, "wb") as f, _open(url, timeout, clock) as response:
            def sink(block: bytes) -> None:
                h.update(block)
                f.write(block)

            size = _read(response, url, limit, sink, clock)
        got = h.hexdigest()
        if got != want:
            raise UpdateError(f"{url} does not match its published digest (sha256 {got[:12]}, expected {want[:12]})",
                              hint="the site may be mid-deployment: try again later; the previous copy is kept")
        devices = _devices(Path(tmp), integrity=True)
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return UpdateReport(dest, url, want, size, devices, changed=True)
