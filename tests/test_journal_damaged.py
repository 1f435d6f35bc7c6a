"""A restore-journal entry that cannot be read is kept, reported with its raw content, and stops
diskq from switching that device's cache until the user discards it; a failed journal write
leaves no temp file behind. Real journal files in a temp directory; real loop devices."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from diskq.errors import CacheError, InvalidInput
from diskq.probe.cache import CacheControl
from diskq.probe.cacheguard import CacheGuard
from diskq.probe.journal import Journal, pending_warning
from tests.conftest import needs_fio, needs_loop, wc_file
from tests.test_restore import diskq, fake_entry


def good_entry(device: str = "/dev/loop99") -> str:
    return (
        json.dumps(
            {
                "device": device,
                "mechanism": "sysfs",
                "original": "on",
                "sysfs_root": "/sys",
                "diskseq": None,
                "pid": 2**22 - 1,
                "pid_start": None,
                "boot_id": None,
                "created": "2024-01-01T00:00:00Z",
            },
            indent=2,
        )
        + "\n"
    )


DAMAGED = {
    "truncated": good_entry()[:70],
    "empty": "",
    "extended with junk": good_entry() + "}junk",
    "pid a string": good_entry().replace(f"{2**22 - 1}", '"abc"'),
    "pid a boolean": good_entry().replace(f"{2**22 - 1}", "true"),
    "pid beyond any pid": good_entry().replace(f"{2**22 - 1}", str(2**70)),
    "original a number": good_entry().replace('"original": "on"', '"original": 5'),
    "unknown field": good_entry().replace('"mechanism"', '"extra": 1, "mechanism"'),
    "not an object": "[1, 2]",
    "terminal escapes": "\x1b[2J\x1b[H\n",
}


def write_damaged(jdir: Path, text: str, name: str = "cache-loop99-sysfs.json") -> Path:
    jdir.mkdir(parents=True, exist_ok=True)
    path = jdir / name
    path.write_bytes(text.encode())
    return path


@pytest.mark.parametrize("kind", sorted(DAMAGED))
def test_a_damaged_entry_is_kept_and_reported_with_its_raw_content(tmp_path, monkeypatch, kind):
    jdir = tmp_path / "j"
    path = write_damaged(jdir, DAMAGED[kind])
    journal = Journal(jdir)
    assert journal.pending() == []
    [damaged] = journal.damaged()
    assert damaged.file == str(path) and damaged.raw == DAMAGED[kind] and damaged.device == "/dev/loop99"
    assert damaged.reason
    [message] = journal.restore_all(wait_s=0)
    assert "damaged journal entry" in message and "NOT restored" in message
    assert "diskq restore --discard cache-loop99-sysfs.json" in message
    assert json.dumps(DAMAGED[kind])[:150] in message  # the raw content, escaped
    assert "\x1b" not in message and "\n" not in message
    assert path.read_bytes() == DAMAGED[kind].encode()  # untouched by the restore
    monkeypatch.setenv("DISKQ_JOURNAL_DIR", str(jdir))
    warning = pending_warning()
    assert warning is not None and "damaged journal entry" in warning and str(path) in warning


def test_restore_and_its_list_report_a_damaged_entry_in_one_line_until_discarded(tmp_path):
    jdir = tmp_path / "j"
    path = write_damaged(jdir, DAMAGED["pid a string"])
    fake_entry(jdir, device="/dev/loop98")  # a readable entry beside it is still listed
    listed = diskq("restore", "--list", jdir=jdir)
    assert listed.returncode == 0 and "Traceback" not in listed.stderr + listed.stdout
    assert "/dev/loop98: write cache was on" in listed.stdout
    assert f'{path}: damaged journal entry (pid is not a process id: "abc")' in listed.stdout
    assert '\\"pid\\": \\"abc\\"' in listed.stdout  # its raw content
    assert "damaged journal entry" not in listed.stderr  # listed once, not warned about as well
    as_json = json.loads(diskq("restore", "--list", "--json", jdir=jdir).stdout)
    assert [d["raw"] for d in as_json["damaged"]] == [DAMAGED["pid a string"]]

    done = diskq("restore", "--wait", "0", jdir=jdir)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "diskq: error: 1 journal entry is damaged" in done.stderr
    assert path.read_bytes() == DAMAGED["pid a string"].encode()

    wrong = diskq("restore", "--discard", "../cache-loop99-sysfs.json", jdir=jdir)
    assert wrong.returncode == 2 and "no journal entry named" in wrong.stderr and path.exists()
    gone = diskq("restore", "--discard", "cache-loop99-sysfs.json", jdir=jdir)
    assert gone.returncode == 0, gone.stderr
    assert f"discarded {path}" in gone.stderr and not path.exists()
    after = diskq("restore", "--list", jdir=jdir)
    assert "damaged" not in after.stdout + after.stderr


def test_discard_refuses_an_entry_of_a_run_still_going(tmp_path):
    jdir = tmp_path / "j"
    path = fake_entry(jdir, pid=os.getpid())
    with pytest.raises(CacheError):
        Journal(jdir).discard(path.name)
    with pytest.raises(InvalidInput):
        Journal(jdir).discard("cache-nothing-sysfs.json")
    assert path.exists()


@needs_loop
def test_no_cache_is_switched_while_a_damaged_entry_may_be_its_devices(loop_wb, tmp_path):
    dev = loop_wb
    jdir = tmp_path / "j"
    wc_file(dev).write_text("write through")  # as the run that left the damaged entry switched it
    text = good_entry(dev)[:60]  # truncated after the device field
    path = write_damaged(jdir, text, f"cache-{Path(dev).name}-sysfs.json")
    journal = Journal(jdir)
    control = CacheControl(dev, "sysfs", "off", True)
    with pytest.raises(CacheError) as info:
        with CacheGuard(control, journal) as guard:
            guard.set("on")
    assert "refusing to switch the write cache" in info.value.message and "--discard" in info.value.hint
    assert path.read_bytes() == text.encode()  # not overwritten with the switched state
    assert wc_file(dev).read_text().strip() == "write through"
    # a damaged entry of another device does not stand in the way
    journal.discard(path.name)
    write_damaged(jdir, DAMAGED["empty"], "cache-loop99-sysfs.json")
    with CacheGuard(control, journal) as guard:
        guard.set("on")
        assert wc_file(dev).read_text().strip() == "write back"
    assert wc_file(dev).read_text().strip() == "write through"


@needs_loop
@needs_fio
def test_a_bench_does_not_take_the_switched_state_for_the_original(loop_wb, tmp_path):
    dev = loop_wb
    jdir = tmp_path / "j"
    wc_file(dev).write_text("write through")
    path = write_damaged(jdir, "", f"cache-{Path(dev).name}-sysfs.json")
    done = diskq(
        "bench",
        dev,
        "--yes",
        "--jobs",
        "1",
        "--runtime",
        "1",
        "--cache",
        "both",
        "--no-flush-check",
        "-o",
        str(tmp_path / "r.json"),
        jdir=jdir,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"diskq: warning: {path}: damaged journal entry (it is empty)" in done.stderr
    assert f"diskq: error: refusing to switch the write cache of {dev}" in done.stderr
    assert path.read_bytes() == b"" and [p.name for p in jdir.iterdir()] == [path.name]
    assert wc_file(dev).read_text().strip() == "write through"


WRITE_ENTRY = """
import sys
from diskq.errors import CacheError
from diskq.probe.cache import CacheControl
from diskq.probe.journal import Journal
try:
    Journal(sys.argv[1]).record(CacheControl("/dev/loop97", "sysfs", "on", True), "on")
except CacheError as exc:
    print(exc.message)
"""


def test_a_failed_journal_write_leaves_no_temp_file(tmp_path):
    jdir = tmp_path / "j"
    jdir.mkdir()
    # a file size limit of 0: the write itself fails (EFBIG), as on a full filesystem
    done = subprocess.run(
        [sys.executable, "-c", WRITE_ENTRY, str(jdir)],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY)),
    )
    assert "cannot write the restore journal" in done.stdout, done.stderr
    assert list(jdir.iterdir()) == []
