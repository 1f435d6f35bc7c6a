"""Forgeries that fio's own output gives away: real fio output edited (IOPS x10 or x50, latencies
scaled, the analysis recomputed, signed again) agrees with its headline figures, but not with the
counters fio reports beside them: the kernel's disk_util, the latency histogram, context switches."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diskq.analyse import annotate
from diskq.result import ResultDocument
from diskq.submission.counters import counter_problems
from diskq.submission.figures import check_figures
from diskq.submission.importfio import import_fio
from diskq.submission.legacy import dump
from diskq.submission.model import Contributor
from diskq.submission.sign import make_submission, sign_submission
from diskq.submission.validate import validate_file
from tests.conftest import HAVE_LOOP, _reset_write_cache, needs_fio
from tests.test_import_cache_knob import community_runs
from tests.test_submission_support import (
    COMMUNITY_ARGS,
    HAVE_SSH_KEYGEN,
    allowed_signers,
    fio_nosync_run,
    fio_runs,
    keygen,
)

FIO_FIXTURES = Path(__file__).parent / "fixtures" / "fio_json"
pytestmark = needs_fio


@pytest.fixture(scope="module")
def loop_outputs(tmp_path_factory):
    """Real fio JSON made on a loop device: the community command at 1, 2 and 4 jobs with the
    kernel's cache in "write back" and in "write through", the flush-check step, and one step
    printed as json+ (with histogram bins). The device is detached whatever happens."""
    if not HAVE_LOOP:
        pytest.skip("needs root, losetup and /dev/loop-control")
    backing = tmp_path_factory.mktemp("counters") / "backing.img"
    with open(backing, "wb") as f:
        f.truncate(128 * 1024 * 1024)
    dev = subprocess.run(
        ["losetup", "--find", "--show", str(backing)], check=True, capture_output=True, text=True
    ).stdout.strip()
    knob = Path("/sys/block", Path(dev).name, "queue", "write_cache")
    try:
        back = community_runs(dev, jobs=(1, 2, 4))
        nosync = [a if a != "--fdatasync=1" else "--fdatasync=0" for a in COMMUNITY_ARGS]
        text = subprocess.run(
            ["fio", f"--filename={dev}", "--size=16M", *nosync, "--numjobs=1"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        flush_step = json.loads(text[text.index("{") :])
        plus = [a if a != "--output-format=json" else "--output-format=json+" for a in COMMUNITY_ARGS]
        text = subprocess.run(
            ["fio", f"--filename={dev}", "--size=16M", "--offset_increment=16M", *plus, "--numjobs=2"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        json_plus = json.loads(text[text.index("{") :])
        knob.write_text("write through")
        through = community_runs(dev, jobs=(1, 2))
    finally:
        _reset_write_cache(dev)
        subprocess.run(["losetup", "-d", dev], capture_output=True)
    return {"back": back, "through": through, "nosync": flush_step, "json+": json_plus}


def _forge(data: dict, factor: float, *, counters: bool = False) -> dict:
    """fio's JSON with IOPS, bandwidth and I/O count times ``factor`` and every latency figure
    divided by it: what the point's figures are checked against. ``counters`` also makes the
    byte and sample counts agree (``io_bytes``, ``N``, ``job_runtime`` kept)."""
    data = copy.deepcopy(data)
    for job in data["jobs"]:
        w = job["write"]
        for key in ("iops", "bw_bytes", "bw", "iops_min", "iops_max", "iops_mean", "bw_min", "bw_max", "bw_mean"):
            if key in w:
                w[key] = w[key] * factor
        w["total_ios"] = int(round(w["total_ios"] * factor))
        sections = [w.get("clat_ns"), w.get("lat_ns"), w.get("slat_ns"), (job.get("sync") or {}).get("lat_ns")]
        for sec in sections:
            if not sec:
                continue
            for key in ("min", "max", "mean", "stddev"):
                if key in sec:
                    sec[key] = sec[key] / factor
            if "percentile" in sec:
                sec["percentile"] = {p: int(v / factor) for p, v in sec["percentile"].items()}
            if counters and "N" in sec:
                sec["N"] = int(round(sec["N"] * factor))
            if counters and "bins" in sec:
                sec["bins"] = {str(int(int(k) / factor)): int(v * factor) for k, v in sec["bins"].items()}
        if counters:
            w["io_bytes"] = w["total_ios"] * 4096
            w["io_kbytes"] = w["io_bytes"] // 1024
            sync = job.get("sync") or {}
            if sync.get("lat_ns", {}).get("N"):
                sync["lat_ns"]["N"] = w["total_ios"] - 1
    return data


def _fields(problems) -> set[str]:
    return {field for field, _ in problems}


def test_every_real_output_agrees_with_its_counters(loop_outputs):
    outputs = [*loop_outputs["back"].values(), *loop_outputs["through"].values(), loop_outputs["json+"]]
    outputs += [*fio_runs().values()]  # on a file in the temp directory: disk_util names another device
    for data in outputs:
        assert counter_problems(data) == [], data["global options"]
    assert counter_problems(loop_outputs["nosync"], sync=False) == []
    assert counter_problems(fio_nosync_run(), sync=False) == []
    for path in sorted(FIO_FIXTURES.glob("*.json")):  # recorded outputs of other drives and versions
        assert counter_problems(json.loads(path.read_text())) == [], path.name
    # the counters are there to be checked: disk_util names the loop device, the histogram is full
    data = loop_outputs["back"][4]
    assert data["disk_util"][0]["name"] == Path(data["global options"]["filename"]).name
    assert sum(data["jobs"][0]["latency_us"].values()) > 50


@pytest.mark.parametrize("factor", [10, 50])
def test_scaled_figures_are_given_away_by_disk_util_histogram_and_ctx(loop_outputs, factor):
    for state in ("back", "through"):
        for data in loop_outputs[state].values():
            fields = _fields(counter_problems(_forge(data, factor)))
            assert {
                "fio.disk_util",
                "fio.jobs[].ctx",
                "fio.jobs[0].latency_us",
                "fio.jobs[0].write.io_bytes",
                "fio.jobs[0].write.clat_ns.N",
            } <= fields, fields


@pytest.mark.parametrize("factor", [10, 50])
def test_each_counter_alone_gives_a_forgery_away(loop_outputs, factor):
    data = _forge(loop_outputs["back"][2], factor, counters=True)
    no_hist = {k: v for k, v in data["jobs"][0].items() if k not in ("latency_ns", "latency_us", "latency_ms")}

    only_disk = copy.deepcopy(data)
    only_disk["jobs"][0] = {**no_hist, "ctx": no_hist["ctx"] * factor}
    assert _fields(counter_problems(only_disk)) == {"fio.disk_util"}

    only_ctx = copy.deepcopy(data)
    only_ctx["jobs"][0] = dict(no_hist)
    del only_ctx["disk_util"]
    assert _fields(counter_problems(only_ctx)) == {"fio.jobs[].ctx"}

    only_hist = copy.deepcopy(data)
    only_hist["jobs"][0]["ctx"] *= factor
    del only_hist["disk_util"]
    assert _fields(counter_problems(only_hist)) == {"fio.jobs[0].latency_us"}

    # a step whose runtime was stretched to hold the claimed I/Os at the true latencies
    stretched = copy.deepcopy(loop_outputs["back"][1])
    stretched["jobs"][0]["write"]["runtime"] *= factor
    assert "fio.jobs[0].job_runtime" in _fields(counter_problems(stretched))


def test_json_plus_bins_must_hold_the_ios_and_the_percentiles(loop_outputs):
    data = loop_outputs["json+"]
    assert "bins" in data["jobs"][0]["write"]["clat_ns"]
    forged = _forge(data, 10, counters=False)
    forged["jobs"][0]["write"]["clat_ns"]["N"] = forged["jobs"][0]["write"]["total_ios"]
    fields = _fields(counter_problems(forged))
    assert "fio.jobs[0].write.clat_ns.bins" in fields
    # bins moved with the percentiles but holding the measured count still disagree with N
    moved = _forge(data, 10, counters=True)
    moved["jobs"][0]["write"]["clat_ns"]["bins"] = {
        k: v // 10 for k, v in moved["jobs"][0]["write"]["clat_ns"]["bins"].items()
    }
    assert "fio.jobs[0].write.clat_ns.bins" in _fields(counter_problems(moved))


def _as_document(runs: dict[int, dict]) -> ResultDocument:
    doc = import_fio([(f"nj{n}.json", d) for n, d in runs.items()], write_cache="on", cache_mechanism="drive")
    # NVMe: no link limit near even x50 of a loop device, so only the counters can give it away
    device = doc.device.model_copy(update={"model": "Example SSD 1", "protocol": "nvme", "media": "ssd"})
    return annotate(doc.model_copy(update={"device": device, "verdicts": None}))


def _forged_document(doc: ResultDocument, factor: float) -> ResultDocument:
    """The forger's edit: every figure of every point scaled, its raw fio JSON edited to agree,
    the analysis made again from the edited figures."""
    data = doc.model_dump(mode="json")
    for run in data["runs"]:
        for p in run["points"]:
            p["fio"] = _forge(p["fio"], factor)
            p["iops"] *= factor
            p["bw_bytes"] *= factor
            p["total_ios"] = p["fio"]["jobs"][0]["write"]["total_ios"]
            for lat in (p["lat_us"], p["sync_lat_us"]):
                for key, value in lat.items():
                    if value is not None:
                        lat[key] = value / factor
        best = max(run["points"], key=lambda p: p["iops"])
        run.update(peak={"numjobs": best["numjobs"], "iops": best["iops"]}, scaling=None, flush_check=None)
    data["verdicts"] = None
    forged = annotate(ResultDocument.model_validate(data))
    # made consistent the way the forger would: the point's figures as the edited fio JSON gives them
    from diskq.bench.fiojson import point_from_json

    runs = []
    for run in forged.runs:
        points = [point_from_json(p.fio, p.numjobs) for p in run.points]
        runs.append(run.model_copy(update={"points": points}))
    best = max(runs[0].points, key=lambda p: p.iops)
    runs[0] = runs[0].model_copy(
        update={"peak": runs[0].peak.model_copy(update={"iops": best.iops, "numjobs": best.numjobs})}
    )
    return annotate(forged.model_copy(update={"runs": runs, "verdicts": None}))


@pytest.mark.skipif(not HAVE_SSH_KEYGEN, reason="needs ssh-keygen")
@pytest.mark.parametrize("factor", [10, 50])
def test_a_re_signed_forgery_no_longer_validates(loop_outputs, tmp_path, factor):
    key = keygen(tmp_path)
    signers = allowed_signers(tmp_path / "allowed", "octocat", key)
    honest = _as_document(loop_outputs["back"])
    assert check_figures(honest) == []

    def signed(doc: ResultDocument) -> Path:
        sub = sign_submission(make_submission(doc, contributor=Contributor(github="octocat")), key, principal="octocat")
        path = tmp_path / f"{sub.id}.json"
        path.write_text(dump(sub))
        return path

    _, problems = validate_file(signed(honest), root=None, allowed_signers=signers)
    assert problems == []
    forged = _forged_document(honest, factor)
    assert forged.runs[0].points[0].iops == pytest.approx(honest.runs[0].points[0].iops * factor, rel=1e-4)
    _, problems = validate_file(signed(forged), root=None, allowed_signers=signers)
    # scaled fiftyfold, the step is left with fewer than 0.1 context switches per write: it reads as
    # memory too (tenfold lies near that limit, 0.1 to 0.2 per write on a loop device)
    memory = [p for p in problems if p.field == "result.runs" and "memory-backed target" in p.message]
    assert memory or factor < 50, problems
    problems = [p for p in problems if p not in memory]
    fields = {p.field for p in problems}
    # nothing but the counters gives it away: figures, fio headline figures and analysis agree
    assert fields and all(".fio." in f for f in fields), problems
    assert any(f.endswith(".fio.disk_util") for f in fields)
    assert any(f.endswith(".fio.jobs[].ctx") for f in fields)
    assert any(f.endswith(".fio.jobs[0].latency_us") for f in fields)
    assert all("fio's own counters contradict its figures" in p.message for p in problems)


_leaf = st.none() | st.booleans() | st.integers(-10, 10**12) | st.floats(allow_nan=True) | st.text(max_size=6)
_tree = st.recursive(
    _leaf,
    lambda kids: (
        st.lists(kids, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "jobs",
                    "write",
                    "sync",
                    "lat_ns",
                    "clat_ns",
                    "N",
                    "bins",
                    "percentile",
                    "total_ios",
                    "io_bytes",
                    "ctx",
                    "latency_us",
                    "latency_ms",
                    "disk_util",
                    "name",
                    "write_ios",
                    "runtime",
                    "job_runtime",
                    "elapsed",
                    "jobname",
                    "job options",
                    "global options",
                    "filename",
                    "numjobs",
                    "iodepth",
                    "bs",
                    "mean",
                    "50.000000",
                    "250",
                    ">=2000",
                ]
            ),
            kids,
            max_size=4,
        )
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(_tree)
def test_hostile_fio_json_never_raises(tree):
    counter_problems({"jobs": [tree]} if not isinstance(tree, dict) else tree)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_a_real_output_with_one_counter_changed_never_raises(loop_outputs, data):
    real = copy.deepcopy(loop_outputs["back"][2])
    job = real["jobs"][0]
    key = data.draw(st.sampled_from(["ctx", "latency_us", "latency_ms", "job_runtime", "elapsed", "sync", "write"]))
    job[key] = data.draw(_tree)
    counter_problems(real)
