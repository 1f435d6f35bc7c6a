"""The committed locks (requirements/*.lock) must satisfy pyproject.toml, pin every package with
its hashes, and agree with each other: scripts/bootstrap installs from them, so a lock that no
longer matches pyproject.toml would test something other than what a `pip install` gets."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
LOCKS = ROOT / "requirements"
_PIN = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s;\\]+)\s*(?:;\s*(?P<marker>[^\\]+?))?\s*\\?$"
)


def parse_lock(text: str) -> list[tuple[str, Version, Marker | None, int]]:
    """(name, version, marker, number of hashes) for every pin of a lock::

        typer==0.28.0 \\
            --hash=sha256:0cf3... \\
            --hash=sha256:63bf...
        ansible-core==2.19.14 ; python_full_version < '3.12' \\
    """
    pins: list[tuple[str, Version, Marker | None, int]] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("--hash="):
            if not pins:
                raise ValueError(f"a hash before any pin: {stripped}")
            name, version, marker, hashes = pins[-1]
            pins[-1] = (name, version, marker, hashes + 1)
            continue
        m = _PIN.match(stripped)
        if not m:
            raise ValueError(f"not a pin: {stripped}")
        marker = Marker(m["marker"]) if m["marker"] else None
        pins.append((canonicalize_name(m["name"]), Version(m["version"]), marker, 0))
    return pins


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _check(lock: Path, requirements: list[str]) -> list[str]:
    """What is wrong between a lock and the requirements it must satisfy."""
    pins = parse_lock(lock.read_text())
    problems = [f"{name}=={v}: no hashes" for name, v, _, hashes in pins if hashes == 0]
    by_name: dict[str, list[tuple[Version, Marker | None]]] = {}
    for name, version, marker, _ in pins:
        by_name.setdefault(name, []).append((version, marker))
    for text in requirements:
        req = Requirement(text)
        found = by_name.get(canonicalize_name(req.name))
        if not found:
            problems.append(f"{req.name}: required by pyproject.toml, not in {lock.name}")
            continue
        for version, marker in found:
            if version not in req.specifier:
                where = f" ({marker})" if marker else ""
                problems.append(f"{req.name}=={version}{where} does not satisfy '{req.specifier}'")
    return problems


def test_parse_lock_reads_pins_markers_and_hashes():
    pins = parse_lock(
        "# header\n"
        "typer==0.28.0 \\\n    --hash=sha256:aa \\\n    --hash=sha256:bb\n"
        "ansible-core==2.19.14 ; python_full_version < '3.12' \\\n    --hash=sha256:cc\n"
    )
    assert [(n, str(v), str(m) if m else None, h) for n, v, m, h in pins] == [
        ("typer", "0.28.0", None, 2),
        ("ansible-core", "2.19.14", 'python_full_version < "3.12"', 1),
    ]
    with pytest.raises(ValueError):
        parse_lock("typer>=0.12\n")


def test_runtime_lock_satisfies_pyproject():
    assert _check(LOCKS / "runtime.lock", _project()["dependencies"]) == []


def test_test_lock_satisfies_pyproject_with_the_test_extras():
    project = _project()
    wanted = project["dependencies"] + project["optional-dependencies"]["test"]
    assert _check(LOCKS / "test.lock", wanted) == []


def test_a_lock_that_no_longer_satisfies_pyproject_is_reported(tmp_path):
    stale = tmp_path / "stale.lock"
    stale.write_text("typer==0.11.0 \\\n    --hash=sha256:aa\nrich==13.0.0\n")
    problems = _check(stale, ["typer>=0.12,<0.29", "rich>=13", "jinja2>=3.1"])
    assert problems == [
        "rich==13.0.0: no hashes",
        "typer==0.11.0 does not satisfy '<0.29,>=0.12'",
        "jinja2: required by pyproject.toml, not in stale.lock",
    ]


def test_the_two_locks_pin_the_same_versions():
    """Every runtime pin is one the test lock holds too (markers may differ: the test lock's wider
    set of packages can need a dependency on more platforms)."""
    test: dict[str, set[Version]] = {}
    for name, version, _, _ in parse_lock((LOCKS / "test.lock").read_text()):
        test.setdefault(name, set()).add(version)
    runtime = parse_lock((LOCKS / "runtime.lock").read_text())
    assert runtime
    assert [(n, str(v)) for n, v, _, _ in runtime if v not in test.get(n, set())] == []
