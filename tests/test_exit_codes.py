"""Every command exits with the code README's table gives for what happened (one table, one test).

0 done; 1 the answer is no or the run failed; 2 bad input; 3 a program is missing; 4 refused or
not confirmed; 5 a document diskq reads but will not accept as a submission; 6 a query that names
several models and none surely (the candidates are listed); 130 interrupted
(see tests/test_signals.py: it needs a running bench).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from diskq.cli import app, main

REPO = Path(__file__).parent.parent
LEGACY = next(REPO.joinpath("submissions").rglob("*.json"))
HAVE_SSH_KEYGEN = shutil.which("ssh-keygen") is not None

#: (argv, exit code, what it shows). ``{w}`` is the scratch directory the test prepares.
CASES = [
    # bench
    (["bench"], 2, "no target"),
    (["bench", "{w}/new.img", "--jobs", ""], 2, "--jobs ''"),
    (["bench", "{w}/new.img", "--runtime", "1.5"], 2, "--runtime 1.5"),
    (["bench", "{w}/new.img", "--cache", "sideways"], 2, "bad --cache"),
    (["bench", "/dev/diskq-no-such-device", "--yes"], 2, "a missing device"),
    (["bench", "{w}/full.img", "--runtime", "1", "--jobs", "1"], 4, "existing data without --yes"),
    (["bench", "{w}/new.img", "--runtime", "1", "--jobs", "1", "--no-such-option"], 2, "unknown option"),
    # identify
    (["identify", "/dev/diskq-no-such-device"], 2, "a missing device"),
    (["identify", "--smartctl-json", "{w}/corrupt.json"], 2, "not JSON"),
    # classify
    (["classify", "1:5028", "2:2651"], 0, "a curve"),
    (["classify", "1:abc"], 2, "not a number"),
    # restore
    (["restore", "--list"], 0, "nothing to restore"),
    # sign
    (["sign", "{w}/corrupt.json", "-f", "{w}/id_ed25519"], 2, "not JSON"),
    (["sign", "{w}/empty.json", "-f", "{w}/id_ed25519"], 2, "not a result document"),
    (["sign", "{w}/result.json", "-f", "{w}/missing-key"], 2, "a key file that does not exist"),
    (
        ["sign", "{w}/result.json", "-f", "{w}/id_ed25519", "--github", "octocat", "-o", "{w}/mine.json"],
        2,
        "-o with a name validate would reject",
    ),
    (["sign", "{w}/bad-field.json", "-f", "{w}/id_ed25519", "--github", "octocat"], 5, "a field the schema refuses"),
    (["sign", "{w}/result.json", "-f", "{w}/id_ed25519", "--github", "octocat", "-o", "{w}/out"], 0, "signed"),
    (
        ["sign", "{w}/results", "-f", "{w}/id_ed25519", "--github", "octocat", "-o", "{w}/out-dir"],
        0,
        "a directory signed into a directory",
    ),
    (
        ["sign", "{w}/results", "-f", "{w}/id_ed25519", "--github", "octocat", "-o", "{w}/out-dir/x.json"],
        2,
        "a directory signed into a file",
    ),
    # validate
    (["validate", "{w}/corrupt.json"], 1, "problems found"),
    (["validate", str(LEGACY)], 0, "a valid file"),
    (["validate", "{w}/missing.json"], 2, "a missing file"),
    (["validate", str(LEGACY), "{w}/missing-dir"], 2, "a missing directory beside a valid file"),
    # import-fio
    (["import-fio", "{w}/corrupt.json"], 2, "not JSON"),
    (["import-fio", "{w}/missing.json"], 2, "a missing file"),
    # schema
    (["schema", "--check", "--dir", "{w}/dir"], 1, "schemas differ"),
    (["schema", "--check", "--dir", str(REPO / "schema")], 0, "schemas match"),
    # db update (nothing answers on port 1; a plain http:// address elsewhere is refused)
    (["db", "update", "--url", "http://127.0.0.1:1/devices.db", "--timeout", "5"], 1, "no server"),
    (["db", "update", "--url", "http://example.org/devices.db"], 2, "plain http beyond this machine"),
    (["db", "update", "--timeout", "0"], 2, "a timeout of 0"),
    # lookup
    (["lookup", "pm883", "--db", "{w}/dir"], 2, "--db names a directory"),
    (["lookup", "pm883", "--db", "{w}/missing.db"], 2, "--db names nothing"),
    (["lookup", "qqqqzzzzxxxx", "--db", str(REPO / "devices.db")], 1, "no match"),
    (["lookup", "pm883", "--db", str(REPO / "devices.db")], 0, "a match"),
    (["lookup", "samsung 983 pro", "--db", str(REPO / "devices.db")], 1, "only other models come close"),
    (["lookup", "samsung 980 pro", "--db", str(REPO / "devices.db")], 0, "a line with nothing measured"),
    (["lookup", "samsung 860", "--db", str(REPO / "devices.db")], 6, "several models fit, none surely"),
    # signers
    (["signers", "line", str(LEGACY)], 2, "an unsigned file"),
    (["signers", "line", "{w}/corrupt.json"], 2, "not JSON"),
    (
        [
            "signers",
            "check-pr",
            "--base",
            str(REPO / "allowed_signers"),
            "--head",
            str(REPO / "allowed_signers"),
            "--author",
            "octocat",
            "--keys",
            "{w}/empty.json",
        ],
        0,
        "nothing added",
    ),
    (
        [
            "signers",
            "check-pr",
            "--base",
            "{w}/empty.json",
            "--head",
            str(REPO / "allowed_signers"),
            "--author",
            "octocat",
            "--keys",
            "{w}/empty.json",
        ],
        1,
        "a line removed",
    ),
    (
        [
            "signers",
            "check-pr",
            "--base",
            "{w}/missing",
            "--head",
            str(REPO / "allowed_signers"),
            "--author",
            "octocat",
            "--keys",
            "{w}/empty.json",
        ],
        2,
        "--base names nothing",
    ),
    # db build
    (["db", "build", "--db", "{w}/dir", "--submissions", "{w}/subs", "--no-memo"], 2, "--db names a directory"),
    (["db", "build", "--submissions", "{w}/missing", "--db", "{w}/x.db", "--no-memo"], 2, "no submissions directory"),
    (["db", "build", "--check", "--db", "{w}/stale.db", "--submissions", "{w}/subs", "--no-memo"], 1, "out of date"),
    (["db", "build", "--db", "{w}/built.db", "--submissions", "{w}/subs", "--no-memo"], 0, "built"),
    # plan
    (["plan", "Samsung PM883", "--data", "12x16T", "--db", str(REPO / "devices.db")], 0, "a layout"),
    (["plan", "Samsung PM883", "--data", "twelve", "--db", str(REPO / "devices.db")], 2, "a bad --data"),
    (["plan", "{w}/corrupt.json", "--data", "12x16T"], 2, "not JSON"),
    (["plan", "Samsung PM883", "--data", "12x16T", "--db", "{w}/dir"], 2, "--db names a directory"),
    (["plan", "qqqqzzzzxxxx", "--data", "12x16T", "--db", str(REPO / "devices.db")], 4, "no such device"),
    # datasheets
    (["datasheets", "validate"], 0, "the packaged list is valid"),
    (["datasheets", "validate", "{w}/corrupt.json"], 2, "not JSON"),
    (["datasheets", "validate", "{w}/empty.json"], 5, "not a datasheet list"),
    # fleet
    (["fleet", "candidates", "--min-size", "lots"], 2, "a bad size"),
    (["fleet", "candidates", "--path", "/dev/diskq-no-such-device", "--json"], 0, "a list"),
    (["fleet", "report", "{w}/missing"], 2, "no results directory"),
    (["fleet", "report", "{w}/dir"], 2, "no host directories"),
    # contribute
    (["contribute", "{w}/missing.json"], 2, "a missing file"),
    (["contribute", "{w}/corrupt.json"], 2, "not JSON"),
    (["contribute", "{w}/result.json", "--dry-run", "--repo", "{w}/dir"], 2, "not in a clone"),
    # pr-comment
    (["pr-comment", "--base", "{w}/missing", "--head", str(REPO), str(LEGACY.relative_to(REPO))], 2, "no --base"),
    (["pr-comment", "--base", str(REPO), "--head", str(REPO), "README.md"], 2, "not a submission path"),
    # cluster
    (["cluster", "--from", "{w}/missing"], 2, "no such directory"),
    (["cluster", "--from", "{w}/dir"], 2, "nothing to read"),
    (["cluster", "--from", "{w}/corrupt.json"], 2, "a file, not a directory"),
    (["cluster", "collect"], 2, "no directory given"),
    # site build
    (["site", "build", "--db", "{w}/dir", "--out", "{w}/site"], 2, "--db names a directory"),
    (
        ["site", "build", "--db", str(REPO / "devices.db"), "--out", "{w}/corrupt.json", "--submissions", "{w}/subs"],
        2,
        "--out names a file",
    ),
    (["site", "build", "--db", str(REPO / "devices.db"), "--out", "{w}/site", "--submissions", "{w}/subs"], 0, "built"),
]


def _commands() -> set[str]:
    import typer

    root = typer.main.get_command(app)
    names = set()
    for name, command in root.commands.items():
        if hasattr(command, "commands"):  # a group: db, site
            names |= {f"{name} {sub}" for sub in command.commands}
        else:
            names.add(name)
    return names


def test_every_command_has_cases():
    covered = {
        " ".join(argv[:2]) if argv[0] in ("db", "site", "fleet", "datasheets", "signers", "cluster") else argv[0]
        for argv, _, _ in CASES
    }
    assert _commands() <= covered, _commands() - covered


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    w = tmp_path_factory.mktemp("exit-codes")
    (w / "corrupt.json").write_text("{not json")
    (w / "empty.json").write_text("{}")
    (w / "full.img").write_bytes(b"precious")
    (w / "dir").mkdir()
    (w / "out").mkdir()
    (w / "out-dir").mkdir()
    (w / "results" / "host1").mkdir(parents=True)
    subs = w / "subs" / "submissions"
    target = subs / LEGACY.relative_to(REPO / "submissions")
    target.parent.mkdir(parents=True)
    shutil.copy(LEGACY, target)
    result = json.loads(LEGACY.read_text())["result"]
    (w / "result.json").write_text(json.dumps(result))
    (w / "results" / "host1" / "sdb.json").write_text(json.dumps(result))
    bad = dict(result, runs="not a list")
    (w / "bad-field.json").write_text(json.dumps(bad))
    (w / "stale.db").write_bytes((REPO / "devices.db").read_bytes())
    if HAVE_SSH_KEYGEN:
        from tests.test_submission_support import keygen

        keygen(w)
    return w


@pytest.mark.parametrize("argv, code, what", CASES, ids=[f"{' '.join(a[:2])}: {w}" for a, _, w in CASES])
def test_exit_code(world, argv, code, what, monkeypatch, capsys, tmp_path):
    if any("id_ed25519" in a for a in argv) and not HAVE_SSH_KEYGEN:
        pytest.skip("needs ssh-keygen")
    if argv[0] == "bench" and code == 4 and shutil.which("fio") is None:
        pytest.skip("needs fio (the bench checks fio before the target)")
    monkeypatch.setenv("DISKQ_JOURNAL_DIR", str(tmp_path / "journal"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    args = [a.replace("{w}", str(world)) for a in argv]
    args = [str(world / "subs" / "submissions") if a == f"{world}/subs" else a for a in args]
    try:
        main(args)
        got = 0
    except SystemExit as exc:
        got = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    err = capsys.readouterr().err
    assert got == code, f"{what}: exit {got}, expected {code}\n{err}"
    assert "Traceback" not in err
    if code not in (0, 1) and not err.startswith("Usage:"):
        assert err.splitlines()[-1].startswith(("diskq: error:", "  hint:", "  - ")), err
