"""Geometry of the scaling-curve chart on a device page: numbers only, the template draws it.

x is the number of jobs on a log2 axis (sweeps double the job count), y is IOPS from zero.
The line joins the medians; the band spans the lowest and highest submission at each step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

WIDTH, HEIGHT = 640, 300
LEFT, RIGHT, TOP, BOTTOM = 72, 16, 16, 44


@dataclass
class Chart:
    width: int
    height: int
    line: str  # polyline points "x,y x,y ..."
    band: str  # polygon points, empty when every step has one submission
    dots: list[dict] = field(default_factory=list)  # x, y, numjobs, iops
    xticks: list[dict] = field(default_factory=list)  # x, label
    yticks: list[dict] = field(default_factory=list)  # y, label
    plot: dict = field(default_factory=dict)  # x0, x1, y0, y1 of the plotting area


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


def scaling_chart(points: list[dict], *, top: float | None = None) -> Chart | None:
    """Chart geometry for curve rows (``numjobs``, ``iops``, ``iops_min``, ``iops_max``).

    ``top`` fixes the y range (to compare cache states of one device on the same scale).
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

    line = " ".join(f"{sx(p['numjobs'])},{sy(p['iops'])}" for p in pts)
    band = ""
    if any(p["iops_max"] > p["iops_min"] for p in pts):
        upper = [f"{sx(p['numjobs'])},{sy(p['iops_max'])}" for p in pts]
        lower = [f"{sx(p['numjobs'])},{sy(p['iops_min'])}" for p in reversed(pts)]
        band = " ".join(upper + lower)
    xt = []
    n = 1
    while n <= pts[-1]["numjobs"]:
        if n >= pts[0]["numjobs"]:
            xt.append({"x": sx(n), "label": str(n)})
        n *= 2
    yt = [{"y": sy(v), "label": _label(v)} for v in (i * step for i in range(int(round(ymax / step)) + 1))]
    return Chart(
        width=WIDTH, height=HEIGHT, line=line, band=band,
        dots=[{"x": sx(p["numjobs"]), "y": sy(p["iops"]), "numjobs": p["numjobs"], "iops": p["iops"]} for p in pts],
        xticks=xt, yticks=yt, plot={"x0": x0, "x1": x1, "y0": y0, "y1": y1},
    )
