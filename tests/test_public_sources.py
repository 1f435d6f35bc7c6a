"""The public-figures catalogue (sources/): loading, checking, and the method classes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from diskq.analyse import methodclass
from diskq.analyse.methodclass import Traits, classify
from diskq.database import sources
from diskq.errors import SourcesError
from diskq.submission import methods

FIXTURE = Path(__file__).parent / "fixtures" / "sources"
REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "public-figures"


@pytest.fixture
def catalogue_dir(tmp_path) -> Path:
    target = tmp_path / "sources"
    shutil.copytree(FIXTURE, target)
    return target


def test_fixture_loads_with_every_row():
    cat = sources.load(FIXTURE)
    assert sorted(cat.sources) == ["S01_shan2014", "S05_proxmox2018", "S06_vitastor", "S07_freebsd_diskinfo"]
    assert sorted(cat.methods) == [
        "M_DISKINFO_SLOGBENCH",
        "M_FSYNC_RAND_LIBAIO",
        "M_SYNC_SEQ_LIBAIO",
        "M_SYNC_SEQ_PSYNC",
    ]
    assert len(cat.figures) == 9
    slog = [f for f in cat.figures if f.source_id == "S07_freebsd_diskinfo"][0]
    assert (slog.model, slog.iops, slog.protocol, slog.where) == (
        "Samsung 950 PRO",
        478,
        "nvme",
        "figures/S07_freebsd_diskinfo.csv:2",
    )
    assert cat.methods["M_SYNC_SEQ_PSYNC"].runtime_s == 60 and cat.methods["M_DISKINFO_SLOGBENCH"].runtime_s is None


def test_absent_or_empty_directory_is_no_figures(tmp_path):
    assert not sources.load(tmp_path / "sources")
    (tmp_path / "sources").mkdir()
    assert not sources.load(tmp_path / "sources")


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            ("figures/S01_shan2014.csv", "101500", "-3"),
            "sources/figures/S01_shan2014.csv:2: iops: Input should be greater than 0",
        ),
        (("figures/S01_shan2014.csv", ",NVMe,", ",USB,"), "sources/figures/S01_shan2014.csv:2: interface:"),
        (
            ("figures/S05_proxmox2018.csv", "M_SYNC_SEQ_LIBAIO,1,1,12518", "M_NOPE,1,1,12518"),
            "sources/figures/S05_proxmox2018.csv:3: method_id: 'M_NOPE' is not declared in methods.toml",
        ),
        (
            ("figures/S05_proxmox2018.csv", "M_SYNC_SEQ_LIBAIO,1,1,12518", "M_SYNC_SEQ_PSYNC,1,1,12518"),
            "sources/figures/S05_proxmox2018.csv:3: method_id: 'M_SYNC_SEQ_PSYNC' is not among S05_proxmox2018's",
        ),
        (
            ("figures/S07_freebsd_diskinfo.csv", ",unknown,", ",maybe,"),
            "sources/figures/S07_freebsd_diskinfo.csv:2: write_cache:",
        ),
        (
            ("figures/S07_freebsd_diskinfo.csv", "source_id,model", "source,model"),
            "sources/figures/S07_freebsd_diskinfo.csv:1: header",
        ),
        (
            (
                "methods.toml",
                'iodepth = 1\ndirect = true\ntarget = "raw"\nruntime_s = 60\nblock_size = "4k"\nnotes = "O_SYNC',
                'iodepth = 0\ndirect = true\ntarget = "raw"\nruntime_s = 60\nblock_size = "4k"\nnotes = "O_SYNC',
            ),
            "sources/methods.toml:1: [M_SYNC_SEQ_PSYNC] iodepth: Input should be greater than or equal to 1",
        ),
        (("methods.toml", 'sync = "flush"', 'sync = "maybe"'), "sources/methods.toml:25: [M_DISKINFO_SLOGBENCH] sync:"),
        (
            ("sources.toml", 'url = "https://freshbsd.org', 'url = "ftp://freshbsd.org'),
            "sources/sources.toml:24: [S07_freebsd_diskinfo] url: must be an http(s) address",
        ),
        (
            ("sources.toml", 'method_ids = ["M_DISKINFO_SLOGBENCH"]', 'method_ids = ["M_GONE"]'),
            "sources/sources.toml:24: [S07_freebsd_diskinfo] method_ids: 'M_GONE' is not declared",
        ),
        (("sources.toml", "[S05_proxmox2018]", "[S05-proxmox]"), "sources/sources.toml:14: [S05-proxmox]: an id is"),
        (
            ("sources.toml", 'licence = "BSD-2-Clause"', 'licence = "BSD-2-Clause"\nlicense = "x"'),
            "sources/sources.toml:24: [S07_freebsd_diskinfo] license: Extra inputs are not permitted",
        ),
        (("sources.toml", "[S01_shan2014]", "[S01_shan2014"), "sources/sources.toml: not valid TOML"),
    ],
)
def test_bad_input_is_one_line_naming_file_line_and_field(catalogue_dir, edit, expected):
    name, old, new = edit
    path = catalogue_dir / name
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(SourcesError) as err:
        sources.load(catalogue_dir)
    assert str(err.value).startswith(expected), str(err.value)
    assert "\n" not in str(err.value)


def test_figures_of_an_undeclared_source_and_broken_csv_are_refused(catalogue_dir):
    (catalogue_dir / "figures" / "S99_nobody.csv").write_text(",".join(sources.COLUMNS) + "\n")
    with pytest.raises(SourcesError, match=r"^sources/figures/S99_nobody.csv: S99_nobody is not a source"):
        sources.load(catalogue_dir)
    (catalogue_dir / "figures" / "S99_nobody.csv").unlink()
    path = catalogue_dir / "figures" / "S07_freebsd_diskinfo.csv"
    path.write_text(path.read_text() + "S07_freebsd_diskinfo,short,row\n")
    with pytest.raises(SourcesError, match=r"S07_freebsd_diskinfo.csv:3: 3 columns, the header has 16"):
        sources.load(catalogue_dir)
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(SourcesError, match="not UTF-8"):
        sources.load(catalogue_dir)


def test_same_drive_two_methods_two_classes():
    """Han's O_SYNC figure and FreeBSD's flush-per-write figure for the Samsung 950 PRO are
    different classes; the SM863's O_SYNC figure on SATA is the flush class, as fdatasync."""
    cat = sources.load(FIXTURE)
    by = {(f.source_id, f.model): f for f in cat.figures}

    def cls(f):
        m = cat.methods[f.method_id]
        return classify(Traits(m.sync, m.pattern, m.target, m.direct, m.iodepth), f.protocol).id

    assert cls(by["S01_shan2014", "Samsung SSD 950 PRO 512GB NVMe"]) == "fua/write/raw/direct"
    assert cls(by["S07_freebsd_diskinfo", "Samsung 950 PRO"]) == "flush/randwrite/raw/direct"
    assert cls(by["S01_shan2014", "Samsung SM863 240GB"]) == "flush/write/raw/direct" == methodclass.MAIN
    assert cls(by["S05_proxmox2018", "Intel DC S3510 120GB"]) == methodclass.MAIN


