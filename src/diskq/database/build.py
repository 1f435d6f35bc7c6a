"""``diskq db build``: every submission file -> devices.db.

The build re-validates each file with the current code (in worker processes), writes its runs
and points as they arrive (:mod:`diskq.database.scan`), groups accepted submissions into devices, aggregates them
(:mod:`diskq.database.aggregate`), recomputes scaling and verdicts on the median curves
(:mod:`diskq.database.analysis`) and writes the tables defined by ``devices.sql`` (:mod:`diskq.database.schema`).

* Deterministic: files are read in sorted path order, every table is written in key order,
  nothing about the build itself (time, host, diskq version) goes into the tables. The
  ``content_digest`` in ``meta`` hashes the schema and every row (:mod:`diskq.database.digest`), so two builds of the same
  submissions have the same digest even if SQLite lays the file out differently, or could not
  build the search index at all (no trigram tokenizer).
* Atomic: the database is written to a temporary file next to the target and renamed over it.
* Invalid files are skipped, listed in the ``skipped`` table and returned in the report; the
  caller decides whether that is fatal (``--strict``).
* Optionally memoised (:mod:`diskq.database.memo`): answers of the validator and the analysis
  are reused for unchanged files and curves judged by unchanged code; the tables are the same.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from diskq.database import answers, device_rows, public
from diskq.database import sources as public_sources
from diskq.database.digest import content_digest, inspect_file
from diskq.database.files import TMP_SUFFIX, check_writable_target, remove_stale_temporaries, temporary_prefix
from diskq.database.memo import Memo, fingerprint, read_signers
from diskq.database.record import Skipped, SubmissionRecord
from diskq.database.scan import Workers, find_submission_files, read_into
from diskq.database.schema import SCHEMA_VERSION, insert_sql, schema_sql, trigram_supported
from diskq.errors import DatabaseError, DatabasePathError
from diskq.identity import store as identity_store
from diskq.submission.problems import one_line

#: SQLite page cache of the build: rows are inserted in file order, not key order, and a small
#: cache would re-read B-tree pages for almost every insert into a large database.
CACHE_KIB = 256 * 1024


@dataclass
class BuildReport:
    db: Path
    submissions: int = 0
    devices: int = 0
    skipped: list[Skipped] = field(default_factory=list)  # one entry per problem, several per file possible
    digest: str = ""
    fts: str = "none"
    allowed_signers: str = "none"  # or 'sha256:<hex>' of the allowed-signers file
    notes: list[str] = field(default_factory=list)  # worth saying, not an error
    public: dict[str, int] = field(default_factory=dict)  # public_sources, public_figures, public_models

    def skipped_files(self) -> dict[str, list[Skipped]]:
        """The problems of each skipped file, files in path order."""
        out: dict[str, list[Skipped]] = {}
        for s in sorted(self.skipped, key=lambda s: (s.path, s.field, s.message)):
            out.setdefault(s.path, []).append(s)
        return out


def repo_root() -> Path:
    """The source checkout this package runs from (schema/ and site/ live there)."""
    return Path(__file__).resolve().parents[3]


def _device_figures(item: tuple[str, list[SubmissionRecord], list[tuple[str, float]]], memo: Memo | None = None):
    """(device aggregate, memo key, new memo answer) for one device's submissions."""
    from diskq.database.aggregate import aggregate_device
    from diskq.database.analysis import analyse_device

    dev = aggregate_device(*item)
    return (dev, *analyse_device(dev, memo))


POINT_CONFLICT = (
    "UPDATE points SET conflict = ?, held = ? WHERE submission_id = ? AND run = ? AND numjobs = ? AND interrupted = 0"
)
RUN_SETTLED = (
    "UPDATE runs SET source_peak_final = ?, iops_1job = ?, max_iops = ?, peak_jobs = ?, p99_sync_us = ? "
    "WHERE submission_id = ? AND run = ?"
)
#: ``submissions.aggregated`` is written as 1 and cleared for the submissions of a device
#: measured with another method than the device's (known only once the device is complete).
NOT_AGGREGATED = (
    "UPDATE submissions SET aggregated = 0, excluded = 'measured with another method than most "
    "of this device''s submissions' WHERE device_id = ? AND NOT (method_id = ? AND method_version = ?)"
)
EXCLUDED = "UPDATE submissions SET aggregated = 0, excluded = ? WHERE id = ?"


