"""Reading submission files ahead of the validators, so that a cold page cache costs a queue of
reads rather than one wait per file.

``db build`` validates files in path order, each worker reading one file at a time. When the
files are not in the page cache (a fresh boot, a large tree, a busy machine), every read waits
for the disk while that worker does nothing else. :class:`ReadAhead` keeps up to ``ahead``
files ahead of the build asking the kernel to start reading them (``posix_fadvise`` with
``WILLNEED``: the call returns at once, the reads go on in the background), from a couple of
threads because opening a file may itself wait for its inode.

Only the page cache is touched: nothing is read into Python, no file is judged here, and a
file that cannot be opened is left to the validator to report. Where ``posix_fadvise`` does
not exist the class does nothing.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

#: How many files may be asked for ahead of the last one the build has taken in (about 20 KiB
#: each for diskq's own submissions: tens of MiB of page cache at most).
AHEAD = 2048
THREADS = 2
_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _warm(path: Path) -> None:
    """Ask the kernel to read ``path`` into the page cache; never blocks on a FIFO or follows a link."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError:
        return
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
    except OSError:
        pass
    finally:
        os.close(fd)


class ReadAhead:
    """Warm ``files`` in order, never more than ``ahead`` past the number :meth:`taken` has
    counted. Use as a context manager; leaving it stops the threads."""

    def __init__(self, files: list[Path], *, ahead: int = AHEAD, threads: int = THREADS):
        self.files = files
        self.room = threading.Semaphore(ahead)
        self.lock = threading.Lock()
        self.next = 0
        self.stopped = False
        self.threads = [
            threading.Thread(target=self._run, name="diskq-readahead", daemon=True)
            for _ in range(threads if hasattr(os, "posix_fadvise") else 0)
        ]

    def _run(self) -> None:
        while True:
            self.room.acquire()
            with self.lock:
                if self.stopped or self.next >= len(self.files):
                    return
                path = self.files[self.next]
                self.next += 1
            _warm(path)

    def taken(self) -> None:
        """The build has taken in one more file: one more may be asked for."""
        self.room.release()

    def __enter__(self) -> ReadAhead:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc) -> None:
        with self.lock:
            self.stopped = True
        for _ in self.threads:
            self.room.release()
        for t in self.threads:
            t.join()
