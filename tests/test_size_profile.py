"""The block-size profile (``diskq bench --profile sizes``): its plan, its fio steps, their
parsing, the terminal output, and validation of its figures against fio's own output.

Real fio runs on loop devices made by the ``make_loop`` fixture (always detached) with short
steps; the recorded documents are real runs (tests/fixtures/bench/SOURCES.md).
"""

from __future__ import annotations

import copy
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from diskq import proc
from diskq.bench import fio, planning, runner, sizes, sustained, windows
from diskq.bench.progress import BenchClock, FakeClock, StepPlan
from diskq.bench.target import Target
from diskq.cli._render import BenchProgress, result_table
from diskq.errors import FioError, InvalidInput, StepCutShort
from diskq.result import Device, ResultDocument, SizePoint
from diskq.submission.complete import incomplete_problems
from diskq.submission.figures import check_figures
from tests.conftest import FIXTURES, needs_fio, needs_loop

RECORDED = FIXTURES / "bench" / "diskq-size-profile-loop-result.json"
ALL_SIZES = [512, 4096, 8192, 16384, 65536, 131072, 1048576]


def recorded() -> dict:
    return json.loads(RECORDED.read_text())


def diskq(*args, env=None, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "diskq", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.parametrize("module", ["diskq.bench.sizes", "diskq.cli._render_sizes"])
def test_docstring_examples(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


# --- the plan: which sizes, which options


def test_sizes_follow_the_logical_block_size_and_the_region():
    assert sizes.block_sizes(512, 1 << 30) == (ALL_SIZES, [])
    kept, notes = sizes.block_sizes(4096, 1 << 30)
    assert kept == ALL_SIZES[1:] and notes == ["512 B left out: the logical block size is 4096 B"]
    kept, notes = sizes.block_sizes(512, 256 * 1024)
    assert kept == ALL_SIZES[:-1] and "1m left out" in notes[0]


def test_step_options_are_the_sweeps_fixed_answer_window_with_another_bs():
    common = sizes.options(runtime_s=20, region_bytes=1 << 30)
    sweep = fio.window_options(windows.FIXED_ANSWER, region_bytes=1 << 30)
    assert "bs" not in common and "offset_increment" not in common
    assert {k: v for k, v in sweep.items() if k not in ("bs", "offset_increment", "name")} == {
        k: v for k, v in common.items() if k != "name"
    }
    # method version 2: a fixed 7 s window after a 1 s ramp fio leaves out, no steady-state detector
    assert common["ramp_time"] == "1" and common["runtime"] == "7" and "ss" not in common
    argv = fio.command("/dev/loop9", 1, sizes.step_options(common, 8192))
    assert "--bs=8k" in argv and "--fdatasync=1" in argv and "--direct=1" in argv and "--iodepth=1" in argv
    assert argv.index("--rw=write") + 1 == argv.index("--bs=8k")  # where the sweep has its bs
    # --runtime caps the window; --full-steps measures --runtime at every size
    assert sizes.options(runtime_s=5, region_bytes=1 << 30)["runtime"] == "5"
    full = sizes.options(runtime_s=20, region_bytes=1 << 30, short_steps=False)
    assert full["runtime"] == "20" and full["ramp_time"] == "1"
    # seven sizes: under a minute of device time at the defaults
    assert len(sizes.SIZES) * sizes.window(runtime_s=20).device_s == 56


@given(st.integers(min_value=1, max_value=65536), st.sampled_from([1, 1024, 1024 * 1024]))
def test_bs_text_reads_back_as_the_same_bytes(n, unit):
    size = n * unit
    assert sizes.parse_bs(sizes.bs_text(size)) == size


@given(
    st.one_of(st.none(), st.sampled_from([512, 4096, 520, 1024, 8192])),
    st.integers(min_value=64 * 1024, max_value=2 << 30),
)
def test_planned_sizes_rise_fit_the_region_and_account_for_every_size(lbs, region):
    kept, notes = sizes.block_sizes(lbs, region)
    assert kept == sorted(set(kept)) and set(kept) <= set(sizes.SIZES)
    assert all(size <= region for size in kept)
    assert (512 in kept) == (lbs == 512 and region >= 512)
    assert len(kept) + len(notes) == len(sizes.SIZES)  # each size left out is named


@pytest.mark.parametrize("text", ["4k-8k", "4k,8k", "", "k", "-4k", "1g", "4 k 8", None, 4096])
def test_parse_bs_refuses_what_is_not_one_size(text):
    assert sizes.parse_bs(text) is None


def _plan(tmp_path, lbs, kind="disk", capacity=64 * 1024 * 1024):
    target = Target(
        path="/dev/loop9" if kind == "disk" else str(tmp_path / "f"), kind=kind, capacity_bytes=capacity, existed=True
    )
    return planning.Plan(
        path=target.path,
        target=target,
        options=planning.BenchOptions(runtime_s=10, profiles=("sizes",)),
        region_bytes=capacity // 32,
    )


def test_runner_size_plan_uses_one_region_and_the_device_block_size(tmp_path):
    kept, common, notes = runner._size_plan(_plan(tmp_path, 512), Device(logical_block_size=512))
    assert kept == ALL_SIZES and notes == []
    assert common["size"] == str(64 * 1024 * 1024)  # one job: the whole (small) target, not 1/32 of it
    kept, _, notes = runner._size_plan(_plan(tmp_path, 4096), Device(logical_block_size=4096))
    assert kept == ALL_SIZES[1:] and notes == ["512 B left out: the logical block size is 4096 B"]
    # a file: the filesystem's rules, not the device's, so 512 B is never tried
    kept, _, notes = runner._size_plan(_plan(tmp_path, 512, kind="file"), Device(logical_block_size=512))
    assert kept == ALL_SIZES[1:] and notes[0].startswith("512 B left out: file mode")


@pytest.mark.parametrize(
    "given_profiles, sustain, message",
    [
        (("speed",), None, "--profile must be one of sizes, sustained, got 'speed'"),
        (("sizes",), "60G", "--sustain sets the budget of the sustained write: it needs --profile sustained"),
    ],
)
def test_unknown_profiles_and_a_budget_without_its_profile_are_refused(given_profiles, sustain, message):
    budget = sustained.parse_budget(sustain) if sustain else None
    with pytest.raises(InvalidInput, match=message):
        planning.BenchOptions(profiles=given_profiles, sustain=budget).validate()


def test_both_profiles_go_together():
    options = planning.BenchOptions(profiles=("sizes", "sustained"), sustain=sustained.parse_budget("90s"))
    options.validate()
    assert options.sustain_budget == sustained.parse_budget("90s")


def test_cli_refuses_a_wrong_profile_in_one_line(tmp_path):
    r = diskq("bench", str(tmp_path / "f"), "--profile", "size")
    assert r.returncode == 2
    assert r.stderr.startswith("diskq: error: --profile must be one of sizes, sustained, got 'size'")
    assert "Traceback" not in r.stderr and not (tmp_path / "f").exists()


# --- parsing fio's output of one step


def test_recorded_steps_parse_back_to_their_points():
    doc = recorded()
    for run in doc["runs"]:
        for p in run["sizes"]["points"]:
            again = sizes.point_from_json(p["fio"], p["block_size"])
            assert again.model_dump(mode="json") == p
            assert again.bw_bytes == pytest.approx(again.iops * again.block_size, rel=2e-3)


def test_a_step_cut_short_names_its_size_and_keeps_its_point(monkeypatch):
    step = recorded()["runs"][0]["sizes"]["points"][2]["fio"]  # 8 KiB, ran its full 2 s
    short = copy.deepcopy(step)
    short["jobs"][0]["write"]["runtime"] = 700

    def fake_run(argv, **kw):
        assert "--bs=8k" in argv
        return proc.Completed(argv, 0, json.dumps(short), "")

    monkeypatch.setattr(proc, "run", fake_run)
    common = sizes.options(runtime_s=2, region_bytes=1 << 26)
    with pytest.raises(
        StepCutShort, match="the size-profile step at 8k was cut short, not by diskq: it ran 0.7 s"
    ) as info:
        sizes.run_step("/dev/loop9", 8192, common)
    assert isinstance(info.value.partial, SizePoint)
    assert info.value.partial.block_size == 8192 and info.value.partial.interrupted


def test_a_failed_step_is_a_fio_error(monkeypatch):
    step = copy.deepcopy(recorded()["runs"][0]["sizes"]["points"][0]["fio"])
    step["jobs"][0]["error"] = 22
    monkeypatch.setattr(proc, "run", lambda argv, **kw: proc.Completed(argv, 1, json.dumps(step), ""))
    with pytest.raises(FioError, match="error 22 .EINVAL"):
        sizes.run_step("/dev/loop9", 512, sizes.options(runtime_s=2, region_bytes=1 << 26))


# --- progress and terminal output


def test_the_time_budget_counts_the_size_steps():
    clock = FakeClock()
    bench = BenchClock(clock)
    bench.step_started(
        StepPlan(
            sync_steps_left=0,
            check_steps_left=0,
            runtime_s=10,
            check_s=5,
            exact=True,
            size_steps_left=3,
            size_step=True,
        )
    )
    assert bench.snapshot().left_s == pytest.approx(3 * 11) and bench.snapshot().steps_left == 3
    clock.now = 11.0
    bench.step_done()
    assert bench.snapshot().left_s == pytest.approx(2 * 11) and bench.snapshot().steps_left == 2


def test_progress_prints_one_line_per_size_step():
    out = io.StringIO()
    console = Console(file=out, width=200)
    doc = ResultDocument.model_validate(recorded())
    point = doc.runs[0].sizes.points[6]
    with BenchProgress(console, 2, clock=FakeClock(), live=False) as progress:
        progress.run_started(0, 1, "on", "sysfs")
        progress.step_planned(StepPlan(0, 0, 2, 2, True, size_steps_left=1, size_step=True))
        progress.size_step_started(point.block_size, eta_s=2)
        progress.size_step_done(point)
    line = out.getvalue().strip()
    assert line.startswith("cache on via sysfs  size=1 MiB") and f"{point.iops:,.0f} IOPS" in line
    assert f"{point.bw_bytes / 1e6:,.1f} MB/s" in line and line.endswith("done]")


@pytest.mark.parametrize("width", [80, 120])
def test_result_table_shows_each_size(width):
    out = io.StringIO()
    doc = ResultDocument.model_validate(recorded())
    result_table(doc, Console(file=out, width=width))
    text = out.getvalue()
    assert "…" not in text  # no figure cut at a terminal's usual width
    assert "block-size profile, write cache" in text
    for p in doc.runs[0].sizes.points:
        label = {
            512: "512 B",
            4096: "4 KiB",
            8192: "8 KiB",
            16384: "16 KiB",
            65536: "64 KiB",
            131072: "128 KiB",
            1048576: "1 MiB",
        }[p.block_size]
        row = next(line for line in text.splitlines() if line.startswith(f"│ {label:>7} │"))
        assert f"{p.iops:,.0f}" in row and f"{p.bw_bytes / 1e6:,.1f}" in row and "█" in row


# --- validation: the figures against fio's output, the profile complete


def test_the_recorded_profile_validates():
    doc = ResultDocument.model_validate(recorded())
    assert check_figures(doc) == [] and incomplete_problems(doc) == []


def _problems(mutate) -> list[tuple[str, str]]:
    data = recorded()
    mutate(data["runs"][0]["sizes"])
    doc = ResultDocument.model_validate(data)
    return [(p.field, p.message) for p in check_figures(doc) + incomplete_problems(doc)]


@pytest.mark.parametrize("field, factor", [("iops", 1.3), ("bw_bytes", 2.0), ("total_ios", 0.5)])
def test_an_edited_figure_is_found(field, factor):
    def edit(profile):
        p = profile["points"][3]
        p[field] = int(p[field] * factor) if field == "total_ios" else p[field] * factor

    fields = [f for f, _ in _problems(edit)]
    assert f"result.runs[0].sizes.points[3].{field}" in fields


def test_an_edited_latency_is_found():
    def edit(profile):
        profile["points"][1]["sync_lat_us"]["p99"] /= 3

    assert any(f == "result.runs[0].sizes.points[1].sync_lat_us.p99" for f, _ in _problems(edit))


def test_a_point_relabelled_to_another_size_is_found():
    def edit(profile):
        profile["points"][2]["block_size"] = 12288  # fio wrote 8 KiB blocks

    found = dict(_problems(edit))
    assert "needs 12288 B, the point's block_size" in found["result.runs[0].sizes.points[2].fio"]
    assert "is not IOPS x 12288 B" in found["result.runs[0].sizes.points[2].bw_bytes"]


def test_fio_edited_consistently_is_caught_by_its_own_counters():
    def edit(profile):  # the forger scales fio's headline figures and the point's alike
        p = profile["points"][4]
        for target in (p, p["fio"]["jobs"][0]["write"]):
            target["iops"] *= 2
            target["bw_bytes"] *= 2
            target["total_ios"] *= 2

    fields = [f for f, _ in _problems(edit)]
    assert "result.runs[0].sizes.points[4].fio.jobs[0].write.io_bytes" in fields


def test_sizes_out_of_order_and_an_unknown_method_are_found():
    def swap(profile):
        profile["points"][1], profile["points"][2] = profile["points"][2], profile["points"][1]

    assert any(f == "result.runs[0].sizes.points[2].block_size" for f, _ in _problems(swap))

    def newer(profile):
        profile["method"]["version"] = 3

    assert _problems(newer) == [("result.runs[0].sizes.method", "unknown profile method diskq-size-profile version 3")]


def test_a_profile_relabelled_with_another_version_is_found():
    # the recorded profile is version 1 (steps ended by fio's detector, no ramp): claimed as version 2,
    # its options and every step's own options lack the fixed window's ramp
    def relabel(profile):
        profile["method"]["version"] = 2

    found = _problems(relabel)
    assert ("result.runs[0].sizes.method.fio_params", "method ran fio with ramp_time=(unset) (needs 1/1s)") in found
    assert any(f == "result.runs[0].sizes.points[0].fio" and "ramp_time=(unset)" in m for f, m in found)

    # and a version-2 profile claimed as version 1: version 1 never ran a ramp
    def ramped_v1(profile):
        profile["method"]["fio_params"]["ramp_time"] = "1"

    assert any("ramp_time=1 (needs" in m for _, m in _problems(ramped_v1))


def test_a_step_ran_with_other_options_is_found():
    def edit(profile):
        profile["points"][0]["fio"]["jobs"][0]["job options"]["fdatasync"] = "0"

    assert any("fdatasync=0 (needs 1)" in m for _, m in _problems(edit))


def test_an_interrupted_profile_is_refused_and_so_is_an_unmarked_short_step():
    def mark(profile):
        profile["interrupted"] = True
        profile["points"][-1]["interrupted"] = True

    fields = [f for f, _ in _problems(mark)]
    assert "result.runs[0].sizes.interrupted" in fields and "result.runs[0].sizes.points[6].interrupted" in fields

    def shorten(profile):
        p = profile["points"][5]
        p["runtime_ms"] = p["fio"]["jobs"][0]["write"]["runtime"] = 1200

    found = dict(_problems(shorten))
    assert "ran this step 1.2 s of the 2 s" in found["result.runs[0].sizes.points[5].runtime_ms"]


def test_a_profile_without_raw_data_is_not_a_submission():
    from diskq.submission.validate import _raw_data_problems

    data = recorded()
    data["runs"][0]["sizes"]["points"][0]["fio"] = None
    problems = _raw_data_problems(ResultDocument.model_validate(data))
    assert [p.field for p in problems] == ["result.runs[0].sizes.points[0].fio"]


# --- real fio on loop devices


@needs_fio
@needs_loop
def test_profile_runs_in_every_cache_state_on_a_loop_device(make_loop, tmp_path):
    dev = make_loop(128 * 1024 * 1024)
    knob = Path(f"/sys/block/{Path(dev).name}/queue/write_cache")
    before = knob.read_text().strip()
    out = tmp_path / "r.json"
    r = diskq(
        "bench",
        dev,
        "--yes",
        "--json",
        "--runtime",
        "1",
        "--jobs",
        "1",
        "--no-flush-check",
        "--profile",
        "sizes",
        "-o",
        str(out),
        env={"DISKQ_JOURNAL_DIR": str(tmp_path / "j")},
    )
    assert r.returncode == 0, r.stderr
    doc = ResultDocument.model_validate_json(r.stdout)
    assert sorted(run.write_cache for run in doc.runs) == ["off", "on"]
    assert knob.read_text().strip() == before
    for run in doc.runs:
        profile = run.sizes
        assert profile is not None and not profile.interrupted
        assert profile.method.id == "diskq-size-profile" and profile.method.version == 2
        assert profile.method.fio_params["ramp_time"] == "1" and "ss" not in profile.method.fio_params
        assert profile.method.fio_params["fdatasync"] == "1" and "bs" not in profile.method.fio_params
        assert [p.block_size for p in profile.points] == ALL_SIZES  # a loop device has 512 B sectors
        for p in profile.points:
            options = p.fio["jobs"][0]["job options"]
            assert sizes.parse_bs(options["bs"]) == p.block_size and options["numjobs"] == "1"
            assert p.iops > 0 and p.sync_lat_us is not None and p.sync_lat_us.p99 > 0
            assert p.bw_bytes == pytest.approx(p.iops * p.block_size, rel=2e-3)
            assert p.runtime_ms >= 980
    assert check_figures(doc) == [] and incomplete_problems(doc) == []
    # both states' tables on the terminal, after the sweep's
    assert r.stderr.count("block-size profile, write cache") == 2
    assert r.stderr.count("size=1 MiB") == 2


@needs_fio
@needs_loop
def test_a_profile_interrupted_by_ctrl_c_keeps_its_steps_and_is_refused(make_loop, tmp_path):
    import signal
    import time

    dev = make_loop(128 * 1024 * 1024)
    out = tmp_path / "r.json"
    bench = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "diskq",
            "bench",
            dev,
            "--yes",
            "--runtime",
            "3",
            "--jobs",
            "1",
            "--cache",
            "keep",
            "--no-flush-check",
            "--profile",
            "sizes",
            "-o",
            str(out),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "DISKQ_JOURNAL_DIR": str(tmp_path / "j")},
    )
    try:
        seen = ""
        deadline = time.monotonic() + 120
        while "size=4 KiB" not in seen and time.monotonic() < deadline:  # two sizes done, the third running
            line = bench.stderr.readline()
            if not line:
                break
            seen += line
        assert "size=4 KiB" in seen, seen
        time.sleep(1.0)
        bench.send_signal(signal.SIGINT)
        bench.communicate(timeout=60)
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.wait()
    assert bench.returncode == 130
    doc = ResultDocument.model_validate_json(out.read_text())
    profile = doc.runs[0].sizes
    assert doc.interrupted and profile.interrupted
    assert [p.block_size for p in profile.points][:2] == [512, 4096]
    assert not any(p.interrupted for p in profile.points[:2])
    if len(profile.points) > 2:  # fio printed its figures before it stopped: kept, marked
        assert profile.points[2].block_size == 8192 and profile.points[2].interrupted
    fields = [p.field for p in incomplete_problems(doc)]
    assert "result.runs[0].sizes.interrupted" in fields


