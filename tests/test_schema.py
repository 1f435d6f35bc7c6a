"""The published JSON Schemas are exactly what the models generate, and they accept real files."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest

from diskq.submission import schema
from diskq.submission.legacy import dump, legacy_submissions

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schema"


def _load(name: str) -> dict:
    return json.loads((SCHEMA_DIR / schema.FILES[name]).read_text())


def test_committed_schemas_equal_the_generated_ones():
    assert schema.stale(SCHEMA_DIR) == [], "run `diskq schema` and commit schema/"


def test_schemas_are_valid_2020_12_schemas():
    for name in schema.FILES:
        doc = _load(name)
        assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        jsonschema.Draft202012Validator.check_schema(doc)


def test_stale_detects_a_drifted_file(tmp_path):
    schema.write(tmp_path)
    assert schema.stale(tmp_path) == []
    path = tmp_path / schema.FILES["result"]
    path.write_text(path.read_text().replace('"numjobs"', '"n_jobs"', 1))
    assert schema.stale(tmp_path) == [str(path)]


def test_a_real_submission_validates_against_the_schema_and_edits_do_not():
    validator = jsonschema.Draft202012Validator(_load("submission"))
    doc = json.loads(dump(legacy_submissions()[4]))
    validator.validate(doc)
    validator_result = jsonschema.Draft202012Validator(_load("result"))
    validator_result.validate(doc["result"])
    for edit in (
        lambda d: d.update(id="../x"),
        lambda d: d["result"]["runs"][0]["points"][0].update(numjobs=0),
        lambda d: d["result"]["device"].update(protocol="usb"),
        lambda d: d.update(unexpected=True),
        lambda d: d["result"].pop("device"),
    ):
        bad = copy.deepcopy(doc)
        edit(bad)
        with pytest.raises(jsonschema.ValidationError):
            validator.validate(bad)


def test_cli_schema_check(tmp_path):
    from typer.testing import CliRunner

    from diskq.cli import app

    runner = CliRunner()
    assert runner.invoke(app, ["schema", "--check", "--dir", str(SCHEMA_DIR)]).exit_code == 0
    assert runner.invoke(app, ["schema", "--check", "--dir", str(tmp_path)]).exit_code == 1
    assert runner.invoke(app, ["schema", "--dir", str(tmp_path)]).exit_code == 0
    assert runner.invoke(app, ["schema", "--check", "--dir", str(tmp_path)]).exit_code == 0
