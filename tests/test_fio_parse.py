"""fio JSON parsing on recorded outputs from real machines (see tests/fixtures/fio_json/SOURCES.md)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diskq.bench import fio, fiojson, windows
from diskq.errors import DiskqError, FioError, UnsupportedFio
from tests.conftest import FIXTURES

FIO = "fio_json"


def load(fixtures, name):
    return (fixtures / FIO / name).read_text()


def test_fdatasync_run_on_loop_device(fixtures):
    data = fiojson.extract_json(load(fixtures, "fio-3.33__loop__fdatasync_nj4_ss.json"))
    p = fiojson.point_from_json(data, 4)
    job = data["jobs"][0]
    assert p.numjobs == 4
    assert p.iops == pytest.approx(job["write"]["iops"], rel=1e-6)
    assert p.bw_bytes == pytest.approx(job["write"]["bw_bytes"], rel=1e-6)
    assert p.total_ios == job["write"]["total_ios"]
    assert p.lat_us.mean == pytest.approx(job["write"]["clat_ns"]["mean"] / 1000, rel=1e-3)
    assert p.lat_us.p99 == pytest.approx(job["write"]["clat_ns"]["percentile"]["99.000000"] / 1000)
    # fdatasync latency comes from fio's "sync" section
    assert p.sync_lat_us is not None
    assert p.sync_lat_us.p999 == pytest.approx(job["sync"]["lat_ns"]["percentile"]["99.900000"] / 1000)
    assert p.steady_state is True
    assert p.fio == data
    # at iodepth 1, Little's law ties IOPS to the commit latency (write + fdatasync)
    commit_us = p.lat_us.mean + p.sync_lat_us.mean
    assert p.iops == pytest.approx(4 / commit_us * 1e6, rel=0.15)


def test_note_printed_before_the_json(fixtures):
    text = load(fixtures, "fio-3.33__loop__note_before_json.txt")
    assert text.startswith("note:")
    data = fiojson.extract_json(text)
    assert data["fio version"] == "fio-3.33"
    assert fiojson.point_from_json(data, 1).iops > 0


def test_group_reporting_sata_ssd(fixtures):
    data = fiojson.extract_json(load(fixtures, "fio-3.14__Samsung_860_PRO_SATA300__randwrite_qd8_nj8_gr.json"))
    p = fiojson.point_from_json(data, 8)
    assert p.iops == pytest.approx(50389.357376)
    assert p.sync_lat_us is None  # no fdatasync in that run: fio's sync section is all zero


def test_without_group_reporting_sums_jobs(fixtures):
    data = fiojson.extract_json(load(fixtures, "fio-3.6__Crucial_250GB_SSD__randwrite_qd8_nj8_NO_gr.json"))
    assert len(data["jobs"]) == 8
    p = fiojson.point_from_json(data, 8)
    assert p.iops == pytest.approx(sum(j["write"]["iops"] for j in data["jobs"]))
    assert p.total_ios == sum(j["write"]["total_ios"] for j in data["jobs"])
    assert p.lat_us.p99 == pytest.approx(
        max(j["write"]["clat_ns"]["percentile"]["99.000000"] for j in data["jobs"]) / 1000
    )


def test_fio_3_1_has_no_sync_section(fixtures):
    data = fiojson.extract_json(load(fixtures, "fio-3.1__Intel_D3-S4610_SSDSC2KG48__randwrite_qd1_nj1.json"))
    p = fiojson.point_from_json(data, 1)
    assert p.iops == pytest.approx(13355.110748)
    assert p.sync_lat_us is None


def test_fio_2_is_unsupported(fixtures):
    data = fiojson.extract_json(load(fixtures, "fio-2.18__file_fio-test.bin__randwrite_qd64.json"))
    with pytest.raises(UnsupportedFio, match="2.18"):
        fiojson.point_from_json(data, 1)


def test_job_error_is_reported(fixtures):
    data = json.loads(load(fixtures, "fio-3.33__loop__fdatasync_nj4_ss.json"))
    data["jobs"][0]["error"] = 28
    with pytest.raises(FioError, match="error 28 .ENOSPC"):
        fiojson.point_from_json(data, 4)


def test_null_or_unusable_write_figures_are_fio_errors(fixtures):
    data = json.loads(load(fixtures, "fio-3.33__loop__fdatasync_nj4_ss.json"))
    data["jobs"][0]["write"]["iops"] = None
    with pytest.raises(FioError, match="ceph-iops has a null write 'iops' figure"):
        fiojson.point_from_json(data, 4)
    data["jobs"][0]["write"]["iops"] = -10649.854264
    with pytest.raises(FioError, match="unusable"):
        fiojson.point_from_json(data, 4)
    data["jobs"][0]["write"]["iops"] = 10649.854264
    del data["jobs"][0]["write"]["runtime"]
    with pytest.raises(FioError, match="has no write 'runtime' figure"):
        fiojson.point_from_json(data, 4)


def test_fio_3_1_bandwidth_in_kib(fixtures):
    data = fiojson.extract_json(load(fixtures, "fio-3.1__Intel_D3-S4610_SSDSC2KG48__randwrite_qd1_nj1.json"))
    assert "bw_bytes" not in data["jobs"][0]["write"]
    assert fiojson.point_from_json(data, 1).bw_bytes == data["jobs"][0]["write"]["bw"] * 1024


def test_a_step_without_a_write_section_wrote_nothing(fixtures):
    data = json.loads(load(fixtures, "fio-3.33__loop__fdatasync_nj4_ss.json"))
    del data["jobs"][0]["write"]
    with pytest.raises(FioError, match="no write section: the step wrote nothing"):
        fiojson.point_from_json(data, 4)
    data["jobs"][0]["write"] = {}
    with pytest.raises(FioError, match="no write section"):
        fiojson.point_from_json(data, 4)


def test_a_read_job_wrote_nothing(fixtures):
    # the first section of this recorded run is a sequential read: its write figures are all 0
    data = json.loads(load(fixtures, "fio-3.33__WD_Red_SN700_1TB_nvme__ext4__4jobs_nj16_gr.json"))
    read_job = data["jobs"][0]
    assert read_job["write"]["total_ios"] == 0 and read_job["read"]["total_ios"] > 0
    with pytest.raises(FioError, match="wrote nothing"):
        fiojson.point_from_json({**data, "jobs": [read_job]}, 16)


def test_job_error_that_is_not_an_errno():
    assert fiojson.job_error({"jobname": "x", "error": 0}) is None
    assert fiojson.job_error({"jobname": "x", "error": "EIO"}) == "fio job x failed with error 'EIO'"
    assert fiojson.job_error({"jobname": "x", "error": 10**30}) == f"fio job x failed with error {10**30}"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=5),
    max_leaves=25,
)
figures = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6) | st.integers(0, 10**6)
latencies = st.fixed_dictionaries(
    {},
    optional={
        "mean": figures,
        "max": figures,
        "percentile": st.dictionaries(st.sampled_from(["50.000000", "99.000000", "99.900000"]), figures) | json_values,
    },
)
write_sections = st.fixed_dictionaries(
    {},
    optional={
        "iops": figures,
        "bw_bytes": figures,
        "bw": figures,
        "total_ios": figures,
        "runtime": figures,
        "clat_ns": latencies | json_values,
        "clat": json_values,
    },
)
jobs = st.fixed_dictionaries(
    {},
    optional={
        "jobname": st.text(max_size=10) | json_values,
        "error": figures | json_values,
        "write": write_sections | json_values,
        "sync": st.fixed_dictionaries({"lat_ns": latencies | json_values}) | json_values,
        "steadystate": st.fixed_dictionaries({"attained": figures}) | json_values,
    },
)
fio_documents = st.fixed_dictionaries(
    {"jobs": st.lists(jobs, max_size=4) | json_values},
    optional={"fio version": st.sampled_from(["fio-3.33", "fio-3.1", "fio-2.18", "fio-4.0"]) | json_values},
)


def _parse_or_diskq_error(data, numjobs):
    try:
        point = fiojson.point_from_json(data, numjobs)
    except DiskqError:
        return None
    assert point.total_ios > 0 and point.iops >= 0
    point.model_dump_json()
    return point


@given(json_values | fio_documents, st.integers(1, 4096))
def test_point_from_json_never_crashes(data, numjobs):
    _parse_or_diskq_error(data, numjobs)


@given(
    st.sampled_from(["iops", "bw_bytes", "bw", "total_ios", "runtime", "clat_ns", "error", "write", "sync"]),
    json_values,
    st.integers(1, 4096),
)
def test_point_from_json_never_crashes_on_a_damaged_real_output(key, value, numjobs):
    data = json.loads((FIXTURES / FIO / "fio-3.33__loop__fdatasync_nj4_ss.json").read_text())
    job = data["jobs"][0]
    (job if key in ("error", "write", "sync") else job["write"])[key] = value
    _parse_or_diskq_error(data, numjobs)


@pytest.mark.parametrize(
    "text,expected",
    [("fio-3.33", (3, 33)), ("fio-3.6-31-g4386", (3, 6)), ("fio-2.18-59-g618e", (2, 18)), ("garbage", None)],
)
def test_parse_version(text, expected):
    assert fiojson.parse_version(text) == expected


def test_check_version():
    assert fiojson.check_version("fio-3.33") == []
    assert "newer" in fiojson.check_version("fio-4.1")[0]
    with pytest.raises(UnsupportedFio):
        fiojson.check_version("fio-2.21")


@pytest.mark.parametrize("text", ["", "fio: engine libaio not loadable\n", "{ not json", '{"no": "jobs"}'])
def test_no_usable_json(text):
    with pytest.raises(FioError):
        fiojson.extract_json(text)


@given(st.text(max_size=300))
def test_extract_json_never_crashes(text):
    try:
        fiojson.extract_json(text)
    except FioError:
        pass


def test_command_line_is_the_community_method():
    opts = fio.base_options(runtime_s=20, region_bytes=64 << 20, steady=None)
    argv = fio.command("/dev/sdx", 8, opts)
    for expected in (
        "--direct=1",
        "--fdatasync=1",
        "--iodepth=1",
        "--rw=write",
        "--bs=4k",
        "--time_based",
        "--runtime=20",
        "--group_reporting=1",
        "--name=ceph-iops",
        "--numjobs=8",
        "--size=67108864",
        "--output-format=json",
        "--ioengine=psync",
    ):
        assert expected in argv
    # every job writes the same region from its start, as the community command's jobs do (method 2)
    assert not any(a.startswith(("--offset", "--offset_increment")) for a in argv)
    steady = fio.base_options(runtime_s=20, region_bytes=1 << 20, steady=windows.SteadyState())
    assert steady["ss"] == "iops:5%" and steady["ss_dur"] == "3s"
    assert fio.base_options(runtime_s=5, region_bytes=1 << 20, steady=None, fdatasync=False)["fdatasync"] == "0"


def test_iops_spread_from_recorded_outputs(fixtures):
    from diskq.analyse.noise import iops_spread
    from diskq.bench.fiojson import extract_json

    def load(name):
        return extract_json((fixtures / "fio_json" / name).read_text())

    intel = load("fio-3.1__Intel_D3-S4610_SSDSC2KG48__randwrite_qd1_nj1.json")
    assert iops_spread(intel) == pytest.approx(127.086584 / 13358.741667)
    loop = load("fio-3.33__loop__fdatasync_nj4_ss.json")
    assert iops_spread(loop) == pytest.approx(604.553209 / 10534.4)
    # fio 2.x has no sample statistics; nothing to judge from
    assert iops_spread(load("fio-2.18__file_fio-test.bin__randwrite_qd64.json")) is None
    for bad in (
        None,
        {},
        {"jobs": []},
        {"jobs": [{"write": {"iops_mean": 0, "iops_stddev": 1, "iops_samples": 9}}]},
        {"jobs": [{"write": {"iops_mean": 5, "iops_stddev": 1, "iops_samples": 2}}]},
        {"jobs": [{"write": {"iops_mean": "x", "iops_stddev": 1, "iops_samples": 9}}]},
    ):
        assert iops_spread(bad) is None


def test_a_step_terminated_from_outside_is_cut_short(fixtures):
    # real fio 3.33 stopped by a SIGTERM 0.65 s into a 10 s step: it printed its JSON anyway
    text = (fixtures / FIO / "fio-3.33__loop__fdatasync_nj4_sigterm.txt").read_text()
    point = fiojson.point_from_json(fiojson.extract_json(text), 4)
    assert point.runtime_ms == 191 and point.iops > 0  # an ordinary-looking point
    why = fio.cut_short(point, 10, returncode=128, output=text)
    assert why == "fio was terminated by signal 15 (SIGTERM) and it ran 0.191 s of the 10 s asked"
    # the JSON alone gives it away too (fio's note and status lost)
    assert fio.cut_short(point, 10) == "it ran 0.191 s of the 10 s asked"
    assert fio.cut_short(point, 0.19) is None


def test_a_step_ended_by_the_steady_state_detector_is_complete(fixtures):
    text = load(fixtures, "fio-3.33__loop__fdatasync_nj4_ss.json")
    point = fiojson.point_from_json(fiojson.extract_json(text), 4)
    assert point.steady_state is True and point.runtime_ms == 7891
    assert fio.cut_short(point, 20, returncode=0, output=text) is None
    # the same step without the detector's verdict ran 7.9 s of 20: cut short
    assert fio.cut_short(point.model_copy(update={"steady_state": False}), 20) == "it ran 7.891 s of the 20 s asked"
    # a failure status after the JSON is fio saying the step did not end well
    assert fio.cut_short(point, 20, returncode=1) == "fio exited with status 1"


_SS_POINT = fiojson.point_from_json(
    fiojson.extract_json((FIXTURES / FIO / "fio-3.33__loop__fdatasync_nj4_ss.json").read_text()), 4
)


@given(
    runtime_ms=st.integers(min_value=0, max_value=10**8),
    asked_s=st.integers(min_value=1, max_value=86400),
    steady=st.sampled_from([None, False, True]),
    returncode=st.sampled_from([0, 0, 1, 128]),
    signum=st.sampled_from([None, 2, 9, 15, 99]),
)
def test_cut_short_invariants(runtime_ms, asked_s, steady, returncode, signum):
    point = _SS_POINT.model_copy(update={"runtime_ms": runtime_ms, "steady_state": steady})
    output = f"fio: terminating on signal {signum}\n{{}}" if signum is not None else "{}"
    why = fio.cut_short(point, asked_s, returncode=returncode, output=output)
    short = steady is not True and runtime_ms < asked_s * 1000 * fio.FULL_STEP_SHARE
    # a clean exit of a step that ran its time (or that the steady-state detector ended) is whole
    assert (why is None) == (not short and returncode == 0 and signum is None)
    if short:
        assert f"it ran {runtime_ms / 1000:g} s of the {asked_s:g} s asked" in why
    if signum is not None:
        assert why.startswith(f"fio was terminated by signal {signum}")
