"""Every single-field edit of a signed submission is rejected (hypothesis-driven)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from diskq.submission.canonical import CanonicalError, canonicalize
from diskq.submission.legacy import dump
from diskq.submission.model import Contributor
from diskq.submission.sign import make_submission, sign_submission
from diskq.submission.validate import validate_file
from tests.test_submission_support import (
    HAVE_FIO,
    HAVE_SSH_KEYGEN,
    allowed_signers,
    fio_runs,
    keygen,
    result_from,
    session_dir,
)

pytestmark = pytest.mark.skipif(not (HAVE_FIO and HAVE_SSH_KEYGEN), reason="needs fio and ssh-keygen")


@functools.cache
def _signed() -> tuple[str, str]:
    """(file text of a signed submission, allowed-signers path) made once per session."""
    work = session_dir("diskq-test-edits-")
    key = keygen(work)
    sub = make_submission(result_from(fio_runs()), contributor=Contributor(github="octocat", name="Test Person"))
    signed = sign_submission(sub, key, principal="octocat")
    return dump(signed), str(allowed_signers(work / "allowed", "octocat", key))


def _leaves(obj, prefix=()):
    if isinstance(obj, dict) and obj:
        for k, v in obj.items():
            yield from _leaves(v, prefix + (k,))
    elif isinstance(obj, list) and obj:
        for i, v in enumerate(obj):
            yield from _leaves(v, prefix + (i,))
    else:
        yield prefix


def _members(obj, prefix=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield prefix + (k,)
            yield from _members(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _members(v, prefix + (i,))


def _objects(obj, prefix=()):
    if isinstance(obj, dict):
        yield prefix
        for k, v in obj.items():
            yield from _objects(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _objects(v, prefix + (i,))


def _get(doc, path):
    for part in path:
        doc = doc[part]
    return doc


def _validate(tmp_path: Path, doc: dict) -> list:
    text, allowed = _signed()
    sub_id = json.loads(text)["id"]
    path = tmp_path / f"{sub_id}.json"
    path.write_text(json.dumps(doc))
    return validate_file(path, allowed_signers=Path(allowed))[1]


def _differs(a, b) -> bool:
    try:
        return (
            canonicalize([a]) != canonicalize([b])
            or type(a) is not type(b)
            and not (
                isinstance(a, (int, float))
                and isinstance(b, (int, float))
                and not isinstance(a, bool)
                and not isinstance(b, bool)
            )
        )
    except CanonicalError:
        return True


scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
_settings = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def test_the_unedited_file_is_valid(tmp_path):
    text, _ = _signed()
    assert _validate(tmp_path, json.loads(text)) == []


@_settings
@given(data=st.data(), value=scalars)
def test_changing_any_value_is_rejected(tmp_path, data, value):
    doc = json.loads(_signed()[0])
    where = data.draw(st.sampled_from(list(_leaves(doc))))
    old = _get(doc, where)
    assume(_differs(old, value))
    _get(doc, where[:-1])[where[-1]] = value
    problems = _validate(tmp_path, doc)
    assert problems, f"edit of {where} from {old!r} to {value!r} went unnoticed"


@_settings
@given(data=st.data())
def test_removing_any_member_is_rejected(tmp_path, data):
    doc = json.loads(_signed()[0])
    where = data.draw(st.sampled_from(list(_members(doc))))
    del _get(doc, where[:-1])[where[-1]]
    assert _validate(tmp_path, doc), f"removing {where} went unnoticed"


@_settings
@given(data=st.data(), name=st.text(min_size=1, max_size=10), value=scalars)
def test_adding_a_member_anywhere_is_rejected(tmp_path, data, name, value):
    doc = json.loads(_signed()[0])
    where = data.draw(st.sampled_from(list(_objects(doc))))
    target = _get(doc, where)
    assume(name not in target)
    target[name] = value
    assert _validate(tmp_path, doc), f"adding {name!r} at {where} went unnoticed"
