"""diskq site build without a browser: order, escaping, exports, no external references."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
from datetime import UTC
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diskq.cli import main
from diskq.database.build import build
from diskq.database.synthetic import result_document, submission, write_submission, write_synthetic
from diskq.errors import SiteError, SitePathError
from diskq.publish.chart import scaling_chart
from diskq.publish.site import build_site

REPOSITORY = "https://github.com/example/diskq"
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


class Cells(HTMLParser):
    """Text of every <td>/<th> of the devices table body, row by row; every src/href seen (the
    source repository's link, rel="external", apart)."""

    def __init__(self):
        super().__init__()
        self.rows, self.refs, self.external, self._in_body, self._cell = [], [], [], False, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and a.get("rel") == "external":
            self.external.append(a.get("href"))
            return
        for key in ("src", "href"):
            if a.get(key):
                self.refs.append(a[key])
        if tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body:
            self.rows.append([])
        elif tag == "td" and self._in_body:
            self._cell = ""

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self.rows[-1].append(self._cell.strip())
            self._cell = None
        elif tag == "tbody":
            self._in_body = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    subs = root / "submissions"
    write_synthetic(subs, 120, seed=3, devices=12)
    write_submission(
        subs,
        submission(
            result_document(
                "Samsung PM883",
                {"off": {1: 12680, 2: 24000, 4: 41000, 8: 52000, 16: 59338}, "on": {1: 5094, 16: 27521}},
                protocol="ata",
            )
        ),
    )
    db = root / "devices.db"
    build(subs, db)
    con = sqlite3.connect(db)  # a hostile name that got past every check must still render as text
    con.execute("UPDATE devices SET model = ? WHERE rank = 2", (HOSTILE,))
    con.commit()
    con.close()
    out = root / "_site"
    report = build_site(db, out, submissions=subs, repository=REPOSITORY)
    return db, out, report


def test_index_lists_every_device_in_rank_order(built):
    db, out, report = built
    con = sqlite3.connect(db)
    expected = [r[0] for r in con.execute("SELECT class_rank FROM devices ORDER BY rank")]  # '#' ranks within a class
    iops = [r[0] for r in con.execute("SELECT iops_1job FROM devices ORDER BY rank")]
    con.close()
    parser = Cells()
    parser.feed((out / "index.html").read_text())
    assert [int(r[0]) for r in parser.rows] == expected == list(range(1, report.devices + 1))
    shown = [float(r[4].replace(",", "")) for r in parser.rows if r[4] != "\u2013"]
    assert shown == sorted(shown, reverse=True)
    assert shown == [round(v) for v in iops if v is not None]
    assert all(len(r) == 17 for r in parser.rows)


def test_html_in_a_model_name_is_shown_as_text(built):
    _, out, _ = built
    index = (out / "index.html").read_text()
    assert "<script>alert" not in index and "<img src=x" not in index
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in index
    page = next(p for p in (out / "devices").iterdir() if "&lt;script&gt;" in p.read_text())
    assert "<script>alert" not in page.read_text()
    assert "<title>&lt;script&gt;" in page.read_text()


def test_no_page_references_anything_outside_the_site(built):
    _, out, _ = built
    for page in [out / "index.html", out / "methodology.html", *sorted((out / "devices").iterdir())[:20]]:
        parser = Cells()
        parser.feed(page.read_text())
        assert parser.refs
        for ref in parser.refs:
            assert not re.match(r"^(https?:)?//", ref), f"{page.name} links {ref}"
        assert set(parser.external) <= {REPOSITORY}
    css = (out / "static" / "style.css").read_text()
    assert "url(" not in css and "@import" not in css


def test_device_page_has_a_chart_and_the_same_figures_as_a_table(built):
    db, out, _ = built
    con = sqlite3.connect(db)
    dev_id = con.execute("SELECT id FROM devices WHERE model = 'Samsung PM883'").fetchone()[0]
    con.close()
    page = (out / "devices" / f"{dev_id}.html").read_text()
    assert page.count("<svg") == 2 and page.count('class="curve"') == 2
    assert "59,338" in page and "27,521" in page
    assert 'href="../submissions/samsung/samsung-pm883/' in page
    raw = next((out / "submissions" / "samsung" / "samsung-pm883").iterdir())
    assert json.loads(raw.read_text())["format"] == "diskq-submission"


def test_exports_hold_every_device(built):
    db, out, report = built
    doc = json.loads((out / "devices.json").read_text())
    assert doc["format"] == "diskq-devices" and len(doc["devices"]) == report.devices
    assert [d["rank"] for d in doc["devices"]] == list(range(1, report.devices + 1))
    assert (out / "devices.db").read_bytes() == db.read_bytes()
    assert all("curves" in d and "caches" in d for d in doc["devices"])


def test_methodology_renders_the_criteria_file(built):
    from diskq.analyse.verdicts import load_criteria

    _, out, _ = built
    page = (out / "methodology.html").read_text()
    crit = load_criteria()
    assert crit["ceph_waldb"]["title"] in page
    assert f"<td>{crit['ceph_waldb']['excellent']}</td>" in page
    assert "bstore_kv_sync" in page and "diskq sign" in page


def test_pages_stay_light(built):
    _, out, report = built
    per_row = len((out / "index.html").read_bytes()) / report.devices
    assert per_row < 1500  # bytes of markup per table row, including the page's fixed part


def test_refuses_to_replace_a_directory_it_did_not_write(built, tmp_path):
    db, _, _ = built
    target = tmp_path / "precious"
    target.mkdir()
    (target / "thesis.tex").write_text("keep me")
    with pytest.raises(SiteError, match="refusing"):
        build_site(db, target)
    assert (target / "thesis.tex").read_text() == "keep me"


def test_rebuild_replaces_the_previous_site(built, tmp_path):
    db, _, _ = built
    out = tmp_path / "site"
    build_site(db, out)
    (out / "stale.html").write_text("old")
    build_site(db, out)
    assert not (out / "stale.html").exists() and (out / "index.html").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["site"]


def test_temporary_directories_of_a_killed_build_are_removed_by_the_next_one(built, tmp_path):
    db, _, _ = built
    child = subprocess.Popen(["true"])  # a process that has certainly ended once waited for
    child.wait()
    gone = child.pid
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not the site's")
    stale = tmp_path / f".site.{gone}.k1ll3d.tmp"  # killed while writing the new site
    (stale / "devices").mkdir(parents=True)
    (stale / "index.html").write_text("half a site")
    (stale / "link").symlink_to(outside)  # removed as a link, never followed
    swapped = tmp_path / f".site.{gone}.sw4pp3d.tmp" / "site"  # killed while swapping the old site out
    swapped.mkdir(parents=True)
    running = tmp_path / f".site.{os.getppid()}.busy.tmp"  # a live process: maybe another build
    running.mkdir()
    kept = [
        running,
        tmp_path / f".other.{gone}.x.tmp",  # another output's
        tmp_path / f".site.{gone}.x.tmp.bak",  # not the pattern
        tmp_path / f".site.{gone}.X Y.tmp",
        tmp_path / f".site.0{gone}.x.tmp",
        tmp_path / ".site.k1ll3d",  # no pid: nothing says its build is over
        tmp_path / f".site.{gone}.tmp",
        tmp_path / (".site." + "\u0661" * 3 + ".x.tmp"),  # digits, but not ASCII ones
        tmp_path / ".site.99999999999999999999.x.tmp",  # no process can have that id
    ]
    for path in kept[1:]:
        path.mkdir()
    a_file = tmp_path / f".site.{gone}.f1l3.tmp"  # the site build makes directories only
    a_file.write_text("")
    a_link = tmp_path / f".site.{gone}.l1nk.tmp"
    a_link.symlink_to(outside)
    build_site(db, tmp_path / "site")
    assert not stale.exists() and not swapped.parent.exists()
    assert all(p.is_dir() for p in kept) and a_file.is_file() and a_link.is_symlink()
    assert (outside / "keep.txt").read_text() == "not the site's"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["site", "outside", a_file.name, a_link.name, *(p.name for p in kept)]
    )


