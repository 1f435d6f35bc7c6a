"""Running diskq's CLI in-process and reading a built database, for the tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from diskq.cli import main


def cli(*args: str) -> int:
    """Run diskq as the console script does; return its exit status."""
    try:
        main(list(args))
    except SystemExit as exc:
        return exc.code or 0
    return 0


def rows(db: Path, sql: str, *args) -> list[dict]:
    """The rows of a query on a database file, as dicts."""
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute(sql, args)]
    finally:
        con.close()
