"""The published JSON Schemas are exactly what the models generate, and they accept real files."""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

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


# ------------------------------------------- the model and the published schema accept alike

_DELETE = object()


@functools.cache
def _analysed_submission() -> str:
    """A real submission as diskq bench would make it: real fio steps, flush-check step, analysis
    (with a USL fit), contributor and SSH signature."""
    from diskq.analyse import annotate, usl
    from diskq.submission.model import Contributor
    from diskq.submission.sign import make_submission, sign_submission
    from tests.test_submission_support import (
        fio_nosync_run,
        fio_runs,
        keygen,
        nosync_point_from,
        result_from,
        session_dir,
    )

    doc = result_from(fio_runs(), method_id="diskq-fdatasync-sweep")
    doc.runs[0].write_cache = "on"
    doc.runs[0].nosync = nosync_point_from(fio_nosync_run())
    annotate(doc)
    doc.runs[0].scaling.usl = usl.fit([(1, 100), (2, 190), (4, 340), (8, 520), (16, 600), (32, 560)])
    sub = make_submission(doc, contributor=Contributor(github="octocat", name="Test Person"))
    key = keygen(session_dir("diskq-test-schema-"))
    return dump(sign_submission(sub, key, principal="octocat"))


@functools.cache
def _bases() -> tuple[dict, ...]:
    """Real valid submissions (callers copy before changing them): a legacy one, and where fio
    and ssh-keygen are installed one made like a bench result."""
    from tests.test_submission_support import HAVE_FIO, HAVE_SSH_KEYGEN

    out = [json.loads(dump(legacy_submissions()[4]))]
    if HAVE_FIO and HAVE_SSH_KEYGEN:
        out.append(json.loads(_analysed_submission()))
    return tuple(out)


def _nodes(obj, prefix=()):
    """Every member and list element, except inside fio's own output (any JSON there is fine)."""
    if isinstance(obj, dict):
        items = obj.items()
    elif isinstance(obj, list):
        items = enumerate(obj)
    else:
        return
    for k, v in items:
        yield prefix + (k,)
        if k != "fio":
            yield from _nodes(v, prefix + (k,))


def _model_accepts(doc: dict) -> bool:
    from pydantic import ValidationError

    from diskq.submission.model import Submission

    try:
        Submission.model_validate_json(json.dumps(doc), strict=True)
    except ValidationError:
        return False
    return True


def _agree(doc: dict, validator) -> tuple[bool, bool]:
    return _model_accepts(doc), validator.is_valid(doc)


_other_values = (
    st.just(_DELETE)
    | st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.integers(-5000, 5000).map(float)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.lists(st.integers(0, 3) | st.text(max_size=3), max_size=2)
    | st.dictionaries(st.sampled_from(["mean", "lambda", "x"]), st.integers(0, 3), max_size=2)
)


@settings(max_examples=400, deadline=None)
@given(data=st.data(), value=_other_values)
def test_model_and_schema_accept_and_reject_the_same_mutations(data, value):
    # One member (outside fio's raw output) replaced by a value of another JSON type, or
    # removed. Strings replaced by other strings are left out: JSON Schema's "format" is not
    # asserted by default and pattern dialects differ, which is not what this test is about.
    validator = jsonschema.Draft202012Validator(_load("submission"))
    base = data.draw(st.sampled_from(_bases()))
    where = data.draw(st.sampled_from(list(_nodes(base))))
    doc = copy.deepcopy(base)
    parent = doc
    for part in where[:-1]:
        parent = parent[part]
    old = parent[where[-1]]
    assume(not (isinstance(old, str) and isinstance(value, str)))
    if value is _DELETE:
        del parent[where[-1]]
    else:
        parent[where[-1]] = value
    model, schema_ok = _agree(doc, validator)
    assert model == schema_ok, f"{where}: {old!r} -> {value!r}: model {model}, schema {schema_ok}"


