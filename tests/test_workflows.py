"""The GitHub workflows: every action pinned to a full commit hash with its tag beside it, zizmor
finds nothing, and the test workflow runs on pull requests that change code."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
PINNED = re.compile(r"^\s*(?:-\s+)?uses:\s+([\w.-]+/[\w./-]+)@([0-9a-f]{40}) # v\d+(\.\d+)*\s*$")


def _zizmor() -> str | None:
    beside = Path(sys.executable).with_name("zizmor")
    return str(beside) if beside.exists() else shutil.which("zizmor")


def test_every_action_is_pinned_to_a_commit_with_its_tag_in_a_comment():
    uses = [
        (wf.name, line)
        for wf in WORKFLOWS
        for line in wf.read_text().splitlines()
        if re.match(r"^\s*(-\s+)?uses:", line)
    ]
    assert uses, "no workflow uses an action: the check below would prove nothing"
    assert [u for u in uses if not PINNED.match(u[1])] == []


def test_the_pin_check_refuses_a_tag_or_a_short_hash():
    for line in (
        "      - uses: actions/checkout@v4",
        "        uses: actions/checkout@11d5960a # v4.4.0",
        "      - uses: actions/checkout@11d5960a326750d5838078e36cf38b85af677262",
    ):
        assert not PINNED.match(line)


def test_zizmor_finds_nothing():
    zizmor = _zizmor()
    if zizmor is None:
        pytest.skip("zizmor is not installed (it is in the test extras: scripts/bootstrap --test)")
    done = subprocess.run(
        [zizmor, "--offline", "--no-progress", *map(str, WORKFLOWS)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_test_workflow_runs_the_suite_on_pull_requests_that_change_code():
    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "tests.yml").read_text())
    on = wf[True] if True in wf else wf["on"]  # YAML 1.1 reads the key `on` as true
    paths = on["pull_request"]["paths"]
    for changed in ("src/**", "tests/**", "pyproject.toml", "requirements/**", "scripts/**"):
        assert changed in paths
    steps = wf["jobs"]["test"]["steps"]
    assert any(".ci/run" in (s.get("run") or "") and "sudo" in s["run"] for s in steps)
    assert wf["permissions"] == {"contents": "read"}


def test_the_release_workflow_builds_checks_and_publishes_by_trusted_publishing_on_a_tag():
    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    on = wf[True] if True in wf else wf["on"]
    assert on == {"push": {"tags": ["v*"]}}
    assert wf["permissions"] == {"contents": "read"}
    build, publish = wf["jobs"]["build"], wf["jobs"]["publish"]
    runs = "\n".join(s.get("run") or "" for s in build["steps"])
    assert "python -m build" in runs and "twine check --strict dist/*" in runs and '"v$version"' in runs
    assert "permissions" not in build  # the build job never gets the OIDC token
    assert publish["needs"] == "build" and publish["permissions"] == {"id-token": "write"}
    assert publish["environment"]["name"] == "pypi"
    (upload,) = [s for s in publish["steps"] if s.get("uses", "").startswith("pypa/gh-action-pypi-publish@")]
    assert "with" not in upload or not {"password", "user"} & set(upload["with"])  # no stored token
