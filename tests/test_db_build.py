"""devices.db build: grouping, aggregation, determinism, atomic replace, --check, hostile input."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from diskq.database import build as build_mod
from diskq.database import device_rows
from diskq.database import scan as scan_mod
from diskq.database import schema as schema_mod
from diskq.database.build import build, check
from diskq.database.digest import content_digest, search_text, stored_digest
from diskq.database.synthetic import result_document, submission, write_submission, write_synthetic
from diskq.errors import DatabaseError, DatabasePathError
from tests.cli_support import cli, rows


def add(root: Path, model: str, curves: dict, **kw) -> Path:
    legacy = kw.pop("legacy", False)
    contributor = kw.pop("contributor", "Tester")
    result = result_document(model, curves, legacy=legacy, **kw)
    return write_submission(root, submission(result, legacy=legacy, contributor=contributor))


@pytest.fixture
def subs(tmp_path) -> Path:
    root = tmp_path / "submissions"
    root.mkdir()
    return root


def test_models_are_grouped_by_normalised_name_and_firmware(subs, tmp_path):
    add(subs, "Samsung SSD 860 PRO", {"off": {1: 1000, 2: 1900}})
    add(subs, "SAMSUNG  SSD 860 pro ", {"off": {1: 1100, 2: 2000}})
    add(subs, "samsung ssd 860 PRO", {"off": {1: 1050, 2: 1950}}, firmware="FW2")
    add(subs, "Intel SSD S4510", {"off": {1: 1600, 2: 3100}})
    report = build(subs, tmp_path / "devices.db")
    assert report.submissions == 4 and report.devices == 3 and not report.skipped
    devs = rows(
        tmp_path / "devices.db", "SELECT model_key, firmware, submissions FROM devices ORDER BY model_key, firmware"
    )
    assert [(d["model_key"], d["firmware"], d["submissions"]) for d in devs] == [
        ("intel ssd s4510", "FW1", 1),
        ("samsung ssd 860 pro", "FW1", 2),
        ("samsung ssd 860 pro", "FW2", 1),
    ]


def test_aggregation_medians_spread_counts_and_every_point_kept(subs, tmp_path):
    for one, two in ((1000, 1800), (1200, 2600), (1100, 2000)):
        add(subs, "Micron 5300 PRO", {"off": {1: one, 2: two, 4: two * 1.1}})
    add(subs, "Micron 5300 PRO", {"off": {1: 5000, 4: 9000}}, legacy=True)  # other method: listed, not counted
    db = tmp_path / "devices.db"
    build(subs, db)
    (dev,) = rows(db, "SELECT * FROM devices")
    assert dev["iops_1job"] == 1100 and dev["submissions"] == 3 and dev["legacy"] == 0 and dev["verified"] == 0
    assert dev["max_iops"] == pytest.approx(2200)  # median of the per-submission peaks 1980, 2860, 2200
    assert dev["peak_jobs"] == 4 and dev["cache"] == "off"
    (cache,) = rows(db, "SELECT * FROM device_cache")
    assert (cache["iops_1job"], cache["iops_1job_min"], cache["iops_1job_max"]) == (1100, 1000, 1200)
    curve = rows(db, "SELECT numjobs, iops, iops_min, iops_max, n FROM curve ORDER BY numjobs")
    assert [(c["numjobs"], c["iops"], c["iops_min"], c["iops_max"], c["n"]) for c in curve] == [
        (1, 1100, 1000, 1200, 3),
        (2, 2000, 1800, 2600, 3),
        (4, pytest.approx(2200), pytest.approx(1980), pytest.approx(2860), 3),
    ]
    assert rows(db, "SELECT count(*) AS n FROM points")[0]["n"] == 3 * 3 + 2
    subs_rows = rows(db, "SELECT legacy, aggregated FROM submissions ORDER BY legacy")
    assert [(s["legacy"], s["aggregated"]) for s in subs_rows] == [(0, 1), (0, 1), (0, 1), (1, 0)]
    notes = json.loads(dev["notes"])
    assert any("another method" in n for n in notes)


def test_legacy_only_device_is_flagged_and_ranked_by_one_job_iops(subs, tmp_path):
    add(subs, "Intel SSD 750 PCIe", {"unknown": {1: 64235, 8: 192440}}, protocol="nvme", legacy=True)
    add(subs, "Samsung PM863a", {"off": {1: 17983, 10: 58876}}, legacy=True)
    add(subs, "Samsung SSD 970 PRO", {"on": {1: 456, 2: 840}}, protocol="nvme")
    db = tmp_path / "devices.db"
    build(subs, db)
    devs = rows(
        db, "SELECT rank, model, legacy, submissions, iops_1job, max_iops, peak_jobs FROM devices ORDER BY rank"
    )
    assert [d["model"] for d in devs] == ["Intel SSD 750 PCIe", "Samsung PM863a", "Samsung SSD 970 PRO"]
    assert [d["legacy"] for d in devs] == [1, 1, 0]
    assert (devs[0]["max_iops"], devs[0]["peak_jobs"]) == (192440, 8)


def test_best_safe_cache_setting_skips_a_setting_whose_flush_check_fails(subs, tmp_path):
    # cache on: fast, but fdatasync costs nothing compared with plain writes -> flushes ignored
    add(subs, "Lying SSD 1", {"off": {1: 2000, 2: 3800}, "on": {1: 30000, 2: 52000}}, nosync={"on": 31000})
    db = tmp_path / "devices.db"
    build(subs, db)
    (dev,) = rows(db, "SELECT cache, iops_1job, ceph_waldb FROM devices")
    assert dev["cache"] == "off" and dev["iops_1job"] == 2000
    caches = {c["write_cache"]: c for c in rows(db, "SELECT write_cache, safe, scaling FROM device_cache")}
    assert {k: c["safe"] for k, c in caches.items()} == {"off": 1, "on": 0}
    assert caches["on"]["scaling"] and caches["off"]["scaling"]  # the unsafe curve is still classified
    assert rows(db, "SELECT flush_ok FROM runs WHERE write_cache = 'on'")[0]["flush_ok"] == 0


def test_scaling_and_verdicts_are_recomputed_from_the_median_curve(subs, tmp_path):
    add(subs, "Pliant LB206S MS04", {"unknown": {1: 5028, 2: 2651, 6: 1088, 8: 745, 10: 784}}, protocol="scsi")
    db = tmp_path / "devices.db"
    build(subs, db)
    (dev,) = rows(db, "SELECT scaling, ceph_waldb, osds_per_device, verdicts FROM devices")
    assert dev["scaling"] == "regressing"
    assert dev["ceph_waldb"] == "good"  # 5028 1-job IOPS: between the good and excellent thresholds
    assert json.loads(dev["verdicts"])["ceph_waldb"]["iops"] == 5028


def test_build_is_deterministic_across_runs_worker_counts_and_file_times(subs, tmp_path, monkeypatch):
    write_synthetic(subs, 240, seed=7)
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    monkeypatch.setattr(scan_mod, "PARALLEL_THRESHOLD", 10)
    ra = build(subs, a, jobs=2)
    for i, p in enumerate(sorted(subs.rglob("*.json"))):
        os.utime(p, (1_000_000 + i * 7919 % 1000, 1_000_000 + i * 7919 % 1000))
    rb = build(subs, b, jobs=1)
    assert ra.digest == rb.digest and ra.submissions == 240
    for table in ("devices", "device_cache", "curve", "submissions", "points"):
        assert rows(a, f"SELECT * FROM {table} ORDER BY 1, 2") == rows(b, f"SELECT * FROM {table} ORDER BY 1, 2")
    assert stored_digest(a) == ra.digest
    assert rows(a, "SELECT value FROM meta WHERE key = 'content_digest'")[0]["value"] == ra.digest


def test_digest_changes_when_one_figure_changes(subs, tmp_path):
    path = add(subs, "Kioxia CD6", {"on": {1: 9000, 2: 17000}}, protocol="nvme")
    db = tmp_path / "devices.db"
    first = build(subs, db).digest
    con = sqlite3.connect(db)
    con.execute("UPDATE points SET iops = iops + 1 WHERE numjobs = 2")
    con.commit()
    assert content_digest(con) != first
    con.close()
    assert path.exists()


def test_hostile_and_corrupt_files_are_skipped_and_reported(subs, tmp_path):
    good = add(subs, "Samsung PM883", {"off": {1: 12680, 16: 59338}})
    bad = subs / "bad" / "files"
    bad.mkdir(parents=True)
    (bad / "truncated.json").write_text(good.read_text()[:300])
    (bad / "nan.json").write_text(good.read_text().replace('"iops": 12680.0', '"iops": NaN', 1))
    (bad / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (bad / "binary.json").write_bytes(os.urandom(2048))
    (bad / "array.json").write_text("[1, 2, 3]")
    (bad / "huge.json").write_bytes(b" " * (build_mod_max() + 1))
    markup = json.loads(good.read_text())
    markup["result"]["device"]["model"] = "<script>alert(1)</script>"
    (bad / "markup.json").write_text(json.dumps(markup))
    shutil.copy(good, bad / "copy-elsewhere.json")  # wrong place and wrong name for its id
    os.symlink("/etc/passwd", bad / "link.json")
    db = tmp_path / "devices.db"
    report = build(subs, db)
    assert report.submissions == 1 and report.devices == 1
    skipped = {s.path for s in report.skipped}
    assert skipped == {
        f"bad/files/{n}.json"
        for n in ("truncated", "nan", "deep", "binary", "array", "huge", "markup", "copy-elsewhere", "link")
    }
    assert all(s.message for s in report.skipped)
    assert len(rows(db, "SELECT * FROM skipped")) == len(report.skipped)
    assert rows(db, "SELECT model FROM devices")[0]["model"] == "Samsung PM883"


def build_mod_max() -> int:
    from diskq.database.extract import MAX_FILE_BYTES

    return MAX_FILE_BYTES


def test_duplicate_ids_count_once(subs, tmp_path):
    path = add(subs, "WD Blue WDS100T2B0A-00SM50", {"off": {1: 1751, 2: 2225}})
    other = subs / "zz" / "copy"
    other.mkdir(parents=True)
    shutil.copy(path, other / path.name)
    report = build(subs, tmp_path / "devices.db")
    assert report.submissions == 1
    assert [s.path for s in report.skipped] == [f"zz/copy/{path.name}"]


def test_replace_is_atomic_and_leaves_no_temporary_files(subs, tmp_path, monkeypatch):
    add(subs, "Crucial MX500", {"off": {1: 500, 2: 900}})
    db = tmp_path / "out" / "devices.db"
    build(subs, db)
    before = db.read_bytes()
    add(subs, "Crucial MX500", {"off": {1: 520, 2: 950}})

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(device_rows, "write_devices", boom)
    with pytest.raises(RuntimeError):
        build(subs, db)
    assert db.read_bytes() == before
    assert sorted(p.name for p in db.parent.iterdir()) == ["devices.db"]


def test_check_passes_when_current_and_fails_when_out_of_date(subs, tmp_path, capsys):
    add(subs, "Samsung MZQLW960HMJP-00003", {"on": {1: 34090, 16: 268030}}, protocol="nvme")
    db = tmp_path / "devices.db"
    build(subs, db)
    assert check(subs, db).digest == stored_digest(db)
    add(subs, "Samsung MZQLW960HMJP-00003", {"on": {1: 33000, 16: 250000}}, protocol="nvme")
    with pytest.raises(DatabaseError, match="out of date"):
        check(subs, db)
    assert cli("db", "build", "--check", "--submissions", str(subs), "--db", str(db)) == DatabaseError.exit_code
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("diskq: error:") and "out of date" in err[0]
    assert "Traceback" not in "\n".join(err)


def test_cli_reports_skipped_files_and_fails_only_with_strict(subs, tmp_path, capsys):
    add(subs, "Transcend SSD 220s", {"off": {1: 1420, 8: 5760}})
    (subs / "junk.json").write_text("{not json")
    db = tmp_path / "devices.db"
    assert cli("db", "build", "--submissions", str(subs), "--db", str(db)) == 0
    err = capsys.readouterr().err
    assert "skipped junk.json" in err and "1 skipped" in err
    assert cli("db", "build", "--strict", "--submissions", str(subs), "--db", str(db)) == DatabaseError.exit_code
    assert "diskq: error: 1 submission file(s) skipped" in capsys.readouterr().err


def test_without_trigram_support_the_fts_table_is_left_out(subs, tmp_path, monkeypatch):
    add(subs, "Sandisk Extreme Pro", {"off": {1: 860, 8: 3400}})
    monkeypatch.setattr(build_mod, "trigram_supported", lambda: False)
    db = tmp_path / "devices.db"
    build(subs, db)
    assert rows(db, "SELECT value FROM meta WHERE key = 'fts'")[0]["value"] == "none"
    assert not rows(db, "SELECT name FROM sqlite_master WHERE name = 'device_search'")
    from diskq.database.lookup import lookup

    assert lookup(db, "extreme pro")[0].device["model"] == "Sandisk Extreme Pro"


def test_schema_file_is_executed_as_is(subs, tmp_path):
    add(subs, "Intel SSD 545", {"on": {1: 1500, 8: 6460}})
    db = tmp_path / "devices.db"
    build(subs, db)
    text = schema_mod.schema_path().read_text()
    created = {r["name"] for r in rows(db, "SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")}
    for name in (
        "meta",
        "submissions",
        "runs",
        "points",
        "devices",
        "device_cache",
        "curve",
        "skipped",
        "device_search",
        "submissions_device",
        "devices_model_key",
    ):
        assert f" {name} " in text and name in created


def _keygen(path: Path, comment: str) -> Path:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)], check=True)
    return path


def _signers_file(path: Path, principal: str, key: Path) -> Path:
    path.write_text(f'{principal} namespaces="diskq-submission-v1" {(key.parent / (key.name + ".pub")).read_text()}')
    return path


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed")
def test_signatures_are_verified_only_against_the_allowed_signers_given_to_the_build(subs, tmp_path):
    from diskq.submission.sign import sign_submission

    key = _keygen(tmp_path / "key", "tester")
    sub = submission(result_document("Samsung PM1643a", {"off": {1: 18545, 16: 93229}}, protocol="scsi"))
    write_submission(subs, sign_submission(sub, key, principal="tester"))
    add(subs, "Samsung PM1643a", {"off": {1: 18000, 16: 90000}}, protocol="scsi")  # unsigned
    db = tmp_path / "devices.db"

    # no allowed-signers file: the signature is intact, whose key it is was not checked
    report = build(subs, db)
    assert report.allowed_signers == "none" and not report.skipped
    (dev,) = rows(db, "SELECT submissions, verified, unchecked FROM devices")
    assert (dev["submissions"], dev["verified"], dev["unchecked"]) == (2, 0, 1)
    got = rows(db, "SELECT signature, verified, signer FROM submissions ORDER BY signature")
    assert got == [
        {"signature": "intact", "verified": 0, "signer": "tester"},
        {"signature": "unsigned", "verified": 0, "signer": None},
    ]
    assert rows(db, "SELECT value FROM meta WHERE key = 'allowed_signers'") == [{"value": "none"}]

    # the key listed for its principal: verified
    listed = _signers_file(tmp_path / "allowed", "tester", key)
    report = build(subs, db, allowed_signers=listed)
    assert report.allowed_signers.startswith("sha256:") and not report.skipped
    (dev,) = rows(db, "SELECT submissions, verified, unchecked FROM devices")
    assert (dev["submissions"], dev["verified"], dev["unchecked"]) == (2, 1, 0)
    assert [r["signature"] for r in rows(db, "SELECT signature FROM submissions ORDER BY signature")] == [
        "unsigned",
        "verified",
    ]

    # a file that lists another key: kept and labelled, neither skipped nor verified
    other = _signers_file(tmp_path / "other", "tester", _keygen(tmp_path / "other-key", "other"))
    report = build(subs, db, allowed_signers=other)
    assert report.submissions == 2 and not report.skipped
    assert [r["signature"] for r in rows(db, "SELECT signature FROM submissions ORDER BY signature")] == [
        "unlisted",
        "unsigned",
    ]
    assert rows(db, "SELECT verified, unchecked FROM devices") == [{"verified": 0, "unchecked": 0}]


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed")
def test_a_throwaway_key_claiming_a_login_is_not_shown_as_that_signer(subs, tmp_path):
    from diskq.publish.site import build_site
    from diskq.submission.sign import sign_submission

    key = _keygen(tmp_path / "throwaway", "x")
    sub = submission(
        result_document("Samsung PM1643a", {"off": {1: 18545, 16: 93229}}, protocol="scsi"), contributor=None
    )
    write_submission(subs, sign_submission(sub, key, principal="torvalds"))
    db = tmp_path / "devices.db"
    build(subs, db)
    out = tmp_path / "_site"
    build_site(db, out)
    (page,) = (out / "devices").iterdir()
    html = page.read_text()
    assert "signed by" not in html and "signature intact (signer not checked)" in html
    assert ">torvalds<" not in html
    index = (out / "index.html").read_text()
    assert "verified" not in index.split("<tbody>")[1]  # no verified badge in the table
    methodology = (out / "methodology.html").read_text()
    assert "built without an allowed-signers file" in methodology


def test_validation_memo_gives_the_same_database_and_forgets_on_code_change(subs, tmp_path, monkeypatch):
    from diskq.database import memo as memo_mod

    write_synthetic(subs, 40, seed=5, devices=6)
    (subs / "junk.json").write_text("[]")
    memo = tmp_path / "memo.sqlite"
    plain = build(subs, tmp_path / "plain.db")
    cold = build(subs, tmp_path / "cold.db", memo=memo)
    entries = rows(memo, "SELECT count(*) AS n FROM verdict")[0]["n"]
    assert entries == 41 + plain.devices  # every file (also the skipped one) and every device analysis

    calls = []
    real = scan_mod.read_submission
    monkeypatch.setattr(scan_mod, "read_submission", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    warm = build(subs, tmp_path / "warm.db", memo=memo)
    assert calls == []  # nothing validated twice
    assert plain.digest == cold.digest == warm.digest
    assert [s.path for s in warm.skipped] == ["junk.json"]

    changed = add(subs, "Kingston DC600M", {"off": {1: 2500, 2: 4800}})
    monkeypatch.setattr(memo_mod, "fingerprint", lambda signers: "other code")
    monkeypatch.setattr(build_mod, "fingerprint", lambda signers: "other code")
    calls.clear()
    again = build(subs, tmp_path / "again.db", memo=memo)
    assert len(calls) == 42 and again.submissions == 41  # new code: everything validated again
    calls.clear()
    changed.unlink()
    build(subs, tmp_path / "again.db", memo=memo)
    assert calls == []
    assert rows(memo, "SELECT count(*) AS n FROM verdict")[0]["n"] == 41 + plain.devices  # stale entries dropped


def test_new_memo_answers_reach_the_memo_file_only_when_the_build_ends(tmp_path):
    """Workers read the memo while the build runs: nothing writes into it until close(), and a
    failed build adds nothing and leaves no temporary file behind."""
    from diskq.database.memo import Memo

    path = tmp_path / "memo.sqlite"
    build_side, worker_side = Memo(path, "code"), Memo(path, "code")
    build_side.open_for_writing()
    build_side.put("k1", '{"answer": 1}')
    assert worker_side.get("k1") is None
    assert len([p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]) == 1
    build_side.close()
    assert Memo(path, "code").get("k1") == '{"answer": 1}'

    failed = Memo(path, "code")
    failed.open_for_writing()
    failed.put("k1", None)
    failed.put("k2", '{"answer": 2}')
    failed.abandon()
    later = Memo(path, "code")
    assert later.get("k2") is None and later.get("k1") == '{"answer": 1}'
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_memo_temporary_file_of_a_killed_build_is_removed(subs, tmp_path):
    write_synthetic(subs, 3, seed=2, devices=1)
    memo = tmp_path / "memo.sqlite"
    child = subprocess.Popen(["true"])
    child.wait()
    stale = tmp_path / f".memo.sqlite.{child.pid}.k1ll3d.tmp"
    stale.write_bytes(b"half a memo")
    report = build(subs, tmp_path / "devices.db", memo=memo)
    assert not stale.exists()
    assert rows(memo, "SELECT count(*) AS n FROM verdict")[0]["n"] == 3 + report.devices  # files and analyses


def test_the_committed_devices_db_is_what_a_build_of_the_committed_submissions_gives(tmp_path):
    # any change to validation, aggregation or analysis that changes the database must come with
    # a rebuilt devices.db (`diskq db build`); the Pages workflow relies on the same check
    root = build_mod.repo_root()
    assert (
        cli(
            "db",
            "build",
            "--check",
            "--no-memo",
            "--submissions",
            str(root / "submissions"),
            "--db",
            str(root / "devices.db"),
            "--allowed-signers",
            str(root / "allowed_signers"),
        )
        == 0
    )


# --- hostile paths: one-line errors, never a traceback or a hang -----------------------------


def _one_line_error(capsys, *needles: str) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    first = err.strip().splitlines()[0]
    assert first.startswith("diskq: error:"), err
    for needle in needles:
        assert needle in first, first
    return first


def test_allowed_signers_that_does_not_exist_is_a_one_line_error(subs, tmp_path, capsys, monkeypatch):
    add(subs, "Crucial MX500", {"off": {1: 500, 2: 900}})
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the default memo
    db = tmp_path / "devices.db"
    assert (
        cli(
            "db",
            "build",
            "--submissions",
            str(subs),
            "--db",
            str(db),
            "--allowed-signers",
            str(tmp_path / "nonexistent"),
        )
        == DatabasePathError.exit_code
    )
    _one_line_error(capsys, "allowed signers file", "nonexistent", "No such file")
    assert not db.exists()


@pytest.mark.parametrize("memo", [True, False])
def test_allowed_signers_that_is_a_device_or_fifo_is_refused_without_reading_it(subs, tmp_path, capsys, memo):
    add(subs, "Crucial MX500", {"off": {1: 500, 2: 900}})
    fifo = tmp_path / "signers.fifo"
    os.mkfifo(fifo)
    memo_args = ["--memo", str(tmp_path / "memo.sqlite")] if memo else ["--no-memo"]
    for signers, kind in (("/dev/zero", "character device"), (str(fifo), "FIFO"), (str(tmp_path), "directory")):
        assert (
            cli(
                "db",
                "build",
                "--submissions",
                str(subs),
                "--db",
                str(tmp_path / "devices.db"),
                "--allowed-signers",
                signers,
                *memo_args,
            )
            == DatabasePathError.exit_code
        )
        _one_line_error(capsys, "allowed signers file", kind)


@pytest.mark.parametrize("check_flag", [[], ["--check"]])
def test_db_that_is_a_directory_is_a_one_line_error(subs, tmp_path, capsys, check_flag):
    add(subs, "Crucial MX500", {"off": {1: 500, 2: 900}})
    target = tmp_path / "dir.db"
    target.mkdir()
    assert (
        cli("db", "build", *check_flag, "--no-memo", "--submissions", str(subs), "--db", str(target))
        == DatabasePathError.exit_code
    )
    _one_line_error(capsys, "dir.db", "is a directory")
    assert target.is_dir() and not any(target.iterdir())
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_db_in_a_directory_that_cannot_be_written_is_a_one_line_error(subs, tmp_path, capsys):
    add(subs, "Crucial MX500", {"off": {1: 500, 2: 900}})
    assert (
        cli("db", "build", "--no-memo", "--submissions", str(subs), "--db", "/proc/x.db") == DatabasePathError.exit_code
    )
    _one_line_error(capsys, "cannot write /proc/x.db")


def test_memo_that_is_a_directory_is_a_one_line_error(subs, tmp_path, capsys):
    add(subs, "Crucial MX500", {"off": {1: 500, 2: 900}})
    memo = tmp_path / "memo"
    memo.mkdir()
    db = tmp_path / "devices.db"
    assert (
        cli("db", "build", "--memo", str(memo), "--submissions", str(subs), "--db", str(db))
        == DatabasePathError.exit_code
    )
    _one_line_error(capsys, "validation memo", "is a directory")
    assert not db.exists() and [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize("memo", [True, False])
def test_a_fifo_named_json_in_the_submissions_is_skipped_not_opened(subs, tmp_path, capsys, memo):
    add(subs, "Crucial MX500", {"off": {1: 500, 2: 900}})
    os.mkfifo(subs / "pipe.json")  # opened for reading, it would wait for a writer forever
    memo_args = ["--memo", str(tmp_path / "memo.sqlite")] if memo else ["--no-memo"]
    db = tmp_path / "devices.db"
    assert cli("db", "build", *memo_args, "--submissions", str(subs), "--db", str(db)) == 0
    err = capsys.readouterr().err
    assert "skipped pipe.json: is a FIFO, not a regular file" in err and "1 skipped" in err
    assert rows(db, "SELECT path, message FROM skipped") == [
        {"path": "pipe.json", "message": "is a FIFO, not a regular file"}
    ]


def test_temporary_files_of_a_killed_build_are_removed_by_the_next_one(subs, tmp_path):
    add(subs, "Crucial MX500", {"off": {1: 500, 2: 900}})
    db = tmp_path / "devices.db"
    child = subprocess.Popen(["true"])  # a process that has certainly ended once waited for
    child.wait()
    stale = tmp_path / f".devices.db.{child.pid}.k1ll3d.tmp"
    stale.write_bytes(b"half a database")
    running = tmp_path / f".devices.db.{os.getppid()}.busy.tmp"  # a live process: maybe another build
    running.write_bytes(b"")
    other = tmp_path / ".other.db.1.x.tmp"
    other.write_bytes(b"")
    not_a_pid = [tmp_path / ".devices.db.99999999999999999999.x.tmp", tmp_path / ".devices.db.\u0661\u0662.x.tmp"]
    for path in not_a_pid:
        path.write_bytes(b"")
    a_dir = tmp_path / f".devices.db.{child.pid}.d1r.tmp"  # the db build writes files only
    a_dir.mkdir()
    build(subs, db)
    assert not stale.exists() and running.exists() and other.exists() and db.exists()
    assert all(p.exists() for p in not_a_pid) and a_dir.is_dir()


def test_skipped_counts_files_and_lists_each_problem_under_its_file(subs, tmp_path, capsys):
    good = add(subs, "Samsung PM883", {"off": {1: 12680, 16: 59338}})
    bad = subs / "bad"
    bad.mkdir()
    shutil.copy(good, bad / "copy-elsewhere.json")  # two problems: wrong name and wrong place
    doc = json.loads(good.read_text())
    doc["id"] = "0" * 20
    doc["result"]["device"]["model"] = "<b>x</b>"
    (bad / "several.json").write_text(json.dumps(doc))  # id, path, name and markup problems
    (bad / "junk.json").write_text("{")
    db = tmp_path / "devices.db"
    report = build(subs, db)
    files = report.skipped_files()
    assert sorted(files) == ["bad/copy-elsewhere.json", "bad/junk.json", "bad/several.json"]
    assert len(report.skipped) > len(files)
    assert rows(db, "SELECT value FROM meta WHERE key = 'skipped'")[0]["value"] == "3"
    assert cli("db", "build", "--no-memo", "--submissions", str(subs), "--db", str(db)) == 0
    err = capsys.readouterr().err.splitlines()
    assert "3 skipped" in err[-1]
    head = err.index(f"skipped bad/several.json: {len(files['bad/several.json'])} problems")
    listed = err[head + 1 : head + 1 + len(files["bad/several.json"])]
    assert listed and all(line.startswith("  - ") for line in listed)
    assert any("file name must be" in line for line in listed)
    assert sum(line.startswith("skipped ") for line in err) == 3
    assert (
        cli("db", "build", "--strict", "--no-memo", "--submissions", str(subs), "--db", str(db))
        == DatabaseError.exit_code
    )
    assert "diskq: error: 3 submission file(s) skipped" in capsys.readouterr().err


@pytest.mark.parametrize(
    "trigram, edit",
    [
        (True, "DELETE FROM device_search WHERE rowid = (SELECT min(rowid) FROM device_search)"),
        (True, "UPDATE device_search SET text = text || ' x' WHERE rowid = (SELECT min(rowid) FROM device_search)"),
        (True, "INSERT INTO device_search VALUES ('ghost-000000', 'Ghost SSD')"),
        (True, "DROP TABLE device_search"),
        (True, "UPDATE meta SET value = '1999-01-01' WHERE key = 'data_as_of'"),
        (True, "UPDATE meta SET value = 'none' WHERE key = 'fts'"),
        (True, "INSERT INTO meta VALUES ('extra', 'x')"),
        (False, "UPDATE meta SET value = 'trigram' WHERE key = 'fts'"),
        (False, "UPDATE meta SET value = '1999-01-01' WHERE key = 'data_as_of'"),
        (False, "UPDATE devices SET vendor = 'Other' WHERE rank = 1"),
        (False, "UPDATE points SET iops = iops + 1 WHERE seq = 0"),
    ],
)
def test_check_covers_meta_and_the_search_index(subs, tmp_path, trigram, edit, capsys, monkeypatch):
    add(subs, "Samsung PM883", {"off": {1: 12680, 16: 59338}})
    add(subs, "Intel SSD S4510", {"off": {1: 1600, 8: 9000}})
    db = tmp_path / "devices.db"
    with monkeypatch.context() as patch:
        if not trigram:
            patch.setattr(build_mod, "trigram_supported", lambda: False)
        build(subs, db)
    assert cli("db", "build", "--check", "--no-memo", "--submissions", str(subs), "--db", str(db)) == 0
    capsys.readouterr()
    con = sqlite3.connect(db)
    con.execute(edit)
    con.commit()
    con.close()
    assert (
        cli("db", "build", "--check", "--no-memo", "--submissions", str(subs), "--db", str(db))
        == DatabaseError.exit_code
    )
    assert "out of date" in capsys.readouterr().err


def test_a_build_without_the_search_index_has_the_digest_of_one_with_it(subs, tmp_path, monkeypatch, capsys):
    # SQLite before 3.34, or without FTS5, has no trigram tokenizer: the build leaves the index
    # out, and the database still holds the same content
    add(subs, "Samsung PM883", {"off": {1: 12680, 16: 59338}}, vendor="Samsung")
    add(subs, "Micron_5300_MTFDDAK3T8TDS", {"off": {1: 9000, 2: 17000}}, firmware=None)
    add(subs, "Intel SSD S4510", {"off": {1: 1600, 8: 9000}})
    with_index, without = tmp_path / "with.db", tmp_path / "without.db"
    indexed = build(subs, with_index)
    with monkeypatch.context() as patch:
        patch.setattr(build_mod, "trigram_supported", lambda: False)
        bare = build(subs, without)
        assert (indexed.fts, bare.fts) == ("trigram", "none")
        assert not rows(without, "SELECT name FROM sqlite_master WHERE name = 'device_search'")
        assert indexed.digest == bare.digest == stored_digest(with_index) == stored_digest(without)
        # where the index cannot be built, either file is up to date
        there = check(subs, with_index)
        assert there.digest == check(subs, without).digest == bare.digest
        assert there.fts == "trigram" and not there.notes
    # where it can, too: the file without it is reported, not refused
    report = check(subs, without)
    assert report.digest == bare.digest and report.fts == "none"
    assert len(report.notes) == 1 and "has no search index" in report.notes[0]
    assert not check(subs, with_index).notes
    assert cli("db", "build", "--check", "--no-memo", "--submissions", str(subs), "--db", str(without)) == 0
    err = capsys.readouterr().err
    assert "has no search index" in err and "is up to date" in err and "search index: none" in err
    # the computed search text is what the index holds
    computed = [
        (r["id"], search_text(r["model"], r["vendor"], r["firmware"]))
        for r in rows(without, "SELECT id, model, vendor, firmware FROM devices ORDER BY id")
    ]
    assert computed == [
        (r["device_id"], r["text"])
        for r in rows(with_index, "SELECT device_id, text FROM device_search ORDER BY device_id, text")
    ]
    assert any("micron5300mtfddak3t8tds" in text for _, text in computed)
    # a changed row still changes the digest, index or not
    for db in (with_index, without):
        con = sqlite3.connect(db)
        con.execute("UPDATE curve SET iops_max = iops_max + 1 WHERE numjobs = 1")
        con.commit()
        assert content_digest(con) != bare.digest
        con.close()
        with pytest.raises(DatabaseError, match="out of date"):
            check(subs, db)


def test_a_search_index_this_sqlite_cannot_open_is_read_from_its_content_table(subs, tmp_path):
    # a devices.db with the index, read where SQLite has no trigram tokenizer (simulated: the
    # index names a tokenizer no SQLite has)
    from diskq.database.lookup import lookup

    add(subs, "Samsung PM883", {"off": {1: 12680, 16: 59338}})
    add(subs, "Intel SSD S4510", {"off": {1: 1600, 8: 9000}})
    db = tmp_path / "devices.db"
    report = build(subs, db)
    con = sqlite3.connect(db)
    con.execute("PRAGMA writable_schema = ON")
    con.execute(
        "UPDATE sqlite_master SET sql = replace(sql, 'trigram', 'nosuchtokenizer') WHERE name = 'device_search'"
    )
    con.commit()
    con.close()
    try:
        rows(db, "SELECT device_id FROM device_search")
    except sqlite3.OperationalError as exc:
        assert "tokenizer" in str(exc)
    else:
        pytest.skip("this SQLite opens an FTS5 table without loading its tokenizer")
    assert stored_digest(db) == report.digest == check(subs, db).digest
    assert lookup(db, "s4150")[0].device["model"] == "Intel SSD S4510"  # scans instead
    con = sqlite3.connect(db)
    con.execute("UPDATE device_search_content SET c1 = c1 || ' x' WHERE id = 1")
    con.commit()
    con.close()
    assert stored_digest(db) != report.digest


def test_the_stored_digest_is_not_part_of_what_it_hashes_but_must_match_it(subs, tmp_path):
    """The digest is recomputed from the rows (meta is not trusted), and --check also refuses a
    file whose stored digest, the one the site shows, is not the one its rows give."""
    add(subs, "Samsung PM883", {"off": {1: 12680, 16: 59338}})
    db = tmp_path / "devices.db"
    report = build(subs, db)
    assert check(subs, db).digest == report.digest
    con = sqlite3.connect(db)
    con.execute("UPDATE meta SET value = 'forged' WHERE key = 'content_digest'")
    con.commit()
    con.close()
    assert stored_digest(db) == report.digest
    with pytest.raises(DatabaseError, match=r"its rows are current, but meta.content_digest is 'forged'"):
        check(subs, db)


# --- the kernel's write_cache knob ----------------------------------------------------------

LOOP = {"off": {1: 32212, 2: 52000, 4: 61000, 8: 60500}, "on": {1: 3100, 2: 5900, 4: 9800, 8: 12000}}


def _bench_verdicts(result: dict) -> dict:
    """What the bench's own analysis says about the same document."""
    from diskq.analyse import annotate
    from diskq.result import ResultDocument

    return annotate(ResultDocument.model_validate(result)).verdicts.model_dump(mode="json")


