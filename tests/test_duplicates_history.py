"""Duplicates decided by the repository's history: the file that entered first stays, whatever
date its copier signed; the pull-request check names the earlier file with its commit."""

from __future__ import annotations

import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from diskq.database.build import build
from diskq.database.synthetic import result_document, submission, write_submission
from diskq.submission import history
from tests.cli_support import cli, rows

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
CURVE = {"off": {1: 5000, 2: 9000, 4: 15000}}
GENUINE, COPY = "Zed SSD 1", "Aardvark SSD 1"  # the copy's name sorts first in path order


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def repo_with_a_late_copy(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A repository where the genuine file (measured in March) was committed first and a copy of
    its figures back-dated to January was committed after it."""
    repo = tmp_path / "repo"
    subs = repo / "submissions"
    subs.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.org")
    git(repo, "config", "user.name", "t")
    genuine = write_submission(
        subs, submission(result_document(GENUINE, CURVE, created=datetime(2025, 3, 1, tzinfo=UTC)))
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "genuine")
    copy = write_submission(subs, submission(result_document(COPY, CURVE, created=datetime(2025, 1, 1, tzinfo=UTC))))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "copy", "--date", "2024-01-01T00:00:00Z")  # a commit's own date is no help either
    return subs, genuine, copy


@needs_git
def test_the_file_that_entered_the_repository_first_stays_whatever_date_the_copy_signed(tmp_path):
    subs, genuine, copy = repo_with_a_late_copy(tmp_path)
    report = build(subs, tmp_path / "devices.db")
    assert [r["model"] for r in rows(tmp_path / "devices.db", "SELECT model FROM devices")] == [GENUINE]
    (skip,) = report.skipped
    assert skip.path == copy.relative_to(subs).as_posix()
    assert "it entered the repository first, with commit" in skip.message


@needs_git
def test_without_a_history_the_signed_date_decides_as_before(tmp_path):
    subs, genuine, copy = repo_with_a_late_copy(tmp_path)
    plain = tmp_path / "plain" / "submissions"
    shutil.copytree(subs, plain)
    build(plain, tmp_path / "plain.db")
    assert [r["model"] for r in rows(tmp_path / "plain.db", "SELECT model FROM devices")] == [COPY]


@needs_git
def test_the_pull_request_check_names_the_file_that_entered_first_and_its_commit(tmp_path, capsys):
    subs, genuine, copy = repo_with_a_late_copy(tmp_path)
    new = write_submission(
        subs, submission(result_document("Bee SSD 1", CURVE, created=datetime(2020, 1, 1, tzinfo=UTC)))
    )  # a third copy, not committed
    assert cli("validate", str(new)) == 1
    out = capsys.readouterr().out
    first = git(subs.parent, "rev-list", "--max-parents=0", "HEAD")[:10]
    assert (
        f"{new}: result.runs: duplicates the measured figures of {genuine}, already in the repository since "
        f"commit {first}" in out
    )


@needs_git
def test_a_shallow_clone_has_no_history_to_decide_by(tmp_path):
    subs, _, _ = repo_with_a_late_copy(tmp_path)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{subs.parent}", str(clone)], check=True)
    assert history.entries(clone / "submissions") is None
    assert history.entries(subs) is not None and history.entries(tmp_path) is None
