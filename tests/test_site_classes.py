"""The site names what its figures measured: titles, the table's header and caption, device
page titles and chart labels name the method class (and the call: fdatasync only where the
method called it); weak public figures are marked and not ranked. Built from the repository's
legacy submissions and sources/ plus a diskq result."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from diskq.database.build import build
from diskq.database.synthetic import result_document, submission, write_submission
from diskq.publish.site import build_site
from diskq.submission import legacy
from tests.cli_support import rows

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    subs = root / "submissions"
    legacy.write_legacy(subs)
    write_submission(
        subs, submission(result_document("Micron 7450 PRO", {"off": {1: 40000, 2: 70000, 4: 110000}}, protocol="nvme"))
    )
    shutil.copytree(REPO / "sources", root / "sources")
    db = root / "devices.db"
    build(subs, db)
    out = root / "_site"
    build_site(db, out, submissions=subs, repository="https://github.com/example/diskq")
    return db, out


def _title(html: str) -> str:
    return re.search(r"<title>(.*?)</title>", html, re.S).group(1)


def _page(db: Path, out: Path, model: str) -> str:
    (dev,) = rows(db, "SELECT id FROM devices WHERE model = ?", model)
    return (out / "devices" / f"{dev['id']}.html").read_text()


def test_the_index_title_and_caption_name_the_class_not_fdatasync(site):
    _, out = site
    index = (out / "index.html").read_text()
    assert "fdatasync IOPS" not in index
    assert _title(index).endswith("1-job IOPS of 20 devices by method class")
    caption = re.search(r'<caption id="caption"[^>]*>(.*?)</caption>', index).group(1)
    assert caption.endswith("sorted by 1-job IOPS within each method class (4 KiB write + flush first)")


def test_device_titles_say_o_sync_fua_or_fdatasync_as_measured(site):
    db, out = site
    pm883 = _page(db, out, "Samsung PM883")  # the community table's --sync=1 on SATA: a flush, sent by O_SYNC
    assert _title(pm883).endswith(": O_SYNC, flush scaling")
    assert "of 4 KiB write + flush (O_SYNC)" in pm883  # the 1-job figure's line names the class
    assert "fdatasync scaling" not in pm883
    i750 = _page(db, out, "Intel SSD 750 PCIe")  # --sync=1 on NVMe: FUA writes
    assert _title(i750).endswith(": O_SYNC, FUA scaling") and "of 4 KiB FUA write (O_SYNC)" in i750
    assert "IOPS, 4 KiB FUA write" in i750  # the chart's y title
    ours = _page(db, out, "Micron 7450 PRO")
    assert _title(ours).endswith(": fdatasync scaling") and "of 4 KiB write + flush (fdatasync)" in ours
    assert "IOPS, 4 KiB write + flush" in ours


def test_weak_public_figures_are_marked_and_never_ranked(site):
    db, out = site
    index = (out / "index.html").read_text()
    (m10,) = rows(
        db,
        "SELECT c.model_id, c.class_rank FROM model_class c JOIN models m ON m.id = c.model_id "
        "WHERE m.name LIKE 'Intel Optane Memory M10%'",
    )
    assert m10["class_rank"] is None
    row = re.search(
        rf'<tr[^>]*>\s*<td class="p1 n">([^<]*)</td>\s*<td class="p1 name"><a href="public/'
        rf'{m10["model_id"]}\.html">.*?</tr>',
        index,
        re.S,
    )
    assert row.group(1) == "\u2013" and "weak figure, not ranked: a run of 0.3 s" in row.group(0)
    page = (out / "public" / f"{m10['model_id']}.html").read_text()
    assert "weak figure, not ranked" in page and "#1 in its class" not in page
