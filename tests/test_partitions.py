"""Partitions of real loop devices: the write cache is the whole disk's, so it is left alone
while another partition of the disk is in use.

The partition table is written with sfdisk and the kernel is told about the partitions with
``partx --add`` (loop devices attached without ``--partscan`` do not scan their table). Every
partition is removed again with ``partx --delete`` before the loop device is detached.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from diskq.bench import planning
from diskq.errors import UnsafeTarget
from diskq.probe import inuse
from diskq.result import ResultDocument
from tests.conftest import _have, needs_fio, needs_loop

pytestmark = [needs_loop, needs_fio]

MiB = 1024 * 1024


def sh(*argv: str, stdin: str | None = None) -> None:
    subprocess.run(list(argv), check=True, capture_output=True, text=True, input=stdin)


def diskq(*args, env=None):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "diskq", *args],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        env=full_env,
    )


def sysfs_cache(dev: str) -> str:
    return Path(f"/sys/block/{Path(dev).name}/queue/write_cache").read_text().strip()


@pytest.fixture
def partitioned(make_loop):
    """``(disk, p1, p2)``: a 128 MiB loop device with two 32 MiB partitions the kernel knows about."""
    if not (_have("sfdisk") and _have("partx")):
        pytest.skip("sfdisk and partx are needed (apt-get install fdisk util-linux)")
    disk = make_loop(128 * MiB)
    sh("sfdisk", "-q", disk, stdin="label: dos\n,32M\n,32M\n")
    added = subprocess.run(["partx", "--add", disk], capture_output=True, text=True)
    name = Path(disk).name
    parts = [f"{disk}p1", f"{disk}p2"]
    try:
        if not all(Path(f"/sys/block/{name}/{Path(p).name}").exists() and Path(p).is_block_device() for p in parts):
            pytest.skip(f"the kernel made no partition devices for the loop device here ({added.stderr.strip()})")
        yield disk, *parts
    finally:
        subprocess.run(["partx", "--delete", disk], capture_output=True)


@pytest.fixture
def journal_env(tmp_path):
    return {"DISKQ_JOURNAL_DIR": str(tmp_path / "journal")}


@pytest.fixture
def sibling_in_use(partitioned, tmp_path, request):
    """p1 in use (mounted ext4 or active swap, by parameter); yields ``(disk, p1, p2, reason)``."""
    disk, p1, p2 = partitioned
    how = getattr(request, "param", "mounted")
    mnt = tmp_path / "mnt"
    if how == "mounted":
        sh("mkfs.ext4", "-q", "-F", p1)
        mnt.mkdir()
        sh("mount", p1, str(mnt))
    else:
        sh("mkswap", "-q", p1)
        sh("swapon", p1)
    try:
        yield disk, p1, p2, how
    finally:
        if how == "mounted":
            subprocess.run(["umount", str(mnt)], capture_output=True)
        else:
            subprocess.run(["swapoff", p1], capture_output=True)


@pytest.mark.parametrize("sibling_in_use", ["mounted", "swap"], indirect=True)
def test_rest_of_disk_in_use_names_the_sibling(sibling_in_use):
    disk, p1, p2, how = sibling_in_use
    reasons = inuse.rest_of_disk_in_use(p2)
    expected = (
        f"partition {p1} of the same disk is mounted at"
        if how == "mounted"
        else f"partition {p1} of the same disk is active swap"
    )
    assert any(r.startswith(expected) for r in reasons), reasons
    assert inuse.rest_of_disk_in_use(disk) == []  # a whole disk has no "rest"


def test_rest_of_disk_idle(partitioned):
    disk, p1, p2 = partitioned
    assert inuse.rest_of_disk_in_use(p2) == []
    assert inuse.partition_cache_mode(p2, "both") == ("both", [])


def test_sibling_held_exclusively_elsewhere_counts(partitioned):
    # what a mount in another mount namespace looks like from here: an exclusive claim
    disk, p1, p2 = partitioned
    fd = os.open(p1, os.O_RDONLY | os.O_EXCL)
    try:
        reasons = inuse.rest_of_disk_in_use(p2)
    finally:
        os.close(fd)
    assert reasons == [f"partition {p1} of the same disk cannot be opened exclusively (O_EXCL): something is using it"]


def test_plan_keeps_the_cache_for_auto(sibling_in_use):
    disk, p1, p2, _ = sibling_in_use
    with planning.plan(p2, planning.BenchOptions(runtime_s=1, jobs=[1], yes=True)) as plan:
        assert plan.options.cache == "keep"
        assert any(
            n.startswith(f"write cache left as it is (--cache keep): it belongs to the whole disk {disk}")
            for n in plan.notes
        ), plan.notes


def test_bench_partition_with_mounted_sibling_keeps_the_cache(sibling_in_use, tmp_path, journal_env):
    disk, p1, p2, _ = sibling_in_use
    assert sysfs_cache(disk) == "write back"
    out = tmp_path / "r.json"
    r = diskq(
        "bench",
        p2,
        "--yes",
        "--json",
        "--runtime",
        "1",
        "--jobs",
        "1",
        "--no-flush-check",
        "-o",
        str(out),
        env=journal_env,
    )
    assert r.returncode == 0, r.stderr
    doc = ResultDocument.model_validate_json(r.stdout)
    assert [run.write_cache for run in doc.runs] == ["on"] and not doc.runs[0].cache_changed
    assert any("write cache left as it is" in n and p1 in n for n in doc.notes), doc.notes
    assert sysfs_cache(disk) == "write back"
    assert not Path(journal_env["DISKQ_JOURNAL_DIR"]).exists() or not any(
        Path(journal_env["DISKQ_JOURNAL_DIR"]).iterdir()
    )


@pytest.mark.parametrize("mode", ["off", "on", "both"])
def test_explicit_cache_switch_is_refused_with_mounted_sibling(sibling_in_use, tmp_path, journal_env, mode):
    disk, p1, p2, _ = sibling_in_use
    marker = b"partition two\n" * 64
    with open(p2, "r+b") as f:
        f.write(marker)
    r = diskq(
        "bench",
        p2,
        "--yes",
        "--force",
        "--cache",
        mode,
        "--runtime",
        "1",
        "--jobs",
        "1",
        "-o",
        str(tmp_path / "r.json"),
        env=journal_env,
    )
    assert r.returncode == 4, r.stderr
    first = r.stderr.splitlines()[0]
    assert first.startswith(f"diskq: error: refusing to switch the write cache for {p2}") and disk in first
    assert "--cache keep" in r.stderr and p1 in r.stderr and "Traceback" not in r.stderr
    with open(p2, "rb") as f:
        assert f.read(len(marker)) == marker
    assert sysfs_cache(disk) == "write back"
    assert not (tmp_path / "r.json").exists()
    with pytest.raises(UnsafeTarget):
        inuse.partition_cache_mode(p2, mode)


def test_bench_partition_switches_the_cache_when_the_disk_is_otherwise_idle(partitioned, tmp_path, journal_env):
    disk, p1, p2 = partitioned
    r = diskq(
        "bench",
        p2,
        "--yes",
        "--json",
        "--cache",
        "both",
        "--runtime",
        "1",
        "--jobs",
        "1",
        "--no-flush-check",
        "-o",
        str(tmp_path / "r.json"),
        env=journal_env,
    )
    assert r.returncode == 0, r.stderr
    doc = ResultDocument.model_validate_json(r.stdout)
    assert sorted(run.write_cache for run in doc.runs) == ["off", "on"]
    assert doc.device.kind == "partition"
    assert sysfs_cache(disk) == "write back"
