"""Write cache: parsers on recorded outputs, detection, and real toggling of a loop device's kernel flag."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from diskq import proc
from diskq.errors import CacheError
from diskq.probe import cache
from diskq.probe.cache import CacheControl, parse_hdparm_w, parse_sdparm_wce
from diskq.probe.cacheguard import CacheGuard
from diskq.probe.journal import Journal
from tests.conftest import needs_loop, wc_file

FIX = Path(__file__).parent / "fixtures"
WC = FIX / "write_cache"


def test_hdparm_on_off_and_set_outputs():
    assert parse_hdparm_w((WC / "ceph-doc__TOSHIBA_MG07ACA1__hdparm-W_on.txt").read_text()) == {"/dev/sda": "on"}
    assert parse_hdparm_w((WC / "ceph-doc__TOSHIBA_MG07ACA1__hdparm-W_off.txt").read_text()) == {"/dev/sda": "off"}
    assert parse_hdparm_w((WC / "ceph-doc__TOSHIBA_MG07ACA1__hdparm-W0_set_off.txt").read_text()) == {"/dev/sda": "off"}
    two = parse_hdparm_w((WC / "t13a__WD_Red_Plus_WD120EFBX_x2__hdparm-W0.txt").read_text())
    assert two == {"/dev/sdb": "off", "/dev/sdc": "off"}


def test_hdparm_on_a_loop_device_reports_no_state():
    assert parse_hdparm_w((FIX / "hdparm" / "debian12__loop__hdparm-W.txt").read_text()) == {}
    # -W0 prints the "setting" line but never a read-back; the errors go to stderr
    assert parse_hdparm_w((FIX / "hdparm" / "debian12__loop__hdparm-W0.stdout.txt").read_text()) == {}


def test_sdparm_wce():
    assert parse_sdparm_wce((WC / "ceph-doc__TOSHIBA_MG07ACA1__sdparm-get-WCE_1.txt").read_text()) == {"/dev/sda": "on"}
    multi = parse_sdparm_wce((WC / "ceph-doc__TOSHIBA_MG07ACA1__sdparm-get-WCE_0_multi.txt").read_text())
    assert multi == {"/dev/sda": "off", "/dev/sdb": "off"}
    assert parse_sdparm_wce((WC / "debian12__loop__sdparm-get-WCE.txt").read_text()) == {}


def recorded(outputs: dict[str, tuple[int, str, str]]):
    """A stand-in for proc.run answering each program with its recorded output."""
    calls = []

    def run(argv, **kw):
        calls.append(argv)
        rc, out, err = outputs[argv[0]]
        return proc.Completed(list(argv), rc, out, err)

    return run, calls


def test_detect_ata_uses_hdparm(monkeypatch):
    run, calls = recorded({"hdparm": (0, (WC / "ceph-doc__TOSHIBA_MG07ACA1__hdparm-W_on.txt").read_text(), "")})
    monkeypatch.setattr(proc, "run", run)
    monkeypatch.setattr(cache.sysfs, "block_name", lambda path, sysfs_root: "sda")
    c = cache.detect("/dev/sda", protocol="ata", sysfs_root=str(FIX / "sysfs"))
    assert (c.device, c.mechanism, c.state, c.can_toggle) == ("/dev/sda", "hdparm", "on", True)
    assert calls == [["hdparm", "-W", "/dev/sda"]]


def test_detect_nvme_uses_feature_6(monkeypatch):
    run, calls = recorded({"nvme": (0, (WC / "t13a__WD_Red_SN700__nvme-get-feature-6_off.txt").read_text(), "")})
    monkeypatch.setattr(proc, "run", run)
    monkeypatch.setattr(cache.sysfs, "block_name", lambda path, sysfs_root: "nvme0n1")
    c = cache.detect("/dev/nvme0n1", protocol="nvme", sysfs_root=str(FIX / "sysfs"))
    assert (c.mechanism, c.state) == ("nvme", "off")
    assert calls == [["nvme", "get-feature", "/dev/nvme0n1", "-f", "6"]]


def test_detect_partition_controls_the_whole_disk(monkeypatch):
    run, _ = recorded({"hdparm": (0, "\n/dev/sdb:\n write-caching =  1 (on)\n", "")})
    monkeypatch.setattr(proc, "run", run)
    monkeypatch.setattr(cache.sysfs, "block_name", lambda path, sysfs_root: "sdb1")
    c = cache.detect("/dev/sdb1", protocol="ata", sysfs_root=str(FIX / "sysfs"))
    assert c.device == "/dev/sdb"


def test_detect_loop_falls_back_to_sysfs_with_the_tools_reasons(monkeypatch, tmp_path):
    run, calls = recorded(
        {
            "hdparm": (0, (FIX / "hdparm" / "debian12__loop__hdparm-W.txt").read_text(), ""),
            "sdparm": (72, "", (WC / "debian12__loop__sdparm-get-WCE.txt").read_text()),
        }
    )
    monkeypatch.setattr(proc, "run", run)
    monkeypatch.setattr(cache.sysfs, "block_name", lambda path, sysfs_root: "loop0")
    c = cache.detect("/dev/loop0", sysfs_root=str(FIX / "sysfs"))
    assert (c.mechanism, c.state) == ("sysfs", "on")
    assert "kernel flag only" in c.note
    assert "SCSI INQUIRY command failed on /dev/loop0" in c.note
    assert "hdparm -W: no write-caching state reported" in c.note
    assert [a[0] for a in calls] == ["hdparm", "sdparm"]


def test_detect_with_tools_missing_and_no_sysfs_flag(monkeypatch, tmp_path):
    from diskq.errors import ToolMissing

    def run(argv, **kw):
        raise ToolMissing(argv[0])

    monkeypatch.setattr(proc, "run", run)
    monkeypatch.setattr(cache.sysfs, "block_name", lambda path, sysfs_root: "sdq")
    c = cache.detect("/dev/sdq", protocol="scsi", sysfs_root=str(tmp_path))
    assert (c.mechanism, c.state, c.can_toggle) == (None, "unknown", False)
    assert "sdparm is not installed" in c.reason
    with pytest.raises(CacheError, match="cannot switch"):
        cache.set_state(c, "off")


def test_detect_a_file_path_is_not_a_device(tmp_path):
    f = tmp_path / "x.bin"
    f.write_bytes(b"")
    c = cache.detect(str(f))
    assert (c.mechanism, c.can_toggle) == (None, False) and "not a block device" in c.reason


def test_set_state_verifies_the_read_back(monkeypatch):
    # hdparm accepts -W0 but the drive still reads back "on": diskq must not believe it
    on = (WC / "ceph-doc__TOSHIBA_MG07ACA1__hdparm-W_on.txt").read_text()
    run, _ = recorded({"hdparm": (0, on, "")})
    monkeypatch.setattr(proc, "run", run)
    c = CacheControl("/dev/sda", "hdparm", "on", True)
    with pytest.raises(CacheError, match="now reads on"):
        cache.set_state(c, "off")


@needs_loop
def test_real_loop_toggle_and_restore(loop_wb, tmp_path):
    dev = loop_wb
    c = cache.detect(dev)
    assert (c.mechanism, c.state, c.can_toggle) == ("sysfs", "on", True)
    cache.set_state(c, "off")
    assert wc_file(dev).read_text().strip() == "write through"
    cache.set_state(c, "on")
    assert wc_file(dev).read_text().strip() == "write back"


@needs_loop
def test_guard_journals_before_change_and_restores_on_exception(loop_wb, tmp_path):
    dev = loop_wb
    journal = Journal(tmp_path / "j")
    with pytest.raises(RuntimeError):
        with CacheGuard(cache.detect(dev), journal) as guard:
            guard.set("off")
            assert wc_file(dev).read_text().strip() == "write through"
            [entry] = journal.pending()
            assert (entry.device, entry.original, entry.mechanism) == (dev, "on", "sysfs")
            raise RuntimeError("fio failed")
    assert wc_file(dev).read_text().strip() == "write back"
    assert journal.pending() == []


@needs_loop
def test_guard_restores_the_off_state_it_found(loop_wb, tmp_path):
    dev = loop_wb
    wc_file(dev).write_text("write through")
    journal = Journal(tmp_path / "j")
    with CacheGuard(cache.detect(dev), journal) as guard:
        guard.set("on")
        guard.set("off")
        guard.set("on")
    assert wc_file(dev).read_text().strip() == "write through"
    assert journal.pending() == []


CHILD = textwrap.dedent(
    """
    import os, signal, sys, time
    from diskq.probe import cache
    from diskq.probe.cacheguard import CacheGuard
    from diskq.probe.journal import Journal
    dev, jdir, mode = sys.argv[1:4]
    with CacheGuard(cache.detect(dev), Journal(jdir)) as guard:
        guard.set("off")
        print("ready", flush=True)
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(120)
    """
)


def start_child(dev: str, jdir: Path, mode: str = "wait") -> subprocess.Popen:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, dev, str(jdir), mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    line = child.stdout.readline()
    assert line.strip() == "ready", child.stderr.read()
    return child


@needs_loop
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_guard_restores_on_signals(loop_wb, tmp_path, sig):
    dev = loop_wb
    jdir = tmp_path / "j"
    child = start_child(dev, jdir)
    try:
        assert wc_file(dev).read_text().strip() == "write through"
        assert len(Journal(jdir).pending()) == 1
        child.send_signal(sig)
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode != 0
    err = child.stderr.read()
    assert f"interrupted by {signal.Signals(sig).name}" in err
    assert wc_file(dev).read_text().strip() == "write back"
    assert Journal(jdir).pending() == []


@needs_loop
def test_sigkill_leaves_the_journal_for_restore(loop_wb, tmp_path):
    dev = loop_wb
    jdir = tmp_path / "j"
    child = start_child(dev, jdir, "kill")
    child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL
    assert wc_file(dev).read_text().strip() == "write through"
    [entry] = Journal(jdir).stale()
    assert entry.original == "on" and not entry.running
    assert Journal(jdir).restore_all() == [f"{dev} write cache (sysfs): restored to on"]
    assert wc_file(dev).read_text().strip() == "write back"
    assert Journal(jdir).pending() == []


@needs_loop
def test_a_new_guard_after_a_kill_restores_the_true_original(loop_wb, tmp_path):
    dev = loop_wb
    jdir = tmp_path / "j"
    start_child(dev, jdir, "kill").wait(timeout=60)
    # the cache is still off from the killed run; a new run must not take "off" as the original
    with CacheGuard(cache.detect(dev), Journal(jdir)) as guard:
        guard.set("off")
        assert guard.original == "on"
    assert wc_file(dev).read_text().strip() == "write back"
    assert Journal(jdir).pending() == []


@needs_loop
def test_a_live_run_owns_its_entry(loop_wb, tmp_path):
    dev = loop_wb
    jdir = tmp_path / "j"
    child = start_child(dev, jdir)
    try:
        with pytest.raises(CacheError, match=f"pid {child.pid}"):
            with CacheGuard(cache.detect(dev), Journal(jdir)) as guard:
                guard.set("on")
        messages = Journal(jdir).restore_all()
        assert "still going" in messages[0]
        assert wc_file(dev).read_text().strip() == "write through"
    finally:
        child.terminate()
        child.wait(timeout=60)
    assert wc_file(dev).read_text().strip() == "write back"
    assert os.listdir(jdir) == []
