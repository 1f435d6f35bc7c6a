"""Memory-backed and host measurements are recognised from fio's own output, not only from the
notes and identity a submitter can edit (``[memory_backed]`` in criteria.toml)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diskq.analyse import criteria, rawtarget
from diskq.analyse.hostdevice import not_a_drive
from diskq.database.build import build
from diskq.database.synthetic import submission, write_submission
from diskq.result import ResultDocument
from diskq.submission.validate import validate_file
from tests.cli_support import rows

FIXTURES = Path(__file__).parent / "fixtures"
TMPFS = FIXTURES / "bench" / "diskq-tmpfs-file-result.json"
LOOP = FIXTURES / "bench" / "diskq-noisy-loop-result.json"
#: recorded fio outputs of real devices and of a RAM disk (tests/fixtures/fio_json/SOURCES.md)
REAL = [
    "fio-3.14__Samsung_860_PRO_SATA300__randwrite_qd8_nj8_gr.json",
    "fio-3.1__Intel_D3-S4610_SSDSC2KG48__randwrite_qd1_nj1.json",
    "fio-3.1__Samsung_F1_1TB_7200__randwrite_qd1_nj1.json",
    "fio-3.1__WD740GD_Raptor_10k__randwrite_qd8_nj8_gr.json",
    "fio-3.6__Crucial_250GB_SSD__randwrite_qd8_nj8_NO_gr.json",
    "fio-3.6__ceph_rbd_ssd_pool__randwrite_qd8_nj8_gr.json",
    "fio-3.33__WD_Red_SN700_1TB_nvme__ext4__4jobs_nj16_gr.json",
    "fio-3.33__loop__fdatasync_nj4_ss.json",
]
RAM = "fio-3.33__RAM_brd_ram0__ext4__4jobs_nj16_gr_CONTROL.json"


def _relabelled_as_a_sata_drive(path: Path) -> dict:
    """The document as a forger would send it: the identity of a SATA SSD, every note removed."""
    doc = json.loads(path.read_text())
    doc["device"] = {
        "path": "/dev/sda",
        "kind": "disk",
        "model": "Samsung SSD 870 EVO 1TB",
        "vendor": "Samsung",
        "firmware": "SVT02B6Q",
        "protocol": "ata",
        "media": "ssd",
        "capacity_bytes": 1000204886016,
    }
    doc["notes"] = []
    for run in doc["runs"]:
        run["notes"] = []
    return doc


def _per_job_entry_ratios(name: str) -> list[float]:
    """Context switches per I/O of each job entry of a recorded output (reads and writes)."""
    data = json.loads((FIXTURES / "fio_json" / name).read_text())
    out = []
    for job in data["jobs"]:
        ios = job["write"]["total_ios"] + job.get("read", {}).get("total_ios", 0)
        if ios:
            out.append(job["ctx"] / ios)
    return out


def test_the_threshold_separates_every_recorded_real_device_from_memory():
    limit = criteria.section("memory_backed")["max_switches_per_write"]
    real = [r for name in REAL for r in _per_job_entry_ratios(name)]
    ram = _per_job_entry_ratios(RAM)
    assert min(real) > 4 * limit and max(ram) * 25 < limit, (min(real), max(ram))


def test_a_memory_backed_result_relabelled_as_a_sata_drive_is_refused(tmp_path):
    doc = _relabelled_as_a_sata_drive(TMPFS)
    path = write_submission(tmp_path / "submissions", submission(doc))
    sub, problems = validate_file(path, require_signature=False)
    memory = [p for p in problems if "measured a memory-backed target" in p.message]
    assert len(memory) == 1 and "0.0038 per write" in memory[0].message, problems
    assert not_a_drive(ResultDocument.model_validate(doc)).startswith("a memory-backed target (fio's own counters")


def test_it_neither_enters_nor_ranks_in_the_table(tmp_path):
    subs = tmp_path / "submissions"
    write_submission(subs, submission(_relabelled_as_a_sata_drive(TMPFS)))
    db = tmp_path / "devices.db"
    report = build(subs, db)
    assert report.submissions == 0 and rows(db, "SELECT rank FROM devices WHERE rank IS NOT NULL") == []
    assert any("memory-backed" in s.message for s in report.skipped)


def test_a_loop_device_relabelled_as_a_drive_is_a_host_by_fios_own_names():
    doc = ResultDocument.model_validate(_relabelled_as_a_sata_drive(LOOP))
    assert not_a_drive(doc) == (
        "a Linux loop device (loop7, named in fio's own output): it measures the host, not a drive model"
    )


def test_a_real_drives_output_shows_no_memory():
    doc = ResultDocument.model_validate(json.loads(LOOP.read_text()))
    assert rawtarget.memory_evidence(doc) is None


@pytest.mark.parametrize("name", ["ram0", "zram1", "pmem0", "nullb0"])
def test_a_memory_device_named_in_the_counters_is_evidence(name):
    doc = ResultDocument.model_validate(_relabelled_as_a_sata_drive(LOOP))
    for run in doc.runs:
        for p in run.points:
            p.fio["disk_util"] = [{"name": name}]
    assert rawtarget.memory_evidence(doc).startswith(f"fio's own output names {name}")
