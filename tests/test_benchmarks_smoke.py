"""The benchmark scripts' pure helpers on tiny inputs (the scripts themselves run devices and are
not part of the test suite)."""

from __future__ import annotations

import doctest
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks import (
    database_scale,
    diskqrun,
    fidelity,
    qualification_time,
    rawfio,
    size_profile,
    startup,
    stats,
    steady_state,
    stop_rule,
    sustained_write,
    write_history,
)


@pytest.mark.parametrize(
    "module",
    [
        stats,
        rawfio,
        diskqrun,
        qualification_time,
        steady_state,
        size_profile,
        stop_rule,
        sustained_write,
        write_history,
    ],
)
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


def test_peak_agreement_within_one_doubling_step():
    assert stats.same_peak_jobs(8, 16) and stats.same_peak_jobs(12, 8) and stats.same_peak_jobs(16, 8)
    assert not stats.same_peak_jobs(4, 16)
    assert not stats.same_peak_jobs(1, 32)
    assert stats.within_pct(104.9, 100, 5) and not stats.within_pct(105.1, 100, 5)
    assert stats.within_pct(95.0, 100, 5) and not stats.within_pct(94.9, 100, 5)


def test_ratio_and_median_edge_cases():
    assert stats.ratio(0, 0) == 1.0 and math.isinf(stats.ratio(1, 0))
    assert stats.median([3, 1, 2]) == 2 and stats.median([1, 2, 3, 4]) == 2.5
    with pytest.raises(ValueError):
        stats.median([])


# sizes at least 1.5x apart, like the benchmark's 1 000 / 10 000 / 100 000 (sizes a rounding
# error apart define no slope)
@given(
    st.lists(st.integers(min_value=0, max_value=34), min_size=2, max_size=6, unique=True).map(
        lambda ks: [1.5**k for k in ks]
    ),
    st.floats(min_value=0.5, max_value=2.0),
    st.floats(min_value=0.01, max_value=100),
)
def test_growth_exponent_recovers_a_power_law(sizes, exponent, scale):
    costs = [scale * s**exponent for s in sizes]
    assert stats.growth_exponent(sizes, costs) == pytest.approx(exponent, rel=1e-6)


def test_qualification_summary_compares_medians_and_pairs():
    Q = qualification_time.Qualification
    community = [
        Q("community", [(1, 900), (2, 1700), (4, 2000), (8, 1900)], 80.0, 82.0, (4, 2000)),
        Q("community", [(1, 950), (2, 1650), (4, 2100), (8, 1950)], 80.0, 83.0, (4, 2100)),
    ]
    diskq = [
        Q("diskq", [(1, 920), (2, 1680), (4, 2050), (3, 1900)], 20.0, 22.0, (4, 2050)),
        Q("diskq", [(1, 910), (2, 1500)], 8.0, 9.0, (2, 1500)),
    ]
    s = qualification_time.summary(community, diskq)
    assert s["median"]["community"]["device_s"] == 80.0 and s["median"]["diskq"]["device_s"] == 14.0
    assert s["device_speedup"] == pytest.approx(80 / 14)
    assert s["pairs_same_jobs"] == 2 and s["pairs_same_iops"] == 1
    # median diskq peak 1775 IOPS against 2050: more than 5 % apart, so the goal is not met
    assert not s["median_same_iops"] and not s["goal_met"]
    assert qualification_time.peak([(1, 5), (2, 7), (4, 7)]) == (2, 7)
    # the community's two runs: same peak jobs (4), peak IOPS 2000 vs 2100 (within 5 %)
    assert s["community_self"] == (1, 1, 1)


def test_community_self_agreement_counts_consecutive_runs():
    Q = qualification_time.Qualification
    runs = [Q("community", [], 120.0, 121.0, peak) for peak in [(32, 12690), (32, 12990), (32, 12100), (4, 12000)]]
    # 12990 vs 12690 (+2.4 %) agree; 12100 vs 12990 (-6.9 %) do not; 4 jobs vs 32 is three doublings off
    assert qualification_time.self_agreement(runs) == (2, 2, 3)


def test_fidelity_verdict():
    assert fidelity.verdict([0.99, 1.02, 1.5]) == (1.02, True)
    assert fidelity.verdict([0.9, 0.96, 1.0])[1] is False


def test_raw_fio_summary_sums_jobs_and_skips_notes():
    data = {
        "jobs": [
            {"jobname": "a", "error": 0, "write": {"iops": 100.5, "runtime": 20000}},
            {"jobname": "a", "error": 0, "write": {"iops": 99.5, "runtime": 19990}},
        ]
    }
    text = "note: both iodepth >= 1 and synchronous I/O engine are selected\n" + json.dumps(data)
    assert rawfio.summarise(text) == (200.0, 20.0)
    data["jobs"][1]["error"] = 5
    with pytest.raises(ValueError):
        rawfio.summarise(json.dumps(data))


def test_diskq_result_points_and_device_time():
    doc = {
        "notes": ["n"],
        "runs": [
            {
                "notes": ["search stopped: x"],
                "points": [
                    {"numjobs": 1, "iops": 500.0, "runtime_ms": 6000},
                    {"numjobs": 2, "iops": 900.0, "runtime_ms": 20000},
                    {"numjobs": 4, "iops": 900.0, "runtime_ms": 4500},
                ],
            }
        ],
    }
    run = diskqrun.BenchRun(points=diskqrun.points_of(doc), wall_s=33.0, notes=diskqrun.notes_of(doc))
    assert run.device_s == pytest.approx(30.5)
    assert run.peak == (2, 900.0)
    assert run.notes == ["n", "search stopped: x"]


