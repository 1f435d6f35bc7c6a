"""USL fit: the published reference fits, recovery of known parameters, bounds and invariants."""

from __future__ import annotations

import csv
import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from diskq.analyse import usl
from diskq.analyse.model import UslFit
from diskq.errors import InvalidInput


def _load(fixtures, name: str) -> list[tuple[float, float]]:
    with open(fixtures / "usl" / name, newline="") as f:
        return [(float(r["concurrency"]), float(r["throughput"])) for r in csv.DictReader(f)]


def test_schwartz_reference_data_matches_the_published_fit(fixtures):
    points = _load(fixtures, "schwartz_32.csv")
    assert len(points) == 32
    fit = usl.fit(points)
    assert fit.sigma == pytest.approx(0.02671591, rel=1e-5)
    assert fit.kappa == pytest.approx(7.690945e-4, rel=1e-5)
    assert fit.lambda_ == pytest.approx(995.6486, rel=1e-5)
    assert math.floor(fit.n_max) == 35  # the reference's "max concurrency"
    assert fit.n_max == pytest.approx(math.sqrt((1 - fit.sigma) / fit.kappa))
    assert fit.points == 32 and fit.r2 > 0.99
    # the reference's predictions at N=20 and N=35
    assert fit.predict(20) == pytest.approx(11063.63312570436, rel=1e-5)
    assert fit.predict(35) == pytest.approx(12341.745655201905, rel=1e-5)


def test_readme_example_matches_the_published_fit(fixtures):
    fit = usl.fit(_load(fixtures, "codahale_readme_7.csv"))
    # the README prints 6 significant digits; the fits agree to better than 0.01 %
    assert fit.sigma == pytest.approx(0.0277299, rel=1e-4)
    assert fit.kappa == pytest.approx(0.000104343, rel=1e-4)
    assert fit.lambda_ == pytest.approx(89.9878, rel=1e-4)
    assert math.floor(fit.n_max) == 96
    assert fit.predict(100) == pytest.approx(1883.278957, rel=1e-4)
    assert fit.predict(300) == pytest.approx(1447.463805, rel=1e-4)


def test_fit_is_a_least_squares_minimum(fixtures):
    """Nudging any parameter of the result makes the squared error worse."""
    points = _load(fixtures, "schwartz_32.csv")
    fit = usl.fit(points)

    def sse(lam, sigma, kappa):
        return sum((x - usl.model(n, lam, sigma, kappa)) ** 2 for n, x in points)

    best = sse(fit.lambda_, fit.sigma, fit.kappa)
    assert best == pytest.approx(fit.rmse**2 * len(points), rel=1e-9)
    for d in (1 + 1e-4, 1 - 1e-4):
        assert sse(fit.lambda_ * d, fit.sigma, fit.kappa) > best
        assert sse(fit.lambda_, fit.sigma * d, fit.kappa) > best
        assert sse(fit.lambda_, fit.sigma, fit.kappa * d) > best


def test_serialises_lambda_under_its_name():
    fit = usl.fit([(1, 100), (2, 190), (4, 340), (8, 520), (16, 600), (32, 560)])
    dumped = fit.model_dump(mode="json")
    assert "lambda" in dumped and "lambda_" not in dumped
    assert dumped["lambda"] == pytest.approx(fit.lambda_)
    assert UslFit.model_validate_json(fit.model_dump_json()) == fit


def test_linear_data_gives_zero_coefficients_and_no_n_max():
    fit = usl.fit([(n, 1000.0 * n) for n in (1, 2, 4, 8, 16)])
    assert fit.sigma == pytest.approx(0, abs=1e-9)
    assert fit.kappa == pytest.approx(0, abs=1e-12)
    assert fit.lambda_ == pytest.approx(1000.0, rel=1e-9)
    assert fit.n_max is None
    assert fit.r2 == pytest.approx(1.0)


def test_coefficients_stay_non_negative_for_superlinear_data():
    """Throughput per job rising with N would need sigma < 0: the fit holds it at 0 instead."""
    fit = usl.fit([(1, 100), (2, 230), (4, 520), (8, 1150), (16, 2500)])
    assert fit.sigma == 0.0 and fit.kappa == 0.0
    assert fit.lambda_ > 100


