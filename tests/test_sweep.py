"""The adaptive numjobs search, driven by synthetic curves (no fio)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings, strategies as st

from diskq.bench import sweep
from diskq.errors import InvalidInput
from diskq.result import Latency, Point


def curve(fn):
    calls = []

    def measure(n):
        calls.append(n)
        return Point(numjobs=n, iops=fn(n), bw_bytes=fn(n) * 4096, total_ios=1, runtime_ms=1, lat_us=Latency())

    return measure, calls


def usl(lam, sigma, kappa):
    return lambda n: lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def test_doubling_sequence():
    assert sweep.doubling_sequence(32) == [1, 2, 4, 8, 16, 32]
    assert sweep.doubling_sequence(12) == [1, 2, 4, 8, 12]
    assert sweep.doubling_sequence(1) == [1]
    with pytest.raises(InvalidInput):
        sweep.doubling_sequence(0)


def test_linear_curve_runs_to_max_jobs():
    measure, calls = curve(lambda n: 1000.0 * n)
    points = sweep.Search(measure, 32).run()
    assert [p.numjobs for p in points] == [1, 2, 4, 8, 16, 32]
    assert sweep.peak_of(points).numjobs == 32
    assert len(calls) == len(set(calls))


def test_regressing_from_one_job_stops_at_two():
    # Pliant LB206S from the community table: 1: 5028, 2: 2651, ...
    table = {1: 5028, 2: 2651, 3: 2000, 4: 1500}
    measure, calls = curve(lambda n: table.get(n, 700))
    s = sweep.Search(measure, 32)
    s.run()
    assert calls == [1, 2]
    assert "fell" in s.stop_reason
    assert sweep.peak_of(s.ordered()).numjobs == 1


def test_peak_between_doublings_is_refined():
    # USL curve with its maximum at N = sqrt((1 - sigma) / kappa) ~ 12.2
    f = usl(1000, 0.02, 0.0066)
    n_max = math.sqrt((1 - 0.02) / 0.0066)
    measure, calls = curve(f)
    points = sweep.Search(measure, 32, refine_budget=4).run()
    peak = sweep.peak_of(points)
    assert abs(peak.numjobs - n_max) <= 2
    assert max(calls) <= 32
    assert len(calls) <= sweep.max_steps(32, 4)


def test_max_jobs_is_respected():
    measure, calls = curve(lambda n: 1000.0 * n)
    sweep.Search(measure, 5).run()
    assert max(calls) == 5


def test_points_survive_an_interruption():
    class Stop(Exception):
        pass

    def measure(n):
        if n == 4:
            raise Stop
        return Point(numjobs=n, iops=100.0 * n, bw_bytes=0, total_ios=1, runtime_ms=1, lat_us=Latency())

    s = sweep.Search(measure, 32)
    with pytest.raises(Stop):
        s.run()
    assert [p.numjobs for p in s.ordered()] == [1, 2]


@settings(max_examples=200, deadline=None)
@given(
    lam=st.floats(10, 1e6),
    sigma=st.floats(0, 1),
    kappa=st.floats(0, 0.5),
    max_jobs=st.integers(1, 128),
    budget=st.integers(0, 6),
)
def test_search_invariants(lam, sigma, kappa, max_jobs, budget):
    measure, calls = curve(usl(lam, sigma, kappa))
    points = sweep.Search(measure, max_jobs, refine_budget=budget).run()
    assert calls[0] == 1
    assert len(calls) == len(set(calls)), "no numjobs is measured twice"
    assert all(1 <= n <= max_jobs for n in calls)
    assert len(calls) <= sweep.max_steps(max_jobs, budget)
    assert [p.numjobs for p in points] == sorted(calls)
    peak = sweep.peak_of(points)
    assert peak.iops == max(p.iops for p in points)
