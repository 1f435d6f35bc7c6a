"""Targets that live in RAM (tmpfs, ramfs, zram, brd, a loop device over a file in RAM) are
benched, but the document says so and no verdict applies to them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from diskq.analyse import annotate
from diskq.analyse.memorybacked import MEMORY_BACKED, memory_backed_note
from diskq.analyse.verdicts import evaluate
from diskq.bench import target as target_mod
from diskq.bench.target import Target, memory_backing
from diskq.cli._render import result_table
from diskq.result import Device, Latency, Method, Point, ResultDocument, Run
from tests.conftest import HAVE_LOOP, needs_fio, needs_loop

SHM = Path("/dev/shm")


def shm_is_tmpfs() -> bool:
    return SHM.is_dir() and target_mod.filesystem_of(str(SHM))[0] == "tmpfs" and os.access(SHM, os.W_OK)


needs_shm = pytest.mark.skipif(not shm_is_tmpfs(), reason="/dev/shm is not a writable tmpfs here")


def excellent_doc(*notes: str) -> ResultDocument:
    points = [
        Point(
            numjobs=n,
            iops=400_000.0 * n**0.5,
            bw_bytes=4096 * 400_000.0,
            total_ios=10,
            runtime_ms=1000,
            lat_us=Latency(p99=2.0),
            sync_lat_us=Latency(p99=1.0),
        )
        for n in (1, 2, 4)
    ]
    return ResultDocument(
        device=Device(path="/dev/zram0", kind="disk", volatile_write_cache=False),
        method=Method(),
        runs=[Run(write_cache="on", points=points)],
        notes=list(notes),
    )


# -- verdicts ----------------------------------------------------------------------------


def test_memory_backed_document_gets_no_verdict():
    note = memory_backed_note("/dev/zram0 is a compressed RAM disk (zram)")
    assert note.startswith(MEMORY_BACKED)
    v = evaluate(excellent_doc(note))
    assert v.ceph_waldb.tier is None and v.ceph_waldb.iops is None and v.ceph_waldb.safe is None
    assert v.osds_per_device.n is None and v.etcd.passes is None and v.postgres_wal.commits_per_s is None
    for verdict in (v.ceph_waldb, v.osds_per_device, v.etcd, v.postgres_wal):
        assert verdict.reasons == [f"not applicable: {note}"]
    # the same figures without the note are excellent: the note alone makes the difference
    assert evaluate(excellent_doc()).ceph_waldb.tier == "excellent"


def test_annotate_and_render_say_not_applicable():
    note = memory_backed_note("/dev/ram0 is a RAM disk (brd)")
    doc = annotate(excellent_doc(note))
    assert doc.runs[0].scaling is not None  # the curve is still described
    console = Console(width=400, record=True, force_terminal=False, color_system=None)  # no line wrapped
    result_table(doc, console)
    text = console.export_text()
    # one line for every verdict, and the note (the reason) once, not once per verdict
    assert "verdicts: not applicable: the target is memory-backed" in text and "excellent" not in text
    assert "Ceph WAL/DB" not in text and "etcd" not in text and "passes" not in text
    assert text.count(note) == 1
    assert "None" not in text
    console = Console(width=100, record=True, force_terminal=False, color_system=None)
    result_table(doc, console, said=[note])  # the bench said it before the run: not again
    assert note not in console.export_text()


def test_a_verdict_not_applicable_for_another_reason_keeps_its_own_line():
    from diskq.cli._render import verdict_lines

    v = annotate(excellent_doc(memory_backed_note("/dev/ram0 is a RAM disk (brd)"))).verdicts.model_dump(mode="json")
    assert len(verdict_lines(v)) == 1
    v["etcd"]["reasons"] = ["not applicable: no 1-job step"]
    lines = verdict_lines(v)
    assert len(lines) > 1 and any(line.startswith("etcd: not applicable: no 1-job step") for line in lines)


def test_scratch_images_go_to_a_disk_backed_directory(tmp_path, monkeypatch):
    if not shm_is_tmpfs() or target_mod.filesystem_of(str(tmp_path))[0] in target_mod.MEMORY_FILESYSTEMS:
        pytest.skip("needs /dev/shm on tmpfs and a disk-backed temporary directory")
    assert target_mod.SCRATCH_DIRS[0] == "/var/tmp"
    monkeypatch.setattr("tempfile.tempdir", str(SHM))  # $TMPDIR in RAM, as /tmp is on Debian 13 or Fedora
    assert target_mod.scratch_dir([str(SHM), str(tmp_path)]) == (str(tmp_path), None)
    where, why = target_mod.scratch_dir([str(SHM)])  # nothing on disk: said, not hidden
    assert where == str(SHM) and "is on tmpfs, which keeps its files in RAM" in why
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "also-missing"))
    with pytest.raises(target_mod.TargetError, match="no writable directory"):
        target_mod.scratch_dir([str(tmp_path / "missing")])


def test_document_round_trip_keeps_the_mark():
    doc = annotate(excellent_doc(memory_backed_note("x is on tmpfs, which keeps its files in RAM")))
    again = annotate(ResultDocument.model_validate_json(doc.to_json()))
    assert again.verdicts.ceph_waldb.tier is None


# -- detection ---------------------------------------------------------------------------


def fake_sysfs(root: Path, disk: str, backing: str | None = None) -> str:
    (root / "block" / disk / "loop").mkdir(parents=True)
    if backing is not None:
        (root / "block" / disk / "loop" / "backing_file").write_text(backing + "\n")
    (root / "class" / "block").mkdir(parents=True, exist_ok=True)
    (root / "class" / "block" / disk).symlink_to(root / "block" / disk)
    return str(root)


@pytest.mark.parametrize("disk, what", [("zram0", "zram"), ("zram12", "zram"), ("ram0", "brd"), ("ram15", "brd")])
def test_ram_disks_are_memory_backed(tmp_path, disk, what):
    root = fake_sysfs(tmp_path, disk)
    why = memory_backing(Target(path=f"/dev/{disk}", kind="disk", capacity_bytes=1, dev_name=disk), sysfs_root=root)
    assert why and what in why


@pytest.mark.parametrize("disk", ["sda", "nvme0n1", "ramdisk", "vda", "loop7"])
def test_other_disks_are_not(tmp_path, disk):
    root = fake_sysfs(tmp_path, disk)
    assert (
        memory_backing(Target(path=f"/dev/{disk}", kind="disk", capacity_bytes=1, dev_name=disk), sysfs_root=root)
        is None
    )


@needs_shm
def test_loop_over_a_file_in_ram_is_memory_backed(tmp_path):
    root = fake_sysfs(tmp_path / "sys", "loop5", "/dev/shm (deleted)")
    why = memory_backing(Target(path="/dev/loop5", kind="disk", capacity_bytes=1, dev_name="loop5"), sysfs_root=root)
    assert why and why.startswith("/dev/loop5 is a loop device over /dev/shm") and "tmpfs" in why


def test_loop_over_a_file_on_disk_is_not(tmp_path):
    backing = tmp_path / "disk.img"
    backing.write_bytes(b"")
    if target_mod.filesystem_of(str(tmp_path))[0] in target_mod.MEMORY_FILESYSTEMS:
        pytest.skip("the temp directory itself is in RAM here")
    root = fake_sysfs(tmp_path / "sys", "loop5", str(backing))
    assert (
        memory_backing(Target(path="/dev/loop5", kind="disk", capacity_bytes=1, dev_name="loop5"), sysfs_root=root)
        is None
    )


@needs_shm
def test_file_on_tmpfs_is_memory_backed():
    why = memory_backing(Target(path="/dev/shm/not-created.img", kind="file", capacity_bytes=1))
    assert why == "/dev/shm/not-created.img is on tmpfs, which keeps its files in RAM"


# -- end to end: real fio, real loop device over a file in /dev/shm ---------------------


@pytest.fixture
def shm_loop():
    """A loop device over a 64 MiB file in /dev/shm; detached and removed at teardown."""
    if not (HAVE_LOOP and shm_is_tmpfs()):
        pytest.skip("needs root, loop devices and a writable tmpfs at /dev/shm")
    backing = SHM / f"diskq-test-{os.getpid()}-{os.urandom(4).hex()}.img"
    with open(backing, "wb") as f:
        f.truncate(64 * 1024 * 1024)
    dev = None
    try:
        dev = subprocess.run(
            ["losetup", "--find", "--show", str(backing)], check=True, capture_output=True, text=True
        ).stdout.strip()
        yield dev
    finally:
        if dev:
            Path(f"/sys/block/{Path(dev).name}/queue/write_cache").write_text("write back")
            subprocess.run(["losetup", "-d", dev], capture_output=True)
        backing.unlink(missing_ok=True)


def bench(*args, tmp_path):
    env = dict(os.environ, DISKQ_JOURNAL_DIR=str(tmp_path / "journal"))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "diskq",
            "bench",
            *args,
            "--runtime",
            "1",
            "--jobs",
            "1,2",
            "--no-flush-check",
            "--json",
            "-o",
            str(tmp_path / "r.json"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        env=env,
    )


@needs_loop
@needs_fio
def test_bench_loop_over_tmpfs_runs_and_gets_no_verdict(shm_loop, tmp_path):
    r = bench(shm_loop, "--yes", "--cache", "keep", tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = ResultDocument.model_validate_json(r.stdout)
    assert all(p.iops > 0 for p in doc.runs[0].points)  # it ran
    note = next(n for n in doc.notes if n.startswith(MEMORY_BACKED))
    assert shm_loop in note and "tmpfs" in note
    assert doc.verdicts.ceph_waldb.tier is None and doc.verdicts.etcd.passes is None
    assert doc.verdicts.ceph_waldb.reasons[0].startswith("not applicable: memory-backed target")
    assert "memory-backed target" in r.stderr  # said before the bench, as a note


@needs_fio
@needs_shm
def test_bench_file_on_tmpfs_runs_and_gets_no_verdict(tmp_path):
    target = SHM / f"diskq-test-{os.getpid()}-{os.urandom(4).hex()}.img"
    try:
        r = bench(str(target), "--size", "8M", tmp_path=tmp_path)
        assert r.returncode == 0, r.stderr
        doc = ResultDocument.model_validate_json(r.stdout)
        assert any(n.startswith(f"{MEMORY_BACKED} {target} is on tmpfs") for n in doc.notes)
        assert doc.verdicts.ceph_waldb.tier is None
        assert not target.exists()
    finally:
        target.unlink(missing_ok=True)


@needs_loop
@needs_fio
def test_scratch_bench_with_tmpdir_in_ram_measures_a_disk(tmp_path):
    """$TMPDIR on tmpfs (/tmp on Debian 13, Fedora, Arch) no longer makes every verdict "not
    applicable": the scratch image goes to /var/tmp."""
    if not shm_is_tmpfs() or target_mod.scratch_dir()[1] is not None:
        pytest.skip("needs /dev/shm on tmpfs and a disk-backed /var/tmp")
    env = dict(os.environ, DISKQ_JOURNAL_DIR=str(tmp_path / "journal"), TMPDIR=str(SHM))
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "diskq",
            "bench",
            "--scratch",
            "--yes",
            "--runtime",
            "1",
            "--jobs",
            "1,2",
            "--no-flush-check",
            "--json",
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
    assert not any(n.startswith(MEMORY_BACKED) for n in doc.notes), doc.notes
    assert doc.verdicts.ceph_waldb.reasons and not doc.verdicts.ceph_waldb.reasons[0].startswith("not applicable")
    assert not list(Path("/var/tmp").glob("diskq-scratch-*/scratch.img"))  # removed afterwards


@needs_fio
@needs_shm
def test_bench_on_ram_says_so_once(tmp_path):
    target = SHM / f"diskq-test-{os.getpid()}-{os.urandom(4).hex()}.img"
    env = dict(os.environ, DISKQ_JOURNAL_DIR=str(tmp_path / "journal"), COLUMNS="300")
    try:
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "diskq",
                "bench",
                str(target),
                "--size",
                "8M",
                "--runtime",
                "1",
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
        assert (r.stdout + r.stderr).count(MEMORY_BACKED) == 1, r.stdout + r.stderr
        assert "verdicts: not applicable" in r.stdout
    finally:
        target.unlink(missing_ok=True)