def test_steady_state_replay_and_logs():
    flat = [1000.0] * 10
    noisy = [1000.0, 1300.0] * 5
    assert steady_state.detector_stop(flat, 5, 3, 1) == 4
    assert steady_state.detector_stop(noisy, 5, 3, 1) is None
    assert steady_state.detector_stop(noisy, 20, 3, 1) == 4
    r = steady_state.replay([flat, noisy], 5, 3, 1)
    assert r["stopped"] == 0.5 and r["mean_length_s"] == 7.0 and r["max_error_pct"] == 0.0
    logs = ["1000, 10, 1, 4096, 0\n2001, 12, 1, 4096, 0\n", "999, 5, 1, 4096, 0\n2000, 6, 1, 4096, 0\n"]
    assert steady_state.parse_iops_logs(logs, 3) == [15.0, 18.0]  # second 3 never closed: no sample, not 0
    printed = "# steady state\n  4 jobs: mean 1 IOPS, 1-s samples span 0 % of the mean | 10 12 11\n| table |"
    assert steady_state.traces_from_output(printed) == [[10.0, 12.0, 11.0]]


def test_memory_sampling_helpers():
    assert database_scale.parse_status_rss("Name:\tpython\nVmRSS:\t  2048 kB\n") == 2048 * 1024
    assert database_scale.parse_status_rss("Name:\tkworker\n") == 0
    assert sorted(database_scale.descendants(1, {1: [2, 3], 3: [4], 9: [10]})) == [1, 2, 3, 4]
    assert database_scale.linearity([1000, 10000], [1.0, 10.0]) == "time ~ N^1.00"


def test_startup_uses_the_installed_cli():
    exe = startup.diskq_exe()
    assert exe[-1].endswith("diskq")


def test_fidelity_reads_the_raw_fio_json_kept_in_the_document():
    fio_json = {"jobs": [{"jobname": "ceph-iops", "error": 0, "write": {"iops": 1234.5678, "runtime": 10000}}]}
    doc = {"runs": [{"points": [{"numjobs": 1, "iops": 1234.568, "runtime_ms": 10000, "fio": fio_json}]}]}
    assert fidelity.embedded_ratio(doc) == pytest.approx(1.0, abs=1e-6)
    doc["runs"][0]["points"][0]["iops"] = 1300.0
    assert fidelity.embedded_ratio(doc) > 1.05


def test_qualification_peak_iops_tolerance_is_the_protocols_own_spread_when_wider():
    Q = qualification_time.Qualification
    wide = [Q("community", [], 120.0, 121.0, (32, v)) for v in (1500.0, 2000.0, 2500.0)]
    close = [Q("community", [], 120.0, 121.0, (32, v)) for v in (1990.0, 2000.0, 2010.0)]
    diskq = [Q("diskq", [], 35.0, 37.0, (32, v)) for v in (1650.0, 1700.0, 1750.0)]
    assert qualification_time.own_spread(wide) == pytest.approx(0.25)
    s = qualification_time.summary(wide, diskq)
    # 0.85 of the protocol's median: outside 5 %, inside the protocol's own +-25 %
    assert s["peak_ratio"] == pytest.approx(0.85) and s["iops_tolerance"] == pytest.approx(0.25)
    assert s["peak_iops_ok"] and s["goal_met"]
    s = qualification_time.summary(close, diskq)
    assert s["iops_tolerance"] == pytest.approx(0.05) and not s["peak_iops_ok"] and not s["goal_met"]
    # accurate but not 3x faster: not met either
    slow = [Q("diskq", [], 45.0, 47.0, (32, 2000.0))] * 3
    s = qualification_time.summary(close, slow)
    assert s["peak_iops_ok"] and s["device_speedup"] < 3 and not s["goal_met"]


def test_replaced_short_steps_and_ramps_count_as_device_time():
    ramp = {"jobs": [{"job options": {"ramp_time": "1"}}]}
    doc = {
        "runs": [
            {
                "notes": [
                    "peak confirmed at 32 jobs with the longer window: 16,262 IOPS "
                    "after 5.0 s, then 20,011 IOPS after 8.0 s",
                    "point deciding the OSD count confirmed at 16 jobs with the longer window: "
                    "9,000 IOPS after 5.0 s, then 9,100 IOPS after 8.0 s",
                ],
                "points": [
                    {"numjobs": 1, "iops": 500.0, "runtime_ms": 7000, "fio": ramp},
                    {"numjobs": 16, "iops": 9100.0, "runtime_ms": 7000, "fio": ramp},
                    {"numjobs": 32, "iops": 20011.0, "runtime_ms": 7000, "fio": ramp},
                ],
            }
        ]
    }
    run = diskqrun.BenchRun(points=diskqrun.points_of(doc), wall_s=40.0, notes=diskqrun.notes_of(doc))
    # three 8 s steps in the document, two 5 s steps they replaced
    assert run.device_s == pytest.approx(34.0)
    assert run.peak == (32, 20011.0)


def test_stop_rule_replay_prints_both_tables(capsys):
    assert stop_rule.main([]) == 0
    out = capsys.readouterr().out
    assert "| fixed 7 s window (method 3) | 48 | 7.0 | 1.00 |" in out  # the recorded 20 s steps
    assert "CI within 10 %" in out and "16 jobs and more: the answer window reads above" in out