def test_cli_site_build(built, tmp_path, capsys):
    db, _, _ = built
    try:
        main(["site", "build", "--db", str(db), "--out", str(tmp_path / "s"), "--submissions", str(tmp_path / "none")])
    except SystemExit as exc:
        assert not exc.code
    assert (tmp_path / "s" / "index.html").exists() and not (tmp_path / "s" / "submissions").exists()
    assert "device pages" in capsys.readouterr().err


def test_chart_geometry_stays_inside_the_plot():
    pts = [
        {"numjobs": n, "iops": v, "iops_min": v * 0.9, "iops_max": v * 1.1}
        for n, v in ((1, 5028), (2, 2651), (6, 1088), (8, 745), (10, 784))
    ]
    c = scaling_chart(pts)
    xs = [d["x"] for d in c.dots]
    ys = [d["y"] for d in c.dots]
    assert xs == sorted(xs) and xs[0] == c.plot["x0"] and xs[-1] == c.plot["x1"]
    assert all(c.plot["y1"] <= y <= c.plot["y0"] for y in ys)
    assert ys[0] == min(ys)  # the highest IOPS is drawn highest
    assert c.bands and scaling_chart([]) is None


def test_chart_joins_only_sweep_neighbours_and_ticks_every_measured_job_count():
    def pts(curve):
        return [{"numjobs": n, "iops": v, "iops_min": v, "iops_max": v} for n, v in curve.items()]

    sweep = scaling_chart(pts({1: 1600, 2: 3000, 4: 5500, 8: 9000, 15: 12000}))
    assert len(sweep.lines) == 1 and len(sweep.lines[0].split()) == 5
    assert [t["label"] for t in sweep.xticks] == ["1", "2", "4", "8", "15"]
    assert sweep.xticks[-1]["x"] == sweep.plot["x1"] and "log\u2082" in sweep.x_title
    legacy = scaling_chart(pts({1: 1600, 15: 48409}), sweep=False)
    assert legacy.lines == [] and len(legacy.dots) == 2
    assert [t["label"] for t in legacy.xticks] == ["1", "2", "4", "8", "15"]
    gap = scaling_chart(pts({1: 1600, 2: 3000, 16: 20000, 32: 30000}))  # 4 and 8 never measured
    assert [len(line.split()) for line in gap.lines] == [2, 2]
    close = scaling_chart(pts({1: 100, 2: 190, 4: 350, 8: 600, 16: 800, 32: 900, 48: 950, 64: 960}))
    labels = [t["label"] for t in close.xticks]
    assert labels[-1] == "64" and all(
        b["x"] - a["x"] >= 40 for a, b in zip(close.xticks, close.xticks[1:], strict=False)
    )


