"""Is a SQLite file a devices.db this diskq writes? A database may come from elsewhere (``diskq db
update``, ``--db``). It is installed by ``db update`` only when its schema is exactly the one
:mod:`diskq.database.schema` creates (every table, index, view and trigger, with its SQL) and
SQLite's ``PRAGMA integrity_check`` finds nothing wrong; it is read by a command only when its
basic tables are there and every entry it shares a name with is exactly this diskq's (a file of
an older schema that lacks later tables is read without them). Anything else is refused in one
line (:class:`ForeignDatabase`).

A query on a file from elsewhere may never end (a view that recurses for ever, a page chain built
to loop): every statement run here is watched by a progress handler that stops it at a deadline
or on Ctrl-C (:func:`watched`).
"""

from __future__ import annotations

import functools
import re
import signal
import sqlite3
import threading
import time
from contextlib import contextmanager

from diskq.errors import DatabaseError

#: Seconds the integrity check of a download may take (the published database takes well under one).
CHECK_SECONDS = 60.0
#: SQLite virtual-machine instructions between two looks at the clock.
_STEP = 10_000
_SPACE = re.compile(r"\s+")
_QUERY = "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"


class ForeignDatabase(DatabaseError):
    """The file is SQLite but not a devices.db of this diskq's schema, or it is damaged."""


class QueryStopped(DatabaseError):
    """A query on a database from elsewhere ran past its deadline."""


def _entries(con: sqlite3.Connection) -> frozenset[tuple]:
    return frozenset((t, n, tb, _SPACE.sub(" ", s or "").strip()) for t, n, tb, s in con.execute(_QUERY))


@functools.lru_cache(maxsize=1)
def expected() -> tuple[frozenset[tuple], tuple[str, ...], bool]:
    """The schema entries this diskq creates, the names of its search indexes (the block a build
    leaves out where SQLite has no trigram tokenizer), and whether the entries include them."""
    from diskq.database.schema import FTS_BEGIN, FTS_END, schema_path, schema_sql, trigram_supported

    block = schema_path().read_text().partition(FTS_BEGIN)[2].partition(FTS_END)[0]
    search = tuple(re.findall(r"CREATE VIRTUAL TABLE\s+(\w+)", block))
    trigram = trigram_supported()
    con = sqlite3.connect(":memory:")
    try:
        con.executescript(schema_sql(trigram=trigram))
        return _entries(con), search, trigram
    finally:
        con.close()


#: Tables every devices.db a command can read has; the others may be missing from a file built
#: before they existed (the commands read such a file without what they hold).
REQUIRED = ("devices", "submissions", "meta")


def schema_problem(con: sqlite3.Connection, *, strict: bool = True) -> str | None:
    """None when ``con``'s schema is this diskq's, else what differs, in a few words.

    ``strict`` (a download to install): every table, index, view and trigger is exactly the one
    this diskq writes. Otherwise (a file to read): the tables of :data:`REQUIRED` are there, and
    every entry named as one this diskq writes is exactly that one (a view never stands in for a
    table, no column is missing); others may be missing, and names of no concern are ignored.
    The search indexes are missing where SQLite had no trigram tokenizer: their absence is never a
    difference, nor, outside ``strict`` or where this SQLite cannot create them, their SQL."""
    want, search, trigram = expected()
    try:
        with watched(con, 10.0):
            got = _entries(con)
            version = _version(con)
    except sqlite3.Error as exc:
        return f"its schema cannot be read ({exc})"

    def optional(entry) -> bool:
        return any(entry[1] == n or entry[1].startswith(f"{n}_") for n in search)

    words = [f"schema version {version}" if version else "no schema version"]
    got_core = {e for e in got if not optional(e)}
    want_core = {e for e in want if not optional(e)}
    tables = {e[1] for e in got_core if e[0] == "table"}
    absent = [t for t in REQUIRED if t not in tables]
    if absent:
        return f"it has no {' or '.join(absent)} table"
    if strict:
        missing, extra = sorted(e[1] for e in want_core - got_core), sorted(e[1] for e in got_core - want_core)
    else:
        by_name = {e[1]: e for e in want_core}
        missing = sorted(e[1] for e in got_core if e[1] in by_name and e != by_name[e[1]])
        extra = []
    if missing:
        words.append(f"differs in {', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}")
    if extra:
        words.append(f"has {', '.join(extra[:3])}{' ...' if len(extra) > 3 else ''} this diskq does not write")
    if missing or extra:
        return "; ".join(words)
    got_search = {e for e in got if optional(e)}
    want_search = {e for e in want if optional(e)}
    if strict and got_search and trigram and got_search != want_search:
        return "its search index is not the one this diskq writes"
    kinds = {e[1]: e[0] for e in want_search}
    if any(kinds.get(e[1], e[0]) != e[0] for e in got_search):
        return "its search index is not a table"
    return None


def _version(con: sqlite3.Connection) -> str | None:
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.Error:
        return None
    return str(row[0])[:20] if row else None


def check(
    con: sqlite3.Connection, what: str, *, strict: bool = False, integrity: bool = False, seconds: float = CHECK_SECONDS
) -> None:
    """Raise :class:`ForeignDatabase` naming ``what`` unless ``con`` is a devices.db of this
    schema (:func:`schema_problem`; ``strict``: exactly), and, with ``integrity``, passes
    ``PRAGMA integrity_check`` within ``seconds``."""
    from diskq.database.schema import SCHEMA_VERSION

    problem = schema_problem(con, strict=strict)
    if problem is not None:
        raise ForeignDatabase(
            f"{what} is not a devices.db this diskq reads (schema {SCHEMA_VERSION}): {problem}",
            hint="fetch the current one with `diskq db update`, or build one with `diskq db build`",
        )
    if integrity:
        try:
            with watched(con, seconds):
                rows = [r[0] for r in con.execute("PRAGMA integrity_check(5)")]
        except QueryStopped:
            raise ForeignDatabase(f"{what}: SQLite's integrity check did not end within {seconds:g} s") from None
        except sqlite3.Error as exc:
            raise ForeignDatabase(f"{what} is damaged: {exc}") from None
        if rows != ["ok"]:
            raise ForeignDatabase(f"{what} is damaged: {'; '.join(str(r)[:120] for r in rows[:3])}")


@contextmanager
def watched(con: sqlite3.Connection, seconds: float):
    """Stop any statement on ``con`` that runs past ``seconds`` (:class:`QueryStopped`), and let
    Ctrl-C stop it too (KeyboardInterrupt): SQLite's own loop never returns to Python otherwise."""
    end = time.monotonic() + seconds
    state = {"late": False, "interrupted": False}

    def handler() -> int:
        if state["interrupted"]:
            return 1
        if time.monotonic() > end:
            state["late"] = True
            return 1
        return 0

    def on_sigint(signum, frame) -> None:  # noted here, acted on by the handler above
        state["interrupted"] = True

    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, on_sigint)
    con.set_progress_handler(handler, _STEP)
    try:
        yield
        if state["interrupted"]:  # Ctrl-C after the last look: not lost
            raise KeyboardInterrupt
    except sqlite3.OperationalError:
        if state["interrupted"]:
            raise KeyboardInterrupt from None
        if state["late"]:
            raise QueryStopped(f"a query ran longer than {seconds:g} s") from None
        raise
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
        con.set_progress_handler(None, 0)
