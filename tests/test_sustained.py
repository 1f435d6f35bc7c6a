"""The sustained write (diskq bench --profile sustained): the budget, fio's bandwidth log, real
fio on loop devices (a real cliff made with the kernel's block throttle), validation, output."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from diskq.analyse.cliff import find_cliff
from diskq.bench import planning, runner, sustained
from diskq.cli._sustained import chart, lines
from diskq.errors import FioError, InvalidInput, NotConfirmed
from diskq.result import Device, Method, ResultDocument
from diskq.submission.complete import incomplete_problems
from diskq.submission.sustained import sustained_problems
from tests.conftest import FIXTURES, fio_processes, needs_fio, needs_loop, sectors_written

HERE = FIXTURES / "sustained"
THROTTLE = Path("/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device")


def recorded():
    data = json.loads((HERE / "throttled-fdatasync.json").read_text())
    log = (HERE / "throttled-fdatasync_bw.1.log").read_text()
    budget = sustained.Budget(seconds=22)
    opts = sustained.options(sustained.FDATASYNC, budget, 256 * 1024**2, "/tmp/x/bw")
    s = sustained.from_output(data, log, sustained.FDATASYNC, budget, opts, write_cache="on", mechanism="sysfs")
    s.cliff = find_cliff(s.bw_samples, s.sample_interval_ms)
    return s


def doc_with(*measured) -> ResultDocument:
    return ResultDocument(device=Device(path="/dev/loop0", kind="disk"), method=Method(), sustained=list(measured))


# --- the budget ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("10m", sustained.Budget(seconds=600)),
        ("90s", sustained.Budget(seconds=90)),
        ("2h", sustained.Budget(seconds=7200)),
        ("3 min", sustained.Budget(seconds=180)),
        ("500M", sustained.Budget(bytes=500 * 1024**2)),
        ("60G", sustained.Budget(bytes=60 * 1024**3)),
        ("1T", sustained.Budget(bytes=1024**4)),
        ("64MiB", sustained.Budget(bytes=64 * 1024**2)),
        ("1.5G", sustained.Budget(bytes=1536 * 1024**2)),
    ],
)
def test_budget_is_a_size_or_a_time(text, expected):
    assert sustained.parse_budget(text) == expected


@pytest.mark.parametrize("text", ["600", "", "10x", "1.5s", "0s", "25h", "512K", "0G", "-5m", "ten minutes"])
def test_a_bad_budget_is_refused_with_a_hint(text):
    with pytest.raises(InvalidInput) as info:
        sustained.parse_budget(text)
    assert info.value.hint and "10m" in info.value.hint


def test_budget_describes_itself():
    assert sustained.Budget(seconds=600).describe() == "10 min"
    assert sustained.Budget(seconds=90).describe() == "90 s"
    assert sustained.Budget(bytes=60 * 1024**3).describe() == "60.0 GiB"


def test_options_follow_the_budget_and_the_variant():
    by_time = sustained.options(sustained.FDATASYNC, sustained.Budget(seconds=30), 2 * 1024**3, "/t/bw")
    assert by_time["time_based"] == "1" and by_time["runtime"] == "30" and "io_size" not in by_time
    assert (by_time["bs"], by_time["iodepth"], by_time["fdatasync"], by_time["ioengine"]) == ("128k", "1", "1", "psync")
    by_size = sustained.options(sustained.SEQUENTIAL, sustained.Budget(bytes=3 * 1024**3), 2 * 1024**3, "/t/bw")
    assert by_size["io_size"] == str(3 * 1024**3) and "time_based" not in by_size  # wraps around the 2 GiB
    assert (by_size["bs"], by_size["iodepth"], by_size["fdatasync"], by_size["ioengine"]) == (
        "1024k",
        "32",
        "0",
        "libaio",
    )
    assert by_size["log_avg_msec"] == "1000"
    assert "write_bw_log" not in sustained.method(by_size).fio_params  # a temporary path, different every run


def test_warning_names_the_amount():
    text = sustained.warning(sustained.Budget(bytes=60 * 1024**3), "/dev/sdb", capacity_bytes=40 * 1024**3)
    assert "/dev/sdb" in text and "60.0 GiB" in text and "1.5 times its capacity" in text
    assert "10 min" in sustained.warning(sustained.Budget(seconds=600), "/dev/sdb", capacity_bytes=10**12)


# --- fio's bandwidth log ------------------------------------------------------------------------


def test_bandwidth_log_is_read_in_bytes_per_second():
    entries = sustained.parse_bw_log((HERE / "throttled-fdatasync_bw.1.log").read_text())
    assert len(entries) == 22
    assert entries[0] == (1000, 518272 * 1024.0)
    assert entries[-1] == (22000, 20500 * 1024.0)
    assert sustained.interval_note(entries, 1000) is None


def test_bandwidth_log_skips_other_directions_and_refuses_garbage():
    assert sustained.parse_bw_log("1000, 5, 0, 0, 0\n1000, 7, 1, 0, 0, 0\n\n") == [(1000, 7 * 1024.0)]
    with pytest.raises(FioError, match="line 1"):
        sustained.parse_bw_log("1000, lots, 1, 0, 0")
    with pytest.raises(FioError, match="back in time"):
        sustained.parse_bw_log("2000, 5, 1, 0, 0\n1000, 5, 1, 0, 0")
    assert "not 1000 ms" in sustained.interval_note([(1000, 1.0), (2000, 1.0), (4000, 1.0)], 1000)


def test_recorded_throttled_write_has_its_cliff_where_the_throttle_began():
    s = recorded()
    assert s.written_bytes == 3456368640 and s.runtime_ms == 22043 and len(s.bw_samples) == 22
    assert s.cliff.found and s.cliff.at_s == 8.0  # the throttle was set 8 s in
    assert s.cliff.drop_pct > 90
    assert sustained_problems(doc_with(s)) == []


# --- validation -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "change, field",
    [
        (lambda s: s.bw_samples.__setitem__(slice(None), [v * 1.3 for v in s.bw_samples]), "bw_samples"),
        (lambda s: s.bw_samples.__setitem__(slice(None), [v * 0.7 for v in s.bw_samples]), "bw_samples"),
        (lambda s: setattr(s, "written_bytes", s.written_bytes * 2), "written_bytes"),
        (lambda s: setattr(s, "iops", s.iops * 1.1), "iops"),
        (lambda s: setattr(s, "block_size", 4096), "block_size"),
        (lambda s: setattr(s, "budget_s", 600), "budget_s"),
        (
            lambda s: setattr(s, "cliff", s.cliff.model_copy(update={"at_bytes": s.cliff.at_bytes * 3})),
            "cliff.at_bytes",
        ),
        (lambda s: setattr(s, "cliff", s.cliff.model_copy(update={"found": False})), "cliff.found"),
        (lambda s: setattr(s, "cliff", None), "cliff"),
        (lambda s: setattr(s, "sample_interval_ms", 500), "sample_interval_ms"),
        (lambda s: setattr(s, "fio", None), "fio"),
    ],
)
def test_validation_finds_each_figure_that_does_not_match_the_raw_data(change, field):
    s = recorded()
    change(s)
    problems = sustained_problems(doc_with(s))
    assert any(p.field == f"result.sustained[0].{field}" for p in problems), problems


def test_a_flat_series_cannot_claim_a_cliff():
    s = recorded()
    s.bw_samples[8:] = [s.bw_samples[i % 8] for i in range(8, 22)]  # no throttle: no cliff
    s.cliff = find_cliff(s.bw_samples, 1000).model_copy(update={"found": True})
    assert any(p.field.endswith("cliff.found") for p in sustained_problems(doc_with(s)))


def test_an_interrupted_sustained_write_is_not_a_submission():
    s = recorded()
    s.interrupted = True
    assert [p.field for p in incomplete_problems(doc_with(s))] == ["result.sustained[0].interrupted"]


def test_variants_come_in_the_order_the_bench_runs_them():
    s = recorded()
    seq = s.model_copy(update={"variant": "sequential"})
    assert any(p.field == "result.sustained" for p in sustained_problems(doc_with(seq)))
    # the sequential variant runs only when the fdatasync one found no cliff; this one found one
    assert any(p.field == "result.sustained[1]" for p in sustained_problems(doc_with(s, seq)))


# --- output -----------------------------------------------------------------------------------


def test_chart_and_lines_show_the_cliff():
    assert chart([], 10) == ("", 0.0)
    assert chart([0.0, 0.0], 10) == ("▁▁", 0.0)
    line, top = chart([4.0] * 30 + [1.0] * 30, 20)
    assert len(line) == 20 and line[:10] == "█" * 10 and set(line[10:]) == {"▂"} and top == 4.0
    text = "\n".join(lines(recorded(), 80))
    assert "fdatasync" in text and "128 KiB" in text and "cliff" in text and "^" in text
    console = Console(record=True, width=100)
    from diskq.cli._sustained import print_sustained

    print_sustained([recorded()], console)
    assert "throughput fell" in console.export_text()


def test_confirmation_names_the_amount(monkeypatch, tmp_path):
    from types import SimpleNamespace

    from diskq.bench import target
    from diskq.cli import bench as cli_bench

    existing = tmp_path / "old.img"
    existing.write_bytes(b"x" * 4096)
    options = planning.BenchOptions(profiles=("sustained",), sustain=sustained.Budget(bytes=60 * 1024**3))
    plan = SimpleNamespace(
        target=target.Target(path=str(existing), kind="file", capacity_bytes=4096, existed=True), options=options
    )
    asked = []
    monkeypatch.setattr(cli_bench.sys.stdin, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(cli_bench.typer, "prompt", lambda text, **k: asked.append(text) or "nope")

    class Quiet:
        def print(self, *a, **k):
            pass

    with pytest.raises(NotConfirmed):
        cli_bench._confirm(plan, Quiet())
    assert "2 x 60.0 GiB" in asked[0]
    monkeypatch.setattr(cli_bench.sys.stdin, "isatty", lambda: False, raising=False)
    with pytest.raises(NotConfirmed) as info:
        cli_bench._confirm(plan, Quiet())
    assert "2 x 60.0 GiB" in info.value.hint


@pytest.mark.parametrize(
    "args, words",
    [
        (["--sustain", "10m"], "needs --profile sustained"),
        (["--profile", "sideways"], "--profile must be one of"),
        (["--profile", "sustained", "--sustain", "600"], "--sustain needs a unit"),
    ],
)
def test_cli_refuses_bad_profile_options_in_one_line(tmp_path, args, words, capsys, monkeypatch):
    from diskq.cli import main

    monkeypatch.setenv("DISKQ_JOURNAL_DIR", str(tmp_path / "journal"))
    with pytest.raises(SystemExit) as info:
        main(["bench", str(tmp_path / "new.img"), "--jobs", "1", "--runtime", "1", *args])
    err = capsys.readouterr().err
    assert info.value.code == 2, err
    assert words in err and "Traceback" not in err
    assert any(line.startswith("diskq: error:") for line in err.splitlines())
    assert not (tmp_path / "new.img").exists()


# --- real fio on loop devices -------------------------------------------------------------------


def _bench_options(**kw) -> planning.BenchOptions:
    return planning.BenchOptions(
        runtime_s=1, jobs=[1], cache="keep", flush_check=False, yes=True, profiles=("sustained",), **kw
    )


@needs_loop
@needs_fio
def test_a_size_budget_writes_exactly_that_and_validates(make_loop):
    dev = make_loop(64 * 1024 * 1024)
    before = Path("/sys/block", Path(dev).name, "queue", "write_cache").read_text()
    with planning.plan(dev, _bench_options(sustain=sustained.parse_budget("96M"))) as plan:
        doc = runner.execute(plan)
    assert not doc.interrupted and not doc.runs[0].interrupted
    # far too short to tell a cliff: the sequential variant follows, with the same budget
    assert [s.variant for s in doc.sustained] == ["fdatasync", "sequential"]
    for s in doc.sustained:
        assert s.written_bytes == 96 * 1024 * 1024  # more than the device: it wrapped around
        assert s.budget_bytes == 96 * 1024 * 1024 and s.budget_s is None
        assert s.write_cache == "on" and s.cache_mechanism == "sysfs"
        assert s.cliff is not None and not s.cliff.found and s.fio is not None
    assert Path("/sys/block", Path(dev).name, "queue", "write_cache").read_text() == before
    assert sustained_problems(doc) == [] and incomplete_problems(doc) == []
    json.loads(doc.to_json())  # the document holds it


@pytest.fixture
def throttle():
    """Set the kernel's write throttle of one device (cgroup v1 blkio, root group): ``set(dev,
    bytes_per_s)``; always removed at teardown."""
    if not THROTTLE.exists() or not os.access(THROTTLE, os.W_OK):
        pytest.skip("needs the cgroup v1 blkio throttle (root)")
    numbers: list[str] = []

    def set_(dev: str, bps: int) -> None:
        st = os.stat(dev)
        number = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
        numbers.append(number)
        THROTTLE.write_text(f"{number} {bps}\n")

    try:
        yield set_
    finally:
        for number in numbers:
            try:
                THROTTLE.write_text(f"{number} 0\n")
            except OSError:
                pass


def _sustained_fio(dev: str) -> int | None:
    """A fio process of the sustained write on ``dev`` (the one run with a bandwidth log)."""
    return next(
        (pid for pid, (_, argv) in fio_processes(dev).items() if any(a.startswith(b"--write_bw_log=") for a in argv)),
        None,
    )


@needs_loop
@needs_fio
def test_a_real_cliff_is_found_where_the_device_slowed_down(make_loop, throttle):
    dev = make_loop(256 * 1024 * 1024)
    slowed: list[float] = []  # when the throttle took effect, in seconds since the epoch

    def slow_down_later():
        deadline = time.monotonic() + 120
        while _sustained_fio(dev) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(7)
        throttle(dev, 10 * 1024 * 1024)  # 10 MiB/s from here on: a cache that just filled up
        slowed.append(time.time())

    helper = threading.Thread(target=slow_down_later, daemon=True)
    helper.start()
    with planning.plan(dev, _bench_options(sustain=sustained.parse_budget("20s"))) as plan:
        doc = runner.execute(plan)
    helper.join(timeout=5)
    assert slowed, "the sustained write never started"
    assert [s.variant for s in doc.sustained] == ["fdatasync"]  # found: no sequential variant
    s = doc.sustained[0]
    assert s.budget_s == 20 and s.runtime_ms >= 19_600
    assert s.cliff.found, s.cliff.reasons
    # Where the throttle fell in fio's own time: fio stamps its report when the write ends
    # (timestamp_ms), so the write began runtime_ms before that. Timing it from when this test
    # saw the fio process instead counted fio's start-up, which a loaded host stretches by seconds.
    began = (s.fio["timestamp_ms"] - s.runtime_ms) / 1000
    assert abs(s.cliff.at_s - (slowed[0] - began)) <= 2.0  # the one-second samples
    assert s.cliff.after_bw_bytes < 12 * 1024 * 1024 < s.cliff.before_bw_bytes
    assert sustained_problems(doc) == [] and incomplete_problems(doc) == []


@needs_loop
@needs_fio
def test_an_interrupted_sustained_write_keeps_what_fio_measured(make_loop, tmp_path):
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
            "--jobs",
            "1",
            "--runtime",
            "1",
            "--cache",
            "keep",
            "--no-flush-check",
            "--profile",
            "sustained",
            "--sustain",
            "30s",
            "-o",
            str(out),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "DISKQ_JOURNAL_DIR": str(tmp_path / "j")},
    )
    try:
        deadline = time.monotonic() + 60
        while _sustained_fio(dev) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _sustained_fio(dev) is not None, "the sustained write never started"
        # interrupt once the device has taken 8 MiB of the sustained write, however long a loaded
        # host takes to get there (a fixed sleep interrupted fio still starting up)
        before = sectors_written(dev)
        while sectors_written(dev) - before < 16384 and time.monotonic() < deadline:
            time.sleep(0.05)
        seen = (sectors_written(dev) - before) * 512
        assert seen >= 8 << 20, "the sustained write wrote nothing"
        bench.send_signal(signal.SIGINT)
        err = bench.stderr.read()
        bench.wait(timeout=60)
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.wait()
    assert bench.returncode == 130, err
    assert "Traceback" not in err and "warning" in err and "30 s" in err
    doc = ResultDocument.model_validate_json(out.read_text())
    assert doc.interrupted and not doc.runs[0].interrupted  # the sweep was complete
    assert len(doc.sustained) == 1 and doc.sustained[0].interrupted
    s = doc.sustained[0]
    assert 0 < s.runtime_ms < 30_000
    assert s.written_bytes + s.block_size >= seen  # what the device took before the signal, kept
    assert any(p.field == "result.sustained[0].interrupted" for p in incomplete_problems(doc))
    assert _sustained_fio(dev) is None


@needs_loop
@needs_fio
def test_a_sustained_write_killed_from_elsewhere_is_cut_short_not_complete(make_loop):
    from diskq.errors import StepCutShort

    dev = make_loop(128 * 1024 * 1024)
    killed: list[int] = []

    def kill_later():
        deadline = time.monotonic() + 120
        while _sustained_fio(dev) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(2.5)
        pid = _sustained_fio(dev)
        if pid is not None:
            os.kill(pid, signal.SIGTERM)  # not diskq: an operator's kill, the OOM killer
            killed.append(pid)

    helper = threading.Thread(target=kill_later, daemon=True)
    helper.start()
    with planning.plan(dev, _bench_options(sustain=sustained.parse_budget("30s"))) as plan:
        with pytest.raises(StepCutShort) as info:
            runner.execute(plan)
    helper.join(timeout=5)
    assert killed
    doc = info.value.document
    assert doc.interrupted and not doc.runs[0].interrupted
    assert len(doc.sustained) == 1 and doc.sustained[0].interrupted
    assert doc.sustained[0].runtime_ms < 29_000 and doc.sustained[0].cliff is not None
    assert "signal 15" in str(info.value.message)


@needs_fio
@pytest.mark.parametrize("tamper", [False, True])
def test_validate_file_checks_the_sustained_write(tmp_path, tamper):
    from diskq.analyse import annotate
    from diskq.submission.legacy import dump
    from diskq.submission.model import Contributor
    from diskq.submission.sign import make_submission
    from diskq.submission.validate import validate_file
    from tests.test_submission_support import fio_runs, result_from

    doc = result_from(fio_runs(), method_id="diskq-fdatasync-sweep")
    doc.sustained = [recorded()]
    annotate(doc)
    if tamper:  # a faster drive than fio measured, and no cliff
        doc.sustained[0].bw_samples = [max(doc.sustained[0].bw_samples)] * len(doc.sustained[0].bw_samples)
        doc.sustained[0].cliff = find_cliff(doc.sustained[0].bw_samples, 1000)
    path = tmp_path / "sub.json"
    path.write_text(dump(make_submission(doc, contributor=Contributor(github="octocat"))))
    _, problems = validate_file(path, require_signature=False)
    fields = [p.field for p in problems if p.field.startswith("result.sustained")]
    assert fields == (["result.sustained[0].bw_samples"] if tamper else []), problems


@needs_fio
def test_a_target_too_small_for_the_sustained_write_is_refused_before_writing(tmp_path):
    target = tmp_path / "small.img"
    options = planning.BenchOptions(
        runtime_s=1, jobs=[1], size_bytes=512 * 1024, cache="keep", yes=True, profiles=("sustained",)
    )
    with pytest.raises(InvalidInput) as info:
        planning.plan(str(target), options)
    assert "too small for a sustained write" in info.value.message and info.value.hint
    assert not target.exists()


@given(
    samples=st.lists(st.floats(0, 1e300), max_size=80),
    interval=st.integers(1, 10**7),
    written=st.integers(0, 2**63 - 1),
    runtime=st.integers(0, 2**40),
    iops=st.floats(0, 1e300),
    drop_fio=st.booleans(),
)
def test_validation_never_raises_whatever_the_figures(samples, interval, written, runtime, iops, drop_fio):
    s = recorded().model_copy(
        update={
            "bw_samples": samples,
            "sample_interval_ms": interval,
            "written_bytes": written,
            "runtime_ms": runtime,
            "iops": iops,
            "fio": None if drop_fio else {"jobs": 5},
        }
    )
    s.cliff = find_cliff(samples, interval)
    problems = sustained_problems(doc_with(s))
    assert all(p.field.startswith("result.sustained") for p in problems)


def test_progress_counts_the_variant_that_may_follow():
    from diskq.bench.progress import FakeClock
    from diskq.cli._render import BenchProgress

    clock = FakeClock()
    console = Console(file=open(os.devnull, "w"), width=100)
    progress = BenchProgress(console, 1, clock=clock, live=False)
    progress.sustained_started("fdatasync", sustained.Budget(seconds=60))
    clock.now = 30.0
    assert progress.clock.snapshot().left_s >= 90  # the rest of this one and a whole sequential variant
    clock.now = 61.0
    progress.sustained_done(recorded())
    progress.sustained_started("sequential", sustained.Budget(seconds=60))
    clock.now = 91.0
    assert 30 <= progress.clock.snapshot().left_s <= 32


@given(
    rates=st.lists(st.floats(1e5, 5e9), min_size=2, max_size=120),
    tail_ms=st.integers(0, 999),
    unlogged=st.integers(0, 1),
    jitter=st.lists(st.floats(-0.004, 0.004), min_size=120, max_size=120),
)
def test_honest_samples_always_add_up(rates, tail_ms, unlogged, jitter):
    # what fio does: one mean per second in whole KiB/s (its intervals a few ms long or short),
    # the rest of the last second never logged, sometimes the last whole second neither
    from diskq.submission.sustained import _samples_problems

    # the seconds fio did not log run no faster than the fastest one it logged (the check's premise)
    fastest = max(rates[: len(rates) - unlogged])
    rates = [min(r, fastest) for r in rates]
    written = int(sum(rates) + rates[-1] * tail_ms / 1000)
    logged = [round(r * (1 + e) / 1024) * 1024.0 for r, e in zip(rates[: len(rates) - unlogged], jitter, strict=False)]
    s = recorded().model_copy(
        update={"bw_samples": logged, "written_bytes": written, "runtime_ms": len(rates) * 1000 + tail_ms}
    )
    found = []
    _samples_problems(s, lambda field, message: found.append(message))
    assert found == []


def test_a_write_without_a_cliff_says_so_once():
    flat = recorded()
    flat.cliff = find_cliff([400e6] * 30, 1000)
    assert not flat.cliff.found and flat.cliff.reasons[0].startswith("no cliff: ")
    text = "\n".join(lines(flat, 200))
    assert text.count("no cliff") == 1, text
