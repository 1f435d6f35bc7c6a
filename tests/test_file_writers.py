"""A file that another process holds open for writing (a database file, a VM image) is in use:
refused in file mode and as a loop device's backing file. Real processes hold real temp files
open; real loop devices over them."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from diskq.errors import UnsafeTarget
from diskq.probe import safety
from tests.conftest import needs_fio, needs_loop
from tests.test_kill_bench import _holder
from tests.test_restore import diskq


def data_file(tmp_path: Path, size: int = 16 * 1024 * 1024) -> Path:
    path = tmp_path / "database.img"
    with open(path, "wb") as f:
        f.write(os.urandom(4096))
        f.truncate(size)
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_file_mode_refuses_a_file_another_process_writes(tmp_path):
    path = data_file(tmp_path)
    alias = tmp_path / "another-name.img"
    os.link(path, alias)
    writer = _holder(str(path), os.O_WRONLY)
    try:
        for name in (path, alias):  # by its own name or another: one file
            with pytest.raises(UnsafeTarget) as info:
                safety.check_file_target(str(name), yes=True)
            assert "another process has it open for writing" in info.value.message
            comm = Path(f"/proc/{writer.pid}/comm").read_text().strip()
            assert info.value.reasons == [f"{name} is open for writing by {comm} (pid {writer.pid})"]
    finally:
        writer.kill()
        writer.wait()
    safety.check_file_target(str(path), yes=True)  # nobody writes it any more


def test_a_reader_does_not_make_a_file_in_use(tmp_path):
    path = data_file(tmp_path)
    reader = _holder(str(path), os.O_RDONLY)
    try:
        safety.check_file_target(str(path), yes=True)
    finally:
        reader.kill()
        reader.wait()


@needs_loop
def test_a_loop_device_over_a_file_another_process_writes_is_in_use(make_loop, tmp_path):
    dev = make_loop(16 * 1024 * 1024, name="vm-image.img")
    backing = tmp_path / "vm-image.img"
    reader = _holder(str(backing), os.O_RDONLY)
    try:
        safety.check_block_device(dev, force=True)  # a reader only: not in use
        writer = _holder(str(backing), os.O_RDWR)
        try:
            with pytest.raises(UnsafeTarget) as info:
                safety.check_block_device(dev, force=True)
            assert info.value.message == f"refusing to write to {dev}: it is in use"
            [reason] = info.value.reasons
            assert reason.startswith(f"{dev} writes the file {backing}, which ")
            assert reason.endswith(f"(pid {writer.pid}) has open for writing")
        finally:
            writer.kill()
            writer.wait()
    finally:
        reader.kill()
        reader.wait()


@needs_loop
@needs_fio
def test_bench_with_yes_does_not_overwrite_a_file_in_use(make_loop, tmp_path):
    dev = make_loop(64 * 1024 * 1024, name="db.img")
    backing = tmp_path / "db.img"
    with open(backing, "r+b") as f:
        f.write(os.urandom(4096))
    subprocess.run(["blockdev", "--flushbufs", dev], capture_output=True)
    other = data_file(tmp_path)
    before = {backing: digest(backing), other: digest(other)}
    writers = [_holder(str(backing), os.O_WRONLY), _holder(str(other), os.O_WRONLY)]
    try:
        for target in (dev, str(other)):
            done = diskq(
                "bench",
                target,
                "--yes",
                "--jobs",
                "1",
                "--runtime",
                "1",
                "--cache",
                "keep",
                "--no-flush-check",
                "-o",
                str(tmp_path / "r.json"),
                jdir=tmp_path / "j",
            )
            assert done.returncode == 4, done.stderr
            assert "open for writing" in done.stderr and "Traceback" not in done.stderr
    finally:
        for w in writers:
            w.kill()
            w.wait()
    assert {p: digest(p) for p in before} == before
    assert not (tmp_path / "r.json").exists()
