"""Scaling classes: the community table's curves, USL-generated regimes, invariants, bad input, CLI."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from diskq.analyse import usl
from diskq.analyse.classify import classify, parse_points
from diskq.analyse.model import Scaling
from diskq.errors import InvalidInput

# Curves quoted in the notes of the community benchmark table (1-job IOPS, then other job counts).
PLIANT_LB206S = [(1, 5028), (2, 2651), (6, 1088), (8, 745), (10, 784)]
SAMSUNG_PM961 = [(1, 1480), (2, 818), (3, 1092), (4, 525), (5, 569)]
SAMSUNG_PM883 = [(1, 12680), (16, 59338)]
SAMSUNG_PM883_CACHE_ON = [(1, 5094), (16, 27521)]
WD_BLUE = [(1, 1751), (2, 2225)]


@pytest.mark.parametrize("points", [PLIANT_LB206S, SAMSUNG_PM961], ids=["Pliant LB206S", "Samsung PM961"])
def test_more_jobs_slow_down(points):
    s = classify(points)
    assert s.scaling == "regressing"
    assert s.peak.numjobs == 1 and s.peak.iops == points[0][1]
    assert s.description == "more jobs slow down"
    assert s.method == "shape" and s.usl is None  # five points or fewer: shape rules


def test_pm961_dip_and_recovery_is_still_regressing():
    """3 jobs recover to 1092 after 818 at 2 jobs, but 5 jobs end 62 % below the 1-job peak."""
    s = classify(SAMSUNG_PM961)
    assert any("62% below the peak" in n for n in s.notes)


@pytest.mark.parametrize("points", [SAMSUNG_PM883, SAMSUNG_PM883_CACHE_ON], ids=["cache off", "cache on"])
def test_pm883_is_asymptotic_with_its_peak_at_16(points):
    s = classify(points)
    assert s.scaling == "asymptotic"
    assert (s.peak.numjobs, s.peak.iops) == points[-1]
    assert s.description == "asymptotic"
    assert s.knee == 1


def test_wd_blue_two_jobs_already_saturate():
    s = classify(WD_BLUE)
    assert s.scaling == "asymptotic"
    assert (s.peak.numjobs, s.peak.iops) == (2, 2225)
    assert s.description == "2 jobs already saturate"


def test_schwartz_curve_is_linear_to_8_then_asymptotic(fixtures):
    rows = (fixtures / "usl" / "schwartz_32.csv").read_text().splitlines()[1:]
    points = [(int(a), float(b)) for a, b in (r.split(",") for r in rows)]
    s = classify(points)
    assert s.method == "usl" and s.usl is not None
    assert s.scaling == "asymptotic"  # 12074 at 32 jobs is 1.1 % below the 12211 peak: a plateau
    assert s.peak.numjobs == 27
    assert s.knee == 8
    assert s.description == "linear up to ~8 jobs, then asymptotic"


def test_hard_cap_is_not_mistaken_for_a_regression():
    """A smooth USL overshoots a hard cap and would bend down past it; shape rules decide instead."""
    s = classify([(1, 1000), (2, 2000), (4, 4000), (8, 7900), (16, 8000), (32, 7900)])
    assert s.scaling == "asymptotic" and s.method == "shape"
    assert s.description == "linear up to ~8 jobs, then capped"
    assert s.usl is not None  # the fit is still reported
    assert any("misses a measured point" in n for n in s.notes)


def test_small_dip_after_plateau_is_asymptotic_but_a_clear_drop_regresses():
    plateau = [(1, 1000), (2, 1900), (4, 3000), (8, 3300)]
    assert classify([*plateau, (16, 3300 * 0.95)]).scaling == "asymptotic"
    assert classify([*plateau, (16, 3300 * 0.85)]).scaling == "regressing"
    s = classify([*plateau, (16, 3300 * 0.85)])
    assert s.description == "peaks at 8 jobs, then more jobs slow down"
    assert s.knee == 2


def test_linear_curve_has_no_knee():
    s = classify([(1, 1000), (2, 1990), (4, 3900), (8, 7700), (16, 15000), (32, 29000)])
    assert s.scaling == "linear" and s.knee is None and s.method == "usl"
    assert s.description == "linear up to 32 jobs, the most tested"
    assert any("largest tested job count" in n for n in s.notes)


def test_one_job_saturates():
    s = classify([(1, 800), (2, 790), (4, 805)])
    assert s.scaling == "asymptotic" and s.peak.numjobs == 4
    s = classify([(1, 800), (2, 790), (4, 780)])
    assert s.description == "1 job already saturates"


# --- USL-generated regimes --------------------------------------------------------------------

grids = st.lists(st.integers(2, 32), min_size=5, max_size=12, unique=True).map(lambda g: sorted([1, *g]))
noise = st.lists(st.floats(-0.03, 0.03), min_size=13, max_size=13)


def _curve(grid, lam, sigma, kappa, jitter):
    return [(n, usl.model(n, lam, sigma, kappa) * (1 + e)) for n, e in zip(grid, jitter, strict=False)]


def _true_metrics(grid, sigma, kappa):
    xs = [usl.model(n, 1.0, sigma, kappa) for n in grid]
    efficiency = xs[-1] / grid[-1]  # X(1) = 1
    drop = 1 - xs[-1] / max(xs)
    return efficiency, drop


@settings(max_examples=120, deadline=None)
@given(grids, st.floats(1, 1e6), st.floats(0, 0.004), st.floats(0, 2e-6), noise)
def test_usl_linear_regime_classifies_as_linear(grid, lam, sigma, kappa, jitter):
    efficiency, _ = _true_metrics(grid, sigma, kappa)
    assume(efficiency >= 0.92)
    assert classify(_curve(grid, lam, sigma, kappa, jitter)).scaling == "linear"


@settings(max_examples=120, deadline=None)
@given(grids, st.floats(1, 1e6), st.floats(0.03, 0.6), st.floats(0, 1), noise)
def test_usl_asymptotic_regime_classifies_as_asymptotic(grid, lam, sigma, kappa_share, jitter):
    # kappa small enough that the USL peak N_max = sqrt((1-sigma)/kappa) lies beyond the grid
    kappa = kappa_share * (1 - sigma) / grid[-1] ** 2
    efficiency, drop = _true_metrics(grid, sigma, kappa)
    assume(efficiency <= 0.6 and drop <= 0.02)
    assert classify(_curve(grid, lam, sigma, kappa, jitter)).scaling == "asymptotic"


@settings(max_examples=120, deadline=None)
@given(grids, st.floats(1, 1e6), st.floats(0, 0.2), st.floats(0.005, 0.3), noise)
def test_usl_regressing_regime_classifies_as_regressing(grid, lam, sigma, kappa, jitter):
    _, drop = _true_metrics(grid, sigma, kappa)
    assume(drop >= 0.25)
    assert classify(_curve(grid, lam, sigma, kappa, jitter)).scaling == "regressing"


@settings(max_examples=200, deadline=None)
@given(grids, st.floats(1, 1e6), st.integers(1, 32), noise)
def test_a_plateau_with_noise_is_never_regressing(grid, lam, cap, jitter):
    # a drive capped at `cap` jobs, measured with +-3 % noise: the largest point can sit at most
    # ~6 % below the best one, which is noise around an asymptote, whatever the fit makes of it
    points = [(n, lam * min(n, cap) * (1 + e)) for n, e in zip(grid, jitter, strict=False)]
    assert classify(points).scaling != "regressing"


def test_the_measured_drop_decides_not_an_overshooting_fit():
    # flat from 9 to 32 jobs (0.2 % measured drop): a USL fit bends down past its peak here
    s = classify([(1, 1000), (2, 1852), (8, 5137), (9, 5498), (21, 5494), (29, 5491), (32, 5488)])
    assert s.scaling == "asymptotic"
    # a measured 26 % loss at 14 jobs is a regression even where the fit only sees 10 %
    s = classify([(1, 983), (2, 1846), (4, 3089), (5, 3478), (7, 4370), (9, 4863), (14, 3610)])
    assert s.scaling == "regressing" and "26% below the peak" in " ".join(s.notes)


def test_a_two_per_cent_bump_is_not_two_jobs_saturating():
    assert classify([(1, 1000), (2, 1020), (4, 980)]).description == "1 job already saturates"
    # the community's own WD Blue line: 27 % more at 2 jobs, the most it tested
    assert classify([(1, 1751), (2, 2225)]).description == "2 jobs already saturate"


# --- invariants -------------------------------------------------------------------------------

curves = st.lists(st.tuples(st.integers(1, 128), st.floats(1, 1e7)), min_size=2, max_size=14, unique_by=lambda t: t[0])


@settings(max_examples=200, deadline=None)
@given(curves, st.floats(1e-3, 1e3))
def test_scaling_all_iops_changes_nothing_but_the_peak_value(points, factor):
    try:
        base = classify(points)
    except InvalidInput:
        with pytest.raises(InvalidInput):
            classify([(n, x * factor) for n, x in points])
        return
    scaled = classify([(n, x * factor) for n, x in points])
    assert scaled.scaling == base.scaling
    assert scaled.knee == base.knee
    assert scaled.method == base.method
    assert scaled.description == base.description
    assert scaled.peak.numjobs == base.peak.numjobs
    assert scaled.peak.iops == pytest.approx(base.peak.iops * factor)


@settings(max_examples=200, deadline=None)
@given(curves, st.randoms(use_true_random=False))
def test_order_of_points_changes_nothing(points, rnd: random.Random):
    shuffled = list(points)
    rnd.shuffle(shuffled)
    try:
        base = classify(points)
    except InvalidInput as exc:
        with pytest.raises(InvalidInput) as again:
            classify(shuffled)
        assert again.value.message == exc.message
        return
    assert classify(shuffled) == base


anything = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-10, 10_000),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.tuples(anything, anything), st.tuples(anything), anything), max_size=12))
def test_classify_never_crashes(points):
    try:
        result = classify(points)
    except InvalidInput as exc:
        assert exc.message and "\n" not in exc.message
        return
    assert isinstance(result, Scaling)
    assert result.peak.iops == max(x for _, x in points)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=15), max_size=6))
def test_parse_points_gives_points_or_a_one_line_error(args):
    try:
        points = parse_points(args)
    except InvalidInput as exc:
        assert exc.message and "\n" not in exc.message
        return
    assert points and all(1 <= n <= 4096 and x >= 0 for n, x in points)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4096), st.floats(0, 1e9)), min_size=1, max_size=8))
def test_parse_points_reads_what_was_written(points):
    args = [f"{n}:{x!r}" for n, x in points]
    assert parse_points(args) == [(n, float(x)) for n, x in points]


def test_parse_points_accepts_commas_and_rejects_junk():
    assert parse_points(["1:5028,2:2651", " 6:1088 "]) == [(1, 5028.0), (2, 2651.0), (6, 1088.0)]
    for bad, words in [
        (["1=5028"], "not a point"),
        (["1:nan"], "finite"),
        (["0:100"], "between 1 and 4096"),
        (["5000:100"], "between 1 and 4096"),
        (["1:-3"], "finite number >= 0"),
        (["1:2:3"], "not a point"),
        ([], "no points"),
        ([" , "], "no points"),
    ]:
        with pytest.raises(InvalidInput, match=words):
            parse_points(bad)


@pytest.mark.parametrize(
    "points, words",
    [
        ([(1, 100)], "two or more job counts"),
        ([(1, 100), (1, 120)], "given twice"),
        ([(1, 0), (2, 100)], "no throughput at the smallest job count"),
        ([(1, 1e-6), (2, 1e6)], "implausibly small"),
        ([(1.5, 100), (2, 100)], "whole number"),
    ],
)
def test_unusable_curves_are_clear_errors(points, words):
    with pytest.raises(InvalidInput, match=words):
        classify(points)


# --- command line -----------------------------------------------------------------------------


def _diskq(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "diskq", *args], capture_output=True, text=True, timeout=60)


def test_cli_json_is_the_scaling_document_alone_on_stdout():
    r = _diskq("classify", "1:5028", "2:2651", "6:1088", "8:745", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["scaling"] == "regressing"
    assert doc["peak"] == {"numjobs": 1, "iops": 5028.0}
    assert doc["description"] == "more jobs slow down"
    assert Scaling.model_validate(doc).knee == 1


def test_cli_json_names_the_usl_lambda():
    points = [f"{n}:{x}" for n, x in [(1, 1000), (2, 1900), (4, 3400), (8, 5200), (16, 6000), (32, 5600)]]
    doc = json.loads(_diskq("classify", *points, "--json").stdout)
    assert doc["method"] == "usl"
    assert set(doc["usl"]) >= {"sigma", "kappa", "lambda", "n_max", "r2", "rmse", "points"}


def test_cli_summary_names_class_and_peak():
    r = _diskq("classify", "1:1751", "2:2225")
    assert r.returncode == 0, r.stderr
    assert "asymptotic: 2 jobs already saturate" in r.stdout
    assert "peak 2225 IOPS at 2 jobs" in r.stdout


@pytest.mark.parametrize("args", [["1:abc"], ["1:100"], ["2:5", "2:6"], ["1:inf", "2:3"]])
def test_cli_bad_points_give_one_error_line_and_no_traceback(args):
    r = _diskq("classify", *args)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.startswith("diskq: error: ")
    assert "Traceback" not in r.stderr
    assert len([line for line in r.stderr.splitlines() if not line.startswith("  hint:")]) == 1


def test_cli_help_has_an_example():
    r = _diskq("classify", "--help")
    assert r.returncode == 0 and "Example: diskq classify" in r.stdout