def test_site_without_templates_is_a_clear_error(built, tmp_path, monkeypatch):
    import diskq.publish.environment as site_env

    def missing():
        raise SiteError("site templates not found")

    db, _, _ = built
    monkeypatch.setattr(site_env, "site_dir", missing)
    with pytest.raises(SiteError):
        build_site(db, tmp_path / "x")
    assert not (tmp_path / "x").exists()


def _small_site(tmp_path, *docs):
    subs = tmp_path / "submissions"
    for doc in docs:
        write_submission(subs, submission(doc))
    db = tmp_path / "devices.db"
    build(subs, db)
    out = tmp_path / "_site"
    build_site(db, out, submissions=subs)
    con = sqlite3.connect(db)
    ids = [r[0] for r in con.execute("SELECT id FROM devices ORDER BY rank IS NULL, rank")]
    con.close()
    return out, ids


def test_a_cache_set_with_the_kernel_knob_is_labelled_and_off_is_marked_unsafe(tmp_path):
    loop = {"off": {1: 32212, 2: 52000, 4: 61000}, "on": {1: 3100, 2: 5900, 4: 9800}}
    out, (dev_id,) = _small_site(
        tmp_path,
        result_document(
            "Example Virtio Backed SSD", loop, protocol="unknown", cache_mechanism="sysfs", volatile_write_cache=None
        ),
    )
    page = (out / "devices" / f"{dev_id}.html").read_text()
    assert 'Write cache off (kernel knob) <span class="warn">unsafe: this setting was set with the kernel' in page
    assert "Write cache on (kernel knob)</h3>" in page
    assert 'id="chart-off-kernel"' in page and 'id="chart-on-kernel"' in page
    parser = Cells()
    parser.feed((out / "index.html").read_text())
    (row,) = parser.rows
    assert row[4] == "3,100" and row[7] == "on (kernel knob)" and row[11] == "marginal"
    doc = json.loads((out / "devices.json").read_text())
    assert sorted(doc["devices"][0]["curves"]) == ["off-kernel", "on-kernel"]