def _table_key(dev):
    """Order of the table: drives before hosts, the main method class first, then by IOPS."""
    from diskq.analyse.methodclass import order
    from diskq.database.aggregate import rank_key

    return (dev.not_drive is not None, order(public.device_class(dev.method[0], dev.protocol).id), rank_key(dev))


def _write(
    con: sqlite3.Connection,
    files: list[Path],
    root: Path,
    allowed_signers: Path | None,
    jobs: int | None,
    report: BuildReport,
    fts: bool,
    memo: Memo | None,
    catalogue: public_sources.Catalogue | None = None,
    lines: list | None = None,
) -> None:
    from diskq.database.outliers import public_figures
    from diskq.database.settle import settle

    with Workers(jobs, len(files)) as workers:
        by_device, report.submissions = read_into(con, workers, files, root, allowed_signers, report.skipped, memo)
        point_updates, run_updates = settle([r for recs in by_device.values() for r in recs])
        con.executemany(POINT_CONFLICT, point_updates)
        con.executemany(RUN_SETTLED, run_updates)
        # the model's published figures (legacy rows of any firmware): evidence for every device of the model
        published: dict[str, list[tuple[str, float]]] = {}
        for recs in by_device.values():
            for pair in public_figures(recs):
                published.setdefault(recs[0].model_key, []).append(pair)
        items = [
            (dev_id, recs, sorted(published.get(recs[0].model_key, ()))) for dev_id, recs in sorted(by_device.items())
        ]
        devices = []
        for dev, key, answer in workers.map(functools.partial(_device_figures, memo=memo), items):
            devices.append(dev)
            if key is not None:
                memo.put(key, answer)
    for dev in devices:
        if any(rec.method != dev.method for rec in by_device[dev.id]):
            con.execute(NOT_AGGREGATED, (dev.id, *dev.method))
        con.executemany(EXCLUDED, [(why, sid) for sid, why in sorted(dev.excluded.items())])
    devices.sort(key=_table_key)  # hosts after drives, unranked
    catalogue = catalogue or public_sources.Catalogue()
    device_rows.write_devices(con, devices, fts, public.family_names(catalogue))
    public_counts = report.public = public.write(con, catalogue)
    public_counts["lines"] = identity_store.write(con, lines or [])
    answers.write_public(con)
    answers.write_lines(con)

    # names and messages as printed and stored: one line of printable text (a file name may hold
    # an ANSI escape or a newline)
    report.skipped = [Skipped(one_line(s.path), one_line(s.field), one_line(s.message)) for s in report.skipped]
    report.skipped.sort(key=lambda s: (s.path, s.field, s.message))
    con.executemany(insert_sql("skipped", 3), [(s.path, s.field, s.message) for s in report.skipped])
    report.devices = len(devices)
    created = [r.created for recs in by_device.values() for r in recs if r.created and not r.legacy]
    meta = {
        "schema_version": SCHEMA_VERSION,
        "submissions": str(report.submissions),
        "devices": str(report.devices),
        "skipped": str(len(report.skipped_files())),
        "fts": report.fts,
        "data_as_of": max(created, default=""),
        "allowed_signers": report.allowed_signers,
        **{k: str(v) for k, v in public_counts.items()},
    }
    con.executemany("INSERT INTO meta VALUES (?,?)", sorted(meta.items()))
    report.digest = content_digest(con)
    con.execute("INSERT INTO meta VALUES ('content_digest', ?)", (report.digest,))


def default_sources(submissions: Path) -> Path:
    """The public-figures catalogue beside the submissions directory (``sources/``)."""
    return Path(submissions).parent / "sources"


