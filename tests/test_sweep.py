"""The adaptive numjobs search, driven by synthetic curves (no fio)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    # said from the final points: every step measured above the refined peak, each against it
    above = sorted(n for n in calls if n > 8)
    assert s.stop_reason.startswith(f"IOPS fell at {', '.join(map(str, above[:-1]))} and 32 jobs (")
    assert s.stop_reason.endswith(" vs 8)")
    assert set(calls[6:]) <= {6, 12, 5, 7, 9, 10, 11, 13, 14, 15} and len(calls) <= 9
    assert sweep.peak_of(s.ordered()).numjobs == 8


def test_a_miss_at_max_jobs_is_refined():
    # the second-to-last step is the best, the last does not rise: max_jobs ends the doubling
    table = {1: 100, 2: 200, 4: 400, 8: 800, 16: 1600, 32: 1500, 24: 1700, 20: 1650, 28: 1600}
    measure, calls = curve(lambda n: table.get(n, 1000))
    s = sweep.Search(measure, 32)
    s.run()
    assert calls[:6] == [1, 2, 4, 8, 16, 32]
    # the refinement found 24: the sentence names the table's peak, not the 16 the doubling turned at
    assert s.stop_reason == "IOPS fell at 32 jobs (-11.8 % vs 24), then --max-jobs 32 was reached"
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
    assert s.notes == [
        "one job's IOPS varied by 35% within its step (more than 20%): too noisy to stop early, "
        "every doubling up to --max-jobs 32 measured"
    ]


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
    assert s.stop_reason == "IOPS fell at 16 and 32 jobs (-33.3 %, -66.7 % vs 12), then --max-jobs 32 was reached"
    assert sweep.peak_of(s.ordered()).numjobs == 12


# --- confirmation of the points the document answers with ---------------------------------


def _device(nav: dict[int, float], full: dict[int, float], early: set[int] | None = None):
    """A device whose navigation steps read ``nav`` (ending early at the numjobs in ``early``,
    all by default) and whose confirmation steps read ``full``; every call is logged."""
    log: list[tuple[str, int]] = []

    def point(n, iops, ended_early, seconds):
        return Point(
            numjobs=n,
            iops=iops,
            bw_bytes=iops * 4096,
            total_ios=int(iops * seconds),
            runtime_ms=int(seconds * 1000),
            lat_us=Latency(),
            steady_state=ended_early,
        )

    def measure(n):
        log.append(("measure", n))
        e = early is None or n in early
        return point(n, nav[n], e, 5.0 if e else 20.0)

    def confirm(n):
        log.append(("confirm", n))
        return point(n, full[n], False, 20.0)

    return measure, confirm, log


RISING = [1, 2, 4, 8, 16, 32]


def test_the_one_job_step_is_measured_with_the_confirmation_detector_only():
    nav = {n: 1000.0 * n for n in RISING}
    measure, confirm, log = _device(nav, dict(nav))
    sweep.Search(measure, 32, confirm=confirm).run()
    assert ("measure", 1) not in log and log[0] == ("confirm", 1)


def test_an_early_ended_peak_is_measured_again_and_replaced():
    nav = {**{n: 1000.0 * n for n in RISING}, 32: 15000.0}
    full = {**nav, 16: 18000.0}  # the early step read 16 000, the longer one 18 000
    measure, confirm, log = _device(nav, full)
    s = sweep.Search(measure, 32, confirm=confirm, refine_budget=0)
    points = s.run()
    assert log[-1] == ("confirm", 16) and log.count(("confirm", 16)) == 1
    assert sweep.peak_of(points).iops == 18000.0
    assert s.replaced[16].iops == 16000.0 and s.replaced[16].steady_state is True
    assert [p.numjobs for p in points] == RISING  # replaced, not added
    assert any(n.startswith("peak confirmed at 16 jobs") and "16,000 IOPS after 5.0 s" in n for n in s.notes)


def test_a_curve_still_rising_at_the_last_doubling_measures_it_once_with_the_longer_window():
    nav = {n: 1000.0 * n for n in RISING}
    full = {**nav, 32: 36000.0}
    measure, confirm, log = _device(nav, full)
    s = sweep.Search(measure, 32, confirm=confirm)
    points = s.run()
    assert ("measure", 32) not in log and log.count(("confirm", 32)) == 1 and log[-1] == ("confirm", 32)
    assert sweep.peak_of(points).iops == 36000.0 and s.replaced == {}
    assert [c for c in log if c[0] == "confirm"] == [("confirm", 1), ("confirm", 32)]


def test_a_curve_that_fell_before_the_last_doubling_measures_it_as_a_short_step():
    nav = {1: 1000.0, 2: 2000.0, 4: 4000.0, 8: 3000.0, 16: 2500.0, 32: 2000.0}
    measure, confirm, log = _device(nav, dict(nav))
    sweep.Search(measure, 32, confirm=confirm, refine_budget=0, patience=5).run()
    assert ("measure", 32) in log and ("confirm", 32) not in log


def test_the_points_the_osd_count_turns_on_are_confirmed_like_the_peak():
    from diskq.analyse import osds

    nav = {1: 600.0, 2: 700.0, 4: 800.0, 8: 900.0, 16: 950.0, 32: 1000.0}
    full = {**nav, 2: 640.0, 4: 1400.0}  # confirmed: 2 jobs get 320 each, 4 jobs 350 each
    measure, confirm, log = _device(nav, full)
    s = sweep.Search(measure, 32, confirm=confirm, decisive=lambda curve: osds.deciding(curve, 315))
    points = s.run()
    assert {2, 4, 8} <= s.confirmed  # 2 and 4 first; then 4 passes, so 8 decides and is confirmed
    share = osds.osds_per_device([(p.numjobs, p.iops) for p in points], 315)
    assert share.n == 4
    assert any(n.startswith("point deciding the OSD count confirmed at 2 jobs") for n in s.notes)


def test_without_a_verdict_boundary_only_the_peak_is_confirmed():
    nav = {1: 600.0, 2: 700.0, 4: 800.0, 8: 900.0, 16: 950.0, 32: 1000.0}
    measure, confirm, log = _device(nav, dict(nav))
    s = sweep.Search(measure, 32, confirm=confirm)
    s.run()
    assert s.confirmed == {1, 32}


def test_a_peak_that_ran_its_full_length_is_not_measured_again():
    nav = {**{n: 1000.0 * n for n in RISING}, 32: 12000.0}
    measure, confirm, log = _device(nav, dict(nav), early={2, 4, 8, 32})
    s = sweep.Search(measure, 32, confirm=confirm, refine_budget=0)
    s.run()
    # 32 jobs: measured with the longer window at once (every step before it rose); 16 ran full length
    assert [c for c in log if c[0] == "confirm"] == [("confirm", 1), ("confirm", 32)]
    assert s.replaced == {}


def test_when_the_confirmed_peak_reads_lower_the_next_best_early_step_is_confirmed():
    nav = {1: 1000.0, 2: 2000.0, 4: 3000.0, 8: 5000.0, 16: 9000.0, 32: 9200.0}
    full = {1: 1000.0, 2: 2000.0, 4: 3000.0, 8: 5000.0, 16: 9100.0, 32: 8000.0}
    measure, confirm, log = _device(nav, full)
    s = sweep.Search(measure, 32, confirm=confirm, refine_budget=0)
    points = s.run()
    assert [c for c in log if c[0] == "confirm"] == [("confirm", 1), ("confirm", 32), ("confirm", 16)]
    assert sweep.peak_of(points).numjobs == 16 and sweep.peak_of(points).iops == 9100.0


def test_the_confirmation_budget_is_respected_and_an_unconfirmed_peak_is_said():
    nav = {1: 1000.0, 2: 2000.0, 4: 3000.0, 8: 8800.0, 16: 9000.0, 32: 9200.0}
    full = {1: 1000.0, 2: 2000.0, 4: 3000.0, 8: 8800.0, 16: 7000.0, 32: 7000.0}
    measure, confirm, log = _device(nav, full)
    s = sweep.Search(measure, 32, confirm=confirm, refine_budget=0, confirm_budget=1, gain=0.0)
    s.run()
    # 32 jobs is measured with the longer window at once; the budget covers re-measurements (16)
    assert [c for c in log if c[0] == "confirm"] == [("confirm", 1), ("confirm", 32), ("confirm", 16)]
    assert any("8 jobs, was measured with the short window only" in n for n in s.notes)


def test_an_interrupted_confirmation_keeps_the_early_point():
    class Stop(Exception):
        pass

    nav = {**{n: 1000.0 * n for n in RISING}, 32: 15000.0}
    measure, confirm, _ = _device(nav, dict(nav))

    def interrupted(n):
        if n == 16:
            raise Stop
        return confirm(n)

    s = sweep.Search(measure, 32, confirm=interrupted, refine_budget=0)
    with pytest.raises(Stop):
        s.run()
    assert s.points[16].iops == 16000.0 and s.points[16].steady_state is True


@settings(max_examples=200, deadline=None)
@given(
    lam=st.floats(10, 1e6),
    sigma=st.floats(0, 1),
    kappa=st.floats(0, 0.5),
    max_jobs=st.integers(1, 64),
    budget=st.one_of(st.none(), st.integers(0, 3)),
    error=st.lists(st.floats(0.7, 1.3), min_size=70, max_size=70),
)
def test_confirmation_invariants(lam, sigma, kappa, max_jobs, budget, error):
    """Navigation steps read the curve with an error of up to 30 %; confirmations read it exactly."""
    fn = usl(lam, sigma, kappa)
    measure, confirm, log = _device({n: fn(n) * error[n] for n in range(1, 65)}, {n: fn(n) for n in range(1, 65)})
    s = sweep.Search(measure, max_jobs, confirm=confirm, confirm_budget=budget)
    points = s.run()
    navigated = [n for kind, n in log if kind == "measure"]
    confirmed = [n for kind, n in log if kind == "confirm"]
    assert len(navigated) == len(set(navigated)) and len(confirmed) == len(set(confirmed))
    assert confirmed[0] == 1 and 1 not in navigated
    assert budget is None or len(s.replaced) <= budget
    assert len(log) <= sweep.max_steps(max_jobs, sweep.DEFAULT_REFINE_BUDGET, budget)
    peak = sweep.peak_of(points)
    assert peak.iops == max(p.iops for p in points)
    # the reported peak is a confirmed figure, unless the budget ran out (and the notes say so)
    if peak.numjobs not in s.confirmed:
        assert budget is not None and any("short window only" in n for n in s.notes)
    else:
        assert peak.iops == pytest.approx(fn(peak.numjobs))


def test_short_steps_are_all_provisional_even_those_that_ran_their_whole_window():
    """Method version 3: no detector ends a step, every step ``measure`` takes is short. A best
    point that ran its whole (short) window is still measured again with the longer one, and
    the note gives the seconds each step wrote, ramp included (none in these points)."""
    nav = {1: 900.0, 2: 1900.0, 4: 3000.0, 8: 2500.0, 16: 2400.0, 3: 2600.0, 6: 2700.0, 5: 2800.0}
    full = {n: v * 0.95 for n, v in nav.items()}
    measure, confirm, log = _device(nav, full, early=set())  # no step ended early
    s = sweep.Search(measure, 16, confirm=confirm, provisional=sweep.short_step)
    s.run()
    assert 4 in s.confirmed and s.points[4].iops == pytest.approx(2850.0)
    assert any(
        n.startswith(
            "peak confirmed at 4 jobs with the longer window: 3,000 IOPS after 20.0 s, then 2,850 IOPS after 20.0 s"
        )
        for n in s.notes
    )
    # with fio's detector (versions 1 and 2) the same full-length steps would not be confirmed
    measure, confirm, log = _device(nav, full, early=set())
    s = sweep.Search(measure, 16, confirm=confirm)
    s.run()
    assert s.confirmed == {1}


def test_by_default_the_confirmations_go_on_until_the_highest_figure_is_a_confirmed_one():
    """The run of benchmarks/results.md: 16 and 32 jobs read 46 600 and 46 100 after early ends,
    38 000 and 33 500 confirmed; 18 jobs (41 100, early) then led and is confirmed too."""
    nav = {
        1: 5165.0,
        2: 17768.0,
        4: 26046.0,
        8: 31579.0,
        16: 46613.0,
        18: 41094.0,
        20: 36682.0,
        24: 32672.0,
        32: 46117.0,
    }
    full = {**nav, 16: 38008.0, 32: 33473.0, 18: 37000.0}
    measure, confirm, log = _device(nav, full)
    s = sweep.Search(measure, 32, confirm=confirm, gain=0.0)
    points = s.run()
    assert [n for kind, n in log if kind == "confirm"][:1] == [1]
    assert {16, 32, 18} <= s.confirmed
    peak = sweep.peak_of(points)
    assert peak.numjobs in s.confirmed or not points[[p.numjobs for p in points].index(peak.numjobs)].steady_state
    assert not any("short window only" in n for n in s.notes)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(100, 1e5), min_size=6, max_size=6),
    st.lists(st.floats(0.5, 1.5), min_size=6, max_size=6),
    st.sets(st.sampled_from(RISING)),
)
def test_the_steps_left_with_confirmations_are_never_undercounted(nav_iops, factors, early):
    # the progress display's time budget: at every step, what is still to come fits in steps_left_max
    # every job count the refinement may pick reads like the doubling at or below it
    nav = {n: nav_iops[max(i for i, d in enumerate(RISING) if d <= n)] for n in range(1, 33)}
    full = {n: nav[n] * factors[max(i for i, d in enumerate(RISING) if d <= n)] for n in range(1, 33)}
    measure, confirm, log = _device(nav, full, early)
    search = None
    budgets: list[tuple[int, int]] = []  # (calls so far, steps_left_max before this call)

    def counted(fn):
        def call(n):
            budgets.append((len(log), search.steps_left_max()))
            return fn(n)

        return call

    search = sweep.Search(counted(measure), 32, confirm=counted(confirm))
    search.run()
    total = len(log)
    for done, left in budgets:
        assert total - done <= left, (done, left, total, log)
    assert total <= sweep.max_steps(32)
    assert search.steps_left_max() == 0
