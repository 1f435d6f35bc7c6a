"""The bench result table and verdict lines as a person reads them in an 80-column terminal."""

from __future__ import annotations

import pytest
from rich.console import Console

from diskq.analyse import annotate
from diskq.cli._latency import _us
from diskq.cli._render import result_table, verdict_lines
from diskq.result import Device, Latency, Method, Point, ResultDocument, Run

# A curve of the community table's Samsung PM883 (1 job 4 500 IOPS, peak 41 000 at 16 jobs in the
# seed's notes), with latencies spanning microseconds to seconds.
CURVE = [(1, 4500.0), (2, 9200.0), (4, 17800.0), (8, 31000.0), (16, 41000.0), (32, 40500.0)]


def _doc() -> ResultDocument:
    points = [
        Point(
            numjobs=n,
            iops=iops,
            bw_bytes=iops * 4096,
            total_ios=int(iops * 20),
            runtime_ms=20000,
            lat_us=Latency(mean=21.4 * n),
            sync_lat_us=Latency(mean=180.0 * n, p99=950.0 * n, p999=38000.0 * n),
        )
        for n, iops in CURVE
    ]
    run = Run(write_cache="on", cache_mechanism="hdparm", points=points)
    doc = ResultDocument(
        device=Device(
            model="SAMSUNG MZ7LH960HAJR-00005", firmware="HXT7404Q", protocol="ata", media="ssd", path="/dev/sdb"
        ),
        method=Method(),
        runs=[run],
    )
    return annotate(doc)


def _render(doc: ResultDocument, width: int) -> str:
    console = Console(width=width, record=True, force_terminal=False, color_system=None)
    result_table(doc, console)
    return console.export_text()


@pytest.mark.parametrize("width", [80, 120, 200])
def test_every_figure_is_shown_whole_at_any_usual_width(width):
    text = _render(_doc(), width)
    assert "…" not in text
    for figure in ("4,500", "41,000", "40,500", "167.9", "21µs", "180µs", "950µs", "30.4ms", "1.22s"):
        assert figure in text, figure
    assert max(len(line) for line in text.splitlines() if "│" in line) <= width
    # the peak row is marked, and only it
    assert [line for line in text.splitlines() if "▶" in line][0].split("│")[1].strip() == "▶ 16"
    assert text.count("▶") == 1


def test_latency_cells_stay_short():
    cells = [_us(v) for v in (0.4, 1, 999, 1000, 3842, 11990, 99999, 574100, 999999, 1200000, 86_400e6)]
    assert cells[:10] == ["0µs", "1µs", "999µs", "1.00ms", "3.84ms", "12.0ms", "100.0ms", "574ms", "1000ms", "1.20s"]
    assert all(len(c) <= 7 for c in cells[:10])
    assert _us(None) == "-"


def test_osds_per_device_limited_by_the_sweep_reads_as_a_lower_bound():
    doc = _doc()
    # 32 OSDs would each still get 1 266 commits/s, 4x what an HDD OSD needs: "at least 32", once the
    # 1-job rate makes the Ceph WAL/DB tier good (a marginal one allows at most 2 OSDs)
    doc.runs[0].points[0].iops = 6000.0
    annotate(doc)
    assert doc.verdicts.osds_per_device.n == 32 and doc.verdicts.osds_per_device.limited_by_sweep
    # a sweep that ended at 8 jobs: 8 OSDs still get 3 875 commits/s each, so the answer is "at least 8"
    doc.runs[0].points = doc.runs[0].points[:4]
    annotate(doc)
    osds = doc.verdicts.osds_per_device
    assert osds.limited_by_sweep and osds.n == 8
    line = next(line for line in verdict_lines(doc.verdicts) if line.startswith("OSDs per device"))
    assert "at least 8" in line


def test_osds_per_device_inside_the_sweep_is_a_plain_number():
    doc = _doc()
    for p in doc.runs[0].points:  # a drive that stops scaling: at 8+ jobs each OSD gets < 315 commits/s
        p.iops = {1: 5100.0, 2: 5150.0, 4: 5200.0}.get(p.numjobs, 1000.0)
    annotate(doc)
    osds = doc.verdicts.osds_per_device
    assert not osds.limited_by_sweep and osds.n == 4
    line = next(line for line in verdict_lines(doc.verdicts) if line.startswith("OSDs per device"))
    assert "[bold]4[/]" in line and "at least" not in line and "1300 commits/s" in line


def test_a_drive_too_slow_for_one_osd_reads_none():
    doc = _doc()
    for p in doc.runs[0].points:
        p.iops = 200.0 * p.numjobs**0.5
    annotate(doc)
    line = next(line for line in verdict_lines(doc.verdicts) if line.startswith("OSDs per device"))
    assert "[bold]none[/]" in line and "below the 315 one OSD needs" in line


def test_the_sign_command_is_quoted_for_the_shell():
    from pathlib import Path

    from diskq.cli.bench import sign_command

    assert (
        sign_command(Path("/tmp/r.json")) == "  diskq sign /tmp/r.json -f ~/.ssh/id_ed25519 --github YOUR_GITHUB_LOGIN"
    )
    assert "'/root/my result; rm -rf x.json'" in sign_command(Path("/root/my result; rm -rf x.json"))


def test_the_scaling_line_does_not_repeat_a_description_that_is_the_class():
    doc = _doc()
    assert "scaling: asymptotic — " in _render(doc, 120)
    doc.runs[0].scaling = doc.runs[0].scaling.model_copy(update={"description": "asymptotic"})
    text = _render(doc, 120)
    assert "scaling: asymptotic\n" in text and "asymptotic — asymptotic" not in text


def test_marks_beside_the_bar_never_cut_a_figure_at_80_columns_or_in_a_pipe():
    """An interrupted point and one in a conflict add words beside the bar; at 80 columns and when
    the output is piped (not a terminal: rich's 80 columns) they once squeezed the figures to
    ``j…`` and ``13,…``. The marks wrap instead; every figure stays whole."""
    import io

    doc = _doc()
    for p, iops in zip(doc.runs[0].points, (13500.0, 27000.0, 52000.0, 91000.0, 135000.0, 13100.0), strict=False):
        p.iops, p.bw_bytes = iops, iops * 4096
    doc.runs[0].points[-1].interrupted = True
    doc.runs[0].points.append(
        Point(
            numjobs=3,
            iops=140000.0,
            bw_bytes=140000.0 * 4096,
            total_ios=2_800_000,
            runtime_ms=20000,
            lat_us=Latency(mean=64.0),
            sync_lat_us=Latency(mean=540.0, p99=2850.0, p999=114000.0),
        )
    )
    annotate(doc)
    piped = io.StringIO()
    pipe_console = Console(file=piped, color_system=None)
    assert not pipe_console.is_terminal
    result_table(doc, pipe_console)
    for text in (_render(doc, 80), piped.getvalue()):
        rows = [line for line in text.splitlines() if "│" in line or "┃" in line]
        assert not any("…" in line for line in rows)
        assert "jobs" in rows[0] and "sync p99" in rows[0] and "p99.9" in rows[0]
        for figure in ("13,500", "135,000", "140,000", "13,100", "553.0", "342µs", "15.2ms", "608ms", "1.22s"):
            assert figure in text, figure
        assert "(interrupted)" in text and "≠ conflict" in text
        assert max(len(line) for line in rows) <= 80
