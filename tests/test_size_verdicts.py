"""Verdicts read at the workload's write size from the block-size profile (etcd at 8 KiB,
PostgreSQL WAL at 8 KiB, ZFS SLOG at 128 KiB), and what they say without one."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diskq.analyse import annotate, sizes
from diskq.analyse.verdicts import evaluate, load_criteria
from diskq.result import Device, Latency, Method, Point, ResultDocument, Run, SizePoint
from tests.conftest import needs_fio
from tests.size_profiles import SIZES, measure_profile, recorded, recorded_profile, size_point

CRIT = load_criteria()
RATIO = CRIT["size_profile"]["nearest_max_ratio"]


def solo(iops: float, sync_p99_us: float = 500.0) -> Point:
    return Point(
        numjobs=1,
        iops=iops,
        bw_bytes=iops * 4096,
        total_ios=int(iops * 10),
        runtime_ms=10_000,
        lat_us=Latency(p99=20.0),
        sync_lat_us=Latency(p99=sync_p99_us),
    )


def doc(*runs: Run, volatile: bool | None = True) -> ResultDocument:
    return ResultDocument(device=Device(model="test", volatile_write_cache=volatile), method=Method(), runs=list(runs))


def sized(iops_by_size: dict[int, float], sync_p99_us: float = 800.0) -> list[SizePoint]:
    return [
        SizePoint(
            block_size=bs,
            iops=x,
            bw_bytes=x * bs,
            total_ios=int(x * 3),
            runtime_ms=3000,
            lat_us=Latency(p99=30.0),
            sync_lat_us=Latency(p99=sync_p99_us),
        )
        for bs, x in iops_by_size.items()
    ]


def p99_ms(data: dict) -> float:
    """fio's own 99th percentile of the fdatasync latency, in ms, read straight from its JSON."""
    return data["jobs"][0]["sync"]["lat_ns"]["percentile"]["99.000000"] / 1e6


# --- with the recorded profile -----------------------------------------------------------------


def test_etcd_and_postgres_are_read_at_8_kib_from_the_recorded_profile():
    run = Run(write_cache="on", points=[solo(3100.0)], sizes=recorded_profile("on"))
    v = evaluate(doc(run))
    raw = recorded("on", 8192)
    assert v.etcd.basis == "measured" and v.etcd.block_size == 8192
    assert v.etcd.p99_fdatasync_ms == pytest.approx(p99_ms(raw))
    assert v.etcd.passes is (p99_ms(raw) < CRIT["etcd"]["p99_fdatasync_ms"])
    assert "8 KiB writes" in v.etcd.reasons[0] and "measured by the size profile" in v.etcd.reasons[0]
    assert v.postgres_wal.basis == "measured" and v.postgres_wal.block_size == 8192
    assert v.postgres_wal.commits_per_s == pytest.approx(raw["jobs"][0]["write"]["iops"])
    assert v.postgres_wal.commits_per_s != run.points[0].iops  # not the 4 KiB sweep's figure


def test_zfs_slog_tier_comes_from_the_128_kib_step():
    run = Run(write_cache="on", points=[solo(3100.0)], sizes=recorded_profile("on"))
    z = evaluate(doc(run)).zfs_slog
    bw = recorded("on", 131072)["jobs"][0]["write"]["bw_bytes"]
    assert z.basis == "measured" and z.block_size == 131072 and z.bw_bytes == pytest.approx(bw)
    expected = next(
        (t for t in ("excellent", "good", "marginal") if bw / 1e6 >= CRIT["zfs_slog"][f"{t}_mb_s"]), "unsuitable"
    )
    assert z.tier == expected
    assert set(z.curve) == {"512", "4096", "8192", "16384", "65536", "131072"}  # up to the ZIL's block size
    assert z.iops_4k == pytest.approx(recorded("on", 4096)["jobs"][0]["write"]["iops"])


def test_without_a_profile_every_size_verdict_says_it_was_estimated_from_4_kib():
    v = evaluate(doc(Run(write_cache="on", points=[solo(3000.0, sync_p99_us=700.0)])))
    for verdict in (v.etcd, v.postgres_wal):
        assert verdict.basis == "estimated from 4 KiB" and verdict.block_size == 4096
        assert any(r.startswith("estimated from 4 KiB") for r in verdict.reasons)
    assert v.etcd.p99_fdatasync_ms == pytest.approx(0.7) and v.postgres_wal.commits_per_s == 3000
    # 3000 x 128 KiB = 393 MB/s at the very most: no tier can be told from 4 KiB
    assert v.zfs_slog.tier is None and v.zfs_slog.basis == "estimated from 4 KiB"
    assert v.zfs_slog.bw_bytes_at_most == pytest.approx(3000 * 131072) and v.zfs_slog.bw_bytes is None


