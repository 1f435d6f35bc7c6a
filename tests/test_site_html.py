"""Every page the site and the fleet report generate passes html-validate (its recommended
rules, tests/htmlvalidate.json): no aria-label where it means nothing, a submit button in every
form, native elements for landmarks. html-validate is an npm package installed from
tests/package.json and its lock by ``scripts/bootstrap --test`` (``npm ci --prefix tests``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from diskq.cli import main
from diskq.database.build import build
from diskq.database.synthetic import result_document, submission, sustained_pair, write_submission, write_synthetic
from diskq.publish.site import build_site

TESTS = Path(__file__).resolve().parent
HTML_VALIDATE = TESTS / "node_modules" / ".bin" / "html-validate"
CONFIG = TESTS / "htmlvalidate.json"

pytestmark = pytest.mark.skipif(
    not HTML_VALIDATE.exists(), reason="html-validate is not installed: run scripts/bootstrap --test (npm ci --prefix tests)")


def generated_pages(root: Path) -> list[Path]:
    """A site with every kind of section (legacy rows, two firmwares, a block-size profile,
    sustained writes, hosts) and a fleet report, as the browser tests build them."""
    subs = root / "submissions"
    write_synthetic(subs, 40, seed=5, devices=8)
    write_submission(subs, submission(result_document(
        "Samsung PM883", {"off": {1: 12680, 2: 24000, 4: 41000, 8: 52000, 16: 59338}, "on": {1: 5094, 16: 27521}})))
    write_submission(subs, submission(result_document(
        "Intel SSD S4510", {"unknown": {1: 1600, 15: 48409}}, legacy=True), legacy=True))
    write_submission(subs, submission(result_document(
        "Intel Optane SSD 900P", {"on": {1: 30000, 2: 52000, 4: 80000}, "off": {1: 29000, 2: 50000}},
        protocol="nvme", volatile_write_cache=False,
        sizes={"on": {4096: 30000, 8192: 27000, 131072: 8000}, "off": {4096: 29000, 8192: 26000}})))
    write_submission(subs, submission(result_document(
        "Crucial P3 Plus 2TB", {"on": {1: 21000, 2: 38000, 4: 52000}}, protocol="nvme",
        sustained=sustained_pair(seconds=60, cliff_at=40, seed=0))))
    db = root / "devices.db"
    build(subs, db)
    site = root / "_site"
    build_site(db, site, submissions=subs, repository="https://github.com/example/diskq")
    from benchmarks.fleet_report import write_fleet

    write_fleet(root / "fleet", hosts=3, drives=3)
    try:
        main(["fleet", "report", str(root / "fleet"), "--html", str(root / "fleet.html")])
    except SystemExit as exc:
        assert not exc.code, exc.code
    return sorted(site.rglob("*.html")) + [root / "fleet.html"]


def test_every_generated_page_passes_html_validate(tmp_path, capsys):
    pages = generated_pages(tmp_path)
    capsys.readouterr()
    assert any(p.parent.name == "devices" for p in pages) and pages[-1].name == "fleet.html"
    done = subprocess.run([str(HTML_VALIDATE), "--config", str(CONFIG), "--formatter", "text", *map(str, pages)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_html_validate_finds_what_it_is_asked_to_find(tmp_path):
    """The check can fail: the defects the site once had are reported."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html lang="en"><head><title>t</title></head><body><main>'
                   '<form><input type="search" aria-label="q"></form><span aria-label="x">?</span></main></body></html>')
    done = subprocess.run([str(HTML_VALIDATE), "--config", str(CONFIG), "--formatter", "text", str(bad)],
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert "wcag/h32" in done.stdout and "aria-label-misuse" in done.stdout
