"""The fleet role as Ansible's own tools judge it: ansible-lint clean at its default profile,
argument specs that name every variable of the role, and an install step with each OS family's
package names (Debian/Ubuntu with apt, RHEL/Rocky/Alma with dnf). The playbook itself runs
against real hosts in tests/test_fleet_ansible.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
ANSIBLE = REPO / "ansible"
ROLE = ANSIBLE / "roles" / "diskq"
BIN = Path(sys.executable).parent
LINT = shutil.which("ansible-lint", path=str(BIN))
PLAYBOOK = shutil.which("ansible-playbook", path=str(BIN))


def _load(path: Path):
    return yaml.safe_load(path.read_text())


def _env(tmp_path: Path) -> dict:
    return dict(
        os.environ,
        PATH=f"{BIN}:{os.environ.get('PATH', '')}",
        ANSIBLE_HOME=str(tmp_path / "ansible-home"),
        ANSIBLE_LOCAL_TEMP=str(tmp_path / "ansible-tmp"),
        ANSIBLE_NOCOLOR="1",
        NO_COLOR="1",
        ANSIBLE_CONFIG=str(ANSIBLE / "ansible.cfg"),
    )


@pytest.mark.skipif(LINT is None, reason="ansible-lint is not installed (pip install -e '.[test]' installs it)")
def test_ansible_lint_passes_at_its_default_profile(tmp_path):
    done = subprocess.run(
        [LINT, "--offline", "--nocolor"], cwd=ANSIBLE, env=_env(tmp_path), capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "0 failure(s), 0 warning(s)" in done.stdout + done.stderr


def test_the_argument_specs_name_every_variable_of_the_role_with_its_default():
    defaults = _load(ROLE / "defaults" / "main.yml")
    options = _load(ROLE / "meta" / "argument_specs.yml")["argument_specs"]["main"]["options"]
    assert set(options) == set(defaults)
    kinds = {bool: "bool", list: "list", str: ("str", "path")}
    for name, value in defaults.items():
        spec = options[name]
        assert spec["description"], name
        assert spec["type"] in kinds[type(value)], name
        if "{{" not in str(value):  # a templated default is described, not repeated
            assert spec["default"] == value, name
    meta = _load(ROLE / "meta" / "main.yml")["galaxy_info"]
    assert meta["role_name"] == "diskq" and meta["license"] == "Apache-2.0"
    assert {p["name"] for p in meta["platforms"]} == {"Debian", "Ubuntu", "EL"}


def test_each_os_family_installs_its_own_package_names():
    names = _load(ROLE / "vars" / "main.yml")
    packages, python = names["diskq_os_packages"], names["diskq_os_python"]
    assert set(packages) == set(python) == {"Debian", "RedHat"}
    for family in packages:  # the programs diskq runs, under the same names in both families
        assert {"fio", "smartmontools", "hdparm", "sdparm", "nvme-cli", "util-linux"} <= set(packages[family])
    assert "python3-venv" in packages["Debian"] and python["Debian"] == "python3"
    assert "python3.11" in packages["RedHat"] and python["RedHat"] == "python3.11"
    assert "python3-venv" not in packages["RedHat"]  # no such package on RHEL: venv is part of python3.11
    tasks = _load(ROLE / "tasks" / "install.yml")
    modules = [next(k for k in t if k.startswith("ansible.builtin.")) for t in tasks]
    assert "ansible.builtin.package" in modules and "ansible.builtin.setup" in modules
    apt = next(t for t in tasks if "ansible.builtin.apt" in t)
    assert apt["when"] == "ansible_facts['os_family'] == 'Debian'" and "name" not in apt["ansible.builtin.apt"]


def _install_play(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    play = tmp_path / "install.yml"
    play.write_text(
        yaml.safe_dump(
            [
                {
                    "name": "The role's install step on this machine",
                    "hosts": "localhost",
                    "connection": "local",
                    "gather_facts": False,
                    "tasks": [
                        {
                            "name": "Install",
                            "ansible.builtin.include_role": {"name": "diskq", "tasks_from": "install.yml"},
                        }
                    ],
                }
            ]
        )
    )
    env = _env(tmp_path) | {"ANSIBLE_ROLES_PATH": str(ANSIBLE / "roles")}
    return subprocess.run(
        [
            PLAYBOOK,
            "-i",
            "localhost,",
            str(play),
            "--check",
            "-e",
            f"ansible_python_interpreter={sys.executable}",
            *extra,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.skipif(PLAYBOOK is None, reason="ansible-playbook is not installed (pip install -e '.[test]')")
@pytest.mark.skipif(shutil.which("apt-get") is None, reason="the install step is run here on a Debian-family machine")
def test_the_install_step_runs_with_the_family_names_in_check_mode(tmp_path):
    done = _install_play(tmp_path, "-e", "diskq_install=true")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "Install the programs diskq runs, with this family's package names" in done.stdout
    assert "Refuse an OS family" in done.stdout and "skipping" in done.stdout


@pytest.mark.skipif(PLAYBOOK is None, reason="ansible-playbook is not installed (pip install -e '.[test]')")
def test_a_family_without_package_names_is_refused_with_a_message(tmp_path):
    done = _install_play(tmp_path, "-e", '{"diskq_os_packages": {"Gentoo": ["fio"]}}')
    assert done.returncode != 0
    assert "diskq_install knows the package names of Gentoo hosts" in done.stdout