def test_cache_off_by_the_kernel_knob_is_never_rated_and_agrees_with_the_bench(subs, tmp_path):
    # a scratch loop device: diskq bench switches "off" with /sys/block/loopN/queue/write_cache,
    # which only stops the kernel sending flushes
    result = result_document(
        "Linux Loop Device", LOOP, vendor=None, protocol="unknown", cache_mechanism="sysfs", volatile_write_cache=None
    )
    write_submission(subs, submission(result))
    db = tmp_path / "devices.db"
    build(subs, db)
    (dev,) = rows(db, "SELECT * FROM devices")
    caches = {(c["write_cache"], c["knob"]): c for c in rows(db, "SELECT * FROM device_cache")}
    assert set(caches) == {("off", "kernel"), ("on", "kernel")}
    assert caches[("off", "kernel")]["safe"] == 0 and "kernel" in caches[("off", "kernel")]["unsafe_reason"]
    assert caches[("on", "kernel")]["safe"] == 1
    assert (dev["cache"], dev["cache_knob"], dev["iops_1job"]) == ("on", "kernel", 3100)
    assert dev["ceph_waldb"] != "excellent"
    verdicts = json.loads(dev["verdicts"])
    bench = _bench_verdicts(result)
    for name in ("ceph_waldb", "osds_per_device", "etcd"):
        assert verdicts[name]["cache_state"] == bench[name]["cache_state"] == "on", name
    assert verdicts["ceph_waldb"]["tier"] == bench["ceph_waldb"]["tier"] == "marginal"
    assert verdicts["ceph_waldb"]["iops"] == bench["ceph_waldb"]["iops"] == 3100
    assert rows(db, "SELECT DISTINCT cache_mechanism, cache_changed FROM runs ORDER BY cache_changed") == [
        {"cache_mechanism": "sysfs", "cache_changed": 0},
        {"cache_mechanism": "sysfs", "cache_changed": 1},
    ]