def build(
    submissions: Path,
    db: Path,
    *,
    allowed_signers: Path | None = None,
    jobs: int | None = None,
    memo: Path | None = None,
    sources: Path | None = None,
) -> BuildReport:
    """Build ``db`` from every submission under ``submissions``; replace it atomically.

    ``memo`` names a validation memo file (:mod:`diskq.database.memo`): files this exact code
    has already judged are not validated again. The result is the same with or without it.
    Unusable paths (``db`` or ``memo`` a directory, an allowed-signers file that is not a
    regular file, a directory that cannot be written) raise :class:`DatabaseError`.
    ``sources`` is the public-figures catalogue (default: ``sources/`` beside ``submissions``;
    absent or empty: no public figures); a malformed file in it raises
    :class:`~diskq.errors.SourcesError` before anything is written.
    """
    submissions, db = Path(submissions), Path(db)
    check_writable_target(db, "database")
    signers = "none"
    if allowed_signers is not None:  # refused here, before anything else reads it
        signers = "sha256:" + hashlib.sha256(read_signers(allowed_signers)).hexdigest()
    if memo is not None:
        check_writable_target(memo, "validation memo")
    memo_ = Memo(memo, fingerprint(allowed_signers)) if memo is not None else None
    files = find_submission_files(submissions)
    catalogue = public_sources.load(sources if sources is not None else default_sources(submissions))
    lines = identity_store.load_for_build(sources if sources is not None else default_sources(submissions), repo_root())
    fts = trigram_supported()
    report = BuildReport(db=db, fts="trigram" if fts else "none", allowed_signers=signers)
    try:
        db.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(db)
        fd, tmp = tempfile.mkstemp(prefix=temporary_prefix(db), suffix=TMP_SUFFIX, dir=db.parent)
        os.close(fd)
    except OSError as exc:
        raise DatabasePathError(
            f"cannot write {db}: {exc.strerror or exc}",
            hint="the database is written next to its final name: the directory must be writable",
        ) from None
    try:
        con = sqlite3.connect(tmp, isolation_level=None)
        try:
            con.execute("PRAGMA journal_mode = OFF")
            con.execute("PRAGMA synchronous = OFF")
            con.execute(f"PRAGMA cache_size = -{CACHE_KIB}")  # points arrive in path order, not key order
            con.executescript(schema_sql(trigram=fts))
            con.execute("BEGIN")
            if memo_ is not None:
                memo_.open_for_writing()
            _write(con, files, submissions, allowed_signers, jobs, report, fts, memo_, catalogue, lines)
            if fts:
                con.execute("INSERT INTO devices_fts (devices_fts) VALUES ('rebuild')")
            broken = con.execute("PRAGMA foreign_key_check").fetchall()
            if broken:  # a defect of the build, never the submissions' fault: no file is written
                raise DatabaseError(f"the build broke {len(broken)} foreign key(s), first {tuple(broken[0])}")
            con.execute("COMMIT")
            if memo_ is not None:
                memo_.close()
            con.execute("PRAGMA journal_mode = DELETE")
        finally:
            con.close()
            if memo_ is not None:
                memo_.abandon()
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, db)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, (OSError, sqlite3.Error)):
            raise DatabaseError(f"cannot write {db}: {getattr(exc, 'strerror', None) or exc}") from None
        raise
    return report


def check(
    submissions: Path,
    db: Path,
    *,
    allowed_signers: Path | None = None,
    jobs: int | None = None,
    memo: Path | None = None,
    sources: Path | None = None,
) -> BuildReport:
    """Raise :class:`DatabaseError` unless ``db`` holds exactly what a build would write now.

    Whether this SQLite can build the search index does not matter: a file without the index
    holds the same content. ``meta.fts`` must say whether the file has it; when it has not and a
    build here would add it, the report's notes say so. ``report.fts`` is that of ``db``.
    ``meta.content_digest`` (what the site and ``devices.json`` show) must be the digest the rows
    give: a file whose rows are current but whose stored digest is not is out of date too."""
    committed, indexed, meta = inspect_file(db)
    fts = "trigram" if indexed else "none"
    marker = meta.get("fts")
    if marker != fts:
        raise DatabaseError(
            f"{db} is out of date (meta.fts is {marker!r}, but the file has {'a' if indexed else 'no'} search index)",
            hint="run `diskq db build` and commit devices.db",
        )
    with tempfile.TemporaryDirectory(prefix="diskq-db-check-") as tmp:
        report = build(
            submissions,
            Path(tmp) / "devices.db",
            allowed_signers=allowed_signers,
            jobs=jobs,
            memo=memo,
            sources=sources if sources is not None else default_sources(submissions),
        )
    if committed != report.digest:
        raise DatabaseError(
            f"{db} is out of date (content digest {committed[:12]}, the submissions give {report.digest[:12]})",
            hint="run `diskq db build` and commit devices.db",
        )
    stored = meta.get("content_digest")
    if stored != committed:
        raise DatabaseError(
            f"{db} is out of date (its rows are current, but meta.content_digest is {str(stored)[:12]!r}, "
            f"not {committed[:12]})",
            hint="run `diskq db build` and commit devices.db",
        )
    if not indexed and report.fts == "trigram":
        report.notes.append(
            f"{db} has no search index (it was built where SQLite lacks the trigram tokenizer): "
            "lookups scan every device; `diskq db build` here would add the index"
        )
    report.db, report.fts = Path(db), fts
    return report
