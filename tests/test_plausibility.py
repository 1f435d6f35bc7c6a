"""Questionable points, the community table's final peaks and the contributor's words, in the
analysis: what enters a class, a peak and a verdict."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diskq.analyse import annotate
from diskq.analyse.classify import classify
from diskq.analyse.osds import carry_order, osds_per_device
from diskq.analyse.plausibility import questionable
from diskq.analyse.source import SourceSweep, read_words, shape_words
from diskq.analyse.verdicts import evaluate, load_criteria
from diskq.errors import InvalidInput
from diskq.result import Device, Latency, Method, Point, ResultDocument, Run

CRIT = load_criteria()
RATIO = CRIT["plausibility"]["max_per_job_ratio"]


def _doc(curve, cache="off") -> ResultDocument:
    points = [Point(numjobs=n, iops=x, bw_bytes=x * 4096, total_ios=0, runtime_ms=0, lat_us=Latency())
              for n, x in curve]
    return ResultDocument(created="2026-01-01T00:00:00Z", device=Device(model="X"), method=Method(),
                          runs=[Run(write_cache=cache, points=points)])


def test_the_s4510_typo_is_questionable_and_left_out_of_every_verdict():
    # community table: 1 600 IOPS at 1 job, 48 409 at 15 jobs (3 227 per job)
    q = questionable([(1, 1600), (15, 48409)])
    assert [(p.numjobs, p.ratio) for p in q] == [(15, 2.02)]
    assert "3,227 per job, 2.0x the 1-job rate of 1,600" in q[0].reason
    doc = annotate(_doc([(1, 1600), (15, 48409)]))
    assert doc.runs[0].scaling is None  # one plausible point: no class, and the note says why
    assert any("questionable" in n and "48,409" in n for n in doc.runs[0].notes)
    o = doc.verdicts.osds_per_device
    assert (o.n, o.per_osd_iops) == (1, 1600)  # not ">= 15" on a typo
    assert any(r.startswith("left out as questionable: 48,409 IOPS at 15 jobs") for r in o.reasons)
    assert doc.verdicts.ceph_waldb.tier == "marginal"


def test_a_questionable_point_is_marked_in_the_class_and_not_its_peak():
    s = classify([(1, 1000), (2, 1900), (4, 3600), (8, 40000)])
    assert [q.numjobs for q in s.questionable] == [8]
    assert s.peak.numjobs == 4 and s.peak.iops == 3600
    assert any(n.startswith("left out as questionable: 40,000 IOPS at 8 jobs") for n in s.notes)
    with pytest.raises(InvalidInput, match="fewer than two plausible points"):
        classify([(1, 1600), (15, 48409)])


def test_flush_merging_noise_is_not_questionable():
    # per job 1.45x the 1-job rate: a low 1-job step, not a typo
    assert questionable([(1, 1000), (2, 2900)]) == []
    assert [q.numjobs for q in questionable([(1, 1000), (2, 3100)])] == [2]


@settings(max_examples=200, deadline=None)
@given(st.floats(1, 1e6), st.lists(st.tuples(st.integers(2, 64), st.floats(0, 1e7)), max_size=8,
                                    unique_by=lambda t: t[0]))
def test_questionable_is_exactly_a_per_job_rate_above_the_threshold(solo, rest):
    curve = [(1, solo), *rest]
    marked = {q.numjobs for q in questionable(curve)}
    for n, x in rest:
        ratio = x / n / solo
        if abs(ratio - RATIO) > 1e-6:
            assert (n in marked) == (ratio > RATIO)
    assert 1 not in marked


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
        "asymptotic", "contributor", "2 jobs already saturate", "2 jobs already saturate")
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
@given(st.lists(st.tuples(st.integers(2, 64), st.floats(0, 1e6)), max_size=8, unique_by=lambda t: t[0]),
       st.floats(1, 1e6), st.lists(st.floats(1, 3), min_size=9, max_size=9))
def test_carry_order_is_monotone(rest, solo, factors):
    curve = [(1, solo), *sorted(rest)]
    faster = [(n, x * f) for (n, x), f in zip(curve, factors)]
    if questionable(curve) or questionable(faster):
        return  # a questionable point is no evidence, however fast
    slow, fast = osds_per_device(curve, 315), osds_per_device(faster, 315)
    assert carry_order(fast, faster[0][1]) >= carry_order(slow, solo) - 1e-12


# --- shown where results are read: diskq classify and the bench's result table -----------------


def test_classify_prints_a_questionable_point_with_its_mark_and_reason():
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "diskq", "classify", "1:1000", "2:1900", "4:3600", "8:40000"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    out = " ".join(r.stdout.split())
    assert "? questionable 8:40000, left out: 40,000 IOPS at 8 jobs is 5,000 per job, 5.0x the 1-job rate" in out
    assert "peak 3600 IOPS at 4 jobs" in out
    r = subprocess.run([sys.executable, "-m", "diskq", "classify", "1:1600", "15:48409", "--json"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("diskq: error: fewer than two plausible points") and "Traceback" not in r.stderr


def test_the_bench_table_marks_a_questionable_step():
    from rich.console import Console

    from diskq.cli._render import result_table

    doc = annotate(_doc([(1, 1000), (2, 1900), (4, 3600), (8, 40000)]))
    console = Console(width=120, record=True, force_terminal=False, color_system=None)
    result_table(doc, console)
    text = console.export_text()
    row = next(line for line in text.splitlines() if "40,000" in line)
    assert row.rstrip(" │").endswith("? questionable")
    assert "? questionable, left out of the class and every verdict: 40,000 IOPS at 8 jobs" in " ".join(text.split())
    assert "▶ 4" in text  # the peak is the plausible one
