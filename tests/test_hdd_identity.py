"""Hard disk drives by their model numbers (diskq.identity.disks) and their answer
(diskq.analyse.harddisk): the real strings of the Ceph clusters and the recorded smartctl outputs
resolve to "hard disk drive" with their evidence; no solid-state drive's string ever does; lookup
(text and --json) and plan say so."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from diskq.analyse import harddisk
from diskq.analyse.answer import USES
from diskq.errors import SourcesError
from diskq.identity import disks
from diskq.identity.match import resolve
from tests.cli_support import cli
from tests.test_identity_lines import LINES, model_strings, needs_tables, table_rows

REPO = Path(__file__).resolve().parents[1]
DB = REPO / "devices.db"
CLUSTERS = REPO.parent / "shared" / "data" / "ceph-clusters"
needs_clusters = pytest.mark.skipif(not CLUSTERS.is_dir(), reason="the shared Ceph cluster outputs are absent")


def cluster_device_ids() -> set[str]:
    """Every model of the clusters' osd metadata ``device_ids`` (``sda=ATA_WDC_WD4003FFBX-68MU3N0_SERIAL``),
    the serial after the last underscore off."""
    out = set()
    for path in CLUSTERS.glob("*/osd-metadata.json"):
        doc = json.loads(path.read_text())
        for osd in doc if isinstance(doc, list) else doc.get("osd_metadata", []):
            for item in (osd.get("device_ids") or "").split(","):
                if "=" in item:
                    out.add(item.split("=", 1)[1].rsplit("_", 1)[0])
    return out


#: Hard disks of the clusters' device ids, what each is recognised as, and its rotation rate.
CLUSTER_DISKS = {
    "ATA_WDC_WD4003FFBX-68MU3N0": (None, None),
    "ATA_WDC_WD10JFCX-68N6GN0": (None, None),
    "HUH721212AL5200": (None, 7200),
    "WDC_WUH721414AL5201": (None, 7200),
    "MG07SCA12TEY": ("MG07SCA", None),
    "TOSHIBA_MG07ACA12TE": ("MG07ACA", 7200),
    "SEAGATE_ST1000NX0323": ("Enterprise Capacity 2.5 HDD v3 SAS", None),
    "WDC_WD40EFRX-68WT0N0": (None, None),
    "WDC_WD60EFRX-68L0BN1": (None, None),
    "WDC_WD80EFAX-68KNBN0": ("Red Plus (numbers before November 2020)", None),
    "WDC_WD80EFBX-68AZZN0": ("Red Plus", 7200),
    "WDC_WD101EFBX-68B0AN0": ("Red Plus", 7200),
    "WDC_WD80EFZX-68UW8N0": (None, None),
}


@needs_clusters
def test_the_clusters_hard_disks_are_among_their_device_ids():
    assert set(CLUSTER_DISKS) <= cluster_device_ids()


@pytest.mark.parametrize(("model", "expected"), sorted(CLUSTER_DISKS.items()))
def test_the_clusters_hard_disks_resolve_to_hard_disk_drives_with_their_evidence(model, expected):
    family, rpm = expected
    assert not resolve(LINES, model).candidates  # no product line: the SSD matcher is untouched
    disk = disks.recognise(model)
    assert disk is not None, model
    assert disk.text().startswith("a hard disk drive (") and disk.rule.source
    assert (disk.rule.family if disk.rule.kind == "family" else None) == family
    assert disk.rpm == rpm and (rpm is None or disk.rule.rpm_source)
    d = disk.to_dict()
    assert d["kind"] == "hard disk drive" and d["evidence"] and ("http" in d["evidence"])


@pytest.mark.parametrize(
    ("model", "text"),
    [
        ("ST4000NM0035-1V4107", "a hard disk drive (Seagate Exos 7E8 family by its model number"),
        ("ST4000NM0035", "a hard disk drive (Seagate Exos 7E8 family by its model number"),
        ("SEAGATE ST1000NX0323", "a hard disk drive (Seagate Enterprise Capacity 2.5 HDD v3 SAS family"),
        ("WDC WD4003FFBX-68MU3N0", "a hard disk drive (by the WD model-number scheme"),
        ("WDC WD10EFRX-68PJCN0", "a hard disk drive (by the WD model-number scheme"),  # a recorded smartctl output
        ("WDC WD140EDFZ-11A0VA0", "a hard disk drive (by the WD model-number scheme"),  # a recorded smartctl output
        ("ST1000NM000A-2J3100", "a hard disk drive (Seagate Exos 7E8 family"),  # a recorded smartctl output
        ("HGST HUS726040ALE610", "a hard disk drive (by the WD/HGST Ultrastar model-number scheme; 7,200 rpm"),
        ("HGST HUS726040ALS211", "a hard disk drive (by the WD/HGST Ultrastar model-number scheme; 7,200 rpm"),
        ("Seagate Exos ST4000NM0035 4TB", "a hard disk drive (Seagate Exos 7E8 family"),
        ("ST16000NM001G-2KK103", "a hard disk drive (Seagate Exos X16 family"),  # SATA manual's list
        ("SEAGATE ST12000NM002G", "a hard disk drive (Seagate Exos X16 family"),  # SAS manual's list
        ("ST18000NM004J", "a hard disk drive (Seagate Exos X18 family"),
        ("ST20000NM007H", "a hard disk drive (Seagate Exos X24 family"),
        ("SEAGATE_ST12000NM0027", "a hard disk drive (Seagate Exos X12 family"),
        ("ST10000NM0096", "a hard disk drive (Seagate Exos X10 family"),
    ],
)
def test_hard_disk_strings_say_what_they_are(model, text):
    disk = disks.recognise(model)
    assert disk is not None and disk.text().startswith(text), model


@pytest.mark.parametrize(
    "model",
    [
        "ST800FM0173",  # Seagate 1200.2 SSD: FM
        "SEAGATE_ST800FM0173",
        "ST400FM0053",
        "HUSMM1680ASS204",  # HGST Ultrastar SSD800MM
        "HUSMR1619ASS200",
        "WDS200T2B0A",  # WD SSDs
        "WDC WDS100T2B0A-00SM50",
        "ST4000DM000-1CD168",  # a hard disk no source here lists: never guessed
        "ST12000NM009G",  # a real cluster's disk, in neither Exos X16 list: never guessed from its neighbours
        "Hitachi HDS721050DLE630",
        "HPE_MB012000JYCJF",
        "QEMU_HARDDISK",
    ],
)
def test_strings_no_source_places_as_a_hard_disk_are_not_one(model):
    assert disks.recognise(model) is None


def ssd_strings() -> list[str]:
    """Real strings of solid-state drives: the recorded smartctl outputs that name a product line,
    every model of devices.db (measured SSDs and public models), the Seagate SAS SSDs' device id."""
    out = ["SEAGATE_ST800FM0173", "ST800FM0173"]
    recorded = REPO / "tests" / "fixtures" / "smartctl_json"
    for path in sorted(recorded.rglob("*.json")):
        model = json.loads(path.read_text(errors="replace")).get("model_name")
        if model and resolve(LINES, model).candidates:
            out.append(model)
    con = sqlite3.connect(DB)
    try:
        out += [r[0] for r in con.execute("SELECT model FROM devices")]
        out += [r[0] for r in con.execute("SELECT name FROM models WHERE family_key != 'seagate:constellation2'")]
    finally:
        con.close()
    return out


