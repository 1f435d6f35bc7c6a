"""import-fio: hand-made community fio runs become a result document, raw data kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diskq.errors import InvalidInput
from diskq.submission.figures import check_figures
from diskq.submission.fiojson import read_fio
from diskq.submission.importfio import import_fio, point_from_fio
from tests.test_submission_support import HAVE_FIO, drive_fio_runs, fio_runs

FIX = Path(__file__).parent / "fixtures" / "submission"
needs_fio = pytest.mark.skipif(not HAVE_FIO, reason="needs fio")


@needs_fio
def test_import_real_runs_keeps_every_figure_and_the_raw_data():
    runs = fio_runs()
    doc = import_fio([(f"nj{k}.json", v) for k, v in runs.items()], write_cache="off", cache_mechanism="drive")
    assert doc.method.id == "community-fio-ceph-iops" and doc.method.version == 1
    assert doc.method.fio_version == runs[1]["fio version"]
    assert doc.method.fio_params["rw"] == "write" and "numjobs" not in doc.method.fio_params
    run = doc.runs[0]
    assert run.write_cache == "off" and doc.device.write_cache == "off"
    assert [p.numjobs for p in run.points] == [1, 2]
    for p in run.points:
        w = runs[p.numjobs]["jobs"][0]["write"]
        assert p.iops == pytest.approx(w["iops"], abs=0.001)
        assert p.total_ios == w["total_ios"] and p.runtime_ms == w["runtime"]
        assert p.lat_us.mean == pytest.approx(w["clat_ns"]["mean"] / 1000, abs=0.001)
        assert p.sync_lat_us.mean == pytest.approx(
            runs[p.numjobs]["jobs"][0]["sync"]["lat_ns"]["mean"] / 1000, abs=0.001
        )
        assert p.fio == runs[p.numjobs]
        # the fdatasync percentiles too: etcd and PostgreSQL verdicts need the p99
        sync_pct = runs[p.numjobs]["jobs"][0]["sync"]["lat_ns"]["percentile"]
        assert p.sync_lat_us.p99 == pytest.approx(sync_pct["99.000000"] / 1000, abs=0.001)
    best = max(run.points, key=lambda p: p.iops)
    assert (run.peak.numjobs, run.peak.iops) == (best.numjobs, best.iops)
    assert check_figures(doc) == []
    # analysed like a bench result
    assert run.scaling is not None and run.scaling.peak.numjobs == best.numjobs
    assert (
        doc.verdicts.etcd is not None
        and doc.verdicts.etcd.p99_fdatasync_ms is not None
        and doc.verdicts.etcd.passes is not None
    )
    assert doc.verdicts.ceph_waldb.tier in ("excellent", "good", "marginal", "unsuitable")


@needs_fio
def test_a_second_run_with_the_same_numjobs_is_refused():
    runs = fio_runs()
    with pytest.raises(InvalidInput, match="a second run with numjobs=1"):
        import_fio([("a.json", runs[1]), ("b.json", runs[1])])


def test_runs_of_another_command_are_refused():
    data = json.loads((FIX / "fio-3.1__Intel_D3-S4610_SSDSC2KG48__randwrite_qd1_nj1.json").read_text())
    with pytest.raises(InvalidInput, match=r"not the community command: rw=randwrite \(needs write\)"):
        point_from_fio(data, where="x.json")


def test_reading_fio_without_group_reporting_sums_the_jobs():
    data = json.loads((FIX / "fio-3.6__Crucial_250GB_SSD__randwrite_qd8_nj8_NO_gr.json").read_text())
    fig, why = read_fio(data)
    assert why is None and fig.entries == 8 and fig.options["numjobs"] == "8"
    assert fig.iops == pytest.approx(sum(j["write"]["iops"] for j in data["jobs"]))
    assert fig.total_ios == sum(j["write"]["total_ios"] for j in data["jobs"])
    # per-job tables do not add up: percentiles and maxima are the worst entry's, as bench records them
    worst = max(j["write"]["clat_ns"]["percentile"]["99.000000"] for j in data["jobs"]) / 1000
    assert fig.lat_pct_us["p99"] == pytest.approx(worst)
    assert fig.lat_pct_us["max"] == pytest.approx(max(j["write"]["clat_ns"]["max"] for j in data["jobs"]) / 1000)
    from diskq.bench.fiojson import point_from_json

    bench = point_from_json(data, 8).lat_us
    for name in ("p50", "p99", "p999", "max"):
        assert getattr(bench, name) == pytest.approx(fig.lat_pct_us[name], abs=1e-3)


@needs_fio
def test_cli_import_fio_with_smartctl_identity(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from diskq.cli import app
    from diskq.result import ResultDocument

    files = []
    for k, v in drive_fio_runs().items():
        files.append(tmp_path / f"nj{k}.json")
        files[-1].write_text("note: a line fio prints before its JSON\n" + json.dumps(v))
    out = tmp_path / "result.json"
    res = CliRunner().invoke(
        app,
        ["import-fio", *map(str, files), "--smartctl-json", str(FIX / "sce__INTEL_SSDSCKKB480G8.json"), "-o", str(out)],
    )
    assert res.exit_code == 0, res.output
    doc = ResultDocument.model_validate_json(out.read_text())
    assert doc.device.model == "INTEL SSDSCKKB480G8"
    assert doc.device.protocol == "ata"
    assert len(doc.runs[0].points) == 2
    # the next step names the key to sign with (without -f and a key in ~/.ssh: "no SSH key found")
    assert f"next: diskq sign {out} -f ~/.ssh/id_ed25519 --github YOUR_LOGIN" in res.stderr
    nameless = CliRunner().invoke(app, ["import-fio", *map(str, files), "-o", str(tmp_path / "nameless.json")])
    assert nameless.exit_code == 0 and "diskq sign" not in nameless.stderr
    assert "not for the device database: the result names no device model" in nameless.stderr


def test_cli_import_fio_bad_input_is_one_line(tmp_path, capsys):
    from diskq.cli import main

    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(SystemExit) as info:
        main(["import-fio", str(bad)])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith(f"diskq: error: {bad}: not JSON")
    assert not any("Traceback" in line for line in err)


@pytest.mark.parametrize("value", [10**400, -(10**400)])
def test_cli_import_fio_with_an_integer_beyond_any_double_is_one_line(tmp_path, capsys, value):
    from diskq.cli import main

    data = json.loads(
        (FIX.parent / "fio_json" / "fio-3.33__WD_Red_SN700_1TB_nvme__ext4__4jobs_nj16_gr.json").read_text()
    )
    data["jobs"][0]["write"]["iops"] = value  # fio's own output is read leniently: big integers pass the parser
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(data))
    with pytest.raises(SystemExit) as info:
        main(["import-fio", str(path), "--model", "Test SSD"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"diskq: error: {path}: a fio job's 'write' section has no usable iops" in err and "Traceback" not in err


def test_cli_reads_fio_output_with_repeated_percentile_keys(tmp_path, capsys):
    # fio 3.1 prints "0.00" twice in its percentile tables; that is fio's JSON, not a bad file:
    # the run is read, and refused only because it is not the community command
    from diskq.cli import main

    src = FIX / "fio-3.1__Intel_D3-S4610_SSDSC2KG48__randwrite_qd1_nj1.json"
    assert src.read_text().count('"0.00"') > 1
    with pytest.raises(SystemExit) as info:
        main(["import-fio", str(src), "-o", str(tmp_path / "r.json")])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "not the community command: rw=randwrite (needs write)" in err and "appears twice" not in err


@pytest.mark.parametrize("text", ['{"jobs": [], "x": NaN}', '{"x": 1e999}', '{"x": ' + "[" * 50000 + "]" * 50000 + "}"])
def test_lenient_fio_reading_still_refuses_what_is_not_json_numbers(tmp_path, capsys, text):
    from diskq.cli import main

    bad = tmp_path / "bad.json"
    bad.write_text(text)
    with pytest.raises(SystemExit) as info:
        main(["import-fio", str(bad)])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"diskq: error: {bad}: ")


@needs_fio
def test_cli_import_fio_shows_the_table_and_verdicts_bench_shows(tmp_path, capsys, monkeypatch):
    import io

    from rich.console import Console

    from diskq.cli import main
    from diskq.cli._render import result_table
    from diskq.result import ResultDocument

    monkeypatch.setenv("COLUMNS", "100")
    files = []
    for k, v in fio_runs().items():
        files.append(tmp_path / f"nj{k}.json")
        files[-1].write_text(json.dumps(v))
    out = tmp_path / "result.json"
    with pytest.raises(SystemExit) as done:
        main(["import-fio", *map(str, files), "--model", "Test SSD", "-o", str(out)])
    assert done.value.code == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == str(out)  # stdout: the path alone, for scripts
    doc = ResultDocument.model_validate_json(out.read_text())
    shown = io.StringIO()
    result_table(doc, Console(file=shown, width=100, highlight=False, soft_wrap=True))  # as stderr_console()
    expected = [line.rstrip() for line in shown.getvalue().splitlines() if line.strip()]
    assert any(line.startswith("Ceph WAL/DB: ") for line in expected)
    assert any("jobs" in line and "IOPS" in line for line in expected)
    got = [line.rstrip() for line in captured.err.splitlines()]
    assert [line for line in expected if line not in got] == []
    assert "2 points, peak" in captured.err
