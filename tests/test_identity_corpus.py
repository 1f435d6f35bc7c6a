"""Every real model string of diskq's sources through the one matcher (tests/fixtures/identity_corpus.toml):
smartctl's and nvme-cli's outputs, the public figures' model names, the datasheet tables' model strings,
Ceph clusters' device ids and the community disk table. Each answers the line and capacity recorded for it,
or the candidates, or nothing; a wrong line is never an answer. The strings are checked against their
sources (../shared, not committed: that test skips without it)."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

import pytest

from diskq.identity.lines import load
from diskq.identity.match import SURE, device_id_model, resolve

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DISKQ_SHARED") or REPO.parent / "shared")
CORPUS = tomllib.loads((REPO / "tests" / "fixtures" / "identity_corpus.toml").read_text(encoding="utf-8"))["string"]
LINES = load(REPO / "sources" / "lines")
KEYS = {ln.key for ln in LINES}


@pytest.mark.parametrize("entry", CORPUS, ids=[e["model"][:60] for e in CORPUS])
def test_every_real_model_string_answers_what_the_corpus_records(entry):
    res = resolve(LINES, entry["model"])
    expect = entry["expect"]
    if expect == "none":
        assert not res.candidates, [c.to_dict() for c in res.candidates]
    elif expect == "ambiguous":
        assert res.answer is None and res.ambiguous
        assert sorted(c.line.key for c in res.candidates) == sorted(entry["candidates"])
    else:
        assert res.answer is not None, [c.to_dict() for c in res.candidates]
        assert res.answer.line.key == expect and res.answer.sure == SURE
    if expect != "none":
        assert res.capacity_bytes == entry.get("capacity"), res.capacity_bytes


def test_the_corpus_names_lines_that_exist_and_says_where_each_string_is():
    assert len(CORPUS) >= 500
    models = [e["model"] for e in CORPUS]
    assert len(models) == len(set(models))
    for e in CORPUS:
        assert e["expect"] in KEYS | {"none", "ambiguous"}, e
        assert all(k in KEYS for k in e.get("candidates", [])), e
        assert e["source"], e
        if e["source"] == "invented":  # only hard disks, as negative controls
            assert e["expect"] == "none" and "invented negative control" in e["note"], e
        if e.get("gap"):  # an SSD without a sourced mapping: nothing until a source gives one
            assert e["expect"] == "none" and e.get("note"), e
    invented = [e for e in CORPUS if e["source"] == "invented"]
    assert 0 < len(invented) <= 10


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared (the fixtures and data of the sources) is absent")
def test_every_string_is_in_the_source_it_names():
    texts: dict[str, str] = {}
    for e in CORPUS:
        if e["source"] == "invented":
            continue
        path = REPO / e["source"] if e["source"].startswith("tests/") else SHARED / e["source"]
        if path not in texts:
            texts[path] = path.read_text(encoding="utf-8", errors="replace").casefold()
        words = re.findall(r"[^\W_]+", e["model"].casefold())
        missing = [w for w in words if w not in texts[path]]
        assert not missing, (e["model"], e["source"], missing)


@pytest.mark.parametrize(
    ("device_id", "model"),
    [
        ("ATA_SAMSUNG_MZ7KM240HMHQ-00005_S3F5NX0K402192", "SAMSUNG MZ7KM240HMHQ-00005"),
        ("KCD61LUL3T84_8160A017T4Y8", "KCD61LUL3T84"),
        ("ATA_WDC_WD10JFCX-68N6GN0_WD-WXC1A34T6822", "WDC WD10JFCX-68N6GN0"),
        ("HUH721212AL5200_5000cca2944ff704", "HUH721212AL5200"),
        # /dev/disk/by-id names as Mirantis' "Addressing Ceph storage devices" shows them, one as a partition
        ("/dev/disk/by-id/nvme-SAMSUNG_MZ1LB3T8HMLA-00007_S46FNY0R394543", "SAMSUNG MZ1LB3T8HMLA-00007"),
        ("scsi-SATA_HGST_HUS724040AL_PN1334PEHN18ZS", "HGST HUS724040AL"),
        ("ata-WDC_WD4003FZEX-00Z4SA0_WD-WMC5D0D9DMEH-part1", "WDC WD4003FZEX-00Z4SA0"),
        # no serial to take off: a capacity, a word, a string with spaces, no underscore
        ("WD_BLACK_SN850X_2000GB", None),
        ("Samsung_SSD_970_EVO_Plus", None),
        ("Samsung SSD 860 EVO_1TB", None),
        ("6ea8b7f0-696a-47e3-b", None),
    ],
)
def test_a_ceph_device_id_is_read_as_its_model_without_transport_and_serial(device_id, model):
    assert device_id_model(device_id) == model


def test_an_interface_alone_names_no_line_and_a_vendor_with_it_names_that_vendors_one():
    assert not resolve(LINES, "SATA SSD").candidates
    assert not resolve(LINES, "NVMe SSD").candidates
    tesla = resolve(LINES, "TESLA SATA SSD")
    assert tesla.answer is not None and tesla.answer.line.facts.vendor == "Tesla"


def test_words_beside_a_shared_part_number_pick_the_one_line_they_name():
    res = resolve(LINES, "Seagate Nytro 1351 XA3840LE10063")
    assert res.answer is not None and res.answer.line.key == "seagate:nytro1351"
    assert res.answer.capacity_bytes == 3_840_000_000_000 and "name it" in res.answer.evidence
    shared = resolve(LINES, "XA3840LE10063")
    assert shared.answer is None and len(shared.candidates) == 2


def test_a_device_id_or_a_remark_in_parentheses_says_how_it_was_read():
    res = resolve(LINES, "INTEL_SSDSC2KB038T8_PHYF149607QD3P8EGN")
    assert res.answer is not None and res.answer.line.key == "intel:s4510"
    assert "Ceph device id" in res.answer.evidence and "PHYF149607QD3P8EGN" in res.answer.evidence
    res = resolve(LINES, "Intel DC P4510 4TB (INTEL SSDPE2KX040T8)")
    assert res.answer is not None and res.answer.line.key == "intel:p4510"
    assert res.answer.capacity_bytes == 4 * 10**12


def test_a_remark_in_parentheses_is_left_out_only_when_it_names_no_line():
    res = resolve(LINES, "Intel 710 Series (SATA, ~6 years old at test time)")
    assert res.answer is not None and res.answer.line.key == "intel:710" and "remarks" in res.answer.evidence
    # a remark holding a word of a line's name is part of what the string names: never read without it
    assert not resolve(LINES, "Samsung 883 (PM883)").candidates
    assert (
        resolve(LINES, "/dev/disk/by-id/nvme-SAMSUNG_MZ1LB3T8HMLA-00007_S46FNY0R394543").answer.line.key
        == "samsung:pm983"
    )
