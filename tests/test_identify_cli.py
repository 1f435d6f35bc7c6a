"""`diskq identify` from the command line: saved smartctl JSON, a real loop device, and bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import needs_loop

SMART = Path(__file__).parent / "fixtures" / "smartctl_json"
REQUIRED_KEYS = {"model", "firmware", "capacity_bytes", "protocol", "media", "rotation_rpm", "serial_hash"}


def diskq(*args: str, jdir: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "DISKQ_JOURNAL_DIR": str(jdir)}
    return subprocess.run(
        [sys.executable, "-m", "diskq", *args], capture_output=True, text=True, env=env, input=stdin, timeout=120
    )


def test_identify_saved_nvme_output_as_json(tmp_path):
    out = diskq("identify", "--smartctl-json", str(SMART / "scrutiny__Samsung_SSD_970_EVO_500GB__x.json"), "--json", jdir=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)  # stdout holds the JSON document alone
    assert REQUIRED_KEYS <= doc.keys()
    assert (doc["model"], doc["protocol"], doc["media"], doc["rotation_rpm"]) == ("Samsung SSD 970 EVO 500GB", "nvme", "ssd", 0)
    serial = json.loads((SMART / "scrutiny__Samsung_SSD_970_EVO_500GB__x.json").read_text())["serial_number"]
    assert serial not in out.stdout and serial not in out.stderr


def test_identify_from_stdin_human_output(tmp_path):
    text = (SMART / "libblockdev__TOSHIBA_AL15SEB18EQY.json").read_text()
    out = diskq("identify", "--smartctl-json", "-", jdir=tmp_path, stdin=text)
    assert out.returncode == 0, out.stderr
    assert "TOSHIBA AL15SEB18EQY" in out.stdout and "10000 rpm" in out.stdout and "scsi" in out.stdout


def test_no_identity_exits_nonzero_with_smartctls_message(tmp_path):
    out = diskq("identify", "--smartctl-json", str(SMART / "debian12__loop__unable_to_detect_rc1.json"), "--json", jdir=tmp_path)
    assert out.returncode == 1
    assert out.stdout == ""
    assert out.stderr.strip() == "diskq: error: smartctl: /dev/loop0: Unable to detect device type"


def test_bad_input_is_one_clear_line(tmp_path):
    junk = tmp_path / "junk.json"
    junk.write_text("smartctl 7.3 2022-02-28 r5338\n")
    out = diskq("identify", "--smartctl-json", str(junk), jdir=tmp_path)
    assert out.returncode == 2 and out.stderr.startswith(f"diskq: error: {junk} is not JSON")
    assert "Traceback" not in out.stderr
    neither = diskq("identify", jdir=tmp_path)
    assert neither.returncode == 2 and "give either a TARGET" in neither.stderr
    file_target = diskq("identify", str(junk), jdir=tmp_path)
    assert file_target.returncode == 2 and "is not a block device" in file_target.stderr
    missing = diskq("identify", "--smartctl-json", str(tmp_path / "none.json"), jdir=tmp_path)
    assert missing.returncode == 2 and "cannot read" in missing.stderr


def test_help_has_an_example(tmp_path):
    out = diskq("identify", "--help", jdir=tmp_path)
    assert out.returncode == 0 and "Example: diskq identify" in out.stdout


@needs_loop
def test_identify_real_loop_device_json(make_loop, tmp_path):
    dev = make_loop(16 * 1024 * 1024)
    out = diskq("identify", dev, "--json", jdir=tmp_path)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert REQUIRED_KEYS <= doc.keys()
    assert (doc["path"], doc["model"], doc["capacity_bytes"], doc["protocol"]) == (dev, "Linux loop device", 16 * 1024 * 1024, "unknown")
    assert doc["cache_toggle"] == "sysfs" and doc["write_cache"] in ("on", "off")
    assert any("Unable to detect device type" in n for n in doc["notes"])
