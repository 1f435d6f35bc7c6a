"""The guard around a switched write cache: journaled before the first change, always put back.

:class:`CacheGuard` switches a write cache through :mod:`diskq.probe.cache`, records the state to
come back to in the restore journal (:mod:`diskq.probe.journal`) first, and restores it on every
way out of its block (normal end, exception, SIGINT, SIGTERM, SIGHUP).
"""

from __future__ import annotations

from typing import Literal

from diskq import signals
from diskq.errors import CacheError, DiskqError
from diskq.probe.cache import CacheControl, read_state, set_state
from diskq.probe.journal import Journal


class CacheGuard:
    """Context manager that switches a write cache and always puts the original state back.

    Before the first change the original state goes into the journal (fsynced), so even a
    SIGKILL or a power loss leaves a record for ``diskq restore``. On leaving the block (normal
    end, exception, Ctrl-C) the original state is set again, read back, and the journal entry
    removed. While the guard is active SIGINT, SIGTERM and SIGHUP raise
    :class:`~diskq.errors.Interrupted` (:func:`diskq.signals.interruptible`), so they take the
    same path; a signal that arrives while the cache is being switched or restored waits until
    that is done (:func:`diskq.signals.critical`).

        with CacheGuard(cache.detect("/dev/sdb", protocol="ata")) as guard:
            guard.set("off")
            run_sweep()
    """

    def __init__(self, control: CacheControl, journal: Journal | None = None):
        if journal is None:
            journal = Journal()
        self.control = control
        self.journal = journal
        self.original: str | None = None
        self._scope = signals.interruptible()

    def __enter__(self) -> CacheGuard:
        self._scope.__enter__()
        return self

    def set(self, state: Literal["on", "off"]) -> None:
        """Switch to ``state``; the first call journals the state to come back to."""
        if self.original is None:
            if not self.control.can_toggle:
                raise CacheError(
                    f"cannot switch the write cache of {self.control.device}: {self.control.reason}",
                    hint="run with --cache keep",
                )
            now = read_state(self.control)
            if now == "unknown":
                raise CacheError(
                    f"the write cache state of {self.control.device} cannot be read, so it could not be restored"
                )
            with signals.critical():
                entry = self.journal.record(self.control, now)
                # An entry left by a killed run holds the real original; the device may still be switched.
                self.original = entry.original
        with signals.critical():
            set_state(self.control, state)

    def restore(self) -> None:
        """Put the original state back (verified) and drop the journal entry. Idempotent.

        A signal that arrives meanwhile is held until the restore is done. If the restore
        fails, :class:`CacheError` says so and the journal entry stays for ``diskq restore``.
        """
        if self.original is None:
            return
        with signals.critical():
            try:
                set_state(self.control, self.original)  # type: ignore[arg-type]
            except DiskqError as err:
                raise CacheError(
                    f"could not restore the write cache of {self.control.device} to {self.original}: {err.message}",
                    hint="the original state is kept in the journal: run `diskq restore`",
                ) from err
            self.journal.remove(self.control)
            self.original = None

    def __exit__(self, exc_type, exc, tb) -> bool:
        try:
            self.restore()
        finally:
            self._scope.__exit__(None, None, None)
        return False
