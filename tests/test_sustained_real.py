"""Real sustained writes on a loop device through the database, ``diskq lookup`` and the site:
what fio wrote and logged is what every stage shows."""

from __future__ import annotations

import json
import sqlite3

import pytest

from diskq.database.build import build
from diskq.database.lookup import lookup
from diskq.database.synthetic import result_document, submission, write_submission
from diskq.publish.site import build_site
from tests.conftest import needs_fio
from tests.sustained_fio import measure, read_bw_log

pytestmark = [needs_fio]

MODEL = "Linux loop device"


def test_read_bw_log_reads_kib_per_second_as_bytes():
    """fio 3.33's log lines (from the loop-device run of this file's test), time in ms first."""
    text = "250, 181248, 1, 0, 0\n500, 349184, 1, 0, 0\n\n"
    assert read_bw_log(text) == [181248 * 1024.0, 349184 * 1024.0]


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    """One submission holding two real sustained writes (2 s of each variant) on a 64 MiB loop device."""
    from tests.conftest import HAVE_LOOP, _reset_write_cache

    if not HAVE_LOOP:
        pytest.skip("needs root, losetup and /dev/loop-control")
    import subprocess

    root = tmp_path_factory.mktemp("sustained-real")
    backing = root / "loop.img"
    with open(backing, "wb") as f:
        f.truncate(64 * 1024 * 1024)
    dev = subprocess.run(
        ["losetup", "--find", "--show", str(backing)], check=True, capture_output=True, text=True
    ).stdout.strip()
    try:
        _reset_write_cache(dev)
        measurements = [measure(dev, "fdatasync", 2, root), measure(dev, "sequential", 2, root)]
    finally:
        _reset_write_cache(dev)
        subprocess.run(["losetup", "-d", dev], capture_output=True)
    doc = result_document(MODEL, {"on": {1: 3000, 2: 5200}}, protocol="unknown", sustained=measurements)
    doc["device"]["path"] = dev
    subs = root / "submissions"
    write_submission(subs, submission(doc))
    db = root / "devices.db"
    report = build(subs, db)
    assert report.skipped == [], report.skipped
    out = root / "_site"
    build_site(db, out, submissions=subs)
    return measurements, db, out


def test_the_database_holds_what_fio_wrote_and_logged(real):
    measurements, db, _ = real
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    rows = [dict(r) for r in con.execute("SELECT * FROM sustained ORDER BY seq")]
    figures = [dict(r) for r in con.execute("SELECT * FROM device_sustained ORDER BY variant")]
    con.close()
    assert [r["variant"] for r in rows] == ["fdatasync", "sequential"]
    for row, m in zip(rows, measurements, strict=False):
        write = m["fio"]["jobs"][0]["write"]
        assert row["written_bytes"] == write["io_bytes"] > 0 and row["runtime_ms"] == write["runtime"]
        assert json.loads(row["bw_samples"]) == m["bw_samples"] and len(m["bw_samples"]) >= 4
        assert row["write_cache"] == "on" and row["cache_mechanism"] == "sysfs"
    assert [(f["variant"], f["knob"], f["measurements"]) for f in figures] == [
        ("fdatasync", "kernel", 1),
        ("sequential", "kernel", 1),
    ]
    for f, m in zip(figures, measurements, strict=False):
        assert f["written_bytes_max"] == m["written_bytes"] and f["bw_bytes"] == m["bw_bytes"]
        found = bool((m["cliff"] or {}).get("found"))
        assert f["cliffs"] == int(found)


def test_lookup_and_the_device_page_show_the_real_writes(real):
    measurements, db, out = real
    (match,) = lookup(db, "loop device")
    assert [f["variant"] for f in match.sustained] == ["fdatasync", "sequential"]
    for f, m in zip(match.sustained, measurements, strict=False):
        (counted,) = f["writes"]
        assert counted["bw_samples"] == m["bw_samples"]
        if not f["cliffs"]:
            assert f["summary"].startswith("no cliff within ")
    (page,) = (out / "devices").glob("linux-loop-device-*.html")
    html = page.read_text()
    for m in measurements:
        chart = html[html.index(f'id="sustained-chart-{m["variant"]}-on-kernel"') :]
        chart = chart[: chart.index("</svg>")]
        (line,) = [part.split('"')[0] for part in chart.split('<polyline class="line" points="')[1:]]
        assert len(line.split()) == len(m["bw_samples"])
    assert "write cache on (kernel knob)" in html