def test_only_the_kernel_knob_off_measured_gives_no_positive_verdict(subs, tmp_path):
    result = result_document(
        "Linux Loop Device",
        {"off": LOOP["off"]},
        protocol="unknown",
        cache_mechanism="sysfs",
        volatile_write_cache=None,
    )
    write_submission(subs, submission(result))
    db = tmp_path / "devices.db"
    build(subs, db)
    (dev,) = rows(db, "SELECT ceph_waldb, etcd, verdicts, notes FROM devices")
    bench = _bench_verdicts(result)
    # nothing safe was measured: no verdict in the bench and the database alike, never "unsuitable"/"fail"
    assert dev["ceph_waldb"] is bench["ceph_waldb"]["tier"] is None
    assert dev["etcd"] is None and bench["etcd"]["passes"] is None
    assert json.loads(dev["verdicts"])["ceph_waldb"]["safe"] is False
    assert any("no safe cache setting" in n for n in json.loads(dev["notes"]))


def test_cache_off_by_the_kernel_knob_counts_when_the_drive_has_no_volatile_cache(subs, tmp_path):
    result = result_document(
        "Linux Loop Device", LOOP, protocol="unknown", cache_mechanism="sysfs", volatile_write_cache=False
    )
    write_submission(subs, submission(result))
    db = tmp_path / "devices.db"
    build(subs, db)
    (dev,) = rows(db, "SELECT cache, cache_knob, ceph_waldb, volatile_write_cache FROM devices")
    assert (dev["cache"], dev["cache_knob"], dev["ceph_waldb"]) == ("off", "kernel", "excellent")
    assert dev["ceph_waldb"] == _bench_verdicts(result)["ceph_waldb"]["tier"] and dev["volatile_write_cache"] == 0


