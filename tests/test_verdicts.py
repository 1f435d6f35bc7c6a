"""Workload verdicts and annotate(): criteria file, best safe cache setting, OSDs per device,
etcd and PostgreSQL WAL, on the community's figures and on recorded fio outputs."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from diskq.analyse import annotate
from diskq.analyse.model import FlushCheck, Verdicts
from diskq.analyse.osds import carry_order, order_value, osds_per_device
from diskq.analyse.verdicts import evaluate, load_criteria
from diskq.result import Device, Latency, Method, Point, ResultDocument, Run

CRIT = load_criteria()


def point(
    numjobs: int,
    iops: float,
    *,
    sync_p99_us: float | None = 500.0,
    write_p99_us: float | None = 20.0,
    interrupted: bool = False,
) -> Point:
    return Point(
        numjobs=numjobs,
        iops=iops,
        bw_bytes=iops * 4096,
        total_ios=int(iops * 10),
        runtime_ms=10_000,
        lat_us=Latency(p99=write_p99_us),
        sync_lat_us=Latency(p99=sync_p99_us),
        interrupted=interrupted,
    )


def run(cache: str, curve, *, honest: bool | None = None, **kw) -> Run:
    r = Run(write_cache=cache, points=[point(n, x, **kw) for n, x in curve])
    if honest is not None:
        r.flush_check = FlushCheck(
            sync_iops=curve[0][1],
            nosync_iops=curve[0][1] * (1.2 if not honest else 20),
            threshold=0.5,
            cache_state=cache,
            honest=honest,
        )
    return r


def document(*runs: Run, volatile: bool | None = True) -> ResultDocument:
    return ResultDocument(device=Device(model="test", volatile_write_cache=volatile), method=Method(), runs=list(runs))


# --- the criteria file ------------------------------------------------------------------------


def test_every_criteria_section_is_justified():
    sections = [k for k, v in CRIT.items() if isinstance(v, dict)]
    assert set(sections) == {
        "scaling",
        "ceph_waldb",
        "osds_per_device",
        "etcd",
        "postgres_wal",
        "flush",
        "fleet",
        "cache_knob",
        "power_loss_protection",
        "plausibility",
        "outliers",
        "contributor_words",
        "size_profile",
        "zfs_slog",
        "sustained",
        "cluster",
        "memory_backed",
        "endurance",
        "answer",
    }
    for name in sections:
        assert CRIT[name]["title"]
        assert len(CRIT[name]["justification"].split()) >= 30, name
    assert isinstance(CRIT["version"], int)


def test_criteria_values_are_consistent():
    c = CRIT["ceph_waldb"]
    assert c["excellent"] > c["good"] > c["marginal"] > 0
    assert (c["excellent"], c["good"], c["marginal"]) == (20000, 5000, 1000)
    assert CRIT["osds_per_device"]["demand_hdd_osd"] == 315  # osd_mclock_max_capacity_iops_hdd
    assert CRIT["etcd"]["p99_fdatasync_ms"] == 10
    assert 0 < CRIT["scaling"]["regress_drop"] < 1 and 0 < CRIT["scaling"]["linear_efficiency"] <= 1


def test_load_criteria_returns_a_copy():
    mine = load_criteria()
    mine["ceph_waldb"]["good"] = 1
    assert load_criteria()["ceph_waldb"]["good"] == 5000


# --- Ceph WAL/DB tiers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "iops, tier",
    [
        (64235, "excellent"),
        (20000, "excellent"),
        (19999, "good"),
        (5000, "good"),
        (4999.5, "marginal"),
        (1000, "marginal"),
        (999, "unsuitable"),
        (456, "unsuitable"),
    ],
)
def test_ceph_tier_boundaries(iops, tier):
    v = evaluate(document(run("off", [(1, iops), (2, iops * 1.5)])))
    assert v.ceph_waldb.tier == tier
    assert v.ceph_waldb.iops == iops and v.ceph_waldb.cache_state == "off" and v.ceph_waldb.safe is True
    assert v.criteria_version == CRIT["version"]


def test_pm883_uses_the_faster_cache_setting():
    """Community table: PM883 12680 @ 1 job with the cache off, 5094 with it on."""
    v = evaluate(document(run("on", [(1, 5094), (16, 27521)]), run("off", [(1, 12680), (16, 59338)])))
    assert (v.ceph_waldb.tier, v.ceph_waldb.cache_state, v.ceph_waldb.iops) == ("good", "off", 12680)
    assert any("cache on gave 5094" in r and "lower" in r for r in v.ceph_waldb.reasons)


def test_a_run_whose_flush_check_warned_is_never_the_best():
    doc = document(run("on", [(1, 30000), (2, 50000)], honest=False), run("off", [(1, 3000), (2, 5000)]))
    v = evaluate(doc)
    assert (v.ceph_waldb.tier, v.ceph_waldb.cache_state, v.ceph_waldb.safe) == ("marginal", "off", True)
    assert any("failed the flush check" in r for r in v.ceph_waldb.reasons)
    assert v.osds_per_device.cache_state == "off"
    assert v.postgres_wal.commits_per_s == 3000


@pytest.mark.parametrize("volatile", [True, None])
def test_kernel_write_through_is_not_a_safe_cache_off(volatile):
    """sysfs "write through" stops the kernel's flushes; the drive's own cache may still be on."""
    on = run("on", [(1, 3000), (2, 5000)], honest=True)
    off = run("off", [(1, 12000), (2, 20000)])
    on.cache_mechanism = off.cache_mechanism = "sysfs"
    v = evaluate(document(on, off, volatile=volatile))
    assert (v.ceph_waldb.cache_state, v.ceph_waldb.iops) == ("on", 3000)
    assert any("write_cache knob" in r for r in v.ceph_waldb.reasons)


def test_kernel_write_through_is_fine_without_a_volatile_cache():
    off = run("off", [(1, 12000), (2, 20000)])
    off.cache_mechanism = "sysfs"
    v = evaluate(document(run("on", [(1, 3000), (2, 5000)]), off, volatile=False))
    assert (v.ceph_waldb.cache_state, v.ceph_waldb.iops, v.ceph_waldb.tier) == ("off", 12000, "good")


def test_no_safe_setting_gives_no_verdict_whatever_the_speed():
    # a flush check that failed says the cache-on run cannot be trusted, not what the drive does
    # with its cache off: missing evidence, so no tier and no pass or fail
    v = evaluate(document(run("on", [(1, 30000), (2, 50000)], honest=False)))
    assert (v.ceph_waldb.tier, v.ceph_waldb.safe) == (None, False)
    assert any(r.startswith("no verdict") for r in v.ceph_waldb.reasons)
    assert v.osds_per_device.n is None
    assert v.etcd.passes is None
    assert v.postgres_wal.commits_per_s is None
    assert all("no safe cache setting" in x.reasons[0] for x in (v.ceph_waldb, v.osds_per_device, v.etcd))


def test_honest_flush_check_keeps_the_run():
    v = evaluate(document(run("on", [(1, 900), (2, 1500)], honest=True)))
    assert (v.ceph_waldb.tier, v.ceph_waldb.cache_state) == ("unsuitable", "on")
    assert v.ceph_waldb.safe is True


def test_without_a_one_job_step_nothing_is_judged():
    v = evaluate(document(run("on", [(2, 5000), (4, 8000)])))
    assert v.ceph_waldb.tier is None and v.osds_per_device.n is None and v.etcd.passes is None
    assert any("no completed 1-job step" in n for n in v.notes)


# --- OSDs per device --------------------------------------------------------------------------


DEMAND = CRIT["osds_per_device"]["demand_hdd_osd"]


def test_osds_per_device_reads_the_curve():
    # per job: 1000, 500, 300, 150 -> 2 jobs still give each OSD 500 >= 315, 4 jobs only 300
    v = evaluate(document(run("off", [(1, 1000), (2, 1000), (4, 1200), (8, 1200)])))
    o = v.osds_per_device
    assert (o.n, o.per_osd_iops, o.solo_iops, o.limited_by_sweep) == (2, 500, 1000, False)
    assert (o.demand_iops, o.osd_kind, o.share) == (315, "hdd", None)
    assert any(r.startswith("4 OSDs would each get 300") for r in o.reasons)


def test_osds_per_device_never_extrapolates():
    v = evaluate(document(run("off", [(1, 10000), (2, 20000), (4, 39000)])))
    assert (v.osds_per_device.n, v.osds_per_device.limited_by_sweep) == (4, True)
    assert any("not extrapolated" in r for r in v.osds_per_device.reasons)


def test_a_fast_drive_never_ranks_below_a_slow_flat_one():
    # the example: Sandisk Ultra II (600 at 1 job) came out ">= 8", Intel SSD 750 "1"
    slow = evaluate(document(run("off", [(1, 600), (8, 4300)]))).osds_per_device
    fast = evaluate(document(run("off", [(1, 64235), (8, 192440)]))).osds_per_device
    assert fast.n >= slow.n
    # 600 at 1 job is "unsuitable", so the same model gives it no OSD, whatever its curve
    assert slow.n == 0 and "the Ceph WAL/DB tier is unsuitable" in slow.reasons[0]
    assert carry_order(osds_per_device([(1, 64235), (8, 192440)], DEMAND)) > order_value(0, None, DEMAND, 600)
    assert (fast.n, fast.limited_by_sweep) == (8, True)


def test_a_drive_slower_than_one_hdd_osd_gets_none():
    o = evaluate(document(run("off", [(1, 200), (2, 260)]))).osds_per_device
    assert o.n == 0 and o.per_osd_iops is None and o.limited_by_sweep is False
    assert "below the 315 one OSD needs" in o.reasons[0]


def test_pliant_regressing_curve():
    # 5028, 1325.5, 181, 93, 78 per job: 6 jobs is the last that still gives each OSD >= 315
    v = evaluate(document(run("unknown", [(1, 5028), (2, 2651), (6, 1088), (8, 745), (10, 784)])))
    assert v.osds_per_device.n == 2 and v.osds_per_device.limited_by_sweep is False
    assert v.ceph_waldb.tier == "good"


curves = st.lists(st.tuples(st.integers(2, 64), st.floats(0, 1e6)), max_size=10, unique_by=lambda t: t[0])


@settings(max_examples=200, deadline=None)
@given(curves, st.floats(1, 1e6))
def test_osds_per_device_is_the_largest_measured_n_that_meets_the_demand(rest, solo):
    curve = [(1, solo), *sorted(rest)]
    v = evaluate(document(run("off", curve)))
    o = v.osds_per_device
    # questionable points (a per-job rate above 1.5x the 1-job rate) are never evidence
    measured = {n: x for n, x in curve if n == 1 or x / n <= RATIO * solo}
    cap = CRIT["osds_per_device"]["tier_max_osds"].get(v.ceph_waldb.tier)
    if cap is not None and "the curve alone would allow" in o.reasons[0]:  # held at what the tier allows
        assert o.n == cap and not o.limited_by_sweep
        assert osds_per_device(measured.items(), DEMAND).n > cap
        return
    assert cap is None or o.n <= cap
    if o.n == 0:
        assert all(measured[m] / m < DEMAND * (1 + 1e-9) for m in measured)
        return
    assert o.n in measured
    assert measured[o.n] / o.n >= DEMAND * (1 - 1e-9)
    assert all(measured[m] / m < DEMAND * (1 + 1e-9) for m in measured if m > o.n)
    assert o.limited_by_sweep == (o.n == max(measured))
    assert all(f"at {m} jobs" in " ".join(o.reasons) for m in set(dict(curve)) - set(measured))


RATIO = CRIT["plausibility"]["max_per_job_ratio"]


@settings(max_examples=200, deadline=None)
@given(curves, st.floats(1, 1e6), st.lists(st.floats(1, 3), min_size=11, max_size=11))
def test_a_device_at_least_as_fast_at_every_n_never_gets_fewer_osds(rest, solo, factors):
    curve = [(1, solo), *sorted(rest)]
    faster = [(n, iops * f) for (n, iops), f in zip(curve, factors, strict=False)]
    # among plausible curves (a questionable point is no evidence, however fast)
    assume(all(x / n <= RATIO * c[0][1] * 0.999999 for c in (curve, faster) for n, x in c[1:]))
    slow = evaluate(document(run("off", curve))).osds_per_device
    fast = evaluate(document(run("off", faster))).osds_per_device
    assert fast.n >= slow.n


# --- etcd and PostgreSQL ----------------------------------------------------------------------


@pytest.mark.parametrize("p99_us, passes", [(9_900, True), (10_000, False), (371, True), (11_731, False)])
def test_etcd_limit_is_strict(p99_us, passes):
    v = evaluate(document(run("off", [(1, 500)], sync_p99_us=p99_us)))
    assert v.etcd.passes is passes
    assert v.etcd.p99_fdatasync_ms == pytest.approx(p99_us / 1000)
    assert v.etcd.limit_ms == 10


def test_etcd_uses_the_safe_run_with_the_lowest_tail():
    slow_tail = run("on", [(1, 9000)], sync_p99_us=15_000)
    fast_tail = run("off", [(1, 4000)], sync_p99_us=400)
    v = evaluate(document(slow_tail, fast_tail))
    assert (v.etcd.passes, v.etcd.cache_state) == (True, "off")
    assert v.ceph_waldb.cache_state == "on"  # Ceph goes by IOPS, etcd by p99


def test_etcd_without_percentiles_cannot_tell():
    v = evaluate(document(run("off", [(1, 4000)], sync_p99_us=None)))
    assert v.etcd.passes is None and "no fdatasync latency" in v.etcd.reasons[0]
    assert v.postgres_wal.p99_commit_ms_max is None


def test_postgres_commit_rate_and_tail():
    v = evaluate(document(run("off", [(1, 2820), (2, 4000)], sync_p99_us=371, write_p99_us=13)))
    assert v.postgres_wal.commits_per_s == 2820
    assert v.postgres_wal.p99_fdatasync_ms == pytest.approx(0.371)
    assert v.postgres_wal.p99_commit_ms_max == pytest.approx(0.384)


# --- recorded outputs from real machines ------------------------------------------------------


def _one_job_figures(text: str) -> tuple[float, float, float]:
    """(IOPS, write clat p99 us, fdatasync p99 us) from fio's normal output of one job."""
    m = re.search(r"write: IOPS=([\d.]+)(k?)", text)
    iops = float(m.group(1)) * (1000 if m.group(2) else 1)
    blocks = re.findall(r"(clat|sync) percentiles \((usec|nsec)\):.*?99\.00th=\[\s*(\d+)\]", text, re.S)
    p99 = {kind: float(v) / (1000 if unit == "nsec" else 1) for kind, unit, v in blocks}
    return iops, p99["clat"], p99["sync"]


