"""The build's input and output paths: input read only from regular files, through
:mod:`diskq.files` (a FIFO under ``submissions/`` or ``--allowed-signers /dev/zero`` is refused,
never waited on); outputs must not be an existing directory or device."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from diskq import files
from diskq.errors import DatabaseError
from diskq.files import kind

__all__ = ["TMP_SUFFIX", "check_writable_target", "kind", "read_regular", "remove_stale_temporaries"]


def read_regular(path, max_bytes: int, *, follow_symlinks: bool = False) -> bytes:
    """:func:`diskq.files.read_regular`, its refusals as :class:`DatabaseError` (message without
    the path: callers put it in front)."""
    try:
        return files.read_regular(path, max_bytes, follow_symlinks=follow_symlinks)
    except files.UnreadableFile as exc:
        raise DatabaseError(exc.message) from None


def check_writable_target(path, what: str) -> None:
    """Refuse a target path that exists and is not a regular file (a directory, a device ...)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise DatabaseError(f"{what} {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise DatabaseError(f"{what} {path} is {kind(st.st_mode)}, not a regular file")


#: Temporary files of a build (the database, new memo entries) are named
#: ``.<final name>.<pid of the build>.<random>.tmp`` next to their final name.
TMP_SUFFIX = ".tmp"


def remove_stale_temporaries(db: Path) -> list[Path]:
    """Delete temporary files that builds of ``db`` (a database or a memo) killed before they
    finished left behind.

    A temporary file names the process that wrote it; it is removed only when that process is
    gone (a build still running, here or in another shell, keeps its file).
    """
    removed = []
    prefix = f".{db.name}."
    try:
        names = os.listdir(db.parent)
    except OSError:
        return removed
    for name in names:
        if not (name.startswith(prefix) and name.endswith(TMP_SUFFIX)):
            continue
        pid = name[len(prefix):].split(".", 1)[0]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        path = db.parent / name
        try:
            if path.is_file() and not path.is_symlink():
                path.unlink()
                removed.append(path)
        except OSError:
            pass
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists but belongs to someone else
        return True
    return True