def test_kernel_knob_and_drive_settings_are_aggregated_apart(subs, tmp_path):
    add(subs, "Samsung PM883", {"off": {1: 12680, 2: 24000}}, protocol="ata")
    add(subs, "Samsung PM883", {"off": {1: 60000, 2: 90000}}, protocol="ata", cache_mechanism="sysfs")
    db = tmp_path / "devices.db"
    build(subs, db)
    caches = {(c["write_cache"], c["knob"]): c for c in rows(db, "SELECT * FROM device_cache")}
    assert caches[("off", "drive")]["iops_1job"] == 12680 and caches[("off", "drive")]["submissions"] == 1
    assert caches[("off", "kernel")]["iops_1job"] == 60000 and caches[("off", "kernel")]["safe"] == 0
    (dev,) = rows(db, "SELECT cache, cache_knob, iops_1job, ceph_waldb FROM devices")
    assert (dev["cache"], dev["cache_knob"], dev["iops_1job"], dev["ceph_waldb"]) == ("off", "drive", 12680, "good")
    curve = rows(db, "SELECT knob, numjobs, iops, n FROM curve ORDER BY knob, numjobs")
    assert [(c["knob"], c["numjobs"], c["iops"], c["n"]) for c in curve] == [
        ("drive", 1, 12680, 1),
        ("drive", 2, 24000, 1),
        ("kernel", 1, 60000, 1),
        ("kernel", 2, 90000, 1),
    ]


