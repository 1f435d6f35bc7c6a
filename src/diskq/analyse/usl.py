"""Universal Scalability Law fit, in plain Python.

    X(N) = lambda * N / (1 + sigma * (N - 1) + kappa * N * (N - 1))

``sigma`` (contention) is the share of each commit that is serialised; ``kappa`` (coherency)
is the pairwise crosstalk that makes more writers *lose* throughput; ``lambda`` is the rate of
one writer. The fit minimises the squared error of X itself (not of a transformed quantity):

1. a linearised start: N / X = (1 + sigma*(N-1) + kappa*N*(N-1)) / lambda is a quadratic in N,
   solved by ordinary least squares;
2. Levenberg-Marquardt from there, with sigma and kappa kept >= 0 (a parameter sitting on its
   bound whose gradient points outwards is held there for that step).

The data are divided by their largest throughput before fitting so the three parameters are of
similar size and the result does not depend on the unit of X.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from diskq.analyse.model import UslFit
from diskq.errors import InvalidInput

_MAX_ITER = 500


def model(n: float, lam: float, sigma: float, kappa: float) -> float:
    """Throughput the USL predicts at ``n`` jobs."""
    return lam * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))


def n_max(sigma: float, kappa: float) -> float | None:
    """Job count of the highest predicted throughput, sqrt((1 - sigma) / kappa); None if unbounded."""
    if kappa <= 0 or sigma >= 1:
        return None
    return math.sqrt((1.0 - sigma) / kappa)


def fit(points: Sequence[tuple[float, float]]) -> UslFit:
    """Fit the USL to ``(jobs, throughput)`` points; needs at least 3 distinct job counts.

    >>> f = fit([(1, 100), (2, 190), (4, 340), (8, 520), (16, 600), (32, 560)])
    >>> round(f.sigma, 3), f.kappa > 0, f.r2 > 0.99
    (0.072, True, True)
    """
    data = _validate(points)
    scale = max(x for _, x in data)
    ns = [n for n, _ in data]
    xs = [x / scale for _, x in data]

    best: tuple[float, tuple[float, float, float]] | None = None
    for start in _starts(ns, xs):
        params = _levenberg_marquardt(ns, xs, start)
        cost = _cost(ns, xs, params)
        if best is None or cost < best[0]:
            best = (cost, params)
    assert best is not None
    lam, sigma, kappa = best[1]
    # Coefficients that change the curve by less than a part in a billion over the measured
    # range are noise of the arithmetic: report them as 0 (and no n_max far beyond any test).
    top = ns[-1]
    if sigma * (top - 1.0) < 1e-9:
        sigma = 0.0
    if kappa * top * (top - 1.0) < 1e-9:
        kappa = 0.0
    cost = _cost(ns, xs, (lam, sigma, kappa))

    mean = sum(xs) / len(xs)
    ss_tot = sum((x - mean) ** 2 for x in xs)
    if ss_tot > 0:
        r2 = 1.0 - cost / ss_tot
    else:
        r2 = 1.0 if cost <= 1e-24 else 0.0
    return UslFit(
        sigma=sigma,
        kappa=kappa,
        **{"lambda": lam * scale},
        n_max=n_max(sigma, kappa),
        r2=r2,
        rmse=math.sqrt(cost / len(xs)) * scale,
        points=len(data),
    )


def _validate(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    data: list[tuple[float, float]] = []
    for item in points:
        try:
            n, x = float(item[0]), float(item[1])
        except (TypeError, ValueError, IndexError):
            raise InvalidInput(f"not a (jobs, throughput) pair: {item!r}") from None
        if not (math.isfinite(n) and math.isfinite(x)) or n < 1 or x < 0:
            raise InvalidInput(f"USL fit needs jobs >= 1 and finite throughput >= 0, got {item!r}")
        data.append((n, x))
    if len({n for n, _ in data}) < 3:
        raise InvalidInput("USL fit needs at least 3 distinct job counts")
    if max(x for _, x in data) <= 0:
        raise InvalidInput("USL fit needs some throughput above zero")
    return sorted(data)


def _starts(ns: list[float], xs: list[float]) -> list[tuple[float, float, float]]:
    """The linearised least-squares estimate, and a plain fallback from the smallest job count."""
    n0, x0 = ns[0], xs[0]
    fallback_lam = max(x0 / n0, max(x / n for n, x in zip(ns, xs, strict=False)) * 0.5, 1e-12)
    starts = [(fallback_lam, 0.0, 0.0), (fallback_lam, 0.1, 0.001)]
    linear = _linearised(ns, xs)
    if linear is not None:
        starts.insert(0, linear)
    return starts


def _linearised(ns: list[float], xs: list[float]) -> tuple[float, float, float] | None:
    """Least squares of N/X = a + b*(N-1) + c*N*(N-1): lambda = 1/a, sigma = b/a, kappa = c/a."""
    rows = [(1.0, n - 1.0, n * (n - 1.0), n / x) for n, x in zip(ns, xs, strict=False) if x > 0]
    if len({r[1] for r in rows}) < 3:
        return None
    ata = [[sum(r[i] * r[j] for r in rows) for j in range(3)] for i in range(3)]
    aty = [sum(r[i] * r[3] for r in rows) for i in range(3)]
    sol = _solve(ata, aty)
    if sol is None or sol[0] <= 0 or not all(math.isfinite(v) for v in sol):
        return None
    a, b, c = sol
    return (1.0 / a, max(b / a, 0.0), max(c / a, 0.0))


def _cost(ns: list[float], xs: list[float], p: tuple[float, float, float]) -> float:
    lam, sigma, kappa = p  # model() written out: the fit calls this thousands of times
    return sum(
        [(x - lam * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))) ** 2 for n, x in zip(ns, xs, strict=False)]
    )


def _jacobian_row(n: float, lam: float, sigma: float, kappa: float) -> tuple[float, float, float]:
    """Partial derivatives of X(n) by lambda, sigma, kappa."""
    d = 1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0)
    return (n / d, -lam * n * (n - 1.0) / (d * d), -lam * n * n * (n - 1.0) / (d * d))


def _columns(ns: list[float], xs: list[float], p: tuple[float, float, float]) -> tuple[list[float], ...]:
    """The three columns of the Jacobian (:func:`_jacobian_row` of every point) and the residuals
    ``x - model(n, *p)``, in one pass: the same arithmetic without two calls per point."""
    lam, sigma, kappa = p
    j0, j1, j2, res = [], [], [], []
    for n, x in zip(ns, xs, strict=False):
        d = 1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0)  # also the denominator of model()
        j0.append(n / d)
        j1.append(-lam * n * (n - 1.0) / (d * d))
        j2.append(-lam * n * n * (n - 1.0) / (d * d))
        res.append(x - lam * n / d)
    return j0, j1, j2, res


def _levenberg_marquardt(
    ns: list[float], xs: list[float], start: tuple[float, float, float]
) -> tuple[float, float, float]:
    p = (max(start[0], 1e-12), max(start[1], 0.0), max(start[2], 0.0))
    cost = _cost(ns, xs, p)
    mu = 1e-3
    for _ in range(_MAX_ITER):
        j0, j1, j2, res = _columns(ns, xs, p)
        # J^T J is symmetric (a*b == b*a exactly): six sums, mirrored.
        s00, s11, s22 = sum([v * v for v in j0]), sum([v * v for v in j1]), sum([v * v for v in j2])
        s01 = sum([u * v for u, v in zip(j0, j1, strict=False)])
        s02 = sum([u * v for u, v in zip(j0, j2, strict=False)])
        s12 = sum([u * v for u, v in zip(j1, j2, strict=False)])
        jtj = [[s00, s01, s02], [s01, s11, s12], [s02, s12, s22]]
        jtr = [sum([v * r for v, r in zip(col, res, strict=False)]) for col in (j0, j1, j2)]
        # Hold sigma/kappa on their bound when the descent direction points below zero.
        free = [0] + [i for i in (1, 2) if not (p[i] <= 0.0 and jtr[i] <= 0.0)]
        improved = False
        while mu < 1e12:
            a = [[jtj[i][j] * (1.0 + mu if i == j else 1.0) + (1e-30 if i == j else 0.0) for j in free] for i in free]
            step = _solve(a, [jtr[i] for i in free])
            if step is None:
                mu *= 10.0
                continue
            trial = list(p)
            for i, s in zip(free, step, strict=False):
                trial[i] += s
            trial_p = (max(trial[0], 1e-12), max(trial[1], 0.0), max(trial[2], 0.0))
            trial_cost = _cost(ns, xs, trial_p)
            if trial_cost < cost:
                converged = (
                    cost - trial_cost <= 1e-15 * max(cost, 1e-300)
                    or max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(trial_p, p, strict=False)) < 1e-12
                )
                p, cost = trial_p, trial_cost
                mu = max(mu / 10.0, 1e-12)
                improved = True
                if converged:
                    return p
                break
            mu *= 10.0
        if not improved:
            break
    return p


def _solve(a: list[list[float]], b: list[float]) -> list[float] | None:
    """Gaussian elimination with partial pivoting; None for a singular system."""
    size = len(b)
    m = [list(row) + [v] for row, v in zip(a, b, strict=False)]
    for col in range(size):
        pivot, largest = col, abs(m[col][col])  # the first row with the largest magnitude
        for r in range(col + 1, size):
            if abs(m[r][col]) > largest:
                pivot, largest = r, abs(m[r][col])
        if abs(m[pivot][col]) < 1e-300 or not math.isfinite(m[pivot][col]):
            return None
        m[col], m[pivot] = m[pivot], m[col]
        top = m[col]
        for r in range(col + 1, size):
            row = m[r]
            f = row[col] / top[col]
            for c in range(col, size + 1):
                row[c] -= f * top[c]
    out = [0.0] * size
    for r in range(size - 1, -1, -1):
        row = m[r]
        out[r] = (row[size] - sum([row[c] * out[c] for c in range(r + 1, size)])) / row[r]
    for v in out:
        if not math.isfinite(v):
            return None
    return out
