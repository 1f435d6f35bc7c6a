"""A memo of validation results, so that rebuilding devices.db does not re-prove what this exact
code has already proved about these exact bytes.

Validating a submission (canonical JSON for its id, fio figures, signature) costs milliseconds;
a database of 100 000 submissions would spend minutes on it at every build although almost all
files are unchanged. The memo maps (SHA-256 of the file, its path, :func:`fingerprint`) to the
validator's answer. The fingerprint covers the source of every module that judges a file or a
device (:func:`judging_modules`: everything the validator, the aggregation and the analysis
import, at any depth), the package's data files, the allowed-signers file and the versions of
Python and pydantic, so any change of the code that judges a file, or of whom it trusts, starts
from an empty memo: the build still re-validates every submission with the current code, it
only does not do so twice. A change to code that judges nothing (the command line, bench,
probes, the site) keeps every answer.

The memo is a cache file outside the repository; deleting it is always safe.

During a build the worker processes read the memo while the building process collects new
answers. New answers go to a temporary file next to the memo, merged in when the build ends:
readers of a database that another process is writing a large transaction into pay for it on
every lookup (with the writer in the same file, a cold build of 10 000 submissions took twice as
long as without a memo).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import sys
import tempfile
from pathlib import Path

from diskq.database.files import (
    TMP_SUFFIX,
    check_writable_target,
    read_regular,
    remove_stale_temporaries,
    temporary_prefix,
)
from diskq.errors import DatabaseError, DatabasePathError

#: An allowed-signers file holds one line per key; a few thousand keys fit well below this.
MAX_SIGNERS_BYTES = 4 * 1024 * 1024

#: A rowid table: answers (a few KiB each) stay on their own pages, not on an overflow page each as
#: in a table keyed by ``key`` alone.
TABLE = "verdict (key TEXT PRIMARY KEY, answer TEXT NOT NULL)"
SCHEMA = f"CREATE TABLE IF NOT EXISTS {TABLE}"


def default_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "diskq" / "validated.sqlite"


#: Where judging starts: one file (extract -> validate), one device (aggregate, analysis), and the
#: memo's own layout of an answer.
JUDGES = ("diskq.database.extract", "diskq.database.aggregate", "diskq.database.analysis", "diskq.database.memo")


def fingerprint(allowed_signers: Path | None) -> str:
    """Hash of everything a validation answer depends on besides the file itself."""
    import pydantic

    h = hashlib.sha256(f"{sys.version}\0{pydantic.VERSION}\0".encode())
    pkg = _package_dir()
    data = [p for p in pkg.rglob("*") if p.suffix in (".toml", ".json") and p.is_file()]
    for path in sorted([*judging_modules().values(), *data]):
        h.update(path.relative_to(pkg).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    if allowed_signers is not None:
        h.update(b"signers\0" + read_signers(allowed_signers))
    return h.hexdigest()


def _package_dir() -> Path:
    import diskq

    return Path(diskq.__file__).resolve().parent


def judging_modules(roots: tuple[str, ...] = JUDGES) -> dict[str, Path]:
    """Module name -> source file of every diskq module that ``roots`` import, directly or
    through others, with the packages they sit in.

    Read from the source, not from what happens to be imported: every ``import`` statement
    counts, also one inside a function that has not run yet. diskq imports its own modules by
    name only (a test checks that judging loads nothing outside this set).
    """
    pkg = _package_dir()
    sources = {_module_name(pkg, p): p for p in pkg.rglob("*.py")}
    found: dict[str, Path] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in found or name not in sources:
            continue
        found[name] = sources[name]
        todo += _imported(name, sources[name], sources)
    return found


def _module_name(pkg: Path, path: Path) -> str:
    parts = [pkg.name, *path.relative_to(pkg).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _statements(body: list):
    """Every statement in ``body`` and in the blocks nested in it (an import is a statement:
    expressions need not be visited, which is most of a module's tree)."""
    for node in body:
        yield node
        for block in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, block, None)
            if isinstance(inner, list):
                yield from _statements(inner)


def _imported(name: str, path: Path, sources: dict[str, Path]) -> list[str]:
    """diskq modules and packages that the module ``name`` imports anywhere in its source."""
    import ast

    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    named: list[str] = []
    for node in _statements(ast.parse(path.read_bytes(), str(path)).body):
        if isinstance(node, ast.Import):
            named += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(here[: len(here) - node.level + 1] + ([base] if base else []))
            named += [base] + [f"{base}.{alias.name}" for alias in node.names]  # a name may be a module
    out = []
    for full in named:
        parts = full.split(".")
        out += [m for m in (".".join(parts[:i]) for i in range(1, len(parts) + 1)) if m in sources]
    return out


def read_signers(path: Path) -> bytes:
    """The allowed-signers file's bytes; a FIFO, a device, a directory or a huge file is refused."""
    try:
        return read_regular(path, MAX_SIGNERS_BYTES, follow_symlinks=True)
    except DatabaseError as exc:
        raise DatabasePathError(
            f"allowed signers file {path}: {exc.message}",
            hint="give an ssh allowed_signers file (see ssh-keygen(1), ALLOWED SIGNERS)",
        ) from None