def test_postgres_wal_verdict_gets_the_p99_commit_latency_from_the_median_curve(subs, tmp_path):
    from diskq.analyse import annotate
    from diskq.result import ResultDocument

    result = result_document("Samsung PM883", {"off": {1: 12680, 2: 24000, 4: 41000}})
    write_submission(subs, submission(result))
    add(subs, "Samsung PM883", {"off": {1: 12000, 2: 23000, 4: 40000}})
    add(subs, "Samsung PM883", {"off": {1: 13000, 2: 25000, 4: 42000}})
    db = tmp_path / "devices.db"
    build(subs, db)
    curve = rows(db, "SELECT numjobs, lat_p99_us, sync_p99_us FROM curve ORDER BY numjobs")
    assert all(c["lat_p99_us"] and c["sync_p99_us"] for c in curve)
    solo = ResultDocument.model_validate(result).runs[0].points[0]
    assert curve[0]["lat_p99_us"] == solo.lat_us.p99 and curve[0]["sync_p99_us"] == solo.sync_lat_us.p99
    (dev,) = rows(db, "SELECT verdicts FROM devices")
    pg = json.loads(dev["verdicts"])["postgres_wal"]
    assert pg["p99_commit_ms_max"] == pytest.approx((solo.lat_us.p99 + solo.sync_lat_us.p99) / 1000)
    assert not any("no latency percentiles" in r for r in pg["reasons"])
    bench = annotate(ResultDocument.model_validate(result)).verdicts.postgres_wal
    assert pg["p99_commit_ms_max"] == pytest.approx(bench.p99_commit_ms_max)


