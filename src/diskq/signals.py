"""SIGINT, SIGTERM and SIGHUP while diskq works on a device: an orderly stop, never half a change.

Inside :func:`interruptible` the first of these signals raises
:class:`~diskq.errors.Interrupted` in the main thread, wherever it is (fio is then stopped by
:mod:`diskq.proc`, partial results are kept and every changed setting is restored). Inside a
:func:`critical` section (switching or restoring a write cache, removing a test file, writing the
result) the signal is held and raised when the outermost critical section ends, so a setting is
never left half changed and a restore is never cut short. Later signals are ignored: the cleanup
that follows the first one cannot itself be interrupted. A scope opened with ``final=True`` (the
command that ends the process) keeps ignoring them after it ends, once a stop has begun: the
document is written, the cache restored and the exit status (130) decided by then, and a second
Ctrl-C or a ``kill`` during the exit must not turn that into a death by signal.

Signal masks are not used for this: Python runs every handler in the main thread, whichever
thread the kernel delivered the signal to, and other threads (the progress display's refresh
thread) do not share the main thread's mask.

``Interrupted`` is not a :class:`~diskq.errors.DiskqError`, so the best-effort probes, which turn
domain errors into notes, cannot swallow it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

from diskq.errors import Interrupted

WATCHED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class _Gate:
    def __init__(self) -> None:
        self.scopes = 0
        self.critical = 0
        self.fired: int | None = None
        self.raised = False
        self.saved: dict[int, object] = {}
        self.final = False

    def handler(self, signum: int, _frame) -> None:
        if self.fired is not None:
            return
        self.fired = signum
        if self.critical == 0:
            self.raised = True
            raise Interrupted(signum)


_gate = _Gate()


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def interruptible(*, final: bool = False) -> Iterator[None]:
    """Turn SIGINT, SIGTERM and SIGHUP into :class:`Interrupted` for the duration of the block.

    Re-entrant: nested scopes share one set of handlers, installed by the outermost and put
    back when it ends. With ``final`` (for a command whose end is the end of the process), if a
    signal stopped the scope, the signals stay ignored instead: the stop's outcome is settled.
    Outside the main thread (where handlers cannot be installed) it does nothing.
    """
    if not _main_thread():
        yield
        return
    if _gate.scopes == 0:
        _gate.fired, _gate.raised, _gate.final = None, False, False
        _gate.saved = {s: signal.signal(s, _gate.handler) for s in WATCHED}
    _gate.final = _gate.final or final
    _gate.scopes += 1
    try:
        yield
    finally:
        _gate.scopes -= 1
        if _gate.scopes == 0:
            settled = _gate.final and _gate.fired is not None
            for s, h in _gate.saved.items():
                signal.signal(s, signal.SIG_IGN if settled else h)  # type: ignore[arg-type]
            _gate.saved = {}


@contextlib.contextmanager
def critical() -> Iterator[None]:
    """Hold a signal until the block is done; then raise the :class:`Interrupted` it deferred.

    When the block itself raises, that exception goes on unchanged (the deferred signal is
    raised by the next critical section to end, or is moot because the run is ending anyway).
    """
    _gate.critical += 1
    try:
        yield
    finally:
        _gate.critical -= 1
    if _gate.critical == 0 and _gate.fired is not None and not _gate.raised and _gate.scopes > 0:
        _gate.raised = True
        raise Interrupted(_gate.fired)


def received() -> int | None:
    """The signal that stopped (or is about to stop) the current scope, if any."""
    return _gate.fired
