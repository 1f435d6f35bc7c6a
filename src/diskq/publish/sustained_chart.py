"""Geometry of the sustained-write chart on a device page: numbers only, the template draws it.

x is the amount written, in decimal GB (or MB for short writes) from zero; y is the throughput
in MB/s (GB/s from 1 GB/s on) from zero, as fio's bandwidth log gave it per sample interval. Each counted measurement of
one variant and cache setting is a line: a sample is drawn where its interval ends, at the bytes
written by then (:func:`positions`), so a cliff at ``at_bytes`` sits
where the last sample before the drop is drawn. Every cliff found is a dashed vertical mark; the
device's earliest one carries its label (where, and how far the throughput fell). Long writes
are averaged into at most :data:`MAX_POINTS` points per line: a line of 36 000 one-second
samples would weigh more than the rest of the page. Sizes and margins are those of the scaling
chart (:mod:`diskq.publish.chart`), so the stylesheet treats both alike on narrow screens.

For a terminal (``diskq lookup``) the same samples are a line of block characters (:func:`sparkline`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from diskq.database.sustained import gigabytes
from diskq.publish.chart import BOTTOM, HEIGHT, LEFT, RIGHT, TOP, WIDTH, nice_step

#: the most points one line is drawn with
MAX_POINTS = 320
#: chart units a label is kept away from its mark
LABEL_GAP = 8


@dataclass
class SustainedChart:
    width: int
    height: int
    lines: list[str]  # one polyline ("x,y x,y ...") per measurement
    marks: list[dict]  # x of every cliff found, with its label (the earliest only)
    xticks: list[dict] = field(default_factory=list)  # x, label
    yticks: list[dict] = field(default_factory=list)  # y, label
    plot: dict = field(default_factory=dict)  # x0, x1, y0, y1 of the plotting area
    label: dict | None = None  # x, y, anchor, text of the earliest cliff's label
    x_title: str = "written (GB)"
    y_title: str = "MB/s"


def positions(samples: list[float], interval_ms: int) -> list[float]:
    """Bytes written by the end of each sample interval: the running sum of throughput x interval.

    >>> positions([100.0, 50.0, 50.0], 1000)
    [100.0, 150.0, 200.0]
    """
    out, total = [], 0.0
    for bw in samples:
        total += bw * interval_ms / 1000
        out.append(total)
    return out


def buckets(values: list[float], width: int) -> list[float]:
    """``values`` averaged into at most ``width`` consecutive buckets of (nearly) equal length.

    >>> buckets([1.0, 3.0, 5.0, 7.0], 2), buckets([2.0, 4.0], 5)
    ([2.0, 6.0], [2.0, 4.0])
    """
    if len(values) <= width:
        return list(values)
    out = []
    for i in range(width):
        part = values[i * len(values) // width : (i + 1) * len(values) // width]
        out.append(sum(part) / len(part))
    return out


SPARKS = " \u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588"


def sparkline(values: list[float], width: int = 48, *, top: float | None = None) -> str:
    """A line of block characters for a terminal, from zero to ``top`` (default: the highest
    value; give the same ``top`` to lines that are to be compared).

    >>> sparkline([10.0, 10.0, 5.0, 0.0]), sparkline([10.0, 5.0], top=20.0)
    ('\u2588\u2588\u2584 ', '\u2584\u2582')
    """
    vals = buckets(values, width)
    top = max(vals, default=0.0) if top is None else top
    if top <= 0:
        return " " * len(vals)
    return "".join(SPARKS[round(v / top * (len(SPARKS) - 1))] for v in vals)


def _tick(v: float) -> str:
    return f"{v:,.0f}" if v >= 10 or v == int(v) else f"{v:g}"


def sustained_chart(measurements: list[dict]) -> SustainedChart | None:
    """Chart geometry for measurements (``bw_samples``, ``sample_interval_ms`` and the cliff
    columns of the ``sustained`` table); None when none has a sample."""
    series = []
    for m in measurements:
        samples = [float(v) for v in m["bw_samples"]]
        if samples:
            at = positions(samples, m["sample_interval_ms"])
            width = min(len(samples), MAX_POINTS)
            series.append((m, buckets(at, width), buckets(samples, width)))
    if not series:
        return None
    written = max(xs[-1] for _, xs, _ in series)
    scale, unit = (1e9, "GB") if written >= 1e9 else (1e6, "MB")
    x_top = max(written / scale, 1e-9)
    x_step = nice_step(x_top, 4)
    x_max = math.ceil(x_top / x_step) * x_step
    y_top = max(max(ys) for _, _, ys in series)
    y_scale, y_unit = (1e9, "GB/s") if y_top >= 1e9 else (1e6, "MB/s")  # tick labels of three characters at most
    y_top /= y_scale
    y_step = nice_step(y_top) if y_top > 0 else 1.0
    y_max = math.ceil(y_top * 1.05 / y_step) * y_step or y_step
    x0, x1, y0, y1 = LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP

    def sx(b: float) -> float:
        return round(x0 + b / scale / x_max * (x1 - x0), 1)

    def sy(bw: float) -> float:
        return round(y0 - bw / y_scale / y_max * (y0 - y1), 1)

    lines = [" ".join(f"{sx(x)},{sy(y)}" for x, y in zip(xs, ys, strict=False)) for _, xs, ys in series]
    cliffs = sorted(
        (m for m, _, _ in series if m.get("cliff_found") and m.get("cliff_at_bytes") is not None),
        key=lambda m: m["cliff_at_bytes"],
    )
    marks = [
        {"x": sx(m["cliff_at_bytes"]), "at_bytes": m["cliff_at_bytes"], "drop_pct": m.get("cliff_drop_pct")}
        for m in cliffs
    ]
    label = None
    if marks:
        first = marks[0]
        drop = f", \u2212{first['drop_pct']:.0f}%" if first["drop_pct"] is not None else ""
        right = first["x"] > (x0 + x1) / 2  # the label reads away from the nearer edge
        # halfway between the levels before and after the drop: left of the mark the line runs
        # above it, right of the mark below it, so the label never sits on the line of its own write
        m = cliffs[0]
        levels = [v for v in (m.get("cliff_before_bw_bytes"), m.get("cliff_after_bw_bytes")) if v is not None]
        y = sy(sum(levels) / len(levels)) if len(levels) == 2 else (y0 + y1) / 2
        label = {
            "x": first["x"] - LABEL_GAP if right else first["x"] + LABEL_GAP,
            "y": y,
            "anchor": "end" if right else "start",
            "text": f"cliff at {gigabytes(first['at_bytes'])}{drop}",
        }
    xticks = [{"x": sx(i * x_step * scale), "label": _tick(i * x_step)} for i in range(int(round(x_max / x_step)) + 1)]
    yticks = [
        {"y": sy(i * y_step * y_scale), "label": _tick(i * y_step)} for i in range(int(round(y_max / y_step)) + 1)
    ]
    return SustainedChart(
        width=WIDTH,
        height=HEIGHT,
        lines=lines,
        marks=marks,
        xticks=xticks,
        yticks=yticks,
        plot={"x0": x0, "x1": x1, "y0": y0, "y1": y1},
        label=label,
        x_title=f"written ({unit})",
        y_title=y_unit,
    )