def _comparable(record):
    """A record as plain values; packed curves as bytes (NaN == NaN there)."""
    from dataclasses import asdict, fields

    out = {f.name: getattr(record, f.name) for f in fields(record) if f.name != "runs"}
    out["runs"] = [
        {
            **{k: v for k, v in asdict(r).items() if k not in ("curve", "held")},
            "curve": r.curve.tobytes(),
            "held": r.held.tobytes(),
        }
        for r in record.runs
    ]
    return out


def test_a_memo_answer_gives_back_the_record_it_was_made_from(subs):
    """The memo keeps table rows only and derives the rest again: for every committed submission
    and synthetic ones (two cache states, interrupted steps, legacy rows) the record comes back
    whole."""
    from diskq.database.extract import read_submission
    from diskq.database.record import decode, encode

    write_synthetic(subs, 30, seed=11, devices=5)
    root = build_mod.repo_root() / "submissions"
    files = [(p, subs) for p in sorted(subs.rglob("*.json"))] + [(p, root) for p in sorted(root.rglob("*.json"))]
    records = 0
    for path, base in files:
        record, problems = read_submission(path, base)
        again, again_problems = decode(encode(record, problems))
        if record is None:
            assert again is None and again_problems == problems
            continue
        records += 1
        assert _comparable(again) == _comparable(record), path
    assert records >= 30 + 19


