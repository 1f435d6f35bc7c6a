"""What the terminal says: counts with the right word, latencies that never round to nothing,
one capacity format everywhere, the contributor's name shown, help that tells the truth."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from diskq.analyse.verdicts import evaluate
from diskq.cli import main
from diskq.units import capacity, latency_ms, plural
from tests.cli_support import cli
from tests.test_verdicts import document, run

REPO = Path(__file__).parent.parent
HAVE_SSH_KEYGEN = shutil.which("ssh-keygen") is not None


def test_one_osd_and_one_job_are_singular():
    # one HDD OSD needs 315 commits/s: at 2 jobs each job gets 300, so only 1 OSD fits
    v = evaluate(document(run("off", [(1, 1200), (2, 600)])))
    text = " ".join(v.osds_per_device.reasons)
    assert v.osds_per_device.n == 1
    assert text.startswith("1 OSD alone on the device gets 1200 commits/s")
    assert "1 OSDs" not in text and "each get" not in v.osds_per_device.reasons[0]
    v = evaluate(document(run("off", [(1, 1200)])))
    assert "1 job is the most measured" in " ".join(v.osds_per_device.reasons)
    assert "1 jobs" not in json.dumps(v.model_dump(mode="json"))


def test_a_latency_below_display_precision_is_not_zero():
    v = evaluate(document(run("off", [(1, 90000)], sync_p99_us=4.1, write_p99_us=3.0)))
    assert "0.00 ms" not in json.dumps(v.model_dump(mode="json"))
    assert v.etcd.reasons[0].startswith("p99 fdatasync latency at 1 job 4 µs is below 10 ms")
    assert "p99 commit latency at most 7 µs" in v.postgres_wal.reasons[1]
    assert latency_ms(0.0004) == "< 1 µs" and latency_ms(12.44) == "12.4 ms"


def test_plural():
    assert [plural(n, "job") for n in (0, 1, 2)] == ["0 jobs", "1 job", "2 jobs"]
    assert plural(1, "OSD") == "1 OSD" and plural(3, "OSD") == "3 OSDs"


@pytest.mark.parametrize(
    "n, text",
    [
        (480_103_981_056, "480 GB"),
        (480_000_000_000, "480 GB"),
        (3_840_755_982_336, "3.84 TB"),
        (1_600_321_314_816, "1.6 TB"),
        (960_197_124_096, "960 GB"),
        (999_999_999_999, "1 TB"),
        (512, "512 B"),
    ],
)
def test_capacity_reads_as_on_the_label(n, text):
    assert capacity(n) == text


def test_lookup_and_site_show_a_capacity_the_same_way(capsys):
    from diskq.publish.environment import fmt_bytes

    con = sqlite3.connect(REPO / "devices.db")
    model, size = con.execute(
        "SELECT model, capacity_bytes FROM devices WHERE capacity_bytes IS NOT NULL ORDER BY rank LIMIT 1"
    ).fetchone()
    con.close()
    assert cli("lookup", model, "--db", str(REPO / "devices.db")) == 0
    out = capsys.readouterr().out
    assert f"  {capacity(size)}, " in out
    assert fmt_bytes(size) == capacity(size)
    assert ".0 GB" not in out and ".0 TB" not in out


def test_runtime_help_says_whole_seconds(capsys):
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    out = capsys.readouterr().out
    assert "<float>" not in out
    assert "--runtime <seconds>" in out and "whole seconds" in out


@pytest.mark.skipif(not HAVE_SSH_KEYGEN or not shutil.which("fio"), reason="needs ssh-keygen and fio")
def test_sign_to_a_directory_validates_and_the_name_is_shown_everywhere(tmp_path, monkeypatch, capsys):
    from tests.test_submission_support import fio_runs, keygen, result_from

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    key = keygen(tmp_path)
    result = tmp_path / "result.json"
    result.write_text(result_from(fio_runs(), method_id="diskq-fdatasync-sweep").to_json())
    (tmp_path / "submissions").mkdir()

    def cli(*argv: str) -> int:
        try:
            main(list(argv))
        except SystemExit as exc:
            return exc.code or 0
        return 0

    assert (
        cli("sign", str(result), "-f", str(key), "--github", "octocat", "--name", "Jane Doe", "-o", "submissions") == 0
    )
    captured = capsys.readouterr()
    written = Path(captured.out.strip())
    assert written.parent.parent.parent == Path("submissions") and written.exists()
    assert "contributor shown as Jane Doe (@octocat)" in captured.err
    assert cli("validate", str(written)) == 0
    assert cli("db", "build", "--no-memo", "--submissions", "submissions", "--db", "d.db") == 0
    assert cli("site", "build", "--db", "d.db", "--out", "site", "--submissions", "submissions") == 0
    pages = list((tmp_path / "site" / "devices").glob("*.html"))
    assert any("Jane Doe (@octocat)" in p.read_text() for p in pages)


def test_the_site_writes_a_small_latency_as_the_terminal_does():
    from diskq.publish.environment import environment

    env = environment()
    assert env.from_string("{{ x | ms }}").render(x=0.004) == "4 µs"
    assert env.from_string("{{ x | ms }}").render(x=3.844) == "3.84 ms"
    assert env.from_string("{{ x | ms }}").render(x=None) == "\u2013"


def test_lookup_counts_submissions_with_the_right_word(capsys):
    con = sqlite3.connect(REPO / "devices.db")
    model = con.execute("SELECT model FROM devices WHERE submissions = 1 ORDER BY rank LIMIT 1").fetchone()[0]
    con.close()
    assert cli("lookup", model, "--db", str(REPO / "devices.db")) == 0
    out = capsys.readouterr().out
    assert "1 submission, " in out and "submission(s)" not in out


def test_the_site_never_writes_zero_microseconds():
    from diskq.publish.environment import fmt_us

    assert fmt_us(0.3) == "< 1 µs" and fmt_us(85.2) == "85 µs" and fmt_us(12400) == "12.4 ms"


def test_identify_shows_a_capacity_as_lookup_does(capsys):
    smart = REPO / "tests/fixtures/smartctl_json/sce__INTEL_SSDSC2KB240G8.json"
    try:
        main(["identify", "--smartctl-json", str(smart)])
    except SystemExit as exc:
        assert exc.code in (0, None)
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.strip().startswith("capacity"))
    size = int(line.split("(")[-1].split()[0])
    assert f"{capacity(size)} ({size} bytes)" in line and capacity(size) == "240 GB"
