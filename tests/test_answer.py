"""One answer per use with its basis (diskq.analyse.answer): each basis, the tier and OSD count
from one model on recorded results and on a real loop device, plan reading the same answer, and
missing evidence (a cache "off" by the kernel's knob on a loop device) never "unsuitable".

Recorded results: tests/fixtures/bench (diskq bench runs on loop devices, see its SOURCES.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diskq.analyse import annotate, answer, estimate
from diskq.analyse.verdicts import evaluate
from diskq.errors import PlanRefused
from diskq.identity.facts import LineFacts
from diskq.plan import device as plan_device
from diskq.plan import layout
from diskq.plan import rules as plan_rules
from diskq.plan.model import DataDevices
from diskq.result import Device, Latency, Method, Point, ResultDocument, Run
from tests.conftest import needs_fio, needs_loop

CRIT = answer.criteria.load()
BENCH = Path(__file__).parent / "fixtures" / "bench"
SHAPE = {"tier", "basis", "reasons"}


def _shape(a: dict) -> None:
    assert set(a) == set(answer.USES)
    for v in a.values():
        assert SHAPE <= set(v) and v["tier"] in (*answer.TIERS, "unknown") and v["basis"] in answer.BASES
        assert v["reasons"] and all(isinstance(r, str) for r in v["reasons"])


def _doc(points, cache="off", mechanism="hdparm", method="diskq-fdatasync-sweep", protocol="ata", path="/dev/sdx"):
    return ResultDocument(
        created="2026-01-01T00:00:00Z",
        method=Method(id=method, version=4 if method.startswith("diskq") else 1),
        device=Device(model="Test SSD", protocol=protocol, path=path, capacity_bytes=512 * 10**9),
        runs=[
            Run(
                write_cache=cache,
                cache_mechanism=mechanism,
                points=[
                    Point(
                        numjobs=n,
                        iops=x,
                        bw_bytes=x * 4096,
                        total_ios=int(x),
                        runtime_ms=1000,
                        lat_us=Latency(mean=10.0),
                        sync_lat_us=Latency(mean=50.0, p99=400.0),
                    )
                    for n, x in points
                ],
            )
        ],
    )


def _plan(dev, crit=CRIT, strict=False, media="hdd"):
    return layout.make_plan(
        dev,
        DataDevices(12, 16 * 10**12, media),
        "rbd",
        compression=True,
        release="squid",
        rules=plan_rules.load(),
        criteria=crit,
        strict=strict,
    )


# ------------------------------------------------------------------ each basis


def test_measured_basis_names_the_class_and_never_fdatasync_for_o_sync():
    doc = annotate(_doc([(1, 12000), (4, 40000), (8, 60000)]))
    a = answer.from_verdicts(doc.verdicts.model_dump(mode="json"))
    _shape(a)
    assert (a["ceph_waldb"]["tier"], a["ceph_waldb"]["basis"]) == ("good", "measured")
    assert a["ceph_waldb"]["osds_per_device"]["n"] == 8 and a["ceph_waldb"]["osds_per_device"]["at_least"]
    # the community table's O_SYNC rows: the verdict text says O_SYNC, never fdatasync
    osync = evaluate(
        _doc([(1, 1500), (8, 6460)], cache="unknown", mechanism=None, method="community-fio-journal-osync")
    )
    assert "1-job O_SYNC IOPS 1500" in osync.ceph_waldb.reasons[0] and "fdatasync" not in osync.ceph_waldb.reasons[0]


def test_a_public_figure_decides_only_as_a_flush_per_write_at_a_known_cache_state():
    flush_off = {
        "method_class": "flush/write/raw/direct",
        "write_cache": "off",
        "iops_1job": 17983.0,
        "sources": ["S0"],
    }
    fua = {"method_class": "fua/write/raw/direct", "write_cache": "unknown", "iops_1job": 61000.0, "sources": ["S1"]}
    a = answer.from_public([flush_off])
    _shape(a)
    assert (a["ceph_waldb"]["tier"], a["ceph_waldb"]["basis"]) == ("good", "public-figure")
    assert "flush per write" in a["ceph_waldb"]["reasons"][0] and "fdatasync" not in a["ceph_waldb"]["reasons"][0]
    # a FUA figure is a best case, never a tier ("never safe")
    b = answer.from_public([fua])["ceph_waldb"]
    assert (b["tier"], b["basis"], b["ceiling"]) == ("unknown", "public-figure", "excellent")
    assert "may skip the flush" in b["reasons"][0]
    # ... unless even the best case is unsuitable
    low = answer.from_public([dict(fua, iops_1job=456.0)])["ceph_waldb"]
    assert low["tier"] == "unsuitable" and low["osds_per_device"]["n"] is None
    # a file on a filesystem or the page cache is neither a tier nor a bound
    buffered = answer.from_public([dict(flush_off, method_class="flush/write/raw/buffered")])["ceph_waldb"]
    assert (buffered["tier"], buffered["basis"]) == ("unknown", "unknown")
    assert any(r.startswith("not used: flush per write") for r in buffered["reasons"])


def test_datasheet_basis_bounds_and_an_estimate_fills_in_with_its_evidence():
    facts = LineFacts("Acme", "Q1", segment="client", interface="NVMe", plp="no")
    alone = estimate.from_datasheet(facts)
    _shape(alone)
    ceph = alone["ceph_waldb"]
    assert (ceph["tier"], ceph["basis"], ceph["ceiling"]) == ("unknown", "datasheet", "marginal")
    assert "no power-loss protection" in ceph["reasons"][0] and "(datasheet)" in ceph["reasons"][1]
    peers = [estimate.Peer(f"P{i}", "client", "NVMe", "no", ceph_iops=x) for i, x in enumerate([700, 1500, 1800, 2000])]
    peers.append(estimate.Peer("DC", "data-centre", "NVMe", "yes", ceph_iops=60000))  # not a peer
    est = estimate.from_datasheet(facts, peers)["ceph_waldb"]
    assert (est["tier"], est["basis"], est["peers"]) == ("marginal", "estimate", 4)
    assert est["reasons"][0].startswith("estimate: client NVMe without PLP: 4 drives measured")
    assert "700 to 2,000, median 1,650: marginal" in est["reasons"][0]
    # an estimate is held under the datasheet's bound
    fast = [estimate.Peer(f"F{i}", "client", "NVMe", "no", ceph_iops=9000) for i in range(3)]
    held = estimate.from_datasheet(facts, fast)["ceph_waldb"]
    assert held["tier"] == "marginal" and "good, held at the datasheet's marginal" in held["reasons"][0]


def test_unknown_basis_says_what_to_measure():
    a = estimate.from_datasheet(LineFacts("Acme", "Q2"))
    _shape(a)
    assert all(v["tier"] == "unknown" and v["basis"] == "unknown" for v in a.values())
    assert "diskq bench" in a["ceph_waldb"]["reasons"][-1]
    assert answer.from_public([])["etcd"]["basis"] == "unknown"


def test_the_strongest_basis_that_decides_wins_under_the_ceilings_of_stronger_ones():
    bound = answer.from_public(
        [{"method_class": "fua/write/raw/direct", "write_cache": "unknown", "iops_1job": 3000.0, "sources": ["S"]}]
    )  # at most marginal
    peers = [estimate.Peer(f"P{i}", "data-centre", "NVMe", "yes", ceph_iops=30000) for i in range(3)]
    sheet = estimate.from_datasheet(LineFacts("Acme", "D", segment="data-centre", interface="NVMe", plp="yes"), peers)
    c = answer.combine(bound, sheet)["ceph_waldb"]
    assert (c["tier"], c["basis"]) == ("marginal", "estimate")
    assert "held at marginal" in c["reasons"][-1]
    measured = answer.from_verdicts(evaluate(_doc([(1, 25000), (2, 40000)])).model_dump(mode="json"))
    assert answer.combine(measured, sheet)["ceph_waldb"]["basis"] == "measured"


# ------------------------------------------------------------------ one model: tier, OSDs, plan


def _fixture(name: str) -> ResultDocument:
    return ResultDocument.model_validate_json((BENCH / name).read_text())


def test_the_loop_result_is_unsuitable_with_no_osd_and_plan_refuses():
    # recorded: 329 at 1 job, 474 per job at 8 (the filesystem under the loop merged flushes);
    # it used to read "unsuitable" beside "at least 8 OSDs per device"
    doc = annotate(_fixture("diskq-adaptive-loop-result.json"))
    v = doc.verdicts
    assert v.ceph_waldb.tier == "unsuitable" and v.osds_per_device.n == 0
    assert "the curve alone would allow at least 8" in v.osds_per_device.reasons[0]
    a = answer.from_verdicts(v.model_dump(mode="json"))["ceph_waldb"]
    assert (a["tier"], a["osds_per_device"]["n"]) == ("unsuitable", 0)
    dev = plan_device.from_document(doc, basis="fixture")
    assert dev.verdict["tier"] == "unsuitable"
    with pytest.raises(PlanRefused) as refused:
        _plan(dev)
    assert "the Ceph WAL/DB tier is unsuitable" in " ".join(refused.value.reasons)
    assert v.power_loss_protection.rule == "not_applicable"  # a loop device: no drive's protection


def test_plan_count_never_exceeds_the_tier_and_strict_refuses_a_weak_verdict():
    # a consumer drive's flushes merged at 15 jobs: "marginal" with 15 OSDs per device before
    dev = plan_device.from_document(_doc([(1, 1033), (15, 5915)], cache="on"), basis="t")
    assert dev.verdict["tier"] == "marginal" and dev.verdict["osds_per_device"]["n"] == 2
    plan = _plan(dev)
    assert plan.limits["speed"].value == 2 and plan.osds_per_device <= 2 and plan.warnings == []
    # the same figures from the community table at an unknown cache state: a best case
    legacy = plan_device.from_document(
        _doc([(1, 1033), (15, 5915)], cache="unknown", mechanism=None, method="community-fio-journal-osync"),
        basis="t",
        legacy=True,
    )
    assert (legacy.verdict["tier"], legacy.verdict["basis"]) == ("unknown", "public-figure")
    weak = _plan(legacy)
    assert weak.osds_per_device <= 2 and any("verdict is unknown" in w for w in weak.warnings)
    with pytest.raises(PlanRefused, match="--strict"):
        _plan(legacy, strict=True)


def test_a_noisy_result_warns_the_plan():
    doc = _fixture("diskq-noisy-loop-result.json")
    dev = plan_device.from_document(doc, basis="fixture")
    assert dev.verdict.get("caveats")
    assert any(w.startswith("noisy: caveat:") for w in layout.verdict_warnings(dev.verdict))


@settings(max_examples=150, deadline=None)
@given(
    st.floats(50, 1e5),
    st.lists(st.tuples(st.integers(2, 32), st.floats(50, 1e6)), min_size=1, max_size=6, unique_by=lambda t: t[0]),
)
def test_tier_and_osd_count_never_contradict(solo, rest):
    v = evaluate(_doc([(1, solo), *sorted(rest)]))
    a = answer.from_verdicts(v.model_dump(mode="json"))["ceph_waldb"]
    cap = CRIT["osds_per_device"]["tier_max_osds"].get(a["tier"])
    n = a["osds_per_device"]["n"]
    assert a["tier"] == v.ceph_waldb.tier and n == v.osds_per_device.n
    if cap is not None:
        assert n <= cap and not (a["tier"] == "unsuitable" and n)


# ------------------------------------------------------------------ the database stores it once


def test_db_build_stores_the_answer_and_lookup_json_reads_it(tmp_path):
    root = Path(__file__).resolve().parents[1]
    db = tmp_path / "devices.db"
    from diskq.database.build import build

    build(root / "submissions", db, sources=root / "sources")
    r = subprocess.run(
        [sys.executable, "-m", "diskq", "lookup", "PM883", "--db", str(db), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    match = json.loads(r.stdout)[0]
    _shape(match["verdicts"])
    assert match["verdicts"]["ceph_waldb"]["basis"] == "public-figure"  # the community table's row
    assert match["device"]["ceph_waldb"] == match["verdicts"]["ceph_waldb"]["tier"]
    import sqlite3

    con = sqlite3.connect(db)
    rows = con.execute("SELECT answers, ceph_waldb, osds_per_device FROM devices").fetchall()
    models = con.execute("SELECT COUNT(*) FROM models").fetchone()[0]
    stored = con.execute("SELECT answers FROM public_answers").fetchall()
    con.close()
    assert len(stored) == models  # every public model has its answer
    for js, tier, n in rows:  # every device's columns are its answer's
        a = json.loads(js)
        _shape(a)
        assert tier == (a["ceph_waldb"]["tier"] if a["ceph_waldb"]["tier"] != "unknown" else None)
        assert n == a["ceph_waldb"]["osds_per_device"].get("n")
    for (js,) in stored:
        _shape(json.loads(js))
    # the peers an estimate reads come from the stored answers: one per family, decided figures only
    from diskq.database.answers import peers

    con = sqlite3.connect(db)
    sata = LineFacts("Samsung", "consumer", segment="client", interface="SATA", plp="no")
    found = peers(con, lambda family: sata if "samsung" in family and "86" in family else None)
    con.close()
    assert found and len({p.name for p in found}) == len(found)
    assert all(p.ceph_iops is None or p.basis in ("measured", "public-figure") for p in found)
    assert any(p.name == "Samsung SSD 860 EVO" and p.ceph_iops == 490 for p in found)
    # the site's device and public-figure pages show the same answer
    from diskq.publish.site import build_site

    build_site(db, tmp_path / "site", submissions=root / "submissions")
    page = (tmp_path / "site" / "devices" / f"{match['device']['id']}.html").read_text()
    tier = match["verdicts"]["ceph_waldb"]["tier"]
    assert f'<td class="t-{tier}">{tier}</td><td>public-figure</td>' in page
    con = sqlite3.connect(db)
    mid, js = con.execute(
        "SELECT model_id, answers FROM public_answers WHERE answers LIKE '%fua/%' ORDER BY model_id LIMIT 1"
    ).fetchone()
    con.close()
    public = (tmp_path / "site" / "public" / f"{mid}.html").read_text()
    ceph = json.loads(js)["ceph_waldb"]
    assert '<th scope="row">Ceph WAL/DB</th>' in public and ceph["reasons"][0].split(":")[0] in public


# ------------------------------------------------------------------ a real loop device, real fio


@needs_fio
@needs_loop
def test_cache_off_by_the_kernel_knob_on_a_loop_device_gives_no_verdict(make_loop, tmp_path):
    dev = make_loop(64 * 1024 * 1024)
    env = dict(os.environ, DISKQ_JOURNAL_DIR=str(tmp_path / "journal"))
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "diskq",
            "bench",
            dev,
            "--yes",
            "--json",
            "--cache",
            "off",
            "--runtime",
            "2",
            "--jobs",
            "1,2",
            "--no-flush-check",
            "-o",
            str(tmp_path / "r.json"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    doc = ResultDocument.model_validate_json(r.stdout)
    assert [(run.write_cache, run.cache_mechanism) for run in doc.runs] == [("off", "sysfs")]
    v = doc.verdicts
    # the kernel sent no flush: nothing measurable about the drive, so no verdict, no "fails"
    assert v.ceph_waldb.tier is None and v.etcd.passes is None and v.zfs_slog.tier is None
    assert any(r.startswith("no verdict") for r in v.ceph_waldb.reasons)
    assert v.power_loss_protection.rule == "not_applicable"
    a = answer.from_verdicts(v.model_dump(mode="json"))
    _shape(a)
    assert all(x["tier"] == "unknown" and x["basis"] == "unknown" for x in a.values())
    assert a["ceph_waldb"]["osds_per_device"]["n"] is None
    out = (r.stdout + r.stderr).lower()
    assert "etcd: fail" not in out and "unsuitable" not in r.stderr.lower()
    with pytest.raises(PlanRefused, match="no safe cache setting"):
        plan_device.from_document(doc, basis="loop")


def test_plan_and_lookup_agree_on_every_row_of_the_committed_database():
    """Every drive of the committed devices.db (the community table's recorded rows): the plan's
    speed limit is the answer's OSD count (or its "at most" under an unknown tier), and a device
    the answer gives no OSD is refused with the tier's reason."""
    from diskq.database.lookup import lookup

    db = Path(__file__).resolve().parents[1] / "devices.db"
    import sqlite3

    con = sqlite3.connect(db)
    models = [r[0] for r in con.execute("SELECT model FROM devices WHERE not_drive IS NULL AND rank IS NOT NULL")]
    con.close()
    assert len(models) >= 10
    for model in models:
        match = lookup(db, model, limit=1)[0]
        ceph = match.verdicts["ceph_waldb"]
        osds = ceph["osds_per_device"]
        expected = osds["n"] if osds["n"] is not None else osds.get("at_most")
        try:
            dev = plan_device.from_database(db, model)
            dev.capacity_bytes = 10**13  # room for every block.db: only the speed limit is compared
            speed = _plan(dev).limits["speed"].value
        except PlanRefused as refused:
            assert expected in (0, None), (model, refused.message, expected)
            if ceph["tier"] == "unsuitable":
                assert "unsuitable" in " ".join(refused.reasons), model
            continue
        assert speed == expected, (model, speed, ceph)
        assert dev.verdict == ceph
