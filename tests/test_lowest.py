"""scripts/test-lowest (the lowest allowed dependency versions against a smoke subset) stays
runnable: its smoke files exist, and the floors it found are the ones pyproject.toml declares.
The run itself is in .ci/run (it installs from PyPI)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "test-lowest"


def test_every_smoke_file_exists_and_ci_runs_the_script():
    text = SCRIPT.read_text()
    smoke = re.search(r"SMOKE=\((.*?)\)", text, re.S).group(1).split()
    assert len(smoke) >= 5
    missing = [f for f in smoke if not (ROOT / f).is_file()]
    assert missing == [], f"scripts/test-lowest names test files that do not exist: {missing}"
    assert "--resolution lowest-direct" in text
    assert "scripts/test-lowest" in (ROOT / ".ci" / "run").read_text()


def test_typer_floor_is_one_that_starts_and_prints_help():
    """typer 0.12.0-0.12.5 crash at start-up with today's click, 0.13.0-0.15.3 on --help."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    typer = next(d for d in deps if d.startswith("typer"))
    floor = re.search(r">=([\d.]+)", typer).group(1)
    assert tuple(map(int, floor.split("."))) >= (0, 15, 4), typer


def test_pydantic_floor_reads_json_as_the_schema_does():
    """pydantic 2.11 rejects a JSON integer beyond 2^53 in a float field; the schema accepts it."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pydantic = next(d for d in deps if d.startswith("pydantic"))
    floor = re.search(r">=([\d.]+)", pydantic).group(1)
    assert tuple(map(int, floor.split("."))) >= (2, 12), pydantic