def test_osds_per_device_limited_by_the_sweep_reads_at_least_n(tmp_path):
    out, ids = _small_site(
        tmp_path,
        result_document("Kioxia CD6", {"on": {1: 9000, 2: 18000, 4: 35000, 8: 70000}}, protocol="nvme"),
        result_document("Samsung PM883", {"off": {1: 12680, 2: 24000, 4: 41000, 8: 52000, 16: 59338, 256: 60000}}),
    )
    # at 256 jobs each OSD would get 234 commits/s, below the 315 an HDD OSD needs: 16 is the answer
    parser = Cells()
    parser.feed((out / "index.html").read_text())
    assert [r[1] for r in parser.rows] == ["Samsung PM883", "Kioxia CD6"]
    # each count with the commit rate each of those OSDs gets: 59 338 / 16 and 70 000 / 8
    assert [r[10] for r in parser.rows] == ["16 3,709/s each", "\u2265 8 8,750/s each"]
    assert 'title="the largest tested job count still passed' in (out / "index.html").read_text()
    # the answer's OSD row: the count, the basis, the reasons
    assert (
        "<td>16, 3,709/s each (one HDD OSD needs 315)</td><td>measured</td><td>16 OSDs sharing"
        in (out / "devices" / f"{ids[0]}.html").read_text()
    )
    assert (
        "<td>\u2265 8 (limited by the sweep), 8,750/s each (one HDD OSD needs 315)</td><td>measured</td>"
        in (out / "devices" / f"{ids[1]}.html").read_text()
    )
    doc = json.loads((out / "devices.json").read_text())
    assert [(d["osds_per_device"], d["osds_limited_by_sweep"], d["osds_per_device_text"]) for d in doc["devices"]] == [
        (16, False, "16"),
        (8, True, "\u2265 8"),
    ]


def test_legacy_rows_have_no_measurement_date_and_do_not_date_the_data(tmp_path):
    from datetime import datetime

    imported = datetime(2026, 11, 22, tzinfo=UTC)  # the day the legacy rows were imported
    subs = tmp_path / "submissions"
    write_submission(
        subs,
        submission(
            result_document("Samsung PM863a", {"off": {1: 17983, 10: 58876}}, legacy=True, created=imported),
            legacy=True,
        ),
    )
    legacy_only = tmp_path / "legacy.db"
    build(subs, legacy_only)
    con = sqlite3.connect(legacy_only)
    assert con.execute("SELECT created FROM submissions").fetchall() == [(None,)]
    assert con.execute("SELECT value FROM meta WHERE key = 'data_as_of'").fetchall() == [("",)]
    con.close()
    build_site(legacy_only, tmp_path / "legacy_site")
    index = (tmp_path / "legacy_site" / "index.html").read_text()
    assert "newest measured" not in index and "2026-11-22" not in index
    (page,) = (tmp_path / "legacy_site" / "devices").iterdir()
    assert '<td><span title="not recorded: imported from synthetic legacy row">&ndash;</span></td>' in page.read_text()
    assert "2026-11-22" not in page.read_text()
    assert json.loads((tmp_path / "legacy_site" / "devices.json").read_text())["data_as_of"] is None

    write_submission(
        subs,
        submission(
            result_document("Samsung PM863a", {"off": {1: 17000, 2: 30000}}, created=datetime(2025, 3, 4, tzinfo=UTC))
        ),
    )
    db = tmp_path / "devices.db"
    build(subs, db)
    build_site(db, tmp_path / "site")
    assert "newest measured 2025-03-04" in (tmp_path / "site" / "index.html").read_text()
    (page,) = (tmp_path / "site" / "devices").iterdir()
    assert "<td>2025-03-04</td>" in page.read_text() and "2026-11-22" not in page.read_text()


@pytest.mark.parametrize("target", ["/proc/diskq-site", "{tmp}/a-file/site"])
def test_an_output_directory_that_cannot_be_written_is_a_one_line_error(built, tmp_path, capsys, target):
    db, _, _ = built
    (tmp_path / "a-file").write_text("x")
    out = target.format(tmp=tmp_path)
    try:
        main(["site", "build", "--db", str(db), "--out", out])
    except SystemExit as exc:
        assert exc.code == SitePathError.exit_code
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith(f"diskq: error: cannot write {out}")