# --- sign -> validate with the real CLI


def test_a_signed_profile_validates_and_an_edited_one_does_not(tmp_path):
    from tests.test_submission_support import HAVE_SSH_KEYGEN, allowed_signers, keygen

    if not HAVE_SSH_KEYGEN:
        pytest.skip("needs ssh-keygen")
    key = keygen(tmp_path)
    allowed = allowed_signers(tmp_path / "allowed", "octocat", key)

    def sign_and_validate(result: dict, name: str) -> subprocess.CompletedProcess:
        work = tmp_path / name
        work.mkdir()
        (work / "r.json").write_text(json.dumps(result, indent=2))
        signed = subprocess.run(
            [sys.executable, "-m", "diskq", "sign", "r.json", "-f", str(key), "--github", "octocat"],
            capture_output=True,
            text=True,
            cwd=work,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )
        assert signed.returncode == 0, signed.stderr
        return subprocess.run(
            [sys.executable, "-m", "diskq", "validate", "submissions", "--allowed-signers", str(allowed)],
            capture_output=True,
            text=True,
            cwd=work,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )

    ok = sign_and_validate(recorded(), "as-measured")
    assert ok.returncode == 0 and ok.stdout.strip() == "", ok.stdout + ok.stderr
    edited = recorded()
    edited["runs"][0]["sizes"]["points"][2]["sync_lat_us"]["p99"] /= 10  # the 8 KiB p99 etcd's verdict may read
    out = sign_and_validate(edited, "edited")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "result.runs[0].sizes.points[2].sync_lat_us.p99: " in out.stdout and "does not match fio's" in out.stdout


