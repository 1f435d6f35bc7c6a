"""The `diskq` command the Quick start leaves on the PATH: a new shell finds it by name."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).parent.parent
SCRIPT = REPO / "scripts" / "install-launcher"

pytestmark = pytest.mark.skipif(
    not (REPO / ".venv" / "bin" / "diskq").exists(), reason="needs scripts/bootstrap's .venv"
)


def fresh_shell(command: str, prefix: Path, cwd: Path) -> subprocess.CompletedProcess:
    """``bash -c command`` with an environment as bare as a new login's: no venv activated."""
    env = {"HOME": str(cwd), "PATH": f"{prefix / 'bin'}:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def test_launcher_makes_diskq_callable_by_name(tmp_path):
    prefix = tmp_path / "prefix"
    done = subprocess.run([str(SCRIPT), "--prefix", str(prefix)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"{prefix}/bin/diskq runs {REPO.resolve()}/.venv/bin/diskq" in done.stderr
    shell = fresh_shell("command -v diskq && diskq --help && diskq classify 1:5028 2:2651", prefix, tmp_path)
    assert shell.returncode == 0, shell.stderr
    assert shell.stdout.splitlines()[0] == f"{prefix}/bin/diskq"
    assert "Usage: diskq" in shell.stdout and "regressing" in shell.stdout
    # exit codes pass through the launcher
    assert fresh_shell("diskq lookup x --db nowhere.db", prefix, tmp_path).returncode == 2
    # run again: its own launcher is replaced, idempotently
    assert subprocess.run([str(SCRIPT), "--prefix", str(prefix)], capture_output=True).returncode == 0


def test_launcher_never_replaces_a_file_it_did_not_write(tmp_path):
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    other = prefix / "bin" / "diskq"
    other.write_text("#!/bin/sh\necho someone else's diskq\n")
    os.chmod(other, 0o755)
    done = subprocess.run([str(SCRIPT), "--prefix", str(prefix)], capture_output=True, text=True)
    assert done.returncode == 1
    assert "is not a diskq launcher; not replacing it" in done.stderr
    assert other.read_text() == "#!/bin/sh\necho someone else's diskq\n"
