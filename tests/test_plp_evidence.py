"""Power-loss protection from every kind of evidence, judged by :func:`diskq.analyse.plp.judge`:
datasheet facts built from the real rows of ../shared/data/datasheets/ (primary and secondary),
"at rest only" never counting as protection, the second-hand statements of ../shared/data/plp/
(smartmontools' drive database, the OpenZFS hardware list, reviewers) each with its own strength,
NVMe vwc, the measurement, the segment as a weak prior, and targets that are not drives."""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diskq.analyse import secondhand
from diskq.analyse.plp import evaluate_device, judge
from diskq.identity.facts import LineFacts
from diskq.probe.identity import identity_from_sysfs
from diskq.result import Device
from tests.test_plp import doc, run

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DISKQ_SHARED") or REPO.parent / "shared") / "data"
SHEETS = SHARED / "datasheets"
needs_sheets = pytest.mark.skipif(not SHEETS.is_dir(), reason=f"datasheet tables absent ({SHEETS}): not committed")
DRIVEDB = Path("/usr/share/smartmontools/drivedb.h")


def _rows() -> list[dict]:
    rows = []
    for path in sorted(SHEETS.glob("*.csv")):
        with path.open(newline="") as f:
            for row in csv.DictReader(f):
                row["plp_evidence"] = row.get("plp_evidence") or row.get("plp_evidence(primary|secondary)") or ""
                rows.append(row)
    return rows


def facts(vendor: str, line: str) -> LineFacts:
    """LineFacts from the real row of the datasheet tables (only the fields the verdict reads)."""
    row = next((r for r in _rows() if r["vendor"] == vendor and r["line"] == line), None)
    assert row is not None, f"no row {vendor} {line}"
    segment = row["segment"].split(" (")[0].strip() or None
    return LineFacts(
        vendor=row["vendor"],
        line=row["line"],
        segment=segment,
        segment_basis="naming only" if "naming only" in row["segment"] else "datasheet",
        plp=row["plp"] or None,
        plp_quote=row["plp_quote"] or None,
        plp_source=row["plp_url"] or None,
        plp_evidence=row["plp_evidence"] or None,
    )


def kinds(v) -> list[tuple[str, str, str | None]]:
    return [(e.kind, e.points_to, e.strength) for e in v.evidence]


# --- datasheet facts ---------------------------------------------------------------------------


@needs_sheets
def test_a_primary_datasheet_statement_is_likely_with_its_quote():
    v = judge(facts("Intel", "DC S3610"), None, None, None)
    assert (v.verdict, v.rule) == ("likely", "documented")
    assert ("documented", "plp", "primary") in kinds(v)
    assert "Enhanced power-loss data protection feature" in v.evidence[0].text
    assert v.evidence[0].source.startswith("https://manualmachine.com/")
    assert "primary evidence" in v.reasons[0]


@needs_sheets
def test_a_secondary_statement_is_likely_and_says_it_is_secondary():
    v = judge(facts("Micron", "7450 PRO/MAX"), None, None, None)
    assert (v.verdict, v.rule) == ("likely", "documented")
    assert ("documented", "plp", "secondary") in kinds(v)
    # the OpenZFS list names it too, as weak evidence of its own kind
    assert ("hardware-list", "plp", "weak") in kinds(v)
    assert "secondary evidence" in v.reasons[0]


@needs_sheets
@pytest.mark.parametrize("vendor,line,strength", [("Crucial", "MX300", "primary"), ("Crucial", "MX500", "secondary")])
def test_at_rest_only_is_not_power_loss_protection(vendor, line, strength):
    v = judge(facts(vendor, line), None, None, None)
    assert (v.verdict, v.rule) == ("unlikely", "documented_absent")
    assert ("documented", "no_plp", strength) in kinds(v)
    assert any("at rest only" in e.text and "not power-loss protection" in e.text for e in v.evidence)
    # the reviewer who says the same is carried with its own kind and strength
    assert ("review", "no_plp", "secondary") in kinds(v)


