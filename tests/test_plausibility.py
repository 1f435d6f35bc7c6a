"""Per-job rates above the 1-job rate (criteria [plausibility]), the community table's final peaks
and the contributor's words, in the analysis: what enters a class, a peak and a verdict. A
measured point is never left out; two figures without raw output are a conflict."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diskq.analyse import annotate
from diskq.analyse.classify import classify
from diskq.analyse.osds import carry_order, osds_per_device
from diskq.analyse.plausibility import measured, review
from diskq.analyse.source import SourceSweep, read_words, shape_words
from diskq.analyse.verdicts import evaluate, load_criteria
from diskq.errors import InvalidInput
from diskq.result import Device, Latency, Method, Point, ResultDocument, Run

CRIT = load_criteria()
RATIO = CRIT["plausibility"]["max_per_job_ratio"]


def _fio(numjobs: int, iops: float, *, runtime_ms: int = 7000, consistent: bool = True) -> dict:
    """A step's fio JSON whose counters agree with its headline figures (``consistent``), or whose
    byte count does not (what an edited IOPS figure leaves behind)."""
    ios = max(1, round(iops * runtime_ms / 1000))
    return {
        "fio version": "fio-3.33",
        "global options": {"bs": "4k", "iodepth": "1"},
        "jobs": [
            {
                "jobname": "ceph-iops",
                "job options": {"numjobs": str(numjobs)},
                "write": {
                    "total_ios": ios,
                    "io_bytes": ios * 4096 * (1 if consistent else 10),
                    "iops": ios * 1000 / runtime_ms,
                    "runtime": runtime_ms,
                },
            }
        ],
    }


def _doc(curve, cache="off", *, raw=False, filesystem=None, consistent=True) -> ResultDocument:
    points = [
        Point(
            numjobs=n,
            iops=x,
            bw_bytes=x * 4096,
            total_ios=0,
            runtime_ms=0,
            lat_us=Latency(),
            fio=_fio(n, x, consistent=consistent) if raw else None,
        )
        for n, x in curve
    ]
    return ResultDocument(
        created="2026-01-01T00:00:00Z",
        device=Device(model="X", filesystem=filesystem),
        method=Method(),
        runs=[Run(write_cache=cache, points=points)],
    )


def test_the_s4510_row_is_a_conflict_and_the_verdicts_use_what_both_figures_allow():
    # community table: 1 600 IOPS at 1 job, 48 409 at 15 jobs (3 227 per job), no raw output
    r = review([(1, 1600), (15, 48409)])
    assert [(q.numjobs, q.ratio) for q in r.held] == [(15, 2.02)]
    assert r.held[0].reason.startswith("conflict: 1,600 IOPS at 1 job and 48,409 at 15 jobs (3,227 per job")
    assert "typo" not in r.held[0].reason
    doc = annotate(_doc([(1, 1600), (15, 48409)]))
    assert doc.runs[0].scaling is None  # one point outside the conflict: no class, and the note says why
    assert any("conflict" in n and "48,409" in n for n in doc.runs[0].notes)
    o = doc.verdicts.osds_per_device
    assert (o.n, o.per_osd_iops, o.limited_by_sweep) == (1, 1600, True)  # at least 1, what both figures allow
    assert any(r.startswith("rests on a conflict between two figures") and "48,409 at 15 jobs" in r for r in o.reasons)
    assert doc.verdicts.ceph_waldb.tier == "marginal"
    assert any(r.startswith("rests on a conflict") for r in doc.verdicts.ceph_waldb.reasons)


def test_the_same_figures_measured_are_kept_with_an_observation():
    # the same two figures with raw fio output that passes the counter checks: a fact
    doc = annotate(_doc([(1, 1600), (15, 48409)], raw=True))
    assert all(measured(p.fio) for p in doc.runs[0].points)
    s = doc.runs[0].scaling
    assert s is not None and s.questionable == [] and s.peak.numjobs == 15
    assert any(
        n.startswith("observation: 48,409 IOPS at 15 jobs is 3,227 per job") and "kept, it was measured" in n
        for n in s.notes
    )
    o = doc.verdicts.osds_per_device
    # kept in the curve (it alone would allow at least 15), and the count held at what the
    # marginal tier allows: one model, so the tier and the count never contradict each other
    assert doc.verdicts.ceph_waldb.tier == "marginal" and o.n == 2
    assert "the curve alone would allow at least 15" in o.reasons[0]
    assert not any("typo" in n for n in [*s.notes, *doc.verdicts.notes, *o.reasons])
    # with an edited byte count the output fails the cross-checks: two figures again, a conflict
    edited = annotate(_doc([(1, 1600), (15, 48409)], raw=True, consistent=False))
    assert not any(measured(p.fio) for p in edited.runs[0].points)
    assert edited.verdicts.osds_per_device.n == 1


def test_a_measured_file_mode_curve_says_it_measured_the_filesystem():
    doc = annotate(_doc([(1, 1000), (2, 3000), (4, 7000)], raw=True, filesystem="ext4"))
    s = doc.runs[0].scaling
    assert s.questionable == [] and s.peak.numjobs == 4
    assert any("the ext4 filesystem commits the flushes of concurrent writers together" in n for n in s.notes)
    for v in (doc.verdicts.ceph_waldb, doc.verdicts.osds_per_device):
        assert any(r.startswith("measured through the ext4 filesystem") for r in v.reasons)
    o = doc.verdicts.osds_per_device
    assert doc.verdicts.ceph_waldb.tier == "marginal" and o.n == 2
    assert "the curve alone would allow at least 4" in o.reasons[0]


def test_a_conflicting_figure_is_marked_in_the_class_and_not_its_peak():
    s = classify([(1, 1000), (2, 1900), (4, 3600), (8, 40000)])
    assert [q.numjobs for q in s.questionable] == [8]
    assert s.peak.numjobs == 4 and s.peak.iops == 3600
    assert any(n.startswith("conflict: 1,000 IOPS at 1 job and 40,000 at 8 jobs") for n in s.notes)
    with pytest.raises(InvalidInput, match="fewer than two points to classify without a conflict"):
        classify([(1, 1600), (15, 48409)])


def test_flush_merging_noise_is_no_conflict():
    # per job 1.45x the 1-job rate: within the noise of a low 1-job step
    assert review([(1, 1000), (2, 2900)]).held == []
    assert [q.numjobs for q in review([(1, 1000), (2, 3100)]).held] == [2]


@settings(max_examples=200, deadline=None)
@given(
    st.floats(1, 1e6), st.lists(st.tuples(st.integers(2, 64), st.floats(0, 1e7)), max_size=8, unique_by=lambda t: t[0])
)
def test_a_conflict_is_exactly_a_per_job_rate_above_the_threshold(solo, rest):
    curve = [(1, solo), *rest]
    marked = {q.numjobs for q in review(curve).held}
    for n, x in rest:
        ratio = x / n / solo
        if abs(ratio - RATIO) > 1e-6:
            assert (n in marked) == (ratio > RATIO)
    assert 1 not in marked
    # measured, nothing is held, whatever the rates
    assert review(curve, measured_jobs=[n for n, _ in curve]).held == []


@settings(max_examples=150, deadline=None)
@given(
    st.floats(50, 1e6),
    st.lists(st.tuples(st.integers(2, 64), st.floats(50, 1e7)), min_size=1, max_size=7, unique_by=lambda t: t[0]),
    st.sampled_from([None, "ext4", "xfs"]),
)
def test_no_measured_point_is_ever_left_out_of_the_verdicts(solo, rest, filesystem):
    curve = sorted([(1, solo), *rest])
    doc = annotate(_doc(curve, raw=True, filesystem=filesystem))
    assert all(measured(p.fio) for p in doc.runs[0].points)  # the outputs pass the counter checks
    s = doc.runs[0].scaling
    assert s is not None and s.questionable == []
    assert s.peak.iops == max(x for _, x in curve)
    o = doc.verdicts.osds_per_device
    expected = osds_per_device(curve, o.demand_iops)
    cap = CRIT["osds_per_device"]["tier_max_osds"].get(doc.verdicts.ceph_waldb.tier)
    if cap is not None and expected.n > cap:  # every point counted, then held at what the tier allows
        assert (o.n, o.limited_by_sweep) == (cap, False)
        assert (
            f"the curve alone would allow {'at least ' if expected.limited_by_sweep else ''}{expected.n}"
            in o.reasons[0]
        )
    else:
        assert (o.n, o.per_osd_iops, o.limited_by_sweep) == (
            expected.n,
            expected.per_osd_iops,
            expected.limited_by_sweep,
        )
    every = " ".join([*s.notes, *doc.verdicts.notes, *o.reasons, *doc.verdicts.ceph_waldb.reasons])
    assert "typo" not in every and "conflict" not in every


# --- the community table's final peak and the contributor's words ------------------------------


def test_a_legacy_peak_is_not_at_least_n():
    # Intel SSD 750: the contributor's sweep peaked at 8 jobs: more did not raise IOPS
    plain = osds_per_device([(1, 64235), (8, 192440)], 315)
    final = osds_per_device([(1, 64235), (8, 192440)], 315, peak_final=True)
    assert plain.limited_by_sweep and not final.limited_by_sweep and final.n == 8
    assert any("peak of the source's sweep" in r and "no more is claimed" in r for r in final.reasons)
    assert not any("may carry more" in r for r in final.reasons)


def test_the_970_pro_saturates_at_two_jobs_as_its_contributor_wrote():
    plain = classify([(1, 456), (2, 840)])
    assert plain.scaling == "linear"  # the old reading: "linear up to 2 jobs, the most tested"
    s = classify([(1, 456), (2, 840)], SourceSweep(peak_final=True, words="2 jobs already saturate"))
    assert (s.scaling, s.method, s.description, s.words) == (
        "asymptotic",
        "contributor",
        "2 jobs already saturate",
        "2 jobs already saturate",
    )
    assert s.peak_final and not any("more jobs may go higher" in n for n in s.notes)


def test_the_mzqlw_keeps_its_knee_and_linear_until_capped_its_words():
    s = classify([(1, 34090), (16, 268030)], SourceSweep(True, "linear up to ~8 jobs, then asymptotic"))
    assert (s.scaling, s.knee, s.description) == ("asymptotic", 8, "linear up to ~8 jobs, then asymptotic")
    s = classify([(1, 600), (8, 3640)], SourceSweep(True, "linear until capped"))
    assert (s.scaling, s.knee, s.description, s.method) == ("asymptotic", None, "linear until capped", "contributor")
    assert classify([(1, 600), (8, 3640)]).description == "asymptotic"  # what the figures alone said


def test_words_that_contradict_the_points_give_way():
    # "linear" where each of 8 jobs keeps 19 %: the figures decide
    s = classify([(1, 1000), (8, 1500)], SourceSweep(True, "linear"))
    assert s.scaling == "asymptotic" and s.method == "shape"
    assert any("contradict the two points" in n for n in s.notes)
    # with three or more points the figures decide, the words are kept as words
    s = classify([(1, 5028), (2, 2651), (6, 1088)], SourceSweep(False, "asymptotic"))
    assert s.scaling == "regressing" and s.words == "asymptotic"


def test_table_notes_are_read_in_the_communitys_words():
    assert shape_words("asymptotic; cache on: 5094 @ 1job, 27521 @16") == "asymptotic"
    assert shape_words("more jobs slow down. 2: 2651, 6: 1088") == "more jobs slow down"
    assert read_words("more jobs slow down").scaling == "regressing"
    assert read_words("fast drive") is None


def test_verdicts_use_the_final_peak_of_the_run_they_judge():
    doc = _doc([(1, 64235), (8, 192440)])
    assert evaluate(doc).osds_per_device.limited_by_sweep
    assert not evaluate(doc, {0: SourceSweep(peak_final=True)}).osds_per_device.limited_by_sweep


def test_carry_order_ranks_the_ssd_750_above_the_ultra_ii():
    # both carry 8 OSDs; the 750 gives each 24 055 commits/s, the Ultra II 455
    slow, fast = osds_per_device([(1, 600), (8, 3640)], 315), osds_per_device([(1, 64235), (8, 192440)], 315)
    assert slow.n == fast.n == 8
    assert carry_order(fast) > carry_order(slow)
    assert carry_order(osds_per_device([(1, 200)], 315), 200) < carry_order(osds_per_device([(1, 316)], 315))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(2, 64), st.floats(0, 1e6)), max_size=8, unique_by=lambda t: t[0]),
    st.floats(1, 1e6),
    st.lists(st.floats(1, 3), min_size=9, max_size=9),
)
def test_carry_order_is_monotone(rest, solo, factors):
    curve = [(1, solo), *sorted(rest)]
    faster = [(n, x * f) for (n, x), f in zip(curve, factors, strict=False)]
    if review(curve).held or review(faster).held:
        return  # a figure in a conflict is no evidence, however fast
    slow, fast = osds_per_device(curve, 315), osds_per_device(faster, 315)
    assert carry_order(fast, faster[0][1]) >= carry_order(slow, solo) - 1e-12


# --- shown where results are read: diskq classify and the bench's result table -----------------


def test_classify_prints_a_conflict_with_its_mark_and_reason():
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "diskq", "classify", "1:1000", "2:1900", "4:3600", "8:40000"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    out = " ".join(r.stdout.split())
    assert (
        "≠ conflict 8:40000, held out of the class: conflict: 1,000 IOPS at 1 job and 40,000 at 8 jobs "
        "(5,000 per job, 5.0x the 1-job figure) cannot both be right"
    ) in out
    assert "peak 3600 IOPS at 4 jobs" in out
    r = subprocess.run(
        [sys.executable, "-m", "diskq", "classify", "1:1600", "15:48409", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("diskq: error: fewer than two points to classify without a conflict")
    assert "Traceback" not in r.stderr


def test_the_bench_table_marks_a_conflict_and_shows_an_observation():
    from rich.console import Console

    from diskq.cli._render import result_table

    doc = annotate(_doc([(1, 1000), (2, 1900), (4, 3600), (8, 40000)]))
    console = Console(width=120, record=True, force_terminal=False, color_system=None)
    result_table(doc, console)
    text = console.export_text()
    row = next(line for line in text.splitlines() if "40,000" in line)
    assert row.rstrip(" │").endswith("≠ conflict")
    assert (
        "≠ conflict, 8 jobs held out of the class and every verdict: conflict: 1,000 IOPS at 1 job and 40,000 "
        "at 8 jobs" in " ".join(text.split())
    )
    assert "▶ 4" in text  # the peak is the one outside the conflict
    # measured, the same step is the peak, with the observation beside the table
    doc = annotate(_doc([(1, 1000), (2, 1900), (4, 3600), (8, 40000)], raw=True))
    console = Console(width=120, record=True, force_terminal=False, color_system=None)
    result_table(doc, console)
    text = " ".join(console.export_text().split())
    assert "▶ 8" in text and "≠ conflict" not in text
    assert (
        "observation: 40,000 IOPS at 8 jobs is 5,000 per job, 5.0x the 1-job rate of 1,000: kept, it was measured"
        in text
    )