def test_read_ahead_warms_regular_files_in_order_and_stops_with_the_build(tmp_path, monkeypatch):
    from diskq.database import readahead

    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)  # opened without blocking, never read
    link = tmp_path / "link.json"
    link.symlink_to(fifo)  # not followed
    real = [tmp_path / f"real{i}.json" for i in range(4)]
    for path in real:
        path.write_text("{}")
    warmed = []

    def fadvise(fd, offset, length, advice):
        warmed.append((os.fstat(fd).st_ino, advice))

    monkeypatch.setattr(readahead.os, "posix_fadvise", fadvise, raising=False)
    files = [fifo, link, tmp_path / "missing.json", *real]
    with readahead.ReadAhead(files, ahead=len(files), threads=1) as ahead:
        while ahead.next < len(files):
            pass
    assert [ino for ino, _ in warmed if ino != fifo.stat().st_ino] == [p.stat().st_ino for p in real]
    assert {advice for _, advice in warmed} == {os.POSIX_FADV_WILLNEED}

    bounded = readahead.ReadAhead(files * 5, ahead=3)
    with bounded:
        for _ in range(4):
            bounded.taken()
    assert bounded.next <= 3 + 4  # never more than `ahead` past what was taken
    assert not any(t.is_alive() for t in bounded.threads)


