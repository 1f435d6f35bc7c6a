"""The sustained-write cliff detector (diskq.analyse.cliff): a pure function of the samples."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from diskq.analyse import criteria
from diskq.analyse.cliff import EXACT_MAX, find_cliff

RULES = criteria.section("sustained")


def test_criteria_section_is_there_and_sane():
    assert 0 < RULES["drop_pct"] < 100
    assert RULES["min_before_s"] > 0 and RULES["min_after_s"] > 0
    assert len(RULES["justification"].split()) >= 30


@given(
    level=st.floats(1e6, 5e9),
    before_n=st.integers(8, 300),
    after_n=st.integers(12, 300),
    drop=st.floats(0.4, 0.95),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_step_down_is_found_where_it_is(level, before_n, after_n, drop, seed):
    rng = random.Random(seed)
    after_level = level * (1 - drop)
    samples = [level] * before_n + [after_level] * after_n
    samples = [v * (1 + rng.uniform(-0.05, 0.05)) for v in samples]
    cliff = find_cliff(samples, 1000)
    assert cliff.found, cliff.reasons
    assert abs(cliff.at_s - before_n) <= 1
    assert abs(cliff.drop_pct - drop * 100) <= 6  # 5 % noise either side of two medians
    expected_bytes = sum(samples[:before_n])
    assert abs(cliff.at_bytes - expected_bytes) <= level * 1.05 + 1
    assert cliff.before_bw_bytes > cliff.after_bw_bytes


@given(
    level=st.floats(1e5, 5e9),
    band=st.floats(0.0, 0.12),
    shares=st.lists(st.floats(-1.0, 1.0), min_size=0, max_size=900),
)
def test_a_flat_noisy_series_is_never_a_cliff(level, band, shares):
    # any order, even adversarial: samples within +-12 % of a level never fall 25 % in median
    samples = [level * (1 + band * s) for s in shares]
    cliff = find_cliff(samples, 1000)
    assert not cliff.found
    assert cliff.at_s is None and cliff.at_bytes is None and cliff.drop_pct is None
    assert cliff.reasons


@given(stalls=st.sets(st.integers(0, 119), max_size=8))
def test_a_few_stalled_seconds_are_no_cliff(stalls):
    samples = [400e6 if i not in stalls else 0.0 for i in range(120)]
    assert not find_cliff(samples, 1000).found


def test_a_dip_that_recovers_is_no_cliff():
    samples = [400e6] * 40 + [100e6] * 15 + [400e6] * 40
    assert not find_cliff(samples, 1000).found


def test_a_fall_at_the_very_start_or_too_short_at_the_end_is_no_cliff():
    # the cache was full before the write began: nothing to fall from
    assert not find_cliff([400e6] * 3 + [100e6] * 60, 1000).found
    # a fall in the last seconds has not lasted long enough to tell it from a pause
    assert not find_cliff([400e6] * 60 + [100e6] * 5, 1000).found


def test_too_few_samples_says_so():
    cliff = find_cliff([1e6] * 5, 1000)
    assert not cliff.found and "too few" in cliff.reasons[0]


def test_interval_scales_time_and_bytes():
    samples = [800e6] * 20 + [200e6] * 40  # half-second samples
    cliff = find_cliff(samples, 500)
    assert cliff.found and cliff.at_s == 10.0 and cliff.at_bytes == 8_000_000_000


def test_long_series_are_refined_to_the_sample():
    n_before, n_after = 3 * EXACT_MAX + 7, 2 * EXACT_MAX
    samples = [(500e6 if i % 2 else 520e6) for i in range(n_before)] + [90e6] * n_after
    cliff = find_cliff(samples, 1000)
    assert cliff.found and cliff.at_s == n_before


def test_all_zero_before_is_no_cliff():
    cliff = find_cliff([0.0] * 60, 1000)
    assert not cliff.found and cliff.reasons


@given(samples=st.lists(st.floats(0, 1e300), max_size=200), interval=st.integers(1, 10**7))
def test_any_series_gives_an_answer_with_reasons(samples, interval):
    cliff = find_cliff(samples, interval)
    assert cliff.reasons
    if cliff.found:
        assert 0 < cliff.at_s and cliff.after_bw_bytes < cliff.before_bw_bytes
        assert cliff.drop_pct >= RULES["drop_pct"]
