"""Geometry of the scaling-curve chart on a device page: numbers only, the template draws it.

x is the number of jobs on a log2 axis (sweeps double the job count), y is IOPS from zero.
Every measured job count is a dot. A line joins two measured job counts only where they are
neighbours in a sweep (the second at most twice the first, as a sweep that doubles or refines
its steps measures them): a line through job counts never measured would show figures nobody
measured. A curve that is not a sweep (a legacy row gives a 1-job figure and its peak only) is
drawn as dots alone. The band spans the lowest and highest submission at each step of a joined
run; a lone dot with a spread gets a vertical whisker instead.

Ticks on x are the powers of two in range and every measured job count (a sweep ending at 15
jobs has a tick at 15); a power of two too close to a measured count to be read beside it is
left out. Margins leave room for the labels at the larger type size the stylesheet uses on
narrow screens, where the chart is drawn at about half its width.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

WIDTH, HEIGHT = 640, 320
LEFT, RIGHT, TOP, BOTTOM = 84, 24, 16, 72
#: the least distance, in chart units, between two x tick labels (two or three digits at the
#: largest type size of the stylesheet)
TICK_GAP = 44
#: the largest ratio between two measured job counts joined by a line (a doubling sweep's step)
SWEEP_STEP = 2
X_TITLE = "parallel jobs (numjobs), log\u2082 scale"


@dataclass
class Chart:
    width: int
    height: int
    lines: list[str]  # one polyline ("x,y x,y ...") per run of sweep neighbours
    bands: list[str]  # one polygon per run whose submissions spread
    whiskers: list[dict] = field(default_factory=list)  # x, y_lo, y_hi of a lone dot's spread
    dots: list[dict] = field(default_factory=list)  # x, y, numjobs, iops
    xticks: list[dict] = field(default_factory=list)  # x, label, measured
    yticks: list[dict] = field(default_factory=list)  # y, label
    plot: dict = field(default_factory=dict)  # x0, x1, y0, y1 of the plotting area
    x_title: str = X_TITLE


def nice_step(top: float, ticks: int = 5) -> float:
    """A 1/2/5 x 10^k step giving about ``ticks`` gridlines up to ``top``.

    >>> nice_step(64235), nice_step(870), nice_step(1)
    (20000.0, 200.0, 0.2)
    """
    if top <= 0:
        return 1.0
    raw = top / ticks
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * mag:
            return float(m * mag)
    return float(10 * mag)  # pragma: no cover


def _label(v: float) -> str:
    if v >= 1e6:
        return f"{v / 1e6:g}M"
    if v >= 1e3:
        return f"{v / 1e3:g}k"
    return f"{v:g}"


def runs(numjobs: list[int], *, sweep: bool = True) -> list[list[int]]:
    """Indexes of ``numjobs`` (ascending) grouped into runs that a line may join.

    >>> runs([1, 2, 4, 8, 12, 16]), runs([1, 15]), runs([1, 2, 4], sweep=False)
    ([[0, 1, 2, 3, 4, 5]], [[0], [1]], [[0], [1], [2]])
    """
    out: list[list[int]] = []
    for i, n in enumerate(numjobs):
        if sweep and out and n <= SWEEP_STEP * numjobs[out[-1][-1]]:
            out[-1].append(i)
        else:
            out.append([i])
    return out


def x_ticks(measured: list[int], sx) -> list[dict]:
    """Tick marks: every measured job count, and the powers of two in range that are not too
    close to one of them."""
    ticks = {n: {"x": sx(n), "label": str(n), "measured": True} for n in measured}
    n = 1
    while n <= measured[-1]:
        if n >= measured[0] and n not in ticks and all(abs(sx(n) - t["x"]) >= TICK_GAP for t in ticks.values()):
            ticks[n] = {"x": sx(n), "label": str(n), "measured": False}
        n *= 2
    kept: list[dict] = []
    for n in sorted(ticks):  # measured counts closer than a label's width: keep the later one
        if kept and ticks[n]["x"] - kept[-1]["x"] < TICK_GAP:
            kept.pop()
        kept.append(ticks[n])
    return kept


def scaling_chart(points: list[dict], *, top: float | None = None, sweep: bool = True) -> Chart | None:
    """Chart geometry for curve rows (``numjobs``, ``iops``, ``iops_min``, ``iops_max``).

    ``top`` fixes the y range (to compare cache states of one device on the same scale);
    ``sweep`` is False for a curve that is not a sweep (legacy figures): dots only.
    """
    pts = sorted((p for p in points if p["iops"] is not None), key=lambda p: p["numjobs"])
    if not pts:
        return None
    x0, x1, y0, y1 = LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP
    lo, hi = math.log2(pts[0]["numjobs"]), math.log2(pts[-1]["numjobs"])
    top = top or max(p["iops_max"] for p in pts)
    step = nice_step(top)
    ymax = math.ceil(top * 1.05 / step) * step or step

    def sx(n: float) -> float:
        return round((x0 + x1) / 2 if hi == lo else x0 + (math.log2(n) - lo) / (hi - lo) * (x1 - x0), 1)

    def sy(v: float) -> float:
        return round(y0 - v / ymax * (y0 - y1), 1)

    lines, bands, whiskers = [], [], []
    for run in runs([p["numjobs"] for p in pts], sweep=sweep):
        rp = [pts[i] for i in run]
        spread = any(p["iops_max"] > p["iops_min"] for p in rp)
        if len(rp) == 1:
            if spread:
                p = rp[0]
                whiskers.append({"x": sx(p["numjobs"]), "y_lo": sy(p["iops_min"]), "y_hi": sy(p["iops_max"])})
            continue
        lines.append(" ".join(f"{sx(p['numjobs'])},{sy(p['iops'])}" for p in rp))
        if spread:
            upper = [f"{sx(p['numjobs'])},{sy(p['iops_max'])}" for p in rp]
            lower = [f"{sx(p['numjobs'])},{sy(p['iops_min'])}" for p in reversed(rp)]
            bands.append(" ".join(upper + lower))
    yt = [{"y": sy(v), "label": _label(v)} for v in (i * step for i in range(int(round(ymax / step)) + 1))]
    return Chart(
        width=WIDTH, height=HEIGHT, lines=lines, bands=bands, whiskers=whiskers,
        dots=[{"x": sx(p["numjobs"]), "y": sy(p["iops"]), "numjobs": p["numjobs"], "iops": p["iops"]} for p in pts],
        xticks=x_ticks([p["numjobs"] for p in pts], sx), yticks=yt,
        plot={"x0": x0, "x1": x1, "y0": y0, "y1": y1},
    )
