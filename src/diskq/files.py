"""Reading files named by strangers: submissions, allowed-signers files, paths on a command line.

A path may name a FIFO (reading it waits for a writer forever), a device (``/dev/zero`` never
ends), a directory, a symbolic link or a huge file. :func:`read_regular` reads regular files
only, never more than a limit: the path is checked before it is opened, opened without blocking
(a FIFO that appeared in between does not wait for a writer) and checked again on the open
descriptor. Its errors carry what the caller needs to word them its own way.
"""

from __future__ import annotations

import errno
import os
import stat

from diskq.errors import DiskqError

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


class UnreadableFile(DiskqError):
    """A file that is not read; the message does not repeat the path (callers put it in front)."""


class NotRegularFile(UnreadableFile):
    def __init__(self, mode: int):
        super().__init__(f"is {kind(mode)}, not a regular file")
        self.mode = mode


class FileTooLarge(UnreadableFile):
    def __init__(self, max_bytes: int, size: int | None = None):
        said = (
            f"file is {size} bytes, more than the {max_bytes} allowed"
            if size is not None
            else f"file is more than the {max_bytes} bytes allowed"
        )
        super().__init__(said)
        self.max_bytes = max_bytes


def _check(st: os.stat_result, max_bytes: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile(st.st_mode)
    if st.st_size > max_bytes:
        raise FileTooLarge(max_bytes, st.st_size)


def read_regular(path, max_bytes: int, *, follow_symlinks: bool = False) -> bytes:
    """The bytes of the regular file ``path`` (at most ``max_bytes``).

    Raises :class:`NotRegularFile` (a symbolic link too, unless ``follow_symlinks``),
    :class:`FileTooLarge`, or :class:`UnreadableFile` with the operating system's reason.
    """
    try:
        _check(os.stat(path, follow_symlinks=follow_symlinks), max_bytes)
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_symlinks else os.O_NOFOLLOW)
        fd = os.open(path, flags)
        try:
            _check(os.fstat(fd), max_bytes)
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
        if exc.errno == errno.ELOOP and not follow_symlinks:  # replaced by a link since the check
            raise NotRegularFile(stat.S_IFLNK) from None
        raise UnreadableFile(f"cannot read: {exc.strerror or exc}") from None
    if total > max_bytes:
        raise FileTooLarge(max_bytes)
    return b"".join(chunks)
