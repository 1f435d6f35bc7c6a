"""SLOG and endurance: the SLOG tier weighs 128 KiB sync bandwidth, capacity and endurance (never
4 KiB IOPS alone); a WAL/DB verdict shows what its OSDs would write per day against the rated
DWPD/TBW. Line facts are built from the real rows of ../shared/data/datasheets/; the invariants of
the arithmetic are property tests."""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diskq.analyse import endurance, sizes
from diskq.analyse.verdicts import evaluate, load_criteria
from diskq.identity.facts import LineFacts
from diskq.result import Device, Method, ResultDocument, Run
from tests.size_profiles import recorded_profile
from tests.test_size_verdicts import sized, solo

CRIT = load_criteria()
SLOG, END = CRIT["zfs_slog"], CRIT["endurance"]
RANK = {"unsuitable": 0, "marginal": 1, "good": 2, "excellent": 3}
REPO = Path(__file__).resolve().parents[1]
SHEETS = Path(os.environ.get("DISKQ_SHARED") or REPO.parent / "shared") / "data" / "datasheets"
needs_sheets = pytest.mark.skipif(not SHEETS.is_dir(), reason=f"datasheet tables absent ({SHEETS}): not committed")
GB, TB = 10**9, 10**12
_UNIT = {"GB": GB, "TB": TB, "PB": 10**15, "PBW": 10**15, "TBW": TB}


def _size(text: str) -> int:
    number, unit = re.fullmatch(r"([\d.]+)\s*(GB|TB|PBW?|TBW)", text.strip()).groups()
    return round(float(number) * _UNIT[unit])


def facts(vendor: str, line: str) -> LineFacts:
    """LineFacts with the endurance of the real row (TBW pairs "58GB 635TB"; a leading DWPD number)."""
    for path in sorted(SHEETS.glob("*.csv")):
        with path.open(newline="") as f:
            for row in csv.DictReader(f):
                if row["vendor"] == vendor and row["line"] == line:
                    tbw = {}
                    for capacity, written in re.findall(
                        r"(\d+(?:\.\d+)?\s*[GT]B):?\s+(\d+(?:\.\d+)?\s*(?:TBW?|PBW?))", row["tbw_by_capacity"]
                    ):
                        tbw[_size(capacity)] = _size(written)
                    dwpd = re.match(r"\s*([\d.]+)", row["dwpd"])
                    note = re.search(r"\((.*?)\)", row["dwpd"])
                    return LineFacts(
                        vendor=vendor,
                        line=line,
                        segment=row["segment"].split(" (")[0],
                        dwpd=float(dwpd.group(1)) if dwpd else None,
                        dwpd_note=note.group(1) if note else None,
                        tbw_by_capacity=tbw,
                    )
    raise AssertionError(f"no row {vendor} {line}")


def figure(bw: float, **kw):
    return sizes.zfs_slog_from_figure(SLOG, END, bw, source="a public figure", **kw)


# --- the SLOG tier ---------------------------------------------------------------------------------


@needs_sheets
def test_the_16_gb_optane_m10_is_not_an_excellent_slog():
    m10 = facts("Intel", "Optane Memory M10")
    # its 4 KiB writes with a flush are fast (18 600/s in a public run), but 145 MB/s of 128 KiB
    # sync writes is what a SLOG takes: marginal, and its endurance is not known
    z = figure(145e6, capacity_bytes=16 * GB, facts=m10)
    assert (z.tier, z.bandwidth_tier, z.basis) == ("marginal", "marginal", "public figure")
    assert z.endurance is not None and z.endurance.basis == "unknown"
    assert any(r.startswith("endurance not weighed") for r in z.reasons)
    assert any("capacity 16 GB" in r for r in z.reasons)
    # the same as an upper bound (the datasheet's sequential write speed) decides no tier at all
    bound = figure(145e6, at_most=True, capacity_bytes=16 * GB, facts=m10)
    assert bound.tier is None and bound.bw_bytes_at_most == 145e6


