"""Which devices.db a command reads, always in one order (the first that exists wins):

1. the file given with ``--db`` (used even when it is missing: then that is the error);
2. the checkout's: ``devices.db`` in the current directory, or at the root of the diskq checkout
   the current directory is in (the nearest parent holding ``devices.db`` beside ``submissions/``);
3. the user's copy, written by ``diskq db update``: ``$XDG_DATA_HOME/diskq/devices.db``
   (``~/.local/share/diskq/devices.db`` when XDG_DATA_HOME is unset);
4. the snapshot of the published database shipped inside the package (``diskq/data/devices.db``,
   as it was when this version was built).

Every command that reads the database says which one it read (:meth:`Database.describe`, and
:meth:`Database.to_dict` in ``--json`` output). :func:`open_db` opens a devices.db to read it, and
refuses one of another schema with one line (:mod:`diskq.database.foreign`).
"""

from __future__ import annotations

import os
import sqlite3
import stat
from dataclasses import dataclass
from pathlib import Path

from diskq.database.files import kind
from diskq.errors import DatabasePathError

NAME = "devices.db"
#: Where each source comes from, in the order they are tried.
SOURCES = {
    "option": "given with --db",
    "checkout": "the checkout's",
    "user": "your copy from `diskq db update`",
    "snapshot": "the snapshot shipped with diskq",
}


@dataclass(frozen=True)
class Database:
    path: Path
    source: str  # a key of SOURCES

    def describe(self) -> str:
        """``devices.db (the checkout's)``"""
        return f"{self.path} ({SOURCES[self.source]})"

    def to_dict(self) -> dict:
        return {"path": str(self.path), "source": self.source}


def user_data_dir() -> Path:
    """``$XDG_DATA_HOME/diskq``, or ``~/.local/share/diskq`` (XDG Base Directory Specification:
    a relative XDG_DATA_HOME is invalid and ignored)."""
    base = os.environ.get("XDG_DATA_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "diskq"


def checkout_database(cwd: Path | None = None) -> Path | None:
    """``devices.db`` in the current directory (returned relative, as a user would type it), or at
    the root of the checkout the current directory is in; None when neither exists."""
    cwd = Path.cwd() if cwd is None else cwd
    if (cwd / NAME).is_file():
        return Path(NAME) if cwd == Path.cwd() else cwd / NAME
    for parent in cwd.parents:
        if (parent / NAME).is_file() and (parent / "submissions").is_dir():
            return parent / NAME
    return None


def snapshot() -> Path | None:
    """The devices.db shipped inside the package, or None when this copy of diskq has none."""
    from importlib import resources

    path = resources.files("diskq").joinpath("data", NAME)
    return path if isinstance(path, Path) and path.is_file() else None


def find(option: Path | None = None, *, cwd: Path | None = None) -> Database:
    """The database a command reads (see the module's docstring for the order)."""
    if option is not None:
        return Database(Path(option), "option")
    found = checkout_database(cwd)
    if found is not None:
        return Database(found, "checkout")
    user = user_data_dir() / NAME
    if user.is_file():
        return Database(user, "user")
    shipped = snapshot()
    if shipped is not None:
        return Database(shipped, "snapshot")
    raise DatabasePathError(
        "no devices.db found: none given with --db, none in a checkout, none from `diskq db update`, "
        "and this copy of diskq ships none",
        hint="run `diskq db update`, or give one with --db",
    )


def open_db(db: Path) -> sqlite3.Connection:
    db = Path(db)
    try:
        mode = os.stat(db).st_mode
    except FileNotFoundError:
        raise DatabasePathError(f"{db} does not exist", hint="build it with `diskq db build`") from None
    except OSError as exc:
        raise DatabasePathError(f"{db}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise DatabasePathError(f"{db} is {kind(mode)}, not a devices.db", hint="give the database file with --db")
    try:
        con = sqlite3.connect(f"file:{db.resolve()}?mode=ro", uri=True)
        con.row_factory = sqlite3.Row
        con.execute("SELECT 1 FROM sqlite_master LIMIT 1")
    except sqlite3.Error as exc:
        raise DatabasePathError(f"{db} is not a devices.db: {exc}", hint="rebuild it with `diskq db build`") from None
    from diskq.database import foreign

    try:  # a file from elsewhere is read only when it is this diskq's schema
        foreign.check(con, str(db))
    except BaseException:
        con.close()
        raise
    return con
