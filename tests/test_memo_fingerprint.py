"""The validation memo's fingerprint covers exactly the code that judges files and devices.

A change to that code must start from an empty memo (no answer of older code is trusted); a
change to code that judges nothing (command line, bench, probes, site) keeps every answer.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from diskq.database import memo as memo_mod
from diskq.database.memo import JUDGES, fingerprint, judging_modules

REPO = Path(__file__).resolve().parents[1]

#: Judges every committed submission, synthetic ones (signed-looking, legacy, a broken file) and
#: the devices they form, then prints the diskq modules the interpreter has loaded.
JUDGE_EVERYTHING = r"""
import json, sys, tempfile
from pathlib import Path
from diskq.database.aggregate import aggregate_device
from diskq.database.analysis import analyse_device
from diskq.database.extract import read_submission
from diskq.database.memo import Memo
from diskq.database.synthetic import write_synthetic

repo, tmp = Path(sys.argv[1]), Path(sys.argv[2])
synthetic = tmp / "submissions"
write_synthetic(synthetic, 60, seed=3, devices=5)
(synthetic / "broken.json").write_text('{"format": "diskq-submission", "id": 1')
by_device = {}
for root in (repo / "submissions", synthetic):
    for path in sorted(root.rglob("*.json")):
        record, problems = read_submission(path, root)
        if record is not None:
            by_device.setdefault(record.device_id, []).append(record)
memo = Memo(tmp / "memo.sqlite", "test")
memo.open_for_writing()
for dev_id, records in sorted(by_device.items()):
    key, answer = analyse_device(aggregate_device(dev_id, records), memo)
    memo.put(key, answer)
memo.close()
assert len(by_device) >= 5, by_device.keys()
print(json.dumps(sorted(m for m in sys.modules if m == "diskq" or m.startswith("diskq."))))
"""


def test_judging_loads_no_module_outside_the_fingerprint(tmp_path):
    """Run in a fresh interpreter: whatever judging imports lazily must be in the static set."""
    done = subprocess.run(
        [sys.executable, "-c", JUDGE_EVERYTHING, str(REPO), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = set(json.loads(done.stdout.splitlines()[-1]))
    # the script itself imports the synthetic generator; it judges nothing
    loaded -= {"diskq.database.synthetic"}
    covered = set(judging_modules())
    assert loaded - covered == set()
    assert {
        "diskq.submission.validate",
        "diskq.submission.canonical",
        "diskq.analyse.usl",
        "diskq.analyse.verdicts",
        "diskq.submission.sshsig",
    } <= loaded


def test_the_judging_set_leaves_out_code_that_judges_nothing():
    covered = set(judging_modules())
    assert set(JUDGES) <= covered
    for outside in (
        "diskq.cli",
        "diskq.cli.bench",
        "diskq.bench.runner",
        "diskq.probe.cache",
        "diskq.publish.site",
        "diskq.database.build",
        "diskq.database.lookup",
    ):
        assert outside not in covered


@pytest.fixture
def package_copy(tmp_path, monkeypatch) -> Path:
    """A copy of the diskq package that fingerprint() reads instead of the real one."""
    real = Path(memo_mod.__file__).resolve().parents[1]
    copy = tmp_path / "diskq"
    shutil.copytree(real, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(memo_mod, "_package_dir", lambda: copy)
    return copy


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def test_fingerprint_changes_with_judging_code_and_data_only(package_copy):
    before = fingerprint(None)
    assert fingerprint(None) == before

    _append(package_copy / "cli" / "app.py", "\n# a change to the command line\n")
    _append(package_copy / "publish" / "site.py", "\n# a change to the site\n")
    _append(package_copy / "bench" / "runner.py", "\n# a change to the bench\n")
    assert fingerprint(None) == before

    _append(package_copy / "submission" / "figures.py", "\n# a change to a validator\n")
    after_validator = fingerprint(None)
    assert after_validator != before

    _append(package_copy / "analyse" / "criteria.toml", "\n# a change to the criteria\n")
    assert fingerprint(None) != after_validator


def test_an_import_inside_a_function_or_relative_brings_its_module_in(package_copy):
    outside = package_copy / "signals.py"
    before = fingerprint(None)
    _append(outside, "\n# a change to a module nothing judging imports\n")
    assert fingerprint(None) == before

    _append(
        package_copy / "submission" / "figures.py",
        "\n\ndef _late():\n    from ..signals import critical  # noqa: F401\n",
    )
    with_import = fingerprint(None)
    assert "diskq.signals" in judging_modules()
    _append(outside, "\n# now it counts\n")
    assert fingerprint(None) != with_import


def test_fingerprint_covers_the_allowed_signers_file(tmp_path):
    signers = tmp_path / "allowed_signers"
    signers.write_text("alice ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGxv\n")
    first = fingerprint(signers)
    assert first != fingerprint(None)
    signers.write_text("bob ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGxv\n")
    assert fingerprint(signers) != first