@pytest.mark.parametrize(
    "name, tier, etcd, commits",
    [
        (
            "duzlov__07__NVMe_Intel_Optane_M10_16GB_MEMPEK1J016GA__Raw_device_block_4k__fio-3.25.txt",
            "good",
            True,
            18600,
        ),
        ("duzlov__10__SATA_TESLA_2TB_2022092T0075__Raw_device_block_4k__fio-3.25.txt", "marginal", True, 2820),
        (
            "duzlov__08__NVME_T_FORCE_TM8FPL500G_500GB_TPBF221006__Raw_device_block_4k__fio-3.25.txt",
            "unsuitable",
            False,
            144,
        ),
    ],
)
def test_verdicts_on_recorded_one_job_runs(fixtures, name, tier, etcd, commits):
    iops, write_p99, sync_p99 = _one_job_figures((fixtures / "verdicts" / name).read_text())
    assert iops == commits
    v = evaluate(document(run("unknown", [(1, iops)], sync_p99_us=sync_p99, write_p99_us=write_p99)))
    assert v.ceph_waldb.tier == tier
    assert v.etcd.passes is etcd
    assert v.postgres_wal.commits_per_s == commits
    assert v.postgres_wal.p99_commit_ms_max == pytest.approx((write_p99 + sync_p99) / 1000)
    # one job measured: no more claimed; a drive slower than one HDD OSD needs carries none
    assert v.osds_per_device.n == (1 if commits >= DEMAND else 0)
    assert v.osds_per_device.limited_by_sweep is (commits >= DEMAND)


