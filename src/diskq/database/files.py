"""Reading the build's input files without trusting what the paths name.

A path under ``submissions/`` or given as ``--allowed-signers`` may be a FIFO (reading it waits
for a writer forever), a device (``/dev/zero`` never ends), a directory or a huge file. Only
regular files are read, never more than a limit: the path is checked before it is opened, opened
without blocking (a FIFO that appeared in between does not wait for a writer) and checked again
on the open descriptor.
"""

from __future__ import annotations

import os
import stat

from diskq.errors import DatabaseError

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISLNK, "a symbolic link"),
)


def kind(mode: int) -> str:
    """``'a directory'``, ``'a FIFO'``, ... for a file mode that is not a regular file."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _refuse_irregular(mode: int, size: int, max_bytes: int) -> None:
    if not stat.S_ISREG(mode):
        raise DatabaseError(f"is {kind(mode)}, not a regular file")
    if size > max_bytes:
        raise DatabaseError(f"file is {size} bytes, more than the {max_bytes} allowed")


def read_regular(path, max_bytes: int, *, follow_symlinks: bool = False) -> bytes:
    """The bytes of the regular file ``path`` (at most ``max_bytes``).

    Raises :class:`DatabaseError` with a message that does not repeat the path (callers put it
    in front): not a regular file, too large, or the operating system's reason it cannot be read.
    """
    try:
        st = os.stat(path, follow_symlinks=follow_symlinks)
        _refuse_irregular(st.st_mode, st.st_size, max_bytes)
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_symlinks else os.O_NOFOLLOW)
        fd = os.open(path, flags)
        try:
            st = os.fstat(fd)
            _refuse_irregular(st.st_mode, st.st_size, max_bytes)
            chunks, total = [], 0
            while total <= max_bytes:
                chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
        finally:
            os.close(fd)
    except OSError as exc:
        raise DatabaseError(f"cannot read: {exc.strerror or exc}") from None
    if total > max_bytes:
        raise DatabaseError(f"file is more than the {max_bytes} bytes allowed")
    return b"".join(chunks)


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
