"""Flush honesty check: sync vs no-sync IOPS at 1 job, judged only when a volatile cache is on."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diskq.analyse import criteria, flush
from diskq.analyse.model import FlushCheck
from diskq.errors import InvalidInput

THRESHOLD = criteria.section("flush")["suspicious_ratio"]


def test_consumer_drive_with_cache_on_pays_for_its_flushes():
    """A drive that really drains its cache: fdatasync cuts the rate to a few per cent."""
    c = flush.check(900, 30000, cache_state="on", volatile_write_cache=True)
    assert c.honest is True and c.warning is None
    assert c.ratio == pytest.approx(0.03)
    assert c.threshold == THRESHOLD


def test_free_flushes_with_volatile_cache_on_warn():
    c = flush.check(9500, 11000, cache_state="on", volatile_write_cache=True)
    assert c.honest is False
    assert c.warning is not None and "may not be honoured" in c.warning
    assert "9500" in c.warning and "11000" in c.warning
    assert "\n" not in c.warning


def test_unknown_volatile_cache_flag_still_judged_when_cache_is_on():
    assert flush.check(9500, 11000, cache_state="on", volatile_write_cache=None).honest is False


def test_sync_faster_than_nosync_counts_as_free():
    """Run-to-run noise can put the sync step above the plain one; the flush is then clearly free."""
    c = flush.check(12000, 11000, cache_state="on", volatile_write_cache=True)
    assert c.honest is False and c.ratio > 1


@pytest.mark.parametrize(
    "cache_state, volatile, note",
    [
        ("off", True, "cache is off"),
        ("on", False, "no volatile write cache"),
        ("unknown", True, "unknown"),
        ("unknown", None, "unknown"),
    ],
)
def test_check_does_not_apply_without_a_volatile_cache_on(cache_state, volatile, note):
    c = flush.check(9500, 11000, cache_state=cache_state, volatile_write_cache=volatile)
    assert c.honest is None and c.warning is None
    assert any(note in n for n in c.notes)


def test_nothing_measured_cannot_tell():
    c = flush.check(900, 0, cache_state="on", volatile_write_cache=True)
    assert c.ratio is None and c.honest is None and c.warning is None
    c = flush.check(0, 900, cache_state="on", volatile_write_cache=True)
    assert c.honest is None


@pytest.mark.parametrize(
    "sync, nosync, state",
    [(-1, 10, "on"), (float("nan"), 10, "on"), (10, float("inf"), "on"), (10, 10, "write back"), ("10", 10, "on")],
)
def test_bad_input_is_a_clear_error(sync, nosync, state):
    with pytest.raises(InvalidInput):
        flush.check(sync, nosync, cache_state=state, volatile_write_cache=True)


@settings(max_examples=200)
@given(
    st.floats(0, 1e7),
    st.floats(0, 1e7),
    st.sampled_from(["on", "off", "unknown"]),
    st.sampled_from([True, False, None]),
)
def test_warns_exactly_when_a_volatile_cache_is_on_and_the_flush_is_nearly_free(sync, nosync, state, vwc):
    c = flush.check(sync, nosync, cache_state=state, volatile_write_cache=vwc)
    applies = state == "on" and vwc is not False and sync > 0 and nosync > 0 and c.ratio is not None
    if not applies:
        assert c.honest is None and c.warning is None
        return
    assert c.ratio == pytest.approx(sync / nosync)
    assert (c.warning is not None) == (c.honest is False)
    assert c.honest == (round(sync / nosync, 9) < THRESHOLD)
    assert FlushCheck.model_validate_json(c.model_dump_json()) == c
