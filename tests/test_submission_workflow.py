"""The pull-request workflow for submissions: safe trigger, the author's keys, diskq validate."""

from __future__ import annotations

from pathlib import Path

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
    assert 'https://github.com/${AUTHOR}.keys' in text
    assert '/users/${AUTHOR}/ssh_signing_keys' in text
    # the login is only ever used through the environment, never pasted into a script
    assert text.count("${{ github.event.pull_request.user.login }}") == 1


def test_validation_uses_the_base_branch_validator_and_flags_other_changes():
    text = WORKFLOW.read_text()
    assert "pip\" install --quiet ./base" in text
    assert 'validate --no-legacy' in text and '--allowed-signers "$RUNNER_TEMP/allowed_signers"' in text
    assert "grep -v '^submissions/'" in text and "maintainer must review" in text