@needs_fio
def test_profile_on_a_file_leaves_512_bytes_out(tmp_path):
    target = tmp_path / "test.img"
    out = tmp_path / "r.json"
    r = diskq(
        "bench",
        str(target),
        "--yes",
        "--json",
        "--size",
        "64M",
        "--runtime",
        "1",
        "--jobs",
        "1",
        "--no-flush-check",
        "--profile",
        "sizes",
        "-o",
        str(out),
    )
    assert r.returncode == 0, r.stderr
    doc = ResultDocument.model_validate_json(r.stdout)
    profile = doc.runs[0].sizes
    assert [p.block_size for p in profile.points] == ALL_SIZES[1:]
    assert profile.notes == ["512 B left out: file mode (the filesystem may refuse direct writes below its block size)"]
    assert profile.method.fio_params["size"] == str(64 * 1024 * 1024)
    assert not target.exists()  # the test file is removed afterwards, as without the profile
    assert check_figures(doc) == [] and incomplete_problems(doc) == []


# --- the runner, fio's steps replayed from the recorded profile


class _Listener(runner.Listener):
    def __init__(self):
        self.plans: list[StepPlan] = []
        self.sizes_started: list[int] = []
        self.sizes_done: list[int] = []

    def step_planned(self, plan):
        self.plans.append(plan)

    def size_step_started(self, block_size, *, eta_s):
        self.sizes_started.append(block_size)

    def size_step_done(self, point):
        self.sizes_done.append(point.block_size)


