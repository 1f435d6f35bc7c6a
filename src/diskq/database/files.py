"""The build's input and output paths: input read only from regular files, through
:mod:`diskq.files` (a FIFO under ``submissions/`` or ``--allowed-signers /dev/zero`` is refused,
never waited on); outputs must not be an existing directory or device."""

from __future__ import annotations

import os
import re
import shutil
import stat
from pathlib import Path

from diskq import files
from diskq.errors import DatabaseError, DatabasePathError
from diskq.files import kind

__all__ = [
    "TMP_SUFFIX",
    "check_writable_target",
    "kind",
    "read_regular",
    "remove_stale_temporaries",
    "temporary_prefix",
]


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
        raise DatabasePathError(f"{what} {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise DatabasePathError(f"{what} {path} is {kind(st.st_mode)}, not a regular file")


#: Temporary files of a build (the database, new memo entries) and temporary directories of a
#: site build are named ``.<final name>.<pid of the build>.<random>.tmp`` next to their final
#: name: :func:`temporary_prefix` + random + :data:`TMP_SUFFIX`.
TMP_SUFFIX = ".tmp"


def temporary_prefix(target: Path) -> str:
    """``.<name of target>.<pid of this process>.``: the start of this process' temporaries."""
    return f".{target.name}.{os.getpid()}."


def remove_stale_temporaries(target: Path, *, directories: bool = False) -> list[Path]:
    """Delete the temporaries that builds of ``target`` (a database, a memo, a site) killed before
    they finished left behind: regular files, or with ``directories`` directories (with all they
    hold; a symbolic link in them is removed, never followed).

    A temporary names the process that wrote it; it is removed only when that process is gone (a
    build still running, here or in another shell, keeps its own). Only names of exactly that
    form count (an ASCII pid with no leading zero, a random part of ``a-z 0-9 _``), and only of
    the kind asked for: a symbolic link, a FIFO or the other kind is never touched.
    """
    removed = []
    pattern = re.compile(rf"\.{re.escape(target.name)}\.([1-9][0-9]*)\.[a-z0-9_]+{re.escape(TMP_SUFFIX)}")
    try:
        names = os.listdir(target.parent)
    except OSError:
        return removed
    for name in names:
        match = pattern.fullmatch(name)
        if match is None or not _gone(int(match[1])):
            continue
        path = target.parent / name
        try:
            mode = os.lstat(path).st_mode
            if directories and stat.S_ISDIR(mode):
                shutil.rmtree(path)  # refuses a directory swapped for a link meanwhile
            elif not directories and stat.S_ISREG(mode):
                path.unlink()
            else:
                continue
            removed.append(path)
        except OSError:
            pass
    return removed


def _gone(pid: int) -> bool:
    """True only when no process has the id ``pid`` (one of another user's counts as there)."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):  # another user's, or beyond any process id
        return False
    return False