def test_raw_submission_files_are_hard_linked_or_copied_and_never_a_symbolic_link(tmp_path, monkeypatch):
    import errno

    from diskq.publish import site as site_mod

    src = tmp_path / "a.json"
    src.write_text('{"format": "diskq-submission"}')
    linked = tmp_path / "linked.json"
    site_mod.publish_raw(src, linked)
    assert linked.stat().st_ino == src.stat().st_ino  # one filesystem: a link, no new file

    def cross_device(*args, **kwargs):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(site_mod.os, "link", cross_device)
    copied = tmp_path / "copied.json"
    site_mod.publish_raw(src, copied)
    assert copied.read_bytes() == src.read_bytes() and copied.stat().st_ino != src.stat().st_ino

    secret = tmp_path / "secret"
    secret.write_text("not for the site")
    swapped = tmp_path / "swapped.json"  # a submission replaced by a link after it was checked
    swapped.symlink_to(secret)
    site_mod.publish_raw(swapped, tmp_path / "copy-of-link.json")
    assert not (tmp_path / "copy-of-link.json").exists() and not (tmp_path / "copy-of-link.json").is_symlink()
    monkeypatch.undo()
    site_mod.publish_raw(swapped, tmp_path / "link-of-link.json")
    assert not (tmp_path / "link-of-link.json").exists() and not (tmp_path / "link-of-link.json").is_symlink()


def test_a_failure_while_raw_files_are_published_keeps_the_previous_site(built, tmp_path, monkeypatch):
    from diskq.publish import site as site_mod

    db, first, _ = built
    subs = first.parent / "submissions"
    out = tmp_path / "site"
    build_site(db, out, submissions=subs)
    before = sorted(p.relative_to(out) for p in out.rglob("*"))

    def full_disk(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(site_mod, "publish_raw", full_disk)
    with pytest.raises(SiteError, match="No space left on device"):
        build_site(db, out, submissions=subs)
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
    assert [p.name for p in tmp_path.iterdir()] == ["site"]  # no half-written temporary site


def test_raw_files_in_the_site_are_the_submissions_of_the_database(built):
    db, out, _ = built
    con = sqlite3.connect(db)
    paths = sorted(r[0] for r in con.execute("SELECT path FROM submissions"))
    con.close()
    published = sorted(p.relative_to(out / "submissions").as_posix() for p in (out / "submissions").rglob("*.json"))
    assert published == paths
    assert all((out / "submissions" / p).read_bytes() == (out.parent / "submissions" / p).read_bytes() for p in paths)


def _keygen(path, comment):
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)], check=True)
    return path


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed")
def test_a_contributor_is_shown_as_self_declared_unless_the_signature_is_verified(tmp_path):
    from datetime import datetime

    from diskq.result import ResultDocument
    from diskq.submission.model import Contributor
    from diskq.submission.sign import make_submission, sign_submission

    key = _keygen(tmp_path / "key", "tester")
    subs = tmp_path / "submissions"

    def add(iops, contributor, *, signed=True, legacy=False):
        doc = result_document(
            "Samsung PM1643a",
            {"off": {1: iops, 16: iops * 5}},
            protocol="scsi",
            legacy=legacy,
            created=datetime(2025, 3, 4, tzinfo=UTC),
        )
        if legacy:
            sub = submission(doc, legacy=True)
        else:
            sub = make_submission(ResultDocument.model_validate(doc), contributor=contributor)
        if signed:
            sub = sign_submission(sub, key, principal="tester")
        write_submission(subs, sub)
        return sub.id

    ids = {
        "login": add(18000, Contributor(github="tester")),
        "name": add(18100, Contributor(name="Ada Lovelace")),
        "nobody": add(18200, None),
        "unsigned": add(18300, Contributor(name="Grace Hopper"), signed=False),
        "legacy": add(17900, None, signed=False, legacy=True),
    }
    listed = tmp_path / "allowed"
    listed.write_text(f'tester namespaces="diskq-submission-v1" {(tmp_path / "key.pub").read_text()}')
    _keygen(tmp_path / "other-key", "other")
    other = tmp_path / "other"
    other.write_text(f'tester namespaces="diskq-submission-v1" {(tmp_path / "other-key.pub").read_text()}')

    def contributors(allowed_signers=None, status=None):
        db = tmp_path / "devices.db"
        build(subs, db, allowed_signers=allowed_signers)
        if status is not None:
            con = sqlite3.connect(db)
            con.execute("UPDATE submissions SET signature = ? WHERE signature = 'intact'", (status,))
            con.commit()
            con.close()
        out = tmp_path / "_site"
        build_site(db, out)
        (page,) = (out / "devices").iterdir()
        parser = Cells()
        parser.feed(page.read_text())
        cells = {row[0]: row[2] for row in parser.rows if row and row[0] in ids.values()}
        assert len(cells) == len(ids)
        return page.read_text(), {what: cells[i] for what, i in ids.items()}

    declared = {
        "login": "tester (self-declared)",
        "name": "Ada Lovelace (self-declared)",
        "nobody": "\u2013",
        "unsigned": "Grace Hopper (self-declared)",
        "legacy": "\u2013",
    }
    html, shown = contributors()  # no allowed-signers file: whose key signed was not checked
    assert shown == declared
    assert "<td>tester</td>" not in html and "<td>Ada Lovelace</td>" not in html
    assert 'tester <span class="declared" title="the name the file gives; whose key signed it was not checked">' in html
    assert 'Grace Hopper <span class="declared" title="the name the file gives; the file is not signed">' in html
    assert contributors(status="unchecked")[1] == declared
    assert contributors(other)[1] == declared  # signed by a key not listed for the login
    html, shown = contributors(listed)
    assert shown == {**declared, "login": "tester", "name": "Ada Lovelace", "nobody": "tester"}
    assert "<td>tester</td>" in html and "<td>Ada Lovelace</td>" in html


