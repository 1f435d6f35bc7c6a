"""Non-finite and absurd numbers, absurd nesting and absurd sizes in cluster outputs, fleet
documents and options are refused or named as problems, never a traceback; decoding cost is
bounded before it starts (diskq.boundedjson)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diskq import boundedjson
from diskq.cluster import inputs, report
from diskq.database.synthetic import result_document
from diskq.errors import InvalidInput
from diskq.fleet import report as fleet_report
from tests.cli_support import cli

REPO = Path(__file__).resolve().parents[1]
CLUSTERS = Path(os.environ.get("DISKQ_CEPH_CLUSTERS") or REPO.parent / "shared" / "data" / "ceph-clusters")
METADATA = CLUSTERS / "clyso-02-pacific-16.2.10-hdd-24-per-nvme-db" / "osd-metadata.json"
PERF = CLUSTERS / "clyso-perf-dump-nvme-30tb" / "perf-dump-osd.json"
needs_data = pytest.mark.skipif(
    not (METADATA.is_file() and PERF.is_file()),
    reason=f"recorded cluster outputs absent ({CLUSTERS.name} next to the repository)",
)


@pytest.mark.parametrize(
    "text, words",
    [
        ('{"a": Infinity}', "Infinity is not a number"),
        ('{"a": -Infinity}', "-Infinity is not a number"),
        ('{"a": NaN}', "NaN is not a number"),
        ('{"numjobs": 1e999}', "1e999 is out of range"),
        ('{"a": -1e999}', "-1e999 is out of range"),
        ('{"a": 1e30}', "1e30 is out of range"),
        ('{"a": 123456789012345678901234567890}', "is out of range"),
        ("[" * 100_000 + "]" * 100_000, "nested deeper"),
        ('{"a": 1', "not JSON"),
    ],
)
def test_a_number_no_tool_prints_or_absurd_nesting_is_refused_in_one_line(text, words):
    with pytest.raises(boundedjson.Refused, match=words.replace("(", r"\(")):
        boundedjson.decode(text)


def test_the_size_of_what_decoding_builds_is_bounded_before_it_starts():
    with pytest.raises(boundedjson.Refused, match="objects and arrays"):
        boundedjson.decode("[" + ",".join(["{}"] * 11) + "]", containers=10)
    with pytest.raises(boundedjson.Refused, match="values"):
        boundedjson.decode("[" + ",".join(["1"] * 12) + "]", values=10)


@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers(-(2**63), 2**64)
        | st.text(max_size=5)
        | st.floats(allow_nan=False, allow_infinity=False, min_value=-1e18, max_value=1e18),
        lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=4), c, max_size=4),
        max_leaves=20,
    )
)
def test_what_any_tool_prints_decodes_as_json_does(value):
    text = json.dumps(value)
    assert boundedjson.decode(text) == json.loads(text)


def test_an_osd_metadata_of_millions_of_tiny_entries_is_refused_before_it_is_decoded(tmp_path):
    n = boundedjson.MAX_CONTAINERS + 1
    (tmp_path / "osd-metadata.json").write_text("[" + ",".join(f'{{"id":{i},"hostname":"h"}}' for i in range(n)) + "]")
    with pytest.raises(InvalidInput) as err:
        inputs.read_dir(tmp_path)
    assert any("objects and arrays: more than" in r for r in getattr(err.value, "reasons", [])), err.value


def test_more_osds_than_any_cluster_runs_are_named_not_read(tmp_path, capsys):
    n = inputs.MAX_OSDS + 1
    (tmp_path / "osd-metadata.json").write_text("[" + ",".join(f'{{"id":{i},"hostname":"h"}}' for i in range(n)) + "]")
    assert cli("cluster", "--from", str(tmp_path)) == 2
    err = capsys.readouterr().err
    assert err.startswith("diskq: error:") and f"{n:,} OSDs listed: more than" in err and "Traceback" not in err


@needs_data
def test_a_perf_dump_counter_of_infinity_costs_that_file_not_the_report(tmp_path, capsys):
    shutil.copy(METADATA, tmp_path / "osd-metadata.json")
    good = PERF.read_text()
    (tmp_path / "perf-dump.osd.0.json").write_text(good)
    bad = json.loads(good)
    bad["bluefs"]["db_used_bytes"] = "INF"
    (tmp_path / "perf-dump.osd.1.json").write_text(json.dumps(bad).replace('"INF"', "Infinity"))
    doc = report.build(inputs.read_dir(tmp_path), db=REPO / "devices.db")
    assert doc["summary"]["osds"] > 0
    assert any(p.startswith("perf-dump.osd.1.json: not read: Infinity") for p in doc["inputs"]["problems"])
    assert any(o["osd"] == 0 and o["bluefs"] for o in doc["osds"])
    assert cli("cluster", "--from", str(tmp_path), "--db", str(REPO / "devices.db")) == 0
    assert "Traceback" not in capsys.readouterr().err


def _fleet(root: Path, hostile: dict[str, str]) -> None:
    for host in ("h1", "h2", "h3", "h4"):
        (root / host).mkdir(parents=True)
        (root / host / "status.json").write_text(
            json.dumps({"host": host, "state": "done", "candidates": [], "benches": []})
        )
        doc = json.dumps(result_document("Samsung PM883", {"off": {1: 12680, 2: 24000, 4: 41000}}, firmware="HXT7404Q"))
        (root / host / "sdb.json").write_text(hostile.get(host, doc) if host in hostile else doc)


def test_fleet_documents_with_absurd_numbers_or_nesting_are_named_problems(tmp_path, capsys):
    base = json.dumps(result_document("Samsung PM883", {"off": {1: 12680, 2: 24000, 4: 41000}}, firmware="HXT7404Q"))
    doc = json.loads(base)
    doc["runs"][0]["points"][1]["numjobs"] = "BIG"
    huge = json.loads(base)
    huge["runs"][0]["points"][0]["iops"] = 1e15
    _fleet(
        tmp_path / "r",
        {
            "h2": json.dumps(doc).replace('"BIG"', "1e999"),
            "h3": json.dumps(huge),
            "h4": "[" * 50_000 + "]" * 50_000,
        },
    )
    rep = fleet_report.build(tmp_path / "r")
    reasons = {p.host: p.reason for p in rep.problems if p.kind == "unreadable"}
    assert "1e999 is out of range" in reasons["h2"]
    assert "not a measurement" in reasons["h3"]
    assert "nested deeper" in reasons["h4"]
    assert rep.drives == 1  # h1's document is still read
    assert cli("fleet", "report", str(tmp_path / "r")) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_a_fleet_status_of_infinity_is_a_problem(tmp_path):
    _fleet(tmp_path / "r", {})
    (tmp_path / "r" / "h1" / "status.json").write_text('{"host": "h1", "state": "done", "benches": [{"rc": Infinity}]}')
    rep = fleet_report.build(tmp_path / "r")
    assert any(p.host == "h1" and "Infinity" in p.reason for p in rep.problems)


@pytest.mark.parametrize("data", ["12x0.0000001T", "12x1M", "12x4G"])
def test_plan_refuses_data_devices_smaller_than_ceph_volume_accepts(data, capsys):
    assert cli("plan", "Samsung PM883", "--data", data, "--db", str(REPO / "devices.db")) == 2
    err = capsys.readouterr().err
    assert err.startswith("diskq: error: a data device of") and "5 GiB" in err and len(err.splitlines()) == 2
