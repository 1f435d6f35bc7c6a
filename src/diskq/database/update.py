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
        raise UpdateError(
            f"{url} is not a SHA-256 digest", hint="the site publishes it as `sha256sum devices.db` writes it"
        )
    return m.group(1)


class _Deadline:
    """The whole update's clock: every connection and read is given at most what is left, and at
    the end a watchdog shuts every socket the update opened, so a server that sends a byte every
    few seconds (each read within ``--timeout``) still cannot hold the update past ``--deadline``."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.expired = False
        self.sockets: list[socket.socket] = []
        self.timer = threading.Timer(seconds, self._expire)
        self.timer.daemon = True
        self.timer.start()

    def _expire(self) -> None:
        self.expired = True
        for sock in list(self.sockets):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def left(self) -> float:
        return self.end - time.monotonic()

    def check(self, url: str) -> None:
        if self.expired or self.left() <= 0:
            self.expired = True
            raise UpdateError(
                f"{url}: the update did not finish within its deadline of {self.seconds:g} s",
                hint="try again later, or give a longer --deadline",
            )

    def stop(self) -> None:
        self.timer.cancel()


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


def _opener(deadline: _Deadline):
    """urllib's opener (proxies from the environment as before) whose connections register their
    socket with ``deadline`` and whose redirects are held to --url's rules."""
    import http.client
    import urllib.request

    def watched(base):
        class Connection(base):
            def connect(self):
                super().connect()
                deadline.sockets.append(self.sock)

        return Connection

    plain, secure = watched(http.client.HTTPConnection), watched(http.client.HTTPSConnection)

    class HTTP(urllib.request.HTTPHandler):
        def http_open(self, req):
            return self.do_open(plain, req)

    class HTTPS(urllib.request.HTTPSHandler):
        def https_open(self, req):
            return self.do_open(secure, req, context=self._context)

    class Redirects(urllib.request.HTTPRedirectHandler):
        max_redirections = MAX_REDIRECTS

        def redirect_request(self, req, fp, code, msg, headers, newurl):
            follow_redirect(req.full_url, newurl)
            return super().redirect_request(req, fp, code, msg, headers, newurl)

    return urllib.request.build_opener(HTTP, HTTPS, Redirects)


def _open(url: str, timeout: float, deadline: _Deadline | None = None):
    """GET ``url`` (redirects held to --url's rules, the whole within ``deadline``)."""
    import http.client
    import urllib.error
    import urllib.request

    from diskq.package import version

    own = deadline is None
    deadline = deadline or _Deadline(timeout * 4)
    deadline.check(url)
    request = urllib.request.Request(url, headers={"User-Agent": f"diskq/{version()}"})
    try:
        return _opener(deadline).open(request, timeout=max(0.001, min(timeout, deadline.left())))  # noqa: S310 (check_url)
    except urllib.error.HTTPError as exc:
        if exc.code in (301, 302, 303, 307, 308):
            raise UpdateError(f"{url}: more than {MAX_REDIRECTS} redirects") from None
        raise UpdateError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        deadline.check(url)
        raise UpdateError(f"cannot fetch {url}: {_reason(exc.reason)}") from None
    except (TimeoutError, OSError, http.client.HTTPException) as exc:
        deadline.check(url)
        raise UpdateError(f"cannot fetch {url}: {_reason(exc)}") from None
    finally:
        if own:
            deadline.stop()


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
        while block := response.read1(1 << 16):  # whatever one receive brings: the deadline is looked at between
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
        raise UpdateError(
            exc.message.replace("is not a devices.db this diskq reads", "is not a devices.db", 1), hint=exc.hint
        ) from None
    except foreign.QueryStopped:
        raise UpdateError("the downloaded file: counting its devices did not end in time") from None
    except sqlite3.Error as exc:
        raise UpdateError(f"the downloaded file is not a devices.db: {exc}") from None


def update(
    url: str, dest: Path, *, timeout: float = TIMEOUT_S, limit: int = MAX_BYTES, deadline: float = DEADLINE_S
) -> UpdateReport:
    """Fetch ``url`` and its digest (``url + .sha256``) into ``dest``, atomically; ``dest`` is
    left as it was on any failure. ``deadline`` bounds the whole update in seconds."""
    check_url(url)
    remove_stale_temporaries(dest)  # left by an update that was killed
    clock = _Deadline(deadline)
    try:
        return _update(url, dest, timeout, limit, clock)
    finally:
        clock.stop()


def _update(url: str, dest: Path, timeout: float, limit: int, clock: _Deadline) -> UpdateReport:
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
            raise UpdateError(
                f"{url} does not match its published digest (sha256 {got[:12]}, expected {want[:12]})",
                hint="the site may be mid-deployment: try again later; the previous copy is kept",
            )
        devices = _devices(Path(tmp), integrity=True)
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return UpdateReport(dest, url, want, size, devices, changed=True)
