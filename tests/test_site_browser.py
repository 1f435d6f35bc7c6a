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
from diskq.database.synthetic_sustained import sustained_pair
from diskq.publish.site import build_site

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("DISKQ_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
REPOSITORY = "https://github.com/example/diskq"
PHONE, DESKTOP = 390, 1400
WIDTHS = pytest.mark.parametrize("page", [PHONE, DESKTOP], indirect=True, ids=["phone", "desktop"])
SUSTAINED_MODEL = "Crucial P3 Plus 2TB"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

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
    write_submission(
        subs,
        submission(
            result_document(
                "Samsung PM883",
                {"off": {1: 12680, 2: 24000, 4: 41000, 8: 52000, 16: 59338}, "on": {1: 5094, 16: 27521}},
            )
        ),
    )
    # a model the power-loss-protection datasheet list documents (Intel DC S4500)
    write_submission(
        subs, submission(result_document("INTEL SSDSC2KB960G7", {"on": {1: 21000, 4: 52000}}, nosync={"on": 23000}))
    )
    for firmware, solo in (("D3MU001", 9000), ("D3MU401", 9100)):  # one model, two firmwares
        write_submission(
            subs,
            submission(result_document("Micron 5300 MAX", {"on": {1: solo, 2: 15000, 4: 21000}}, firmware=firmware)),
        )
    for model, curve, protocol in (
        ("Intel SSD 750 PCIe", {1: 64235, 8: 192440}, "nvme"),
        ("Intel SSD S4510", {1: 1600, 15: 48409}, "ata"),
    ):
        write_submission(
            subs, submission(result_document(model, {"unknown": curve}, legacy=True, protocol=protocol), legacy=True)
        )
    # a model with a block-size profile (the second chart of a device page)
    write_submission(
        subs,
        submission(
            result_document(
                "Intel Optane SSD 900P",
                {"on": {1: 30000, 2: 52000, 4: 80000}},
                protocol="nvme",
                volatile_write_cache=False,
                sizes={
                    "on": {
                        512: 31000,
                        4096: 30000,
                        8192: 27000,
                        16384: 22000,
                        65536: 12000,
                        131072: 8000,
                        1048576: 1300,
                    }
                },
            )
        ),
    )
    for seed, (seconds, at) in enumerate([(60, 40), (50, 25)]):  # two sequential writes, each with its cliff
        write_submission(
            subs,
            submission(
                result_document(
                    SUSTAINED_MODEL,
                    {"on": {1: 21000 + seed, 2: 38000, 4: 52000}},
                    protocol="nvme",
                    sustained=sustained_pair(seconds=seconds, cliff_at=at, seed=seed),
                )
            ),
        )
    # public figures beside the submissions, as sources/ beside submissions/ in the repository
    shutil.copytree(Path(__file__).parent / "fixtures" / "sources", root / "sources")
    db = root / "devices.db"
    build(subs, db)
    out = root / "_site"
    build_site(db, out, submissions=subs, repository=REPOSITORY)
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
def page(browser, site, request):
    """A page of the site at 1 440 px wide, or at the width a test gives (``WIDTHS``), that fails
    the test on a request outside the site, a JavaScript error or a failed request."""
    base, _ = site
    width = getattr(request, "param", 1440)
    context = browser.new_context(viewport={"width": width, "height": 844 if width < 600 else 900})
    pg = context.new_page()
    outside = []
    pg.on("request", lambda req: None if req.url.startswith(base) else outside.append(req.url))
    errors = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    failed = []
    pg.on("response", lambda resp: failed.append(f"{resp.status} {resp.url}") if resp.status >= 400 else None)
    yield pg
    context.close()
    assert outside == [], f"requests outside the site: {outside}"
    assert errors == [], f"JavaScript errors: {errors}"
    assert failed == [], f"failed requests: {failed}"


def _models(pg) -> list[str]:
    return pg.eval_on_selector_all(
        "#devices tbody tr:not([hidden]) td:nth-child(2) a", "els => els.map(e => e.textContent)"
    )


def _column(pg, n: int) -> list[str]:
    return pg.eval_on_selector_all(
        f"#devices tbody tr:not([hidden]) td:nth-child({n})", "els => els.map(e => e.textContent.trim())"
    )


def _open_filters(pg) -> None:
    """Unfold the filters where they are folded (a phone's first screen; open on a wider one)."""
    if not pg.evaluate("document.getElementById('filters').open"):
        pg.click("#filters summary")
    assert pg.is_visible("#f-proto")


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


def test_power_loss_protection_filter_and_evidence(page, site):
    base, devices = site
    page.goto(base + "index.html")
    verdict = next(d["power_loss_protection"] for d in devices if d["power_loss_protection"] == "likely")
    page.select_option("#f-plp", verdict)
    assert _models(page) == [d["model"] for d in devices if d["power_loss_protection"] == verdict]
    assert set(_column(page, 17)) == {verdict}
    page.select_option("#f-plp", "")
    assert len(_models(page)) == len(devices)
    documented = next(d for d in devices if '"documented"' in (d["plp_evidence"] or ""))
    page.goto(base + f"devices/{documented['id']}.html")
    rows = page.eval_on_selector_all("table.plp-evidence tbody tr", "els => els.map(e => e.textContent)")
    assert any("documented" in r and "https://" in r for r in rows)
    assert page.get_attribute("table.plp-evidence a", "rel") == "noopener noreferrer"


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


@WIDTHS
@pytest.mark.parametrize("path", ["index.html", "methodology.html", "device"])
def test_no_serious_accessibility_violations(page, site, path):
    base, devices = site
    if path == "device":
        path = f"devices/{next(d for d in devices if d['model'] == 'Samsung PM883')['id']}.html"
    page.goto(base + path)
    bad = _axe(page)
    assert bad == [], "; ".join(
        f"{v['id']}: {v['help']} {[n['target'] for n in v['nodes']][:3]} {v['nodes'][0].get('failureSummary', '')[:200]}"
        for v in bad
    )


@pytest.mark.parametrize("width", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_page_is_complete_without_javascript(browser, site, width):
    base, devices = site
    context = browser.new_context(java_script_enabled=False, viewport={"width": width, "height": 900})
    pg = context.new_page()
    pg.goto(base + "index.html")
    assert _models(pg) == [d["model"] for d in devices]
    assert not pg.is_visible("#controls")
    assert (
        pg.text_content("#caption")
        == f"{len(devices)} devices, sorted by 1-job IOPS within each method class (4 KiB write + flush first)"
    )
    _no_sideways_scroll(pg)
    for n in (1, 2, 5, 6, 7, 12):
        _inside(pg, f"#devices tbody tr:first-child td:nth-child({n})")
    context.close()


# --- layout at phone and desktop widths (issue: the site on a phone) ---------------------------

KEY_COLUMNS = ("#", "Device", "1-job IOPS", "Max IOPS", "Peak #jobs", "Ceph")


def _shot(pg, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    width = pg.viewport_size["width"]
    pg.screenshot(path=str(ARTIFACTS / f"site-{name}-{width}.png"), full_page=False)


def _no_sideways_scroll(pg) -> None:
    sw, w = pg.evaluate("[document.scrollingElement.scrollWidth, innerWidth]")
    assert sw <= w, f"the page scrolls sideways: {sw} px wide in a {w} px window"


def _inside(pg, selector: str) -> dict:
    """The element's box, asserted to be shown and wholly inside the window's width."""
    box = pg.locator(selector).first.bounding_box()
    assert box and box["width"] > 0 and box["height"] > 0, f"{selector} is not shown"
    width = pg.viewport_size["width"]
    assert 0 <= box["x"] and box["x"] + box["width"] <= width, f"{selector} is outside the window: {box}"
    return box


def _headers(pg) -> list[str]:
    return pg.eval_on_selector_all(
        "#devices thead th", "els => els.filter(e => e.offsetWidth > 0).map(e => e.innerText.trim())"
    )


@WIDTHS
def test_the_first_screen_shows_the_tables_first_rows_and_the_filters_fold_behind_one_control(page, site):
    """A reader came for the table: on a 390 x 844 phone the introduction is one sentence (the rest
    folded) and the seven filters fold behind one control, so the first rows are on the first
    screen; a desktop shows the filters open. Set filters are counted on the folded control."""
    base, devices = site
    page.goto(base + "index.html")
    height, phone = page.viewport_size["height"], page.viewport_size["width"] == PHONE
    bottoms = page.eval_on_selector_all(
        "#devices tbody tr", "els => els.slice(0, 5).map(e => e.getBoundingClientRect().bottom)"
    )
    assert all(b <= height for b in bottoms[:3]), f"the first rows end at {bottoms} px in a {height} px window"
    assert page.is_visible("#q") and page.is_visible("#filters summary")
    assert not page.is_visible("details.intro p")  # the rest of the introduction is folded
    page.click("details.intro summary")
    assert "method class" in page.inner_text("details.intro p")
    assert page.evaluate("document.getElementById('filters').open") is (not phone)
    assert page.is_visible("#f-proto") is (not phone)
    _open_filters(page)
    page.select_option("#f-proto", "nvme")
    page.check("#f-verified")
    assert page.text_content("#filters summary") == "Filters (2 set)"
    page.click("#filters summary")  # folded again, the filters still apply and say so
    assert not page.is_visible("#f-proto") and page.text_content("#filters summary") == "Filters (2 set)"
    page.fill("#q", "pm883")  # the search box is not one of the folded filters
    assert page.text_content("#filters summary") == "Filters (2 set)"
    _shot(page, "first-screen")


@WIDTHS
def test_key_figures_are_on_the_first_screen_without_sideways_scrolling(page, site):
    base, devices = site
    page.goto(base + "index.html")
    _no_sideways_scroll(page)
    shown = _headers(page)
    assert [h for h in shown if h.split("\n")[0] in KEY_COLUMNS or h.startswith("Ceph")] and all(
        any(h.replace("\n", " ").startswith(k) for h in shown) for k in KEY_COLUMNS
    ), shown
    if page.viewport_size["width"] == DESKTOP:  # all but the p4 columns (etcd, PostgreSQL, ...)
        assert len(shown) == page.locator("#devices thead th:not(.p4)").count() >= 12
    first = "#devices tbody tr:first-child"
    for n in (1, 2, 5, 6, 7, 12):  # rank, device, 1-job IOPS, max IOPS, peak jobs, Ceph verdict
        box = _inside(page, f"{first} td:nth-child({n})")
        assert box["y"] + box["height"] <= page.viewport_size["height"]
    assert page.text_content(f"{first} td:nth-child(5)").strip() == f"{devices[0]['iops_1job']:,.0f}"
    _shot(page, "index")


@WIDTHS
@pytest.mark.parametrize("path", ["methodology.html", "device"])
def test_other_pages_do_not_scroll_sideways(page, site, path):
    base, devices = site
    if path == "device":
        path = f"devices/{next(d for d in devices if d['model'] == 'Samsung PM883')['id']}.html"
    page.goto(base + path)
    _no_sideways_scroll(page)
    _inside(page, "h1")
    _shot(page, path.split("/")[0].removesuffix(".html"))


@WIDTHS
def test_models_with_several_firmwares_show_it_beside_the_name(page, site):
    base, devices = site
    page.goto(base + "index.html")
    rows = page.locator("#devices tbody tr", has_text="Micron 5300 MAX")
    assert rows.count() == 2
    firmwares = []
    for i in range(2):
        rows.nth(i).scroll_into_view_if_needed()
        badge = rows.nth(i).locator("td.name .fw")
        box = badge.bounding_box()
        assert box and 0 <= box["x"] and box["x"] + box["width"] <= page.viewport_size["width"]
        firmwares.append(badge.text_content())
    assert sorted(firmwares) == ["D3MU001", "D3MU401"]
    assert page.locator("#devices tbody tr", has_text="Samsung PM883").locator(".fw").count() == 0
    _shot(page, "firmware")


@WIDTHS
def test_the_legacy_mark_is_on_the_first_screen(page, site):
    base, devices = site
    page.goto(base + "index.html")
    legacy = [d for d in devices if d["legacy"]]
    assert {"Intel SSD 750 PCIe", "Intel SSD S4510"} <= {d["model"] for d in legacy}
    for dev in legacy:  # the mark sits beside the name, never in a column off to the side
        row = f"#devices tbody tr:nth-child({dev['rank']})"
        assert page.text_content(f"{row} td.name a") == dev["model"]
        page.locator(row).scroll_into_view_if_needed()
        box = _inside(page, f"{row} td.name .legacy")
        assert 0 <= box["y"] and box["y"] + box["height"] <= page.viewport_size["height"]
        assert page.text_content(f"{row} td.name .legacy") == "legacy"
    page.locator(f"#devices tbody tr:nth-child({legacy[0]['rank']})").scroll_into_view_if_needed()
    _shot(page, "legacy")


@WIDTHS
def test_the_caption_follows_sorting_and_filters_and_an_empty_result_is_explained(page, site):
    base, devices = site
    page.goto(base + "index.html")
    _open_filters(page)
    caption = "#caption"
    assert (
        page.text_content(caption)
        == f"{len(devices)} devices, sorted by 1-job IOPS within each method class (4 KiB write + flush first)"
    )
    page.click("#devices thead th:nth-child(6) button")
    assert page.text_content(caption) == f"{len(devices)} devices, sorted by Max IOPS, high to low"
    page.click("#devices thead th:nth-child(2) button")
    assert page.text_content(caption) == f"{len(devices)} devices, sorted by Device, A to Z"
    nvme = sum(d["protocol"] == "nvme" for d in devices)
    page.select_option("#f-proto", "nvme")
    assert page.text_content(caption) == f"{nvme} of {len(devices)} devices (protocol nvme), sorted by Device, A to Z"
    assert page.is_hidden("#empty")
    page.select_option("#f-proto", "")
    assert sum(d["verified"] for d in devices) == 0  # built without an allowed-signers file
    page.check("#f-verified")
    assert _models(page) == []
    assert page.text_content(caption).startswith(f"0 of {len(devices)} devices (verified only), sorted by")
    _inside(page, "#empty")
    text = page.text_content("#empty")
    assert "No device has a verified submission" in text and "without an allowed-signers file" in text
    assert page.is_visible("#empty a[href='methodology.html#aggregation']")
    _shot(page, "empty-verified")
    page.click("#empty button")
    assert len(_models(page)) == len(devices) and page.is_hidden("#empty")
    assert not page.is_checked("#f-verified")
    page.fill("#q", "zzqqxx")
    assert _models(page) == [] and "No device matches close matches for \u201czzqqxx\u201d" in page.text_content(
        "#empty"
    )


@WIDTHS
def test_search_finds_small_typos_as_lookup_does(page, site, tmp_path_factory):
    from diskq.database.lookup import lookup

    base, devices = site
    db = next(tmp_path_factory.getbasetemp().glob("browser*/devices.db"))  # the site fixture's database
    page.goto(base + "index.html")
    for query, meant in (("s4150", "Intel SSD S4510"), ("pm833", "Samsung PM883"), ("mircon 5300", "Micron 5300 MAX")):
        assert lookup(db, query)[0].device["model"] == meant  # what `diskq lookup` answers
        page.fill("#q", query)
        shown = _models(page)
        assert meant in shown and len(shown) <= 3, (query, shown)
        assert "close matches for" in page.text_content("#caption")
    page.fill("#q", "pm883")  # an exact match leaves the close ones out
    assert _models(page) == ["Samsung PM883"] and "search \u201cpm883\u201d" in page.text_content("#caption")
    page.fill("#q", "s4150")
    _shot(page, "search-typo")


def _chart_facts(pg) -> dict:
    return pg.evaluate("""() => {
        const svg = document.querySelector("svg.chart"), scale = svg.getScreenCTM().a;
        const texts = [...svg.querySelectorAll(".grid text")];
        return {
            ticks: [...svg.querySelectorAll("text.xtick")].map(t => t.textContent),
            axis: [...svg.querySelectorAll("text.axis")].map(t => t.textContent),
            smallest: Math.min(...texts.map(t => parseFloat(getComputedStyle(t).fontSize) * scale)),
            lines: [...svg.querySelectorAll("polyline.line")].map(l => l.getAttribute("points").trim().split(/\\s+/).length),
            dots: svg.querySelectorAll("circle.dot").length,
            inside: texts.every(t => { const b = t.getBoundingClientRect(), s = svg.getBoundingClientRect();
                                      return b.left >= s.left - 1 && b.right <= s.right + 1 && b.bottom <= s.bottom + 1; }),
        };
    }""")


@WIDTHS
def test_charts_label_the_log2_axis_tick_the_last_job_count_and_join_only_measured_neighbours(page, site):
    base, devices = site
    # (Intel SSD S4510's 15-job figure is questionable and left out of its curve)
    legacy = next(d for d in devices if d["model"] == "Intel SSD 750 PCIe")
    page.goto(base + f"devices/{legacy['id']}.html")
    facts = _chart_facts(page)
    assert facts["ticks"][0] == "1" and facts["ticks"][-1] == "8"
    assert any("log\u2082 scale" in a for a in facts["axis"])
    assert facts["lines"] == [] and facts["dots"] == 2  # a 1-job figure and a peak: dots, no line
    assert facts["smallest"] >= 11, f"axis labels drawn {facts['smallest']:.1f} px tall"
    assert facts["inside"]
    page.locator("svg.chart").first.screenshot(
        path=str(ARTIFACTS / f"site-chart-legacy-{page.viewport_size['width']}.png")
    )
    sweep = next(d for d in devices if d["model"] == "Samsung PM883")
    page.goto(base + f"devices/{sweep['id']}.html")
    facts = _chart_facts(page)
    assert facts["lines"] == [5] and facts["ticks"] == ["1", "2", "4", "8", "16"]
    assert facts["smallest"] >= 11 and facts["inside"]
    page.locator("svg.chart").first.screenshot(
        path=str(ARTIFACTS / f"site-chart-sweep-{page.viewport_size['width']}.png")
    )


@WIDTHS
@pytest.mark.parametrize("path", ["index.html", "methodology.html", "device"])
def test_every_page_has_a_favicon_and_links_the_source_repository(page, site, path):
    base, devices = site
    if path == "device":
        path = f"devices/{devices[0]['id']}.html"
    page.goto(base + path)  # the page fixture fails the test on any request answered 404
    icon = page.evaluate("""async () => {
        const link = document.querySelector("link[rel=icon]");
        if (!link) return null;
        const resp = await fetch(link.href);
        return {status: resp.status, type: resp.headers.get("content-type")};
    }""")
    assert icon == {"status": 200, "type": "image/svg+xml"}
    source = page.locator(f"header a[href='{REPOSITORY}']")
    assert source.count() == 1 and source.is_visible()
    _inside(page, f"header a[href='{REPOSITORY}']")


# --- a large table: the header stays in view -----------------------------------------------------


@pytest.fixture(scope="module")
def big_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("big")
    write_synthetic(root / "submissions", 300, seed=7, devices=150)
    build(root / "submissions", root / "devices.db")
    build_site(root / "devices.db", root / "_site")
    con = sqlite3.connect(root / "devices.db")
    count = con.execute("SELECT count(*) FROM devices").fetchone()[0]
    con.close()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root / "_site")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", count
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("width", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_the_table_header_stays_in_view_after_scrolling_a_long_table(browser, big_site, width):
    base, count = big_site
    assert count >= 130
    context = browser.new_context(viewport={"width": width, "height": 844 if width < 600 else 900})
    pg = context.new_page()
    try:
        pg.goto(base + "index.html")
        start = pg.locator("#devices thead th:nth-child(2)").bounding_box()
        pg.mouse.wheel(0, 2000)
        pg.wait_for_function("scrollY >= 2000")
        head = pg.locator("#devices thead th:nth-child(2)").bounding_box()
        assert start["y"] > 100  # below the page's heading at first ...
        assert -1 <= head["y"] <= 1 and head["y"] + head["height"] <= pg.viewport_size["height"]  # ... then pinned
        below = pg.evaluate("""() => { const h = document.querySelector("#devices thead th:nth-child(2)").getBoundingClientRect();
            return document.elementFromPoint(h.left + 4, h.top + h.height / 2).closest("thead") !== null; }""")
        assert below, "the header is covered by the rows scrolling under it"
        _no_sideways_scroll(pg)
        _shot(pg, "sticky-header")
    finally:
        context.close()


def test_no_width_scrolls_sideways_and_a_wide_screen_shows_every_column(page, site):
    base, _ = site
    page.goto(base + "index.html")
    wide = []
    for width in range(320, 1701, 20):
        page.set_viewport_size({"width": width, "height": 800})
        sw = page.evaluate("document.scrollingElement.scrollWidth")
        if sw > width:
            wide.append((width, sw))
    assert wide == [], f"(window width, page width) where the table scrolls sideways: {wide}"
    page.set_viewport_size({"width": 1600, "height": 900})
    assert len(_headers(page)) == page.locator("#devices thead th").count()
    assert page.is_hidden(".more-columns")
    page.set_viewport_size({"width": DESKTOP, "height": 900})
    assert page.is_visible(".more-columns")


@WIDTHS
def test_the_block_size_chart_is_readable_and_fits_the_page(page, site):
    base, devices = site
    dev = next(d for d in devices if d["model"] == "Intel Optane SSD 900P")
    page.goto(base + f"devices/{dev['id']}.html")
    _no_sideways_scroll(page)
    facts = page.evaluate("""() => {
        const svg = document.querySelector("#size-chart-on"), scale = svg.getScreenCTM().a;
        const texts = [...svg.querySelectorAll(".grid text")];
        return {
            ticks: [...svg.querySelectorAll("text.xtick")].map(t => t.textContent),
            axis: [...svg.querySelectorAll("text.axis")].map(t => t.textContent),
            smallest: Math.min(...texts.map(t => parseFloat(getComputedStyle(t).fontSize) * scale)),
            dots: svg.querySelectorAll("circle.dot:not(.dot2)").length,
            dots2: svg.querySelectorAll("circle.dot2").length,
            inside: texts.every(t => { const b = t.getBoundingClientRect(), s = svg.getBoundingClientRect();
                                      return b.left >= s.left - 1 && b.right <= s.right + 1 && b.bottom <= s.bottom + 1; }),
        };
    }""")
    assert facts["dots"] == facts["dots2"] == 7
    assert facts["ticks"][0] == "512" and facts["ticks"][-1] == "1M"
    assert any(a == "MB/s" for a in facts["axis"]) and any(a.startswith("IOPS") for a in facts["axis"])
    assert facts["smallest"] >= 11, f"axis labels drawn {facts['smallest']:.1f} px tall"
    assert facts["inside"], "a label of the block-size chart is drawn outside it"
    _inside(page, "#size-chart-on")
    row = page.locator("table.answer tr", has_text="ZFS SLOG")  # the answer per use, with its basis
    assert row.count() == 1 and "excellent" in row.inner_text() and "measured" in row.inner_text()
    page.locator("#size-chart-on").screenshot(
        path=str(ARTIFACTS / f"site-size-chart-{page.viewport_size['width']}.png")
    )


# --- the sustained-write chart -----------------------------------------------------------------


def _sustained_page(page, site) -> None:
    base, devices = site
    page.goto(base + f"devices/{next(d for d in devices if d['model'] == SUSTAINED_MODEL)['id']}.html")


@WIDTHS
def test_the_sustained_write_chart_marks_its_cliff_and_fits_the_window(page, site):
    _sustained_page(page, site)
    _no_sideways_scroll(page)
    assert page.locator("svg.sustained-chart").count() == 2
    chart = "#sustained-chart-sequential-on"
    page.locator(chart).scroll_into_view_if_needed()
    box = _inside(page, chart)
    assert box["width"] > 300 and box["height"] > 150
    facts = page.evaluate(
        """(sel) => {
        const svg = document.querySelector(sel), scale = svg.getScreenCTM().a, s = svg.getBoundingClientRect();
        const texts = [...svg.querySelectorAll(".grid text")];
        const label = svg.querySelector("text.cliff-label"), l = label.getBoundingClientRect();
        const marks = [...svg.querySelectorAll("line.cliff")].map(m => m.getBoundingClientRect());
        return {
            label: label.textContent, lines: svg.querySelectorAll("polyline.line").length, marks: marks.length,
            smallest: Math.min(...texts.map(t => parseFloat(getComputedStyle(t).fontSize) * scale)),
            inside: texts.every(t => { const b = t.getBoundingClientRect();
                                      return b.left >= s.left - 1 && b.right <= s.right + 1 && b.bottom <= s.bottom + 1; }),
            labelBesideMark: l.left >= marks[0].right - 1 || l.right <= marks[0].left + 1,
            dashed: getComputedStyle(svg.querySelector("line.cliff")).strokeDasharray,
        };
    }""",
        chart,
    )
    assert facts["label"].startswith("cliff at ") and facts["label"].endswith("%")
    assert (facts["lines"], facts["marks"]) == (2, 2)
    assert facts["smallest"] >= 11, f"labels drawn {facts['smallest']:.1f} px tall"
    assert facts["inside"] and facts["labelBesideMark"]
    assert facts["dashed"] not in ("", "none")
    page.locator(chart).screenshot(path=str(ARTIFACTS / f"site-chart-sustained-{page.viewport_size['width']}.png"))
    page.click("#sustained-chart-sequential-on ~ details summary")
    _no_sideways_scroll(page)  # the figures as a table scroll inside their own box, if at all
    assert page.locator("#sustained-chart-sequential-on ~ details table.sustained-figures tbody tr").count() == 2


@WIDTHS
def test_the_sustained_write_section_has_no_serious_accessibility_violations(page, site):
    _sustained_page(page, site)
    page.click("#sustained-chart-sequential-on ~ details summary")
    bad = _axe(page)
    assert bad == [], "; ".join(f"{v['id']}: {v['help']} {[n['target'] for n in v['nodes']][:3]}" for v in bad)


def test_the_sustained_write_section_never_scrolls_sideways_from_320_to_1700_px(page, site):
    _sustained_page(page, site)
    page.click("#sustained-chart-sequential-on ~ details summary")
    wide = []
    for width in range(320, 1701, 40):
        page.set_viewport_size({"width": width, "height": 800})
        sw = page.evaluate("document.scrollingElement.scrollWidth")
        box = page.locator("#sustained-chart-sequential-on").bounding_box()
        if sw > width or box["x"] < 0 or box["x"] + box["width"] > width:
            wide.append((width, sw, box))
    assert wide == [], f"(window width, page width, chart box) where the page or the chart is too wide: {wide}"


# --- public figures: method classes, sources, part numbers ----------------------------------


def _public(pg) -> list[str]:
    return pg.eval_on_selector_all(
        "#public-figures tbody tr:not([hidden]) td:nth-child(2) a", "els => els.map(e => e.textContent)"
    )


@WIDTHS
def test_class_and_source_filters_apply_to_the_table_and_the_public_figures(page, site):
    base, devices = site
    page.goto(base + "index.html")
    _no_sideways_scroll(page)
    _open_filters(page)
    _no_sideways_scroll(page)
    everything = _public(page)
    assert "Samsung 950 PRO 512 GB" in everything and "Samsung 950 PRO" in everything
    # the FUA class: no row of the table (every one is a flush per write), the two NVMe O_SYNC figures
    page.select_option("#f-class", "fua/write/raw/direct")
    assert _models(page) == [] and sorted(_public(page)) == ["Intel DC P3700 400 GB", "Samsung 950 PRO 512 GB"]
    assert "method class FUA write, may skip the flush" in page.text_content("#caption")
    assert page.text_content("#public-caption").startswith(f"2 of {len(everything)} public figures")
    page.select_option("#f-class", "")
    page.select_option("#f-src", "S06_vitastor")
    assert _models(page) == ["Intel SSD S4510"]
    assert sorted(_public(page)) == ["Intel D3-S4510 3.84 TB", "Samsung PM9A3 1.92 TB"]
    page.select_option("#f-src", "community table")
    legacy = sorted(d["model"] for d in devices if d["legacy"] and d["rank"] is not None)
    assert "Intel SSD S4510" in legacy and sorted(_models(page)) == legacy and _public(page) == []
    _no_sideways_scroll(page)
    _shot(page, "filter-source")


@WIDTHS
def test_search_takes_the_string_smartctl_prints(page, site):
    base, _ = site
    page.goto(base + "index.html")
    page.fill("#q", "SAMSUNG MZ7LH7T6HMLA-00005")  # a PM883 as smartctl names it
    assert _models(page) == ["Samsung PM883"]
    page.fill("#q", "INTEL SSDSC2KB240G8")  # a D3-S4510: the legacy row and the public figure
    assert _models(page) == ["Intel SSD S4510"] and _public(page) == ["Intel D3-S4510 3.84 TB"]
    page.fill("#q", "SAMSUNG MZQL23T8HCLS-00A07")  # a PM9A3: known from public figures only
    assert _models(page) == [] and _public(page) == ["Samsung PM9A3 1.92 TB"]
    _shot(page, "search-part-number")


@WIDTHS
def test_device_page_shows_public_figures_with_their_attribution_and_part_numbers(page, site):
    base, devices = site
    s4510 = next(d for d in devices if d["model"] == "Intel SSD S4510")
    page.goto(base + f"devices/{s4510['id']}.html")
    _no_sideways_scroll(page)
    assert page.is_visible("h2#public")
    row = page.text_content("table.figures tbody tr")
    assert "S06_vitastor" in row and "27,000" in row and "flush per write · random" in row and "T1Q1 write" in row
    sources = page.text_content("ul.sources")
    assert "Vitaliy Filippov, Vitastor documentation" in sources and "VNPL-1.1" in sources
    assert "#" in page.text_content(".crumbs") and "in its method class" in page.text_content(".crumbs")
    known = page.text_content("dd.known-as")
    assert "Intel SSD S4510" in known and "Intel D3-S4510 3.84 TB" in known and "SSDSC" in known
    _shot(page, "device-public")
    pm883 = next(d for d in devices if d["model"] == "Samsung PM883")
    page.goto(base + f"devices/{pm883['id']}.html")
    assert "MZ7LH(240|480|960|1T9|3T8|7T6)" in page.text_content("dd.known-as")  # its line's part number
    page.goto(base + "index.html")
    page.click("#public-figures a:text('Samsung 950 PRO 512 GB')")
    _no_sideways_scroll(page)
    assert "Sébastien Han, sebastien-han.fr" in page.text_content("ul.sources")
    assert "FUA write, may skip the flush" in page.text_content("table.figures")
    _shot(page, "public-model")


@pytest.fixture(scope="module")
def fleet_page(tmp_path_factory):
    """A fleet report of three hosts, one drive RAM-backed (the HTML ``diskq fleet report --html``
    writes; tests/site_pages.py)."""
    from tests.site_pages import write_fleet_report

    return write_fleet_report(tmp_path_factory.mktemp("fleet-browser"))


def _axe_all(page) -> list[str]:
    """Every axe-core violation of the page, whatever its impact (landmark-unique is "moderate")."""
    from axe_playwright_python.sync_playwright import Axe

    return [
        f"{v['id']} ({v['impact']}): {v['help']} {[n['target'] for n in v['nodes']][:3]}"
        for v in Axe().run(page).response["violations"]
    ]


@WIDTHS
def test_every_page_of_the_site_and_the_fleet_report_passes_axe(page, site, fleet_page):
    """Every axe-core rule, whatever its impact, on the index, the methodology, every device page,
    every public-figure page and the fleet report."""
    base, devices = site
    page.goto(base + "index.html")
    public = sorted(set(page.eval_on_selector_all("#public-figures a", "els => els.map(e => e.href)")))
    assert public and all(u.startswith(base + "public/") for u in public)
    urls = (
        [base + "index.html", base + "methodology.html"] + [f"{base}devices/{d['id']}.html" for d in devices] + public
    )
    found = {}
    for url in urls:
        page.goto(url)
        if bad := _axe_all(page):
            found[url.removeprefix(base)] = bad
    context = page.context.browser.new_context(viewport=page.viewport_size)
    try:
        fleet = context.new_page()
        fleet.goto(fleet_page.as_uri())
        if bad := _axe_all(fleet):
            found["fleet.html"] = bad
        scrolling = fleet.locator("section.scroll[tabindex='0']").count()
    finally:
        context.close()
    assert found == {}, found
    assert scrolling >= 2  # each group's table scrolls in a region the keyboard reaches


@pytest.fixture(scope="module")
def cluster_pages(tmp_path_factory):
    """The cluster reports of recorded real clusters (tests/site_pages.py), when present."""
    from tests.site_pages import CLUSTERS, write_cluster_reports

    if not CLUSTERS.is_dir():
        pytest.skip(f"recorded cluster outputs absent ({CLUSTERS.name} next to the repository): they are not committed")
    return write_cluster_reports(tmp_path_factory.mktemp("cluster-browser"))


@pytest.mark.parametrize("width", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_every_cluster_report_passes_axe_and_its_tables_scroll_in_reachable_regions(browser, cluster_pages, width):
    assert cluster_pages
    found = {}
    context = browser.new_context(viewport={"width": width, "height": 844 if width < 600 else 900})
    try:
        page = context.new_page()
        outside = []
        page.on("request", lambda req: None if req.url.startswith("file://") else outside.append(req.url))
        for path in cluster_pages:
            page.goto(path.as_uri())
            if bad := _axe_all(page):
                found[path.name] = bad
            # a table wider than the window scrolls in a region the keyboard reaches
            assert page.locator("section.scroll").count() >= 1
            assert page.locator(".scroll:not([tabindex='0'])").count() == 0
            _no_sideways_scroll(page)
    finally:
        context.close()
    assert outside == [], f"the stand-alone page made requests: {outside}"
    assert found == {}, found