def test_methodology_renders_the_plan_rules_with_their_sources(built):
    from diskq.plan.rules import load

    _, out, _ = built
    page = (out / "methodology.html").read_text()
    rules = load()
    assert rules["block_db"]["title"] in page and "diskq plan" in page
    assert f"<td>{rules['osds']['guideline_max_sata_sas']}</td>" in page
    assert "quincy, reef, squid, tentacle" in page  # lists read as lists, not Python reprs
    assert "bluestore-config-ref" in page and "mclock-config-ref" in page


def test_every_page_has_a_favicon_in_the_site_and_links_the_source_repository(built):
    _, out, _ = built
    for page in [out / "index.html", out / "methodology.html", next((out / "devices").iterdir())]:
        html = page.read_text()
        (icon,) = re.findall(r'<link rel="icon" href="([^"]+)"', html)
        assert (page.parent / icon).resolve().is_file()
        parser = Cells()
        parser.feed(html)
        assert parser.external.count(REPOSITORY) == 2  # the navigation and the footer
    assert (out / "static" / "favicon.svg").read_text().startswith("<svg")


def test_the_repository_comes_from_the_package_metadata_or_the_option(tmp_path, monkeypatch, capsys):
    import importlib.metadata
    import tomllib

    import diskq.publish.site as site
    from diskq.database.build import repo_root

    urls = tomllib.loads((repo_root() / "pyproject.toml").read_text())["project"]["urls"]
    assert site.source_url() == urls["Repository"]  # what pyproject.toml says, read from the metadata
    monkeypatch.setattr(importlib.metadata, "metadata", lambda name: _NoUrls())
    assert site.source_url() is None
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "site",
                "build",
                "--db",
                str(tmp_path / "none.db"),
                "--out",
                str(tmp_path / "s"),
                "--repository",
                "ftp://x",
            ]
        )
    assert exc.value.code and "--repository must be an https:// address" in capsys.readouterr().err


class _NoUrls:
    def get_all(self, name):
        return None


