"""Names that come from data, made safe to be file names in the site.

A device id, a public model id or a submission path is read from devices.db, and a devices.db may
come from elsewhere (``diskq db update``, ``--db``): it is a value, never a path. A page is named
by a key of a few safe characters, unique within its directory; a raw submission file is copied
only from inside the submissions tree to the same place inside the site.

>>> keys = PageKeys()
>>> keys.key("samsung-pm883-1a2b3c")
'samsung-pm883-1a2b3c'
>>> keys.key("../../../etc/x")[:10], keys.key("../../../etc/x") == keys.key("../../../etc/x")
('etc-x-3abc', True)
>>> keys.key("Samsung-PM883-1a2b3c") != keys.key("samsung-pm883-1a2b3c")  # one file on a case-blind disk
True
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path, PurePosixPath

from diskq.errors import SiteError

#: A key left as it is: lowercase letters, digits, dots, dashes and underscores, not starting with
#: a dot (no hidden files, no ``..``), short enough for every filesystem.
_SAFE = re.compile(r"\A[a-z0-9][a-z0-9._-]{0,99}\Z")
_RUN = re.compile(r"[^a-z0-9]+")
#: A path component of a raw submission file, as ``diskq submit`` writes them.
_PART = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,199}\Z")


def slug(value: str) -> str:
    """``"../Intel SSD/x"`` -> ``"intel-ssd-x"``: lowercase letters and digits joined by dashes."""
    return _RUN.sub("-", str(value).lower()).strip("-")[:60]


class PageKeys:
    """The file name (without ``.html``) of each id's page in one directory: the id itself when it
    is already a safe name, else its slug and a digest of the whole id. Keys are unique without
    regard to case, so two ids never share a file on a case-insensitive filesystem either."""

    def __init__(self) -> None:
        self._by_id: dict[str, str] = {}
        self._used: set[str] = set()

    def key(self, ident) -> str:
        ident = str(ident)
        if ident in self._by_id:
            return self._by_id[ident]
        key = ident if _SAFE.match(ident) else None
        n = 0
        while key is None or key.lower() in self._used:
            digest = hashlib.sha256(f"{ident}\0{n}".encode("utf-8", "surrogatepass")).hexdigest()[:12]
            key = f"{slug(ident) or 'page'}-{digest}"
            n += 1
        self._used.add(key.lower())
        self._by_id[ident] = key
        return key

    __call__ = key


def raw_path(path) -> PurePosixPath | None:
    """A submission's ``path`` column as a relative path of plain components (``vendor/model/
    <id>.json``), or None when it is anything else: absolute, ``..``, empty components, hidden
    files, control characters.

    >>> str(raw_path("samsung/samsung-pm883/3b4793a6d9589451d607.json"))
    'samsung/samsung-pm883/3b4793a6d9589451d607.json'
    >>> [raw_path(p) for p in ("/etc/passwd", "../x.json", "a/../b.json", "a//b.json", ".git/config")]
    [None, None, None, None, None]
    """
    if not isinstance(path, str) or not path or len(path) > 1000 or "\\" in path:
        return None
    parts = path.split("/")
    if len(parts) > 8 or not all(_PART.match(p) for p in parts):
        return None
    return PurePosixPath(*parts)


def inside(root: Path, relative: PurePosixPath) -> Path | None:
    """``root / relative`` when it is a regular file whose real path is inside ``root``'s real path
    (no symbolic link on the way leads out), else None."""
    candidate = Path(root) / relative
    try:
        real_root = os.path.realpath(root)
        real = os.path.realpath(candidate)
    except (OSError, ValueError):
        return None
    if os.path.commonpath([real_root, real]) != real_root or real == real_root:
        return None
    if candidate.is_symlink() or not candidate.is_file():
        return None
    return candidate


def web_url(value) -> str:
    """A link from data only when it is an http(s) address; otherwise ``#`` (no ``javascript:``,
    no ``data:``, no path on the reader's machine)."""
    text = str(value or "").split(" ")[0]
    return text if re.match(r"\Ahttps?://[^\s\x00-\x1f\x7f]+\Z", text) else "#"


def write_page(tmp: Path, folder: str, key: str, html: str) -> None:
    """Write ``tmp/folder/key.html``; ``key`` comes from :class:`PageKeys`, and the page is
    written only if it lands directly inside ``tmp/folder``."""
    target = tmp / folder / f"{key}.html"
    if target.parent != tmp / folder or os.sep in key or key.startswith("."):
        raise SiteError(f"refusing to write a page named {key!r}")
    target.write_text(html)