@pytest.fixture
def replayed(tmp_path, monkeypatch):
    """run(cut_at=None) -> (document or error, listener): the real runner on a file target whose
    fio steps are the recorded ones; the size step at ``cut_at`` bytes ran short (a kill)."""
    doc = recorded()
    by_bs = {sizes.bs_text(p["block_size"]): p["fio"] for p in doc["runs"][0]["sizes"]["points"]}
    sweep_fio = doc["runs"][0]["points"][0]["fio"]
    monkeypatch.setattr(fio, "installed_version", lambda: doc["method"]["fio_version"])
    monkeypatch.setattr(runner, "_identify", lambda target, path: Device(path=path, kind=target.kind))

    def run(cut_at=None):
        def fake_run(argv, **kw):
            opts = dict(a[2:].split("=", 1) for a in argv[1:] if "=" in a)
            data = copy.deepcopy(by_bs[opts["bs"]] if opts["name"] == sizes.JOB_NAME else sweep_fio)
            if opts["name"] == sizes.JOB_NAME and sizes.parse_bs(opts["bs"]) == cut_at:
                data["jobs"][0]["write"]["runtime"] = 300
            return proc.Completed(argv, 0, json.dumps(data), "")

        monkeypatch.setattr(proc, "run", fake_run)
        listener = _Listener()
        options = planning.BenchOptions(
            runtime_s=2, size_bytes=64 << 20, cache="keep", jobs=[1], flush_check=False, profiles=("sizes",)
        )
        with planning.plan(str(tmp_path / "t.img"), options) as p:
            try:
                return runner.execute(p, listener), listener
            except FioError as exc:
                return exc, listener

    return run


