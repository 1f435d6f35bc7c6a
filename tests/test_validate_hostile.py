"""Hostile input: every bad file gets one-line problems naming the field, never an exception."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diskq.errors import SubmissionError
from diskq.submission.legacy import dump, legacy_submissions
from diskq.submission.validate import MAX_BYTES, Problem, load_submission, validate_file

HOSTILE = Path(__file__).parent / "fixtures" / "hostile"
EXPECTED = json.loads((HOSTILE / "EXPECTED.json").read_text())


def _assert_one_line(problems: list[Problem]) -> None:
    assert problems, "a hostile file must produce at least one problem"
    for p in problems:
        line = str(p)
        assert "\n" not in line and "\r" not in line
        assert "internal error" not in line, line
        assert line.startswith(p.path)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hostile_corpus_file_gets_its_error(name):
    path = HOSTILE / name
    sub, problems = validate_file(path)
    _assert_one_line(problems)
    lines = [str(p) for p in problems]
    assert any(EXPECTED[name] in line for line in lines), lines
    assert all(line.startswith(f"{path}: ") for line in lines)


def test_oversize_file_is_refused_before_parsing(tmp_path):
    big = tmp_path / "big.json"
    big.write_bytes(b'{"format": "diskq-submission", "pad": "' + b"x" * MAX_BYTES + b'"}')
    sub, problems = validate_file(big)
    assert sub is None
    assert [str(p) for p in problems] == [f"{big}: -: file is larger than {MAX_BYTES} bytes"]


def test_directory_and_missing_file_are_problems(tmp_path):
    assert "is a directory" in str(validate_file(tmp_path)[1][0])
    assert "cannot read" in str(validate_file(tmp_path / "nope.json")[1][0])


def test_load_submission_raises_one_line_submission_error():
    with pytest.raises(SubmissionError) as info:
        load_submission(HOSTILE / "wrong_type_iops.json")
    assert "\n" not in str(info.value) and "iops" in str(info.value)


def test_cli_validate_prints_one_line_per_problem_and_fails(tmp_path):
    from typer.testing import CliRunner

    from diskq.cli import app

    out = CliRunner().invoke(app, ["validate", str(HOSTILE / "nan.json"), str(HOSTILE / "html_model.json")])
    assert out.exit_code == 1
    lines = out.stdout.strip().splitlines()
    assert any(line.startswith(f"{HOSTILE / 'nan.json'}: -: not acceptable JSON: NaN") for line in lines)
    assert any("result.device.model: holds markup" in line for line in lines)
    assert "Traceback" not in out.stdout + out.stderr
    assert out.exception is None or isinstance(out.exception, SystemExit)


# ------------------------------------------------------------------------------------ fuzzing

_BASE = json.loads(dump(legacy_submissions()[5]))
_fuzz = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats()  # includes NaN and +-Infinity, written as such below
    | st.text(max_size=30)
    | st.sampled_from(["../../etc/passwd", "<script>alert(1)</script>", "\u0000", "\ud800", "1e999", ""])
)
json_values = st.recursive(
    scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4), max_leaves=20
)


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


_BASE_PATHS = [p for p in _paths(_BASE) if p]


def _write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "fuzz.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    return path


@_fuzz
@given(st.binary(max_size=2000))
def test_random_bytes(tmp_path, data):
    _assert_one_line(validate_file(_write(tmp_path, data))[1])


@_fuzz
@given(json_values)
def test_random_json(tmp_path, value):
    _assert_one_line(validate_file(_write(tmp_path, json.dumps(value)))[1])


@_fuzz
@given(st.sampled_from(_BASE_PATHS), json_values)
def test_one_field_of_a_valid_file_replaced_by_anything(tmp_path, where, value):
    doc = json.loads(json.dumps(_BASE))
    target = doc
    for part in where[:-1]:
        target = target[part]
    if target[where[-1]] == value:
        return
    target[where[-1]] = value
    sub, problems = validate_file(_write(tmp_path, json.dumps(doc)))
    for p in problems:
        assert "\n" not in str(p) and "internal error" not in str(p), str(p)


@_fuzz
@given(st.integers(min_value=1, max_value=50_000), st.sampled_from(["[", '{"a":']))
def test_deep_nesting_anywhere(tmp_path, depth, opener):
    closer = "]" if opener == "[" else "}"
    doc = json.dumps(_BASE)
    nested = opener * depth + "1" + closer * depth
    text = doc.replace('"sources": [', f'"sources": [{nested}, ', 1)
    _assert_one_line(validate_file(_write(tmp_path, text))[1])


def test_unmodified_base_is_valid_apart_from_its_name(tmp_path):
    # The fuzz tests start from a valid file: only the temp file name is wrong.
    problems = validate_file(_write(tmp_path, json.dumps(_BASE)))[1]
    assert [p.field for p in problems] == ["id"]


# ------------------------------------------------------------- integers a signature cannot hold

_SAFE = 2**53 - 1


@pytest.mark.parametrize(
    "value, ok",
    [
        (_SAFE, True),
        (-_SAFE, True),
        (_SAFE + 1, False),
        (-_SAFE - 1, False),
        (2**60 + 1, False),
        (10**40, False),
    ],
)
def test_integers_beyond_2_53_are_refused_with_their_path(value, ok):
    from diskq.submission.strictjson import UnsafeInteger, parse_json

    text = json.dumps({"result": {"runs": [{"x": 1.5}, {"points": [0, value]}]}}).encode()
    if ok:
        assert parse_json(text)["result"]["runs"][1]["points"][1] == value
        return
    with pytest.raises(UnsafeInteger) as info:
        parse_json(text)
    assert info.value.field == "result.runs[1].points[1]"
    shown = str(value) if len(str(value)) <= 24 else f"{str(value)[:20]}... ({len(str(abs(value)))} digits)"
    assert f"integer {shown} is beyond +-(2^53-1)" in info.value.detail and "\n" not in info.value.message


def test_long_runs_of_digits_that_are_not_integers_are_fine():
    from diskq.submission.strictjson import parse_json

    text = (
        b'{"a": 0.30000000000000004, "b": "12345678901234567890", "c": 1.2345678901234567e-12345678901234567,'
        b' "d": -0.12345678901234567890, "e": 5e+0000000000000000001}'
    )
    assert parse_json(text)["b"] == "12345678901234567890"


def test_an_integer_thousands_of_digits_long_is_one_line():
    from diskq.submission.strictjson import UnsafeInteger, parse_json

    with pytest.raises(UnsafeInteger) as info:
        parse_json(b'{"a": [-' + b"7" * 50_000 + b"]}")
    assert info.value.field == "a[0]" and "(50000 digits)" in info.value.message and len(info.value.message) < 300


@given(
    st.recursive(
        st.integers(min_value=-(2**64), max_value=2**64)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(alphabet="0123456789.e-+ ab", max_size=30),
        lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=4), c, max_size=4),
        max_leaves=12,
    )
)
def test_the_parser_refuses_exactly_the_documents_holding_an_unsafe_integer(value):
    from diskq.submission.integers import find, unsafe_int
    from diskq.submission.strictjson import UnsafeInteger, parse_json

    text = json.dumps({"v": value}).encode()
    unsafe = find({"v": value}, unsafe_int)
    try:
        parse_json(text)
    except UnsafeInteger as exc:
        assert unsafe is not None and exc.field == unsafe[0]
    else:
        assert unsafe is None


# ------------------------------------------------------------------- what a path may name


def _cli_validate(*args: str, cwd: Path | None = None):
    """The real CLI in a subprocess: a FIFO that were opened for reading would block it, and the
    timeout turns that into a failure instead of a stuck test run."""
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "diskq", "validate", *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
    )


def test_a_symbolic_link_is_not_followed(tmp_path):
    target = tmp_path / "real.json"
    target.write_text(json.dumps(_BASE))
    link = tmp_path / "link.json"
    link.symlink_to(target)
    sub, problems = validate_file(link)
    assert sub is None and [str(p) for p in problems] == [
        f"{link}: -: is a symbolic link: symbolic links are not followed"
    ]
    tree = tmp_path / "tree"
    (tree / "a").mkdir(parents=True)
    (tree / "a" / "link.json").symlink_to(target)
    (tree / "b").symlink_to(tmp_path)  # a link to a directory is not walked into either
    out = _cli_validate(str(tree))
    assert out.returncode == 1
    assert out.stdout.splitlines() == [
        f"{tree / 'b'}: -: is a symbolic link: symbolic links are not followed",
        f"{tree / 'a' / 'link.json'}: -: is a symbolic link: symbolic links are not followed",
    ]


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    import os

    fifo = tmp_path / "x.json"
    os.mkfifo(fifo)
    for arg in (fifo, tmp_path):  # named, or found in a directory
        out = _cli_validate(str(arg))
        assert out.returncode == 1 and "Traceback" not in out.stderr
        assert out.stdout.splitlines() == [
            f"{fifo}: -: is not a regular file (a FIFO, socket or device): only regular files are read"
        ]


def test_a_directory_without_submission_files_is_an_error(tmp_path):
    empty = tmp_path / "emptydir"
    (empty / "sub").mkdir(parents=True)
    (empty / "notes.txt").write_text("no submissions here")
    (empty / ".hidden.json").write_text("{}")
    out = _cli_validate(str(empty))
    assert out.returncode == 1
    assert out.stdout.splitlines() == [f"{empty}: -: no submission files under {empty}"]