def test_no_solid_state_drive_string_is_classed_as_a_hard_disk():
    strings = ssd_strings()
    assert len(strings) > 100
    wrong = [s for s in strings if disks.recognise(s) is not None]
    assert not wrong


@needs_tables
def test_no_model_string_of_the_ssd_lines_tables_is_classed_as_a_hard_disk():
    checked = 0
    for row in table_rows():
        for s in model_strings(row["model_strings"]):
            assert disks.recognise(s) is None, (s, row["line"])
            checked += 1
    assert checked >= 200


def test_no_ssd_part_pattern_shares_a_string_with_a_hard_disk_rule():
    """Every listed hard disk model is outside every SSD line's part patterns, and every model the
    families list is a whole match of its own rule."""
    for rule in disks.rules():
        if rule.kind != "family":
            continue
        for model in rule.models:
            assert not resolve(LINES, model).candidates, model
            assert rule.regex.fullmatch(model) and disks.recognise(model).rule == rule


def test_a_rule_without_its_source_or_a_rate_without_its_source_is_refused():
    with pytest.raises(SourcesError, match="vendor and its source"):
        disks.parse('[[family]]\nvendor = "X"\nfamily = "Y"\nmodels = ["AB123456"]\n')
    with pytest.raises(SourcesError, match="rotation rate needs its source"):
        disks.parse('[[family]]\nvendor = "X"\nfamily = "Y"\nmodels = ["AB123456"]\nsource = "s"\nrpm = 7200\n')
    with pytest.raises(SourcesError, match="unknown table"):
        disks.parse('[[guess]]\nvendor = "X"\n')


