"""check_figures: figures against raw fio data, Little's law, IOPS x 4 KiB, interface limits."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diskq.result import Device, Latency, Method, Peak, Point, ResultDocument, Run
from diskq.submission.figures import (
    _close,
    _latency_problems,
    check_figures,
    link_limit,
)
from diskq.submission.fiojson import _options, _text
from tests.test_submission_support import HAVE_FIO, fio_runs, result_from

needs_fio = pytest.mark.skipif(not HAVE_FIO, reason="needs fio")


def _doc(points: list[Point], device: Device | None = None, **method) -> ResultDocument:
    best = max(points, key=lambda p: p.iops)
    return ResultDocument(
        device=device or Device(protocol="unknown"),
        method=Method(id="community-fio-ceph-iops", version=1, **method),
        runs=[Run(write_cache="off", points=points, peak=Peak(numjobs=best.numjobs, iops=best.iops))],
    )


def _pt(numjobs: int, iops: float, lat_us: float | None = None, sync_us: float | None = None, **kw) -> Point:
    return Point(
        numjobs=numjobs,
        iops=iops,
        bw_bytes=kw.pop("bw", iops * 4096),
        total_ios=kw.pop("total_ios", 0),
        runtime_ms=kw.pop("runtime_ms", 0),
        lat_us=Latency(mean=lat_us),
        sync_lat_us=Latency(mean=sync_us) if sync_us is not None else None,
        **kw,
    )


def _fields(doc) -> list[str]:
    return [p.field for p in check_figures(doc)]


@needs_fio
def test_real_runs_have_no_problems():
    assert check_figures(result_from(fio_runs())) == []


@needs_fio
@pytest.mark.parametrize(
    "edit, field, words",
    [
        (lambda p: setattr(p, "iops", p.iops * 1.01), "iops", "does not match fio's"),
        (lambda p: setattr(p, "total_ios", p.total_ios + 5), "total_ios", "does not match fio's"),
        (lambda p: setattr(p, "runtime_ms", p.runtime_ms + 1), "runtime_ms", "does not match fio's"),
        (lambda p: setattr(p.lat_us, "mean", p.lat_us.mean * 0.5), "lat_us.mean", "does not match fio's"),
        (lambda p: setattr(p.lat_us, "p99", p.lat_us.p99 * 1.5 + 10), "lat_us.p99", "does not match fio's"),
        (lambda p: setattr(p, "numjobs", 3), "numjobs", "fio ran 1"),
        (lambda p: p.fio["jobs"][0].update(error=5), "fio", "fio job reported error 5"),
        (lambda p: p.fio["global options"].update(rw="randwrite"), "fio", "rw=randwrite (needs write)"),
        (lambda p: p.fio["global options"].pop("fdatasync"), "fio", "fdatasync=(unset) (needs 1)"),
        (lambda p: p.fio.update(jobs="none"), "fio", "no list of job objects"),
    ],
)
def test_figures_that_disagree_with_raw_fio_data(edit, field, words):
    doc = result_from(fio_runs())
    edit(doc.runs[0].points[0])
    problems = [p for p in check_figures(doc) if p.field == f"result.runs[0].points[0].{field}"]
    assert problems and any(words in p.message for p in problems), [str(p) for p in check_figures(doc)]


def test_littles_law_at_iodepth_1():
    # one job, 800 + 200 us per write+fdatasync: at most ~1000 IOPS
    assert _fields(_doc([_pt(1, 990.0, 800, 200)])) == []
    over = check_figures(_doc([_pt(1, 5000.0, 800, 200)]))
    assert [p.field for p in over] == ["result.runs[0].points[0].iops"] and "Little's law" in over[0].message
    under = check_figures(_doc([_pt(1, 100.0, 800, 200)]))
    assert "far below" in under[0].message
    # short latencies: CPU overhead may dominate, so only the upper bound is checked
    assert _fields(_doc([_pt(4, 2000.0, 20, 30)])) == []
    # four jobs may complete four times as many
    assert _fields(_doc([_pt(4, 3950.0, 800, 200)])) == []


@given(
    numjobs=st.integers(1, 256),
    service_us=st.floats(min_value=5, max_value=50_000),
    efficiency=st.floats(min_value=0.4, max_value=1.0),
)
def test_consistent_points_pass_and_impossible_ones_fail(numjobs, service_us, efficiency):
    possible = numjobs * 1e6 / service_us * efficiency
    assert _fields(_doc([_pt(numjobs, possible, service_us * 0.6, service_us * 0.4)])) == []
    impossible = numjobs * 1e6 / service_us * 1.5
    assert "result.runs[0].points[0].iops" in _fields(
        _doc([_pt(numjobs, impossible, service_us * 0.6, service_us * 0.4)])
    )


@given(iops=st.floats(min_value=1, max_value=1e5), factor=st.floats(min_value=1.01, max_value=10))
def test_bandwidth_must_be_iops_times_4k(iops, factor):
    assert _fields(_doc([_pt(1, iops)])) == []
    assert _fields(_doc([_pt(1, iops, bw=iops * 4096 * factor + 8192)])) == ["result.runs[0].points[0].bw_bytes"]


def test_total_ios_must_fit_iops_and_runtime():
    assert _fields(_doc([_pt(1, 1000.0, total_ios=20_000, runtime_ms=20_000)])) == []
    assert _fields(_doc([_pt(1, 1000.0, total_ios=30_000, runtime_ms=20_000)])) == [
        "result.runs[0].points[0].total_ios"
    ]


def test_interface_limits():
    sata = Device(protocol="ata")
    assert _fields(_doc([_pt(16, 140_000.0)], sata)) == []
    msg = check_figures(_doc([_pt(16, 200_000.0)], sata))[0].message
    assert "fastest ATA link" in msg and "600 MB/s" in msg
    sata2 = Device(protocol="ata", interface_speed="3.0 Gb/s")
    assert "3.0 Gb/s link" in check_figures(_doc([_pt(16, 100_000.0)], sata2))[0].message
    assert link_limit(Device(protocol="nvme", interface_speed="8.0 GT/s x4"))[0] == pytest.approx(
        8e9 * 4 * 128 / 130 / 8
    )
    assert _fields(_doc([_pt(64, 900_000.0)], Device(protocol="nvme", interface_speed="8.0 GT/s x4"))) == []
    assert _fields(_doc([_pt(1, 2_000_000.0)], Device(protocol="unknown"))) == ["result.runs[0].points[0].iops"]


def test_peak_and_duplicate_points():
    doc = _doc([_pt(1, 1000.0), _pt(2, 1500.0)])
    doc.runs[0].peak = Peak(numjobs=1, iops=1000.0)
    assert _fields(doc) == ["result.runs[0].peak"]
    doc = _doc([_pt(1, 1000.0), _pt(1, 1200.0)])
    assert _fields(doc) == ["result.runs[0].points[1].numjobs"]
    doc = _doc([_pt(1, 1000.0)])
    doc.runs[0].peak = None
    assert _fields(doc) == ["result.runs[0].peak"]


def test_method_parameters_must_be_the_methods():
    assert (
        _fields(_doc([_pt(1, 1000.0)], fio_params={"rw": "write", "bs": "4k", "direct": "1", "fdatasync": "1"})) == []
    )
    problems = check_figures(
        _doc([_pt(1, 1000.0)], fio_params={"rw": "write", "bs": "8k", "direct": "1", "fdatasync": "1"})
    )
    assert [p.field for p in problems] == ["result.method.fio_params"] and "bs=8k" in problems[0].message


_option_values = st.text(max_size=210) | st.integers() | st.floats() | st.booleans() | st.none() | st.lists(st.text())


@given(st.dictionaries(st.text(max_size=5) | st.integers(), _option_values, max_size=6))
def test_fio_options_shortcut_equals_the_general_reading(section):
    general = {str(k): _text(v) for k, v in section.items() if isinstance(v, (str, int, float))}
    assert dict(_options(section)) == general


# ------------------------------------------------- every latency figure, the flush-check step


@needs_fio
@pytest.mark.parametrize("block", ["lat_us", "sync_lat_us"])
@pytest.mark.parametrize("name", ["mean", "p50", "p99", "p999", "max"])
def test_every_latency_figure_is_checked_against_raw_fio(block, name):
    doc = result_from(fio_runs())
    lat = getattr(doc.runs[0].points[0], block)
    setattr(lat, name, getattr(lat, name) * 2 + 1)  # off by more than the tolerance, whatever was measured
    where = f"result.runs[0].points[0].{block}.{name}"
    problems = [p for p in check_figures(doc) if p.field == where]
    assert len(problems) == 1 and "does not match fio's" in problems[0].message, [str(p) for p in check_figures(doc)]


@needs_fio
def test_a_verdict_figure_lowered_after_the_run_is_caught():
    # etcd's verdict rests on the 1-job fdatasync p99: claiming a fraction of it must not pass
    doc = result_from(fio_runs())
    doc.runs[0].points[0].sync_lat_us.p99 /= 40
    fields = _fields(doc)
    assert fields == ["result.runs[0].points[0].sync_lat_us.p99"]


@needs_fio
@pytest.mark.parametrize("block, name", [("sync_lat_us", "p99"), ("sync_lat_us", "max"), ("lat_us", "max")])
def test_a_figure_left_null_where_fio_reports_it_is_a_problem(block, name):
    doc = result_from(fio_runs())
    setattr(getattr(doc.runs[0].points[0], block), name, None)
    problems = check_figures(doc)
    assert [p.field for p in problems] == [f"result.runs[0].points[0].{block}.{name}"]
    assert "is null but fio reports" in problems[0].message


@needs_fio
def test_fdatasync_latencies_left_out_where_fio_reports_them_are_a_problem():
    doc = result_from(fio_runs())
    doc.runs[0].points[1].sync_lat_us = None
    problems = [p for p in check_figures(doc) if p.field == "result.runs[0].points[1].sync_lat_us"]
    assert len(problems) == 1 and "fio reports fdatasync latencies" in problems[0].message


@needs_fio
def test_figures_fio_does_not_report_may_be_null():
    runs = fio_runs()
    for data in runs.values():
        del data["jobs"][0]["sync"]["lat_ns"]["percentile"]
        del data["jobs"][0]["write"]["clat_ns"]["max"]
    doc = result_from(fio_runs())
    for p, data in zip(doc.runs[0].points, runs.values(), strict=False):
        p.fio = data
        p.sync_lat_us.p50 = p.sync_lat_us.p99 = p.sync_lat_us.p999 = p.lat_us.max = None
    assert check_figures(doc) == []


def _with_nosync(doc: ResultDocument) -> ResultDocument:
    from tests.test_submission_support import fio_nosync_run, nosync_point_from

    doc.runs[0].nosync = nosync_point_from(fio_nosync_run())
    return doc


@needs_fio
def test_the_flush_check_step_is_checked_like_a_point():
    assert check_figures(_with_nosync(result_from(fio_runs()))) == []
    for edit, field in (
        (lambda p: setattr(p, "iops", p.iops * 4), "iops"),
        (lambda p: setattr(p.lat_us, "p99", p.lat_us.p99 / 10), "lat_us.p99"),
        (lambda p: p.fio["global options"].update(fdatasync="1"), "fio"),
    ):
        doc = _with_nosync(result_from(fio_runs()))
        edit(doc.runs[0].nosync)
        assert f"result.runs[0].nosync.{field}" in _fields(doc), [str(p) for p in check_figures(doc)]


@needs_fio
def test_validation_requires_the_raw_fio_output_of_the_flush_check_step(tmp_path):
    from diskq.submission.legacy import dump
    from diskq.submission.sign import make_submission
    from diskq.submission.validate import validate_file

    doc = _with_nosync(result_from(fio_runs()))
    sub = make_submission(doc)
    path = tmp_path / f"{sub.id}.json"
    path.write_text(dump(sub))
    assert validate_file(path, require_signature=False)[1] == []
    doc.runs[0].nosync.fio = None
    doc.runs[0].nosync.iops = 1e5
    doc.runs[0].nosync.bw_bytes = 1e5 * 4096
    sub = make_submission(doc)
    path = tmp_path / f"{sub.id}.json"
    path.write_text(dump(sub))
    lines = [str(p) for p in validate_file(path, require_signature=False)[1]]
    assert f"{path}: result.runs[0].nosync.fio: raw fio output is missing" in lines


# ------------------------------------------------- shortcuts equal the plain definitions

_any_float = st.floats(allow_nan=True, allow_infinity=True) | st.floats(min_value=0, max_value=1e6)


@given(_any_float, _any_float, st.sampled_from([(1e-3, 0.01), (1e-3, 1.0), (2e-3, 4096.0), (0.02, 2.0)]))
def test_a_difference_within_the_absolute_tolerance_is_close(a, b, tolerance):
    rel, abs_ = tolerance
    assert (-abs_ <= a - b <= abs_ or _close(a, b, rel, abs_)) == _close(a, b, rel, abs_)


def _latency_problems_plainly(name, lat, mean, tail):
    out = []
    for field, mine, theirs in (
        ("mean", lat.mean, mean),
        ("p50", lat.p50, tail["p50"]),
        ("p99", lat.p99, tail["p99"]),
        ("p999", lat.p999, tail["p999"]),
        ("max", lat.max, tail["max"]),
    ):
        if mine is None:
            if theirs is not None:
                out.append((f"{name}.{field}", f"is null but fio reports {theirs:g} us"))
        elif theirs is None:
            out.append((f"{name}.{field}", f"{mine:g} has no counterpart in the fio data"))
        elif not _close(mine, theirs, 1e-3, 0.01):
            out.append((f"{name}.{field}", f"{mine:g} us does not match fio's {theirs:g} us"))
    return out


_figure = st.none() | st.floats(min_value=0, allow_infinity=True) | st.sampled_from([0.0, 0.005, 0.01, 0.02, 100.0])


@given(st.lists(_figure, min_size=5, max_size=5), st.lists(_figure, min_size=5, max_size=5))
def test_latency_figures_are_compared_as_plainly_defined(mine, theirs):
    lat = Latency.model_construct(**dict(zip(("mean", "p50", "p99", "p999", "max"), mine, strict=False)))
    tail = dict(zip(("p50", "p99", "p999", "max"), theirs[1:], strict=False))
    out = []
    _latency_problems("lat_us", lat, theirs[0], tail, lambda field, message: out.append((field, message)))
    assert out == _latency_problems_plainly("lat_us", lat, theirs[0], tail)


@needs_fio
def test_method_2_needs_every_job_in_one_shared_region():
    """Version 2 of diskq's method writes the community layout: a step whose fio options give each
    job its own region (``offset_increment``) is another workload. Version 1 documents had it."""
    doc = result_from(fio_runs(), method_id="diskq-fdatasync-sweep")
    doc.method.version = 2
    assert check_figures(doc) == []
    doc.runs[0].points[0].fio["global options"]["offset_increment"] = "64M"
    messages = [p.message for p in check_figures(doc) if p.field == "result.runs[0].points[0].fio"]
    assert any("offset_increment=64M (needs 0)" in m for m in messages), messages
    doc.method.version = 1  # version 1 gave every job its own region, at every step
    assert {p.field for p in check_figures(doc)} == {
        f"result.runs[0].points[{i}].fio" for i in range(1, len(doc.runs[0].points))
    }
    for point in doc.runs[0].points:
        point.fio["global options"]["offset_increment"] = "64M"
    assert check_figures(doc) == []
