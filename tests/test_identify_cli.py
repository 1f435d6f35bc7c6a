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
    out = diskq(
        "identify",
        "--smartctl-json",
        str(SMART / "scrutiny__Samsung_SSD_970_EVO_500GB__x.json"),
        "--json",
        jdir=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)  # stdout holds the JSON document alone
    assert REQUIRED_KEYS <= doc.keys()
    assert (doc["model"], doc["protocol"], doc["media"], doc["rotation_rpm"]) == (
        "Samsung SSD 970 EVO 500GB",
        "nvme",
        "ssd",
        0,
    )
    serial = json.loads((SMART / "scrutiny__Samsung_SSD_970_EVO_500GB__x.json").read_text())["serial_number"]
    assert serial not in out.stdout and serial not in out.stderr


def test_identify_from_stdin_human_output(tmp_path):
    text = (SMART / "libblockdev__TOSHIBA_AL15SEB18EQY.json").read_text()
    out = diskq("identify", "--smartctl-json", "-", jdir=tmp_path, stdin=text)
    assert out.returncode == 0, out.stderr
    assert "TOSHIBA AL15SEB18EQY" in out.stdout and "10000 rpm" in out.stdout and "scsi" in out.stdout
    # nothing was probed: a saved output never shows that the cache cannot be switched
    words = " ".join(out.stdout.split())  # the table wraps at the terminal's width
    assert "write cache unknown (a saved smartctl output does not say how it can be switched)" in words


def test_no_identity_exits_nonzero_with_smartctls_message(tmp_path):
    out = diskq(
        "identify", "--smartctl-json", str(SMART / "debian12__loop__unable_to_detect_rc1.json"), "--json", jdir=tmp_path
    )
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
    assert (doc["path"], doc["model"], doc["capacity_bytes"], doc["protocol"]) == (
        dev,
        "Linux loop device",
        16 * 1024 * 1024,
        "unknown",
    )
    assert doc["cache_toggle"] == "sysfs" and doc["write_cache"] in ("on", "off")
    assert any("Unable to detect device type" in n for n in doc["notes"])


def one_error_line(out: subprocess.CompletedProcess) -> str:
    assert out.returncode == 2, (out.returncode, out.stderr)
    assert out.stdout == "" and "Traceback" not in out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("diskq: error: "), out.stderr
    return lines[0]


def test_non_utf8_file_is_one_clear_line(tmp_path):
    latin1 = tmp_path / "latin1.json"
    latin1.write_bytes('{"model_name": "Disque dur externe \u00e9"}'.encode("latin-1"))
    line = one_error_line(diskq("identify", "--smartctl-json", str(latin1), jdir=tmp_path))
    assert line == f"diskq: error: {latin1} is not UTF-8 text (byte 0xe9 at offset 35)"
    stdin = subprocess.run(
        [sys.executable, "-m", "diskq", "identify", "--smartctl-json", "-"],
        input=b"\xff\xfe{\x00}\x00",
        capture_output=True,
        env={**os.environ, "DISKQ_JOURNAL_DIR": str(tmp_path)},
        timeout=120,
    )
    assert stdin.returncode == 2 and b"Traceback" not in stdin.stderr
    assert stdin.stderr.decode().strip() == "diskq: error: standard input is not UTF-8 text (byte 0xff at offset 0)"


