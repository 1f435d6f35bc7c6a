"""What a submission's own raw data says about how it was made: the fio options of every step
must be those of the method and version it claims."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diskq.database.synthetic import result_document, submission, write_submission
from diskq.submission.validate import validate_file

FIXTURES = Path(__file__).parent / "fixtures"


def _problems(tmp_path: Path, result: dict) -> list[str]:
    path = write_submission(tmp_path / "submissions", submission(result))
    sub, problems = validate_file(path, require_signature=False)
    assert sub is not None
    return [f"{p.field}: {p.message}" for p in problems]


def test_a_fixed_window_measurement_is_accepted_as_version_4_and_as_version_3(tmp_path):
    """Every step a fixed window after the ramp: what both versions run for the steps that steer."""
    result = result_document("Example SSD 1", {"off": {1: 5000, 2: 9000}})
    assert _problems(tmp_path / "v4", result) == []
    result["method"]["version"] = 3
    assert _problems(tmp_path / "v3", result) == []


def _settled(result: dict, detector: str) -> dict:
    """The 1-job step run as version 4's answer step: fio's detector echoed in the step's own JSON."""
    fio = result["runs"][0]["points"][0]["fio"]
    fio["global options"] = {
        **fio["global options"],
        "runtime": "19",
        "steadystate": detector,
        "steadystate_duration": "7s",
        "steadystate_ramp_time": "0s",
    }
    # settled after 12 s of its 19: fio's clock never passes the step's length (diskq.submission.clock)
    point = result["runs"][0]["points"][0]
    ios = round(point["iops"] * 12)
    fio["jobs"][0]["write"].update(runtime=12000, total_ios=ios)
    point.update(runtime_ms=12000, total_ios=ios)
    return result


def test_a_settling_answer_step_is_version_4_only(tmp_path):
    result = _settled(result_document("Example SSD 1", {"off": {1: 5000, 2: 9000}}), "iops_slope:1%")
    assert result["method"].get("version", 4) == 4
    assert _problems(tmp_path / "v4", result) == []
    result["method"]["version"] = 3  # version 3 ran no detector: relabelled, the step gives it away
    problems = _problems(tmp_path / "v3", result)
    assert len(problems) == 1 and problems[0].startswith("result.runs[0].points[0]")
    assert "steadystate=iops_slope:1%" in problems[0]


@pytest.mark.parametrize("detector", ["iops:5%", "iops_slope:5%", "iops_slope:0.1%"])
def test_version_4_runs_one_detector_only(tmp_path, detector):
    """Another criterion or limit is another method, whatever the document says."""
    problems = _problems(tmp_path, _settled(result_document("Example SSD 1", {"off": {1: 5000, 2: 9000}}), detector))
    assert len(problems) == 1 and f"steadystate={detector}" in problems[0]


@pytest.mark.parametrize("version", [2, 1])
def test_a_version_3_measurement_relabelled_as_an_earlier_version_is_refused(tmp_path, version):
    result = result_document("Example SSD 1", {"off": {1: 5000, 2: 9000}})
    result["method"]["version"] = version
    problems = _problems(tmp_path, result)
    ramp = [p for p in problems if "ramp_time=1 (needs 0/0s)" in p]
    assert len(ramp) == 2 and all(p.startswith("result.runs[0].points[") for p in ramp)
    if version == 1:  # and its jobs shared one region, where version 1 gave each its own
        assert len([p for p in problems if "offset_increment=(unset) (needs each job's own region" in p]) == 2


def test_a_version_1_measurement_keeps_its_own_regions(tmp_path):
    """The recorded version-1 bench on a loop device is valid as version 1, not as version 2."""
    doc = json.loads((FIXTURES / "bench" / "diskq-noisy-loop-result.json").read_text())
    assert (doc["method"]["id"], doc["method"]["version"]) == ("diskq-fdatasync-sweep", 1)
    assert not [p for p in _problems(tmp_path, doc) if "fio ran with" in p]
    doc["method"]["version"] = 2
    assert [p for p in _problems(tmp_path, doc) if "offset_increment=" in p]


def test_a_cache_both_bench_reduced_to_one_run_is_refused(tmp_path):
    result = result_document("Example SSD 1", {"off": {1: 5000, 2: 9000}, "on": {1: 20000, 2: 30000}})
    result["method"]["cache_states"] = ["off", "on"]
    assert _problems(tmp_path / "both", result) == []
    result["runs"] = result["runs"][:1]
    (problem,) = _problems(tmp_path / "one", result)
    assert problem.startswith("result.runs: the bench set out to measure the write cache off then on")
    assert "holds runs at off: a run is missing" in problem


def test_a_document_made_before_the_plan_was_recorded_is_judged_as_before(tmp_path):
    result = result_document("Example SSD 1", {"off": {1: 5000, 2: 9000}})
    assert "cache_states" not in result["method"]
    assert _problems(tmp_path, result) == []
