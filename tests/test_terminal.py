"""Text from data reaches the terminal as text: escape sequences (clear screen, OSC 52 clipboard
writes, a fake line over a real one) and rich markup in hostnames, drive models and file names of
cluster outputs, fleet documents and a devices.db from elsewhere are shown, never acted on."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diskq.cli._terminal import clean, console, json_text
from diskq.database.synthetic import result_document
from tests.cli_support import cli

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "devices.db"
CLUSTERS = Path(os.environ.get("DISKQ_CEPH_CLUSTERS") or REPO.parent / "shared" / "data" / "ceph-clusters")
METADATA = CLUSTERS / "clyso-02-pacific-16.2.10-hdd-24-per-nvme-db" / "osd-metadata.json"

CLEAR = "\x1b[2J\x1b[H"
CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"
FAKE = "\rALL GOOD" + " " * 40
LINK = "[link=https://evil.example]PM883[/link]"
#: What a terminal acts on: ESC, BEL, CR, backspace, C1 controls, bidirectional overrides.
ACTED_ON = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def hostile(name: str) -> str:
    return f"{name}{CLEAR}{CLIPBOARD}{FAKE}"


def assert_inert(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text, repr(text[:400])
    assert "\x1b]8;" not in text  # no hyperlink
    assert "Traceback" not in text


@given(st.text())
def test_clean_leaves_nothing_a_terminal_acts_on_and_keeps_the_rest_in_order(text):
    out = clean(text)
    assert not ACTED_ON.search(out)
    it = iter(text)
    assert all(c in it for c in out)  # a subsequence: characters are removed, never added or moved
    assert clean(out) == out


def test_the_console_cleans_text_drops_links_and_reads_no_markup_unless_asked(capsys):
    from rich.text import Text

    out = console(force_terminal=True, color_system="standard", width=200, highlight=False)
    out.print(hostile("model "), LINK)
    out.print(Text(hostile("text object "), style="link https://evil.example"))
    out.print("[bold]fixed words[/]", markup=True)
    got = capsys.readouterr().out
    assert "[link=https://evil.example]PM883[/link]" in got  # data: shown as written
    assert "\x1b]8;" not in got and "\x1b]52" not in got and "\x1b[2J" not in got and "\r" not in got
    assert "\x1b[1m" in got  # rich's own styling still reaches the terminal


def test_json_keeps_its_meaning_without_raw_controls():
    doc = {"model": "a\x9b2Jb\u202ec\x7f"}
    text = json_text(json.dumps(doc, ensure_ascii=False))
    assert not ACTED_ON.search(text) and json.loads(text) == doc


def _fleet(root: Path) -> None:
    for host, dev in (("h1", "sdb"), ("h2", "sdb"), ("h3", "sdb")):
        doc = result_document(hostile("PM883 ") + LINK, {"off": {1: 12680, 2: 24000, 4: 41000}}, firmware="[/]")
        doc["device"]["path"] = "/dev/" + hostile("sdb")
        (root / host).mkdir(parents=True)
        (root / host / f"{dev}.json").write_text(json.dumps(doc))
    (root / "h1" / "status.json").write_text(
        json.dumps(
            {
                "host": hostile("h1"),
                "state": "done",
                "candidates": [],
                "benches": [
                    {"path": "/dev/sdd", "name": hostile("sdd"), "rc": 1, "error": hostile("diskq: error: ") + "[/]"}
                ],
            }
        )
    )
    (root / "h4").mkdir()
    (root / "h4" / "status.json").write_text(json.dumps({"host": "h4", "state": "unreachable", "reason": hostile("x")}))


def test_fleet_report_shows_hostile_names_as_text(tmp_path, capsys):
    _fleet(tmp_path / "results")
    assert cli("fleet", "report", str(tmp_path / "results")) == 0
    out, err = capsys.readouterr()
    assert_inert(out + err)
    assert "[/]" in out and "[link=https://evil.example]" in out  # shown as written, not read as markup
    assert "ALL GOOD" in out  # shown, but on no line of its own: the carriage return is gone
    assert not any(line.startswith("ALL GOOD") for line in out.splitlines())


def test_fleet_report_json_carries_no_raw_control_character(tmp_path, capsys):
    _fleet(tmp_path / "results")
    assert cli("fleet", "report", str(tmp_path / "results"), "--json") == 0
    out = capsys.readouterr().out
    assert_inert(out)
    assert "PM883 \x1b[2J\x1b[H\x1b]52;c;" in out.replace("\\u001b", "\x1b") or "PM883 \\u001b[2J" in out


def test_lookup_and_plan_show_hostile_model_names_from_a_database_as_text(tmp_path, capsys):
    db = tmp_path / "downloaded.db"
    shutil.copy(COMMITTED, db)
    con = sqlite3.connect(db)
    con.execute("UPDATE devices SET model = ? || model WHERE model LIKE '%PM883%'", (hostile("") + LINK,))
    con.execute("UPDATE submissions SET model = ? || model WHERE model LIKE '%PM883%'", (hostile(""),))
    con.commit()
    con.close()
    for args in (("lookup", "pm883"), ("plan", "pm883", "--data", "4x8T")):
        code = cli(*args, "--db", str(db))
        out, err = capsys.readouterr()
        assert_inert(out + err)
        assert code == 0 or err.startswith("diskq: error:"), err


def test_an_error_naming_a_hostile_file_is_one_clean_line(tmp_path, capsys):
    name = tmp_path / f"x{CLEAR}{CLIPBOARD}.json"
    assert cli("lookup", "pm883", "--db", str(name)) != 0
    err = capsys.readouterr().err
    assert_inert(err) and err.startswith("diskq: error:")


@pytest.mark.skipif(
    not METADATA.is_file(),
    reason=f"recorded cluster outputs absent ({CLUSTERS.name} next to the repository): they are not committed",
)
def test_cluster_shows_hostile_hostnames_and_device_ids_as_text(tmp_path, capsys):
    meta = json.loads(METADATA.read_text())
    for osd in meta[:5]:
        osd["hostname"] = hostile("node ") + "[/]"
        if osd.get("device_ids"):
            osd["device_ids"] = hostile("sda=ATA_") + LINK + "_S1"
    (tmp_path / "osd-metadata.json").write_text(json.dumps(meta))
    (tmp_path / f"perf-dump.{CLEAR}.json").write_text("{}")
    code = cli("cluster", "--from", str(tmp_path), "--db", str(COMMITTED))
    out, err = capsys.readouterr()
    assert code == 0, err
    assert_inert(out + err)


def test_every_command_module_writes_only_through_the_terminal_function():
    """No command module makes its own rich Console or prints a bare line: the consoles come from
    diskq.cli.app (diskq.cli._terminal), plain lines from say()."""
    cli_dir = REPO / "src" / "diskq" / "cli"
    offenders = []
    for path in sorted(cli_dir.glob("*.py")):
        if path.name == "_terminal.py":
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
                if (
                    name == "Console"
                    or (name == "print" and isinstance(f, ast.Name))
                    or (name == "echo" and owner == "typer")
                ):
                    offenders.append(f"{path.name}:{node.lineno}")
    # --version prints the package's own name and version: no data
    assert offenders == ["app.py:" + str(_version_line(cli_dir / "app.py"))], offenders


def _version_line(path: Path) -> int:
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if 'print(f"diskq {version()}' in line:
            return i
    return -1


_TAG = re.compile(r"\[/\]|\[/?(?:bold|red|yellow|green|dim|italic|cyan|magenta|blue)\b[^\]]*\]")


def _markup_consoles(func: ast.AST) -> set[str]:
    """Names a function binds to a console made with markup=True (``out = stdout_console(markup=True)``)."""
    names = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            if any(k.arg == "markup" and getattr(k.value, "value", None) is True for k in node.value.keywords):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def test_no_markup_is_printed_as_text_by_a_console_that_reads_none():
    # "[bold]Other health checks[/]" reached the cluster report's reader as typed: the consoles read
    # markup only where a print, or the console it prints on, asks for it
    root = Path(__file__).resolve().parents[1] / "src" / "diskq"
    literal = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            consoles = _markup_consoles(func)
            for call in ast.walk(func):
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                    continue
                if call.func.attr != "print":
                    continue
                if any(k.arg == "markup" and getattr(k.value, "value", None) is True for k in call.keywords):
                    continue
                if isinstance(call.func.value, ast.Name) and call.func.value.id in consoles:
                    continue
                texts = [n.value for a in call.args for n in ast.walk(a) if isinstance(n, ast.Constant)]
                if any(isinstance(t, str) and _TAG.search(t) for t in texts):
                    literal.append(f"{path.relative_to(root)}:{call.lineno}")
    assert sorted(set(literal)) == []


def test_the_cluster_report_names_other_health_checks_without_markup_text(tmp_path, capsys):
    (tmp_path / "health.json").write_text(
        json.dumps(
            {
                "status": "HEALTH_WARN",
                "checks": {"OSDMAP_FLAGS": {"severity": "HEALTH_WARN", "summary": {"message": "noout flag(s) set"}}},
            }
        )
    )
    (tmp_path / "osd-metadata.json").write_text(
        json.dumps([{"id": 0, "hostname": "h1", "bluestore_bdev_devices": "sda"}])
    )
    cli("cluster", "--from", str(tmp_path))
    out = capsys.readouterr().out
    assert "Other health checks" in out and "OSDMAP_FLAGS" in out
    assert "[bold]" not in out and "[/]" not in out
