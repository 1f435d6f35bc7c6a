"""diskq bench end to end: real fio on real loop devices and files, the real CLI in a subprocess.

The loop devices are made by the ``make_loop`` fixture over temp files and always detached.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from diskq.result import ResultDocument
from tests.conftest import needs_fio, needs_loop, sectors_written

pytestmark = [needs_fio]


def diskq(*args, env=None, timeout=300, **kw):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "diskq", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env=full_env,
        **kw,
    )


def sysfs_cache(dev: str) -> str:
    return Path(f"/sys/block/{Path(dev).name}/queue/write_cache").read_text().strip()


@pytest.fixture
def journal_env(tmp_path):
    d = tmp_path / "journal"
    return {"DISKQ_JOURNAL_DIR": str(d)}


@needs_loop
def test_bench_loop_device_json(make_loop, tmp_path, journal_env):
    dev = make_loop(128 * 1024 * 1024)
    before = sysfs_cache(dev)
    out = tmp_path / "result.json"
    r = diskq("bench", dev, "--yes", "--json", "--runtime", "2", "--max-jobs", "4", "-o", str(out), env=journal_env)
    assert r.returncode == 0, r.stderr
    doc = ResultDocument.model_validate_json(r.stdout)  # stdout holds the document and nothing else
    assert json.loads(out.read_text()) == json.loads(r.stdout)
    # a loop device measures the host: no invitation to contribute it, and the reason why
    assert "diskq sign" not in r.stderr
    assert f"not for the device database: a Linux loop device ({dev}): it measures the host" in r.stderr
    assert doc.device.path == dev and doc.device.kind == "disk"
    assert doc.device.capacity_bytes == 128 * 1024 * 1024
    assert doc.method.fio_params["fdatasync"] == "1" and doc.method.fio_params["bs"] == "4k"
    assert doc.method.fio_version.startswith("fio-3")
    # the loop device's only cache toggle is the kernel knob: auto -> both states, restored afterwards
    assert sorted(r.write_cache for r in doc.runs) == ["off", "on"]
    assert all(run.cache_mechanism == "sysfs" for run in doc.runs)
    assert sysfs_cache(dev) == before
    for run in doc.runs:
        jobs = [p.numjobs for p in run.points]
        assert jobs == sorted(set(jobs)) and jobs[0] == 1 and max(jobs) <= 4
        for p in run.points:
            assert p.iops > 0 and p.total_ios > 0
            assert p.bw_bytes == pytest.approx(p.iops * 4096, rel=0.02)
            assert p.fio["jobs"][0]["job options"]["numjobs"] == str(p.numjobs)
            assert p.sync_lat_us is not None and p.sync_lat_us.mean > 0
        assert run.peak.iops == max(p.iops for p in run.points)
        assert run.nosync is not None and run.nosync.fio["jobs"][0]["job options"]["fdatasync"] == "0"
        assert run.scaling is not None
    assert doc.verdicts is not None
    assert "result written to" in r.stderr


@needs_loop
def test_bench_explicit_jobs_and_keep(make_loop, tmp_path, journal_env):
    dev = make_loop()
    r = diskq(
        "bench",
        dev,
        "--yes",
        "--json",
        "--runtime",
        "1",
        "--jobs",
        "1,3",
        "--cache",
        "keep",
        "--no-flush-check",
        "-o",
        str(tmp_path / "r.json"),
        env=journal_env,
    )
    assert r.returncode == 0, r.stderr
    doc = ResultDocument.model_validate_json(r.stdout)
    assert len(doc.runs) == 1 and doc.runs[0].write_cache == "on" and not doc.runs[0].cache_changed
    assert [p.numjobs for p in doc.runs[0].points] == [1, 3]
    assert doc.runs[0].nosync is None
    assert doc.method.search == "explicit"


@needs_loop
def test_the_answer_points_are_measured_with_the_longer_window(make_loop, tmp_path, journal_env):
    """Default steps (method version 4): the steps that steer the search measure 4 s, the 1-job
    point and the peak at least 7 s and up to 19 s while their rate still trends (fio's
    iops_slope detector), each after a 1 s ramp fio leaves out of its figures; the peak is never
    a short step."""
    from diskq.submission.figures import check_figures

    dev = make_loop(128 * 1024 * 1024)
    r = diskq(
        "bench",
        dev,
        "--yes",
        "--json",
        "--max-jobs",
        "2",
        "--cache",
        "keep",
        "--no-flush-check",
        "-o",
        str(tmp_path / "r.json"),
        env=journal_env,
    )
    assert r.returncode == 0, r.stderr
    doc = ResultDocument.model_validate_json(r.stdout)
    assert (doc.method.id, doc.method.version) == ("diskq-fdatasync-sweep", 4)
    assert doc.method.fio_params["ramp_time"] == "1" and doc.method.fio_params["runtime"] == "4"
    assert "ss" not in doc.method.fio_params
    assert any(
        n.startswith("step windows:")
        and "measure 7 s after a 1 s ramp, longer while the IOPS still trend by more than 1 % a second, up to 19 s" in n
        for n in doc.notes
    )
    run = doc.runs[0]
    points = {p.numjobs: p for p in run.points}
    assert sorted(points) == [1, 2]

    def window(p):
        opts = p.fio["jobs"][0]["job options"]
        return opts.get("runtime"), opts.get("ramp_time"), opts.get("steadystate"), opts.get("steadystate_duration")

    def settled_in_time(p):
        # fio's figures cover the measured seconds only (the ramp left out): at least the 7 s
        # window; ended by the detector (steady_state True) or at the 19 s cap (False)
        seconds = p.runtime_ms / 1000
        return 7.0 <= seconds <= 19.6 and (p.steady_state is True or seconds >= 18.9)

    assert window(points[1]) == ("19", "1", "iops_slope:1%", "7s")
    assert settled_in_time(points[1]), (points[1].runtime_ms, points[1].steady_state)
    peak = points[run.peak.numjobs]
    assert window(peak) == ("19", "1", "iops_slope:1%", "7s")
    # 2 jobs measured again with the longer window, as the peak or as a point the OSD count turns on
    # (which a busy host can make the peak afterwards): the note says which
    again = [
        n
        for n in run.notes
        if n.startswith(
            ("peak confirmed at 2 jobs with the longer window:", "point deciding the OSD count confirmed at 2 jobs")
        )
    ]
    if peak.numjobs == 2:  # the short step at 2 jobs was the best: measured again, and the note says so
        assert again
    elif not again:  # 2 jobs did not beat 1 and decided nothing: a short step, read only to steer
        assert window(points[2]) == ("4", "1", None, None)
    assert check_figures(doc) == []  # the method's options (ramp_time, the one detector) included


@needs_loop
def test_refuses_without_confirmation_and_writes_nothing(make_loop, tmp_path, journal_env):
    dev = make_loop()
    marker = b"precious data\n" * 100
    with open(dev, "r+b") as f:
        f.write(marker)
    r = diskq("bench", dev, "--runtime", "1", "--jobs", "1", "-o", str(tmp_path / "r.json"), env=journal_env)
    assert r.returncode == 4
    assert "diskq: error: refusing to write" in r.stderr and "--yes" in r.stderr
    assert "Traceback" not in r.stderr
    with open(dev, "rb") as f:
        assert f.read(len(marker)) == marker
    assert not (tmp_path / "r.json").exists()


def test_file_mode_creates_and_removes_its_file(tmp_path, journal_env):
    target = tmp_path / "bench.img"
    r = diskq(
        "bench",
        str(target),
        "--size",
        "32M",
        "--runtime",
        "1",
        "--jobs",
        "1,2",
        "--json",
        "-o",
        str(tmp_path / "r.json"),
        env=journal_env,
    )
    assert r.returncode == 0, r.stderr
    doc = ResultDocument.model_validate_json(r.stdout)
    assert doc.device.kind == "file" and doc.device.filesystem
    assert [p.numjobs for p in doc.runs[0].points] == [1, 2]
    assert not target.exists(), "the file diskq created is removed afterwards"


def test_file_mode_refuses_existing_file(tmp_path, journal_env):
    target = tmp_path / "keep.me"
    target.write_bytes(b"x" * 4096)
    r = diskq("bench", str(target), "--runtime", "1", "--jobs", "1", env=journal_env)
    assert r.returncode != 0
    assert r.stderr.startswith("diskq: error:") and "Traceback" not in r.stderr
    assert target.read_bytes() == b"x" * 4096


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--max-jobs", "0"], "--max-jobs"),
        (["--jobs", "1,x"], "whole numbers"),
        (["--size", "lots"], "not a size"),
        (["--cache", "sideways"], "--cache"),
        (["--runtime", "nan"], "--runtime"),
        (["--runtime", "inf"], "--runtime"),
        (["--runtime", "1.5"], "whole seconds"),
        (["--runtime", "0"], "--runtime"),
        (["--jobs", "1,64", "--max-jobs", "4"], "--jobs and --max-jobs"),
    ],
)
def test_bad_options_one_line_error(tmp_path, args, needle):
    r = diskq("bench", str(tmp_path / "f.img"), *args)
    assert r.returncode == 2
    assert needle in r.stderr.splitlines()[0]
    assert "Traceback" not in r.stderr


def test_file_mode_records_the_file_and_labels_the_device(tmp_path, journal_env):
    target = tmp_path / "sized.img"
    r = diskq(
        "bench",
        str(target),
        "--size",
        "24M",
        "--runtime",
        "1",
        "--jobs",
        "1",
        "--no-flush-check",
        "--json",
        "-o",
        str(tmp_path / "r.json"),
        env=journal_env,
    )
    assert r.returncode == 0, r.stderr
    doc = ResultDocument.model_validate_json(r.stdout)
    note = next(n for n in doc.notes if n.startswith("file mode: test file"))
    assert str(target) in note and f"({24 * 1024 * 1024} bytes)" in note
    assert doc.device.backing_device and doc.device.backing_device in note and "not the file" in note


def test_new_file_in_dev_shm_is_benched_as_a_file(journal_env, tmp_path):
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat("/dev").st_dev or not os.access(shm, os.W_OK):
        pytest.skip("/dev/shm is not a writable filesystem of its own here")
    target = shm / f"diskq-test-{os.getpid()}.img"
    try:
        r = diskq(
            "bench",
            str(target),
            "--size",
            "8M",
            "--runtime",
            "1",
            "--jobs",
            "1",
            "--no-flush-check",
            "--json",
            "-o",
            str(tmp_path / "r.json"),
            env=journal_env,
        )
        assert r.returncode == 0, r.stderr
        assert ResultDocument.model_validate_json(r.stdout).device.kind == "file"
        assert not target.exists()
    finally:
        target.unlink(missing_ok=True)


@needs_loop
def test_loop_backing_file_is_refused_even_with_yes(make_loop, tmp_path, journal_env):
    make_loop(name="backing.img")
    backing = tmp_path / "backing.img"
    with open(backing, "r+b") as f:
        f.write(b"loop data\n")
    r = diskq(
        "bench", str(backing), "--yes", "--runtime", "1", "--jobs", "1", "-o", str(tmp_path / "r.json"), env=journal_env
    )
    assert r.returncode == 4, r.stderr
    assert "backing file of an attached loop device" in r.stderr and "losetup -d" in r.stderr
    with open(backing, "rb") as f:
        assert f.read(10) == b"loop data\n"


def test_missing_device_path():
    r = diskq("bench", "/dev/does-not-exist-diskq", "--yes")
    assert r.returncode == 2 and "does not exist" in r.stderr and "Traceback" not in r.stderr


def _start_bench(dev, tmp_path, env, *extra):
    full_env = dict(os.environ)
    full_env.update(env)
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "diskq",
            "bench",
            dev,
            "--yes",
            "--cache",
            "off",
            "--runtime",
            "30",
            "--jobs",
            "1,2",
            "--no-steady-state",
            "-o",
            str(tmp_path / "r.json"),
            *extra,
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full_env,
    )


def _signal_when(p, cond, signum, *, settle=0.0, timeout=30.0):
    """Once ``cond()`` holds (and ``settle`` seconds more), send ``signum`` to the running bench
    and return its (stdout, stderr); the process is killed if anything goes wrong."""
    try:
        assert _wait_for(cond, timeout=timeout), "the bench never reached the state to signal it in"
        time.sleep(settle)
        p.send_signal(signum)
        return p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()


def _written_past_the_ramp(dev: str, ramp_s: float = 1.0):
    """A condition that holds once a write reached the device (only fio writes to a loop device
    the test made) more than ``ramp_s`` + 0.5 s after the first one: fio's job had started by the
    first write, so that later one counts in its figures whatever time fio took to start (a fixed
    sleep after the cache switch signalled fio before its ramp ended on a loaded host)."""
    state: dict = {}

    def cond() -> bool:
        now, sectors = time.monotonic(), sectors_written(dev)
        if "first" not in state:
            if sysfs_cache(dev) == "write through" and sectors > state.setdefault("before", sectors):
                state["first"] = now
            return False
        if "after_ramp" not in state:
            if now - state["first"] >= ramp_s + 0.5:
                state["after_ramp"] = sectors
            return False
        return sectors > state["after_ramp"]

    sectors_written(dev)  # the device exists
    return cond


def _wait_for(cond, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return False


@needs_loop
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_signal_restores_cache_and_keeps_partial_results(make_loop, tmp_path, journal_env, signum):
    dev = make_loop()
    assert sysfs_cache(dev) == "write back"
    p = _start_bench(dev, tmp_path, journal_env)
    # signal once fio has written past its 1 s ramp, so that its figures hold something to keep
    out, err = _signal_when(p, _written_past_the_ramp(dev), signum)
    assert p.returncode == 130, err
    assert sysfs_cache(dev) == "write back"
    doc = ResultDocument.model_validate_json((tmp_path / "r.json").read_text())
    assert doc.interrupted and doc.runs[0].interrupted
    assert doc.runs[0].points and doc.runs[0].points[0].interrupted
    assert doc.runs[0].points[0].iops > 0
    # no fio of this run outlives diskq (other fio processes on the machine are not ours to judge)
    assert subprocess.run(["pgrep", "-f", "--", f"--filename={dev} "], capture_output=True).returncode == 1


@needs_loop
def test_sigkill_then_restore(make_loop, tmp_path, journal_env):
    dev = make_loop()
    p = _start_bench(dev, tmp_path, journal_env)
    try:
        assert _wait_for(lambda: sysfs_cache(dev) == "write through")
        p.kill()  # SIGKILL: no handler runs, the cache stays off
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    subprocess.run(["pkill", "-f", "--", f"--filename={dev} "], capture_output=True)
    assert sysfs_cache(dev) == "write through"
    # every start warns while the journal holds an unrestored change
    warned = diskq("identify", dev, "--json", env=journal_env)
    assert "diskq restore" in warned.stderr and dev in warned.stderr
    r = diskq("restore", env=journal_env)
    assert r.returncode == 0, r.stderr
    assert sysfs_cache(dev) == "write back"
    assert diskq("restore", env=journal_env).returncode == 0  # nothing left to do


@needs_loop
def test_signature_needs_force_and_mounted_is_refused_even_with_force(make_loop, tmp_path, journal_env):
    dev = make_loop()
    subprocess.run(["mkfs.ext4", "-q", "-F", dev], check=True, capture_output=True)
    args = [
        "bench",
        dev,
        "--yes",
        "--runtime",
        "1",
        "--jobs",
        "1",
        "--cache",
        "keep",
        "--no-flush-check",
        "-o",
        str(tmp_path / "r.json"),
    ]
    r = diskq(*args, env=journal_env)
    assert r.returncode == 4 and "ext4" in r.stderr and "--force" in r.stderr
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", dev, str(mnt)], check=True)
    try:
        r = diskq(*args, "--force", env=journal_env)
        assert r.returncode == 4 and "mounted" in r.stderr
        assert "Traceback" not in r.stderr
    finally:
        subprocess.run(["umount", str(mnt)], check=True)
    # unmounted, with --force: the user has said twice that the filesystem may go
    r = diskq(*args, "--force", env=journal_env)
    assert r.returncode == 0, r.stderr


def _slow_tool(bin_dir: Path, name: str, marker: Path) -> None:
    """A stand-in for a drive tool that hangs (a drive that takes its time to answer)."""
    bin_dir.mkdir(exist_ok=True)
    tool = bin_dir / name
    tool.write_text(f"#!/bin/sh\ntouch {marker}\nsleep 60\n")
    tool.chmod(0o755)


@needs_loop
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_device_is_identified_stops_diskq(make_loop, tmp_path, journal_env, signum):
    # Before, the first Ctrl-C here became a note of the identity probe and every later signal
    # was ignored: diskq ran the whole bench. Now it stops at once and writes nothing to the device.
    dev = make_loop()
    marker = tmp_path / "smartctl-started"
    _slow_tool(tmp_path / "bin", "smartctl", marker)
    env = dict(journal_env, PATH=f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    p = _start_bench(dev, tmp_path, env)
    out, err = _signal_when(p, marker.exists, signum)  # while the identity probe runs smartctl
    assert p.returncode == 130, err
    assert f"interrupted by {signal.Signals(signum).name}" in out and "Traceback" not in out + err
    assert sysfs_cache(dev) == "write back"  # the cache was never touched
    doc = ResultDocument.model_validate_json((tmp_path / "r.json").read_text())
    assert doc.interrupted and doc.runs == []  # no fio step ran
    assert subprocess.run(["pgrep", "-f", "--", f"--filename={dev} "], capture_output=True).returncode == 1


@needs_loop
def test_a_signal_during_cache_both_restores_the_state_found(make_loop, tmp_path, journal_env):
    # --cache both measures the state found first, then switches; a signal in the second run must
    # put back the state found (here "write through", not the kernel default)
    dev = make_loop()
    Path(f"/sys/block/{Path(dev).name}/queue/write_cache").write_text("write through")
    full_env = dict(os.environ, **journal_env)
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "diskq",
            "bench",
            dev,
            "--yes",
            "--cache",
            "both",
            "--runtime",
            "3",
            "--jobs",
            "1,2",
            "--no-steady-state",
            "--no-flush-check",
            "-o",
            str(tmp_path / "r.json"),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full_env,
    )
    out, err = _signal_when(p, lambda: sysfs_cache(dev) == "write back", signal.SIGTERM, settle=1.0, timeout=60)
    assert p.returncode == 130, err
    assert sysfs_cache(dev) == "write through"
    doc = ResultDocument.model_validate_json((tmp_path / "r.json").read_text())
    assert [r.write_cache for r in doc.runs] == ["off", "on"]
    assert not doc.runs[0].interrupted and len(doc.runs[0].points) == 2
    assert doc.runs[1].interrupted and doc.runs[1].cache_changed
    assert os.listdir(journal_env["DISKQ_JOURNAL_DIR"]) == []
