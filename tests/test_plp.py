"""Power-loss protection: facts read from recorded smartctl and nvme-cli outputs, the verdict's
measured rules on synthetic curves, the datasheet list's validator on hostile entries, and the
invariant that a consumer drive without evidence never comes out confirmed or likely."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diskq.analyse import annotate, datasheets
from diskq.analyse.hostdevice import not_a_drive
from diskq.analyse.memorybacked import memory_backed_note
from diskq.analyse.model import PlpFact
from diskq.analyse.plp import evaluate, evaluate_device
from diskq.probe import nvme
from diskq.probe.plp import facts_from_smartctl_json, vwc_fact
from diskq.probe.smartctl import identity_from_smartctl_json
from diskq.result import Device, Latency, Method, Point, ResultDocument, Run
from tests.conftest import needs_fio, needs_loop

FIXTURES = Path(__file__).parent / "fixtures"
SMART = FIXTURES / "smartctl_json"
NVME = FIXTURES / "nvme_cli"
FAST = 5000  # criteria.toml [power_loss_protection] fast_sync_iops


def smart(name: str) -> dict:
    return json.loads((SMART / name).read_text())


def attr(data: dict, attr_id: int) -> dict:
    return next(r for r in data["ata_smart_attributes"]["table"] if r["id"] == attr_id)


def entry(model: str, plp: str, examples: list[str], **kw) -> dict:
    return {
        "model": model,
        "examples": examples,
        "plp": plp,
        "title": "Vendor product brief",
        "source": "https://example.com/brief.pdf",
        "read": "2026-01-02",
        "quote": "Power loss protection",
        **kw,
    }


def entries(*items: dict) -> tuple:
    return tuple(
        datasheets.DatasheetList.model_validate(
            {"format": "diskq-plp-datasheets", "version": 1, "entries": list(items)}
        ).entries
    )


# --- reported evidence, from recorded outputs ------------------------------------------------


def test_intel_capacitor_test_is_reported_and_passing():
    facts = facts_from_smartctl_json(smart("sce__INTEL_SSDSC2KB240G8.json"))
    caps = [f for f in facts if "Power_Loss_Cap_Test" in f.field]
    assert [f.field for f in caps] == ["ATA attribute 175 Power_Loss_Cap_Test", "ATA attribute 235 Power_Loss_Cap_Test"]
    assert all(f.supports == "plp" and not f.warning and f.raw == "2673 (725 65535)" for f in caps)
    counters = [f for f in facts if "Unsafe_Shutdown_Count" in f.field]
    assert counters and all(f.supports == "neutral" and f.raw == "721" for f in counters)
    verdict = evaluate_device(identity_from_smartctl_json(smart("sce__INTEL_SSDSC2KB240G8.json")))
    assert (verdict.verdict, verdict.rule) == ("likely", "reported")


def test_documented_and_reported_intel_s4500_without_a_measurement_is_likely_not_confirmed():
    device = identity_from_smartctl_json(smart("sce__INTEL_SSDSC2KB960G7.json"))
    verdict = evaluate_device(device)
    assert verdict.verdict == "likely"
    documented = [e for e in verdict.evidence if e.kind == "documented"]
    assert len(documented) == 1 and documented[0].points_to == "plp"
    assert documented[0].source.startswith("https://") and "S4500/S4600" in documented[0].text


def test_micron_5300_counter_alone_says_nothing():
    device = identity_from_smartctl_json(smart("sce__Micron_5300_MTFDDAK3T8TDS.json"))
    assert [f.field for f in device.plp_facts] == ["ATA attribute 174 Unexpect_Power_Loss_Ct"]
    assert evaluate_device(device).verdict == "unknown"


@pytest.mark.parametrize(
    "name", ["scrutiny__Samsung_SSD_970_EVO_500GB__x.json", "sce__SAMSUNG_MZQL23T8HCLS-00A07.json"]
)
def test_nvme_critical_warning_clear_is_neutral(name):
    facts = facts_from_smartctl_json(smart(name))
    assert [(f.field, f.raw, f.supports, f.warning) for f in facts] == [
        ("NVMe SMART/Health critical_warning bit 4", "0x00", "neutral", False)
    ]
    assert evaluate_device(identity_from_smartctl_json(smart(name))).verdict == "unknown"


def test_failing_capacitor_test_is_a_warning_and_degraded():
    data = smart("sce__INTEL_SSDSC2KB240G8.json")
    attr(data, 175)["value"] = 1  # the recorded output with the test failed: normalized value below the threshold (10)
    device = identity_from_smartctl_json(data)
    failing = [f for f in device.plp_facts if f.warning]
    assert [f.field for f in failing] == ["ATA attribute 175 Power_Loss_Cap_Test"]
    verdict = evaluate_device(device)
    assert (verdict.verdict, verdict.rule) == ("degraded", "backup_failing")
    # in the database one drive's failing backup is that drive's state, not the model's
    per_model = evaluate_device(device, per_model=True)
    assert per_model.verdict == "likely" and any(
        "reported its power-loss backup failing" in r for r in per_model.reasons
    )


def test_smartctl_when_failed_is_a_failing_test_too():
    data = smart("sce__INTEL_SSDSC2BB016T4.json")
    attr(data, 175)["when_failed"] = "FAILING_NOW"
    assert [f.warning for f in facts_from_smartctl_json(data) if "Cap_Test" in f.field] == [True]


def test_nvme_backup_failed_bit_is_a_warning():
    data = smart("sce__SAMSUNG_MZQL23T8HCLS-00A07.json")
    data["nvme_smart_health_information_log"]["critical_warning"] = 0x10
    device = identity_from_smartctl_json(data)
    assert [(f.raw, f.warning, f.supports) for f in device.plp_facts] == [("0x10", True, "plp")]
    assert evaluate_device(device).verdict == "degraded"


def test_odd_smartctl_values_are_left_out_not_crashed_on():
    data = smart("scrutiny__Samsung_SSD_970_EVO_500GB__x.json")
    data["nvme_smart_health_information_log"]["critical_warning"] = "0x10"
    assert facts_from_smartctl_json(data) == []
    assert facts_from_smartctl_json([1, 2]) == []
    assert facts_from_smartctl_json({"ata_smart_attributes": {"table": [None, {"id": 175}]}}) == []


def test_vwc_from_recorded_id_ctrl_outputs():
    intel = nvme.parse_id_ctrl((NVME / "telegraf__INTEL_SSDPE_masked__id-ctrl.txt").read_text())
    wd = nvme.parse_id_ctrl((NVME / "ipa__WDC_PC_SN730_256G__id-ctrl.json").read_text())
    assert (intel["vwc"], wd["vwc"]) == (0, 7)
    assert vwc_fact(intel["vwc"]).supports == "plp"
    assert vwc_fact(wd["vwc"]).supports == "neutral"
    device = Device(
        model="INTEL SSDPEDABCDEFG", protocol="nvme", volatile_write_cache=False, plp_facts=[vwc_fact(intel["vwc"])]
    )
    verdict = evaluate_device(device)
    assert verdict.verdict == "likely"
    # the reported fact is listed once (not again from volatile_write_cache)
    assert sum(e.kind == "reported" for e in verdict.evidence) == 1


def test_probe_keeps_the_raw_vwc_field(monkeypatch):
    from diskq import proc

    text = (NVME / "ipa__WDC_PC_SN730_256G__id-ctrl.json").read_text()
    monkeypatch.setattr(proc, "run", lambda argv, **kw: proc.Completed(argv, 0, text, ""))
    assert nvme.probe_vwc_field("/dev/nvme0") == (7, None)
    assert nvme.probe_vwc("/dev/nvme0") == (True, None)
    assert vwc_fact(7).raw == "0x7"


def test_old_documents_without_facts_still_count_a_reported_missing_cache():
    verdict = evaluate_device(Device(model="x", volatile_write_cache=False))
    assert verdict.verdict == "likely" and verdict.evidence[0].source == "volatile_write_cache"


def run_identify(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "DISKQ_JOURNAL_DIR": str(tmp_path / "j")}
    return subprocess.run(
        [sys.executable, "-m", "diskq", "identify", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_identify_shows_the_warning_and_the_verdict(tmp_path):
    data = smart("sce__INTEL_SSDSC2KB240G8.json")
    attr(data, 235)["value"] = 1
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    text = run_identify("--smartctl-json", str(path), tmp_path=tmp_path)
    assert text.returncode == 0, text.stderr
    assert "warning: ATA attribute 235 Power_Loss_Cap_Test" in " ".join(text.stdout.split())
    assert "power-loss protection: degraded" in text.stdout
    out = run_identify("--smartctl-json", str(SMART / "sce__INTEL_SSDSC2KB960G7.json"), "--json", tmp_path=tmp_path)
    doc = json.loads(out.stdout)
    assert doc["model"] == "INTEL SSDSC2KB960G7"  # the identity document keeps its keys
    assert doc["power_loss_protection"]["verdict"] == "likely"
    assert {f["field"] for f in doc["plp_facts"]} >= {"ATA attribute 175 Power_Loss_Cap_Test"}


# --- measured rules, on synthetic curves ---------------------------------------------------


def point(numjobs: int, iops: float) -> Point:
    return Point(
        numjobs=numjobs,
        iops=iops,
        bw_bytes=iops * 4096,
        total_ios=int(iops * 10),
        runtime_ms=10_000,
        lat_us=Latency(p99=20.0),
        sync_lat_us=Latency(p99=200.0),
    )


def run(cache: str, solo: float, *, nosync: float | None = None, mechanism: str | None = "hdparm") -> Run:
    return Run(
        write_cache=cache,
        cache_mechanism=mechanism,
        points=[point(1, solo), point(4, solo * 3)],
        nosync=None if nosync is None else point(1, nosync),
    )


def doc(
    *runs: Run,
    model: str = "Samsung SSD 860 EVO 1TB",
    volatile: bool | None = True,
    facts: list[PlpFact] | None = None,
    notes: list[str] | None = None,
) -> ResultDocument:
    d = ResultDocument(
        device=Device(model=model, volatile_write_cache=volatile, plp_facts=facts or []),
        method=Method(),
        runs=list(runs),
        notes=notes or [],
    )
    return annotate(d)


def test_annotate_puts_the_verdict_in_the_document():
    d = doc(run("on", 20000, nosync=24000), run("off", 19000))
    assert d.verdicts.power_loss_protection.verdict == "likely"
    assert d.verdicts.power_loss_protection.rule == "measured"
    assert json.loads(d.to_json())["verdicts"]["power_loss_protection"]["verdict"] == "likely"


def test_flush_that_costs_flash_time_is_against():
    v = evaluate(doc(run("on", 500, nosync=20000)), entries=())
    assert (v.verdict, v.rule) == ("unlikely", "measured_against")
    assert [e.points_to for e in v.evidence] == ["no_plp"]


def test_free_flush_alone_cannot_tell_plp_from_ignored_flushes():
    v = evaluate(doc(run("on", 18000, nosync=20000)), entries=())
    assert (v.verdict, v.rule) == ("unknown", "too_little_evidence")
    assert "ignored flushes" in v.reasons[0]


def test_fast_only_with_the_cache_on_is_against():
    v = evaluate(doc(run("on", 18000, nosync=20000), run("off", 800)), entries=())
    assert (v.verdict, v.rule) == ("unlikely", "measured_against")
    assert any(e.source == "cache A/B" and e.points_to == "no_plp" for e in v.evidence)


def test_slow_with_the_cache_off_alone_says_nothing():
    # the community table's Intel S4510 (a drive with PLP) gives 1 600 with its cache off
    v = evaluate(doc(run("off", 1600)), entries=())
    assert v.verdict == "unknown" and [e.points_to for e in v.evidence] == ["neutral"]


def test_kernel_knob_off_is_not_a_cache_off_measurement():
    v = evaluate(doc(run("off", 40000, mechanism="sysfs")), entries=())
    assert v.verdict == "unknown" and v.evidence == []


def test_measured_and_documented_agree_is_confirmed():
    sheet = entries(entry("ACME DC1 .*", "yes", ["ACME DC1 960"]))
    d = doc(run("on", 20000, nosync=24000), run("off", 19000), model="ACME DC1 960")
    v = evaluate(d, entries=sheet)
    assert (v.verdict, v.rule) == ("confirmed", "measured_and_documented")
    assert {e.kind for e in v.evidence} == {"measured", "documented"}


def test_measured_and_reported_agree_is_confirmed():
    cap = PlpFact(
        source="smartctl", field="ATA attribute 175 Power_Loss_Cap_Test", raw="1", meaning="m", supports="plp"
    )
    v = evaluate(doc(run("on", 20000, nosync=24000), facts=[cap]), entries=())
    assert (v.verdict, v.rule) == ("confirmed", "measured_and_reported")


def test_datasheet_contradicting_the_measurement_is_flagged_not_preferred():
    sheet = entries(entry("ACME DC1 .*", "yes", ["ACME DC1 960"]))
    v = evaluate(doc(run("on", 500, nosync=20000), model="ACME DC1 960"), entries=sheet)
    assert (v.verdict, v.rule) == ("unknown", "conflicting_evidence") and v.conflicts
    sheet = entries(entry("ACME C1 .*", "no", ["ACME C1 1TB"]))
    v = evaluate(doc(run("on", 20000, nosync=24000), run("off", 19000), model="ACME C1 1TB"), entries=sheet)
    assert (v.verdict, v.rule) == ("unknown", "conflicting_evidence")
    assert "documented, primary: Vendor product brief" in v.conflicts[0] and "measured, primary" in v.conflicts[0]


def test_at_rest_only_and_free_flushes_means_flushes_not_honoured():
    sheet = entries(entry("(Crucial_)?CT525MX300SSD1", "at-rest", ["Crucial_CT525MX300SSD1"]))
    v = evaluate(doc(run("on", 9000, nosync=10000), model="Crucial_CT525MX300SSD1"), entries=sheet)
    assert (v.verdict, v.rule) == ("unlikely", "documented_absent")
    assert any("not honoured" in r for r in v.reasons)


def test_packaged_list_documents_the_mx300_as_at_rest_only():
    v = evaluate_device(Device(model="Crucial_CT525MX300SSD1"))
    assert v.verdict == "unlikely"
    assert "data at rest only" in v.evidence[0].text


def test_memory_backed_is_not_applicable():
    d = doc(run("on", 90000, nosync=95000), notes=[memory_backed_note("/dev/zram0 is a zram RAM disk")])
    assert d.verdicts.power_loss_protection.rule == "not_applicable"
    assert d.verdicts.power_loss_protection.verdict == "not-applicable"
    assert d.verdicts.power_loss_protection.evidence == []


# --- the datasheet list and its validator ---------------------------------------------------


def listing(*items: dict) -> dict:
    return {"format": "diskq-plp-datasheets", "version": 1, "entries": list(items)}


def test_the_packaged_list_is_valid_and_every_entry_cites_an_https_source():
    data = json.loads(datasheets.packaged_path().read_text())
    assert datasheets.validate(data) == []
    assert len(datasheets.load()) == len(data["entries"]) >= 5
    assert all(e.source.startswith("https://") and e.quote for e in datasheets.load())


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (lambda e: e.pop("source"), "source: Field required"),
        (lambda e: e.update(source="http://example.com/x.pdf"), "source must be an https URL"),
        (lambda e: e.update(source="javascript:alert(1)"), "source must be an https URL"),
        (lambda e: e.update(source="https://example.com/a b"), "source must be an https URL"),
        (lambda e: e.update(title="<script>alert(1)</script>"), "markup"),
        (lambda e: e.update(quote="PLP <b>yes</b>"), "markup"),
        (lambda e: e.update(model="ACME<img src=x>"), "markup"),
        (lambda e: e.update(examples=["ACME\u0000X1"]), "markup"),
        (lambda e: e.update(model="ACME (X1"), "not a regular expression"),
        (lambda e: e.update(model="(a+)+$"), "nested quantifiers"),
        (lambda e: e.update(model="ACME (X|X)*1"), "repeats a group"),
        (lambda e: e.update(model="(ACME) \\1"), "backreferences"),
        (lambda e: e.update(model="(?=ACME)X1"), "look-arounds"),
        (lambda e: e.update(plp="maybe"), "plp"),
        (lambda e: e.update(read="yesterday"), "read must be a date"),
        (lambda e: e.update(read="2999-01-01"), "in the future"),
        (lambda e: e.update(examples=["OTHER 1"]), "does not match its own model pattern"),
        (lambda e: e.update(examples=[]), "examples"),
        (lambda e: e.update(extra="x"), "Extra inputs are not permitted"),
    ],
)
def test_hostile_entries_are_refused(mutate, expected):
    e = entry("ACME X1 .*", "yes", ["ACME X1 960"])
    mutate(e)
    problems = datasheets.validate(listing(e), today=date(2026, 11, 25))
    assert problems and any(expected in p for p in problems), problems


def test_two_entries_claiming_one_model_differently_are_refused():
    a = entry("ACME X1 .*", "yes", ["ACME X1 960"])
    b = entry("ACME X1 9.*", "no", ["ACME X1 980"])  # its pattern also matches a's example
    problems = datasheets.validate(listing(a, b))
    assert problems == ["entries.0 and entries.1 claim model 'ACME X1 960' differently (yes / no)"]
    same = datasheets.validate(listing(a, entry("ACME X1 .*", "at-rest", ["ACME X1 1T"])))
    assert same and "differently" in same[0]
    twice = datasheets.validate(listing(a, entry("ACME X1 .*", "yes", ["ACME X1 480"])))
    assert twice == ["entries.0 and entries.1 are the same model and firmware pattern twice"]
    # a firmware pattern keeps two claims about one model apart (firmware where it matters)
    fw = datasheets.validate(
        listing(
            entry("ACME X1 .*", "yes", ["ACME X1 960"], firmware="F2.*"),
            entry("ACME X1 .*", "no", ["ACME X1 960"], firmware="F1.*"),
        )
    )
    assert fw == []


def test_lookup_refuses_to_pick_between_contradicting_entries():
    sheet = (
        datasheets.Entry.model_validate(entry("ACME .*", "yes", ["ACME 1"])),
        datasheets.Entry.model_validate(entry("ACME 1", "no", ["ACME 1"])),
    )
    found, note = datasheets.lookup("acme  1", entries=sheet)
    assert found is None and "contradicts itself" in note
    v = evaluate_device(Device(model="ACME 1"), entries=sheet)
    assert v.verdict == "unknown" and v.conflicts


def test_firmware_pattern_is_matched():
    sheet = (datasheets.Entry.model_validate(entry("ACME X1 .*", "yes", ["ACME X1 960"], firmware="F2.*")),)
    assert datasheets.lookup("ACME X1 960", "F2.01", entries=sheet)[0] is not None
    assert datasheets.lookup("ACME X1 960", "F1.01", entries=sheet)[0] is None
    assert datasheets.lookup("ACME X1 960", None, entries=sheet)[0] is None


def cli(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "DISKQ_JOURNAL_DIR": str(tmp_path / "j")}
    return subprocess.run(
        [sys.executable, "-m", "diskq", "datasheets", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_validate_command(tmp_path):
    ok = cli("validate", tmp_path=tmp_path)
    assert ok.returncode == 0 and "entries, valid" in ok.stderr
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(listing(entry("ACME X1 .*", "yes", ["ACME X1 960"]), entry("ACME X1 9.*", "no", ["ACME X1 980"])))
    )
    out = cli("validate", str(bad), tmp_path=tmp_path)
    assert out.returncode == 5 and "claim model 'ACME X1 960' differently" in out.stdout
    assert out.stderr.startswith("diskq: error:") and "Traceback" not in out.stderr
    dup = tmp_path / "dup.json"
    dup.write_text('{"format": "diskq-plp-datasheets", "format": "x", "version": 1, "entries": []}')
    out = cli("validate", str(dup), tmp_path=tmp_path)
    assert out.returncode == 2 and "duplicate key 'format'" in out.stderr
    for text, code in (("not json", 2), ("", 2)):
        bad.write_text(text)
        out = cli("validate", str(bad), tmp_path=tmp_path)
        assert out.returncode == code and out.stderr.count("\n") <= 2 and "Traceback" not in out.stderr
    assert cli("validate", str(tmp_path / "missing.json"), tmp_path=tmp_path).returncode == 2
    assert "Example:" in cli("validate", "--help", tmp_path=tmp_path).stdout


def test_submissions_workflow_validates_the_list():
    workflow = (Path(__file__).parents[1] / ".github" / "workflows" / "submissions.yml").read_text()
    assert '"src/diskq/analyse/plp_datasheets.json"' in workflow
    assert 'diskq" datasheets validate' in workflow


# --- the invariant -----------------------------------------------------------------------------

NEUTRAL_FACTS = [
    f
    for name in (
        "sce__Micron_5300_MTFDDAK3T8TDS.json",
        "scrutiny__Samsung_SSD_970_EVO_500GB__x.json",
        "smartmontools-go__KINGSTON_SV300S37A240G__a.json",
    )
    for f in facts_from_smartctl_json(smart(name))
] + [vwc_fact(1), vwc_fact(7)]
CONSUMER_MODELS = [
    "Samsung SSD 860 EVO 1TB",
    "Samsung SSD 970 PRO 512GB",
    "WDC WDS100T2B0A-00SM50",
    "Crucial_CT1000MX500SSD1",
    "SanDisk SDSSDHII960G",
    "KINGSTON SV300S37A240G",
]


@st.composite
def consumer_run(draw):
    cache = draw(st.sampled_from(["on", "unknown", "off"]))
    mechanism = draw(st.sampled_from([None, "hdparm", "nvme", "sysfs"]))
    top = FAST - 1 if cache == "off" and mechanism != "sysfs" else 200_000
    solo = draw(st.floats(min_value=1, max_value=top))
    nosync = draw(st.none() | st.floats(min_value=1, max_value=400_000))
    return run(cache, solo, nosync=nosync, mechanism=mechanism)


@settings(max_examples=200, deadline=None)
@given(
    model=st.sampled_from(CONSUMER_MODELS) | st.text(min_size=1, max_size=30),
    facts=st.lists(st.sampled_from(NEUTRAL_FACTS), max_size=4),
    volatile=st.sampled_from([True, None]),
    runs=st.lists(consumer_run(), max_size=3),
)
def test_a_consumer_drive_without_evidence_is_never_confirmed_or_likely(model, facts, volatile, runs):
    # no datasheet, only neutral reports, and no durable write faster than flash with the cache off
    d = doc(*runs, model=model, volatile=volatile, facts=facts)
    v = evaluate(d, entries=())
    assert v.verdict not in ("confirmed", "likely"), v
    # a model string the kernel gives virtual devices ("Linux RAM disk") is not a drive at all
    expected = "not-applicable" if not_a_drive(d) else "unknown"
    assert evaluate_device(d.device, (), entries=()).verdict == expected


# --- the bench, end to end on a real loop device ------------------------------------------------


@needs_fio
@needs_loop
def test_bench_reports_the_verdict_with_its_evidence(make_loop, tmp_path):
    dev = make_loop(64 * 1024 * 1024)
    env = {**os.environ, "DISKQ_JOURNAL_DIR": str(tmp_path / "j")}
    out = tmp_path / "r.json"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "diskq",
            "bench",
            dev,
            "--yes",
            "--runtime",
            "1",
            "--jobs",
            "1",
            "--cache",
            "keep",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert r.returncode == 0, r.stderr
    doc = ResultDocument.model_validate_json(out.read_text())
    v = doc.verdicts.power_loss_protection
    assert v is not None and v.reasons
    # a loop device is not a drive: power-loss protection does not apply, whatever was measured
    assert (v.verdict, v.rule) == ("not-applicable", "not_applicable") and v.evidence == []
    assert "a Linux loop device" in v.reasons[0]
    assert "power-loss protection: not applicable" in " ".join((r.stdout + r.stderr).split())


# --- devices.db, lookup and the site ----------------------------------------------------------------


def test_database_lookup_and_site_carry_the_verdict_and_its_evidence(tmp_path):
    import sqlite3

    from diskq.database.build import build
    from diskq.database.lookup import lookup
    from diskq.database.synthetic import result_document, submission, write_submission
    from diskq.publish.site import build_site

    subs = tmp_path / "submissions"
    # reported by the drive: an Intel DC S4510 whose capacitor test passes on one unit and fails on another
    for value in (100, 1):
        data = smart("sce__INTEL_SSDSC2KB240G8.json")
        attr(data, 175)["value"] = value
        doc = result_document("INTEL SSDSC2KB240G8", {"on": {1: 20000 + value, 4: 50000}}, nosync={"on": 23000})
        doc["device"]["plp_facts"] = [f.model_dump(mode="json") for f in facts_from_smartctl_json(data)]
        write_submission(subs, submission(doc))
    # a consumer drive measured with honest flushes
    write_submission(
        subs, submission(result_document("Samsung SSD 860 EVO 1TB", {"on": {1: 490, 14: 1728}}, nosync={"on": 30000}))
    )
    db = tmp_path / "devices.db"
    build(subs, db)
    con = sqlite3.connect(db)
    rows = dict(con.execute("SELECT model, power_loss_protection FROM devices"))
    evidence = json.loads(
        con.execute("SELECT plp_evidence FROM devices WHERE model = 'INTEL SSDSC2KB240G8'").fetchone()[0]
    )
    con.close()
    # measured (free flushes) and reported agree; one unit's failing test does not make the model degraded
    assert rows == {"INTEL SSDSC2KB240G8": "confirmed", "Samsung SSD 860 EVO 1TB": "unlikely"}
    assert any(e["points_to"] == "failing" for e in evidence["evidence"])
    assert any("reported its power-loss backup failing" in r for r in evidence["reasons"])

    match = lookup(db, "860 evo")[0]
    assert match.device["plp_evidence"]["rule"] == "measured_against"
    out = subprocess.run(
        [sys.executable, "-m", "diskq", "lookup", "ssdsc2kb240g8", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DISKQ_JOURNAL_DIR": str(tmp_path / "j")},
    )
    assert "power-loss protection: confirmed" in out.stdout and "! reported (primary): ATA attribute 175" in out.stdout

    site = tmp_path / "_site"
    build_site(db, site)
    index = (site / "index.html").read_text()
    assert 'id="f-plp"' in index and 'data-plp="confirmed"' in index and 'data-plp="unlikely"' in index
    page = next((site / "devices").glob("intel-ssdsc2kb240g8*.html")).read_text()
    assert "Power-loss protection" in page and "Power_Loss_Cap_Test" in page and "backup failing" in page
    methodology = (site / "methodology.html").read_text()
    assert 'id="crit-power_loss_protection"' in methodology and "not a promise" in methodology
    exported = json.loads((site / "devices.json").read_text())["devices"]
    assert {d["model"]: d["plp_evidence"]["verdict"] for d in exported} == rows


# --- submissions: reported facts must be ones the parser writes ------------------------------------


def _validated(tmp_path: Path, facts: list[dict]) -> list[str]:
    from diskq.database.synthetic import result_document, submission, write_submission
    from diskq.submission.validate import validate_file

    doc = result_document("INTEL SSDSC2KB240G8", {"on": {1: 20000, 4: 50000}}, nosync={"on": 23000})
    doc["device"]["plp_facts"] = facts
    path = write_submission(tmp_path / "submissions", submission(doc))
    _, problems = validate_file(path, root=tmp_path / "submissions", require_signature=False)
    return [f"{p.field}: {p.message}" for p in problems]


def test_submitted_facts_as_the_parser_writes_them_are_accepted(tmp_path):
    data = smart("sce__INTEL_SSDSC2KB240G8.json")
    attr(data, 175)["value"] = 1
    facts = [f.model_dump(mode="json") for f in facts_from_smartctl_json(data)]
    facts += [vwc_fact(0).model_dump(mode="json"), vwc_fact(7).model_dump(mode="json")]
    facts += [
        f.model_dump(mode="json")
        for f in facts_from_smartctl_json(smart("scrutiny__Samsung_SSD_970_EVO_500GB__x.json"))
    ]
    assert _validated(tmp_path, facts) == []


@pytest.mark.parametrize(
    "edit, expected",
    [
        ({"field": "Vendor says: PLP", "supports": "plp"}, "unknown power-loss fact field"),
        ({"field": "ATA attribute 174 Unsafe_Shutdown_Count", "supports": "plp"}, "neither evidence nor a warning"),
        ({"field": "NVMe Identify Controller vwc", "raw": "0x1", "supports": "plp"}, "do not follow from raw value"),
        ({"field": "NVMe SMART/Health critical_warning bit 4", "raw": "0x10", "supports": "neutral"}, "do not follow"),
        ({"meaning": "<script>alert(1)</script>"}, "markup"),
        ({"raw": "x" * 400}, "longer than 300"),
    ],
)
def test_hand_edited_facts_are_refused(tmp_path, edit, expected):
    fact = {
        "source": "smartctl",
        "field": "ATA attribute 175 Power_Loss_Cap_Test",
        "raw": "1",
        "meaning": "m",
        "supports": "plp",
        "warning": False,
        **edit,
    }
    problems = _validated(tmp_path, [fact])
    assert len(problems) == 1 and problems[0].startswith("result.device.plp_facts[0]") and expected in problems[0]
