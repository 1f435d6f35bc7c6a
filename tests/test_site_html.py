"""Every page diskq writes passes html-validate (its recommended rules, tests/htmlvalidate.json):
the site's index, methodology, device and public-figure pages, the fleet report and the cluster
report (tests/site_pages.py renders one of each kind). No aria-label where it means nothing, a
submit button in every form, native elements for landmarks, headings in order. html-validate is
an npm package installed from tests/package.json and its lock by ``scripts/bootstrap --test``
(``npm ci --prefix tests``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.site_pages import CLUSTERS, write_cluster_reports, write_fleet_report, write_site

TESTS = Path(__file__).resolve().parent
HTML_VALIDATE = TESTS / "node_modules" / ".bin" / "html-validate"
CONFIG = TESTS / "htmlvalidate.json"

pytestmark = pytest.mark.skipif(
    not HTML_VALIDATE.exists(),
    reason="html-validate is not installed: run scripts/bootstrap --test (npm ci --prefix tests)",
)


def _validate(pages: list[Path]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(HTML_VALIDATE), "--config", str(CONFIG), "--formatter", "text", *map(str, pages)],
        capture_output=True,
        text=True,
    )


def test_every_page_of_the_site_and_the_fleet_report_passes_html_validate(tmp_path, capsys):
    site = write_site(tmp_path)
    pages = sorted(site.rglob("*.html")) + [write_fleet_report(tmp_path)]
    capsys.readouterr()
    kinds = {p.parent.name for p in pages}
    assert {"_site", "devices", "public"} <= kinds, kinds  # index and methodology, devices, public figures
    assert any("Public figures of this family" in p.read_text() for p in pages if p.parent.name == "devices")
    assert pages[-1].name == "fleet.html" and "RAM-backed: not compared" in pages[-1].read_text()
    done = _validate(pages)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.skipif(
    not CLUSTERS.is_dir(),
    reason=f"recorded cluster outputs absent ({CLUSTERS.name} next to the repository): they are not committed",
)
def test_every_cluster_report_passes_html_validate(tmp_path):
    pages = write_cluster_reports(tmp_path)
    assert pages
    text = "".join(p.read_text() for p in pages)
    assert "<h2>Findings</h2>" in text and "<h2>DB drives</h2>" in text and "<h2>OSDs</h2>" in text
    done = _validate(pages)
    assert done.returncode == 0, done.stdout + done.stderr


def test_html_validate_finds_what_it_is_asked_to_find(tmp_path):
    """The check can fail: the defects the pages once had are reported."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html lang="en"><head><title>t</title></head><body><main>'
        '<form><input type="search" aria-label="q"></form><span aria-label="x">?</span>'
        '<div class="scroll" tabindex="0" role="region" aria-label="figures"><p>wide</p></div></main></body></html>'
    )
    done = _validate([bad])
    assert done.returncode == 1
    assert "wcag/h32" in done.stdout and "aria-label-misuse" in done.stdout and "prefer-native-element" in done.stdout