def test_a_memo_of_another_layout_is_started_afresh_and_space_is_given_back(subs, tmp_path, monkeypatch):
    from diskq.database import memo as memo_mod

    write_synthetic(subs, 12, seed=4, devices=2)
    memo = tmp_path / "memo.sqlite"
    con = sqlite3.connect(memo)  # the layout of an older diskq, full of answers of older code
    con.execute("CREATE TABLE verdict (key TEXT PRIMARY KEY, answer TEXT NOT NULL) WITHOUT ROWID")
    con.executemany("INSERT INTO verdict VALUES (?, ?)", ((f"old{i}", "x" * 4000) for i in range(500)))
    con.commit()
    con.close()
    bloated = memo.stat().st_size
    report = build(subs, tmp_path / "devices.db", memo=memo)
    assert (
        rows(memo, "SELECT sql FROM sqlite_master WHERE name = 'verdict'")[0]["sql"] == f"CREATE TABLE {memo_mod.TABLE}"
    )
    assert rows(memo, "SELECT count(*) AS n FROM verdict")[0]["n"] == 12 + report.devices
    assert memo.stat().st_size < bloated / 4


def test_file_names_are_printed_and_stored_as_one_printable_line(subs, tmp_path, capsys):
    add(subs, "Samsung PM883", {"off": {1: 12680, 16: 59338}})
    hostile = subs / "bad" / "x\x1b[2Jy\nskipped 0.json: fake summary \u202e.json"
    hostile.parent.mkdir(parents=True)
    hostile.write_text("{}")
    db = tmp_path / "devices.db"
    assert cli("db", "build", "--submissions", str(subs), "--db", str(db), "--no-memo") == 0
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\u202e" not in err
    lines = err.splitlines()
    skipped = [line for line in lines if line.startswith("skipped ")]
    assert skipped == [
        "skipped bad/x\\x1b[2Jy skipped 0.json: fake summary \\u202e.json: format: is not 'diskq-submission'"
    ]
    (row,) = rows(db, "SELECT path FROM skipped")
    assert row["path"] == "bad/x\\x1b[2Jy skipped 0.json: fake summary \\u202e.json"
