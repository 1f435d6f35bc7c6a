"""Validation rules on what a file may claim: legacy rows are unsigned, names hold no invisible or
bidirectional controls, and the JSON Schema requires what ``diskq validate`` requires and loads
in an independent validator with its default settings."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from diskq.database.build import build, repo_root
from diskq.database.synthetic import write_submission
from diskq.submission.legacy import dump, legacy_submissions
from diskq.submission.model import Contributor, Submission
from diskq.submission.sign import make_submission, sign_submission
from diskq.submission.validate import validate_file
from tests.test_submission_support import HAVE_FIO, HAVE_SSH_KEYGEN, fio_runs, keygen, result_from

ROOT = repo_root()
needs_keys = pytest.mark.skipif(not HAVE_SSH_KEYGEN, reason="needs ssh-keygen")


def _write(directory: Path, sub: Submission) -> Path:
    path = directory / f"{sub.id}.json"
    path.write_text(dump(sub), encoding="utf-8")
    return path


# --- a signed legacy file ------------------------------------------------------------------------


@needs_keys
def test_a_signed_legacy_file_is_refused_by_validate_and_skipped_by_db_build(tmp_path):
    legacy = legacy_submissions()[0]
    signed = sign_submission(legacy, keygen(tmp_path), principal="octocat")
    assert signed.legacy and signed.signature is not None

    _, problems = validate_file(_write(tmp_path, signed), root=None)
    assert any(
        p.field == "signature" and "legacy submission is unsigned by definition" in p.message for p in problems
    ), problems
    # the same row unsigned is fine
    _, problems = validate_file(_write(tmp_path, legacy), root=None)
    assert problems == []

    subs = tmp_path / "submissions"
    subs.mkdir()
    write_submission(subs, signed)
    report = build(subs, tmp_path / "devices.db", jobs=1)
    assert report.submissions == 0
    assert any(s.field == "signature" and "unsigned by definition" in s.message for s in report.skipped)


# --- invisible and bidirectional characters in names ---------------------------------------------

SPOOFS = ["Samsung SSD \u202e068 ORP", "Intel\u200b SSD", "PM\u2066883\u2069", "A\u061cB", "X\ufeffY", "Z\u00adW"]


@pytest.mark.skipif(not (HAVE_FIO and HAVE_SSH_KEYGEN), reason="needs fio and ssh-keygen")
@pytest.mark.parametrize("name", SPOOFS)
def test_a_model_name_with_bidi_or_zero_width_controls_is_refused(tmp_path, name):
    result = result_from(fio_runs())
    result = result.model_copy(update={"device": result.device.model_copy(update={"model": name})})
    sub = sign_submission(make_submission(result), keygen(tmp_path), principal="octocat")
    _, problems = validate_file(_write(tmp_path, sub), root=None)
    assert [p.field for p in problems] == ["result.device.model"], problems
    assert "bidirectional or invisible" in problems[0].message


@pytest.mark.parametrize("name", SPOOFS + ["Eve <b>", "a\x85b"])
def test_a_contributor_name_with_controls_fails_the_model_and_the_schema(name):
    import jsonschema
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        Contributor(name=name)
    schema = json.loads((ROOT / "schema" / "submission.schema.json").read_text())
    sub_schema = {"$defs": schema["$defs"], **schema["$defs"]["Contributor"]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"name": name}, sub_schema)
    jsonschema.validate({"name": "Zoë Ünal 日本"}, sub_schema)  # letters of any script are fine
    Contributor(name="Zoë Ünal 日本")


# --- the schema against validate, and in an independent validator ----------------------------------


def test_format_is_required_by_the_schema_as_by_validate(tmp_path):
    import jsonschema

    schema = json.loads((ROOT / "schema" / "submission.schema.json").read_text())
    assert "format" in schema["required"]
    path = next((ROOT / "submissions").rglob("*.json"))
    doc = json.loads(path.read_text())
    jsonschema.validate(doc, schema, format_checker=None)
    del doc["format"]
    with pytest.raises(jsonschema.ValidationError, match="'format' is a required property"):
        jsonschema.validate(doc, schema)
    bare = tmp_path / path.name
    bare.write_text(json.dumps(doc))
    _, problems = validate_file(bare, root=None)
    assert [p.field for p in problems] == ["format"]


def _check_jsonschema() -> list[str] | None:
    exe = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent))
    return [exe] if exe else None


@pytest.mark.skipif(
    _check_jsonschema() is None, reason="check-jsonschema is not installed (pip install -e '.[test]' installs it)"
)
def test_committed_submissions_validate_in_check_jsonschema_with_its_defaults():
    # check-jsonschema checks the schema against the 2020-12 metaschema and reads every
    # `pattern` as an ECMA-262 regular expression (its default): a pattern only Python accepts,
    # such as an escaped quote, fails here before any file is read.
    files = sorted(str(p) for p in (ROOT / "submissions").rglob("*.json"))
    assert files
    done = subprocess.run(
        [*_check_jsonschema(), "--schemafile", str(ROOT / "schema" / "submission.schema.json"), *files],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.skipif(
    _check_jsonschema() is None, reason="check-jsonschema is not installed (pip install -e '.[test]' installs it)"
)
def test_committed_results_validate_in_check_jsonschema_and_a_spoofed_name_does_not(tmp_path):
    first = sorted((ROOT / "submissions").rglob("*.json"))[0]
    doc = json.loads(first.read_text())
    result = tmp_path / "result.json"
    result.write_text(json.dumps(doc["result"]))
    done = subprocess.run(
        [*_check_jsonschema(), "--schemafile", str(ROOT / "schema" / "result.schema.json"), str(result)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    doc["contributor"] = {"name": "Eve \u202eevE"}
    spoof = tmp_path / "spoof.json"
    spoof.write_text(json.dumps(doc))
    done = subprocess.run(
        [*_check_jsonschema(), "--schemafile", str(ROOT / "schema" / "submission.schema.json"), str(spoof)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and "contributor" in done.stdout + done.stderr, done.stdout + done.stderr


# --- one rule for `created` ---------------------------------------------------------------------

CREATED = {
    "2026-01-01T00:00:00Z": True,
    "2026-01-01T02:00:00+02:00": True,
    "2026-01-01T00:00:00.5Z": True,
    "2026-01-01t00:00:00z": True,
    "2026-01-01T00:00:00": False,
    "2026-01-01 00:00:00Z": False,
    "2026-01-01": False,
    "2026-01-01T00:00Z": False,
}


@pytest.mark.skipif(
    _check_jsonschema() is None, reason="check-jsonschema is not installed (pip install -e '.[test]' installs it)"
)
def test_created_needs_a_time_zone_in_the_model_as_in_check_jsonschema(tmp_path):
    from diskq.result import ResultDocument

    result = json.loads(sorted((ROOT / "submissions").rglob("*.json"))[0].read_text())["result"]
    files = {}
    for i, (value, ok) in enumerate(CREATED.items()):
        files[value] = tmp_path / f"r{i}.json"
        files[value].write_text(json.dumps(dict(result, created=value)))
        if ok:
            ResultDocument.model_validate_json(files[value].read_text())
        else:
            with pytest.raises(ValueError, match="created"):
                ResultDocument.model_validate_json(files[value].read_text())
    with pytest.raises(ValueError, match="created"):
        ResultDocument.model_validate(dict(result, created=1767225600))  # an epoch number is no date-time
    done = subprocess.run(
        [*_check_jsonschema(), "--schemafile", str(ROOT / "schema" / "result.schema.json"), *map(str, files.values())],
        capture_output=True,
        text=True,
    )
    refused = {value for value, path in files.items() if f"{path}::$.created" in done.stdout + done.stderr}
    assert refused == {value for value, ok in CREATED.items() if not ok}, done.stdout


def test_sign_and_validate_refuse_a_created_without_a_time_zone(tmp_path, monkeypatch, capsys):
    from diskq.cli import main

    legacy = sorted((ROOT / "submissions").rglob("*.json"))[0]
    doc = json.loads(legacy.read_text())
    doc["result"]["created"] = "2026-01-01T00:00:00"
    result = tmp_path / "result.json"
    result.write_text(json.dumps(doc["result"]))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as code:
        main(["sign", str(result), "-f", str(tmp_path / "no-key-needed")])
    err = capsys.readouterr().err
    assert code.value.code == 5 and "created" in err and "time zone" in err and "Traceback" not in err
    naive = tmp_path / "submissions" / legacy.relative_to(ROOT / "submissions")
    naive.parent.mkdir(parents=True)
    naive.write_text(json.dumps(doc))
    _, problems = validate_file(naive)
    assert any(p.field.endswith("created") and "time zone" in p.message for p in problems), problems