def test_deeply_nested_json_is_one_clear_line(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    line = one_error_line(diskq("identify", "--smartctl-json", str(deep), jdir=tmp_path))
    assert line == f"diskq: error: {deep} is not a smartctl output: its JSON is nested too deeply"
    out = diskq("identify", "--smartctl-json", "-", jdir=tmp_path, stdin="[" * 100_000)
    assert one_error_line(out) == "diskq: error: standard input is not a smartctl output: its JSON is nested too deeply"


def test_absurd_values_are_dropped_not_printed_or_crashed_on(tmp_path):
    data = json.loads((SMART / "sce__INTEL_SSDPE2KX020T8.json").read_text())
    data["logical_block_size"] = 1e308  # used to end in an OverflowError when printed
    data["nvme_total_capacity"] = 1e308
    data["nvme_smart_health_information_log"]["data_units_written"] = -5
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    human = diskq("identify", "--smartctl-json", str(bad), jdir=tmp_path)
    assert human.returncode == 0, human.stderr
    rows = [line.split(None, 1)[0] for line in human.stdout.splitlines() if line and not line.startswith(" ")]
    assert "capacity" not in rows and "data" not in rows and "block" not in rows
    assert "wear" in rows
    assert "  note: data written from NVMe SMART/Health log is negative (-5): ignored" in human.stdout.splitlines()
    out = diskq("identify", "--smartctl-json", str(bad), "--json", jdir=tmp_path)
    doc = json.loads(out.stdout)
    assert (doc["logical_block_size"], doc["capacity_bytes"], doc["data_written_bytes"]) == (None, None, None)
    assert doc["percentage_used"] == 22 and doc["firmware"] is None  # firmware was REDACTED upstream


def identify_json(name: str, tmp_path: Path) -> dict:
    out = diskq("identify", "--smartctl-json", str(SMART / name), "--json", jdir=tmp_path)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_line_nothing_was_measured_of_shows_the_answer_lookup_stores(tmp_path):
    """identify reads the answer devices.db stores for the line (what `diskq lookup` prints), never
    one of its own: the Ceph WAL/DB tier with its basis follows the line it names."""
    name = "sce__Micron_5300_MTFDDAK3T8TDS.json"
    text = diskq("identify", "--smartctl-json", str(SMART / name), jdir=tmp_path)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    at = lines.index(
        "device database: Micron 5300 (data-centre, SATA): nothing measured yet (identified by part number)"
    )
    assert lines[at + 1].startswith("  Ceph WAL/DB: ") and ", basis " in lines[at + 1]
    doc = identify_json(name, tmp_path)
    looked = diskq("lookup", "Micron_5300_MTFDDAK3T8TDS", "--json", jdir=tmp_path)
    assert looked.returncode == 0, looked.stderr
    stored = json.loads(looked.stdout)[0]["verdicts"]
    assert doc["database"]["verdicts"] == stored and stored["ceph_waldb"]["tier"]


def test_a_hard_disk_is_named_as_one_with_its_answer(tmp_path):
    """By its model number (the rotation rate its sources leave out is the one the drive reports),
    or by its own report of a rotation rate where no source places the model; a RAID volume that
    reports one is not a hard disk drive."""
    exos = diskq("identify", "--smartctl-json", str(SMART / "sce__ST1000NM000A-2J3100.json"), jdir=tmp_path)
    assert exos.returncode == 0, exos.stderr
    assert (
        "device database: ST1000NM000A-2J3100: a hard disk drive (Seagate Exos 7E8 family by its model number; "
        "7,200 rpm as the drive reports)"
    ) in exos.stdout
    assert "  Ceph WAL/DB: unsuitable, basis datasheet: a hard disk drive: at most 240 flushed writes" in exos.stdout
    scsi = identify_json("sce__SEAGATE_ST373453LC.json", tmp_path)
    disk = scsi["database"]["hard_disk"]
    assert (disk["kind"], disk["how"], disk["rpm"]) == ("hard disk drive", "reported rotation rate", 15015)
    assert scsi["database"]["lines"][0].startswith("device database: SEAGATE ST373453LC: a hard disk drive by its own")
    assert scsi["database"]["verdicts"]["ceph_waldb"]["tier"] == "unsuitable"
    raid = identify_json("scrutiny__Intel_Raid_1_Volume__scsi_rc4.json", tmp_path)
    assert raid["rotation_rpm"] == 7200 and raid["database"]["hard_disk"] is None
    assert not any("hard disk" in line for line in raid["database"]["lines"])


def test_the_power_loss_verdict_weighs_what_the_lines_datasheets_document(tmp_path):
    """The Micron 7450 reports nothing of its protection; its line's facts state it (as `lookup`
    says of the line), so the verdict is not 'no evidence either way'."""
    doc = identify_json("sce__Micron_7450_MTFDKCC3T2TFS.json", tmp_path)
    plp = doc["power_loss_protection"]
    assert (plp["verdict"], plp["rule"]) == ("likely", "documented")
    assert any(e["kind"] == "documented" and e["points_to"] == "plp" for e in plp["evidence"])


def test_a_scan_or_an_attributes_only_output_is_named_in_one_line(tmp_path):
    """What an operator fed instead of `smartctl --json -x`, and what to save instead."""
    scan = diskq("identify", "--smartctl-json", str(SMART / "telegraf__scan_all.json"), jdir=tmp_path)
    assert scan.returncode == 1 and scan.stdout == "" and len(scan.stderr.splitlines()) == 1
    assert scan.stderr.startswith("diskq: error: this is a `smartctl --scan` output: it lists /dev/sda, /dev/nvme0")
    attrs = diskq("identify", "--smartctl-json", str(SMART / "scrutiny__sat_attributes_only_jA.json"), jdir=tmp_path)
    assert attrs.returncode == 1 and len(attrs.stderr.splitlines()) == 1
    assert "it ran as `smartctl -jA /dev/sdc`); save `smartctl --json -x /dev/sdc`" in attrs.stderr


def test_a_measured_line_shows_its_rows_stored_answer_with_its_basis(tmp_path):
    name = "sce__INTEL_SSDSC2KB240G8.json"
    doc = identify_json(name, tmp_path)
    first = doc["database"]["lines"][0]
    assert first.startswith("device database: Intel SSD S4510: 1-job 1,600 IOPS, Ceph WAL/DB marginal (basis ")
    looked = diskq("lookup", "INTEL SSDSC2KB240G8", "--json", jdir=tmp_path)
    assert looked.returncode == 0, looked.stderr
    stored = json.loads(looked.stdout)[0]["verdicts"]
    assert doc["database"]["verdicts"] == stored
    assert f"(basis {stored['ceph_waldb']['basis']})" in first


def test_a_hard_disk_model_number_on_a_drive_reporting_no_rotation_gets_no_answer(tmp_path):
    """The drive's own report (solid state) against its model number (a hard disk): the conflict
    is said, and neither answer is assumed."""
    data = json.loads((SMART / "sce__ST1000NM000A-2J3100.json").read_text())
    data["rotation_rate"] = 0  # as a solid-state drive reports it
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps(data))
    doc = identify_json(str(odd), tmp_path)
    assert doc["media"] == "ssd" and doc["database"]["verdicts"] is None
    assert doc["database"]["lines"][0] == (
        "device database: ST1000NM000A-2J3100: its model number reads as a hard disk drive (Seagate Exos 7E8 family "
        "by its model number; rotation rate not stated by its sources), but the drive reports non-rotating media "
        "(a solid-state drive): no answer is assumed"
    )


def test_a_drive_failing_its_own_health_check_is_a_warning_not_a_note(tmp_path):
    name = "scrutiny__Hitachi_HDS721050DLE630__usbjmicron_rc216.json"  # exit status 216: bit 3, DISK FAILING
    out = diskq("identify", "--smartctl-json", str(SMART / name), jdir=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "warning: smartctl exit status 216: SMART status check returned DISK FAILING" in lines
    assert "  note: smartctl exit status 216: prefail attributes found <= threshold" in lines
    assert any(line.startswith("  note: read through a USB bridge (usbjmicron)") for line in lines)