def test_a_measured_4k_rate_does_not_make_a_slog_tier():
    # 60 000 4 KiB writes+flushes per second, but a 128 KiB step at 145 MB/s
    run = Run(write_cache="on", points=[solo(60000.0)], sizes=recorded_profile("on", sizes=(4096,)))
    run.sizes.points = sized({4096: 60000.0, 131072: 145e6 / 131072})
    d = ResultDocument(
        device=Device(model="test", capacity_bytes=16 * GB, volatile_write_cache=True), method=Method(), runs=[run]
    )
    z = evaluate(d).zfs_slog
    assert (z.tier, z.basis, z.capacity_bytes) == ("marginal", "measured", 16 * GB)
    assert z.iops_4k == pytest.approx(60000.0)


def test_a_small_device_is_limited_by_its_capacity():
    z = figure(2000e6, capacity_bytes=8 * GB)
    assert (z.bandwidth_tier, z.tier) == ("excellent", "good")
    assert any("limits the device below its bandwidth" in r for r in z.reasons)
    assert figure(2000e6, capacity_bytes=16 * GB).tier == "excellent"


@needs_sheets
def test_endurance_caps_the_tier():
    # Optane P1600X 58 GB: 6 DWPD, 348 GB per day: good at the assumed duty, whatever its bandwidth
    z = figure(1200e6, capacity_bytes=58 * GB, facts=facts("Intel", "Optane P1600X"))
    assert (z.bandwidth_tier, z.tier) == ("excellent", "good")
    assert z.endurance.basis == "datasheet" and z.endurance.rated_dwpd == 6.0
    # Optane DC P4800X 375 GB: 30 DWPD, no cap
    assert figure(2000e6, capacity_bytes=375 * GB, facts=facts("Intel", "Optane DC P4800X")).tier == "excellent"
    # Crucial MX500 1 TB: 360 TB written, spread over the assumed 5 years: 197 GB per day
    mx = figure(400e6, capacity_bytes=1000 * GB, facts=facts("Crucial", "MX500"))
    assert (mx.bandwidth_tier, mx.tier) == ("good", "marginal")
    assert mx.endurance.rated_tbw_bytes == 360 * TB
    assert any("5 years" in r for r in mx.endurance.reasons)


def test_endurance_too_low_for_any_tier_is_unsuitable_even_without_a_bandwidth():
    tiny = LineFacts(vendor="ACME", line="T1", tbw_by_capacity={120 * GB: 40 * TB})
    z = figure(500e6, at_most=True, capacity_bytes=120 * GB, facts=tiny)
    assert z.tier == "unsuitable" and any("by its capacity or endurance alone" in r for r in z.reasons)


def test_a_figure_at_another_block_size_decides_no_tier():
    z = figure(900e6, block_size=4096)
    assert z.tier is None and "decides no tier" in z.reasons[0]


def test_an_unsafe_run_gives_no_slog_verdict():
    # the kernel's knob sends no flush at all: nothing says what the drive does with one, so no
    # tier (missing evidence is never "unsuitable"), and the reasons say what to measure
    run = Run(write_cache="off", cache_mechanism="sysfs", points=[solo(90000.0)])
    z = evaluate(
        ResultDocument(
            device=Device(model="test", capacity_bytes=400 * GB, volatile_write_cache=True), method=Method(), runs=[run]
        )
    ).zfs_slog
    assert z.tier is None and any(r.startswith("no verdict") for r in z.reasons), z.reasons


# --- WAL/DB writes per day ----------------------------------------------------------------------------


@needs_sheets
def test_waldb_shows_the_writes_per_day_of_its_osds_against_the_rating():
    dc500m = facts("Kingston", "DC500M")  # 1.3 DWPD
    e = endurance.waldb(4, 315.0, 960 * GB, dc500m, END)
    assert e.bytes_per_day == pytest.approx(4 * 315 * 8192 * 86400)
    assert e.rated_bytes_per_day == pytest.approx(1.3 * 960 * GB)
    assert e.share_of_rating == pytest.approx(e.bytes_per_day / e.rated_bytes_per_day)
    assert e.basis == "datasheet" and "4 OSDs each committing 315 times per second" in e.reasons[0]
    assert "within the rating" in e.reasons[-1]
    assert endurance.waldb(12, 315.0, 960 * GB, dc500m, END).reasons[-1].startswith("beyond the rating")


