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


def test_regressing_from_one_job_stops_after_a_confirming_step():
    # Pliant LB206S from the community table: 1: 5028, 2: 2651, ...
    table = {1: 5028, 2: 2651, 3: 2000, 4: 1500}
    measure, calls = curve(lambda n: table.get(n, 700))
    s = sweep.Search(measure, 32)
    s.run()
    assert calls == [1, 2, 4]  # 2 jobs fell; 4 jobs confirmed it; no gap of more than 1 next to 1
    assert s.stop_reason == "IOPS fell at 2 and 4 jobs (-47.3 %, -70.2 % vs 1)"
    assert sweep.peak_of(s.ordered()).numjobs == 1


def test_without_patience_the_first_fall_stops_the_search():
    table = {1: 5028, 2: 2651, 4: 1500}
    measure, calls = curve(lambda n: table.get(n, 700))
    s = sweep.Search(measure, 32, patience=0)
    s.run()
    assert calls == [1, 2]
    assert s.stop_reason == "IOPS fell at 2 jobs (-47.3 % vs 1)"


def test_one_noisy_step_does_not_end_the_search():
    # a linear drive whose 4-job step hit a host stall (recorded on a loop device: 35-57 % dips)
    measure, calls = curve(lambda n: 1000.0 * n * (0.45 if n == 4 else 1.0))
    s = sweep.Search(measure, 32)
    points = s.run()
    assert [p.numjobs for p in points] == [1, 2, 4, 8, 16, 32]
    assert sweep.peak_of(points).numjobs == 32
    assert s.stop_reason == "reached --max-jobs 32 with IOPS still rising"


def test_two_flat_steps_end_the_search_and_the_peak_is_refined():
    # saturates at 8 jobs: 16 and 32 do not rise by 5 %, then the search refines between 4 and 16
    measure, calls = curve(lambda n: 1000.0 * min(n, 8) * (1 - 0.002 * max(0, n - 8)))
    s = sweep.Search(measure, 32)
    s.run()
    assert calls[:6] == [1, 2, 4, 8, 16, 32]
    assert s.stop_reason.startswith("IOPS fell at 16 and 32 jobs")
    assert set(calls[6:]) <= {6, 12, 5, 7, 9, 10, 11, 13, 14, 15} and len(calls) <= 9
    assert sweep.peak_of(s.ordered()).numjobs == 8


def test_a_miss_at_max_jobs_is_refined():
    # the second-to-last step is the best, the last does not rise: max_jobs ends the doubling
    table = {1: 100, 2: 200, 4: 400, 8: 800, 16: 1600, 32: 1500, 24: 1700, 20: 1650, 28: 1600}
    measure, calls = curve(lambda n: table.get(n, 1000))
    s = sweep.Search(measure, 32)
    s.run()
    assert calls[:6] == [1, 2, 4, 8, 16, 32]
    assert s.stop_reason == "IOPS fell at 32 jobs (-6.2 % vs 16), then --max-jobs 32 was reached"
    assert 24 in calls and sweep.peak_of(s.ordered()).numjobs == 24


def test_negative_patience_is_refused():
    measure, _ = curve(lambda n: 1.0)
    with pytest.raises(InvalidInput):
        sweep.Search(measure, 4, patience=-1)


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
    patience=st.integers(0, 3),
)
def test_search_invariants(lam, sigma, kappa, max_jobs, budget, patience):
    measure, calls = curve(usl(lam, sigma, kappa))
    points = sweep.Search(measure, max_jobs, refine_budget=budget, patience=patience).run()
    assert calls[0] == 1
    assert len(calls) == len(set(calls)), "no numjobs is measured twice"
    assert all(1 <= n <= max_jobs for n in calls)
    assert len(calls) <= sweep.max_steps(max_jobs, budget)
    assert [p.numjobs for p in points] == sorted(calls)
    peak = sweep.peak_of(points)
    assert peak.iops == max(p.iops for p in points)


@settings(max_examples=200, deadline=None)
@given(
    lam=st.floats(10, 1e6),
    dipped=st.sampled_from([2, 4, 8, 16]),
    factor=st.floats(0.05, 1.0),
)
def test_a_single_low_step_never_moves_the_peak_of_a_rising_curve(lam, dipped, factor):
    measure, calls = curve(lambda n: lam * n * (factor if n == dipped else 1.0))
    points = sweep.Search(measure, 32).run()
    assert sweep.peak_of(points).numjobs == 32
    assert calls == [1, 2, 4, 8, 16, 32]


def _with_spread(fn, spread):
    """Points as fio reports them: IOPS plus the spread of its samples within the step."""
    calls = []

    def measure(n):
        calls.append(n)
        iops = fn(n)
        raw = {"jobs": [{"write": {"iops": iops, "iops_mean": iops, "iops_stddev": spread * iops, "iops_samples": 40}}]}
        return Point(numjobs=n, iops=iops, bw_bytes=iops * 4096, total_ios=1, runtime_ms=1, lat_us=Latency(), fio=raw)

    return measure, calls


# a loop device over a busy disk, as recorded by benchmarks/qualification_time.py: two low steps
# in a row at 2 and 4 jobs, yet the device peaks at 32
NOISY = {1: 2094, 2: 1500, 4: 1800, 8: 5703, 16: 9586, 32: 17462}


def test_a_noisy_device_gets_every_doubling_measured():
    measure, calls = _with_spread(NOISY.__getitem__, 0.35)
    s = sweep.Search(measure, 32)
    points = s.run()
    assert calls == [1, 2, 4, 8, 16, 32]
    assert sweep.peak_of(points).numjobs == 32
    assert s.notes == ["one job's IOPS varied by 35% within its step (more than 20%): too noisy to stop early, "
                       "every doubling up to --max-jobs 32 measured"]


def test_a_steady_device_with_the_same_curve_stops_early():
    measure, calls = _with_spread(NOISY.__getitem__, 0.01)
    s = sweep.Search(measure, 32)
    s.run()
    assert calls == [1, 2, 4] and s.notes == []
    assert s.stop_reason == "IOPS fell at 2 and 4 jobs (-28.4 %, -14.0 % vs 1)"


def test_a_noisy_device_still_gets_its_turned_peak_refined():
    curve = {1: 1000, 2: 2000, 4: 4000, 8: 8000, 16: 6000, 32: 3000, 6: 7000, 12: 9000, 10: 8500, 14: 7500}
    measure, calls = _with_spread(lambda n: curve.get(n, 100), 0.5)
    s = sweep.Search(measure, 32)
    s.run()
    assert calls[:6] == [1, 2, 4, 8, 16, 32] and 12 in calls[6:]
    assert s.stop_reason == "IOPS fell at 16 and 32 jobs (-25.0 %, -62.5 % vs 8), then --max-jobs 32 was reached"
    assert sweep.peak_of(s.ordered()).numjobs == 12