def test_a_slow_device_is_unsuitable_as_a_slog_even_estimated_from_4_kib():
    # 500 x 128 KiB = 66 MB/s: even a 128 KiB write as quick as a 4 KiB one is below 100 MB/s
    z = evaluate(doc(Run(write_cache="off", points=[solo(500.0)]))).zfs_slog
    assert z.tier == "unsuitable" and z.basis == "estimated from 4 KiB"
    assert "at most 66 MB/s" in z.reasons[0]


def test_an_interrupted_8_kib_step_leaves_its_nearer_larger_neighbour():
    profile = recorded_profile("on")
    profile.points = [p.model_copy(update={"interrupted": True}) if p.block_size == 8192 else p for p in profile.points]
    v = evaluate(doc(Run(write_cache="on", points=[solo(3100.0)], sizes=profile)))
    assert v.etcd.block_size == 16384 and v.postgres_wal.block_size == 16384  # 4 KiB and 16 KiB tie: the slower
    assert v.etcd.p99_fdatasync_ms == pytest.approx(p99_ms(recorded("on", 16384)))
    assert "cache on: 1 interrupted size-profile step left out" in v.notes


def test_no_step_within_a_factor_of_two_is_an_estimate():
    profile = recorded_profile("on", sizes=(512, 65536, 1048576))
    v = evaluate(doc(Run(write_cache="on", points=[solo(3100.0)], sizes=profile)))
    assert v.etcd.basis == v.postgres_wal.basis == "estimated from 4 KiB"
    assert v.zfs_slog.basis == "measured" and v.zfs_slog.block_size == 65536  # 128 KiB's neighbour


def test_a_profile_of_an_unknown_method_version_is_not_read():
    v = evaluate(doc(Run(write_cache="on", points=[solo(3100.0)], sizes=recorded_profile("on", version=3))))
    assert v.etcd.basis == "estimated from 4 KiB"
    assert any(
        "size profile of method diskq-size-profile version 3 not read (this diskq reads versions 1 and 2)" in n
        for n in v.notes
    )


@pytest.mark.parametrize("version", [1, 2])
def test_both_size_profile_versions_are_read(version):
    v = evaluate(doc(Run(write_cache="on", points=[solo(3100.0)], sizes=recorded_profile("on", version=version))))
    assert v.etcd.basis == v.postgres_wal.basis == "measured"


def test_the_profile_of_an_unsafe_run_is_never_used():
    # cache "off" by the kernel's knob on a drive that may cache: its fast profile is not safe
    fast_off = Run(
        write_cache="off", cache_mechanism="sysfs", points=[solo(25000.0, 2.0)], sizes=recorded_profile("off")
    )
    on = Run(write_cache="on", cache_mechanism="sysfs", points=[solo(3100.0)], sizes=recorded_profile("on"))
    v = evaluate(doc(fast_off, on))
    assert v.etcd.cache_state == v.postgres_wal.cache_state == v.zfs_slog.cache_state == "on"
    assert v.zfs_slog.bw_bytes == pytest.approx(recorded("on", 131072)["jobs"][0]["write"]["bw_bytes"])
    # with only the unsafe run nothing safe was measured: no tier, and what to measure
    alone = evaluate(doc(fast_off)).zfs_slog
    assert alone.tier is None and any(r.startswith("no verdict") for r in alone.reasons)


def test_a_memory_backed_target_gets_no_slog_verdict():
    d = doc(Run(write_cache="on", points=[solo(3100.0)], sizes=recorded_profile("on")))
    d.notes.append("memory-backed target: zram0; the figures measure memory, not a drive, so no verdict applies")
    z = evaluate(d).zfs_slog
    assert z.tier is None and z.reasons[0].startswith("not applicable")


def test_the_document_round_trips_with_its_new_verdict_fields():
    d = annotate(doc(Run(write_cache="on", points=[solo(3100.0)], sizes=recorded_profile("on"))))
    again = ResultDocument.model_validate_json(d.to_json())
    assert again.verdicts == d.verdicts and again.verdicts.zfs_slog.basis == "measured"


def test_a_document_of_criteria_version_3_still_validates():
    d = annotate(doc(Run(write_cache="on", points=[solo(3100.0)])))
    data = d.model_dump(mode="json")
    data["verdicts"].pop("zfs_slog")
    for key in ("etcd", "postgres_wal"):
        data["verdicts"][key].pop("basis")
        data["verdicts"][key].pop("block_size")
    data["verdicts"]["criteria_version"] = 3
    old = ResultDocument.model_validate(data)
    assert old.verdicts.zfs_slog is None and old.verdicts.etcd.basis is None


# --- properties ---------------------------------------------------------------------------------

block_sizes = st.sets(st.sampled_from(SIZES), min_size=1).map(sorted)


