"""diskq fleet report: drives against the median of their model and firmware, failures listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diskq.analyse import criteria
from diskq.cli import main
from diskq.database.synthetic import result_document
from diskq.fleet import report

PM883 = {1: 12680, 2: 24000, 4: 41000, 8: 52000}


def _write(root: Path, host: str, name: str, doc: dict) -> None:
    (root / host).mkdir(parents=True, exist_ok=True)
    (root / host / f"{name}.json").write_text(json.dumps(doc))


def _status(root: Path, host: str, **status) -> None:
    (root / host).mkdir(parents=True, exist_ok=True)
    (root / host / "status.json").write_text(json.dumps({"host": host, **status}))


def _scaled(curve: dict[int, float], f: float) -> dict[int, float]:
    return {n: iops * f for n, iops in curve.items()}


@pytest.fixture
def fleet(tmp_path):
    root = tmp_path / "results"
    factors = {("h1", "sdb"): 1.0, ("h1", "sdc"): 0.97, ("h2", "sdb"): 1.03, ("h2", "sdc"): 0.55, ("h3", "sdb"): 1.01}
    for (host, dev), f in factors.items():
        _write(
            root, host, dev, result_document("SAMSUNG MZ7LH960HAJR", {"off": _scaled(PM883, f)}, firmware="HXT7404Q")
        )
    _write(root, "h3", "nvme0n1", result_document("Kioxia CD6", {"on": {1: 30000, 2: 60000}}, firmware="0108"))
    for host in ("h1", "h2"):
        _status(root, host, state="done", candidates=[], benches=[])
    _status(
        root,
        "h3",
        state="done",
        benches=[{"path": "/dev/sdd", "name": "sdd", "rc": 1, "error": "diskq: error: fio failed"}],
        candidates=[
            {
                "path": "/dev/sde",
                "decision": "refused",
                "reasons": ["refusing to write to /dev/sde: it is in use", "mounted at /srv"],
            }
        ],
    )
    _status(root, "h4", state="unreachable", reason="ssh: connect to host h4 port 22: No route to host")
    return root


def test_the_slow_sibling_is_flagged_with_the_figure_and_the_ratio(fleet):
    rep = report.build(fleet)
    assert rep.hosts == ["h1", "h2", "h3", "h4"]
    samsung = next(g for g in rep.groups if g.model == "SAMSUNG MZ7LH960HAJR")
    assert (samsung.firmware, len(samsung.drives), samsung.compared) == ("HXT7404Q", 5, True)
    assert samsung.medians["one_job_iops"] == pytest.approx(12680)
    flagged = [(d.host, d.name) for d in rep.outliers]
    assert flagged == [("h2", "sdc")]
    slow = rep.outliers[0]
    assert slow.outlier[0] == "1-job IOPS 6,974 is 45% below the group median 12,680"
    assert slow.ratios["one_job_iops"] == pytest.approx(0.55)


def test_a_group_too_small_for_a_median_is_listed_not_judged(fleet):
    kioxia = next(g for g in report.build(fleet).groups if g.model == "Kioxia CD6")
    assert not kioxia.compared and not kioxia.drives[0].outlier
    assert "at least 3 are needed" in kioxia.notes[0]


def test_failures_refusals_and_unreachable_hosts_are_listed_with_their_reasons(fleet):
    problems = {(p.host, p.device, p.kind): p.reason for p in report.build(fleet).problems}
    assert problems[("h3", "/dev/sdd", "bench failed")] == "exit 1: diskq: error: fio failed"
    assert "mounted at /srv" in problems[("h3", "/dev/sde", "refused")]
    assert "No route to host" in problems[("h4", None, "unreachable")]


def test_interrupted_results_are_shown_but_never_compared(fleet):
    doc = result_document("SAMSUNG MZ7LH960HAJR", {"off": _scaled(PM883, 0.1)}, firmware="HXT7404Q")
    doc["interrupted"] = True
    _write(fleet, "h3", "sdf", doc)
    rep = report.build(fleet)
    sdf = next(d for d in rep.groups[1].drives if d.name == "sdf")
    assert sdf.interrupted and not sdf.outlier
    assert rep.groups[1].medians["one_job_iops"] == pytest.approx(12680)


def test_signed_submissions_are_read_like_result_documents(fleet):
    from diskq.database.synthetic import submission

    sub = submission(result_document("Kioxia CD6", {"on": {1: 30000, 2: 60000}}, firmware="0108"))
    (fleet / "h2" / "nvme1n1.json").write_text(sub.model_dump_json())
    kioxia = next(g for g in report.build(fleet).groups if g.model == "Kioxia CD6")
    assert [d.host for d in kioxia.drives] == ["h2", "h3"]


def test_unreadable_files_are_problems_not_tracebacks(fleet):
    (fleet / "h1" / "broken.json").write_text("{not json")
    (fleet / "h1" / "list.json").write_text("[1, 2]")
    kinds = {(p.device, p.kind) for p in report.build(fleet).problems}
    assert {("broken.json", "unreadable"), ("list.json", "unreadable")} <= kinds


def test_cli_text_json_and_html(fleet, tmp_path, capsys):
    html = tmp_path / "fleet.html"
    with pytest.raises(SystemExit) as exit_:
        main(["fleet", "report", str(fleet), "--json", "--html", str(html)])
    assert exit_.value.code in (0, None)
    out = json.loads(capsys.readouterr().out)
    assert out["summary"] == {"hosts": 4, "drives": 6, "outliers": 1, "problems": 3}
    page = html.read_text()
    assert "45% below the group median" in page and "No route to host" in page
    assert "<script" not in page and "http://" not in page.replace("http://www.w3.org", "")
    with pytest.raises(SystemExit):
        main(["fleet", "report", str(fleet)])
    text = capsys.readouterr().out
    assert "4 hosts, 6 drives, 1 outliers, 3 problems" in text and "h2 sdc" in text


def test_cli_refuses_a_missing_directory_in_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["fleet", "report", str(tmp_path / "nothing")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("diskq: error: ") and "Traceback" not in err


def test_the_thresholds_are_the_justified_criteria():
    fleet = criteria.load()["fleet"]
    assert (fleet["min_group"], fleet["iops_low"], fleet["latency_high"]) == (3, 0.75, 1.5)
    assert len(fleet["justification"].split()) > 50


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.8, 1.25), min_size=3, max_size=8), st.floats(0.05, 0.65))
def test_a_drive_far_below_siblings_within_noise_is_the_only_outlier(factors, slow):
    # below 0.75 of the slowest sibling (0.9): 0.65 / 0.9 = 0.72 (at 0.6875 against siblings at
    # 0.906 the drive is 0.76 of the group's median, within the rule, which hypothesis found)
    from tempfile import TemporaryDirectory

    with TemporaryDirectory() as tmp:
        root = Path(tmp)
        # siblings within +-12 % of each other around 1.0, one drive at `slow` of the rate
        for i, f in enumerate(factors):
            f = 0.9 + (f - 0.8) * 0.44  # 0.9 .. 1.09
            _write(root, f"h{i}", "sdb", result_document("M", {"off": _scaled({1: 1000, 2: 2000}, f)}))
        _write(root, "hz", "sdb", result_document("M", {"off": _scaled({1: 1000, 2: 2000}, slow)}))
        rep = report.build(root)
        assert [d.host for d in rep.outliers] == ["hz"]


def test_sign_signs_every_result_of_a_fleet_directory(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from diskq.cli import app
    from tests.test_submission_support import allowed_signers, fio_runs, keygen, result_from

    key = keygen(tmp_path)
    results = tmp_path / "fleet-results"
    doc = result_from(fio_runs(), method_id="diskq-fdatasync-sweep")
    # two drives never measure the same figures (validation refuses a copy): the second host's run
    # holds one step fewer
    fewer = doc.model_copy(deep=True)
    fewer.runs[0].points = fewer.runs[0].points[:-1]
    top = max(fewer.runs[0].points, key=lambda p: p.iops)
    fewer.runs[0].peak = fewer.runs[0].peak.model_copy(update={"numjobs": top.numjobs, "iops": top.iops})
    for host, firmware, measured in (("h1", "FW-A", doc), ("h2", "FW-B", fewer)):
        (results / host).mkdir(parents=True)
        (results / host / "sdb.json").write_text(
            measured.model_copy(update={"device": measured.device.model_copy(update={"firmware": firmware})}).to_json()
        )
        (results / host / "status.json").write_text(json.dumps({"host": host, "state": "done"}))
    (results / "h2" / "broken.json").write_text("{")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    out = runner.invoke(app, ["sign", str(results), "-f", str(key), "--github", "octocat"])
    # the broken file is named and makes the exit non-zero; the two results are signed all the same
    assert out.exit_code != 0 and "broken.json" in out.stderr
    written = [Path(line) for line in out.stdout.splitlines() if line.startswith("submissions/")]
    assert len(written) == 2 and all(p.is_file() for p in written)
    allowed = allowed_signers(tmp_path / "allowed", "octocat", key)
    ok = runner.invoke(app, ["validate", "submissions", "--allowed-signers", str(allowed), "--json"])
    assert ok.exit_code == 0 and json.loads(ok.stdout)["ok"] == 2, ok.stderr
    with pytest.raises(SystemExit) as refused:
        main(["sign", str(results), "-f", str(key), "-o", "x.json"])
    assert refused.value.code == 2


def test_the_benchmark_writes_a_fleet_the_report_reads(tmp_path):
    from benchmarks.fleet_report import write_fleet

    assert write_fleet(tmp_path / "r", hosts=4, drives=3) == 12
    rep = report.build(tmp_path / "r")
    assert (len(rep.hosts), rep.drives, rep.problems) == (4, 12, [])


def test_candidates_refuse_everything_without_root_and_an_empty_selector(monkeypatch, capsys):
    from diskq.fleet import select

    disk = select.Disk("/dev/sdz", "sdz", "M", 10**12, False)
    monkeypatch.setattr(select.os, "geteuid", lambda: 1000)
    cand = select.judge(disk, force=False)
    assert cand.decision == "refused" and "needs root" in cand.reasons[0]
    with pytest.raises(SystemExit) as exit_:
        main(["fleet", "candidates", "--json"])
    assert exit_.value.code == 2 and "name the devices to qualify" in capsys.readouterr().err


def test_the_selector_applies_every_criterion():
    from diskq.fleet.select import Disk, Selector

    ssd = Disk("/dev/sda", "sda", "SAMSUNG MZ7L3480HCHQ-00A07", 480 * 10**9, False)
    hdd = Disk("/dev/sdb", "sdb", "ST16000NM001G", 16 * 10**12, True)
    sel = Selector(model="samsung mz7l3*", min_bytes=400 * 10**9, rotational=False)
    assert sel.matches(ssd) == [] and sel.matches(hdd) != []
    assert Selector(max_bytes=10**12).matches(hdd) == ["larger than 1000000000000 bytes"]
    assert Selector(rotational=True).matches(ssd) == ["not rotational"]


def test_physical_disks_leave_out_virtual_and_empty_devices(tmp_path):
    from diskq.fleet.select import physical_disks

    def disk(name, sectors, rotational=None, model=None):
        d = tmp_path / "block" / name
        (d / "queue").mkdir(parents=True)
        (d / "size").write_text(f"{sectors}\n")
        if rotational is not None:
            (d / "queue" / "rotational").write_text(f"{rotational}\n")
        if model is not None:
            (d / "device").mkdir()
            (d / "device" / "model").write_text(f"{model}\n")

    disk("sda", 937703088, 0, "SAMSUNG MZ7L3480HCHQ-00A07")
    disk("sdb", 0, 1, "Card Reader")  # no medium
    disk("loop0", 131072, 1)
    disk("dm-0", 131072, 0)
    (found,) = physical_disks(sysfs_root=str(tmp_path), dev_root="/dev")
    assert (found.path, found.model, found.size_bytes, found.rotational) == (
        "/dev/sda",
        "SAMSUNG MZ7L3480HCHQ-00A07",
        937703088 * 512,
        False,
    )


def test_each_model_says_what_the_database_knows_by_the_part_number_it_reports(fleet, capsys):
    db = Path(__file__).resolve().parents[1] / "devices.db"
    with pytest.raises(SystemExit):
        main(["fleet", "report", str(fleet), "--json", "--db", str(db)])
    groups = {g["model"]: g for g in json.loads(capsys.readouterr().out)["groups"]}
    assert groups["SAMSUNG MZ7LH960HAJR"]["database"][0].startswith("device database: Samsung PM883: 1-job 12,680 IOPS")
    cd6 = groups["Kioxia CD6"]["database"]  # what the line is, then the answer `diskq lookup` gives for it
    assert cd6[0] == "device database: Kioxia CD6 (data-centre, NVMe): nothing measured yet (identified by name)"
    assert cd6[1].startswith("  Ceph WAL/DB: ") and any(line.startswith("  etcd: ") for line in cd6)
    with pytest.raises(SystemExit):
        main(["fleet", "report", str(fleet), "--db", str(fleet / "missing.db")])
    assert "device database: not read" in capsys.readouterr().out


def test_drives_and_hosts_sort_as_an_operator_counts_them():
    from diskq.fleet.report import natural_key

    assert sorted(["loop10", "loop9", "sdb", "sdaa"], key=natural_key) == ["loop9", "loop10", "sdaa", "sdb"]
    assert sorted(["h10", "h2", "h1"], key=natural_key) == ["h1", "h2", "h10"]


def test_a_ram_backed_device_is_named_and_left_out_of_the_median(tmp_path):
    """A loop device over a file on tmpfs beside five drives: its figures measure memory, so it is
    neither compared nor part of the median the drives are compared with."""
    from diskq.analyse.memorybacked import memory_backed_note

    root = tmp_path / "results"
    for host, f in (("h1", 1.0), ("h2", 0.98), ("h3", 1.02)):
        _write(root, host, "loop0", result_document("Linux loop device", {"on": _scaled(PM883, f)}, firmware=None))
        _status(root, host, state="done", candidates=[], benches=[])
    ram = result_document("Linux loop device", {"on": _scaled(PM883, 40.0)}, firmware=None)
    ram["notes"] = [memory_backed_note("/dev/loop1 is backed by a file on tmpfs")]
    _write(root, "h3", "loop1", ram)
    rep = report.build(root)
    (group,) = rep.groups
    assert group.medians["one_job_iops"] == pytest.approx(12680)  # the three drives' median, not four
    loop1 = next(d for d in group.drives if d.name == "loop1")
    assert loop1.memory_backed.startswith("memory-backed target:") and loop1.outlier == [] and loop1.ratios == {}
    assert rep.outliers == [] and "h3 loop1: measured on RAM, not a drive: left out of the median" in group.notes
    html = tmp_path / "fleet.html"
    try:
        main(["fleet", "report", str(root), "--html", str(html)])
    except SystemExit as exc:
        assert not exc.code
    assert "RAM-backed: not compared" in html.read_text()
