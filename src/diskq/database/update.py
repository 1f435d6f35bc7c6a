"""``diskq db update``: the current devices.db from the published site, into the user's data
directory (:func:`diskq.database.locate.user_data_dir`).

The site publishes ``devices.db`` and beside it ``devices.db.sha256`` (``sha256sum`` format:
``<64 hex digits>  devices.db``, written by ``diskq site build``). The update fetches the digest,
then the database into a temporary file beside the destination, and renames it over the
destination only when its SHA-256 is the published one and SQLite reads it as a devices.db. Any
failure (no answer within the timeout, a refused or broken connection, a truncated download, a
wrong digest) leaves the previous copy as it was.

Addresses are https://; plain http:// is accepted only for this machine (127.0.0.1, ::1,
localhost), which is what the tests serve from.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from diskq.database.files import TMP_SUFFIX
from diskq.errors import DatabaseError, InvalidInput

DIGEST_SUFFIX = ".sha256"
#: Seconds a connection or a read may take before the update gives up (``--timeout``).
TIMEOUT_S = 30.0
#: The largest database accepted: far above the published one, low enough not to fill a disk.
MAX_BYTES = 1 << 30
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


def _open(url: str, timeout: float):
    import urllib.error
    import urllib.request

    from diskq.package import version

    request = urllib.request.Request(url, headers={"User-Agent": f"diskq/{version()}"})
    try:
        return urllib.request.urlopen(request, timeout=timeout)  # noqa: S310 (scheme checked: check_url)
    except urllib.error.HTTPError as exc:
        raise UpdateError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise UpdateError(f"cannot fetch {url}: {_reason(exc.reason)}") from None
    except (TimeoutError, OSError) as exc:
        raise UpdateError(f"cannot fetch {url}: {_reason(exc)}") from None


def _reason(exc) -> str:
    if isinstance(exc, TimeoutError):
        return "no answer within the timeout"
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__


def _read(response, url: str, limit: int, sink) -> int:
    """Copy the body to ``sink`` in blocks; the number of bytes. A body shorter than its
    Content-Length, a stall longer than the timeout or one beyond ``limit`` is an error."""
    import http.client

    expected = response.headers.get("Content-Length")
    total = 0
    try:
        while block := response.read(1 << 16):
            total += len(block)
            if total > limit:
                raise UpdateError(f"{url} is larger than {limit} bytes", hint="check the address")
            sink(block)
    except http.client.IncompleteRead as exc:
        raise UpdateError(f"{url}: the download was cut short ({total + len(exc.partial)} bytes)") from None
    except (TimeoutError, OSError) as exc:
        raise UpdateError(f"{url}: the download failed after {total} bytes: {_reason(exc)}") from None
    if expected is not None and expected.isdigit() and int(expected) != total:
        raise UpdateError(f"{url}: the download was cut short ({total} of {expected} bytes)")
    return total


def _devices(path: Path) -> int:
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return con.execute("SELECT count(*) FROM devices").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise UpdateError(f"the downloaded file is not a devices.db: {exc}") from None


def update(url: str, dest: Path, *, timeout: float = TIMEOUT_S, limit: int = MAX_BYTES) -> UpdateReport:
    """Fetch ``url`` and its digest (``url + .sha256``) into ``dest``, atomically; ``dest`` is
    left as it was on any failure."""
    check_url(url)
    with _open(url + DIGEST_SUFFIX, timeout) as response:
        chunks: list[bytes] = []
        _read(response, url + DIGEST_SUFFIX, 4096, chunks.append)
    want = parse_digest(b"".join(chunks).decode("ascii", "replace"), url + DIGEST_SUFFIX)
    if dest.is_file() and hashlib.sha256(dest.read_bytes()).hexdigest() == want:
        return UpdateReport(dest, url, want, dest.stat().st_size, _devices(dest), changed=False)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.{os.getpid()}.", suffix=TMP_SUFFIX, dir=dest.parent)
    except OSError as exc:
        raise DatabaseError(f"cannot write in {dest.parent}: {exc.strerror or exc}") from None
    try:
        h = hashlib.sha256()
        with os.fdopen(fd, "wb") as f, _open(url, timeout) as response:
            def sink(block: bytes) -> None:
                h.update(block)
                f.write(block)

            size = _read(response, url, limit, sink)
        got = h.hexdigest()
        if got != want:
            raise UpdateError(f"{url} does not match its published digest (sha256 {got[:12]}, expected {want[:12]})",
                              hint="the site may be mid-deployment: try again later; the previous copy is kept")
        devices = _devices(Path(tmp))
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return UpdateReport(dest, url, want, size, devices, changed=True)