@given(block_sizes, st.sampled_from((2300, 4096, 8000, 8192, 131072)))
def test_nearest_is_the_closest_size_within_the_ratio(present, target):
    points = sized({bs: 1000.0 for bs in present})
    got = sizes.nearest(points, target, RATIO)
    distance = {bs: abs(math.log2(bs / target)) for bs in present}
    near = [bs for bs in present if distance[bs] <= math.log2(RATIO) + 1e-9]
    if not near:
        assert got is None
    else:
        assert got is not None and distance[got.block_size] == min(distance[bs] for bs in near)
        assert got.block_size == max(bs for bs in near if distance[bs] == distance[got.block_size])


@given(st.dictionaries(st.sampled_from(SIZES), st.floats(1, 1e6), min_size=1), st.floats(1.0, 50.0))
def test_a_faster_size_curve_never_gets_a_lower_slog_tier(curve, factor):
    """No tier (None) is "not known", not a tier below "unsuitable": estimated from 4 KiB alone, a
    slow curve's upper bound can prove "unsuitable" where a faster one's bound proves nothing."""
    rank = {"unsuitable": 0, "marginal": 1, "good": 2, "excellent": 3}
    runs = []
    for k in (1.0, factor):
        r = Run(write_cache="on", points=[solo(1000.0 * k)])
        r.sizes = recorded_profile("on", sizes=(4096,))
        r.sizes.points = sized({bs: x * k for bs, x in curve.items()})
        runs.append(evaluate(doc(r)).zfs_slog)
    slow, fast = runs[0].tier, runs[1].tier
    if fast is None:
        assert slow in (None, "unsuitable") and runs[1].basis != "measured"
    elif slow is not None:
        assert rank[fast] >= rank[slow]


# --- real fio on a loop device ------------------------------------------------------------------


@needs_fio
def test_verdicts_from_a_profile_measured_now_on_a_loop_device(make_loop):
    dev = make_loop(64 * 1024 * 1024)
    profile = measure_profile(dev, sizes=(4096, 8192, 131072), runtime_s=1)
    step_8k = next(p for p in profile.points if p.block_size == 8192)
    d = annotate(doc(Run(write_cache="on", cache_mechanism="sysfs", points=[size_as_sweep(profile)], sizes=profile)))
    v = d.verdicts
    assert v.etcd.basis == "measured" and v.etcd.block_size == 8192
    assert v.etcd.p99_fdatasync_ms == pytest.approx(p99_ms(step_8k.fio))
    assert v.postgres_wal.commits_per_s == pytest.approx(step_8k.iops)
    step_128k = next(p for p in profile.points if p.block_size == 131072)
    assert v.zfs_slog.bw_bytes == pytest.approx(step_128k.bw_bytes) and v.zfs_slog.tier is not None


def size_as_sweep(profile) -> Point:
    """The profile's 4 KiB step as the sweep's 1-job point (the same pattern at 1 job)."""
    p = next(p for p in profile.points if p.block_size == 4096)
    return Point(numjobs=1, **p.model_dump(exclude={"block_size"}))


def test_recorded_steps_parse_into_size_points_that_agree_with_fio():
    for cache in ("on", "off"):
        for bs in SIZES:
            data = recorded(cache, bs)
            p = size_point(data, bs)
            assert p.bw_bytes == pytest.approx(p.iops * bs, rel=0.02)
            assert p.sync_lat_us is not None and p.sync_lat_us.p99 == pytest.approx(p99_ms(data) * 1000)


def test_the_terminal_lines_name_the_slog_tier_and_mark_estimates():
    from diskq.cli._render import verdict_lines

    measured = verdict_lines(evaluate(doc(Run(write_cache="on", points=[solo(3100.0)], sizes=recorded_profile("on")))))
    slog = next(line for line in measured if line.startswith("ZFS SLOG:"))
    assert "128 KiB" in slog and "estimated" not in " ".join(measured)
    estimated = verdict_lines(evaluate(doc(Run(write_cache="on", points=[solo(3000.0)]))))
    marked = [line.split(":")[0] for line in estimated if "estimated from 4 KiB" in line]
    assert marked == ["etcd", "PostgreSQL WAL", "ZFS SLOG"]
    assert next(line for line in estimated if line.startswith("ZFS SLOG:")).startswith("ZFS SLOG: no verdict (")


def test_the_slog_bound_uses_the_profiles_own_4_kib_rate_when_it_has_no_step_near_128_kib():
    r = Run(write_cache="on", points=[solo(3000.0)], sizes=recorded_profile("on", sizes=(4096,)))
    r.sizes.points = sized({4096: 600.0})  # the profile's 4 KiB step: 600 x 128 KiB = 79 MB/s at most
    z = evaluate(doc(r)).zfs_slog
    assert z.basis == "estimated from 4 KiB" and z.tier == "unsuitable" and z.iops_4k == 600.0
    assert z.bw_bytes_at_most == pytest.approx(600.0 * 131072)
