"""fio JSON parsing on recorded outputs from real machines (see tests/fixtures/fio_json/SOURCES.md)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from diskq.bench import fio
from diskq.errors import FioError, UnsupportedFio

FIO = "fio_json"


def load(fixtures, name):
    return (fixtures / FIO / name).read_text()


def test_fdatasync_run_on_loop_device(fixtures):
    data = fio.extract_json(load(fixtures, "fio-3.33__loop__fdatasync_nj4_ss.json"))
    p = fio.point_from_json(data, 4)
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
    data = fio.extract_json(text)
    assert data["fio version"] == "fio-3.33"
    assert fio.point_from_json(data, 1).iops > 0


def test_group_reporting_sata_ssd(fixtures):
    data = fio.extract_json(load(fixtures, "fio-3.14__Samsung_860_PRO_SATA300__randwrite_qd8_nj8_gr.json"))
    p = fio.point_from_json(data, 8)
    assert p.iops == pytest.approx(50389.357376)
    assert p.sync_lat_us is None  # no fdatasync in that run: fio's sync section is all zero


def test_without_group_reporting_sums_jobs(fixtures):
    data = fio.extract_json(load(fixtures, "fio-3.6__Crucial_250GB_SSD__randwrite_qd8_nj8_NO_gr.json"))
    assert len(data["jobs"]) == 8
    p = fio.point_from_json(data, 8)
    assert p.iops == pytest.approx(sum(j["write"]["iops"] for j in data["jobs"]))
    assert p.total_ios == sum(j["write"]["total_ios"] for j in data["jobs"])
    assert p.lat_us.p99 == pytest.approx(max(j["write"]["clat_ns"]["percentile"]["99.000000"] for j in data["jobs"]) / 1000)


def test_fio_3_1_has_no_sync_section(fixtures):
    data = fio.extract_json(load(fixtures, "fio-3.1__Intel_D3-S4610_SSDSC2KG48__randwrite_qd1_nj1.json"))
    p = fio.point_from_json(data, 1)
    assert p.iops == pytest.approx(13355.110748)
    assert p.sync_lat_us is None


def test_fio_2_is_unsupported(fixtures):
    data = fio.extract_json(load(fixtures, "fio-2.18__file_fio-test.bin__randwrite_qd64.json"))
    with pytest.raises(UnsupportedFio, match="2.18"):
        fio.point_from_json(data, 1)


def test_job_error_is_reported(fixtures):
    data = json.loads(load(fixtures, "fio-3.33__loop__fdatasync_nj4_ss.json"))
    data["jobs"][0]["error"] = 28
    with pytest.raises(FioError, match="error 28 .ENOSPC"):
        fio.point_from_json(data, 4)


@pytest.mark.parametrize(
    "text,expected",
    [("fio-3.33", (3, 33)), ("fio-3.6-31-g4386", (3, 6)), ("fio-2.18-59-g618e", (2, 18)), ("garbage", None)],
)
def test_parse_version(text, expected):
    assert fio.parse_version(text) == expected


def test_check_version():
    assert fio.check_version("fio-3.33") == []
    assert "newer" in fio.check_version("fio-4.1")[0]
    with pytest.raises(UnsupportedFio):
        fio.check_version("fio-2.21")


@pytest.mark.parametrize("text", ["", "fio: engine libaio not loadable\n", "{ not json", '{"no": "jobs"}'])
def test_no_usable_json(text):
    with pytest.raises(FioError):
        fio.extract_json(text)


@given(st.text(max_size=300))
def test_extract_json_never_crashes(text):
    try:
        fio.extract_json(text)
    except FioError:
        pass


def test_command_line_is_the_community_method():
    opts = fio.base_options(runtime_s=20, region_bytes=64 << 20, steady=None)
    argv = fio.command("/dev/sdx", 8, opts)
    for expected in ("--direct=1", "--fdatasync=1", "--iodepth=1", "--rw=write", "--bs=4k", "--time_based",
                     "--runtime=20", "--group_reporting=1", "--name=ceph-iops", "--numjobs=8",
                     "--offset_increment=67108864", "--size=67108864", "--output-format=json", "--ioengine=psync"):
        assert expected in argv
    steady = fio.base_options(runtime_s=20, region_bytes=1 << 20, steady=fio.SteadyState())
    assert steady["ss"] == "iops:5%" and steady["ss_dur"] == "3s"
    assert fio.base_options(runtime_s=5, region_bytes=1 << 20, steady=None, fdatasync=False)["fdatasync"] == "0"
