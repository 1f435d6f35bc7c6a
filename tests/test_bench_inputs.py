"""What ``diskq bench`` accepts before it writes anything: options, target paths, refusals with hints."""

from __future__ import annotations

import ast
import os
import socket
from pathlib import Path

import pytest

from diskq.bench import fio, planning, target
from diskq.errors import InvalidInput, NotConfirmed, TargetError, UnsafeTarget
from diskq.probe import safety, sysfs
from tests.conftest import needs_loop

SRC = Path(__file__).parent.parent / "src" / "diskq"


# -- options -----------------------------------------------------------------------------


@pytest.mark.parametrize("runtime", [float("nan"), float("inf"), -float("inf"), 0.5, 1.5, 20.25, 1e300])
def test_runtime_must_be_whole_finite_seconds(runtime):
    with pytest.raises(InvalidInput, match="--runtime") as info:
        fio.check_runtime(runtime)
    assert info.value.hint
    with pytest.raises(InvalidInput, match="--runtime"):
        planning.plan("/nonexistent-diskq-dir/f.img", planning.BenchOptions(runtime_s=runtime))


@pytest.mark.parametrize("runtime", [1, 2.0, 20, 3600])
def test_whole_runtimes_are_accepted_and_passed_to_fio_as_written(runtime):
    fio.check_runtime(runtime)
    assert fio.base_options(runtime_s=runtime, region_bytes=1 << 20, steady=None)["runtime"] == str(int(runtime))


# -- target paths ------------------------------------------------------------------------


def test_missing_directory_has_a_hint(tmp_path):
    with pytest.raises(TargetError, match="does not exist") as info:
        target.resolve(str(tmp_path / "nope" / "f.img"), size_bytes=1 << 20)
    assert info.value.hint and "mkdir" in info.value.hint
    with pytest.raises(TargetError, match="does not exist") as info:
        safety.check_file_target(str(tmp_path / "nope" / "f.img"), yes=True)
    assert info.value.hint


def test_socket_is_neither_device_nor_file_and_says_what_to_give(tmp_path):
    path = tmp_path / "s.sock"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(path))
        with pytest.raises(TargetError, match="neither a block device nor a regular file") as info:
            target.resolve(str(path), size_bytes=1 << 20)
        assert info.value.hint and "lsblk" in info.value.hint
        with pytest.raises(TargetError, match="not a regular file") as info:
            safety.check_file_target(str(path), yes=True)
        assert info.value.hint
    finally:
        sock.close()


def test_new_file_under_dev_shm_is_a_file_target():
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat("/dev").st_dev:
        pytest.skip("/dev/shm is not a filesystem of its own here")
    t = target.resolve(str(shm / "diskq-never-created.img"), size_bytes=1 << 20)
    assert t.kind == "file" and t.capacity_bytes == 1 << 20 and not os.path.exists(t.path)


@pytest.mark.parametrize("path", ["/dev/sdzz-diskq-typo", "/dev/disk/by-id/diskq-typo", "/dev/no-such-dir/x"])
def test_missing_device_name_points_at_lsblk(path):
    with pytest.raises(TargetError, match="does not exist") as info:
        target.resolve(path, size_bytes=1 << 20)
    assert "lsblk" in info.value.hint


@needs_loop
def test_device_without_capacity_has_a_hint(make_loop, tmp_path):
    # the kernel's size of a real device node, read from a sysfs tree made here: 0 sectors
    dev = make_loop()
    st = os.stat(dev)
    root = tmp_path / "sys"
    (root / "block" / "empty0").mkdir(parents=True)
    (root / "block" / "empty0" / "size").write_text("0\n")
    (root / "dev" / "block").mkdir(parents=True)
    (root / "dev" / "block" / f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}").symlink_to(root / "block" / "empty0")
    (root / "class" / "block").mkdir(parents=True)
    (root / "class" / "block" / "empty0").symlink_to(root / "block" / "empty0")
    with pytest.raises(TargetError, match="has no capacity") as info:
        target.resolve(dev, size_bytes=1 << 20, sysfs_root=str(root))
    assert info.value.hint


