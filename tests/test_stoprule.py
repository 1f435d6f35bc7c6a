"""The stop rule and the within-step trend (diskq.bench.stoprule), on their invariants and on the
recorded 20 s traces the replay in benchmarks/stop_rule.py reads."""

from __future__ import annotations

import doctest
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diskq.bench import stoprule
from diskq.bench.stoprule import StopRule, rule_iops, stop_second, trend_pct
from tests.conftest import FIXTURES

rates = st.lists(st.floats(min_value=1, max_value=1e6, allow_nan=False), min_size=2, max_size=25)
rules = st.builds(
    StopRule,
    width_pct=st.floats(min_value=0.1, max_value=50),
    floor_s=st.integers(2, 7),
    cap_s=st.just(7),
    ramp_s=st.integers(0, 2),
)


def test_the_docstring_examples_hold():
    assert doctest.testmod(stoprule).failed == 0


@given(rates, rules)
def test_a_step_ends_between_its_floor_and_its_cap(samples, rule):
    t = stop_second(samples, rule)
    available = len(samples) - rule.ramp_s
    assert t == min(rule.cap_s, available) or rule.floor_s <= t <= rule.cap_s
    assert t <= max(available, 0)


@given(st.floats(min_value=1, max_value=1e6), rules)
def test_a_steady_rate_ends_at_the_floor_with_its_own_figure(rate, rule):
    samples = [rate] * 20
    assert stop_second(samples, rule) == rule.floor_s
    assert rule_iops(samples, rule) == pytest.approx(rate)


@given(st.floats(min_value=100, max_value=1e5), st.floats(min_value=0.001, max_value=0.05), st.integers(3, 20))
def test_the_trend_of_a_straight_line_is_its_change_over_the_mean(start, step, n):
    line = [start * (1 - step * i) for i in range(n)]
    mean = sum(line) / n
    assert trend_pct(line) == pytest.approx((line[-1] - line[0]) / mean * 100, rel=1e-9)
    assert trend_pct(line) < 0 < trend_pct(line[::-1])


def test_a_bad_rule_is_refused():
    with pytest.raises(ValueError):
        StopRule(0)
    with pytest.raises(ValueError):
        StopRule(5, floor_s=8, cap_s=7)


def test_recorded_traces_replay_within_the_window():
    """Every recorded 20 s step: the rule never measures longer than the 7 s window it replaces."""
    traces = []
    for name in ("traces_20s.json", "traces_20s_quiet.json"):
        traces += [t["iops"] for t in json.loads((FIXTURES / "fio_iops_log" / name).read_text())["traces"]]
    assert len(traces) == 36
    for width in (2, 5, 10):
        lengths = [stop_second(t, StopRule(width)) for t in traces]
        assert all(3 <= x <= 7 for x in lengths)
    # a wider interval never takes longer
    wide = [stop_second(t, StopRule(10)) for t in traces]
    narrow = [stop_second(t, StopRule(2)) for t in traces]
    assert all(a <= b for a, b in zip(wide, narrow, strict=False)) and sum(wide) < sum(narrow)