def test_models_with_several_firmwares_show_the_firmware_and_legacy_rows_say_so_beside_the_name(tmp_path):
    out, ids = _small_site(
        tmp_path,
        result_document("Micron 5300 MAX", {"on": {1: 9000, 2: 15000}}, firmware="D3MU001"),
        result_document("Micron 5300 MAX", {"on": {1: 9100, 2: 15500}}, firmware="D3MU401"),
        result_document("Kioxia CD6", {"on": {1: 8000, 2: 15000}}, firmware="0102"),
    )
    parser = Cells()
    parser.feed((out / "index.html").read_text())
    assert [r[1] for r in parser.rows] == ["Micron 5300 MAX D3MU401", "Micron 5300 MAX D3MU001", "Kioxia CD6"]
    subs = tmp_path / "legacy"
    # (Intel SSD S4510's 15-job figure would be questionable and left out: a plausible row here)
    write_submission(
        subs, submission(result_document("Samsung PM883", {"off": {1: 12680, 16: 41000}}, legacy=True), legacy=True)
    )
    build(subs, tmp_path / "legacy.db")
    build_site(tmp_path / "legacy.db", tmp_path / "legacy_site")
    parser = Cells()
    parser.feed((tmp_path / "legacy_site" / "index.html").read_text())
    assert parser.rows[0][1] == "Samsung PM883 legacy"
    (page,) = (tmp_path / "legacy_site" / "devices").iterdir()
    html = page.read_text()
    assert html.count('<polyline class="line"') == 0 and html.count('<circle class="dot"') == 2
    assert "the community table gives the 1-job figure and the peak" in html


@settings(max_examples=200, deadline=None)
@given(jobs=st.sets(st.integers(min_value=1, max_value=256), min_size=1, max_size=12), sweep=st.booleans())
def test_chart_invariants(jobs, sweep):
    from diskq.publish.chart import SWEEP_STEP, TICK_GAP

    numjobs = sorted(jobs)
    c = scaling_chart(
        [{"numjobs": n, "iops": 100.0 * n, "iops_min": 90.0 * n, "iops_max": 110.0 * n} for n in numjobs], sweep=sweep
    )
    assert [d["numjobs"] for d in c.dots] == numjobs  # every measured job count is a dot
    xs = {d["x"]: d["numjobs"] for d in c.dots}
    joined = 0
    for line in c.lines:  # a line only joins neighbouring measured steps of a sweep
        pts = [xs[float(p.split(",")[0])] for p in line.split()]
        assert sweep and len(pts) >= 2
        assert all(
            b <= SWEEP_STEP * a and numjobs.index(b) == numjobs.index(a) + 1 for a, b in zip(pts, pts[1:], strict=False)
        )
        joined += len(pts) - 1
    assert joined == (sum(b <= SWEEP_STEP * a for a, b in zip(numjobs, numjobs[1:], strict=False)) if sweep else 0)
    assert c.xticks[-1]["label"] == str(numjobs[-1])  # the last measured job count has its tick
    assert all(b["x"] - a["x"] >= TICK_GAP for a, b in zip(c.xticks, c.xticks[1:], strict=False)) or len(numjobs) == 1
    assert all(t["measured"] == (int(t["label"]) in jobs) for t in c.xticks)


@given(
    st.dictionaries(st.sampled_from([512, 4096, 8192, 16384, 65536, 131072, 1048576]), st.floats(1, 1e6), min_size=1)
)
def test_size_chart_invariants(curve):
    from diskq.publish.chart import TICK_GAP, size_chart

    pts = [{"block_size": bs, "iops": x, "bw_bytes": x * bs} for bs, x in curve.items()]
    c = size_chart(pts)
    p = c.plot
    for d in c.dots + c.dots2:
        assert p["x0"] <= d["x"] <= p["x1"] and p["y1"] <= d["y"] <= p["y0"]
    order = sorted(curve)
    assert [d["x"] for d in c.dots] == sorted(d["x"] for d in c.dots)  # smallest size at the left
    # the higher MB/s is drawn higher, and the higher IOPS on their own axis
    for (a, da, ia), (b, db, ib) in zip(
        zip(order, c.dots, c.dots2, strict=False), list(zip(order, c.dots, c.dots2, strict=False))[1:], strict=False
    ):
        assert (curve[a] * a < curve[b] * b) <= (da["y"] >= db["y"])
        assert (curve[a] < curve[b]) <= (ia["y"] >= ib["y"])
    assert all(b["x"] - a["x"] >= TICK_GAP for a, b in zip(c.xticks, c.xticks[1:], strict=False))
    assert bool(c.lines) == bool(c.lines2) == (len(curve) > 1)
    assert size_chart([]) is None
