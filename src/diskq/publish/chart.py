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

The block-size chart (:func:`size_chart`) has the size of each write on a log2 x axis and two
series over it, each on its own axis from zero: MB/s on the left (what a larger write gains)
and IOPS on the right (what it costs per write). A line joins consecutive sizes of the
profile (they are its steps); every measured size is a dot and a tick.
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
    y_title: str = "IOPS"
    # a second series on its own axis at the right (the block-size chart's IOPS); empty otherwise
    lines2: list[str] = field(default_factory=list)
    dots2: list[dict] = field(default_factory=list)  # x, y, title
    yticks2: list[dict] = field(default_factory=list)  # y, label
    y2_title: str | None = None


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


def scaling_chart(
    points: list[dict], *, top: float | None = None, sweep: bool = True, named: str | None = None
) -> Chart | None:
    """Chart geometry for curve rows (``numjobs``, ``iops``, ``iops_min``, ``iops_max``).

    ``top`` fixes the y range (to compare cache states of one device on the same scale);
    ``sweep`` is False for a curve that is not a sweep (legacy figures): dots only; ``named``
    is what the figures measured (:func:`diskq.analyse.methodclass.named`), in the y title.
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
        width=WIDTH,
        height=HEIGHT,
        lines=lines,
        bands=bands,
        whiskers=whiskers,
        dots=[{"x": sx(p["numjobs"]), "y": sy(p["iops"]), "numjobs": p["numjobs"], "iops": p["iops"]} for p in pts],
        xticks=x_ticks([p["numjobs"] for p in pts], sx),
        yticks=yt,
        plot={"x0": x0, "x1": x1, "y0": y0, "y1": y1},
        y_title=f"IOPS, {named}" if named else "IOPS",
    )


SIZE_X_TITLE = "bytes per write (then fdatasync), log\u2082 scale"
#: room at the right of the block-size chart for its second axis' labels
SIZE_RIGHT = 84


def _size_label(size: int) -> str:
    """``4096`` -> ``4K``, ``1048576`` -> ``1M``, ``512`` -> ``512``: short tick labels.

    >>> [_size_label(n) for n in (512, 4096, 131072, 1048576)]
    ['512', '4K', '128K', '1M']
    """
    for unit, scale in (("M", 1024 * 1024), ("K", 1024)):
        if size >= scale and size % scale == 0:
            return f"{size // scale}{unit}"
    return str(size)


def _axis(top: float):
    """(max of the axis, its ticks' values) from zero to a nice step above ``top``."""
    step = nice_step(top)
    ymax = math.ceil(top * 1.05 / step) * step or step
    return ymax, [i * step for i in range(int(round(ymax / step)) + 1)]


def size_chart(points: list[dict]) -> Chart | None:
    """Chart geometry for a median block-size profile (rows with ``block_size``, ``iops``,
    ``bw_bytes``): MB/s on the left axis, IOPS on the right; None without a point."""
    pts = sorted(
        (p for p in points if p.get("iops") is not None and p.get("bw_bytes") is not None),
        key=lambda p: p["block_size"],
    )
    if not pts:
        return None
    x0, x1, y0, y1 = LEFT, WIDTH - SIZE_RIGHT, HEIGHT - BOTTOM, TOP
    lo, hi = math.log2(pts[0]["block_size"]), math.log2(pts[-1]["block_size"])
    mb = [p["bw_bytes"] / 1e6 for p in pts]
    mb_max, mb_ticks = _axis(max(mb) or 1.0)
    io_max, io_ticks = _axis(max(p["iops"] for p in pts) or 1.0)

    def sx(n: float) -> float:
        return round((x0 + x1) / 2 if hi == lo else x0 + (math.log2(n) - lo) / (hi - lo) * (x1 - x0), 1)

    def sy(v: float, top: float) -> float:
        return round(y0 - v / top * (y0 - y1), 1)

    ticks: list[dict] = []
    for p in pts:  # every measured size; of two too close to be read side by side, the later one
        t = {"x": sx(p["block_size"]), "label": _size_label(p["block_size"]), "measured": True}
        if ticks and t["x"] - ticks[-1]["x"] < TICK_GAP:
            ticks.pop()
        ticks.append(t)
    dots = [
        {"x": sx(p["block_size"]), "y": sy(m, mb_max), "title": f"{_size_label(p['block_size'])}: {m:,.1f} MB/s"}
        for p, m in zip(pts, mb, strict=False)
    ]
    dots2 = [
        {
            "x": sx(p["block_size"]),
            "y": sy(p["iops"], io_max),
            "title": f"{_size_label(p['block_size'])}: {p['iops']:,.0f} IOPS",
        }
        for p in pts
    ]
    return Chart(
        width=WIDTH,
        height=HEIGHT,
        lines=[" ".join(f"{d['x']},{d['y']}" for d in dots)] if len(dots) > 1 else [],
        bands=[],
        dots=dots,
        xticks=ticks,
        yticks=[{"y": sy(v, mb_max), "label": _label(v)} for v in mb_ticks],
        plot={"x0": x0, "x1": x1, "y0": y0, "y1": y1},
        x_title=SIZE_X_TITLE,
        y_title="MB/s",
        lines2=[" ".join(f"{d['x']},{d['y']}" for d in dots2)] if len(dots2) > 1 else [],
        dots2=dots2,
        yticks2=[{"y": sy(v, io_max), "label": _label(v)} for v in io_ticks],
        y2_title="IOPS",
    )
