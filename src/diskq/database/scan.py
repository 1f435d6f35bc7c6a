"""Reading the submission files of a build: each file's record (:mod:`diskq.database.extract`,
in worker processes when there are many, answered from the validation memo when this code has
judged the file before), its rows written to the submission tables in batches as they arrive,
a duplicate of measured figures resolved by the stronger claim, and the accepted records grouped
by device for aggregation.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sqlite3
from pathlib import Path

from diskq.database import sustained
from diskq.database.extract import read_file, read_submission
from diskq.database.memo import Memo
from diskq.database.readahead import THREADS, ReadAhead
from diskq.database.record import Skipped, SubmissionRecord, decode, encode
from diskq.database.schema import insert_sql
from diskq.errors import DatabaseError, DatabasePathError
from diskq.submission import duplicates, paths

#: Below this many files the build does not start worker processes.
PARALLEL_THRESHOLD = 200
SUBMISSION_INSERT = insert_sql("submissions", 27)
RUN_INSERT = insert_sql("runs", 12)
POINT_INSERT = insert_sql("points", 13)
SIZE_INSERT = insert_sql("size_points", 13)
SUSTAINED_INSERT = insert_sql("sustained", len(sustained.COLUMNS))
#: Accepted files whose rows are collected before they go to SQLite in one executemany each.
INSERT_BATCH = 500


def find_submission_files(root: Path) -> list[Path]:
    """Every ``*.json`` under ``root`` as :func:`diskq.submission.paths.find_files` lists them
    (sorted, hidden entries left out, links to directories not followed)."""
    if not root.is_dir():
        raise DatabasePathError(f"submissions directory not found: {root}")
    return paths.find_files(root)[0]


class Workers:
    """map() in worker processes when there is enough work, in this process otherwise."""

    def __init__(self, jobs: int | None, work: int):
        self.jobs = jobs or os.cpu_count() or 1
        self.pool = None
        if self.jobs > 1 and work >= PARALLEL_THRESHOLD:
            import multiprocessing

            self.pool = multiprocessing.get_context("fork").Pool(self.jobs)

    def map(self, fn, items: list):
        if self.pool is None:
            return map(fn, items)
        chunk = max(1, min(256, len(items) // (self.jobs * 8)))
        return self.pool.imap(fn, items, chunksize=chunk)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()


def _read_one(path: Path, *, root: Path, allowed_signers: Path | None, memo: Memo | None):
    """(record, problems, memo key, new memo answer or None) for one file."""
    if memo is None:
        return (*read_submission(path, root, allowed_signers), None, None)
    try:
        data = read_file(path)  # no symlink, FIFO or device: read_submission says why
        key = memo.key(hashlib.sha256(data).hexdigest(), path.relative_to(root).as_posix())
    except (DatabaseError, ValueError):
        return (*read_submission(path, root, allowed_signers), None, None)
    known = memo.get(key)
    if known is not None:
        return (*decode(known), key, None)
    record, problems = read_submission(path, root, allowed_signers, data=data)  # read once
    return record, problems, key, encode(record, problems)


class _Rows:
    """Rows of the submissions, runs and points tables, written in batches."""

    def __init__(self, con: sqlite3.Connection):
        self.con = con
        self.submissions: list[tuple] = []
        self.runs: list[tuple] = []
        self.points: list[tuple] = []
        self.sizes: list[tuple] = []
        self.sustained: list[tuple] = []

    def add(self, record: SubmissionRecord) -> None:
        row = record.row
        self.submissions.append((*row[:18], 1, *row[18:], None))
        self.runs += record.run_rows
        self.points += record.point_rows
        self.sizes += record.size_rows
        self.sustained += record.sustained_rows
        if len(self.submissions) >= INSERT_BATCH:
            self.flush()

    def flush(self) -> None:
        self.con.executemany(SUBMISSION_INSERT, self.submissions)
        self.con.executemany(RUN_INSERT, self.runs)
        self.con.executemany(POINT_INSERT, self.points)
        self.con.executemany(SIZE_INSERT, self.sizes)
        self.con.executemany(SUSTAINED_INSERT, self.sustained)
        self.submissions, self.runs, self.points, self.sizes, self.sustained = [], [], [], [], []


#: Tables holding a submission's rows, each with its column naming the submission.
_SUBMISSION_TABLES = (
    ("submissions", "id"),
    ("runs", "submission_id"),
    ("points", "submission_id"),
    ("size_points", "submission_id"),
    ("sustained", "submission_id"),
)


def _drop(con: sqlite3.Connection, submission_id: str) -> None:
    """Remove every row written for one submission (a duplicate that a stronger claim displaced)."""
    for table, column in _SUBMISSION_TABLES:
        con.execute(f"DELETE FROM {table} WHERE {column} = ?", (submission_id,))  # noqa: S608 (fixed names)


class _History:
    """A claim with the commit that added its file (:mod:`diskq.submission.history`), the history
    read once, at the first duplicate (a build without duplicates never runs git)."""

    def __init__(self, root: Path):
        self.root = root
        self.entries: dict | None = None
        self.read = False

    def __call__(self, claim: duplicates.Claim) -> duplicates.Claim:
        from dataclasses import replace

        from diskq.submission import history

        if not self.read:
            self.entries, self.read = history.entries(self.root), True
        entry = (self.entries or {}).get(claim.path)
        return replace(claim, entered=None if entry is None else (entry.position, entry.describe()))


def read_into(
    con: sqlite3.Connection,
    workers: Workers,
    files: list[Path],
    root: Path,
    allowed_signers: Path | None,
    skipped: list[Skipped],
    memo: Memo | None,
) -> tuple[dict[str, list[SubmissionRecord]], int]:
    """Read every file (in path order), write its rows, group accepted ones by device. Returns those
    groups and how many submissions were accepted; what was not accepted goes to ``skipped``."""
    reader = functools.partial(_read_one, root=root, allowed_signers=allowed_signers, memo=memo)
    by_device: dict[str, list[SubmissionRecord]] = {}
    seen: dict[str, str] = {}
    # figures digest -> the claim that stands for it so far and its record (whatever model it names)
    figures: dict[str, tuple[duplicates.Claim, SubmissionRecord]] = {}
    rows = _Rows(con)
    entered = _History(root)
    with ReadAhead(files, threads=THREADS if len(files) >= PARALLEL_THRESHOLD else 0) as ahead:
        for record, problems, key, answer in workers.map(reader, files):
            ahead.taken()
            if key is not None:
                memo.put(key, answer)
            if record is None:
                skipped.extend(problems)
                continue
            path = record.row[2]
            if record.id in seen:
                first = seen[record.id]
                skipped.append(Skipped(path, "id", f"duplicate submission id {record.id!r}, first in {first}"))
                continue
            mine = duplicates.Claim(path, record.signature, record.legacy, record.created)
            held = figures.get(record.figures_digest)
            if held is not None:  # which file entered the repository first decides before the signed date
                claim, other = held
                mine, claim = entered(mine), entered(claim)
                if claim.key() <= mine.key():
                    skipped.append(Skipped(path, "result.runs", duplicates.duplicate_message(claim, mine)))
                    continue
                # the newcomer has the stronger claim: the file held so far gives way, whatever its path
                rows.flush()
                _drop(con, other.id)
                by_device[other.device_id].remove(other)
                if not by_device[other.device_id]:
                    del by_device[other.device_id]
                del seen[other.id]
                skipped.append(Skipped(claim.path, "result.runs", duplicates.duplicate_message(mine, claim)))
            figures[record.figures_digest] = (mine, record)
            seen[record.id] = path
            rows.add(record)
            # written; keep what aggregation needs
            record.row, record.run_rows, record.point_rows, record.size_rows, record.sustained_rows = (), [], [], [], []
            by_device.setdefault(record.device_id, []).append(record)
    rows.flush()
    return by_device, len(seen)