@needs_sheets
def test_at_rest_only_against_a_fast_cache_off_measurement_is_a_conflict_never_protection():
    measured = doc(run("on", 20000, nosync=24000), run("off", 19000), model="Crucial_CT1000MX500SSD1")
    v = judge(facts("Crucial", "MX500"), measured.runs, True, None, model=measured.device.model)
    assert (v.verdict, v.rule) == ("unknown", "conflicting_evidence")
    assert "at rest only" in v.conflicts[0] and "measured, primary" in v.conflicts[0]


@needs_sheets
def test_a_documented_no_is_unlikely():
    v = judge(facts("Crucial", "MX100"), None, None, None)
    assert (v.verdict, v.rule) == ("unlikely", "documented_absent")


@needs_sheets
def test_measured_and_documented_agree_is_confirmed():
    measured = doc(run("on", 20000, nosync=24000), run("off", 19000), model="INTEL SSDSC2BX800G4")
    v = judge(facts("Intel", "DC S3610"), measured.runs, True, None, model=measured.device.model)
    assert (v.verdict, v.rule) == ("confirmed", "measured_and_documented")


# --- second-hand statements ---------------------------------------------------------------------


@needs_sheets
def test_a_capacitor_test_in_the_drive_database_is_secondary_evidence():
    v = judge(facts("Intel", "D3-S4510"), None, None, None)
    assert (v.verdict, v.rule) == ("likely", "secondhand")
    assert ("drive-database", "plp", "secondary") in kinds(v)
    # the datasheet row states nothing: shown as neutral, not as "no"
    assert ("documented", "neutral", None) in kinds(v)
    assert any(e.source and "smartmontools" in e.source for e in v.evidence)


@needs_sheets
def test_a_line_only_inferred_from_a_pattern_is_weak_and_does_not_decide():
    v = judge(facts("Intel", "D3-S4610"), None, None, None)
    assert (v.verdict, v.rule) == ("unknown", "too_little_evidence")
    assert ("drive-database", "plp", "weak") in kinds(v)
    assert ("segment", "plp", "weak") in kinds(v)
    assert "only weak evidence" in v.reasons[-1]


@needs_sheets
def test_the_openzfs_list_alone_is_weak():
    v = judge(facts("Kingston", "DC500M"), None, None, None)
    assert (v.verdict, v.rule) == ("unknown", "too_little_evidence")
    assert ("hardware-list", "plp", "weak") in kinds(v)
    assert any("admits drives that protect only flushed data" in e.text for e in v.evidence)


@needs_sheets
def test_the_catch_all_samsung_entry_is_weak():
    v = judge(facts("Samsung", "PM883"), None, None, None)
    assert v.verdict == "unknown"
    assert ("drive-database", "plp", "weak") in kinds(v)


@needs_sheets
def test_no_dram_cache_on_a_client_optane_outweighs_the_segment_prior():
    v = judge(facts("Intel", "Optane 900P"), None, None, None)
    assert (v.verdict, v.rule) == ("likely", "secondhand")
    assert ("review", "plp", "secondary") in kinds(v) and ("segment", "no_plp", "weak") in kinds(v)
    assert any(r.startswith("outweighed: weak segment evidence") for r in v.reasons)


@needs_sheets
def test_a_low_authority_blog_and_the_prior_only_make_it_unlikely_by_the_prior():
    v = judge(facts("WD", "WD Blue SN580"), None, None, None)
    assert (v.verdict, v.rule) == ("unlikely", "segment_prior")
    assert ("review", "no_plp", "weak") in kinds(v)


def test_model_strings_find_second_hand_statements_of_a_measured_drive():
    v = evaluate_device(Device(model="INTEL SSDSC2KB480G8", volatile_write_cache=True))
    assert (v.verdict, v.rule) == ("likely", "secondhand")


# --- segment prior, vwc ---------------------------------------------------------------------------


