"""diskq.signals: the first SIGINT/SIGTERM/SIGHUP stops a run, but never inside a critical section."""

from __future__ import annotations

import os
import signal

import pytest

from diskq import signals
from diskq.errors import DiskqError, Interrupted


def _send(sig: int) -> None:
    os.kill(os.getpid(), sig)  # handlers run in the main thread before os.kill returns to Python


@pytest.mark.parametrize("sig", signals.WATCHED)
def test_a_signal_inside_the_scope_raises_interrupted(sig):
    with pytest.raises(Interrupted) as info:
        with signals.interruptible():
            _send(sig)
            pytest.fail("the signal did not interrupt")
    assert info.value.signum == sig and info.value.exit_code == 130
    assert info.value.message == f"interrupted by {signal.Signals(sig).name}"


def test_interrupted_is_not_a_domain_error():
    # best-effort probes turn DiskqError into notes; they must not be able to swallow a stop
    assert not issubclass(Interrupted, DiskqError) and not issubclass(Interrupted, Exception)
    with pytest.raises(Interrupted):
        with signals.interruptible():
            try:
                _send(signal.SIGINT)
            except (DiskqError, Exception):  # what a probe catches
                pytest.fail("swallowed")


def test_a_critical_section_holds_the_signal_until_it_is_done():
    done = []
    with pytest.raises(Interrupted) as info:
        with signals.interruptible():
            with signals.critical():
                _send(signal.SIGTERM)
                done.append("switched")
                with signals.critical():  # nested: still held
                    done.append("read back")
                done.append("journal")
            pytest.fail("the held signal was not raised when the critical section ended")
    assert done == ["switched", "read back", "journal"]
    assert info.value.signum == signal.SIGTERM


def test_repeated_signals_are_ignored_so_cleanup_runs_to_the_end():
    cleaned = []
    with pytest.raises(Interrupted):
        with signals.interruptible():
            try:
                _send(signal.SIGINT)
            finally:
                _send(signal.SIGTERM)  # a second Ctrl-C / kill during cleanup
                _send(signal.SIGINT)
                cleaned.append(True)
    assert cleaned == [True]


def test_an_error_inside_a_critical_section_is_not_replaced_by_the_signal():
    class Boom(DiskqError):
        pass

    with pytest.raises(Boom):
        with signals.interruptible():
            with signals.critical():
                _send(signal.SIGHUP)
                raise Boom("restore failed")
    assert signals.received() == signal.SIGHUP


def test_scopes_nest_and_put_the_previous_handlers_back():
    before = {s: signal.getsignal(s) for s in signals.WATCHED}
    with signals.interruptible():
        inner = {s: signal.getsignal(s) for s in signals.WATCHED}
        with signals.interruptible():
            assert {s: signal.getsignal(s) for s in signals.WATCHED} == inner
        assert {s: signal.getsignal(s) for s in signals.WATCHED} == inner  # inner exit keeps them
    assert {s: signal.getsignal(s) for s in signals.WATCHED} == before


def test_a_new_scope_starts_clean_after_an_interrupted_one():
    with pytest.raises(Interrupted):
        with signals.interruptible():
            _send(signal.SIGINT)
    with pytest.raises(Interrupted) as info:
        with signals.interruptible():
            _send(signal.SIGTERM)
    assert info.value.signum == signal.SIGTERM


def test_a_final_scope_keeps_ignoring_signals_once_a_stop_has_begun():
    before = {s: signal.getsignal(s) for s in signals.WATCHED}
    try:
        with pytest.raises(Interrupted):
            with signals.interruptible(final=True):
                with signals.interruptible():  # nested scopes do not undo the outer's choice
                    _send(signal.SIGINT)
        assert all(signal.getsignal(s) == signal.SIG_IGN for s in signals.WATCHED)
        _send(signal.SIGTERM)  # the exit that follows is not turned into a death by signal
    finally:
        for s, h in before.items():
            signal.signal(s, h)
    with signals.interruptible(final=True):  # no signal came: the handlers go back as they were
        pass
    assert {s: signal.getsignal(s) for s in signals.WATCHED} == before
