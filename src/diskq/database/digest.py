"""The content digest of a devices.db: sha256 over its schema version and every row of its
tables in key order (:func:`content_digest`), and what an existing file's rows give
(:func:`stored_digest`). Two builds of the same submissions have the same digest even if SQLite
laid the files out differently, or could not build the search index at all.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
from pathlib import Path

from diskq.database import public
from diskq.database.files import kind
from diskq.database.schema import SCHEMA_VERSION
from diskq.errors import DatabasePathError
from diskq.identity import store as identity_store

#: Tables covered by the content digest, each with the order its rows are hashed in.
DIGEST_TABLES = {
    "submissions": "id",
    "runs": "submission_id, run",
    "points": "submission_id, run, seq",
    "devices": "id",
    "device_cache": "device_id, write_cache, knob",
    "curve": "device_id, write_cache, knob, numjobs",
    "size_points": "submission_id, run, seq",
    "device_sizes": "device_id, write_cache, knob, block_size",
    "sustained": "submission_id, seq",
    "device_sustained": "device_id, variant, write_cache, knob",
    "skipped": "path, field, message",
    **public.TABLES,
    **identity_store.TABLES,
    "public_answers": "model_id",
    "line_answers": "line_key",
}


def search_text(model: str, vendor: str | None, firmware: str | None) -> str:
    """What the search index holds for a device: its model, vendor and firmware, and the model's
    letters and digits run together (``Micron_5300`` -> ``micron5300``)."""
    from diskq.database.keys import compact

    return " ".join(filter(None, [model, vendor, firmware, compact(model)]))


def _has_search_index(con: sqlite3.Connection) -> bool:
    return con.execute("SELECT 1 FROM sqlite_master WHERE name = 'device_search'").fetchone() is not None


def _search_rows(con: sqlite3.Connection):
    """``fetchmany`` of the (device id, search text) rows in order: the rows of the file's
    ``device_search`` index when it has one, else computed from ``devices`` as the build indexes
    them. An index that holds what its devices say gives exactly the computed rows."""
    if _has_search_index(con):
        try:
            return con.execute("SELECT device_id, text FROM device_search ORDER BY device_id, text").fetchmany
        except sqlite3.OperationalError:  # no FTS5 or no trigram tokenizer here to open the index with:
            # FTS5 keeps the column values in its content table, a plain table any SQLite reads
            return con.execute("SELECT c0, c1 FROM device_search_content ORDER BY c0, c1").fetchmany
    cur = con.execute("SELECT id, model, vendor, firmware FROM devices ORDER BY id")
    return lambda n: [(r[0], search_text(r[1], r[2], r[3])) for r in cur.fetchmany(n)]


def content_digest(con: sqlite3.Connection) -> str:
    """sha256 over the schema version and every row of the data tables, in key order: for each
    row ``repr(row)`` and a newline (hashed a few thousand rows at a time). ``meta`` and the
    search text of every device are covered too: a lookup depends on both.

    The digest is that of the content, not of what the SQLite that built the file could do:
    ``meta.fts`` (and the digest itself) is left out, and the search text comes from the index
    when the file has one and is computed from ``devices`` when it has none, so a build without
    the trigram tokenizer has the digest of one with it, while an index row that is missing,
    added or changed still changes the digest. A table the file lacks (built by an older schema)
    is hashed as such: the file is out of date, its digest is that of no build."""
    h = hashlib.sha256(f"diskq-devices-db {SCHEMA_VERSION}\n".encode())
    for table, fetch in _digest_sections(con):
        h.update(f"\n[{table}]\n".encode())
        while rows := fetch(4096):
            h.update(("\n".join(map(repr, rows)) + "\n").encode())  # the same text, less per row
    return h.hexdigest()


def _digest_sections(con: sqlite3.Connection):
    """(name, fetchmany of its rows in order) of each part of the digest; run one at a time."""
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    for table, order in DIGEST_TABLES.items():
        if table not in tables:  # a database of an older schema: out of date, not unreadable
            left = [[("missing table",)]]
            yield table, lambda n, left=left: left.pop() if left else []
            continue
        yield table, con.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchmany  # noqa: S608 - fixed names
    yield (
        "meta",
        con.execute("SELECT key, value FROM meta WHERE key NOT IN ('content_digest', 'fts') ORDER BY key").fetchmany,
    )
    yield "device_search", _search_rows(con)


def stored_digest(db: Path) -> str:
    """The content digest of an existing devices.db, recomputed from its rows (``meta`` is not trusted)."""
    return inspect_file(db)[0]


def inspect_file(db: Path) -> tuple[str, bool, dict[str, str]]:
    """(content digest recomputed from the rows, has a search index, the ``meta`` rows) of a devices.db."""
    try:
        mode = os.stat(db).st_mode
    except FileNotFoundError:
        raise DatabasePathError(f"{db} does not exist", hint="run `diskq db build`") from None
    except OSError as exc:
        raise DatabasePathError(f"{db}: {exc.strerror or exc}", hint="run `diskq db build`") from None
    if not stat.S_ISREG(mode):
        raise DatabasePathError(f"{db} is {kind(mode)}, not a devices.db")
    try:
        con = sqlite3.connect(f"file:{Path(db).resolve()}?mode=ro", uri=True)
        try:
            meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
            return content_digest(con), _has_search_index(con), meta
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise DatabasePathError(f"{db} is not a readable devices.db: {exc}", hint="run `diskq db build`") from None
