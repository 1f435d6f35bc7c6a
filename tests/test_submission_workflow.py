"""The pull-request workflow for submissions: safe trigger, the author's keys, diskq validate."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

WORKFLOW = Path(__file__).resolve().parents[1] / ".github" / "workflows" / "submissions.yml"


def test_trigger_is_pull_request_only():
    text = WORKFLOW.read_text()
    on_block = text.split("\non:\n", 1)[1].split("\npermissions:", 1)[0]
    assert on_block.strip().splitlines()[0].strip() == "pull_request:"
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    assert "pull_request_target" not in code
    assert "permissions:\n  contents: read" in text


def test_keys_come_from_both_github_sources_for_the_pr_author():
    text = WORKFLOW.read_text()
    assert "AUTHOR: ${{ github.event.pull_request.user.login }}" in text
    assert "https://github.com/${AUTHOR}.keys" in text
    assert "/users/${AUTHOR}/ssh_signing_keys" in text
    # the login is only ever used through the environment, never pasted into a script
    assert text.count("${{ github.event.pull_request.user.login }}") == 1


def test_validation_uses_the_base_branch_validator_and_flags_other_changes():
    text = WORKFLOW.read_text()
    assert 'pip" install --quiet ./base' in text
    assert "validate --contribution" in text and '--allowed-signers "$RUNNER_TEMP/allowed_signers"' in text
    assert "grep -v '^submissions/'" in text and "maintainer must review" in text


def pr_runner(tmp_path: Path, allowed_signers: str) -> Path:
    """The workflow's RUNNER_TEMP as its setup steps leave it: diskq in ``venv/bin`` (this one) and
    the ``allowed_signers`` built from the author's GitHub keys (``allowed_signers``, its text)."""
    runner = tmp_path / "runner"
    (runner / "venv" / "bin").mkdir(parents=True)
    (runner / "venv" / "bin" / "diskq").symlink_to(Path(sys.executable).parent / "diskq")
    (runner / "allowed_signers").write_text(allowed_signers)
    return runner


def _run_block(step_name: str) -> str:
    """The shell script of the workflow step named ``step_name`` (its ``run: |`` block)."""
    lines = WORKFLOW.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == f"- name: {step_name}")
    run = next(i for i in range(start, len(lines)) if lines[i].strip() == "run: |")
    indent = len(lines[run + 1]) - len(lines[run + 1].lstrip())
    block = []
    for line in lines[run + 1 :]:
        if line.strip() and len(line) - len(line.lstrip()) < indent:
            break
        block.append(line[indent:])
    return "\n".join(block) + "\n"


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("pr_also_touches", [None, "README.md", "submissions/old/x/1.json"])
def test_scope_judges_what_the_pull_request_changes_even_when_main_moved_on(tmp_path, pr_also_touches):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "t@example.org")
    _git(repo, "config", "user.name", "t")
    for rel in ("README.md", "submissions/old/x/1.json"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("{}\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    _git(repo, "checkout", "-qb", "pr")
    (repo / "submissions/new/y").mkdir(parents=True)
    (repo / "submissions/new/y/2.json").write_text("{}\n")
    if pr_also_touches:
        (repo / pr_also_touches).write_text("changed\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "contribution")
    head = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "main")  # main gains a submission and a doc change after the branch
    (repo / "submissions/later/z").mkdir(parents=True)
    (repo / "submissions/later/z/3.json").write_text("{}\n")
    (repo / "CONTRIBUTING.md").write_text("new\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "main moves on")
    base = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", head)
    summary = tmp_path / "summary"
    env = dict(os.environ, BASE_SHA=base, HEAD_SHA=head, GITHUB_STEP_SUMMARY=str(summary))
    scope = subprocess.run(
        ["bash", "-c", _run_block("Flag changes outside submissions/ and edits of existing submissions")],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    flagged = summary.read_text()
    if pr_also_touches is None:
        assert scope.returncode == 0, scope.stdout + flagged
        assert "only new files under submissions/" in flagged
    else:
        assert scope.returncode == 1 and pr_also_touches in flagged
    # main's own later changes are never blamed on the pull request
    assert "CONTRIBUTING.md" not in flagged and "3.json" not in flagged
