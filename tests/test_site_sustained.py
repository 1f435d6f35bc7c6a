"""The sustained-write cliff on the site without a browser: the chart's geometry, the device
page's section and its figures as a table, the export."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diskq.database import sustained
from diskq.database.build import build
from diskq.database.synthetic import result_document, submission, write_submission
from diskq.database.synthetic_sustained import sustained_measurement, sustained_pair
from diskq.publish.site import build_site
from diskq.publish.sustained_chart import MAX_POINTS, sustained_chart

MODEL = "Crucial P3 Plus 2TB"


def _row(m: dict) -> dict:
    """A ``sustained`` row (as lookup gives it) of a synthetic measurement."""
    c = m["cliff"] or {}
    return {
        "bw_samples": m["bw_samples"],
        "sample_interval_ms": m["sample_interval_ms"],
        "cliff_found": c.get("found"),
        "cliff_at_bytes": c.get("at_bytes"),
        "cliff_drop_pct": c.get("drop_pct"),
        "cliff_before_bw_bytes": c.get("before_bw_bytes"),
        "cliff_after_bw_bytes": c.get("after_bw_bytes"),
    }


def _points(line: str) -> list[tuple[float, float]]:
    return [tuple(map(float, p.split(","))) for p in line.split()]


def test_the_cliff_is_marked_where_the_drop_starts_and_labelled_between_the_levels():
    late = sustained_measurement(seconds=60, cliff_at=40, seed=0)
    early = sustained_measurement(seconds=50, cliff_at=25, seed=1, after_bw=3e8)
    c = sustained_chart([_row(late), _row(early)])
    x0, x1, y0, y1 = (c.plot[k] for k in ("x0", "x1", "y0", "y1"))
    assert len(c.lines) == 2 and [len(_points(line)) for line in c.lines] == [60, 50]
    assert [m["at_bytes"] for m in c.marks] == [early["cliff"]["at_bytes"], late["cliff"]["at_bytes"]]
    # the last sample before the drop is drawn at the mark: the samples' running sum
    before_drop = _points(c.lines[1])[24]
    assert before_drop[0] == c.marks[0]["x"]
    assert (
        c.label["text"]
        == f"cliff at {sustained.gigabytes(early['cliff']['at_bytes'])}, \u2212{early['cliff']['drop_pct']:.0f}%"
    )
    after_level = _points(c.lines[1])[30][1]
    assert before_drop[1] < c.label["y"] < after_level  # between the two levels (y grows downwards)
    assert (c.x_title, c.y_title) == ("written (GB)", "GB/s")  # 1.8 GB/s: ticks of three characters
    assert all(x0 <= t["x"] <= x1 for t in c.xticks) and all(y1 <= t["y"] <= y0 for t in c.yticks)
    assert c.xticks[0]["label"] == "0" and c.yticks[0]["label"] == "0"


def test_a_write_without_a_cliff_has_no_mark_and_a_slow_one_reads_in_mb_per_s():
    c = sustained_chart([_row(sustained_measurement("fdatasync", seconds=30, cliff_at=None, before_bw=5.2e7))])
    assert c.marks == [] and c.label is None and c.y_title == "MB/s"
    assert sustained_chart([]) is None
    assert sustained_chart([{**_row(sustained_measurement(seconds=5)), "bw_samples": []}]) is None


def test_a_long_write_is_drawn_with_a_bounded_number_of_points():
    m = sustained_measurement(seconds=3600, cliff_at=1800, seed=3)
    (line,) = sustained_chart([_row(m)]).lines
    pts = _points(line)
    assert len(pts) == MAX_POINTS
    assert pts == sorted(pts, key=lambda p: p[0])


@given(
    st.lists(st.floats(min_value=0, max_value=8e9), min_size=1, max_size=700),
    st.sampled_from([250, 1000, 5000]),
    st.booleans(),
)
def test_every_point_and_mark_lies_inside_the_plot(samples, interval, cliff):
    row = {
        "bw_samples": samples,
        "sample_interval_ms": interval,
        "cliff_found": cliff,
        "cliff_at_bytes": int(sum(samples[: len(samples) // 2]) * interval / 1000),
        "cliff_drop_pct": 50.0,
        "cliff_before_bw_bytes": max(samples),
        "cliff_after_bw_bytes": min(samples),
    }
    c = sustained_chart([row])
    x0, x1, y0, y1 = (c.plot[k] for k in ("x0", "x1", "y0", "y1"))
    for x, y in _points(c.lines[0]):
        assert x0 <= x <= x1 and y1 <= y <= y0
    for m in c.marks:
        assert x0 <= m["x"] <= x1
    if c.label:
        assert y1 <= c.label["y"] <= y0 and x0 <= c.label["x"] <= x1


@pytest.fixture
def site(tmp_path):
    subs = tmp_path / "submissions"
    for seed, (seconds, at, one_job) in enumerate(
        [(60, 40, 21000), (50, 25, 21000), (40, 20, 21000), (30, 20, 100000)]
    ):
        # the last submission lies far outside the others (its 1-job IOPS 4.8x theirs): not aggregated
        write_submission(
            subs,
            submission(
                result_document(
                    MODEL,
                    {"on": {1: one_job + seed, 2: 38000, 4: 52000}},
                    protocol="nvme",
                    created=datetime(2025, 1, 1 + seed, tzinfo=UTC),
                    sustained=sustained_pair(seconds=seconds, cliff_at=at, seed=seed),
                )
            ),
        )
    write_submission(subs, submission(result_document("Micron 5300 MAX", {"on": {1: 9000, 2: 15000}})))
    build(subs, tmp_path / "devices.db")
    out = tmp_path / "_site"
    build_site(tmp_path / "devices.db", out, submissions=subs)
    return out


def _page(out, model: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-")
    (path,) = (out / "devices").glob(f"{slug}-*.html")
    return path.read_text()


def test_the_device_page_draws_each_variant_with_its_cliff_and_the_figures_as_a_table(site):
    html = _page(site, MODEL)
    assert html.count('<svg class="chart sustained-chart"') == 2
    seq = html[html.index('id="sustained-chart-sequential-on"') :]
    seq = seq[: seq.index("</svg>")]
    assert seq.count('<polyline class="line"') == 3 and seq.count('<line class="cliff"') == 3
    assert 'class="cliff-label"' in seq and "cliff at " in seq
    sync = html[html.index('id="sustained-chart-fdatasync-on"') :]
    sync = sync[: sync.index("</svg>")]
    assert sync.count('<polyline class="line"') == 3 and '<line class="cliff"' not in sync
    assert "fdatasync: 128 KiB writes at queue depth 1, write cache on" in html
    assert "sequential: 1 MiB writes at queue depth 32, write cache on" in html
    assert "No cliff within " in html and "Cliff after " in html
    table = html[html.index('<table class="sustained-figures">') :]
    table = table[: table.index("</table>")]
    assert table.count("<tr>") == 4 and "none" in table  # the fdatasync writes: no cliff
    table = html[html.index('<table class="sustained-figures">', html.index('id="sustained-chart-sequential-on"')) :]
    table = table[: table.index("</table>")]
    assert table.count("<tr>") == 4 and table.count("&rarr;") == 1 + 3  # the heading and each cliff
    assert 'href="../methodology.html#sustained"' in html
    assert 'id="sustained"' in (site / "methodology.html").read_text()


def test_the_writes_of_a_submission_not_aggregated_are_listed_and_not_drawn(site):
    html = _page(site, MODEL)
    section = html[html.index('id="sustained"') : html.index("<h2>Submissions</h2>")]
    listed = section[section.index("<p>Not aggregated:</p>") :]
    assert listed.count("<li>") == 2 and "its submission is not aggregated: 1-job IOPS 100,003" in listed
    assert "sustained" not in _page(site, "Micron 5300 MAX").split("<h2>Submissions</h2>")[0].lower()


def test_the_export_holds_the_figures_and_summary_without_the_samples(site):
    doc = json.loads((site / "devices.json").read_text())
    dev = next(d for d in doc["devices"] if d["model"] == MODEL)
    assert [f["variant"] for f in dev["sustained"]] == ["fdatasync", "sequential"]
    seq = dev["sustained"][1]
    assert seq["cliffs"] == seq["measurements"] == 3 and seq["summary"].startswith("cliff after ")
    assert "writes" not in seq and "chart" not in seq
    other = next(d for d in doc["devices"] if d["model"] == "Micron 5300 MAX")
    assert other["sustained"] == []
