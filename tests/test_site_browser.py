"""The site in a real headless Chromium: order, sorting, filters, search, charts, accessibility.

Uses Debian's chromium (or $DISKQ_CHROMIUM) through playwright with ``executable_path``; no
browser is ever downloaded. The site is served from 127.0.0.1 and every request the pages make
is recorded: anything not to that server fails the test. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from diskq.database.build import build
from diskq.database.synthetic import result_document, submission, write_submission, write_synthetic
from diskq.publish.site import build_site

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("DISKQ_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None

if sync_playwright is None:
    pytest.skip("the playwright package is not installed (pip install -e '.[test]')", allow_module_level=True)
if not Path(CHROMIUM).is_file():
    pytest.skip(f"no chromium at {CHROMIUM} (apt-get install chromium, or set DISKQ_CHROMIUM)", allow_module_level=True)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("browser")
    subs = root / "submissions"
    write_synthetic(subs, 160, seed=11, devices=24)
    write_submission(subs, submission(result_document(
        "Samsung PM883", {"off": {1: 12680, 2: 24000, 4: 41000, 8: 52000, 16: 59338}, "on": {1: 5094, 16: 27521}})))
    db = root / "devices.db"
    build(subs, db)
    out = root / "_site"
    build_site(db, out, submissions=subs)
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    devices = [dict(r) for r in con.execute("SELECT * FROM devices ORDER BY rank")]
    con.close()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", devices
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser, site):
    base, _ = site
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    pg = context.new_page()
    outside = []
    pg.on("request", lambda req: None if req.url.startswith(base) else outside.append(req.url))
    errors = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    yield pg
    context.close()
    assert outside == [], f"requests outside the site: {outside}"
    assert errors == [], f"JavaScript errors: {errors}"


def _models(pg) -> list[str]:
    return pg.eval_on_selector_all("#devices tbody tr:not([hidden]) td:nth-child(2) a", "els => els.map(e => e.textContent)")


def _column(pg, n: int) -> list[str]:
    return pg.eval_on_selector_all(f"#devices tbody tr:not([hidden]) td:nth-child({n})",
                                   "els => els.map(e => e.textContent.trim())")


def _num(text: str) -> float:
    return float("-inf") if text == "\u2013" else float(text.replace(",", "").split()[0])


def test_table_renders_in_rank_order_and_screenshot(page, site):
    base, devices = site
    page.goto(base + "index.html")
    assert _models(page) == [d["model"] for d in devices]
    iops = [_num(t) for t in _column(page, 5)]
    assert iops == sorted(iops, reverse=True)
    assert page.is_visible("#controls")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "site-index.png"), full_page=False)


def test_sort_by_clicking_a_header(page, site):
    base, devices = site
    page.goto(base + "index.html")
    page.click("#devices thead th:nth-child(6) button")  # Max IOPS, high to low
    values = [_num(t) for t in _column(page, 6)]
    assert values == sorted(values, reverse=True) and values != [_num(f"{d['max_iops'] or 0}") for d in devices]
    assert page.get_attribute("#devices thead th:nth-child(6)", "aria-sort") == "descending"
    page.click("#devices thead th:nth-child(6) button")  # again: low to high
    values = [_num(t) for t in _column(page, 6)]
    assert values == sorted(values)
    page.click("#devices thead th:nth-child(2) button")  # Device: A to Z
    names = [t.lower() for t in _column(page, 2)]
    assert names == sorted(names)
    page.click("#devices thead th:nth-child(1) button")  # back to rank order (rank descending first)
    page.click("#devices thead th:nth-child(1) button")
    assert _models(page) == [d["model"] for d in devices]


def test_filters_and_search(page, site):
    base, devices = site
    page.goto(base + "index.html")
    page.select_option("#f-proto", "nvme")
    assert _models(page) == [d["model"] for d in devices if d["protocol"] == "nvme"]
    assert page.text_content("#count").startswith(f"{sum(d['protocol'] == 'nvme' for d in devices)} of ")
    page.select_option("#f-proto", "")
    tier = next(d["ceph_waldb"] for d in devices if d["ceph_waldb"])
    page.select_option("#f-tier", tier)
    assert _models(page) == [d["model"] for d in devices if d["ceph_waldb"] == tier]
    page.select_option("#f-tier", "")
    page.fill("#q", "pm883")
    assert _models(page) == ["Samsung PM883"]
    page.fill("#q", "")
    page.check("#f-verified")
    assert _models(page) == [d["model"] for d in devices if d["verified"]]
    page.uncheck("#f-verified")
    assert len(_models(page)) == len(devices)


def test_device_page_shows_its_chart(page, site):
    base, devices = site
    dev = next(d for d in devices if d["model"] == "Samsung PM883")
    page.goto(base + "index.html")
    page.click("text=Samsung PM883")
    assert page.url.endswith(f"devices/{dev['id']}.html")
    charts = page.locator("svg.chart")
    assert charts.count() == 2
    box = charts.first.bounding_box()
    assert box and box["width"] > 300 and box["height"] > 120
    assert page.locator("svg.chart").first.locator("circle.dot").count() == 5
    page.screenshot(path=str(ARTIFACTS / "site-device.png"), full_page=True)


def _axe(page) -> list[dict]:
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [v for v in results.response["violations"] if v.get("impact") in ("serious", "critical")]


@pytest.mark.parametrize("path", ["index.html", "methodology.html", "device"])
def test_no_serious_accessibility_violations(page, site, path):
    base, devices = site
    if path == "device":
        path = f"devices/{next(d for d in devices if d['model'] == 'Samsung PM883')['id']}.html"
    page.goto(base + path)
    bad = _axe(page)
    assert bad == [], "; ".join(f"{v['id']}: {v['help']} {[n['target'] for n in v['nodes']][:3]} {v['nodes'][0].get('failureSummary', '')[:200]}" for v in bad)


def test_page_is_complete_without_javascript(browser, site):
    base, devices = site
    context = browser.new_context(java_script_enabled=False)
    pg = context.new_page()
    pg.goto(base + "index.html")
    assert _models(pg) == [d["model"] for d in devices]
    assert not pg.is_visible("#controls")
    context.close()
