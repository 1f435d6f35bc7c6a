"""Invariants of diskq cluster's judging rules (criteria.toml [cluster]), for any figures."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from diskq.analyse import criteria
from diskq.cluster import judge
from diskq.cluster.models import per_osd_rate
from diskq.plan import rules as plan_rules

CRIT = criteria.section("cluster")
GUIDE = plan_rules.load()["osds"]
positive = st.floats(min_value=1e-7, max_value=1e6, allow_nan=False, allow_infinity=False)
rates = st.floats(min_value=1.0, max_value=1e6, allow_nan=False, allow_infinity=False)
curves = st.dictionaries(st.integers(1, 64), rates, min_size=1, max_size=8).map(lambda d: sorted(d.items()))


def test_the_rules_have_their_numbers_and_reasons():
    for key in (
        "commit_latency_factor",
        "mclock_factor",
        "mclock_default_hdd",
        "mclock_default_ssd",
        "mclock_threshold_hdd",
        "mclock_threshold_ssd",
        "db_min_share",
        "sources",
        "justification",
    ):
        assert CRIT[key], key
    assert CRIT["mclock_default_hdd"] < CRIT["mclock_threshold_hdd"]
    assert CRIT["mclock_default_ssd"] < CRIT["mclock_threshold_ssd"]


@given(positive, positive)
def test_commit_latency_flags_exactly_beyond_the_factor(avg, predicted):
    f = judge.commit_latency(1, avg, predicted, CRIT)
    assert (f is not None) == (avg > CRIT["commit_latency_factor"] * predicted)
    if f is not None:
        assert f.evidence == {"kv_commit_lat_s": avg, "predicted_s": predicted}


@given(positive, positive, st.floats(min_value=1.0, max_value=100.0))
def test_a_slower_commit_never_clears_a_flag(avg, predicted, worse):
    if judge.commit_latency(1, avg, predicted, CRIT):
        assert judge.commit_latency(1, avg * worse, predicted, CRIT)


@given(curves, st.integers(1, 64), st.one_of(st.none(), st.floats(min_value=1.0, max_value=1e6)))
def test_prediction_is_never_below_the_device_alone(curve, sharing, p99_us):
    got = judge.predicted_commit_s(curve, sharing, p99_us)
    alone = judge.predicted_commit_s(curve, 1, p99_us)
    if got is not None and alone is not None:
        assert got[0] >= alone[0] - 1e-15  # sharing the device never predicts a faster commit


@given(curves, st.integers(1, 64))
def test_per_osd_rate_is_bounded_by_the_curve(curve, n):
    rate = per_osd_rate(curve, n)
    below = [(m, x) for m, x in curve if m <= n]
    if not below:
        assert rate is None
        return
    m, x = below[-1]
    assert rate <= x / m + 1e-9
    assert rate <= max(x for _, x in curve) / n + 1e-9


@given(st.sampled_from(["hdd", "ssd"]), positive, rates)
def test_mclock_against_the_device(kind, capacity, rate):
    f = judge.mclock_vs_device(3, kind, capacity, rate, CRIT)
    factor = CRIT["mclock_factor"]
    above = capacity > factor * rate
    below = capacity * factor < rate and kind == "ssd"
    assert (f is not None) == (above or below)
    if f is not None:
        # the line it prints sets the device's per-OSD rate for that OSD, and nothing else
        assert f.config == [f"ceph config set osd.3 osd_mclock_max_capacity_iops_{kind} {rate:.0f}"]


@given(st.sampled_from(["hdd", "ssd"]), st.dictionaries(st.integers(0, 500), positive, max_size=20))
def test_mclock_spread_flags_exactly_beyond_the_factor(kind, caps):
    f = judge.mclock_spread(kind, caps, CRIT)
    spread = len(caps) >= 2 and max(caps.values()) / min(caps.values()) > CRIT["mclock_factor"]
    assert (f is not None) == spread
    if f is not None:
        assert f.evidence["low"] and f.evidence["high"]
        assert not set(f.evidence["low"]) & set(f.evidence["high"])


@given(st.sampled_from(["hdd", "ssd"]), positive)
def test_mclock_threshold(kind, capacity):
    f = judge.mclock_threshold(5, kind, capacity, CRIT)
    assert (f is not None) == (capacity > CRIT[f"mclock_threshold_{kind}"])
    if f is not None:
        assert f.config == [f"ceph config rm osd.5 osd_mclock_max_capacity_iops_{kind}"]


@given(st.lists(st.integers(0, 999), min_size=1, max_size=40, unique=True), st.booleans())
def test_guideline_counts_the_osds_on_a_drive(osds, nvme):
    limit = GUIDE["guideline_max_nvme" if nvme else "guideline_max_sata_sas"]
    f = judge.db_guideline(osds, nvme, GUIDE)
    assert (f is not None) == (len(osds) > limit)


@given(st.lists(st.integers(0, 999), min_size=1, max_size=40, unique=True), st.integers(0, 40), st.booleans())
def test_shared_beyond_the_database_figure(osds, figure, limited):
    f = judge.db_shared(osds, "M", figure, limited)
    # an "at least N" figure never flags: more than N is not known to be too many
    assert (f is not None) == (len(osds) > figure and not limited)


@given(
    st.integers(0, 10**13), st.one_of(st.none(), st.integers(0, 10**12)), st.one_of(st.none(), st.integers(1, 10**12))
)
def test_spillover_is_any_slow_use(slow, used, total):
    f = judge.spillover(1, slow, used, total)
    assert (f is not None) == (slow > 0)


@given(st.integers(1, 10**13), st.integers(1, 10**14))
def test_db_small_below_the_share(db, data):
    f = judge.db_small(1, db, data, CRIT)
    assert (f is not None) == (db / data < CRIT["db_min_share"])


def test_the_docstring_examples_hold():
    import doctest

    from diskq.cluster import checks, config, explain, health, inputs, models, parse, perf, volumes

    for module in (judge, parse, perf, models, config, health, inputs, checks, explain, volumes):
        result = doctest.testmod(module)
        assert result.attempted and not result.failed, module.__name__


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**15)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "id",
                    "hostname",
                    "osd_objectstore",
                    "bluefs",
                    "bluestore",
                    "osd",
                    "nodes",
                    "summary",
                    "section",
                    "name",
                    "value",
                    "devid",
                    "checks",
                    "iops",
                    "blocksize",
                    "osd_op_queue",
                    "device_ids",
                    "bluefs_dedicated_db",
                    "bluefs_db_devices",
                    "bluestore_bdev_size",
                    "bluefs_dedicated_wal",
                    "bluefs_wal_devices",
                    "db_total_bytes",
                    "slow_used_bytes",
                    "kv_commit_lat",
                    "avgcount",
                    "sum",
                    "type",
                    "status",
                    "osd_metadata",
                    "path",
                    "sys_api",
                    "detail",
                    "message",
                    "format",
                    "osd_perf_infos",
                    "osdstats",
                    "perf_stats",
                    "commit_latency_ms",
                    "partitions",
                    "whoami",
                    "journal_dev",
                    "osds",
                    "vgs",
                    "data_size",
                    "block_db",
                    "health",
                    "filestore",
                    "journal_latency",
                    "severity",
                    "muted",
                    "0",
                    "1",
                ]
            ),
            inner,
            max_size=6,
        )
    ),
    max_leaves=25,
)


@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                [
                    "osd-metadata.json",
                    "perf-dump.osd.1.json",
                    "osd-df.json",
                    "config-dump.json",
                    "device-ls.json",
                    "x.json",
                    "osd-bench-osd.2.json",
                    "ceph-volume-lvm-list.h1.json",
                    "osd-perf.json",
                    "health-detail.json",
                ]
            ),
            json_values,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_any_json_is_read_or_refused_in_one_line(files):
    """Whatever JSON the files hold, the answer is built or one InvalidInput is raised: never a traceback."""
    import json
    import tempfile
    from pathlib import Path

    from diskq.cluster import inputs, report
    from diskq.errors import InvalidInput

    with tempfile.TemporaryDirectory() as tmp:
        for name, value in files:
            Path(tmp, name).write_text(json.dumps(value))
        try:
            inp = inputs.read_dir(Path(tmp))
        except InvalidInput:
            return
        doc = report.build(inp, db=None)
        json.dumps(doc)
        assert doc["format"] == "diskq-cluster"
        from diskq.cli.cluster import _render
        from diskq.publish.cluster import render_html

        _render(doc)
        assert render_html(doc).startswith("<!DOCTYPE html>")
