"""The stored analysis (scaling, flush check, verdicts) may not claim more than its figures give."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diskq.analyse import annotate, criteria
from diskq.result import Device, Latency, Method, Point, ResultDocument, Run
from diskq.submission.analysis import analysis_problems, recompute


def _point(numjobs: int, iops: float, sync_p99_us: float = 20_000.0) -> Point:
    service = numjobs / iops * 1e6
    return Point(
        numjobs=numjobs,
        iops=iops,
        bw_bytes=iops * 4096,
        total_ios=0,
        runtime_ms=0,
        lat_us=Latency(mean=service * 0.3, p99=service * 0.6),
        sync_lat_us=Latency(mean=service * 0.7, p99=sync_p99_us),
    )


def _doc() -> ResultDocument:
    """An analysed document: marginal tier, etcd fails, an asymptotic curve, an honest flush."""
    run = Run(
        write_cache="on",
        cache_mechanism="hdparm",
        points=[_point(1, 1500.0), _point(2, 2200.0), _point(4, 2500.0), _point(8, 2550.0)],
        nosync=_point(1, 30_000.0),
    )
    run.nosync.sync_lat_us = None
    doc = ResultDocument(device=Device(protocol="ata", volatile_write_cache=True), method=Method(), runs=[run])
    return annotate(doc)


def _fields(doc: ResultDocument) -> list[str]:
    return [p.field for p in analysis_problems(doc)]


def test_the_analysis_a_document_was_made_with_is_accepted():
    doc = _doc()
    assert doc.verdicts.ceph_waldb.tier == "marginal" and doc.verdicts.etcd.passes is False
    assert doc.runs[0].scaling.scaling == "asymptotic" and doc.runs[0].flush_check.honest is True
    assert analysis_problems(doc) == []


def test_recomputing_leaves_the_document_alone():
    doc = _doc()
    doc.verdicts.ceph_waldb.tier = "excellent"
    doc.runs[0].flush_check.honest = False
    before = doc.model_dump()
    fresh = recompute(doc)
    assert doc.model_dump() == before
    assert fresh.verdicts.ceph_waldb.tier == "marginal" and fresh.runs[0].flush_check.honest is True


@pytest.mark.parametrize(
    "edit, field, words",
    [
        (
            lambda d: setattr(d.verdicts.ceph_waldb, "tier", "excellent"),
            "result.verdicts",
            "ceph_waldb.tier excellent (recomputed: marginal)",
        ),
        (lambda d: setattr(d.verdicts.etcd, "passes", True), "result.verdicts", "etcd.passes true (recomputed: false)"),
        (lambda d: setattr(d.verdicts.etcd, "passes", None), "result.verdicts", "etcd.passes null (recomputed: false)"),
        (lambda d: setattr(d.verdicts.etcd, "p99_fdatasync_ms", 0.5), "result.verdicts", "etcd.p99_fdatasync_ms 0.5"),
        (lambda d: setattr(d.verdicts.osds_per_device, "n", 64), "result.verdicts", "osds_per_device.n 64"),
        (
            lambda d: setattr(d.verdicts.postgres_wal, "commits_per_s", 9e9),
            "result.verdicts",
            "postgres_wal.commits_per_s",
        ),
        (
            lambda d: setattr(d.verdicts.zfs_slog, "tier", "excellent"),
            "result.verdicts",
            "zfs_slog.tier excellent (recomputed: null)",
        ),
        (lambda d: setattr(d.verdicts.zfs_slog, "bw_bytes", 2e9), "result.verdicts", "zfs_slog.bw_bytes 2e+09"),
        (
            lambda d: setattr(d.verdicts.etcd, "basis", "measured"),
            "result.verdicts",
            "etcd.basis measured (recomputed: estimated from 4 KiB)",
        ),
        (lambda d: setattr(d.verdicts.postgres_wal, "basis", "measured"), "result.verdicts", "postgres_wal.basis"),
        (
            lambda d: setattr(d.runs[0].scaling, "scaling", "linear"),
            "result.runs[0].scaling",
            "scaling linear (recomputed: asymptotic)",
        ),
        (lambda d: setattr(d.runs[0].scaling.peak, "iops", 1e6), "result.runs[0].scaling", "peak.iops 1e+06"),
    ],
)
def test_a_better_outcome_than_the_figures_give_is_a_problem(edit, field, words):
    doc = _doc()
    edit(doc)
    problems = analysis_problems(doc)
    assert [p.field for p in problems] == [field]
    assert "claims a better outcome than its figures give" in problems[0].message and words in problems[0].message


def test_a_hidden_flush_warning_is_a_problem():
    doc = _doc()
    doc.runs[0].nosync.iops = 1600.0  # fdatasync costs almost nothing: the check warns
    doc.runs[0].nosync.bw_bytes = 1600.0 * 4096
    assert recompute(doc).runs[0].flush_check.honest is False
    for honest in (True, None):
        doc.runs[0].flush_check.honest = honest
        problems = analysis_problems(doc)
        assert "result.runs[0].flush_check" in [p.field for p in problems]
        line = next(p for p in problems if p.field == "result.runs[0].flush_check")
        assert f"honest {'true' if honest else 'null'} (recomputed: false)" in line.message
    # the run is unsafe now, so the stored verdicts claim more than the figures give as well
    assert "result.verdicts" in _fields(doc)


def test_several_claims_of_one_field_are_one_line():
    doc = _doc()
    doc.verdicts.ceph_waldb.tier = "excellent"
    doc.verdicts.etcd.passes = True
    doc.runs[0].scaling.scaling = "linear"
    doc.runs[0].flush_check.honest = None
    assert _fields(doc) == ["result.runs[0].scaling", "result.verdicts"]  # honest null < true: no claim


def test_worse_absent_or_reworded_outcomes_are_not_problems():
    doc = _doc()
    doc.verdicts.ceph_waldb.tier = "unsuitable"
    doc.verdicts.ceph_waldb.reasons = ["in other words"]
    doc.verdicts.osds_per_device.n = 1
    doc.runs[0].scaling.scaling = "regressing"
    doc.runs[0].scaling.description = "reworded"
    doc.runs[0].flush_check.honest = False
    assert analysis_problems(doc) == []
    doc.verdicts = None
    doc.runs[0].scaling = doc.runs[0].flush_check = None
    assert analysis_problems(doc) == []


def test_a_claimed_class_where_the_points_allow_none_is_a_problem():
    doc = _doc()
    scaling = doc.runs[0].scaling
    doc.runs[0].points = doc.runs[0].points[:1]
    doc.runs[0].scaling = scaling
    doc.verdicts = None
    assert _fields(doc) == ["result.runs[0].scaling"]


def test_a_flush_check_without_its_step_may_not_claim_honesty():
    doc = _doc()
    doc.runs[0].nosync = None
    problems = analysis_problems(doc)
    assert [p.field for p in problems] == ["result.runs[0].flush_check"]
    assert "no flush check possible" in problems[0].message


def test_unknown_criteria_versions_are_problems():
    current = criteria.load()["version"]
    for version in (0, current + 1, 99):
        doc = _doc()
        doc.verdicts.criteria_version = version
        problems = analysis_problems(doc)
        assert [p.field for p in problems] == ["result.verdicts.criteria_version"]
        assert f"is not one this diskq knows (1 to {current})" in problems[0].message


def test_an_analysis_made_with_earlier_criteria_is_not_compared(monkeypatch):
    doc = _doc()
    doc.verdicts.ceph_waldb.tier = "excellent"  # perhaps right by the criteria of its own version
    newer = criteria.load()
    newer["version"] = doc.verdicts.criteria_version + 1
    monkeypatch.setattr(criteria, "_load", lambda: newer)
    assert analysis_problems(doc) == []
    doc.verdicts.criteria_version = newer["version"]
    assert _fields(doc) == ["result.verdicts"]


def test_validation_reports_a_signed_file_that_claims_more_than_its_figures(tmp_path):
    from tests.test_submission_support import (
        HAVE_FIO,
        HAVE_SSH_KEYGEN,
        allowed_signers,
        fio_nosync_run,
        fio_runs,
        keygen,
        nosync_point_from,
        result_from,
    )

    if not (HAVE_FIO and HAVE_SSH_KEYGEN):
        pytest.skip("needs fio and ssh-keygen")
    from diskq.submission.legacy import dump
    from diskq.submission.model import Contributor
    from diskq.submission.sign import make_submission, sign_submission
    from diskq.submission.validate import validate_file

    doc = result_from(fio_runs(), method_id="diskq-fdatasync-sweep")
    doc.runs[0].write_cache = "on"
    doc.runs[0].nosync = nosync_point_from(fio_nosync_run())
    annotate(doc)
    key = keygen(tmp_path)
    allowed = allowed_signers(tmp_path / "allowed", "octocat", key)

    def check(result: ResultDocument) -> list[str]:
        signed = sign_submission(
            make_submission(result, contributor=Contributor(github="octocat")), key, principal="octocat"
        )
        path = tmp_path / f"{signed.id}.json"
        path.write_text(dump(signed))
        return [str(p) for p in validate_file(path, allowed_signers=allowed)[1]]

    assert check(doc) == []
    forged = doc.model_copy(deep=True)  # claims better whatever this machine measured
    forged.verdicts.ceph_waldb.iops = (forged.verdicts.ceph_waldb.iops or 1.0) * 10
    forged.verdicts.postgres_wal.commits_per_s = (forged.verdicts.postgres_wal.commits_per_s or 1.0) * 10
    forged.runs[0].scaling.peak.iops *= 10
    lines = check(forged)
    assert [line.split(": ")[1] for line in lines] == ["result.runs[0].scaling", "result.verdicts"], lines
    assert all("claims a better outcome than its figures give" in line for line in lines)


@settings(max_examples=100, deadline=None)
@given(
    curve=st.dictionaries(st.sampled_from([1, 2, 3, 4, 6, 8, 12, 16, 24, 32]), st.floats(0, 200_000), min_size=1),
    nosync=st.none() | st.floats(0, 400_000),
    cache=st.sampled_from(["on", "off", "unknown"]),
    mechanism=st.sampled_from([None, "hdparm", "sysfs"]),
    volatile=st.sampled_from([None, True, False]),
)
def test_a_document_analysed_by_diskq_never_claims_more_than_its_recomputation(
    curve, nosync, cache, mechanism, volatile
):
    points = [
        Point(
            numjobs=n,
            iops=x,
            bw_bytes=x * 4096,
            total_ios=0,
            runtime_ms=0,
            lat_us=Latency(),
            sync_lat_us=Latency(p99=1e6 / x if x else None),
        )
        for n, x in sorted(curve.items())
    ]
    run = Run(write_cache=cache, cache_mechanism=mechanism, points=points)
    if nosync is not None:
        run.nosync = Point(numjobs=1, iops=nosync, bw_bytes=nosync * 4096, total_ios=0, runtime_ms=0, lat_us=Latency())
    doc = annotate(ResultDocument(device=Device(volatile_write_cache=volatile), method=Method(), runs=[run]))
    assert analysis_problems(doc) == []


def test_a_memory_backed_result_is_not_a_submission(tmp_path):
    # diskq bench marks a RAM disk, zram or a file on tmpfs with a note; such a figure says nothing
    # about a drive and must not reach the device database
    from diskq.analyse.memorybacked import MEMORY_BACKED
    from diskq.database.synthetic import result_document, submission, write_submission
    from diskq.submission.validate import validate_file

    result = result_document("Linux zram", {"on": {1: 60000.0, 2: 100000.0}})
    clean = write_submission(tmp_path / "a", submission(result))
    _, problems = validate_file(clean, root=tmp_path / "a", require_signature=False)
    assert problems == []
    result["notes"] = [f"{MEMORY_BACKED} /dev/zram0 is RAM (zram): figures measure memory, not a drive"]
    path = write_submission(tmp_path / "b", submission(result))
    _, problems = validate_file(path, root=tmp_path / "b", require_signature=False)
    assert [(p.field, p.message) for p in problems] == [
        ("result.notes[0]", "measured a memory-backed target, not a drive: not a submission")
    ]
