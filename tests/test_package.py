"""What the distribution says about itself: its version (one source, pyproject.toml, read back from
the installed metadata), its name, licence and addresses, and the shell completion."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

from diskq.cli import main
from diskq.package import DISTRIBUTION, project_url, version

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_version_is_pyprojects_read_from_the_installed_metadata(capsys):
    import diskq

    assert PROJECT["name"] == DISTRIBUTION
    assert version() == diskq.__version__ == PROJECT["version"]
    try:
        main(["--version"])
    except SystemExit as exc:
        assert not exc.code
    assert capsys.readouterr().out == f"diskq {PROJECT['version']} ({DISTRIBUTION})\n"


def test_the_distribution_is_not_named_like_the_unrelated_diskq_on_pypi():
    # "diskq" on PyPI is someone else's project; the command stays `diskq`
    assert PROJECT["name"] != "diskq" and PROJECT["scripts"] == {"diskq": "diskq.cli:main"}


def test_the_licence_file_is_the_apache_licence_pyproject_names():
    text = (ROOT / "LICENSE").read_text()
    assert PROJECT["license"] == "Apache-2.0" and PROJECT["license-files"] == ["LICENSE"]
    assert "Apache License\n                           Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text and "APPENDIX: How to apply the Apache License" in text


def test_the_metadata_names_the_projects_addresses_authors_and_classifiers():
    for label in ("Homepage", "Repository", "Issues"):
        assert project_url(label) == PROJECT["urls"][label] and PROJECT["urls"][label].startswith("https://")
    assert project_url("nothing such") is None
    assert PROJECT["authors"] and PROJECT["maintainers"]
    assert "Programming Language :: Python :: 3.11" in PROJECT["classifiers"]
    assert any(c.startswith("Operating System :: POSIX :: Linux") for c in PROJECT["classifiers"])


def _complete(words: str, cword: int) -> list[str]:
    env = {**os.environ, "_DISKQ_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    done = subprocess.run([sys.executable, "-m", "diskq"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_shell_completion_completes_commands_subcommands_and_options():
    assert _complete("diskq loo", 1) == ["lookup"]
    assert {"build", "update"} <= set(_complete("diskq db ", 2))
    assert "--limit" in _complete("diskq lookup --", 2)


def test_the_completion_script_can_be_shown_for_bash():
    # typer reads "--show-completion bash" as a shell's name only where it does not detect the
    # shell itself (its variable below); detection looks for a shell among the parent processes,
    # and a test run detached from any shell has none: a child process makes the run the same
    env = {**os.environ, "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "diskq", "--show-completion", "bash"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "_diskq_completion" in done.stdout and "_DISKQ_COMPLETE=complete_bash" in done.stdout
