"""Safety checks on real loop devices: real ext4, swap, mounts, O_EXCL holders, partition tables, BlueStore labels."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diskq.errors import DiskqError, NotConfirmed, TargetError, UnsafeTarget
from diskq.probe import inuse, safety, signatures
from diskq.probe.inuse import parse_mountinfo, parse_proc_swaps
from diskq.probe.safety import check_block_device, check_file_target
from diskq.probe.signatures import parse_wipefs_json
from tests.conftest import _have, needs_loop


def sh(*argv: str, stdin: str | None = None) -> None:
    subprocess.run(list(argv), check=True, capture_output=True, text=True, input=stdin)


def refusal(dev: str, *, force: bool) -> UnsafeTarget:
    with pytest.raises(UnsafeTarget) as info:
        check_block_device(dev, force=force)
    assert info.value.hint
    return info.value


# -- pure parsers ------------------------------------------------------------------------


def test_parse_mountinfo_unescapes_paths():
    text = (
        "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
        "42 27 7:0 / /mnt/my\\040disk rw,relatime - ext4 /dev/loop0 rw\n"
        "garbage line\n"
    )
    mounts = parse_mountinfo(text)
    assert mounts[1] == inuse.Mount("7:0", "/mnt/my disk", "/dev/loop0")
    assert len(mounts) == 2


def test_parse_proc_swaps():
    text = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/loop0                              partition\t65532\t\t0\t\t-2\n"
    assert parse_proc_swaps(text) == ["/dev/loop0"]
    assert parse_proc_swaps("Filename Type Size Used Priority\n") == []


def test_parse_wipefs_json_describes_each_signature():
    text = (
        '{"signatures": [{"device": "loop0", "offset": "0x200", "type": "gpt", "uuid": null, "label": null},'
        '{"device": "loop0", "offset": "0x438", "type": "ext4", "uuid": "u", "label": "data"}]}'
    )
    sigs = parse_wipefs_json(text)
    assert [s.describe() for s in sigs] == [
        "GPT partition table at offset 0x200",
        "ext4 filesystem at offset 0x438, label 'data'",
    ]
    assert parse_wipefs_json("") == []


# -- real devices ------------------------------------------------------------------------


@needs_loop
def test_empty_device_is_allowed(make_loop):
    dev = make_loop()
    assert check_block_device(dev, force=False) == []


@needs_loop
def test_ext4_needs_force_and_is_named(make_loop):
    dev = make_loop()
    sh("mkfs.ext4", "-q", "-F", "-L", "keepme", dev)
    err = refusal(dev, force=False)
    assert "holds data" in err.message
    assert err.reasons == ["ext4 filesystem at offset 0x438, label 'keepme'"]
    assert check_block_device(dev, force=True) == [
        "--force: will overwrite ext4 filesystem at offset 0x438, label 'keepme'"
    ]


@needs_loop
def test_mounted_device_is_refused_even_with_force(make_loop, tmp_path):
    dev = make_loop()
    sh("mkfs.ext4", "-q", "-F", dev)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    sh("mount", dev, str(mnt))
    try:
        err = refusal(dev, force=True)
        assert "in use" in err.message
        assert f"{dev} is mounted at {mnt}" in err.reasons
        assert "unmount" in err.hint
    finally:
        sh("umount", str(mnt))
    assert check_block_device(dev, force=True)  # unmounted: only the signature remains, and force allows it


@needs_loop
def test_active_swap_is_refused_even_with_force(make_loop):
    dev = make_loop()
    sh("mkswap", "-q", dev)
    sh("swapon", dev)
    try:
        err = refusal(dev, force=True)
        assert f"{dev} is active swap" in err.reasons
    finally:
        sh("swapoff", dev)
    err = refusal(dev, force=False)  # inactive swap is a signature: --force territory
    assert err.reasons[0].startswith("swap signature")


@needs_loop
def test_exclusive_holder_is_refused_even_with_force(make_loop):
    dev = make_loop()
    fd = os.open(dev, os.O_RDONLY | os.O_EXCL)
    try:
        err = refusal(dev, force=True)
        assert err.reasons == [
            f"{dev} cannot be opened exclusively (O_EXCL): the kernel or another program is using it"
        ]
    finally:
        os.close(fd)
    assert check_block_device(dev, force=False) == []


@needs_loop
@pytest.mark.skipif(not _have("sfdisk"), reason="sfdisk is not installed (apt-get install fdisk)")
@pytest.mark.parametrize("label, expected", [("gpt", "GPT partition table"), ("dos", "MBR partition table")])
def test_partition_table_needs_force(make_loop, label, expected):
    dev = make_loop()
    # the kernel here cannot create the partitions, but the table is on disk and libblkid sees it
    subprocess.run(["sfdisk", "-q", dev], input=f"label: {label}\n,16M\n", capture_output=True, text=True)
    err = refusal(dev, force=False)
    assert any(r.startswith(expected) for r in err.reasons), err.reasons
    if label == "gpt":
        assert any(r.startswith("protective MBR") for r in err.reasons)
    assert check_block_device(dev, force=True)


@needs_loop
def test_bluestore_label_needs_force(make_loop):
    dev = make_loop()
    # A BlueStore block device starts with its label: the ASCII magic "bluestore block device\n",
    # then the OSD uuid as 36 characters and "\n", then the encoded label (size, birth time,
    # description, meta) in the rest of the first 4 KiB block. The magic is what libblkid matches.
    header = b"bluestore block device\n" + str(uuid.uuid4()).encode() + b"\n"
    with open(dev, "r+b") as f:
        f.write(header)
    err = refusal(dev, force=False)
    assert err.reasons == ["Ceph BlueStore OSD label at offset 0x0"]
    assert "--force" in err.hint


def root_device() -> str | None:
    out = subprocess.run(["findmnt", "-n", "-o", "SOURCE", "/"], capture_output=True, text=True).stdout.strip()
    return out if out.startswith("/dev/") and Path(out).is_block_device() else None


@pytest.mark.skipif(root_device() is None, reason="/ is not on a block device here")
def test_device_holding_root_is_refused():
    dev = root_device()
    with pytest.raises(UnsafeTarget) as info:
        check_block_device(dev, force=True)
    assert f"{dev} holds /" in info.value.reasons


def test_not_a_block_device(tmp_path):
    with pytest.raises(TargetError, match="does not exist"):
        check_block_device(str(tmp_path / "nope"), force=True)
    with pytest.raises(TargetError, match="not a block device"):
        check_block_device(str(tmp_path), force=True)


# -- file mode ---------------------------------------------------------------------------


def test_file_target_rules(tmp_path):
    check_file_target(str(tmp_path / "new.bin"), yes=False)  # diskq creates it
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    check_file_target(str(empty), yes=False)
    full = tmp_path / "data.bin"
    full.write_bytes(b"x" * 10)
    with pytest.raises(NotConfirmed) as info:
        check_file_target(str(full), yes=False)
    assert "--yes" in info.value.hint
    check_file_target(str(full), yes=True)
    assert full.read_bytes() == b"x" * 10  # a check never touches the file
    with pytest.raises(TargetError, match="is a directory"):
        check_file_target(str(tmp_path), yes=True)
    with pytest.raises(TargetError, match="device node"):
        check_file_target("/dev/null", yes=True)
    with pytest.raises(TargetError, match="does not exist"):
        check_file_target(str(tmp_path / "missing" / "f.bin"), yes=True)


@needs_loop
def test_file_target_refuses_a_device_node_even_through_a_symlink(make_loop, tmp_path):
    dev = make_loop()
    link = tmp_path / "innocent.bin"
    link.symlink_to(dev)
    with pytest.raises(TargetError, match="device node"):
        check_file_target(str(link), yes=True)


def test_mounted_partition_and_root_through_the_recorded_sysfs_tree(monkeypatch):
    # sdb has one partition, sdb1, in the recorded tree; the kernel here cannot make partitions
    root = str(Path(__file__).parent / "fixtures" / "sysfs")
    monkeypatch.setattr(safety.sysfs, "block_name", lambda path, sysfs_root: Path(path).name)
    mountinfo = "30 1 8:17 / /boot rw,relatime - ext4 /dev/sdb1 rw\n"
    reasons = inuse.in_use_reasons("/dev/sdb", sysfs_root=root, mountinfo=mountinfo, swaps="Filename\n")
    assert reasons == ["its partition /dev/sdb1 is mounted at /boot", "its partition /dev/sdb1 holds /boot"]
    swaps = "Filename Type Size Used Priority\n/dev/sdb1 partition 1024 0 -2\n"
    assert inuse.in_use_reasons("/dev/sdb1", sysfs_root=root, mountinfo="", swaps=swaps) == ["/dev/sdb1 is active swap"]
    assert inuse.in_use_reasons("/dev/sda", sysfs_root=root, mountinfo=mountinfo, swaps=swaps) == []


def test_holders_and_root_on_lvm(monkeypatch, tmp_path):
    # the layout the kernel shows for an LVM volume: sdc's holders/ names dm-0, dm-0's slaves/ names sdc
    (tmp_path / "block" / "sdc" / "holders" / "dm-0").mkdir(parents=True)
    (tmp_path / "block" / "dm-0" / "slaves" / "sdc").mkdir(parents=True)
    (tmp_path / "block" / "dm-0" / "dm").mkdir()
    (tmp_path / "block" / "dm-0" / "dm" / "name").write_text("vg0-root\n")
    (tmp_path / "class" / "block").mkdir(parents=True)
    (tmp_path / "class" / "block" / "dm-0").symlink_to(tmp_path / "block" / "dm-0")
    monkeypatch.setattr(safety.sysfs, "block_name", lambda path, sysfs_root: Path(path).name)
    mountinfo = "25 1 254:0 / / rw,relatime - ext4 /dev/dm-0 rw\n"
    reasons = inuse.in_use_reasons("/dev/sdc", sysfs_root=str(tmp_path), mountinfo=mountinfo, swaps="Filename\n")
    assert reasons == ["/dev/sdc holds /", "/dev/sdc is held by dm-0 (vg0-root) (device-mapper, LVM, md or bcache)"]


# -- the parsers are total: a result or a DiskqError, never another exception ------------

_WIPEFS_KEYS = st.sampled_from(["signatures", "device", "offset", "type", "uuid", "label", "usage"])
_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_WIPEFS_KEYS | st.text(max_size=4), inner, max_size=5),
    max_leaves=20,
)


def test_parse_wipefs_json_null_signatures():
    assert parse_wipefs_json('{"signatures": null}') == []
    assert parse_wipefs_json('{"signatures": {"type": "ext4"}}') == []
    assert parse_wipefs_json('{"signatures": [{"type": ["ext4"], "offset": 0}]}') == []
    with pytest.raises(TargetError):
        parse_wipefs_json("wipefs: error: /dev/sdz: probing initialization failed")
    with pytest.raises(TargetError):
        parse_wipefs_json("[" * 100_000)


@given(_JSONISH)
def test_parse_wipefs_json_never_crashes_on_json(value):
    import json

    try:
        found = parse_wipefs_json(json.dumps(value))
    except DiskqError:
        return
    assert all(isinstance(s, signatures.Signature) and isinstance(s.type, str) for s in found)
    for s in found:
        assert isinstance(s.describe(), str)


@given(st.text())
def test_safety_parsers_never_crash_on_text(text):
    for parser in (parse_wipefs_json, parse_mountinfo, parse_proc_swaps):
        try:
            parser(text)
        except DiskqError:
            pass


def test_parse_mountinfo_bad_escapes():
    text = "42 27 7:0 / /mnt/a\\999b\\12 rw - ext4 /dev/loop0 rw\n43 27 7:1 / /x\\²³⁴ rw - ext4 /dev/loop1 rw\n"
    mounts = parse_mountinfo(text)
    assert [m.mountpoint for m in mounts] == ["/mnt/a\\999b\\12", "/x\\²³⁴"]


def test_rest_of_disk_through_a_tree_made_here(monkeypatch, tmp_path):
    # sdx with partitions sdx1 and sdx2, laid out as the kernel shows them
    for part in ("sdx1", "sdx2"):
        (tmp_path / "block" / "sdx" / part).mkdir(parents=True)
        (tmp_path / "block" / "sdx" / part / "partition").write_text(part[-1])
    (tmp_path / "class" / "block").mkdir(parents=True)
    for name, where in (("sdx", "sdx"), ("sdx1", "sdx/sdx1"), ("sdx2", "sdx/sdx2")):
        (tmp_path / "class" / "block" / name).symlink_to(tmp_path / "block" / where)
    (tmp_path / "dev" / "block").mkdir(parents=True)
    (tmp_path / "dev" / "block" / "8:161").symlink_to(tmp_path / "block" / "sdx" / "sdx1")
    root = str(tmp_path)
    monkeypatch.setattr(safety.sysfs, "block_name", lambda path, sysfs_root: Path(path).name)
    mounted = "40 1 8:161 / /srv rw,relatime - xfs /dev/sdx1 rw\n"
    no_swap = "Filename\n"
    reasons = inuse.rest_of_disk_in_use(
        "/dev/sdx2", sysfs_root=root, mountinfo=mounted, swaps=no_swap, probe_exclusive=False
    )
    assert reasons == ["partition /dev/sdx1 of the same disk is mounted at /srv"]
    swap = "Filename Type Size Used Priority\n/dev/sdx1 partition 1024 0 -2\n"
    assert inuse.rest_of_disk_in_use("/dev/sdx2", sysfs_root=root, mountinfo="", swaps=swap, probe_exclusive=False) == [
        "partition /dev/sdx1 of the same disk is active swap"
    ]
    on_root = "25 1 8:161 / / rw - ext4 /dev/sdx1 rw\n"
    assert "partition /dev/sdx1 of the same disk holds /" in inuse.rest_of_disk_in_use(
        "/dev/sdx2", sysfs_root=root, mountinfo=on_root, swaps=no_swap, probe_exclusive=False
    )
    assert (
        inuse.rest_of_disk_in_use("/dev/sdx2", sysfs_root=root, mountinfo="", swaps=no_swap, probe_exclusive=False)
        == []
    )
    assert (
        inuse.rest_of_disk_in_use("/dev/sdx", sysfs_root=root, mountinfo=mounted, swaps=no_swap, probe_exclusive=False)
        == []
    )