@pytest.mark.parametrize(
    "points, message",
    [
        ([(1, 100), (2, 200)], "3 distinct"),
        ([(1, 100), (1, 110), (2, 190)], "3 distinct"),
        ([(1, 0), (2, 0), (4, 0)], "above zero"),
        ([(0, 10), (2, 20), (4, 30)], "jobs >= 1"),
        ([(1, 10), (2, float("nan")), (4, 30)], "finite"),
        ([(1, 10), (2, -5), (4, 30)], "finite"),
        ([(1,), (2, 20), (4, 30)], "pair"),
    ],
)
def test_unusable_input_is_a_clear_error(points, message):
    with pytest.raises(InvalidInput, match=message):
        usl.fit(points)


params = st.tuples(
    st.floats(10, 1e6),  # lambda
    st.floats(0, 0.5),  # sigma
    st.floats(0, 0.02),  # kappa
)
grids = st.lists(st.integers(2, 48), min_size=4, max_size=12, unique=True).map(lambda g: sorted([1, *g]))


@settings(max_examples=150, deadline=None)
@given(params, grids)
def test_recovers_the_parameters_of_exact_usl_curves(p, grid):
    lam, sigma, kappa = p
    points = [(n, usl.model(n, lam, sigma, kappa)) for n in grid]
    fit = usl.fit(points)
    assert fit.lambda_ == pytest.approx(lam, rel=1e-4)
    assert fit.sigma == pytest.approx(sigma, rel=1e-3, abs=1e-6)
    assert fit.kappa == pytest.approx(kappa, rel=1e-3, abs=1e-7)
    for n, x in points:
        assert fit.predict(n) == pytest.approx(x, rel=1e-6)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 64), st.floats(0, 1e7)), min_size=3, max_size=20, unique_by=lambda t: t[0]),
    st.floats(1e-3, 1e3),
)
def test_bounds_and_scale_equivariance_on_arbitrary_curves(points, factor):
    assume(max(x for _, x in points) > 0)
    fit = usl.fit(points)
    assert fit.sigma >= 0 and fit.kappa >= 0 and fit.lambda_ >= 0 and fit.rmse >= 0
    assert math.isfinite(fit.r2) and fit.r2 <= 1.0
    assert fit.points == len(points)
    # Arbitrary data can have a flat minimum where the parameters are poorly determined, so
    # equivariance is checked on what is well defined: the error and the fitted curve.
    scaled = usl.fit([(n, x * factor) for n, x in points])
    peak = max(x for _, x in points)
    assert scaled.rmse == pytest.approx(fit.rmse * factor, rel=1e-6, abs=1e-9 * peak * factor)
    for n, _ in points:
        assert scaled.predict(n) == pytest.approx(fit.predict(n) * factor, rel=1e-4, abs=1e-4 * peak * factor)


@settings(max_examples=100, deadline=None)
@given(params, grids, st.floats(1e-3, 1e3))
def test_parameters_are_unit_free_on_usl_curves(p, grid, factor):
    points = [(n, usl.model(n, *p)) for n in grid]
    fit = usl.fit(points)
    scaled = usl.fit([(n, x * factor) for n, x in points])
    assert scaled.sigma == pytest.approx(fit.sigma, rel=1e-6, abs=1e-9)
    assert scaled.kappa == pytest.approx(fit.kappa, rel=1e-6, abs=1e-9)
    assert scaled.lambda_ == pytest.approx(fit.lambda_ * factor, rel=1e-6)


_reals = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12)


@given(
    st.lists(st.tuples(st.floats(1, 4096), _reals), min_size=1, max_size=12),
    st.tuples(st.floats(0, 1e9), st.floats(0, 10) | st.just(0.0), st.floats(0, 1) | st.just(-0.0)),
)
def test_jacobian_columns_in_one_pass_are_the_per_point_ones_bit_for_bit(points, p):
    ns, xs = [n for n, _ in points], [x for _, x in points]
    rows = [usl._jacobian_row(n, *p) for n in ns]
    expected = (
        [r[0] for r in rows],
        [r[1] for r in rows],
        [r[2] for r in rows],
        [x - usl.model(n, *p) for n, x in zip(ns, xs, strict=False)],
    )
    got = usl._columns(ns, xs, p)
    assert [[v.hex() for v in col] for col in got] == [[v.hex() for v in col] for col in expected]
