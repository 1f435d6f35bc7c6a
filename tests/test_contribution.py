"""Which results a pull request may contribute: the pull-request check (``validate
--contribution``) refuses a result that measures the host (loop, zram, a file) or names no model,
saying why; a local ``diskq sign`` warns and signs; plain ``validate`` notes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from diskq.cli import app
from diskq.result import Device
from diskq.submission.contributable import not_contributable
from tests.test_submission_support import (
    HAVE_FIO,
    HAVE_SSH_KEYGEN,
    allowed_signers,
    drive_fio_runs,
    keygen,
    result_from,
)

pytestmark = [
    pytest.mark.skipif(not HAVE_FIO, reason="needs fio (the recorded runs are checked against it)"),
    pytest.mark.skipif(not HAVE_SSH_KEYGEN, reason="needs ssh-keygen"),
]

WORKFLOW = Path(__file__).resolve().parents[1] / ".github" / "workflows" / "submissions.yml"

DRIVE = Device(model="Samsung SSD 860 PRO 512GB", protocol="ata", media="ssd", serial_hash="ab" * 12, path="/dev/sdb")
CASES = {
    "loop": (DRIVE.model_copy(update={"path": "/dev/loop3", "model": "Linux loop device"}), "a Linux loop device"),
    "zram": (Device(path="/dev/zram0", model="zram"), "a Linux zram device"),
    "file": (DRIVE.model_copy(update={"kind": "file", "filesystem": "ext4"}), "a file on a filesystem"),
    "no model": (Device(path="/dev/sdb", protocol="ata"), "names no device model"),
}


def _result(tmp_path: Path, device: Device, name: str = "result.json") -> Path:
    doc = result_from(drive_fio_runs(), method_id="diskq-fdatasync-sweep")
    doc.device = device
    path = tmp_path / name
    path.write_text(doc.to_json())
    return path


def _sign(runner, tmp_path, result: Path, key: Path):
    out = runner.invoke(app, ["sign", str(result), "-f", str(key), "--github", "octocat"])
    return out, Path(out.stdout.strip().splitlines()[-1]) if out.exit_code == 0 else None


@pytest.mark.parametrize("case", list(CASES))
def test_a_host_or_a_missing_model_is_signed_with_a_warning_and_refused_by_the_pull_request_check(
    tmp_path, monkeypatch, case
):
    device, why = CASES[case]
    key = keygen(tmp_path)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    signed, path = _sign(runner, tmp_path, _result(tmp_path, device), key)
    assert signed.exit_code == 0, signed.output
    assert "warning:" in signed.stderr and why in signed.stderr and "pull-request check refuses it" in signed.stderr
    assert "git add" not in signed.stderr  # no invitation to open a pull request
    allowed = allowed_signers(tmp_path / "allowed", "octocat", key)
    plain = runner.invoke(app, ["validate", str(path), "--allowed-signers", str(allowed)])
    assert plain.exit_code == 0, plain.output
    assert f"note: {path}: " in plain.stderr and why in plain.stderr
    pr = runner.invoke(app, ["validate", "--contribution", str(path), "--allowed-signers", str(allowed)])
    assert pr.exit_code == 1
    line = next(line for line in pr.stdout.splitlines() if "not a contribution" in line)
    assert line.startswith(f"{path}: result.device: not a contribution: ") and why in line


def test_a_drive_passes_the_pull_request_check_without_a_note(tmp_path, monkeypatch):
    key = keygen(tmp_path)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    signed, path = _sign(runner, tmp_path, _result(tmp_path, DRIVE), key)
    assert signed.exit_code == 0 and "warning" not in signed.stderr and "git add" in signed.stderr
    allowed = allowed_signers(tmp_path / "allowed", "octocat", key)
    pr = runner.invoke(app, ["validate", "--contribution", str(path), "--allowed-signers", str(allowed), "--json"])
    assert pr.exit_code == 0, pr.output
    assert json.loads(pr.stdout)["problems"] == [] and "note:" not in pr.stderr


def test_the_pull_request_check_refuses_legacy_files_too():
    legacy = next((Path(__file__).resolve().parents[1] / "submissions").rglob("*.json"))
    pr = CliRunner().invoke(app, ["validate", "--contribution", str(legacy)])
    assert pr.exit_code == 1 and "legacy submissions are imported by maintainers only" in pr.stdout


def test_the_workflow_runs_the_contribution_check():
    assert "validate --contribution \\" in WORKFLOW.read_text()


def test_the_rule_reads_the_result_alone():
    doc = result_from(drive_fio_runs())
    assert not_contributable(doc) is None
    doc.device = Device(path="/dev/vda", model="")
    assert "virtual machine" in not_contributable(doc)


def test_sign_a_directory_into_a_directory_as_help_says(tmp_path, monkeypatch):
    """``sign DIR -o DIR``: every result of the directory goes to DIR/<id>.json (it was refused)."""
    key = keygen(tmp_path)
    monkeypatch.chdir(tmp_path)
    results = tmp_path / "fleet" / "host1"
    results.mkdir(parents=True)
    first = _result(results, DRIVE, "sdb.json")
    _result(results, DRIVE.model_copy(update={"model": "Samsung SSD 860 PRO 1TB"}), "sdc.json")
    (results / "status.json").write_text("{}")
    out_dir = tmp_path / "signed"
    out_dir.mkdir()
    runner = CliRunner()
    out = runner.invoke(
        app, ["sign", str(tmp_path / "fleet"), "-f", str(key), "--github", "octocat", "-o", str(out_dir)]
    )
    assert out.exit_code == 0, out.output
    written = [Path(line) for line in out.stdout.split()]
    assert len(written) == 2 and {p.parent for p in written} == {out_dir}
    assert sorted(written) == sorted(out_dir.glob("*.json")) and first.exists()
    allowed = allowed_signers(tmp_path / "allowed", "octocat", key)
    ok = runner.invoke(app, ["validate", *map(str, written), "--allowed-signers", str(allowed)])
    assert ok.exit_code == 0, ok.output
    again = runner.invoke(app, ["sign", str(tmp_path / "fleet"), "-f", str(key), "-o", str(out_dir / "x.json")])
    from diskq.errors import InvalidInput  # main() turns it into exit 2 (tests/test_exit_codes.py)

    assert isinstance(again.exception, InvalidInput) and "names an existing directory" in again.exception.message


def test_contributing_step_3_checks_against_github_keys_and_keeps_allowed_signers(tmp_path, monkeypatch):
    """CONTRIBUTING.md step 3, run in a clone as step 2 leaves it: its key lines carry the
    namespace restriction the pull-request check requires, it writes beside the clone (the
    repository's allowed_signers keeps its lines) and its validate line passes a good file."""
    import re
    import subprocess
    import sys

    from diskq.submission import sshsig

    text = (Path(__file__).resolve().parents[1] / "CONTRIBUTING.md").read_text()
    step = text.split("## 3. Check", 1)[1].split("\n## ", 1)[0]
    block = re.findall(r"```sh\n(.*?)```", step, re.S)[-1]
    assert "> allowed_signers" not in block and "allowed_signers " not in block.replace("--allowed-signers", "")
    key = keygen(tmp_path)
    clone = tmp_path / "clone"
    clone.mkdir()
    listing = clone / "allowed_signers"
    listing.write_text("someone ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKeep\n")
    monkeypatch.chdir(clone)
    signed, path = _sign(CliRunner(), clone, _result(tmp_path, DRIVE), key)
    assert signed.exit_code == 0, signed.output
    kept = listing.read_text()
    # GitHub's .keys serves "TYPE BASE64" lines: the recorded public key stands in for the download
    script = (
        block.replace("curl -fsSL https://github.com/YOUR_LOGIN.keys", f"cut -d' ' -f1,2 {key}.pub")
        .replace("YOUR_LOGIN", "octocat")
        .replace("submissions/<vendor>/<model>/<id>.json", str(path))
        .replace("diskq ", f"{sys.executable} -m diskq ")
    )
    run = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=clone, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert listing.read_text() == kept
    mine = (tmp_path / "my_github_keys").read_text().splitlines()
    parsed = sshsig.parse_allowed_signers("\n".join(mine))
    assert len(parsed) == 1 and parsed[0].options == {"namespaces": "diskq-submission-v1"}
