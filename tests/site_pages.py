"""Every kind of page diskq writes, rendered for the page checks (html-validate in
tests/test_site_html.py, axe-core in tests/test_site_browser.py).

* the site: index, methodology, a device page of every kind (legacy rows, two firmwares, a
  block-size profile, sustained writes, public figures of its family, hosts) and a page per model
  known only from public figures (``public/<id>.html``), built from synthetic submissions and
  the sample of ``sources/`` in tests/fixtures/sources;
* a fleet report (``diskq fleet report --html``) of three hosts, one drive of which is RAM-backed;
* cluster reports (``diskq cluster --html``) of recorded real clusters, read from
  ``../shared/data/ceph-clusters`` beside the repository (not committed: absent, they are skipped
  with the reason by the tests that want them).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCES = Path(__file__).resolve().parent / "fixtures" / "sources"
CLUSTERS = Path(os.environ.get("DISKQ_CEPH_CLUSTERS") or REPO.parent / "shared" / "data" / "ceph-clusters")
#: recorded clusters whose reports hold every section: findings, configuration lines, DB drives,
#: OSDs, missing inputs (a cluster with a DB device per HDD, one with 24 OSDs on one NVMe, a VM)
CLUSTER_CASES = (
    "clyso-01-quincy-17.2.5-hdd-pm1733-nvme-db",
    "clyso-02-pacific-16.2.10-hdd-24-per-nvme-db",
    "ceph-docs-spillover-pacific-16.2.14",
    "clyso-04-octopus-15.2.14-azure-vm-db",
)


def write_site(root: Path, repository: str = "https://github.com/example/diskq") -> Path:
    """Build a site with every kind of section under ``root/_site`` and return that directory."""
    from diskq.database.build import build
    from diskq.database.synthetic import result_document, submission, write_submission, write_synthetic
    from diskq.database.synthetic_sustained import sustained_pair
    from diskq.publish.site import build_site

    subs = root / "submissions"
    write_synthetic(subs, 40, seed=5, devices=8)
    write_submission(
        subs,
        submission(
            result_document(
                "Samsung PM883",
                {"off": {1: 12680, 2: 24000, 4: 41000, 8: 52000, 16: 59338}, "on": {1: 5094, 16: 27521}},
            )
        ),
    )
    write_submission(
        subs,
        submission(result_document("Intel SSD S4510", {"unknown": {1: 1600, 15: 48409}}, legacy=True), legacy=True),
    )
    write_submission(
        subs,
        submission(
            result_document(
                "Intel Optane SSD 900P",
                {"on": {1: 30000, 2: 52000, 4: 80000}, "off": {1: 29000, 2: 50000}},
                protocol="nvme",
                volatile_write_cache=False,
                sizes={"on": {4096: 30000, 8192: 27000, 131072: 8000}, "off": {4096: 29000, 8192: 26000}},
            )
        ),
    )
    write_submission(
        subs,
        submission(
            result_document(
                "Crucial P3 Plus 2TB",
                {"on": {1: 21000, 2: 38000, 4: 52000}},
                protocol="nvme",
                sustained=sustained_pair(seconds=60, cliff_at=40, seed=0),
            )
        ),
    )
    # public figures beside the submissions, as sources/ beside submissions/ in the repository
    shutil.copytree(SOURCES, root / "sources")
    db = root / "devices.db"
    build(subs, db)
    site = root / "_site"
    build_site(db, site, submissions=subs, repository=repository)
    return site


def write_fleet_report(root: Path) -> Path:
    """``diskq fleet report --html`` over three hosts of three drives; returns the page."""
    from benchmarks.fleet_report import write_fleet
    from diskq.analyse.memorybacked import memory_backed_note
    from diskq.cli import main

    write_fleet(root / "fleet", hosts=3, drives=3)
    # one drive measured on RAM (a loop device over a file on tmpfs): named, left out of the median
    ram = sorted((root / "fleet").glob("*/sd*.json"))[-1]
    doc = json.loads(ram.read_text())
    doc["notes"] = [*doc.get("notes", []), memory_backed_note("/dev/loop1 is a loop device over a file on tmpfs")]
    ram.write_text(json.dumps(doc))
    page = root / "fleet.html"
    try:
        main(["fleet", "report", str(root / "fleet"), "--html", str(page)])
    except SystemExit as exc:
        assert not exc.code, exc.code
    return page


def write_cluster_reports(root: Path) -> list[Path]:
    """The cluster report of each of :data:`CLUSTER_CASES` (an empty list without the recordings)."""
    from diskq.cluster import inputs, report
    from diskq.publish.cluster import write_html

    pages = []
    for name in CLUSTER_CASES:
        if not (CLUSTERS / name).is_dir():
            continue
        doc = report.build(inputs.read_dir(CLUSTERS / name), db=REPO / "devices.db")
        page = root / f"cluster-{name}.html"
        write_html(doc, page)
        pages.append(page)
    return pages