@needs_sheets
def test_a_client_line_with_nothing_stated_is_unlikely_by_the_named_prior():
    v = judge(facts("Samsung", "990 PRO"), None, None, None)
    assert (v.verdict, v.rule) == ("unlikely", "segment_prior")
    assert kinds(v)[-1] == ("segment", "no_plp", "weak")
    assert "weak prior from the segment alone" in v.reasons[-1]
    assert "anandtech.com" in v.evidence[-1].text  # the general statements behind the prior


def test_a_data_centre_segment_alone_never_makes_it_likely():
    v = judge(None, None, None, "data-centre")
    assert (v.verdict, v.rule) == ("unknown", "too_little_evidence")
    assert kinds(v) == [("segment", "plp", "weak")]


def test_no_evidence_at_all_is_unknown():
    v = judge(None, None, None, None, entries=(), statements=())
    assert (v.verdict, v.rule, v.evidence) == ("unknown", "too_little_evidence", [])


def test_vwc_zero_is_reported_evidence_and_vwc_one_says_nothing():
    assert judge(None, None, False, None).rule == "reported"
    assert judge(None, None, True, None).verdict == "unknown"


def test_vwc_zero_against_a_client_prior_outweighs_it():
    v = judge(None, None, False, "client")
    assert (v.verdict, v.rule) == ("likely", "reported")
    assert any(r.startswith("outweighed") for r in v.reasons)


# --- not a drive --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "device",
    [
        Device(path="/dev/zram0", model="Linux zram device"),
        Device(path="/tmp/x/test.img", kind="file", filesystem="ext4"),
        Device(path="/dev/loop7", model="Linux loop device", volatile_write_cache=False),
    ],
)
def test_loop_zram_and_files_are_not_applicable(device):
    v = evaluate_device(device)
    assert (v.verdict, v.rule, v.evidence) == ("not-applicable", "not_applicable", [])
    assert v.reasons[0].startswith("not applicable: a ")


def test_a_real_loop_device_is_not_applicable(make_loop):
    dev = make_loop(8 * 1024 * 1024)
    device = identity_from_sysfs(Path(dev).name)
    v = evaluate_device(device.model_copy(update={"path": dev}))
    assert (v.verdict, v.rule) == ("not-applicable", "not_applicable")
    assert "a Linux loop device" in v.reasons[0]


# --- the statement list itself -------------------------------------------------------------------


def test_the_packaged_statements_are_valid_and_cite_https_sources():
    data = json.loads((REPO / "src/diskq/analyse/plp_secondhand.json").read_text())
    assert secondhand.validate(data) == []
    statements = secondhand.load()
    assert {s.kind for s in statements} == {"drive-database", "hardware-list", "review"}
    assert all(s.source.startswith("https://") and s.why and s.checked for s in statements)
    # what the installed drive database confirms is said so, and what nobody checked is said so too
    assert sum(s.checked.startswith("against smartmontools 7.3") for s in statements) >= 5
    assert all(s.checked.startswith("not checked") for s in statements if s.kind == "review")


@pytest.mark.parametrize(
    "mutate,expected",
    [
        (lambda e: e.update(source="http://example.com/x"), "https URL"),
        (lambda e: e.update(strength="primary"), "strength"),
        (lambda e: e.update(quote="<script>"), "markup"),
        (lambda e: e.update(model="(a+)+"), "nested quantifiers"),
        (lambda e: e.update(examples=["NOT A MATCH"]), "does not match its own model pattern"),
        (lambda e: e.update(lines=[], segment=None, model=None, examples=[]), "neither a line, a segment nor a model"),
    ],
)
def test_hostile_statements_are_refused(mutate, expected):
    data = json.loads((REPO / "src/diskq/analyse/plp_secondhand.json").read_text())
    mutate(data["entries"][0])
    problems = secondhand.validate(data)
    assert problems and any(expected in p for p in problems), problems


@needs_sheets
def test_every_line_named_in_the_statements_is_a_line_of_the_tables():
    known = {(r["line"]) for r in _rows()}
    named = {line for s in secondhand.load() for line in s.lines}
    # the Samsung PM863/SM863 of the OpenZFS list and the client Micron 1100 are named as the list does
    assert named - known <= {"1100"}, named - known