@pytest.mark.parametrize("rpm", [None, 5400, 7200, 10000, 15000])
def test_a_hard_disk_is_unsuitable_for_every_use_that_waits_on_a_flush(rpm):
    answer = harddisk.answer(rpm, "a source" if rpm else None)
    for use in ("ceph_waldb", "zfs_slog", "postgres_wal"):
        assert answer[use]["tier"] == "unsuitable" and answer[use]["basis"] == "datasheet", use
        assert answer[use]["reasons"][0].startswith("a hard disk drive: ")
    assert answer["ceph_waldb"]["osds_per_device"]["n"] == 0
    assert any("flushed write waits for the platter" in r for r in answer["ceph_waldb"]["reasons"])
    etcd = answer["etcd"]
    if rpm == 5400:  # a revolution (11.1 ms) alone is over etcd's 10 ms
        assert etcd["tier"] == "unsuitable"
    else:  # no tier from physics alone: the best case a revolution allows, and what to measure
        assert etcd["tier"] == "unknown" and etcd["ceiling"] in ("marginal", "good")
    assert list(answer) == list(USES)


def test_the_public_figure_of_a_hard_disk_is_evidence_with_its_source(capsys):
    assert cli("lookup", "HGST HUS726040ALE610", "--db", str(DB), "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    reasons = doc[0]["verdicts"]["ceph_waldb"]["reasons"]
    public = [r for r in reasons if r.startswith("public figure: Seagate Constellation.2")]
    assert public and "117 IOPS" in public[0] and "proxmox" in public[0].lower()


def test_lookup_text_of_a_hard_disk(capsys):
    assert cli("lookup", "ST4000NM0035-1V4107", "--db", str(DB)) == 0
    out = capsys.readouterr().out
    assert out.startswith("ST4000NM0035-1V4107: a hard disk drive (Seagate Exos 7E8 family by its model number")
    assert "evidence: listed in Seagate 7E8 SATA Product Manual" in out
    assert "Ceph WAL/DB: unsuitable, basis datasheet" in out and "PostgreSQL WAL: unsuitable" in out
    assert "no device matches" not in out


def test_lookup_json_of_a_hard_disk(capsys):
    assert cli("lookup", "WDC WD4003FFBX-68MU3N0", "--db", str(DB), "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc) == 1 and doc[0]["match"] == "hard disk" and doc[0]["line"] is None
    disk = doc[0]["hard_disk"]
    assert disk["kind"] == "hard disk drive" and disk["how"] == "model-number scheme" and disk["source"]
    assert doc[0]["verdicts"]["ceph_waldb"]["tier"] == "unsuitable"
    assert doc[0]["verdicts"]["ceph_waldb"]["basis"] == "datasheet"


def test_an_ssd_number_keeps_its_line_not_a_hard_disk(capsys):
    assert cli("lookup", "SEAGATE_ST800FM0173", "--db", str(DB), "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc[0]["line"]["key"] == "seagate:12002" and "hard_disk" not in doc[0]


def test_plan_refuses_a_hard_disk_as_a_wal_db_device(capsys):
    code = cli("plan", "MG07SCA12TEY", "--data", "12x16T", "--db", str(DB))
    err = capsys.readouterr().err
    assert code == 4
    assert "MG07SCA12TEY is a hard disk drive (Toshiba MG07SCA family" in err and "not a WAL/DB device" in err
    assert "flushed writes a second at one job" in err


@needs_clusters
def test_a_cluster_names_its_hard_disks_rather_than_calling_them_absent(capsys):
    src = CLUSTERS / "clyso-05-quincy-17.2.5-hdd-no-db"
    assert cli("cluster", "--from", str(src), "--db", str(DB), "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    missing = " | ".join(doc["missing"])
    assert "hard disk drives by their model numbers (1): WDC WUH721414AL5201" in missing
    assert not any(m.startswith("not in the database") and "WUH721414AL5201" in m for m in doc["missing"])