def test_legacy_method_is_o_sync_and_flush_class_on_sata_only():
    t = methods.traits(methods.COMMUNITY_OSYNC[0])
    assert t.sync == "o_sync"
    assert classify(t, "ata").id == methodclass.MAIN
    assert classify(t, "nvme").kind == classify(t, "scsi").kind == "fua"
    assert classify(t, "pcie").kind == classify(t, None).kind == "sync-unknown"
    for m in (methods.BENCH, methods.COMMUNITY):
        assert classify(methods.traits(m[0]), "nvme").id == methodclass.MAIN


_SYNC = st.sampled_from(["fdatasync", "fsync", "o_sync", "o_dsync", "o_sync+fsync", "flush"])
_PROTO = st.sampled_from(["ata", "scsi", "nvme", "pcie", "unknown", None])


_PLATFORM = st.sampled_from(["linux", "freebsd", "illumos", "windows", "unknown"])


@given(
    _SYNC,
    st.sampled_from(["write", "randwrite"]),
    st.sampled_from(["raw", "file"]),
    st.booleans(),
    st.integers(1, 256),
    _PROTO,
    st.sampled_from([512, 4096, 8192, 16384, 131072]),
    _PLATFORM,
)
def test_every_method_has_one_class_and_the_class_keeps_what_differs(
    sync, pattern, target, direct, qd, proto, bs, platform
):
    c = classify(Traits(sync, pattern, target, direct, qd, block_size=bs, platform=platform), proto)
    assert c.reason and c.label == methodclass.label(c.id)
    parts = c.id.split("/")
    assert parts[1:4] == [pattern, target, "direct" if direct else "buffered"]
    assert any(p.startswith("qd") for p in parts[4:]) == (qd > 1)
    # the block size is part of the class: 4 KiB unsaid, any other size in the id and the words
    assert len(parts) == 4 + (qd > 1) + (bs != 4096)
    assert (bs == 4096) == ("KiB" not in c.label and "byte" not in c.label)
    assert methodclass.short(c.id).startswith("4 KiB" if bs == 4096 else methodclass.size_part(bs).upper()[:-1])
    # a flush after every write is the flush class wherever the drive is
    if sync in ("fdatasync", "fsync", "flush", "o_sync+fsync"):
        assert c.kind == "flush"
    if sync in ("o_sync", "o_dsync"):
        # outside Linux, what O_SYNC sends is not known
        if platform != "linux":
            assert c.kind == "sync-unknown"
        # a direct O_SYNC write is the flush class only behind libata; buffered, it is written back and flushed
        elif direct and proto != "ata":
            assert c.kind != "flush"
        elif not direct:
            assert c.kind == "flush"


def test_shared_survey_rows_are_real_public_figures():
    """The sample's quotes are rows of the survey the catalogue is built from (when it is here)."""
    if not SHARED.is_dir():
        pytest.skip("the public-figures survey is not beside the repository")
    survey = "".join(p.read_text() for p in SHARED.glob("S0*.csv"))
    for fig in sources.load(FIXTURE).figures:
        assert fig.quote in survey, fig.quote


def test_an_empty_attribution_is_a_licence_that_asks_for_none(catalogue_dir):
    path = catalogue_dir / "sources.toml"
    path.write_text(
        path.read_text().replace('attribution = "FreeBSD commit r321928 by Alexander Motin"', 'attribution = ""')
    )
    assert sources.load(catalogue_dir).sources["S07_freebsd_diskinfo"].attribution == ""
