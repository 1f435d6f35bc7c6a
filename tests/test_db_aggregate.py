"""Invariants of grouping keys and aggregation (property tests on the pure functions)."""

from __future__ import annotations

import math
import re
import statistics
from array import array

from hypothesis import given, settings
from hypothesis import strategies as st

from diskq.database.aggregate import aggregate_cache, aggregate_device, best_cache, rank_key
from diskq.database.keys import device_id, firmware_key, model_key
from diskq.database.record import CURVE_FIELDS, RunSummary, SubmissionRecord, all_finite

NAN = math.nan


def record(
    sid: str,
    curves: dict[str, dict[int, float]],
    *,
    legacy=False,
    verified=False,
    method=("diskq-fdatasync-sweep", 1),
    flush=None,
    mechanism=None,
    volatile=None,
) -> SubmissionRecord:
    runs = []
    for i, (state, curve) in enumerate(sorted(curves.items())):
        flat = array("d")
        for n, iops in sorted(curve.items()):
            flat.extend((n, iops, *[NAN] * (len(CURVE_FIELDS) - 2)))
        runs.append(RunSummary(i, state, (flush or {}).get(state), None, flat, mechanism, mechanism is not None))
    return SubmissionRecord(
        id=sid,
        device_id="dev",
        model_key="m",
        firmware_key="",
        row=(),
        run_rows=[],
        point_rows=[],
        runs=runs,
        model="M",
        vendor=None,
        firmware=None,
        capacity_bytes=None,
        protocol="ata",
        media="ssd",
        legacy=legacy,
        verified=verified,
        method=method,
        created=None,
        volatile_write_cache=volatile,
    )


ON, OFF = ("on", "drive"), ("off", "drive")


jobs = st.sampled_from([1, 2, 4, 8, 16, 32])
curve = st.dictionaries(jobs, st.floats(min_value=1, max_value=1e6, allow_nan=False), min_size=1, max_size=6)
curves = st.lists(curve, min_size=1, max_size=9)
# submissions of one model that agree within the outlier limit (2x), so that none is left out
tight_curves = st.lists(
    st.dictionaries(jobs, st.floats(min_value=1000, max_value=1900), min_size=1, max_size=6), min_size=1, max_size=9
)


@given(curves)
def test_curve_medians_lie_within_their_spread_and_count_submissions(cs):
    agg = aggregate_cache("off", [record(f"s{i}", {"off": c}) for i, c in enumerate(cs)])
    assert agg.submissions == len(cs)
    for p in agg.curve:
        values = [c[p.numjobs] for c in cs if p.numjobs in c]
        assert p.n == len(values)
        assert p.iops.min <= p.iops.median <= p.iops.max
        assert p.iops.median == statistics.median(values)
    ones = [c[1] for c in cs if 1 in c]
    assert (agg.iops_1job.median if agg.iops_1job else None) == (statistics.median(ones) if ones else None)
    assert agg.max_iops.max == max(max(c.values()) for c in cs)


@given(curves, st.randoms(use_true_random=False))
def test_device_aggregate_does_not_depend_on_submission_order(cs, rnd):
    recs = [record(f"s{i}", {"off": c, "on": {n: v * 2 for n, v in c.items()}}) for i, c in enumerate(cs)]
    shuffled = recs[:]
    rnd.shuffle(shuffled)
    a, b = aggregate_device("dev", recs), aggregate_device("dev", shuffled)
    assert a.caches == b.caches and a.best == b.best and a.notes == b.notes


@given(tight_curves)
def test_a_failed_flush_check_makes_a_setting_unsafe_and_never_chosen_while_another_is_safe(cs):
    recs = [
        record(f"s{i}", {"off": c, "on": {n: v * 10 for n, v in c.items()}}, flush={"on": i != 0})
        for i, c in enumerate(cs)
    ]
    dev = aggregate_device("dev", recs)
    assert dev.caches[ON].safe is False and dev.caches[OFF].safe is True
    assert dev.best == OFF