# --- annotate ---------------------------------------------------------------------------------


def test_annotate_fills_scaling_flush_check_and_verdicts_in_place():
    on = run("on", [(1, 5094), (2, 9000), (4, 15000), (8, 22000), (16, 27521)])
    on.nosync = point(1, 6000)  # flush nearly free with a volatile cache on: suspicious
    off = run("off", [(1, 12680), (2, 22000), (4, 35000), (8, 50000), (16, 59338)])
    off.nosync = point(1, 14000)
    doc = document(on, off)
    assert annotate(doc) is doc
    assert [r.scaling.scaling for r in doc.runs] == ["asymptotic", "asymptotic"]
    assert doc.runs[0].peak.numjobs == 16
    assert doc.runs[0].flush_check.honest is False and doc.runs[0].flush_check.warning
    assert doc.runs[1].flush_check.honest is None  # cache off: nothing to flush
    assert doc.verdicts.ceph_waldb.cache_state == "off" and doc.verdicts.ceph_waldb.tier == "good"
    again = ResultDocument.model_validate_json(doc.to_json())
    assert again == doc
    raw = json.loads(doc.to_json())
    assert raw["verdicts"]["ceph_waldb"]["tier"] == "good"
    assert raw["runs"][0]["scaling"]["peak"] == {"numjobs": 16, "iops": 27521.0}


def test_annotate_replaces_stale_analysis_and_notes_what_it_cannot_classify():
    single = run("on", [(1, 5000)])
    interrupted = run("off", [(1, 3000), (2, 5000), (4, 6000)])
    interrupted.points[-1].interrupted = True
    from diskq.analyse.classify import classify

    interrupted.scaling = classify([(1, 100), (2, 50)])  # stale: from some older analysis
    doc = document(single, interrupted)
    annotate(doc)
    assert single.scaling is None and any("fewer than two" in n for n in single.notes)
    assert interrupted.scaling.scaling == "linear" and interrupted.scaling.peak.numjobs == 2  # was "regressing"
    annotate(doc)  # idempotent: no duplicated notes
    assert sum("fewer than two" in n for n in single.notes) == 1
    assert isinstance(doc.verdicts, Verdicts)
    assert any("interrupted steps left out" in n for n in doc.verdicts.notes)