@needs_loop
def test_file_backing_an_attached_loop_device_is_refused(make_loop, tmp_path):
    dev = make_loop(name="backing.img")
    backing = tmp_path / "backing.img"
    with pytest.raises(UnsafeTarget, match="loop device") as info:
        safety.check_file_target(str(backing), yes=True)
    assert any(dev in r for r in info.value.reasons) or dev in info.value.message
    assert "losetup -d" in info.value.hint
    # also through another name for the same file
    link = tmp_path / "other-name.img"
    link.symlink_to(backing)
    with pytest.raises(UnsafeTarget):
        safety.check_file_target(str(link), yes=True)
    hard = tmp_path / "hard-link.img"
    os.link(backing, hard)
    with pytest.raises(UnsafeTarget):
        safety.check_file_target(str(hard), yes=True)


def test_parse_loop_backing_file():
    assert sysfs.parse_loop_backing_file("/var/tmp/disk.img\n") == "/var/tmp/disk.img"
    assert sysfs.parse_loop_backing_file("/var/tmp/disk.img (deleted)\n") == "/var/tmp/disk.img"
    assert sysfs.parse_loop_backing_file("") is None
    assert sysfs.parse_loop_backing_file("\n") is None


# -- every refusal says what to do instead -----------------------------------------------

_REFUSALS = {"TargetError", "UnsafeTarget", "NotConfirmed", "InvalidInput"}


def _refusals_without_hint(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    missing = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Raise) or not isinstance(node.exc, ast.Call):
            continue
        func = node.exc.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if name in _REFUSALS and not any(k.arg == "hint" for k in node.exc.keywords):
            missing.append(f"{path.name}:{node.lineno}")
    return missing


@pytest.mark.parametrize(
    "module",
    [
        "bench/target.py",
        "probe/safety.py",
        "probe/inuse.py",
        "probe/exclusive.py",
        "probe/signatures.py",
        "cli/bench.py",
        "bench/output.py",
    ],
)
def test_every_refusal_has_a_hint(module):
    assert _refusals_without_hint(SRC / module) == []


def test_confirmation_mismatch_says_what_to_do(monkeypatch, tmp_path):
    from types import SimpleNamespace

    from diskq.cli import bench as cli_bench

    existing = tmp_path / "old.img"
    existing.write_bytes(b"x" * 4096)
    plan = SimpleNamespace(
        target=target.Target(path=str(existing), kind="file", capacity_bytes=4096, existed=True),
        options=planning.BenchOptions(),
    )
    monkeypatch.setattr(cli_bench.sys.stdin, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(cli_bench.typer, "prompt", lambda *a, **k: "something else")

    class Quiet:
        def print(self, *a, **k):
            pass

    with pytest.raises(NotConfirmed) as info:
        cli_bench._confirm(plan, Quiet())
    assert info.value.hint and "--yes" in info.value.hint
    assert existing.read_bytes() == b"x" * 4096


@needs_loop
def test_size_with_a_block_device_is_refused_not_ignored(loop_device, monkeypatch, capsys):
    """``--size`` sizes a file target; with a block device it once did nothing, silently."""
    from diskq.cli import main

    before = Path(f"/sys/block/{Path(loop_device).name}/size").read_text()
    with pytest.raises(InvalidInput, match="--size only applies to a file target") as info:
        planning.plan(loop_device, planning.BenchOptions(size_bytes=4 << 30, size_given=True, yes=True))
    assert "drop --size" in info.value.hint
    monkeypatch.setattr("sys.argv", ["diskq"])
    with pytest.raises(SystemExit) as code:
        main(["bench", loop_device, "--size", "4G", "--yes"])
    err = capsys.readouterr().err
    assert code.value.code == 2 and err.startswith("diskq: error: --size only applies to a file target")
    assert "Traceback" not in err and Path(f"/sys/block/{Path(loop_device).name}/size").read_text() == before
    with planning.plan(loop_device, planning.BenchOptions(yes=True)) as plan:  # without --size: accepted
        assert plan.target.kind == "disk"