def test_only_the_majority_method_is_aggregated():
    recs = [
        record("a", {"off": {1: 100}}),
        record("b", {"off": {1: 300}}),
        record("c", {"off": {1: 9000}}, legacy=True, method=("community-fio-ceph-iops", 1)),
    ]
    dev = aggregate_device("dev", recs)
    assert dev.method == ("diskq-fdatasync-sweep", 1) and dev.submissions == 2 and dev.legacy == 0
    assert dev.caches[OFF].iops_1job.median == 200


def test_no_safe_setting_falls_back_with_a_note():
    caches = {ON: aggregate_cache("on", [record("a", {"on": {1: 100}}, flush={"on": False})])}
    best, notes = best_cache(caches)
    assert best == ON and notes and "no safe cache setting" in notes[0]


@given(tight_curves, st.sampled_from([True, None]))
def test_cache_off_by_the_kernel_knob_is_unsafe_and_never_mixed_with_the_drive_setting(cs, volatile):
    # loop/virtio sweeps set "off" with the kernel's queue/write_cache: the kernel then sends no
    # flushes, the drive's cache (if any) still holds the data
    recs = [
        record(f"k{i}", {"off": {n: v * 20 for n, v in c.items()}, "on": c}, mechanism="sysfs", volatile=volatile)
        for i, c in enumerate(cs)
    ]
    recs.append(record("drive", {"off": {1: 7.0}}, mechanism="hdparm", volatile=volatile))
    dev = aggregate_device("dev", recs)
    kernel_off, kernel_on = dev.caches[("off", "kernel")], dev.caches[("on", "kernel")]
    assert kernel_off.safe is False and "kernel" in kernel_off.unsafe_reason
    assert kernel_off.submissions == len(cs) and dev.caches[OFF].submissions == 1
    assert dev.caches[OFF].iops_1job.median == 7.0  # not a median with the kernel-knob runs
    assert kernel_on.safe is True and dev.best in (("on", "kernel"), OFF)
    assert dev.best != ("off", "kernel")


def test_cache_off_by_the_kernel_knob_is_safe_when_every_submission_reports_no_volatile_cache():
    recs = [
        record("a", {"off": {1: 900.0}}, mechanism="sysfs", volatile=False),
        record("b", {"off": {1: 1100.0}}, mechanism="sysfs", volatile=False),
    ]
    assert aggregate_device("dev", recs).caches[("off", "kernel")].safe is True
    recs.append(record("c", {"off": {1: 1000.0}}, mechanism="sysfs", volatile=None))  # one does not know
    assert aggregate_device("dev", recs).caches[("off", "kernel")].safe is False


@given(st.lists(st.floats(min_value=0, max_value=1e6, allow_nan=False) | st.none(), min_size=2, max_size=30))
def test_rank_order_is_descending_one_job_iops_with_missing_values_last(values):
    devs = []
    for i, v in enumerate(values):
        rec = record(f"s{i}", {"off": {1: v} if v is not None else {2: 5.0}})
        d = aggregate_device(f"d{i}", [rec])
        d.model_key = f"model {i:03d}"
        devs.append(d)
    ordered = sorted(devs, key=rank_key)
    got = [d.row_cache.iops_1job.median if d.row_cache.iops_1job else None for d in ordered]
    present = [v for v in got if v is not None]
    assert present == sorted(present, reverse=True)
    assert got[len(present) :] == [None] * (len(got) - len(present))


text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)


@given(text)
@settings(max_examples=200)
def test_model_key_ignores_case_and_white_space(model):
    key = model_key(model)
    assert model_key(key) == key
    assert model_key("  " + model.upper().replace(" ", "\t ") + " ") == model_key(model.upper())
    assert key == key.strip() and "  " not in key


@given(text, text)
def test_device_ids_are_url_safe_and_distinguish_keys(a, b):
    ida, idb = device_id(model_key(a), firmware_key(b)), device_id(model_key(a), firmware_key(b) + "x")
    assert re.fullmatch(r"[a-z0-9-]{1,90}", ida)
    assert ida != idb


@given(st.lists(st.none() | st.floats() | st.sampled_from([1.7e308, -1.7e308]), max_size=6))
def test_finite_figures_shortcut_equals_checking_each(values):
    assert all_finite(tuple(values)) == all(v is None or math.isfinite(v) for v in values)
