"""The repository's allowed_signers: merged contributions extend it, the pull-request check
requires the signer's line and accepts only the author's own keys, db build and Pages verify
against it, and GitHub logins compare without case everywhere."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from diskq.database.build import repo_root
from diskq.database.synthetic import result_document, submission, write_submission
from diskq.submission.legacy import dump
from diskq.submission.sign import sign_submission
from diskq.submission.signers import FILE_NAME, pull_request_problems, signer_line
from diskq.submission.validate import validate_file
from tests.cli_support import cli
from tests.test_submission_support import HAVE_SSH_KEYGEN, keygen, public_line
from tests.test_submission_workflow import WORKFLOW, _git, _run_block, pr_runner

pytestmark = pytest.mark.skipif(not HAVE_SSH_KEYGEN, reason="needs ssh-keygen")
ROOT = repo_root()


def _signed(tmp_path: Path, key: Path, principal: str, model: str = "Samsung PM1643a", iops: int = 18545):
    sub = submission(result_document(model, {"off": {1: iops, 16: iops * 5}}, protocol="scsi"), contributor=None)
    return sign_submission(sub, key, principal=principal)


def test_logins_compare_without_case_when_verifying(tmp_path):
    key = keygen(tmp_path)
    signed = _signed(tmp_path, key, "octocat")
    path = tmp_path / f"{signed.id}.json"
    path.write_text(dump(signed))
    listed = tmp_path / "allowed"
    listed.write_text(f'OctoCat namespaces="diskq-submission-v1" {public_line(key)}\n')  # as GitHub spells it
    _, problems = validate_file(path, root=None, allowed_signers=listed)
    assert problems == []
    other = tmp_path / "other"
    other.write_text(f'octo-cat namespaces="diskq-submission-v1" {public_line(key)}\n')
    _, problems = validate_file(path, root=None, allowed_signers=other)
    assert [p.field for p in problems] == ["signature"]


def test_the_pull_request_check_needs_the_signers_line_and_only_the_authors_keys(tmp_path):
    key = keygen(tmp_path, name="mine")
    stranger = keygen(tmp_path, name="theirs")
    signed = _signed(tmp_path, key, "octocat")
    keys = f"ssh-ed25519 {public_line(key).split()[1]} octocat@laptop\n"  # github.com/LOGIN.keys
    base = '# header\nalice namespaces="diskq-submission-v1" ' + public_line(stranger) + "\n"
    line = signer_line(signed)
    subs = [("submissions/x/y/1.json", signed)]

    assert pull_request_problems(base, base + line + "\n", "OctoCat", keys, subs) == []
    # GitHub spells the author OctoCat, the file and the signature say octocat: the same login
    assert pull_request_problems(base, base + line.replace("octocat", "OCTOCAT", 1) + "\n", "OctoCat", keys, subs) == []

    missing = pull_request_problems(base, base, "octocat", keys, subs)
    assert len(missing) == 1 and "not in allowed_signers: add this line" in missing[0] and line in missing[0]

    foreign = f'octocat namespaces="diskq-submission-v1" {public_line(stranger)}'
    got = pull_request_problems(base, base + foreign + "\n" + line + "\n", "octocat", keys, subs)
    assert len(got) == 1 and "is not one of the keys GitHub publishes for octocat" in got[0]

    other_login = line.replace("octocat", "mallory", 1)
    got = pull_request_problems(base, base + other_login + "\n", "octocat", keys, subs)
    assert any("names 'mallory'" in p and "compare without case" in p for p in got)

    got = pull_request_problems(base, line + "\n", "octocat", keys, subs)  # alice's line removed
    assert any("may only add lines" in p for p in got)

    wide = f"octocat {public_line(key)}"  # no namespace restriction
    got = pull_request_problems(base, base + wide + "\n", "octocat", keys, subs)
    assert any('namespaces="diskq-submission-v1"' in p for p in got)

    by_other = _signed(tmp_path, stranger, "alice", iops=17000)
    got = pull_request_problems(base, base, "octocat", keys, [("submissions/x/y/2.json", by_other)])
    assert got and "signed as 'alice'" in got[0]


def test_the_workflow_step_runs_the_check_on_what_the_pull_request_changes(tmp_path):
    """The workflow's own shell block, on a repository with a base and a pull-request commit."""
    key = keygen(tmp_path, name="mine")
    repo = tmp_path / "repo"
    (repo / "submissions").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "t@example.org")
    _git(repo, "config", "user.name", "t")
    (repo / FILE_NAME).write_text("# keys\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    base = _git(repo, "rev-parse", "HEAD")
    signed = _signed(tmp_path, key, "octocat")
    path = write_submission(repo / "submissions", signed)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "without the line")
    bare_head = _git(repo, "rev-parse", "HEAD")
    with open(repo / FILE_NAME, "a") as f:
        f.write(signer_line(signed) + "\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "with the line")
    head = _git(repo, "rev-parse", "HEAD")

    runner = pr_runner(tmp_path, f'OctoCat namespaces="diskq-submission-v1" {public_line(key)}\n')  # from GitHub's keys
    script = _run_block("Check allowed_signers (only the author's keys added, every signing key listed)")

    def step(head_sha: str) -> subprocess.CompletedProcess:
        _git(repo, "checkout", "-q", head_sha)
        env = dict(os.environ, BASE_SHA=base, HEAD_SHA=head_sha, AUTHOR="OctoCat", RUNNER_TEMP=str(runner))
        return subprocess.run(["bash", "-c", script], cwd=repo, env=env, capture_output=True, text=True)

    done = step(head)
    assert done.returncode == 0, done.stdout + done.stderr
    done = step(bare_head)
    assert done.returncode == 1
    assert f"::error::{path.relative_to(repo)}: the key that signed it is not in allowed_signers" in done.stdout

    # the scope job does not ask a maintainer to review a contribution that grows allowed_signers
    summary = tmp_path / "summary"
    _git(repo, "checkout", "-q", head)
    env = dict(os.environ, BASE_SHA=base, HEAD_SHA=head, GITHUB_STEP_SUMMARY=str(summary))
    scope = subprocess.run(
        ["bash", "-c", _run_block("Flag changes outside submissions/ and edits of existing submissions")],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    assert scope.returncode == 0, scope.stdout + summary.read_text()


def test_workflows_give_the_repository_file_to_every_build():
    text = WORKFLOW.read_text()
    assert '- "allowed_signers"' in text.split("permissions:")[0]  # the check also runs when only it changes
    assert "signers check-pr" in text
    pages = (WORKFLOW.parent / "pages.yml").read_text()
    builds = [line for line in pages.splitlines() if ".venv/bin/diskq db build" in line]
    assert builds and all("--allowed-signers allowed_signers" in line for line in builds)


def test_sign_in_a_clone_adds_the_line_and_db_build_verifies_against_the_repository_file(tmp_path, monkeypatch):
    key = keygen(tmp_path, name="mine")
    clone = tmp_path / "clone"
    (clone / "submissions").mkdir(parents=True)
    (clone / FILE_NAME).write_text("# keys\n")
    from diskq.result import ResultDocument

    doc = tmp_path / "result.json"
    doc.write_text(
        ResultDocument.model_validate(result_document("Samsung PM883", {"off": {1: 12680, 8: 30000}})).to_json()
    )
    monkeypatch.chdir(clone)
    assert cli("sign", str(doc), "-f", str(key), "--github", "octocat") == 0
    lines = (clone / FILE_NAME).read_text().splitlines()
    assert lines[0] == "# keys" and len(lines) == 2 and lines[1].startswith('octocat namespaces="diskq-submission-v1" ')
    assert cli("sign", str(doc), "-f", str(key), "--github", "OctoCat") == 0  # listed already, without case
    assert len((clone / FILE_NAME).read_text().splitlines()) == 2

    db = clone / "devices.db"
    assert cli("db", "build", "--submissions", "submissions", "--db", str(db), "--no-memo") == 0
    con = sqlite3.connect(db)
    assert {r[0] for r in con.execute("SELECT signature FROM submissions")} == {"verified"}
    assert con.execute("SELECT value FROM meta WHERE key = 'allowed_signers'").fetchone()[0].startswith("sha256:")
    assert cli("db", "build", "--submissions", "submissions", "--db", str(db), "--no-memo", "--no-allowed-signers") == 0
    assert {r[0] for r in sqlite3.connect(db).execute("SELECT signature FROM submissions")} == {"intact"}


def test_the_repository_file_is_a_valid_allowed_signers_file_every_signed_submission_is_in():
    from diskq.submission import sshsig
    from diskq.submission.signers import is_listed
    from diskq.submission.validate import load_submission

    text = (ROOT / FILE_NAME).read_text()
    signers = sshsig.parse_allowed_signers(text)
    assert len(signers) == len([x for x in text.splitlines() if x.strip() and not x.startswith("#")])
    for path in sorted((ROOT / "submissions").rglob("*.json")):
        sub = load_submission(path)
        assert sub.signature is None or is_listed(sub, signers), f"{path}: add `diskq signers line {path}`"