def test_runner_measures_every_size_after_the_sweep_and_counts_them_in_the_budget(replayed):
    doc, listener = replayed()
    profile = doc.runs[0].sizes
    assert [p.block_size for p in profile.points] == ALL_SIZES[1:]  # a file: from 4 KiB
    assert listener.sizes_started == listener.sizes_done == ALL_SIZES[1:]
    assert not profile.interrupted and not doc.interrupted
    budgets = [p.size_steps_left for p in listener.plans]
    assert budgets[0] == 6 and budgets[-1] == 1 and budgets == sorted(budgets, reverse=True)
    assert [p.size_step for p in listener.plans] == [False] + [True] * 6


def test_runner_keeps_the_sizes_before_a_step_cut_short_and_marks_the_profile(replayed):
    error, listener = replayed(cut_at=16384)
    assert isinstance(error, StepCutShort)
    assert error.message.startswith("the size-profile step at 16k was cut short, not by diskq: it ran 0.3 s of the 2 s")
    doc = error.document
    profile = doc.runs[0].sizes
    assert [p.block_size for p in profile.points] == [4096, 8192, 16384]
    assert [p.interrupted for p in profile.points] == [False, False, True]
    assert profile.interrupted and doc.interrupted and doc.runs[0].interrupted
    assert listener.sizes_done == [4096, 8192]
    assert "result.runs[0].sizes.points[2].interrupted" in [p.field for p in incomplete_problems(doc)]
