"""Scaling class of a numjobs sweep: linear, asymptotic or regressing, with knee and description.

Two quantities decide, both ratios (so the class does not depend on the unit or scale of IOPS):

* efficiency E(N) = (X(N)/N) / (X(N0)/N0): what each job gets relative to the smallest job
  count N0. The curve is *linear* while E stays at or above ``linear_efficiency``; the
  *knee* is the last job count before it falls below.
* drop = 1 - X(N_last) / peak: how far the largest tested job count falls below the peak.
  The curve is *regressing* when the *measured* drop is at least ``regress_drop``; smaller
  dips are noise around an asymptote. The measured points decide, not a fitted curve: a USL
  fit that overshoots a flat plateau would invent a regression, and one that smooths over a
  real collapse would hide it.

With at least ``usl_min_points`` points and a good USL fit, efficiency and knee are read off
the fitted curve at the measured job counts (method ``usl``), which averages out the noise of
single points; otherwise the measured points are used directly (method ``shape``). A fit is good when it
explains most of the variance (R² >= ``usl_min_r2``) and misses no measured point by more than
``usl_max_miss``: the smooth USL cannot follow a hard cap, and a fit that overshoots a plateau
would otherwise invent a regression. The thresholds are in
``criteria.toml``. The reported peak is always the highest *measured* point.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from diskq.analyse import criteria, plausibility, usl
from diskq.analyse.model import Peak, Scaling, UslFit
from diskq.analyse.source import SourceSweep, read_words
from diskq.errors import InvalidInput
from diskq.units import plural

MAX_JOBS = 4096
# A curve whose peak is more than this many times its first point is not a measurement.
_MAX_RANGE = 1e9
_POINT = re.compile(r"^(\d+):([^:]+)$")


def parse_points(args: list[str]) -> list[tuple[int, float]]:
    """``["1:5028", "2:2651"]`` -> ``[(1, 5028.0), (2, 2651.0)]``.

    Each argument holds one or more ``jobs:iops`` points, separated by commas or spaces.
    """
    out: list[tuple[int, float]] = []
    for arg in args:
        for token in re.split(r"[,\s]+", str(arg).strip()):
            if not token:
                continue
            m = _POINT.match(token)
            if not m:
                raise InvalidInput(
                    f"not a point: {_short(token)} (expected JOBS:IOPS, e.g. 4:12000)",
                    hint="give each point as jobs:iops, e.g. diskq classify 1:5028 2:2651 6:1088",
                )
            jobs = int(m.group(1))
            try:
                iops = float(m.group(2))
            except ValueError:
                raise InvalidInput(f"not a number of IOPS in {_short(token)}") from None
            out.append(_checked(jobs, iops))
    if not out:
        raise InvalidInput("no points given", hint="e.g. diskq classify 1:5028 2:2651 6:1088 8:745")
    return out


def classify(
    points: Sequence[tuple[int, float]], source: SourceSweep | None = None, review: plausibility.Review | None = None
) -> Scaling:
    """Classify a curve of ``(numjobs, iops)`` points (any order; at least two job counts).

    ``review`` is what the plausibility rule made of the curve (:func:`plausibility.review`):
    measured points are all classified, with its observations among the notes; a figure without
    raw output that conflicts with the 1-job figure is held out and listed in ``questionable``
    with the conflict. Without ``review`` the points are taken as figures without raw output (what
    ``diskq classify`` is given). At least two points must remain. ``source`` says what the
    curve's source states beyond its points: its highest point was the peak of a wider sweep
    (``peak_final``), and the contributor's words, which decide the class where two points
    cannot (``method = "contributor"``).

    >>> s = classify([(1, 5028), (2, 2651), (6, 1088), (8, 745), (10, 784)])
    >>> s.scaling, s.peak.numjobs, s.description
    ('regressing', 1, 'more jobs slow down')
    >>> s = classify([(1, 456), (2, 840)], SourceSweep(peak_final=True, words="2 jobs already saturate"))
    >>> s.scaling, s.method, s.description
    ('asymptotic', 'contributor', '2 jobs already saturate')
    """
    data = _validate(points)
    if review is None:
        review = plausibility.review(data)
    gone = {q.numjobs for q in review.held}
    data = [(n, x) for n, x in data if n not in gone]
    if len(data) < 2:
        raise InvalidInput(
            "fewer than two points to classify without a conflict: " + "; ".join(q.reason for q in review.held)
        )
    scaling = _classify_figures(data)
    scaling.questionable = list(review.held)
    if any(q.numjobs > data[-1][0] for q in review.held):  # larger job counts were given, held out
        scaling.notes = [
            n.replace("at the largest tested job count", "at the largest job count not in a conflict")
            for n in scaling.notes
        ]
    scaling.notes.extend(review.notes)
    if source is not None:
        _apply_source(scaling, data, source)
    return scaling


def _apply_source(scaling: Scaling, data: list[tuple[int, float]], source: SourceSweep) -> None:
    """What the source says beyond the points: a final peak, and the contributor's words where
    the figures cannot decide (two points) and do not contradict them."""
    last = data[-1][0]
    if source.peak_final and scaling.peak.numjobs == last:
        scaling.peak_final = True
        scaling.notes = [n for n in scaling.notes if not n.startswith("the peak is at the largest tested job count")]
        scaling.notes.append(f"the source measured beyond {last} jobs and IOPS did not rise: {last} jobs is the peak")
        if scaling.scaling == "linear":
            scaling.scaling, scaling.knee = "asymptotic", last
            scaling.description = f"linear up to ~{last} jobs, then no higher (the source's peak)"
    reading = read_words(source.words)
    if source.words:
        scaling.words = source.words
    if reading is None:
        return
    if len(data) > 2:
        if reading.scaling != scaling.scaling:
            scaling.notes.append(
                f"the contributor's words ({reading.words!r}) say {reading.scaling}: "
                "classified by the figures, which are enough to decide"
            )
        return
    figures = scaling.scaling
    if scaling.peak_final and figures == "asymptotic" and scaling.description.endswith("(the source's peak)"):
        figures = "linear"  # linear up to its last point by the figures alone
    crit = criteria.section("scaling")
    consistent = {
        "linear": figures == "linear" and not scaling.peak_final,
        "asymptotic": figures in ("linear", "asymptotic"),
        "regressing": figures == "regressing",
    }[reading.scaling]
    knee = reading.knee
    if knee is not None and not data[0][0] < knee <= last:
        consistent = False
    if not consistent:
        scaling.notes.append(
            f"the contributor's words ({reading.words!r}) contradict the two points: classified by the figures "
            f"(linear needs each job to keep {crit['linear_efficiency']:.0%}, regressing a drop of "
            f"{crit['regress_drop']:.0%} from the peak)"
        )
        return
    scaling.scaling, scaling.knee, scaling.description = reading.scaling, knee, reading.words
    scaling.method = "contributor"
    scaling.notes.append("two points cannot decide the shape between them: the contributor's words decide")


def _classify_figures(data: list[tuple[int, float]]) -> Scaling:
    crit = criteria.section("scaling")
    ns = [n for n, _ in data]
    measured = [x for _, x in data]
    peak_i = max(range(len(data)), key=lambda i: (measured[i], -i))
    peak = Peak(numjobs=ns[peak_i], iops=measured[peak_i])
    notes: list[str] = []

    fit, method, values = None, "shape", measured
    if len(data) >= crit["usl_min_points"]:
        fit = usl.fit(data)
        predicted = [fit.predict(n) for n in ns]
        miss = max(abs(p - x) / x for p, x in zip(predicted, measured, strict=False) if x > 0)
        if round(fit.r2, 6) < crit["usl_min_r2"]:
            notes.append(
                f"the USL fit explains too little of the curve (R² {fit.r2:.2f} < {crit['usl_min_r2']}): "
                "classified by shape"
            )
        elif _round(miss) > crit["usl_max_miss"]:
            notes.append(
                f"the USL fit misses a measured point by {miss:.0%} (more than {crit['usl_max_miss']:.0%}), "
                "e.g. a hard cap: classified by shape"
            )
        else:
            method, values = "usl", predicted
            notes.append(_usl_note(fit, ns[-1]))
    else:
        notes.append(
            f"{len(data)} points are too few for a USL fit (needs {crit['usl_min_points']}): classified by shape"
        )

    top = max(values)
    rel = [v / top for v in values]  # 0..1: keeps the arithmetic below far from overflow
    measured_drop = _round(1.0 - measured[-1] / peak.iops)
    regressing = measured_drop >= crit["regress_drop"]
    eff = [_round((rel[i] / ns[i]) / (rel[0] / ns[0])) for i in range(len(ns))]
    near_linear = [e >= crit["linear_efficiency"] for e in eff]
    knee_i = 0
    while knee_i + 1 < len(ns) and near_linear[knee_i + 1]:
        knee_i += 1

    if regressing:
        kind = "regressing"
        description = (
            "more jobs slow down"
            if peak_i == 0
            else f"peaks at {plural(peak.numjobs, 'job')}, then more jobs slow down"
        )
        notes.append(f"at {plural(ns[-1], 'job')} throughput is {measured_drop:.0%} below the peak")
    elif all(near_linear):
        kind = "linear"
        description = f"linear up to {plural(ns[-1], 'job')}, the most tested"
    else:
        kind = "asymptotic"
        description = _asymptotic_words(ns, measured, peak_i, knee_i, crit["capped_growth"])
    knee = None if kind == "linear" else ns[knee_i]
    if peak_i == len(ns) - 1 and kind != "regressing":
        notes.append(f"the peak is at the largest tested job count ({ns[-1]}): more jobs may go higher")
    return Scaling(scaling=kind, peak=peak, knee=knee, description=description, usl=fit, method=method, notes=notes)


def _asymptotic_words(ns: list[int], xs: list[float], peak_i: int, knee_i: int, capped_growth: float) -> str:
    if peak_i == 0:
        return f"{ns[0]} job already saturates" if ns[0] == 1 else f"{ns[0]} jobs already saturate"
    if knee_i == 0 and xs[0] > 0 and _round(xs[peak_i] / xs[0] - 1.0) <= capped_growth:
        # the best point is within noise of the first: more jobs did not really help
        return f"{ns[0]} job already saturates" if ns[0] == 1 else f"{ns[0]} jobs already saturate"
    if knee_i == 0:
        # Saturated by the second step only when that step is at most a doubling of jobs.
        return f"{ns[1]} jobs already saturate" if peak_i == 1 and ns[1] <= 2 * ns[0] else "asymptotic"
    knee_x = xs[knee_i]
    if knee_x > 0 and _round(xs[peak_i] / knee_x - 1.0) <= capped_growth:
        return f"linear up to ~{ns[knee_i]} jobs, then capped"
    return f"linear up to ~{ns[knee_i]} jobs, then asymptotic"


def _usl_note(fit: UslFit, largest: int) -> str:
    note = f"USL fit: sigma {fit.sigma:.4g}, kappa {fit.kappa:.3g}, lambda {fit.lambda_:.4g}, R² {fit.r2:.3f}"
    if fit.n_max is not None:
        where = "within" if fit.n_max <= largest else "beyond"
        note += f"; predicted peak at ~{fit.n_max:.1f} jobs ({where} the tested range)"
    return note


def _validate(points: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    try:
        items = list(points)
    except TypeError:
        raise InvalidInput("points must be a list of (jobs, iops) pairs") from None
    data: list[tuple[int, float]] = []
    for item in items:
        try:
            jobs, iops = item
        except (TypeError, ValueError):
            raise InvalidInput(f"not a (jobs, iops) pair: {_short(item)}") from None
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (jobs, iops)):
            raise InvalidInput(f"not a (jobs, iops) pair of numbers: {_short(item)}")
        if isinstance(jobs, float) and not (math.isfinite(jobs) and jobs.is_integer()):
            raise InvalidInput(f"jobs must be a whole number: {_short(item)}")
        try:
            iops = float(iops)
        except OverflowError:
            raise InvalidInput(f"IOPS must be a finite number >= 0: {_short(item)}") from None
        data.append(_checked(int(jobs), iops))
    data.sort()
    for (a, _), (b, _) in zip(data, data[1:], strict=False):
        if a == b:
            raise InvalidInput(f"numjobs {a} given twice: give each job count once")
    if len(data) < 2:
        raise InvalidInput("need points at two or more job counts to classify a curve")
    if data[0][1] <= 0:
        raise InvalidInput(f"no throughput at the smallest job count ({data[0][0]}): nothing to scale from")
    if max(x for _, x in data) / data[0][1] > _MAX_RANGE:
        raise InvalidInput(f"throughput at the smallest job count ({data[0][0]}) is implausibly small next to the peak")
    return data


def _checked(jobs: int, iops: float) -> tuple[int, float]:
    if not 1 <= jobs <= MAX_JOBS:
        raise InvalidInput(f"jobs must be between 1 and {MAX_JOBS}, got {jobs}")
    if not math.isfinite(iops) or iops < 0:
        raise InvalidInput(f"IOPS must be a finite number >= 0, got {iops}")
    return (jobs, iops)


def _round(ratio: float) -> float:
    """Ratios are compared with thresholds at 9 significant digits, so scaling all IOPS by a
    constant (which changes the last bits of a quotient) cannot flip a decision."""
    return float(f"{ratio:.9g}")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