def test_a_measured_document_carries_the_waldb_endurance():
    run = Run(write_cache="on", points=[solo(20000.0)])
    d = ResultDocument(
        device=Device(model="test", capacity_bytes=480 * GB, volatile_write_cache=True), method=Method(), runs=[run]
    )
    v = evaluate(d)
    assert v.osds_per_device.n and v.ceph_waldb.endurance is not None
    assert v.ceph_waldb.endurance.bytes_per_day == pytest.approx(
        endurance.osd_bytes_per_day(v.osds_per_device.n, 315.0, 8192)
    )
    assert v.ceph_waldb.endurance.basis == "unknown"  # no datasheet facts for a bare model string
    assert v.ceph_waldb.endurance.load_dwpd == pytest.approx(v.ceph_waldb.endurance.bytes_per_day / (480 * GB))


def test_no_osds_means_no_endurance_figure():
    assert endurance.waldb(0, 315.0, 480 * GB, None, END) is None


# --- invariants ---------------------------------------------------------------------------------

ratings = st.builds(
    lambda dwpd, tbw, cap: (
        LineFacts(vendor="ACME", line="X", dwpd=dwpd, tbw_by_capacity={cap: tbw} if tbw else {}),
        cap,
    ),
    st.none() | st.floats(0.05, 100),
    st.none() | st.integers(1 * TB, 50_000 * TB),
    st.integers(8 * GB, 30_000 * GB),
)


@settings(max_examples=200)
@given(a=st.integers(0, 64), b=st.integers(0, 64), demand=st.floats(1, 5000), per=st.floats(512, 65536))
def test_osd_writes_add_up(a, b, demand, per):
    total = endurance.osd_bytes_per_day(a + b, demand, per)
    parts = endurance.osd_bytes_per_day(a, demand, per) + endurance.osd_bytes_per_day(b, demand, per)
    assert total == pytest.approx(parts)
    assert total >= endurance.osd_bytes_per_day(a, demand, per)


@settings(max_examples=200)
@given(rated=ratings, n=st.integers(1, 40))
def test_more_osds_never_use_less_of_the_rating(rated, n):
    f, cap = rated
    one, more = endurance.waldb(n, 315.0, cap, f, END), endurance.waldb(n + 1, 315.0, cap, f, END)
    assert more.bytes_per_day > one.bytes_per_day
    if one.basis == "datasheet":
        assert more.share_of_rating > one.share_of_rating and more.years_to_rating < one.years_to_rating
        assert one.share_of_rating * one.rated_bytes_per_day == pytest.approx(one.bytes_per_day)
        assert one.reasons[-1].startswith("within" if one.share_of_rating <= 1 else "beyond")
    else:
        assert one.share_of_rating is None and one.years_to_rating is None


@settings(max_examples=200)
@given(
    rated=ratings, bw=st.floats(1e6, 5e9), capacity=st.none() | st.integers(1 * GB, 30_000 * GB), at_most=st.booleans()
)
def test_capacity_and_endurance_never_raise_a_slog_tier(rated, bw, capacity, at_most):
    f, _ = rated
    z = figure(bw, at_most=at_most, capacity_bytes=capacity, facts=f)
    if z.bandwidth_tier is not None:
        assert z.tier is not None and RANK[z.tier] <= RANK[z.bandwidth_tier]
    else:
        assert z.tier in (None, "unsuitable")


@settings(max_examples=200)
@given(cap=st.integers(8 * GB, 30_000 * GB), low=st.floats(0.05, 50), factor=st.floats(1, 20))
def test_a_higher_rating_never_gets_a_lower_slog_endurance_tier(cap, low, factor):
    tiers = [("excellent", SLOG["excellent_mb_s"]), ("good", SLOG["good_mb_s"]), ("marginal", SLOG["marginal_mb_s"])]
    a, _ = endurance.slog_floor_tier(tiers, LineFacts(vendor="A", line="L", dwpd=low), cap, END)
    b, _ = endurance.slog_floor_tier(tiers, LineFacts(vendor="A", line="L", dwpd=low * factor), cap, END)
    assert RANK[b] >= RANK[a]


def test_a_weak_figure_is_only_an_upper_bound():
    z = figure(1500e6, capacity_bytes=16 * GB, weak="a 0.3 s run")
    assert z.tier is None and z.bw_bytes_at_most == 1500e6 and "read as an upper bound" in z.reasons[0]
    assert figure(60e6, weak="a buffered run").tier == "unsuitable"
