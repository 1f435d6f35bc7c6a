"""One storage under several names is judged as one: loop devices over the same file, a loop
device over another block device, the file behind a loop device, the paths of a multipath LUN.

If any name is in use, every name is refused, with --force or without.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from diskq.bench import planning
from diskq.errors import UnsafeTarget
from diskq.probe import aliases, inuse, safety
from tests.conftest import needs_fio, needs_loop

MiB = 1024 * 1024


def sh(*argv: str) -> None:
    subprocess.run(list(argv), check=True, capture_output=True, text=True)


def attach(path: Path | str) -> str:
    return subprocess.run(
        ["losetup", "--find", "--show", str(path)], check=True, capture_output=True, text=True
    ).stdout.strip()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def loops():
    """Attach loop devices with ``loops(path)``; all are unmounted and detached at teardown."""
    made: list[str] = []
    mounts: list[str] = []

    def make(path) -> str:
        dev = attach(path)
        made.append(dev)
        return dev

    make.mounts = mounts
    try:
        yield make
    finally:
        for mnt in reversed(mounts):
            subprocess.run(["umount", mnt], capture_output=True)
        for dev in reversed(made):
            subprocess.run(["umount", "-l", dev], capture_output=True)
            subprocess.run(["losetup", "-d", dev], capture_output=True)


def mounted_ext4(loops, dev: str, where: Path) -> None:
    # no lazy initialisation: an idle mounted ext4 then writes nothing by itself
    sh("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev)
    where.mkdir()
    sh("mount", dev, str(where))
    loops.mounts.append(str(where))
    (where / "keep.txt").write_text("precious\n")
    sh("sync")


@needs_loop
@needs_fio
def test_second_loop_over_a_mounted_filesystems_file_is_refused_with_force(loops, tmp_path):
    backing = tmp_path / "shared.img"
    backing.write_bytes(b"")
    os.truncate(backing, 64 * MiB)
    first, second = loops(backing), loops(backing)
    mounted_ext4(loops, first, tmp_path / "mnt")
    before = digest(backing)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "diskq",
            "bench",
            second,
            "--yes",
            "--force",
            "--jobs",
            "1",
            "--runtime",
            "1",
            "--cache",
            "keep",
            "--no-flush-check",
            "-o",
            str(tmp_path / "r.json"),
        ],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert done.returncode == 4, done.stderr
    assert f"refusing to write to {second}" in done.stderr
    assert f"{first} is mounted at {tmp_path / 'mnt'}" in done.stderr
    assert "same file" in done.stderr
    assert "Traceback" not in done.stderr
    sh("sync")
    assert digest(backing) == before  # not one byte of the mounted filesystem changed
    assert (tmp_path / "mnt" / "keep.txt").read_text() == "precious\n"
    assert not (tmp_path / "r.json").exists()
    # the other way round too, and without --force
    with pytest.raises(UnsafeTarget):
        safety.check_block_device(second, force=False)


@needs_loop
@needs_fio
def test_aliases_are_claimed_for_the_whole_bench(loops, tmp_path):
    backing = tmp_path / "shared.img"
    backing.write_bytes(b"")
    os.truncate(backing, 64 * MiB)
    first, second = loops(backing), loops(backing)
    options = planning.BenchOptions(runtime_s=1, jobs=[1], cache="keep", yes=True, force=True, flush_check=False)
    with planning.plan(second, options):
        # while the bench of one name runs, the other cannot be mounted, formatted or claimed
        with pytest.raises(OSError):
            os.close(os.open(first, os.O_RDONLY | os.O_EXCL))
    os.close(os.open(first, os.O_RDONLY | os.O_EXCL))  # released at the end


@needs_loop
def test_loop_device_over_a_block_device_is_the_same_storage(loops, tmp_path):
    backing = tmp_path / "below.img"
    backing.write_bytes(b"")
    os.truncate(backing, 64 * MiB)
    below = loops(backing)
    above = loops(below)
    mounted_ext4(loops, above, tmp_path / "mnt")
    # writing the device under the mounted loop device would write the mounted filesystem
    with pytest.raises(UnsafeTarget) as info:
        safety.check_block_device(below, force=True)
    assert any(f"{above} is mounted" in r and f"loop device over {below}" in r for r in info.value.reasons)
    names = {a.name for a in aliases.aliases(Path(below).name)}
    assert Path(above).name in names


@needs_loop
def test_file_backing_a_loop_device_is_found_when_its_first_name_is_gone(loops, tmp_path):
    original = tmp_path / "original.img"
    original.write_bytes(b"")
    os.truncate(original, 16 * MiB)
    dev = loops(original)
    other = tmp_path / "other-name.img"
    os.link(original, other)
    original.unlink()  # sysfs now says "original.img (deleted)": only the inode still matches
    with pytest.raises(UnsafeTarget) as info:
        safety.check_file_target(str(other), yes=True)
    assert any(dev in r for r in info.value.reasons)


@needs_loop
def test_loop_info64_from_the_kernel_matches_stat(loops, tmp_path):
    backing = tmp_path / "f.img"
    backing.write_bytes(b"")
    os.truncate(backing, 16 * MiB)
    dev = loops(backing)
    st = os.stat(backing)
    status = aliases._loop_status(dev)
    assert status is not None
    device, inode, rdevice = status
    assert (os.major(device), os.minor(device), inode, rdevice) == (
        os.major(st.st_dev),
        os.minor(st.st_dev),
        st.st_ino,
        0,
    )


def test_parse_loop_info64_needs_the_whole_structure():
    with pytest.raises(ValueError):
        aliases.parse_loop_info64(b"\0" * 10)
    buf = (7).to_bytes(8, "little") + (1234).to_bytes(8, "little") + bytes(216)
    assert aliases.parse_loop_info64(buf) == (7, 1234, 0)


# -- multipath, from a sysfs tree laid out as the kernel shows it ----------------------------
#
# The topology is the one Red Hat's DM Multipath guide prints as `multipath -ll` output
# ("Multipath Command Output", RHEL 6):
#     3600d0230000000000e13955cc3757800 dm-1 WINSYS,SF2372
#     |-+- policy='round-robin 0' prio=1 status=active
#     | `- 6:0:0:0 sdb 8:16  active ready  running
#     `-+- policy='round-robin 0' prio=1 status=enabled
#       `- 7:0:0:0 sdf 8:80  active ready  running
# laid out in sysfs as the kernel does: the map's slaves/ names its paths, each path's holders/
# names the map, and multipathd gives the map the dm uuid "mpath-" + WWID.

WWID = "3600d0230000000000e13955cc3757800"


def _multipath_tree(root: Path) -> None:
    for path, devno in (("sdb", "8:16"), ("sdf", "8:80")):
        (root / "block" / path / "holders" / "dm-1").mkdir(parents=True)
        (root / "block" / path / "slaves").mkdir()
        (root / "block" / path / "device").mkdir()
        (root / "block" / path / "device" / "wwid").write_text(f"naa.{WWID[1:]}\n")
        (root / "block" / "dm-1" / "slaves" / path).mkdir(parents=True, exist_ok=True)
        (root / "dev" / "block").mkdir(parents=True, exist_ok=True)
        (root / "dev" / "block" / devno).symlink_to(root / "block" / path)
    (root / "block" / "dm-1" / "holders").mkdir()
    (root / "block" / "dm-1" / "dm").mkdir()
    (root / "block" / "dm-1" / "dm" / "name").write_text(f"{WWID}\n")
    (root / "block" / "dm-1" / "dm" / "uuid").write_text(f"mpath-{WWID}\n")
    (root / "class" / "block").mkdir(parents=True)
    for name in ("sdb", "sdf", "dm-1"):
        (root / "class" / "block" / name).symlink_to(root / "block" / name)


def test_multipath_map_and_its_paths_are_one_storage(tmp_path):
    _multipath_tree(tmp_path)
    root = str(tmp_path)
    found = {a.name: a.why for a in aliases.aliases("dm-1", sysfs_root=root)}
    assert set(found) == {"sdb", "sdf"}
    assert f"multipath device /dev/dm-1 ({WWID})" in found["sdb"]
    # a path mounted behind multipath's back refuses the map; the map's own hold on it does not
    mountinfo = "40 1 8:16 / /srv rw,relatime - xfs /dev/sdb rw\n"
    reasons = inuse.alias_reasons(
        "dm-1", sysfs_root=root, mountinfo=mountinfo, swaps="Filename\n", probe_exclusive=False
    )
    assert reasons == [
        f"/dev/sdb is mounted at /srv; /dev/sdb is a path of the multipath device /dev/dm-1 ({WWID}), "
        "one storage under two names"
    ]
    assert inuse.alias_reasons("dm-1", sysfs_root=root, mountinfo="", swaps="Filename\n", probe_exclusive=False) == []


def test_a_path_of_a_multipath_map_is_refused_as_held(tmp_path, monkeypatch):
    _multipath_tree(tmp_path)
    monkeypatch.setattr(safety.sysfs, "block_name", lambda path, sysfs_root: Path(path).name)
    reasons = inuse.in_use_reasons("/dev/sdf", sysfs_root=str(tmp_path), mountinfo="", swaps="Filename\n")
    assert reasons == [f"/dev/sdf is held by dm-1 ({WWID}) (device-mapper, LVM, md or bcache)"]


def test_scsi_paths_with_one_wwid_are_one_storage(tmp_path):
    # two paths of one LUN without a multipath map: the same device/wwid
    for path in ("sdb", "sdc"):
        (tmp_path / "block" / path / "device").mkdir(parents=True)
        (tmp_path / "block" / path / "device" / "wwid").write_text("naa.5000c500a1b2c3d4\n")
    (tmp_path / "block" / "sdd" / "device").mkdir(parents=True)
    (tmp_path / "block" / "sdd" / "device" / "wwid").write_text("naa.5000c500ffffffff\n")
    (tmp_path / "class" / "block").mkdir(parents=True)
    (tmp_path / "dev" / "block").mkdir(parents=True)
    for name, devno in (("sdb", "8:16"), ("sdc", "8:32"), ("sdd", "8:48")):
        (tmp_path / "class" / "block" / name).symlink_to(tmp_path / "block" / name)
        (tmp_path / "dev" / "block" / devno).symlink_to(tmp_path / "block" / name)
    root = str(tmp_path)
    assert [a.name for a in aliases.aliases("sdc", sysfs_root=root)] == ["sdb"]
    assert aliases.aliases("sdd", sysfs_root=root) == []
    mountinfo = "40 1 8:16 / /srv rw,relatime - xfs /dev/sdb rw\n"
    reasons = inuse.alias_reasons(
        "sdc", sysfs_root=root, mountinfo=mountinfo, swaps="Filename\n", probe_exclusive=False
    )
    assert reasons and "WWID naa.5000c500a1b2c3d4" in reasons[0] and "mounted at /srv" in reasons[0]
