"""The packaged datasheet list against the strings smartctl prints: every family it documents
resolves for its part numbers to what the vendor documents, the recorded smartctl outputs of
documented families come out with that answer, and no pattern reaches into a neighbouring
generation its source does not cover."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diskq.analyse import datasheets
from diskq.analyse.plp import evaluate_device
from diskq.probe.smartctl import identity_from_smartctl_json

SMART = Path(__file__).parent / "fixtures" / "smartctl_json"
DOCS = Path(__file__).parent.parent / "docs" / "power-loss-protection.md"

#: family -> (model strings as smartctl prints them, the claim the list records for them)
FAMILIES = {
    "Intel SSD 750": (["Intel SSD 750 PCIe"], "yes"),
    "Intel DC S3610": (["INTEL SSDSC2BX800G4", "INTEL SSDSC2BX016T4"], "yes"),
    "Intel DC S3700": (["INTEL SSDSC2BA200G3", "INTEL SSDSC2BA800G3", "INTEL SSDSC1NA400G3"], "yes"),
    "Intel DC S4500/S4600": (["INTEL SSDSC2KB960G7", "INTEL SSDSC2KB038T7", "INTEL SSDSC2KG240G7"], "yes"),
    "Intel DC P3500": (["INTEL SSDPE2MX400G4", "INTEL SSDPEDMX020T4"], "yes"),
    "Intel DC P3700": (["INTEL SSDPEDMD400G4", "INTEL SSDPE2MD800G4", "INTEL SSDPEDMD020T4"], "yes"),
    "Crucial MX300": (["Crucial_CT525MX300SSD1"], "at-rest"),
    "Micron M550": (["Micron_M550_MTFDDAT256MAY"], "at-rest"),
    "Micron 1100": (["Micron_1100_MTFDDAK512TBN", "Micron_1100_MTFDDAV256TBN"], "at-rest"),
    "Micron 5100": (["Micron_5100_MTFDDAK3T8TCB", "MTFDDAK1T9TCC"], "yes"),
    "Micron 9100": (["MTFDHAX1T6MCE", "Micron_9100_MTFDHAL3T2MCE"], "yes"),
    "Micron 9200": (["Micron_9200_MTFDHAL3T8TCT", "Micron_9200_MTFDHAL1T6TCU"], "yes"),
}

#: model strings of neighbouring generations that share a prefix with a documented family but
#: are not covered by its source: they must get no documented answer
NEIGHBOURS = {
    "INTEL SSDSC2BA400G4": "DC S3710, not the S3700 specification",
    "INTEL SSDSC2BA012T4": "DC S3710, not the S3700 specification",
    "INTEL SSDSC2BB480G6": "DC S3510, no entry yet",
    "INTEL SSDSC2KB240G8": "D3-S4510, not the S4500/S4600 specification",
    "INTEL SSDSC2KG480G8": "D3-S4610, not the S4500/S4600 specification",
    "INTEL SSDPE2MX450G7": "DC P3520, not the P3500 specification",
    "INTEL SSDPE2KX020T8": "DC P4510, no entry yet",
    "Micron_5200_MTFDDAK3T8TDD": "Micron 5200, not the 5100 report",
    "Micron_5210_MTFDDAK960QDE": "Micron 5210 ION, no entry yet",
    "Micron_5300_MTFDDAK3T8TDS": "Micron 5300, not the 5100 report",
    "Micron_9300_MTFDHAL3T2TDR": "Micron 9300, not the 9200 data sheet",
    "Micron_1300_MTFDDAK512TDL": "Micron 1300, not the 1100 data sheet",
}

#: recorded smartctl outputs -> (verdict without a measurement, the documented entry's title fragment
#: or None for no documented answer)
RECORDED = {
    "sce__INTEL_SSDPEDMD400G4.json": ("likely", "DC P3700"),
    "sce__INTEL_SSDSC2KB960G7.json": ("likely", "S4500/S4600"),
    "sce__INTEL_SSDSC2BB016T4.json": ("likely", None),  # DC S3500: its capacitor test, no entry
    "sce__INTEL_SSDSC2KB240G8.json": ("likely", None),  # D3-S4510: its capacitor test, no entry
    "sce__INTEL_SSDPE2MX450G7.json": ("unknown", None),
    "sce__INTEL_SSDPE2KX020T8.json": ("unknown", None),
    "sce__Micron_5300_MTFDDAK3T8TDS.json": ("unknown", None),
}


def smart(name: str) -> dict:
    return json.loads((SMART / name).read_text())


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_resolves_to_what_its_vendor_documents(family):
    models, claim = FAMILIES[family]
    for model in models:
        found, contradiction = datasheets.lookup(model)
        assert contradiction is None, model
        assert found is not None, f"{family}: {model!r} has no entry"
        assert found.plp == claim, f"{family}: {model!r} is {found.plp}, expected {claim}"
        assert found.source.startswith("https://") and found.quote and found.read


def test_every_packaged_entry_belongs_to_a_family_the_tests_and_the_docs_name():
    modelled = [m for models, _ in FAMILIES.values() for m in models]
    for e in datasheets.load():
        assert any(e.matches(m) for m in modelled), f"no family in FAMILIES covers {e.model!r}"
    page = DOCS.read_text()
    missing = [f for f in FAMILIES if f not in page]
    assert missing == [], f"docs/power-loss-protection.md does not list {missing}"


@pytest.mark.parametrize("model", sorted(NEIGHBOURS))
def test_a_neighbouring_generation_gets_no_documented_answer(model):
    found, contradiction = datasheets.lookup(model)
    assert (found, contradiction) == (None, None), f"{model} ({NEIGHBOURS[model]}) matched {found and found.model!r}"


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_recorded_smartctl_outputs_get_the_documented_answer(name):
    verdict_expected, title = RECORDED[name]
    device = identity_from_smartctl_json(smart(name))
    verdict = evaluate_device(device)
    assert verdict.verdict == verdict_expected, (name, verdict.rule, verdict.reasons)
    documented = [e for e in verdict.evidence if e.kind == "documented"]
    if title is None:
        assert documented == [], f"{device.model} got {documented}"
    else:
        assert len(documented) == 1 and documented[0].points_to == "plp"
        assert title in documented[0].text and documented[0].source.startswith("https://")


@pytest.mark.parametrize("entry", datasheets.load(), ids=lambda e: e.examples[0])
def test_the_product_line_a_documented_model_resolves_to_says_what_its_vendor_documents(entry):
    # the packaged list documented the DC S4500/S4600 ("Enhanced power-loss data protection
    # feature") and the SSD 750 while their product lines said nothing: identify answered
    # "likely", lookup "unknown"
    from diskq.identity.lines import load
    from diskq.identity.match import resolve

    lines = load(Path(__file__).parent.parent / "sources" / "lines")
    expected = {"yes": "yes", "at-rest": "at-rest-only", "no": "no"}[entry.plp]
    for model in entry.examples:
        found = resolve(lines, model).answer
        if found is None:  # a model string no product line takes yet: the list alone answers
            continue
        assert found.line.facts.plp == expected, (model, found.line.key, found.line.facts.plp)
