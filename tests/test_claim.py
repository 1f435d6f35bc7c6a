"""The O_EXCL claim a bench holds on its device from the safety check to the end, on real loop devices.

While the claim is held, every other exclusive open (mount, mkfs, swapon, LVM, another diskq)
fails with EBUSY, while fio's own plain opens of the device keep working.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from diskq.bench import planning, runner
from diskq.errors import TargetError, UnsafeTarget
from diskq.probe import exclusive
from tests.conftest import _have, needs_fio, needs_loop

pytestmark = [needs_loop, needs_fio]

MiB = 1024 * 1024


def exclusive_open_errno(dev: str) -> int | None:
    """None when ``dev`` can be opened with O_EXCL right now (it is closed again at once)."""
    try:
        fd = os.open(dev, os.O_RDONLY | os.O_EXCL)
    except OSError as exc:
        return exc.errno
    os.close(fd)
    return None


class Probe(runner.Listener):
    """Tries an exclusive open of each device at the start of every fio step."""

    def __init__(self, *devices: str):
        self.devices = devices
        self.seen: list[tuple[str, int | None]] = []

    def step_started(self, numjobs, *, fdatasync, eta_s):
        self.seen += [(d, exclusive_open_errno(d)) for d in self.devices]


@pytest.fixture
def journal_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DISKQ_JOURNAL_DIR", str(tmp_path / "journal"))


def test_claim_is_exclusive_and_released(make_loop):
    dev = make_loop()
    claim = exclusive.claim_exclusive(dev)
    try:
        assert claim.held and exclusive_open_errno(dev) == errno.EBUSY
        with pytest.raises(UnsafeTarget) as info:
            exclusive.claim_exclusive(dev)
        assert "cannot be opened exclusively" in info.value.reasons[0]
    finally:
        claim.release()
    claim.release()  # idempotent
    assert not claim.held and exclusive_open_errno(dev) is None


def test_plan_holds_the_device_until_closed(make_loop):
    dev = make_loop()
    with planning.plan(dev, planning.BenchOptions(runtime_s=1, jobs=[1], yes=True)):
        assert exclusive_open_errno(dev) == errno.EBUSY
        # a second diskq is refused at its safety check
        with pytest.raises(UnsafeTarget):
            planning.plan(dev, planning.BenchOptions(runtime_s=1, jobs=[1], yes=True))
    assert exclusive_open_errno(dev) is None


def test_plan_that_refuses_after_claiming_releases_the_claim(make_loop):
    dev = make_loop(8 * MiB)
    with pytest.raises(TargetError, match="too small"):
        planning.plan(dev, planning.BenchOptions(runtime_s=1, jobs=[1024], yes=True))
    assert exclusive_open_errno(dev) is None


def test_fio_runs_while_the_claim_is_held(make_loop, journal_dir):
    dev = make_loop()
    probe = Probe(dev)
    with planning.plan(dev, planning.BenchOptions(runtime_s=1, jobs=[1, 2], cache="keep", yes=True)) as plan:
        doc = runner.execute(plan, probe)
    assert probe.seen == [(dev, errno.EBUSY)] * 3  # two steps and the flush check, all during the claim
    assert [p.numjobs for p in doc.runs[0].points] == [1, 2]
    assert all(p.iops > 0 and p.total_ios > 0 for p in doc.runs[0].points)
    assert exclusive_open_errno(dev) is None


def test_partition_claims_its_disk_while_the_cache_may_be_switched(make_loop, journal_dir):
    if not (_have("sfdisk") and _have("partx")):
        pytest.skip("sfdisk and partx are needed (apt-get install fdisk util-linux)")
    disk = make_loop(128 * MiB)
    subprocess.run(["sfdisk", "-q", disk], input="label: dos\n,32M\n,32M\n", text=True, capture_output=True, check=True)
    subprocess.run(["partx", "--add", disk], capture_output=True)
    p1, p2 = f"{disk}p1", f"{disk}p2"
    try:
        if not (Path(p1).is_block_device() and Path(p2).is_block_device()):
            pytest.skip("the kernel made no partition devices for the loop device here")
        probe = Probe(p1, p2)
        with planning.plan(
            p2, planning.BenchOptions(runtime_s=1, jobs=[1], cache="both", yes=True, flush_check=False)
        ) as plan:
            assert plan.claim.path == disk
            doc = runner.execute(plan, probe)
        # neither the partition benched nor its sibling could be claimed (mounted, say) meanwhile
        assert probe.seen and all(e == errno.EBUSY for _, e in probe.seen)
        assert sorted(r.write_cache for r in doc.runs) == ["off", "on"]
        assert exclusive_open_errno(disk) is None
        with planning.plan(p2, planning.BenchOptions(runtime_s=1, jobs=[1], cache="keep", yes=True)) as plan:
            assert plan.claim.path == p2
            assert exclusive_open_errno(p1) is None  # keeping the cache: the sibling stays usable
    finally:
        subprocess.run(["partx", "--delete", disk], capture_output=True)


def test_a_partition_whose_disk_is_claimed_elsewhere_is_refused_by_its_own_name(make_loop, journal_dir):
    """Another program holds the whole disk with O_EXCL (say, a second diskq benching it). The
    partition cannot be claimed then either, so the safety check refuses it by its own name; and
    where the disk is lost between the checks and the claim of the disk (a race), the claim's
    refusal still names the partition asked for, its disk, and --cache keep."""
    if not (_have("sfdisk") and _have("partx")):
        pytest.skip("sfdisk and partx are needed (apt-get install fdisk util-linux)")
    disk = make_loop(96 * MiB)
    subprocess.run(["sfdisk", "-q", disk], input="label: dos\n,32M\n,32M\n", text=True, capture_output=True, check=True)
    subprocess.run(["partx", "--add", disk], capture_output=True)
    p2 = f"{disk}p2"
    try:
        if not Path(p2).is_block_device():
            pytest.skip("the kernel made no partition devices for the loop device here")
        with exclusive.claim_exclusive(disk):
            with pytest.raises(UnsafeTarget) as checked:
                planning.plan(p2, planning.BenchOptions(runtime_s=1, jobs=[1], cache="off", yes=True))
            with pytest.raises(UnsafeTarget) as claimed:
                exclusive.claim_exclusive(disk, target=p2)
        assert checked.value.message == f"refusing to write to {p2}: it is in use"
        assert any(p2 in r and "O_EXCL" in r for r in checked.value.reasons)
        err = claimed.value
        assert err.message == (
            f"refusing to switch the write cache for {p2}: it belongs to the whole disk {disk}, which is in use"
        )
        assert "--cache keep" in err.hint
        assert any(disk in r and "O_EXCL" in r for r in err.reasons)
        assert exclusive_open_errno(disk) is None and exclusive_open_errno(p2) is None  # nothing left held
    finally:
        subprocess.run(["partx", "--delete", disk], capture_output=True)


def test_cli_bench_holds_the_device_while_it_runs(make_loop, tmp_path):
    dev = make_loop()
    env = dict(os.environ, DISKQ_JOURNAL_DIR=str(tmp_path / "journal"))
    p = subprocess.Popen(
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
            "5",
            "--jobs",
            "1",
            "--no-flush-check",
            "-o",
            str(tmp_path / "r.json"),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    knob = Path(f"/sys/block/{Path(dev).name}/queue/write_cache")
    try:
        # the cache is switched off after the claim is taken and back on before it is released:
        # an exclusive open tried while the knob reads "write through" falls inside the claim
        while knob.read_text().strip() != "write through" and p.poll() is None:
            time.sleep(0.05)
        during = exclusive_open_errno(dev)
        still_running = knob.read_text().strip() == "write through"
        _, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    assert still_running and during == errno.EBUSY
    assert exclusive_open_errno(dev) is None
