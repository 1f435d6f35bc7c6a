"""Every drive the database knows gets an answer per use with its basis, measured or not: a line
known from its datasheet only is answered by what its facts bound and its peers estimate, in the
same JSON shape as a measured drive (``verdicts.<use>.tier/basis/reasons``), on the committed
devices.db."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diskq.analyse.estimate import Peer, from_datasheet, media_of
from diskq.identity.facts import LineFacts
from tests.cli_support import cli

DB = Path(__file__).resolve().parent.parent / "devices.db"
USES = ("ceph_waldb", "zfs_slog", "etcd", "postgres_wal")
TIERS = {"excellent", "good", "marginal", "unsuitable", "unknown"}
BASES = {"measured", "public-figure", "datasheet", "estimate", "unknown"}


def lookup_json(query: str, capsys) -> list[dict]:
    code = cli("lookup", query, "--json", "--db", str(DB))
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


@pytest.mark.parametrize(
    "query",
    [
        "Micron 7450 MAX",
        "Samsung 990 PRO",
        "Intel Optane 900P",
        "KINGSTON SEDC600M960G",
        "CT1000MX500SSD1",
        "Samsung SSD 870 EVO 1TB",
        "SAMSUNG MZ7LH960HAJR-00005",
        "Intel SSD S4510",
    ],
)
def test_every_match_has_a_verdict_per_use_with_its_basis(query, capsys):
    entries = lookup_json(query, capsys)
    assert entries
    for e in entries:
        verdicts = e.get("verdicts") or (e.get("device") or {}).get("answers")
        assert verdicts, e.get("match")
        for use in USES:
            assert verdicts[use]["tier"] in TIERS and verdicts[use]["basis"] in BASES, (use, verdicts[use])
            assert verdicts[use]["reasons"], use
            if verdicts[use]["tier"] == "unknown":  # "unknown" says what to measure
                assert any("measure" in r or "bench" in r for r in verdicts[use]["reasons"]), verdicts[use]


def test_a_client_nvme_line_is_estimated_from_its_peers(capsys):
    (e,) = lookup_json("Samsung 990 PRO", capsys)
    ceph = e["verdicts"]["ceph_waldb"]
    assert (ceph["tier"], ceph["basis"]) == ("unsuitable", "estimate")
    assert ceph["reasons"][0].startswith("estimate: client NVMe") and ceph["peers"] >= 3


def test_at_rest_only_protection_bounds_the_answer_and_is_not_plp(capsys):
    (e,) = lookup_json("CT1000MX500SSD1", capsys)
    v = e["verdicts"]
    assert v["ceph_waldb"]["ceiling"] == "marginal" and v["ceph_waldb"]["basis"] in ("datasheet", "estimate")
    assert v["power_loss_protection"]["verdict"] == "unlikely"


def test_optane_is_no_nand_drives_peer(capsys):
    (e,) = lookup_json("Intel Optane 900P", capsys)
    for use in USES:  # NAND drives' flush figures say nothing of 3D XPoint: no estimate from them
        assert e["verdicts"][use]["basis"] != "estimate", e["verdicts"][use]
    facts = LineFacts("Intel", "Optane 905P", segment="client", interface="NVMe", nand="3D XPoint")
    peers = [Peer(f"N{i}", "client", "NVMe", None, ceph_iops=400.0) for i in range(5)]
    assert media_of(facts) == "3D XPoint"
    assert from_datasheet(facts, peers)["ceph_waldb"]["tier"] == "unknown"


def test_the_line_answer_is_stored_once_and_read_by_lookup(capsys):
    import sqlite3

    con = sqlite3.connect(DB)
    stored = json.loads(
        con.execute(
            "SELECT a.answers FROM line_answers a JOIN lines l ON l.key = a.line_key WHERE l.title = 'Micron 7450'"
        ).fetchone()[0]
    )
    con.close()
    (e,) = lookup_json("Micron 7450 MAX", capsys)
    assert e["verdicts"]["power_loss_protection"] == stored["power_loss_protection"]
    assert e["verdicts"]["ceph_waldb"]["reasons"] == stored["ceph_waldb"]["reasons"]


def test_plan_refuses_a_line_known_from_its_datasheet_only(capsys):
    assert cli("plan", "Micron 7450 MAX", "--data", "12x16T", "--db", str(DB)) == 4
    err = capsys.readouterr().err
    assert "Micron 7450 is known from its datasheet only: nothing measured to plan from" in err
    assert "Ceph WAL/DB: no verdict" in err and "Traceback" not in err