def _drivedb_entries(text: str) -> list[tuple[str, str]]:
    """(regex, entry text) of each drivedb.h entry: C string literals, comments dropped."""
    out = []
    for block in text.split("\n  { ")[1:]:
        code = re.sub(r"//[^\n]*", "", block)
        strings = re.findall(r'"((?:[^"\\]|\\.)*)"', code)
        # adjacent literals are one string in C: the family, then the model regex
        parts = re.split(r'"\s*,\s*"', code.split("}", 1)[0])
        if len(strings) >= 2 and len(parts) >= 2:
            regex = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', '"' + parts[1] + '"'))
            out.append((regex, block))
    return out


@pytest.mark.skipif(not DRIVEDB.is_file(), reason="smartmontools' drivedb.h is not installed")
def test_drive_database_statements_agree_with_the_installed_drivedb():
    entries = _drivedb_entries(DRIVEDB.read_text(errors="replace"))
    checked = 0
    for s in secondhand.load():
        if s.kind != "drive-database" or not s.examples:
            continue
        attributes = re.findall(r",([A-Za-z_]+) ", s.quote)
        for example in s.examples:
            found = [body for regex, body in entries if regex and re.fullmatch(regex, example)]
            if not found:
                continue  # newer than the installed database (7.5 patterns, Solidigm names)
            assert any(a in found[0] for a in attributes), (example, attributes)
            checked += 1
    assert checked >= 3


# --- invariants ---------------------------------------------------------------------------------

CLAIMS = st.sampled_from(["yes", "at-rest-only", "no", "not stated", None])


@st.composite
def line_facts(draw, plp=CLAIMS):
    return LineFacts(
        vendor=draw(st.sampled_from(["ACME", "Crucial", "Intel"])),
        line=draw(st.sampled_from(["X1", "MX500", "D3-S4610", "Optane 900P"])),
        segment=draw(st.sampled_from(["data-centre", "client", "NAS", None])),
        plp=draw(plp),
        plp_evidence=draw(st.sampled_from(["primary", "secondary", None])),
    )


@settings(max_examples=150)
@given(
    f=line_facts(plp=st.just("at-rest-only")),
    vwc=st.sampled_from([True, None]),
    on=st.floats(min_value=100, max_value=200_000),
    off=st.none() | st.floats(min_value=100, max_value=200_000),
)
def test_at_rest_only_is_never_confirmed_or_likely(f, vwc, on, off):
    runs = [run("on", on, nosync=on * 1.1)] + ([run("off", off)] if off else [])
    v = judge(f, doc(*runs).runs, vwc, None)
    assert v.verdict not in ("confirmed", "likely"), v


@settings(max_examples=150)
@given(
    f=st.none() | line_facts(plp=st.sampled_from(["not stated", None])),
    segment=st.sampled_from(["data-centre", "client", "NAS", None]),
    vwc=st.sampled_from([True, None]),
)
def test_weak_evidence_alone_never_makes_it_likely(f, segment, vwc):
    # nothing stated, nothing reported, nothing measured, no second-hand statement of primary or
    # secondary strength: whatever the segment, never confirmed or likely
    weak_only = tuple(s for s in secondhand.load() if s.strength == "weak")
    v = judge(f, None, vwc, segment, statements=weak_only, entries=())
    assert v.verdict not in ("confirmed", "likely"), v
    assert all(e.strength in ("weak", None) for e in v.evidence)


def test_a_free_flush_confirms_primary_evidence_but_not_second_hand_evidence():
    free = doc(run("on", 18000, nosync=20000), model="INTEL SSDSC2KB480G8").runs
    # smartmontools' capacitor test for the S4510 (secondary) and a free flush: still likely
    v = judge(None, free, True, None, model="INTEL SSDSC2KB480G8", entries=())
    assert (v.verdict, v.rule) == ("likely", "secondhand")
    # the drive's own report (vwc = 0, primary) and the same free flush: confirmed
    v = judge(None, free, False, None, entries=(), statements=())
    assert (v.verdict, v.rule) == ("confirmed", "measured_and_reported")