def test_every_integer_field_takes_an_integral_number_and_refuses_a_boolean():
    # JSON knows one kind of number: 3.0 is the integer 3 for the schema, the model and RFC 8785
    validator = jsonschema.Draft202012Validator(_load("submission"))
    checked = 0
    for base in _bases():
        assert _agree(base, validator) == (True, True)
        for where in _nodes(base):
            parent = base
            for part in where[:-1]:
                parent = parent[part]
            old = parent[where[-1]]
            if type(old) is not int:
                continue
            for value, accepted in ((float(old), True), (True, False), (old + 0.5, False), (str(old), False)):
                doc = copy.deepcopy(base)
                target = doc
                for part in where[:-1]:
                    target = target[part]
                target[where[-1]] = value
                assert _agree(doc, validator) == (accepted, accepted), (where, value)
            checked += 1
    assert checked >= 10


def test_usl_lambda_is_known_by_its_json_name_only():
    from pydantic import ValidationError

    from diskq.analyse import usl
    from diskq.analyse.model import UslFit

    fit = usl.fit([(1, 100), (2, 190), (4, 340), (8, 520), (16, 600), (32, 560)])
    good = fit.model_dump(mode="json")
    assert UslFit.model_validate_json(json.dumps(good), strict=True) == fit
    bad = {("lambda_" if k == "lambda" else k): v for k, v in good.items()}
    with pytest.raises(ValidationError, match="lambda"):
        UslFit.model_validate_json(json.dumps(bad), strict=True)
    schema = _load("result")["$defs"]["UslFit"]
    assert not jsonschema.Draft202012Validator(schema).is_valid(bad)


def test_the_package_ships_the_published_schemas(capsys):
    # the package's copy (what an installed diskq hands out) equals the models and schema/
    packaged = SCHEMA_DIR.parent / schema.PACKAGED
    assert schema.stale(packaged) == [], "run `diskq schema` in the checkout's root and commit both copies"
    for name, file in schema.FILES.items():
        assert schema.shipped(name) == (SCHEMA_DIR / file).read_text() == schema.render(schema.schemas()[name])
    from diskq.cli import main

    try:
        main(["schema", "--show", "result"])
    except SystemExit as exc:
        assert not exc.code
    assert json.loads(capsys.readouterr().out) == _load("result")


def test_show_of_an_unknown_schema_is_a_one_line_error(capsys):
    from diskq.cli import main
    from diskq.errors import InvalidInput

    with pytest.raises(SystemExit) as exc:
        main(["schema", "--show", "nonesuch"])
    assert exc.value.code == InvalidInput.exit_code
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "diskq: error: no schema named 'nonesuch'" and "submission, result, plp-datasheets" in err[1]


def test_schema_in_a_checkouts_root_writes_and_checks_both_copies(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from diskq.cli import app

    monkeypatch.chdir(tmp_path)
    (tmp_path / schema.PACKAGED).mkdir(parents=True)
    runner = CliRunner()
    assert runner.invoke(app, ["schema"]).exit_code == 0
    assert schema.stale(tmp_path / "schema") == [] and schema.stale(tmp_path / schema.PACKAGED) == []
    (tmp_path / schema.PACKAGED / schema.FILES["result"]).write_text("{}\n")
    done = runner.invoke(app, ["schema", "--check"])
    assert done.exit_code == 1 and str(schema.PACKAGED / schema.FILES["result"]) in done.stdout


def test_schema_outside_a_checkout_writes_only_where_asked(tmp_path, monkeypatch, capsys):
    from diskq.cli import main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(["schema"])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and "is not a diskq checkout's root" in err[0] and "--dir" in err[1]
    assert "Traceback" not in "\n".join(err)
    assert list(tmp_path.iterdir()) == []  # nothing written: no ./schema/ appears wherever it runs
    with pytest.raises(SystemExit) as exc:
        main(["schema", "--check"])
    assert exc.value.code == 2 and list(tmp_path.iterdir()) == []
    with pytest.raises(SystemExit) as exc:
        main(["schema", "--dir", str(tmp_path / "out")])
    assert not exc.value.code
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(schema.FILES.values())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
