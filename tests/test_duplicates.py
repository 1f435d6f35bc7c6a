"""The same measurement in two files counts once, and the file with the strongest claim stays:
whatever the paths, a copy never displaces a verified, an earlier or a non-legacy original.
`diskq validate` over a tree refuses a file whose figures duplicate another one."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from diskq.database.build import build
from diskq.database.synthetic import result_document, submission, write_submission
from diskq.submission.duplicates import Claim, claim_key, resolve
from diskq.submission.sign import sign_submission
from tests.cli_support import cli, rows
from tests.test_submission_support import HAVE_SSH_KEYGEN, allowed_signers, keygen

needs_ssh = pytest.mark.skipif(not HAVE_SSH_KEYGEN, reason="needs ssh-keygen")
CURVE = {"off": {1: 5000, 2: 9000, 4: 15000}}
ORIGINAL, COPY = "Zed SSD 1", "Aardvark SSD 1"  # the copy's name sorts first in path order


def _result(model: str, created: datetime | None = None) -> dict:
    return result_document(model, CURVE, created=created)


def _kept_and_skipped(subs: Path, tmp_path: Path, signers: Path | None = None) -> tuple[list[str], list]:
    db = tmp_path / "devices.db"
    report = build(subs, db, allowed_signers=signers)
    models = [r["model"] for r in rows(db, "SELECT model FROM devices")]
    return models, report.skipped


@needs_ssh
@pytest.mark.parametrize("copier", ["unlisted", "unsigned", "listed-later"])
def test_a_copy_under_a_name_that_sorts_first_never_displaces_a_verified_original(tmp_path, copier):
    subs = tmp_path / "submissions"
    alice, mallory = keygen(tmp_path, name="alice"), keygen(tmp_path, name="mallory")
    signers = allowed_signers(tmp_path / "allowed", "alice", alice)
    original = sign_submission(submission(_result(ORIGINAL), contributor=None), alice, principal="alice")
    write_submission(subs, original)
    if copier == "unsigned":
        copy = submission(_result(COPY))
    elif copier == "unlisted":
        copy = sign_submission(submission(_result(COPY), contributor=None), mallory, principal="mallory")
    else:  # listed too, but measured later (the same figures, signed again with a later date)
        signers.write_text(
            signers.read_text()
            + Path(f"{mallory}.pub").read_text().replace("test", "").strip().join(["mallory ", "\n"])
        )
        later = _result(COPY, created=datetime(2025, 6, 1, tzinfo=UTC))
        copy = sign_submission(submission(later, contributor=None), mallory, principal="mallory")
    write_submission(subs, copy)
    models, skipped = _kept_and_skipped(subs, tmp_path, signers)
    assert models == [ORIGINAL]
    (skip,) = skipped
    assert COPY.split()[0].lower() in skip.path and "duplicate of" in skip.message
    assert ORIGINAL.split()[0].lower() in skip.message


def test_a_legacy_row_never_displaces_a_measurement_of_the_same_figures(tmp_path):
    subs = tmp_path / "submissions"
    measured = _result(ORIGINAL)
    write_submission(subs, submission(measured))
    legacy = json.loads(json.dumps(measured))
    legacy["device"]["model"] = COPY
    legacy["device"]["volatile_write_cache"] = None
    legacy["method"] = {
        "id": "community-fio-ceph-iops",
        "version": 1,
        "fio_version": "fio-3.33",
        "fio_params": {},
        "search": "manual",
    }
    write_submission(subs, submission(legacy, legacy=True))
    models, skipped = _kept_and_skipped(subs, tmp_path)
    assert models == [ORIGINAL]
    (skip,) = skipped
    assert "a measurement, this file a legacy row" in skip.message


def test_the_earliest_measured_stays_whatever_the_path_order(tmp_path):
    subs = tmp_path / "submissions"
    write_submission(subs, submission(_result(ORIGINAL, datetime(2025, 1, 1, tzinfo=UTC))))
    write_submission(subs, submission(_result(COPY, datetime(2025, 3, 1, tzinfo=UTC))))
    models, skipped = _kept_and_skipped(subs, tmp_path)
    assert models == [ORIGINAL]
    assert "measured earlier" in skipped[0].message
    db = tmp_path / "devices.db"
    assert [r["model"] for r in rows(db, "SELECT d.model FROM submissions s JOIN devices d ON d.id = s.device_id")] == [
        ORIGINAL
    ]
    assert rows(db, "SELECT count(*) AS n FROM points")[0]["n"] == 3  # the displaced file's rows are gone


def test_the_rule_orders_claims_signature_then_measurement_then_date_then_path():
    claims = [
        Claim("a.json", "unsigned", False, "2024-01-01T00:00:00+00:00"),
        Claim("b.json", "unlisted", False, "2026-01-01T00:00:00+00:00"),
        Claim("c.json", "verified", True, None),
        Claim("d.json", "verified", False, "2026-01-01T01:00:00+01:00"),  # 00:00 UTC, as e.json
        Claim("e.json", "verified", False, "2026-01-01T00:00:00+00:00"),
    ]
    keeper, others = resolve(list(reversed(claims)))
    assert keeper.path == "d.json"
    assert [c.path for c in others] == ["e.json", "c.json", "b.json", "a.json"]
    assert claim_key(claims[3]) < claim_key(claims[4])  # same instant: the path decides


def test_validate_over_a_tree_refuses_the_weaker_of_two_duplicates(tmp_path, capsys):
    subs = tmp_path / "submissions"
    first = write_submission(subs, submission(_result(ORIGINAL, datetime(2025, 1, 1, tzinfo=UTC))))
    copy = write_submission(subs, submission(_result(COPY, datetime(2025, 3, 1, tzinfo=UTC))))
    assert cli("validate", str(subs)) == 1
    out = capsys.readouterr().out
    assert f"{copy}: result.runs: duplicate of {first}" in out
    assert f"{first}: result.runs" not in out


def test_validate_of_a_new_file_refuses_it_when_an_existing_file_holds_the_same_figures(tmp_path, capsys):
    """The pull-request check names only the added files; the tree holds the base branch's."""
    subs = tmp_path / "submissions"
    existing = write_submission(subs, submission(_result(ORIGINAL, datetime(2025, 3, 1, tzinfo=UTC))))
    # even an earlier date does not let a new file displace what the tree already holds
    new = write_submission(subs, submission(_result(COPY, datetime(2024, 1, 1, tzinfo=UTC))))
    assert cli("validate", str(new)) == 1
    out = capsys.readouterr().out
    assert f"{new}: result.runs: duplicates the measured figures of {existing}" in out
    assert cli("validate", str(existing)) == 1  # and the other way round


