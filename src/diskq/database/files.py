"""The build's input and output paths: input read only from regular files, through
:mod:`diskq.files` (a FIFO under ``submissions/`` or ``--allowed-signers /dev/zero`` is refused,
never waited on); outputs must not be an existing directory or device."""

from __future__ import annotations

import os
import stat

from diskq import files
from diskq.errors import DatabaseError
from diskq.files import kind

__all__ = ["check_writable_target", "kind", "read_regular"]


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
