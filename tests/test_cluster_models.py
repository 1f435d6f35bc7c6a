"""``diskq cluster`` names drives through the one matcher ``diskq lookup`` uses: a part number
Ceph reports finds its measured model, names its line when nothing of it was measured, and a
string that fits several models is used for none."""

from __future__ import annotations

from pathlib import Path

from diskq.cluster.models import Matcher

DB = Path(__file__).resolve().parent.parent / "devices.db"


def test_a_part_number_finds_its_measured_model():
    m = Matcher(DB)
    assert m.facts("INTEL SSDSC2KB480G8")["model"] == "Intel SSD S4510"
    assert m.facts("SAMSUNG MZ7LH7T6HMLA-00005")["model"] == "Samsung PM883"
    assert m.notes == []


def test_a_line_not_measured_is_named_not_guessed():
    m = Matcher(DB)
    assert m.facts("SAMSUNG MZ7KM480HMHQ-00005") is None  # an SM863a: no measured device of that line
    assert any("Samsung SM863a, not measured with diskq yet" in n for n in m.notes), m.notes


def test_several_models_are_none():
    m = Matcher(DB)
    assert m.facts("Samsung") is None
    assert any("names several models" in n for n in m.notes), m.notes
