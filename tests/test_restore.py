"""The restore journal and `diskq restore`: a killed run's cache change is put back."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from diskq.probe.cache import CacheControl
from diskq.probe.journal import Journal, pending_warning
from tests.conftest import needs_loop, wc_file
from tests.test_cache import start_child


def diskq(*args: str, jdir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "DISKQ_JOURNAL_DIR": str(jdir)}
    return subprocess.run([sys.executable, "-m", "diskq", *args], capture_output=True, text=True, env=env, timeout=120)


def fake_entry(jdir: Path, **fields) -> Path:
    """A journal entry as a run that has since died would have left it."""
    jdir.mkdir(parents=True, exist_ok=True)
    entry = {
        "device": "/dev/loop99",
        "mechanism": "sysfs",
        "original": "on",
        "sysfs_root": "/sys",
        "diskseq": None,
        "pid": 2**22 + 1,
        "pid_start": None,
        "boot_id": None,
        "created": "2024-01-01T00:00:00Z",
    }
    entry.update(fields)
    path = jdir / f"cache-{Path(entry['device']).name}-{entry['mechanism']}.json"
    path.write_text(json.dumps(entry))
    return path


def test_journal_record_is_durable_json_and_removable(tmp_path):
    journal = Journal(tmp_path / "j")
    control = CacheControl("/dev/loop7", "sysfs", "on", True)
    entry = journal.record(control, "on")
    data = json.loads(Path(entry.file).read_text())
    assert (data["device"], data["original"], data["pid"]) == ("/dev/loop7", "on", os.getpid())
    assert entry.running  # written by this very process
    assert journal.stale() == []
    journal.remove(control)
    assert journal.pending() == []


def test_default_directory_and_override(monkeypatch, tmp_path):
    monkeypatch.delenv("DISKQ_JOURNAL_DIR", raising=False)
    assert str(Journal().dir) in ("/run/diskq", "/var/lib/diskq")
    monkeypatch.setenv("DISKQ_JOURNAL_DIR", str(tmp_path))
    assert Journal().dir == tmp_path


def test_pending_warning(monkeypatch, tmp_path):
    monkeypatch.setenv("DISKQ_JOURNAL_DIR", str(tmp_path / "j"))
    assert pending_warning() is None
    fake_entry(tmp_path / "j")
    assert "diskq restore" in pending_warning() and "/dev/loop99" in pending_warning()
    (tmp_path / "j" / "cache-broken-sysfs.json").write_text("{not json")
    assert "/dev/loop99" in pending_warning()  # a broken file never breaks the warning


def test_entry_for_a_vanished_device_is_dropped(tmp_path):
    jdir = tmp_path / "j"
    fake_entry(jdir, device=str(tmp_path / "no-such-device"))
    [message] = Journal(jdir).restore_all()
    assert "gone or was replaced" in message
    assert Journal(jdir).pending() == []


@needs_loop
def test_entry_for_a_replaced_device_is_not_applied(loop_wb, tmp_path):  # noqa: F811
    dev = loop_wb
    jdir = tmp_path / "j"
    wc_file(dev).write_text("write through")
    fake_entry(jdir, device=dev, original="on", diskseq="-1")  # a different device once had this name
    [message] = Journal(jdir).restore_all()
    assert "gone or was replaced" in message
    assert wc_file(dev).read_text().strip() == "write through"


@needs_loop
def test_cli_restore_after_sigkill(loop_wb, tmp_path):  # noqa: F811
    dev = loop_wb
    jdir = tmp_path / "j"
    child = start_child(dev, jdir, "kill")
    child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL
    assert wc_file(dev).read_text().strip() == "write through"

    listed = diskq("restore", "--list", "--json", jdir=jdir)
    assert listed.returncode == 0
    assert "diskq: warning:" not in listed.stderr  # it lists the entry itself; every other command warns
    [pending] = json.loads(listed.stdout)["pending"]
    assert (pending["device"], pending["original"], pending["running"]) == (dev, "on", False)

    done = diskq("restore", jdir=jdir)
    assert done.returncode == 0, done.stderr
    assert f"{dev} write cache (sysfs): restored to on" in done.stderr
    assert wc_file(dev).read_text().strip() == "write back"
    assert Journal(jdir).pending() == []

    again = diskq("restore", jdir=jdir)
    assert again.returncode == 0 and "nothing to restore" in again.stderr and "warning" not in again.stderr


@needs_loop
def test_cli_restore_fails_loudly_and_keeps_the_entry(loop_wb, tmp_path):  # noqa: F811
    dev = loop_wb
    jdir = tmp_path / "j"
    # a journal naming a mechanism this device does not have: the restore must fail, not pretend
    fake_entry(
        jdir,
        device=dev,
        mechanism="nvme",
        original="off",
        diskseq=Path(f"/sys/block/{Path(dev).name}/diskseq").read_text().strip(),
    )
    done = diskq("restore", jdir=jdir)
    assert done.returncode == 1
    assert (
        "NOT restored" in done.stderr and "diskq: error: 1 write-cache setting(s) could not be restored" in done.stderr
    )
    assert "Traceback" not in done.stderr
    assert len(Journal(jdir).stale()) == 1


def test_restore_help_has_an_example(tmp_path):
    out = diskq("restore", "--help", jdir=tmp_path)
    assert out.returncode == 0 and "Example: diskq restore" in out.stdout


def test_restore_does_not_tell_you_to_run_restore(tmp_path):
    """Every other command warns that a killed run left a cache changed and names `diskq restore`;
    `diskq restore` itself says what it did, never to run itself."""
    jdir = tmp_path / "j"
    fake_entry(jdir, device=str(tmp_path / "no-such-device"))
    listed = diskq("restore", "--list", jdir=jdir)
    assert listed.returncode == 0 and "no-such-device" in listed.stdout
    assert "run `diskq restore`" not in listed.stderr + listed.stdout
    other = diskq("lookup", "pm883", jdir=jdir)
    assert "run `diskq restore` to put it back" in other.stderr
    done = diskq("restore", jdir=jdir)
    assert done.returncode == 0 and "gone or was replaced" in done.stderr
    assert "diskq restore" not in done.stderr + done.stdout