@needs_ssh
def test_the_pull_request_check_refuses_a_new_file_duplicating_one_on_the_base_branch(tmp_path):
    """The workflow's own validation block on a repository whose base holds the original: the pull
    request adds the same figures re-signed by its author under a name that sorts first."""
    import os
    import subprocess

    from tests.test_submission_support import public_line
    from tests.test_submission_workflow import _git, _run_block, pr_runner

    owner, author = keygen(tmp_path, name="owner"), keygen(tmp_path, name="author")
    repo = tmp_path / "repo"
    (repo / "submissions").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "t@example.org")
    _git(repo, "config", "user.name", "t")
    write_submission(
        repo / "submissions", sign_submission(submission(_result(ORIGINAL), contributor=None), owner, principal="owner")
    )
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    base = _git(repo, "rev-parse", "HEAD")
    later = _result(COPY, created=datetime(2024, 1, 1, tzinfo=UTC))  # even back-dated
    copy = write_submission(
        repo / "submissions", sign_submission(submission(later, contributor=None), author, principal="octocat")
    )
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "contribution")
    head = _git(repo, "rev-parse", "HEAD")
    runner = pr_runner(tmp_path, f'octocat namespaces="diskq-submission-v1" {public_line(author)}\n')
    env = dict(os.environ, BASE_SHA=base, HEAD_SHA=head, RUNNER_TEMP=str(runner))
    done = subprocess.run(
        ["bash", "-c", _run_block("Validate added and changed submission files")],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    rel = copy.relative_to(repo).as_posix()
    assert f"::error::{rel}: result.runs: duplicates the measured figures of " in done.stdout
    assert [line for line in done.stdout.splitlines() if line.startswith("::error::")] == [
        line for line in done.stdout.splitlines() if line.startswith(f"::error::{rel}: result.runs: duplicates")
    ]
