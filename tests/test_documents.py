"""Reading a result document or a submission named on the command line (sign, plan FILE)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from diskq.errors import InvalidInput, SubmissionError
from diskq.result import Device, Method, ResultDocument
from diskq.submission.documents import read_document


def _result(tmp_path: Path) -> Path:
    path = tmp_path / "result.json"
    path.write_text(ResultDocument(device=Device(model="X"), method=Method()).to_json())
    return path


def test_a_result_document_is_read_back(tmp_path):
    doc = read_document(_result(tmp_path))
    assert isinstance(doc, ResultDocument) and doc.device.model == "X"


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda p: os.mkfifo(p), "is a FIFO, not a regular file"),
        (lambda p: p.mkdir(), "is a directory, not a regular file"),
        (lambda p: None, "does not exist"),
        (lambda p: p.write_bytes(b"\xff\xfe"), "UTF-8"),
        (lambda p: p.write_text('{"format": "something"}'), "is neither a diskq result document nor a submission"),
    ],
)
def test_a_wrong_file_is_a_wrong_argument_and_never_blocks(tmp_path, make, words):
    path = tmp_path / "doc.json"
    make(path)
    with pytest.raises(InvalidInput) as exc:
        read_document(path, invalid=SubmissionError, verb="sign", hint="give a result document")
    assert words in exc.value.message and exc.value.hint == "give a result document"


def test_an_invalid_document_is_the_callers_error_with_its_verb(tmp_path):
    path = _result(tmp_path)
    path.write_text(path.read_text().replace('"model": "X"', '"model": 5'))
    with pytest.raises(SubmissionError) as exc:
        read_document(path, invalid=SubmissionError, verb="sign")
    assert exc.value.message.startswith(f"cannot sign {path}: device.model:")
    with pytest.raises(InvalidInput) as plain:
        read_document(path)
    assert plain.value.message.startswith(f"{path}: device.model:")


@pytest.mark.parametrize("command", [["sign"], ["plan", "--data", "12x16T", "--json"]])
def test_the_cli_refuses_a_fifo_at_once(tmp_path, command):
    """``diskq sign`` read a FIFO with a plain read, which waits for a writer for ever."""
    fifo = tmp_path / "result.json"
    os.mkfifo(fifo)
    cmd = [sys.executable, "-m", "diskq", *command[:1], str(fifo), *command[1:]]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert lines[0] == f"diskq: error: {fifo} is a FIFO, not a regular file" and "Traceback" not in r.stderr