class Memo:
    """The memo file for one fingerprint. Workers call :meth:`get` (each process opens its own
    read-only connection); the building process calls :meth:`put` and finally :meth:`close`,
    which adds the new answers and drops every entry this build did not use (files gone, older
    code)."""

    def __init__(self, path: Path, fingerprint: str):
        self.path = Path(path)
        self.fingerprint = fingerprint
        self._reader: tuple[int, sqlite3.Connection | None] | None = None
        self._writer: sqlite3.Connection | None = None
        self._fresh: sqlite3.Connection | None = None  # the new answers, in a temporary file
        self._fresh_path: Path | None = None
        self._used: list[str] = []

    def __getstate__(self):  # what worker processes get: no connections, no bookkeeping
        return {"path": self.path, "fingerprint": self.fingerprint}

    def __setstate__(self, state):
        self.__init__(state["path"], state["fingerprint"])

    def key(self, sha256: str, rel_path: str) -> str:
        return hashlib.sha256(f"{self.fingerprint}\0{rel_path}\0{sha256}".encode()).hexdigest()

    def get(self, key: str) -> str | None:
        if self._reader is None or self._reader[0] != os.getpid():
            try:
                con = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
                con.execute("SELECT 1 FROM verdict LIMIT 1")
            except sqlite3.Error:
                con = None
            self._reader = (os.getpid(), con)
        con = self._reader[1]
        if con is None:
            return None
        row = con.execute("SELECT answer FROM verdict WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def open_for_writing(self) -> None:
        """Create the memo if need be, and the temporary file that collects new answers."""
        check_writable_target(self.path, "validation memo")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = sqlite3.connect(self.path, isolation_level=None)
            self._writer.execute("PRAGMA journal_mode = WAL")  # another build may read it meanwhile
            found = self._writer.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'verdict'"
            ).fetchone()
            if found is not None and found[0] != f"CREATE TABLE {TABLE}":
                self._writer.execute("DROP TABLE verdict")  # laid out by another version: start afresh
            self._writer.execute(SCHEMA)
            remove_stale_temporaries(self.path)
            fd, tmp = tempfile.mkstemp(prefix=temporary_prefix(self.path), suffix=TMP_SUFFIX, dir=self.path.parent)
            os.close(fd)
            self._fresh_path = Path(tmp)
            self._fresh = sqlite3.connect(tmp, isolation_level=None)
            self._fresh.execute("PRAGMA journal_mode = OFF")  # scratch: a failed build deletes it
            self._fresh.execute("PRAGMA synchronous = OFF")
            self._fresh.execute(SCHEMA)
            self._fresh.execute("BEGIN")
        except (OSError, sqlite3.Error) as exc:
            self.abandon()
            raise DatabasePathError(
                f"cannot open the validation memo {self.path}: {_reason(exc)}",
                hint="give another --memo FILE, or --no-memo",
            ) from None

    def put(self, key: str, answer: str | None) -> None:
        """Remember ``answer`` (None: the entry already exists) and mark ``key`` as used."""
        self._used.append(key)
        if answer is not None and self._fresh is not None:
            self._fresh.execute("INSERT OR REPLACE INTO verdict VALUES (?, ?)", (key, answer))

    def close(self) -> None:
        """Add the new answers to the memo and forget the entries this build did not use."""
        if self._writer is None:
            return
        con, fresh = self._writer, self._fresh
        try:
            if fresh is not None:
                fresh.execute("COMMIT")
                fresh.close()
                self._fresh = None
                con.execute("ATTACH DATABASE ? AS fresh", (str(self._fresh_path),))
            con.execute("BEGIN")
            if fresh is not None:
                con.execute("INSERT OR REPLACE INTO main.verdict SELECT key, answer FROM fresh.verdict")
            con.execute("CREATE TEMP TABLE used (key TEXT PRIMARY KEY) WITHOUT ROWID")
            con.executemany("INSERT OR IGNORE INTO used VALUES (?)", ((k,) for k in self._used))
            con.execute("DELETE FROM main.verdict WHERE key NOT IN (SELECT key FROM used)")
            con.execute("COMMIT")
            if fresh is not None:
                con.execute("DETACH DATABASE fresh")
            free, pages = (
                con.execute("PRAGMA freelist_count").fetchone()[0],
                con.execute("PRAGMA page_count").fetchone()[0],
            )
            if free > pages // 2:  # mostly answers of older code: give the space back
                con.execute("VACUUM")
            con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as exc:
            raise DatabaseError(
                f"cannot update the validation memo {self.path}: {_reason(exc)}",
                hint="delete it, or build with --no-memo",
            ) from None
        finally:
            self.abandon()

    def abandon(self) -> None:
        """Close without adding anything (the build failed); the temporary file is deleted."""
        for con in (self._fresh, self._writer):
            if con is not None:
                con.close()
        self._fresh = self._writer = None
        if self._fresh_path is not None:
            self._fresh_path.unlink(missing_ok=True)
            self._fresh_path = None


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc)
