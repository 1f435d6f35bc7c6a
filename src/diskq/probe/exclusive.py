"""Holding a block device for the bench: an ``O_EXCL`` descriptor kept open until the end.

Once the safety checks pass, :func:`claim_exclusive` keeps an ``O_EXCL`` descriptor open until
the bench ends (on the target, on its whole disk when the disk's write cache is switched, and on
its aliases), so nothing can claim the device meanwhile.
"""

from __future__ import annotations

import os

from diskq.errors import UnsafeTarget
from diskq.probe.inuse import IN_USE_HINT, _open_exclusive


class ExclusiveClaim:
    """An ``O_EXCL`` descriptor on a block device, held from the safety check to the end of the
    bench. While it is open the kernel refuses every other exclusive open (mount, mkfs, swapon,
    LVM, md, another diskq) with EBUSY; plain opens, such as fio's, still work. A claim on a
    whole disk also keeps every partition of it from being claimed.

        with claim_exclusive("/dev/sdb"):
            run_the_bench()
    """

    def __init__(self, path: str, fd: int, others: list[int] | None = None):
        self.path = path
        self._fd: int | None = fd
        self._others = list(others or [])

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Close the descriptors; idempotent."""
        fd, self._fd = self._fd, None
        others, self._others = self._others, []
        for each in [fd, *others]:
            if each is not None:
                os.close(each)

    def __enter__(self) -> ExclusiveClaim:
        return self

    def __exit__(self, *exc) -> bool:
        self.release()
        return False


def claim_exclusive(path: str, *, target: str | None = None, also: list[str] | None = None) -> ExclusiveClaim:
    """Open ``path`` with ``O_EXCL`` and keep it open; :class:`UnsafeTarget` when it is in use.

    ``target`` is the partition being benched when ``path`` is its whole disk (claimed because
    the disk's write cache will be switched): a refusal then names the partition the user asked
    for, says that its disk is the one in use, and points at ``--cache keep``. ``also`` names
    other devices (the target's aliases, see :func:`exclusive_aliases`) claimed with it.
    """
    fd, why = _open_exclusive(path)
    if fd is not None and also:
        others: list[int] = []
        for node in also:
            other, busy = _open_exclusive(node)
            if other is None:
                for each in [fd, *others]:
                    os.close(each)
                raise UnsafeTarget(
                    f"refusing to write to {target or path}: the same storage is in use under another name",
                    [busy or f"{node} is busy"],
                    hint=IN_USE_HINT,
                )
            others.append(other)
        return ExclusiveClaim(path, fd, others)
    if fd is None:
        if target is not None and target != path:
            raise UnsafeTarget(
                f"refusing to switch the write cache for {target}: it belongs to the whole disk {path}, "
                "which is in use",
                [why or "busy"],
                hint="run with --cache keep to measure the partition with the cache as it is "
                "(only the partition is then claimed), or stop what uses the disk first",
            )
        raise UnsafeTarget(f"refusing to write to {path}: it is in use", [why or "busy"], hint=IN_USE_HINT)
    return ExclusiveClaim(path, fd)
