"""The result document's path: checked before the bench starts, never lost at the end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from diskq.bench.output import check_output_path, write_result
from diskq.errors import DiskqError, InvalidInput
from diskq.result import ResultDocument
from tests.conftest import needs_fio, needs_loop


def diskq(*args, cwd=None, env=None):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "diskq", *args],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env=full_env,
    )


# -- the check ---------------------------------------------------------------------------


def test_good_paths_pass(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    check_output_path(None)
    check_output_path(Path("result.json"))
    check_output_path(tmp_path / "new.json")
    (tmp_path / "old.json").write_text("{}")
    check_output_path(tmp_path / "old.json")
    check_output_path(Path("/dev/null"))


@pytest.mark.parametrize(
    "make, needle",
    [
        (lambda d: d / "no" / "such" / "dir" / "o.json", "does not exist"),
        (lambda d: d, "is a directory"),
        (lambda d: Path(tempfile.gettempdir()), "is a directory"),
    ],
)
def test_bad_paths_are_refused_with_a_hint(tmp_path, make, needle):
    with pytest.raises(InvalidInput, match=needle) as info:
        check_output_path(make(tmp_path))
    assert info.value.hint


def test_the_target_itself_is_refused(tmp_path):
    target = tmp_path / "bench.img"
    with pytest.raises(InvalidInput, match="target itself"):
        check_output_path(target, target=str(target))
    with pytest.raises(InvalidInput, match="target itself"):
        check_output_path(tmp_path / "." / "bench.img", target=str(target))


@needs_loop
def test_a_block_device_is_refused(make_loop):
    with pytest.raises(InvalidInput, match="block device"):
        check_output_path(Path(make_loop()))


# -- writing, with fallbacks -------------------------------------------------------------


def test_write_result_to_the_path(tmp_path):
    where, failure = write_result('{"a": 1}', tmp_path / "r.json", fallback_name="fallback.json")
    assert (where, failure) == (tmp_path / "r.json", None)
    assert (tmp_path / "r.json").read_text() == '{"a": 1}'


def test_write_result_falls_back_to_the_current_directory(tmp_path, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    (here / "fallback.json").write_text("earlier result")
    gone = tmp_path / "gone"
    gone.mkdir()
    asked = gone / "r.json"
    gone.rmdir()  # the directory vanished during the bench
    where, failure = write_result("{}", asked, fallback_name="fallback.json")
    assert failure and where.parent == here and where.name == "fallback-1.json"
    assert where.read_text() == "{}"
    assert (here / "fallback.json").read_text() == "earlier result"  # never overwritten


def test_write_result_falls_back_to_the_temp_directory(tmp_path, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    here.rmdir()  # the current directory is gone too
    spare = tmp_path / "spare"
    spare.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spare))
    where, failure = write_result("{}", Path("/dev/full"), fallback_name="fallback.json")
    assert failure and where == spare / "fallback.json" and where.read_text() == "{}"


def test_write_result_raises_only_when_nothing_can_be_written(tmp_path, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    here.rmdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-temp-dir"))
    with pytest.raises(DiskqError, match="cannot write the result document"):
        write_result("{}", Path("/dev/full"), fallback_name="fallback.json")


def test_partial_file_is_not_left_behind(tmp_path, monkeypatch):
    # a write that fails half way (ENOSPC) leaves no truncated document where it was asked for
    target = tmp_path / "r.json"
    real_open = open

    class Full:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, text):
            self.f.write(text[:3])
            self.f.flush()
            raise OSError(28, "No space left on device")

    def fake_open(path, mode="r", **kw):
        f = real_open(path, mode, **kw)
        return Full(f) if Path(path) == target else f

    monkeypatch.setattr("builtins.open", fake_open)
    monkeypatch.chdir(tmp_path)
    where, failure = write_result('{"x": 1}', target, fallback_name="fallback.json")
    assert not target.exists() and failure == "No space left on device"
    assert where == tmp_path / "fallback.json"


# -- end to end --------------------------------------------------------------------------


@needs_loop
@needs_fio
@pytest.mark.parametrize("bad", ["/nonexistent-diskq/dir/o.json", "DIR"])
def test_bad_output_is_refused_before_the_device_is_touched(make_loop, tmp_path, bad):
    dev = make_loop()
    marker = b"keep me\n" * 512
    with open(dev, "r+b") as f:
        f.write(marker)
    knob = Path(f"/sys/block/{Path(dev).name}/queue/write_cache")
    out = str(tmp_path) if bad == "DIR" else bad
    r = diskq(
        "bench",
        dev,
        "--yes",
        "--cache",
        "off",
        "--runtime",
        "1",
        "--jobs",
        "1",
        "--json",
        "-o",
        out,
        env={"DISKQ_JOURNAL_DIR": str(tmp_path / "journal")},
    )
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("diskq: error: -o ") and "hint:" in r.stderr and "Traceback" not in r.stderr
    assert r.stdout == ""
    with open(dev, "rb") as f:
        assert f.read(len(marker)) == marker
    assert knob.read_text().strip() == "write back"
    assert not (tmp_path / "journal").exists()


@needs_fio
def test_unwritable_output_at_the_end_falls_back_and_keeps_stdout(tmp_path):
    # /dev/full passes the check (a writable character device) and fails every write with ENOSPC
    here = tmp_path / "here"
    here.mkdir()
    r = diskq(
        "bench",
        str(tmp_path / "t.img"),
        "--size",
        "8M",
        "--runtime",
        "1",
        "--jobs",
        "1",
        "--no-flush-check",
        "--json",
        "-o",
        "/dev/full",
        cwd=here,
        env={"DISKQ_JOURNAL_DIR": str(tmp_path / "journal")},
    )
    assert r.returncode == 1, r.stderr
    doc = ResultDocument.model_validate_json(r.stdout)  # stdout still holds the whole document
    saved = list(here.glob("diskq-*.json"))
    assert len(saved) == 1 and json.loads(saved[0].read_text()) == json.loads(r.stdout)
    assert "diskq: error: cannot write the result document to /dev/full" in r.stderr
    assert saved[0].name in r.stderr and "Traceback" not in r.stderr
    assert doc.runs[0].points
